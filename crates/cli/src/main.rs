//! The `coopmat` command line.
fn main() {}

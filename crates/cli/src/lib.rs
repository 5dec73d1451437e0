//! The library half of the `coopmat` command-line package: the input parsers that the fuzz
//! targets (fuzz/) exercise directly. The commands themselves are in the binary (src/main.rs).

pub mod npy;

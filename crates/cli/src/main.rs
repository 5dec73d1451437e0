//! The `coopmat` command: the arguments parsed, the command run (the library does both).

use clap::Parser;

fn main() -> std::process::ExitCode {
    coopmat::Cli::parse().run()
}

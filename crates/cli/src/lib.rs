//! The `coopmat` command line as a library: one module a subcommand ([`Cli`]), and the input
//! parsers that the fuzz targets (fuzz/) exercise directly. The binary (src/main.rs) parses the
//! arguments and calls [`Cli::run`].

pub mod npy;
use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// `println!` for command output: a closed standard output (`coopmat ... | head -1`) ends the
/// output quietly instead of panicking; another write error is reported on standard error.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout().lock(), $($arg)*)
            && e.kind() != std::io::ErrorKind::BrokenPipe
        {
            eprintln!("error: writing the output: {e}");
        }
    }};
}

mod cmd_amber;
mod cmd_as;
mod cmd_conformance;
mod cmd_coopvec;
mod cmd_dis;
mod cmd_ggml;
mod cmd_gpu;
mod cmd_info;
mod cmd_lint;
mod cmd_lower;
mod cmd_run;
mod cmd_val;
mod engine_args;
pub mod inputs;

/// coopmat: SPIR-V cooperative-matrix toolkit.
#[derive(Parser)]
#[command(name = "coopmat", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The subcommands.
#[derive(Subcommand)]
pub enum Command {
    /// Run AmberScript compute tests (`*.amber` files or directories) on the CPU engine.
    Amber(cmd_amber::Args),
    /// Disassemble a SPIR-V binary (text compatible with spirv-dis).
    Dis(cmd_dis::Args),
    /// Assemble SPIR-V text into a binary (accepts what spirv-dis prints).
    As(cmd_as::Args),
    /// Summarize modules: version, capabilities, entry points, cooperative types and instructions.
    Info(cmd_info::Args),
    /// Validate modules: core structure, the cooperative-matrix family, Vulkan device profiles.
    Val(cmd_val::Args),
    /// Find uniformity bugs and traps of cooperative matrices and vectors, explained by a
    /// divergence analysis.
    Lint(cmd_lint::Args),
    /// Run a compute shader on the CPU engine.
    Run(cmd_run::Args),
    /// Rewrite a module so that it runs on a driver lacking an extension.
    Lower(cmd_lower::Args),
    /// Convert a cooperative-vector matrix between layouts and component types (what
    /// vkConvertCooperativeVectorMatrixNV does), or print its size.
    CoopvecConvert(cmd_coopvec::Args),
    /// Run on a real Vulkan GPU (or lavapipe): `gpu run` (the same dispatch as `run`), `gpu info`.
    Gpu(cmd_gpu::Args),
    /// Run one dispatch on the engine and on a Vulkan GPU and compare the output buffers.
    Diff(cmd_gpu::DiffArgs),
    /// Run a llama.cpp matmul_*_cm2 module as ggml-vulkan dispatches it and check it against f64.
    GgmlMatmul(cmd_ggml::Args),
    /// Run the generated cooperative-matrix conformance suite on the engine or a Vulkan device.
    Conformance(cmd_conformance::Args),
}

impl Cli {
    /// Runs the command; errors are printed to standard error with exit status 2.
    pub fn run(self) -> ExitCode {
        let result = match self.command {
            Command::Amber(a) => cmd_amber::run(a),
            Command::Dis(a) => cmd_dis::run(a),
            Command::As(a) => cmd_as::run(a),
            Command::Info(a) => cmd_info::run(a),
            Command::Val(a) => cmd_val::run(a),
            Command::Lint(a) => cmd_lint::run(a),
            Command::Run(a) => cmd_run::run(a),
            Command::Lower(a) => cmd_lower::run(a),
            Command::GgmlMatmul(a) => cmd_ggml::run(a),
            Command::CoopvecConvert(a) => cmd_coopvec::run(a),
            Command::Gpu(a) => cmd_gpu::gpu(a),
            Command::Diff(a) => cmd_gpu::diff(a),
            Command::Conformance(a) => cmd_conformance::run(a),
        };
        match result {
            Ok(code) => ExitCode::from(code),
            Err(e) => {
                eprintln!("error: {e:#}");
                ExitCode::from(2)
            }
        }
    }
}

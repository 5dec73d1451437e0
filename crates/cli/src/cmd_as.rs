//! `coopmat as`: SPIR-V assembly text to a binary, word-identical to `spirv-as`.

use anyhow::Context as _;
use coopmat_spirv::asm::{AsmOptions, TargetEnv, assemble_bytes};
use std::io::{Read as _, Write as _};
use std::path::PathBuf;

/// Arguments of `coopmat as`.
#[derive(clap::Args)]
pub struct Args {
    /// Input text file; `-` or nothing reads standard input.
    pub file: Option<PathBuf>,
    /// Output binary; `-` writes to standard output.
    #[arg(short = 'o', default_value = "out.spv")]
    pub output: PathBuf,
    /// Environment, as spirv-as names it (spv1.0..spv1.6, vulkan1.0..vulkan1.4, ...); sets the
    /// header version. Without it: a leading `; Version: 1.N` comment, else SPIR-V 1.6.
    #[arg(long = "target-env")]
    pub target_env: Option<TargetEnv>,
    /// Keep numeric ids (`%12`) as their numbers; other names fill the gaps from 1 up.
    #[arg(long = "preserve-numeric-ids")]
    pub preserve_numeric_ids: bool,
}

/// Runs `coopmat as`; returns the exit status (1 for an assembly error).
pub fn run(args: Args) -> anyhow::Result<u8> {
    let (name, text) = match &args.file {
        Some(p) if p.as_os_str() != "-" => {
            let bytes = crate::inputs::read_file(p)?;
            (p.display().to_string(), bytes)
        }
        _ => {
            let mut bytes = Vec::new();
            std::io::stdin()
                .read_to_end(&mut bytes)
                .context("reading standard input")?;
            ("<stdin>".to_string(), bytes)
        }
    };
    let options = AsmOptions {
        target_env: args.target_env,
        preserve_numeric_ids: args.preserve_numeric_ids,
    };
    let words = match assemble_bytes(&text, &options) {
        Ok(w) => w,
        Err(e) => {
            eprint!("{}", e.render_bytes(&name, &text));
            return Ok(1);
        }
    };
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    if args.output.as_os_str() == "-" {
        std::io::stdout()
            .write_all(&bytes)
            .context("writing standard output")?;
    } else {
        std::fs::write(&args.output, &bytes)
            .with_context(|| format!("writing {}", args.output.display()))?;
    }
    Ok(0)
}

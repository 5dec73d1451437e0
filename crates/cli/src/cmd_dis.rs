//! `coopmat dis`: disassemble SPIR-V binaries; text identical to `spirv-dis`.

use anyhow::{Context, Result};
use coopmat_spirv::binary;
use coopmat_spirv::dis::{self, Options};
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Arguments of `coopmat dis`.
#[derive(clap::Args)]
pub struct Args {
    /// Input binary (`-` or nothing: standard input). With `--batch`: a directory.
    pub file: Option<PathBuf>,
    /// Output file (`-`: standard output). With `--batch`: a directory for `<name>.spvasm` files.
    #[arg(short = 'o')]
    pub output: Option<PathBuf>,
    /// Don't print the header comment lines.
    #[arg(long)]
    pub no_header: bool,
    /// Don't indent instructions.
    #[arg(long)]
    pub no_indent: bool,
    /// Show raw id numbers instead of friendly names.
    #[arg(long)]
    pub raw_id: bool,
    /// Show the byte offset of each instruction.
    #[arg(long)]
    pub offsets: bool,
    /// Add comments: sections, decorations of ids.
    #[arg(long)]
    pub comment: bool,
    /// Indent blocks by structured control flow nesting.
    #[arg(long)]
    pub nested_indent: bool,
    /// Print blocks in structured control flow order.
    #[arg(long)]
    pub reorder_blocks: bool,
    /// Force colour output (the default when writing to a terminal).
    #[arg(long, overrides_with = "no_color")]
    pub color: bool,
    /// Don't use colour.
    #[arg(long, overrides_with = "color")]
    pub no_color: bool,
    /// Disassemble every `.spv` file of the directory FILE in one process (for benchmarks): to
    /// `-o DIR` when given, else discarded; prints a count and the time to stderr.
    #[arg(long, hide = true)]
    pub batch: bool,
}

/// Runs `coopmat dis`; returns the exit status.
pub fn run(args: Args) -> Result<u8> {
    let to_stdout = args.output.as_deref().is_none_or(|p| p == Path::new("-"));
    // As spirv-dis: colour only goes to standard output (forced by --color, else when it is a
    // terminal); --batch honours --color alone.
    let color = if args.batch {
        args.color
    } else {
        to_stdout && (args.color || (!args.no_color && std::io::stdout().is_terminal()))
    };
    let opts = Options {
        header: !args.no_header,
        indent: !args.no_indent,
        raw_id: args.raw_id,
        offsets: args.offsets,
        color,
        comment: args.comment,
        nested_indent: args.nested_indent,
        reorder_blocks: args.reorder_blocks,
    };
    if args.batch {
        let dir = args.file.as_deref().context("--batch needs a directory")?;
        return batch(dir, args.output.as_deref(), &opts);
    }
    let (name, bytes) = match args.file.as_deref() {
        None => ("<stdin>".to_string(), read_stdin()?),
        Some(p) if p == Path::new("-") => ("<stdin>".to_string(), read_stdin()?),
        Some(p) => (p.display().to_string(), std::fs::read(p).with_context(|| format!("reading {}", p.display()))?),
    };
    let parsed = match binary::parse_bytes(&bytes) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {name}: {e}");
            return Ok(1);
        }
    };
    let mut text = Vec::new();
    dis::disassemble_into(&parsed, &opts, &mut text);
    match args.output.as_deref() {
        Some(p) if p != Path::new("-") => {
            std::fs::write(p, &text).with_context(|| format!("writing {}", p.display()))?;
        }
        _ => {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(&text).and_then(|_| stdout.flush()).context("writing standard output")?;
        }
    }
    Ok(0)
}

fn read_stdin() -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::io::stdin().read_to_end(&mut bytes).context("reading standard input")?;
    Ok(bytes)
}

/// `--batch`: disassembles every `.spv` of `dir`; failures are reported and counted.
fn batch(dir: &Path, out_dir: Option<&Path>, opts: &Options) -> Result<u8> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading directory {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "spv"))
        .collect();
    files.sort();
    if let Some(o) = out_dir {
        std::fs::create_dir_all(o).with_context(|| format!("creating {}", o.display()))?;
    }
    let start = Instant::now();
    let (mut ok, mut failed, mut in_bytes, mut out_bytes) = (0usize, 0usize, 0usize, 0usize);
    let mut text = Vec::new();
    for f in &files {
        let bytes = std::fs::read(f).with_context(|| format!("reading {}", f.display()))?;
        in_bytes += bytes.len();
        let parsed = match binary::parse_bytes(&bytes) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("error: {}: {e}", f.display());
                failed += 1;
                continue;
            }
        };
        text.clear();
        dis::disassemble_into(&parsed, opts, &mut text);
        out_bytes += text.len();
        if let Some(o) = out_dir {
            let stem = f.file_stem().unwrap_or_default();
            let path = o.join(stem).with_extension("spvasm");
            std::fs::write(&path, &text).with_context(|| format!("writing {}", path.display()))?;
        }
        ok += 1;
    }
    let secs = start.elapsed().as_secs_f64();
    eprintln!(
        "disassembled {ok} modules ({failed} failed): {:.1} MB in, {:.1} MB text, {secs:.3} s",
        in_bytes as f64 / 1e6,
        out_bytes as f64 / 1e6
    );
    Ok(if failed == 0 { 0 } else { 1 })
}

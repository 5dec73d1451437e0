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
    /// Print unknown opcodes as `OpUnknown(opcode, words)` with their raw words instead of
    /// failing.
    #[arg(long)]
    pub handle_unknown_opcodes: bool,
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
        handle_unknown_opcodes: args.handle_unknown_opcodes,
    };
    if args.batch {
        let dir = args.file.as_deref().context("--batch needs a directory")?;
        return batch(dir, args.output.as_deref(), &opts);
    }
    let (name, bytes) = match args.file.as_deref() {
        None => ("<stdin>".to_string(), read_stdin()?),
        Some(p) if p == Path::new("-") => ("<stdin>".to_string(), read_stdin()?),
        Some(p) => (p.display().to_string(), crate::inputs::read_file(p)?),
    };
    let bytes = hex_to_bytes(&bytes).unwrap_or(bytes);
    let parsed = match binary::parse_bytes(&bytes) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {name}: {e}");
            return Ok(1);
        }
    };
    if !opts.handle_unknown_opcodes
        && let Some(u) = parsed.instructions.iter().find(|i| i.desc().is_none())
    {
        eprintln!(
            "error: {name}: word {}: invalid opcode {} (--handle-unknown-opcodes prints it as OpUnknown)",
            u.offset, u.opcode
        );
        return Ok(1);
    }
    let mut text = Vec::new();
    dis::disassemble_into(&parsed, &opts, &mut text);
    match args.output.as_deref() {
        Some(p) if p != Path::new("-") => {
            std::fs::write(p, &text).with_context(|| format!("writing {}", p.display()))?;
        }
        _ => {
            let mut stdout = std::io::stdout().lock();
            stdout
                .write_all(&text)
                .and_then(|_| stdout.flush())
                .context("writing standard output")?;
        }
    }
    Ok(0)
}

/// Like spirv-dis, accepts a text hex stream instead of a binary: 32-bit words or bytes
/// (bytes in file order), separated by white space or commas, each with an optional `0x` / `x`
/// prefix. Returns `None` when the input is a binary or not such a stream.
fn hex_to_bytes(input: &[u8]) -> Option<Vec<u8>> {
    if input.len() >= 4 {
        let first = u32::from_le_bytes([input[0], input[1], input[2], input[3]]);
        if first == binary::MAGIC || first.swap_bytes() == binary::MAGIC {
            return None;
        }
    }
    let text = std::str::from_utf8(input).ok()?;
    let tokens: Vec<&str> = text
        .split(|c: char| c.is_ascii_whitespace() || c == ',')
        .filter(|t| !t.is_empty())
        .map(|t| {
            t.strip_prefix("0x")
                .or_else(|| t.strip_prefix("0X"))
                .or_else(|| t.strip_prefix('x'))
                .unwrap_or(t)
        })
        .collect();
    if tokens.is_empty()
        || !tokens
            .iter()
            .all(|t| !t.is_empty() && t.len() <= 8 && t.bytes().all(|b| b.is_ascii_hexdigit()))
    {
        return None;
    }
    if tokens.iter().all(|t| t.len() <= 2) {
        tokens
            .iter()
            .map(|t| u8::from_str_radix(t, 16).ok())
            .collect()
    } else {
        let mut out = Vec::with_capacity(tokens.len() * 4);
        for t in tokens {
            out.extend_from_slice(&u32::from_str_radix(t, 16).ok()?.to_le_bytes());
        }
        Some(out)
    }
}

fn read_stdin() -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .read_to_end(&mut bytes)
        .context("reading standard input")?;
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
    let (mut parse_time, mut dis_time) = (0f64, 0f64);
    let mut text = Vec::new();
    for f in &files {
        let bytes = crate::inputs::read_file(f)?;
        in_bytes += bytes.len();
        let t0 = Instant::now();
        let parsed = match binary::parse_bytes(&bytes) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("error: {}: {e}", f.display());
                failed += 1;
                continue;
            }
        };
        let t1 = Instant::now();
        text.clear();
        dis::disassemble_into(&parsed, opts, &mut text);
        let t2 = Instant::now();
        drop(parsed);
        parse_time += (t1 - t0).as_secs_f64() + t2.elapsed().as_secs_f64();
        dis_time += (t2 - t1).as_secs_f64();
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
        "disassembled {ok} modules ({failed} failed): {:.1} MB in, {:.1} MB text, {secs:.3} s \
         (parse + free {parse_time:.3} s, disassemble {dis_time:.3} s)",
        in_bytes as f64 / 1e6,
        out_bytes as f64 / 1e6
    );
    Ok(if failed == 0 { 0 } else { 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(file: PathBuf, output: PathBuf) -> Args {
        Args {
            file: Some(file),
            output: Some(output),
            no_header: false,
            no_indent: false,
            raw_id: false,
            offsets: false,
            comment: false,
            nested_indent: false,
            reorder_blocks: false,
            handle_unknown_opcodes: false,
            color: false,
            no_color: false,
            batch: false,
        }
    }

    fn temp(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("coopmat-dis-{}-{name}", std::process::id()))
    }

    fn module() -> Vec<u32> {
        use coopmat_spirv::grammar::{capability, op};
        vec![
            binary::MAGIC,
            0x0001_0000,
            0,
            1,
            0,
            2 << 16 | op::Capability as u32,
            capability::Shader,
        ]
    }

    #[test]
    fn malformed_input_is_an_error_not_a_panic() {
        let out = temp("bad.out");
        let mut words = module();
        words.push(5 << 16 | 17); // claims 5 words, 1 remains
        let cases: Vec<Vec<u8>> = vec![
            vec![],
            vec![1, 2, 3],
            b"not spir-v at all".to_vec(),
            words.iter().flat_map(|w| w.to_le_bytes()).collect(),
            vec![0x03, 0x02, 0x23, 0x07, 0, 0],
        ];
        for (k, bytes) in cases.into_iter().enumerate() {
            let input = temp(&format!("bad{k}.spv"));
            std::fs::write(&input, &bytes).unwrap();
            assert_eq!(
                run(args(input.clone(), out.clone())).unwrap(),
                1,
                "case {k}"
            );
            let _ = std::fs::remove_file(&input);
        }
        // The parser's error names the word offset of the bad instruction.
        let e = binary::parse_words(&words).unwrap_err();
        assert_eq!(e.offset, 7);
        assert!(e.to_string().starts_with("word 7:"));
    }

    #[test]
    fn binary_and_hex_streams_give_the_same_text() {
        let words = module();
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let word_text: String = words.iter().map(|w| format!("0x{w:08x}\n")).collect();
        let byte_text: String = bytes.iter().map(|b| format!("{b:02x} ")).collect();
        let comma_text: String = words.iter().map(|w| format!("{w:08x},")).collect();
        let mut texts = Vec::new();
        for (k, input) in [
            bytes.clone(),
            word_text.into_bytes(),
            byte_text.into_bytes(),
            comma_text.into_bytes(),
        ]
        .into_iter()
        .enumerate()
        {
            let (i, o) = (temp(&format!("in{k}")), temp(&format!("out{k}")));
            std::fs::write(&i, &input).unwrap();
            assert_eq!(run(args(i.clone(), o.clone())).unwrap(), 0, "input {k}");
            texts.push(std::fs::read_to_string(&o).unwrap());
            let _ = (std::fs::remove_file(&i), std::fs::remove_file(&o));
        }
        assert!(texts[0].contains("OpCapability Shader"));
        assert!(texts.iter().all(|t| *t == texts[0]));
    }
}

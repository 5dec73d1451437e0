//! The inputs of `val` and `lint`: files, directories (searched for `.spv` and `.spvasm`, each
//! real directory once, so a link cycle ends) or `-` for standard input; assembly text is
//! assembled by coopmat's spirv-as compatible assembler.

use anyhow::Context;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Expands the inputs into files, in sorted order within each directory.
pub fn collect(inputs: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    collect_with(inputs, &["spv", "spvasm"])
}

/// [`collect`] for the given file extensions.
pub fn collect_with(inputs: &[PathBuf], extensions: &[&str]) -> anyhow::Result<Vec<PathBuf>> {
    anyhow::ensure!(!inputs.is_empty(), "no input (give FILE, DIR or -)");
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for i in inputs {
        if i.as_os_str() == "-" {
            out.push(i.clone());
        } else {
            walk(i, extensions, &mut out, &mut seen)?;
        }
    }
    Ok(out)
}

fn walk(
    path: &Path,
    extensions: &[&str],
    out: &mut Vec<PathBuf>,
    seen: &mut std::collections::HashSet<PathBuf>,
) -> anyhow::Result<()> {
    if path.is_dir() {
        let real = path
            .canonicalize()
            .with_context(|| format!("resolving directory {}", path.display()))?;
        if !seen.insert(real) {
            return Ok(());
        }
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .with_context(|| format!("reading directory {}", path.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for e in entries {
            if e.is_dir()
                || e.extension()
                    .is_some_and(|x| extensions.iter().any(|w| x == *w))
            {
                walk(&e, extensions, out, seen)?;
            }
        }
    } else {
        out.push(path.to_path_buf());
    }
    Ok(())
}

/// The largest input read from a file or a pipe: 4 GiB, or half the memory available when that
/// is less, so that an endless source (a pipe from `yes`) ends in an error, not in exhausted memory.
pub fn max_input_bytes() -> u64 {
    const CAP: u64 = 4 << 30;
    available_memory().map_or(CAP, |avail| CAP.min(avail / 2))
}

pub use coopmat_exec::available_memory;

/// Reads a whole input file. Devices (`/dev/zero`, `/dev/urandom`) are refused, and nothing
/// longer than [`max_input_bytes`] is read: every error names the path.
pub fn read_file(path: impl AsRef<Path>) -> anyhow::Result<Vec<u8>> {
    use std::os::unix::fs::FileTypeExt;
    let path = path.as_ref();
    let file = std::fs::File::open(path).with_context(|| format!("reading {}", path.display()))?;
    let kind = file
        .metadata()
        .with_context(|| format!("reading {}", path.display()))?
        .file_type();
    anyhow::ensure!(
        !(kind.is_char_device() || kind.is_block_device() || kind.is_socket()),
        "{}: a device or socket, not a file",
        path.display()
    );
    anyhow::ensure!(
        !kind.is_dir(),
        "{}: a directory, not a file",
        path.display()
    );
    read_bounded(file, &path.display().to_string())
}

/// [`read_file`] for UTF-8 text (configuration files, profiles).
pub fn read_text_file(path: impl AsRef<Path>) -> anyhow::Result<String> {
    let path = path.as_ref();
    String::from_utf8(read_file(path)?)
        .map_err(|e| anyhow::anyhow!("{}: not UTF-8 text ({e})", path.display()))
}

/// Reads `source` to its end, failing once it exceeds [`max_input_bytes`].
fn read_bounded(source: impl Read, label: &str) -> anyhow::Result<Vec<u8>> {
    let limit = max_input_bytes();
    let mut b = Vec::new();
    source
        .take(limit + 1)
        .read_to_end(&mut b)
        .with_context(|| format!("reading {label}"))?;
    anyhow::ensure!(
        b.len() as u64 <= limit,
        "{label}: longer than the input limit of {limit} bytes"
    );
    Ok(b)
}

/// The label and bytes of an input (`-`: standard input).
pub fn read(path: &Path) -> anyhow::Result<(String, Vec<u8>)> {
    if path.as_os_str() == "-" {
        let b = read_bounded(std::io::stdin(), "standard input")?;
        Ok(("<stdin>".to_string(), b))
    } else {
        Ok((path.display().to_string(), read_file(path)?))
    }
}

/// Whether an input is assembly text: a `.spvasm` file, or standard input that does not start
/// with the SPIR-V magic number in either byte order.
pub fn is_text(path: &Path, bytes: &[u8]) -> bool {
    path.extension().is_some_and(|x| x == "spvasm")
        || (path.as_os_str() == "-"
            && bytes.len() >= 4
            && bytes[..4] != [0x03, 0x02, 0x23, 0x07]
            && bytes[..4] != [0x07, 0x23, 0x02, 0x03])
}

/// Assembles text for `target_env`; the error is rendered with the label.
pub fn assemble(label: &str, bytes: &[u8], target_env: &str) -> Result<Vec<u8>, String> {
    let text = String::from_utf8_lossy(bytes);
    let aopts = coopmat_spirv::asm::AsmOptions {
        target_env: coopmat_spirv::asm::TargetEnv::from_name(target_env),
        ..Default::default()
    };
    coopmat_spirv::asm::assemble(&text, &aopts)
        .map(|words| words.iter().flat_map(|w| w.to_le_bytes()).collect())
        .map_err(|e| e.render(label, &text))
}

/// Writes a command's output; a closed pipe (`coopmat val ... | head`) is not an error.
pub fn write_stdout(out: &str) -> anyhow::Result<()> {
    use std::io::Write;
    match std::io::stdout().lock().write_all(out.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

//! `cargo xtask corpus`: fetches the real-shader corpus (llama.cpp's Vulkan shaders as shipped
//! in the `cyllama-vulkan` wheel) and writes every embedded SPIR-V module to a directory.
//!
//! ggml's build embeds each shader as a byte array symbol `<name>_data` in
//! `libggml-vulkan-*.so`; the ELF symbol table gives each array's address and size, so the
//! module bytes can be read straight out of the section that holds them.

use anyhow::{Context, Result, bail};
use object::{Object, ObjectSegment, ObjectSymbol, SymbolSection};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The wheel the corpus comes from.
pub const PACKAGE: &str = "cyllama-vulkan";
/// Its pinned version.
pub const VERSION: &str = "0.7.0";
/// How many modules that version embeds.
pub const EXPECTED_MODULES: usize = 1569;

/// The SPIR-V magic number, little-endian bytes (how every embedded module starts).
const SPIRV_MAGIC_LE: [u8; 4] = 0x0723_0203u32.to_le_bytes();

/// The cache directory for this corpus version.
fn cache_dir(repo: &Path) -> PathBuf {
    repo.join("corpus-cache")
        .join(format!("{PACKAGE}-{VERSION}"))
}

/// Where the `.spv` files go: `COOPMAT_CORPUS_DIR`, else `corpus-cache/<pkg>-<ver>/spv`.
pub fn spv_dir(repo: &Path) -> PathBuf {
    std::env::var_os("COOPMAT_CORPUS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| cache_dir(repo).join("spv"))
}

fn count_modules(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter(|e| e.path().extension().is_some_and(|x| x == "spv"))
                .count()
        })
        .unwrap_or(0)
}

/// Fetches and extracts the corpus unless it is already complete; returns the module count.
pub fn run(repo: &Path) -> Result<(PathBuf, usize)> {
    let out = spv_dir(repo);
    let have = count_modules(&out);
    if have == EXPECTED_MODULES {
        return Ok((out, have));
    }
    let wheel = download(&cache_dir(repo).join("download"))?;
    let modules = extract_from_wheel(&wheel)?;
    if modules.len() != EXPECTED_MODULES {
        bail!(
            "{} holds {} SPIR-V modules, expected {EXPECTED_MODULES}",
            wheel.display(),
            modules.len()
        );
    }
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    for (name, bytes) in &modules {
        let path = out.join(format!("{name}.spv"));
        std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
    }
    let n = count_modules(&out);
    Ok((out, n))
}

/// Downloads the wheel with pip (unless already there) and returns its path.
fn download(dir: &Path) -> Result<PathBuf> {
    if let Some(w) = find_wheel(dir) {
        return Ok(w);
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    // The wheel is binary-only and tagged for specific Pythons: without `--only-binary` and a
    // `--python-version` pip tries to resolve a source build and fails.
    let pip = std::env::var("PIP").unwrap_or_else(|_| "pip".into());
    let status = Command::new(&pip)
        .args(["download", "--no-deps", &format!("{PACKAGE}=={VERSION}")])
        .args(["--python-version", "3.12", "--only-binary=:all:", "-d"])
        .arg(dir)
        .status()
        .with_context(|| format!("running {pip} download"))?;
    if !status.success() {
        bail!("{pip} download {PACKAGE}=={VERSION} failed ({status})");
    }
    find_wheel(dir).with_context(|| format!("pip left no {PACKAGE} wheel in {}", dir.display()))
}

fn find_wheel(dir: &Path) -> Option<PathBuf> {
    let prefix = format!("{}-{VERSION}-", PACKAGE.replace('-', "_"));
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".whl"))
        })
}

/// Opens the wheel, finds the Vulkan backend library and extracts its SPIR-V modules.
fn extract_from_wheel(wheel: &Path) -> Result<BTreeMap<String, Vec<u8>>> {
    let file =
        std::fs::File::open(wheel).with_context(|| format!("opening {}", wheel.display()))?;
    let mut zip = zip::ZipArchive::new(file)
        .with_context(|| format!("reading {} as a zip", wheel.display()))?;
    let lib_name = zip
        .file_names()
        .filter_map(|n| n.ok().map(|n| n.into_owned()))
        .find(|n| {
            let base = n.rsplit('/').next().unwrap_or(n.as_str());
            n.contains("cyllama_vulkan.libs/")
                && base.starts_with("libggml-vulkan-")
                && base.contains(".so")
        })
        .with_context(|| {
            format!(
                "{} has no cyllama_vulkan.libs/libggml-vulkan-*.so",
                wheel.display()
            )
        })?;
    let mut entry = zip.by_name(&lib_name)?;
    let mut elf = Vec::with_capacity(entry.size() as usize);
    entry
        .read_to_end(&mut elf)
        .with_context(|| format!("decompressing {lib_name}"))?;
    extract_from_elf(&elf).with_context(|| format!("reading symbols of {lib_name}"))
}

/// Every `<name>_data` symbol whose bytes start with the SPIR-V magic, keyed by `<name>`.
pub fn extract_from_elf(elf: &[u8]) -> Result<BTreeMap<String, Vec<u8>>> {
    let file = object::File::parse(elf)?;
    let mut out = BTreeMap::new();
    // Both tables: a stripped library keeps only the dynamic one.
    for sym in file.symbols().chain(file.dynamic_symbols()) {
        let Ok(name) = sym.name() else { continue };
        let Some(base) = name.strip_suffix("_data") else {
            continue;
        };
        if base.is_empty() || out.contains_key(base) || sym.size() < 4 {
            continue;
        }
        if !matches!(sym.section(), SymbolSection::Section(_)) {
            continue;
        }
        // Look the bytes up by address in the loadable segments, not through the symbol's
        // section index: the wheel's libraries were rewritten by patchelf (auditwheel), which
        // renumbers section headers but leaves the symbol table's indices stale.
        let Some(bytes) = file
            .segments()
            .find_map(|seg| seg.data_range(sym.address(), sym.size()).ok().flatten())
        else {
            continue;
        };
        if bytes.starts_with(&SPIRV_MAGIC_LE) {
            out.insert(base.to_owned(), bytes.to_vec());
        }
    }
    Ok(out)
}

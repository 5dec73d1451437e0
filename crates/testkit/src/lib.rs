//! Test helpers shared across coopmat crates: where the real-shader corpus and the peer tools
//! (SPIRV-Tools, glslang, ...) are.
//!
//! Tests that need either should skip with a printed notice when [`corpus_dir`] or
//! [`peer_tool`] returns `None`, so the suite still runs on a bare checkout.

use std::path::{Path, PathBuf};

/// The corpus directory, relative to the repository root (filled by `cargo xtask corpus`).
pub const CORPUS_SUBDIR: &str = "corpus-cache/cyllama-vulkan-0.7.0/spv";

/// Default location of the peer tools.
pub const DEFAULT_PEERS_BIN: &str = "/opt/coopmat-peers/bin";

/// The repository root (this crate lives at `crates/testkit`).
pub fn repo_root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.parent()
        .and_then(Path::parent)
        .unwrap_or(here)
        .to_path_buf()
}

/// The directory of corpus `.spv` modules: `COOPMAT_CORPUS_DIR` if set, else
/// `<repo>/corpus-cache/cyllama-vulkan-0.7.0/spv` if it exists.
pub fn corpus_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("COOPMAT_CORPUS_DIR") {
        let dir = PathBuf::from(dir);
        return dir.is_dir().then_some(dir);
    }
    let dir = repo_root().join(CORPUS_SUBDIR);
    dir.is_dir().then_some(dir)
}

/// Paths of every `.spv` file in the corpus, sorted by name (empty when there is no corpus).
pub fn corpus_paths() -> Vec<PathBuf> {
    let Some(dir) = corpus_dir() else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "spv"))
                .collect()
        })
        .unwrap_or_default();
    paths.sort();
    paths
}

/// Every corpus module as (name without `.spv`, bytes), sorted by name; empty when there is
/// no corpus. Unreadable files are skipped with a notice on stderr.
pub fn corpus_modules() -> Vec<(String, Vec<u8>)> {
    corpus_paths()
        .into_iter()
        .filter_map(|p| {
            let name = p.file_stem()?.to_string_lossy().into_owned();
            match std::fs::read(&p) {
                Ok(bytes) => Some((name, bytes)),
                Err(e) => {
                    eprintln!("skipping {}: {e}", p.display());
                    None
                }
            }
        })
        .collect()
}

/// Prints the usual "no corpus" notice; returns the modules (possibly none) for chaining:
/// `let mods = coopmat_testkit::corpus_or_notice("my_test"); if mods.is_empty() { return; }`.
pub fn corpus_or_notice(test: &str) -> Vec<(String, Vec<u8>)> {
    let mods = corpus_modules();
    if mods.is_empty() {
        eprintln!(
            "{test}: skipping, no corpus (run `cargo xtask corpus` or set COOPMAT_CORPUS_DIR)"
        );
    }
    mods
}

/// Runs a peer tool with `input` on its standard input and returns its standard output;
/// panics (failing the test) when it cannot start or exits unsuccessfully. Stdin is fed from a
/// thread so that a large output cannot deadlock the pipes.
pub fn run_tool(tool: &Path, args: &[&str], input: &[u8]) -> Vec<u8> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(tool)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawning {}: {e}", tool.display()));
    let mut stdin = child.stdin.take().expect("piped stdin");
    let input = input.to_vec();
    let feeder = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().expect("waiting for the peer tool");
    feeder
        .join()
        .expect("stdin feeder")
        .expect("writing the peer tool's stdin");
    assert!(
        out.status.success(),
        "{} {args:?} failed: {}",
        tool.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// glslang on the GLSL file `src` (`-V --target-env vulkan1.3`, then `extra`, e.g. `-DNAME`):
/// the SPIR-V bytes; `None` when glslangValidator is not installed (the caller skips with a
/// notice); panics with glslang's messages when the shader does not compile.
pub fn glslang(src: &Path, extra: &[&str]) -> Option<Vec<u8>> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    let glslang = peer_tool("glslangValidator")?;
    // One output file per call: tests run in parallel.
    let out = std::env::temp_dir().join(format!(
        "coopmat-glslang-{}-{}.spv",
        std::process::id(),
        CALLS.fetch_add(1, Ordering::Relaxed)
    ));
    let st = std::process::Command::new(&glslang)
        .args(["-V", "--target-env", "vulkan1.3"])
        .args(extra)
        .arg("-o")
        .arg(&out)
        .arg(src)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", glslang.display()));
    assert!(
        st.status.success(),
        "glslang failed on {}:\n{}{}",
        src.display(),
        String::from_utf8_lossy(&st.stdout),
        String::from_utf8_lossy(&st.stderr)
    );
    let bytes = std::fs::read(&out).expect("glslang's output");
    let _ = std::fs::remove_file(&out);
    Some(bytes)
}

/// SPIRV-Tools' validator on `module` (the binary's bytes) with `--target-env target_env`:
/// `Ok` when it accepts it, `Err` with its messages when not; `None` when spirv-val is not
/// installed (the caller skips with a notice).
pub fn spirv_val(module: &[u8], target_env: &str) -> Option<Result<(), String>> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    let val = peer_tool("spirv-val")?;
    // One file per call: tests run in parallel.
    let path = std::env::temp_dir().join(format!(
        "coopmat-spirv-val-{}-{}.spv",
        std::process::id(),
        CALLS.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&path, module).expect("writing the module for spirv-val");
    let out = std::process::Command::new(&val)
        .args(["--target-env", target_env])
        .arg(&path)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", val.display()));
    let _ = std::fs::remove_file(&path);
    Some(if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned()
            + &String::from_utf8_lossy(&out.stdout))
    })
}

/// A fresh directory under the system's temporary directory, named after `tag`, removed with
/// everything in it when the returned guard drops (at the end of the test or helper that
/// holds it, whether it passes, fails or returns early).
pub fn scratch_dir(tag: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("coopmat-{tag}-"))
        .tempdir()
        .expect("creating a scratch directory")
}

/// Finds a peer tool (e.g. `spirv-dis`): in `COOPMAT_PEERS_BIN` if set, else in
/// `/opt/coopmat-peers/bin`, else on `PATH`.
pub fn peer_tool(name: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("COOPMAT_PEERS_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| DEFAULT_PEERS_BIN.into());
    let candidate = dir.join(name);
    if candidate.is_file() {
        return Some(candidate);
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// A xorshift64 generator (shifts 13, 7, 17) from `seed` (non-zero): the tests' reproducible
/// pseudo-random inputs, each call the next state.
pub fn xorshift64(seed: u64) -> impl FnMut() -> u64 {
    let mut state = seed;
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corpus_modules_are_spirv() {
        let mods = corpus_or_notice("corpus_modules_are_spirv");
        for (name, bytes) in &mods {
            assert!(bytes.starts_with(&0x0723_0203u32.to_le_bytes()), "{name}");
        }
    }

    #[test]
    fn spirv_val_reports_a_rejected_module() {
        // A header and nothing else: no OpMemoryModel, which spirv-val requires.
        let header: Vec<u8> = [0x0723_0203u32, 0x0001_0600, 0, 1, 0]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        match spirv_val(&header, "vulkan1.3") {
            None => eprintln!("notice: spirv-val not found; skipping"),
            Some(r) => assert!(r.is_err(), "{r:?}"),
        }
    }

    #[test]
    fn repo_root_has_the_workspace_manifest() {
        assert!(repo_root().join("Cargo.toml").is_file());
    }
}

//! `coopmat dis`.

/// Arguments of `coopmat dis`.
#[derive(clap::Args)]
pub struct Args {
    /// Input files.
    pub files: Vec<std::path::PathBuf>,
}

/// Runs `coopmat dis`; returns the exit status.
pub fn run(_args: Args) -> anyhow::Result<u8> {
    anyhow::bail!("coopmat dis is not implemented yet")
}

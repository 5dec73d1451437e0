//! `coopmat info`.

/// Arguments of `coopmat info`.
#[derive(clap::Args)]
pub struct Args {
    /// Input files.
    pub files: Vec<std::path::PathBuf>,
}

/// Runs `coopmat info`; returns the exit status.
pub fn run(_args: Args) -> anyhow::Result<u8> {
    anyhow::bail!("coopmat info is not implemented yet")
}

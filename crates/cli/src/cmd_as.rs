//! `coopmat as`.

/// Arguments of `coopmat as`.
#[derive(clap::Args)]
pub struct Args {
    /// Input files.
    pub files: Vec<std::path::PathBuf>,
}

/// Runs `coopmat as`; returns the exit status.
pub fn run(_args: Args) -> anyhow::Result<u8> {
    anyhow::bail!("coopmat as is not implemented yet")
}

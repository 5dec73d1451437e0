//! `coopmat lower`: rewrites that let a shader run on a driver lacking an extension.

use anyhow::{Context, Result};
use std::path::PathBuf;

/// A rewrite `coopmat lower` can apply.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum Pass {
    /// Remove SPV_NV_cooperative_matrix_decode_vector: the DecodeVectorFunc operands, the capability and the extension.
    StripDecodeVector,
    /// Rewrite SPV_NV_cooperative_matrix as SPV_KHR_cooperative_matrix (Uses inferred from the multiply-adds).
    NvToKhr,
    /// Rewrite SPV_QCOM_cooperative_matrix_conversion with KHR loads and stores through Workgroup memory.
    QcomToKhr,
    /// Rewrite cooperative-matrix-2 tensor loads and stores (no view, decode or clamp) as KHR loads and stores.
    Coop2ToKhr,
}

/// Arguments of `coopmat lower`.
#[derive(clap::Args)]
pub struct Args {
    /// Input SPIR-V binary.
    pub input: PathBuf,
    /// Output file.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Rewrites to apply, in order.
    #[arg(long = "pass", value_enum, required = true)]
    pub passes: Vec<Pass>,
}

/// Runs `coopmat lower`; returns the exit status.
pub fn run(args: Args) -> Result<u8> {
    let bytes = crate::inputs::read_file(&args.input)?;
    let mut module = coopmat_spirv::Module::from_bytes(&bytes)
        .with_context(|| format!("{}", args.input.display()))?;
    for pass in &args.passes {
        match pass {
            Pass::StripDecodeVector => {
                let report = coopmat_lower::strip_decode_vector(&mut module)?;
                eprintln!(
                    "strip-decode-vector: {} declarations removed, {} loads rewritten",
                    report.removed, report.rewritten
                );
            }
            Pass::QcomToKhr => {
                let report = coopmat_lower::qcom_to_khr(&mut module)?;
                eprintln!(
                    "qcom-to-khr: {} constructs and extracts through {} Workgroup scratch arrays, {} array bitcasts and sub-arrays rewritten",
                    report.conversions, report.scratch_arrays, report.arrays
                );
            }
            Pass::Coop2ToKhr => {
                let report = coopmat_lower::coop2_to_khr(&mut module)?;
                eprintln!(
                    "coop2-to-khr: {} tensor loads and {} stores rewritten, {} layout types became structs, {} layout instructions rewritten",
                    report.loads, report.stores, report.layout_types, report.layout_ops
                );
            }
            Pass::NvToKhr => {
                let report = coopmat_lower::nv_to_khr(&mut module)?;
                eprintln!(
                    "nv-to-khr: {} NV matrix types became {} KHR types; {} loads, stores, multiply-adds and lengths rewritten",
                    report.types, report.khr_types, report.instructions
                );
            }
        }
    }
    std::fs::write(&args.output, module.to_bytes(module.endian))
        .with_context(|| format!("writing {}", args.output.display()))?;
    Ok(0)
}

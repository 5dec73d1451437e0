//! `coopmat conformance`: the generated conformance suite (`coopmat-conformance`) on the engine or
//! on a Vulkan device, per family, against the suite's own references.

use anyhow::{Context, Result, bail};
use coopmat_conformance::{Case, Target, Verdict};

/// Run the generated cooperative-matrix conformance suite on the engine or on a Vulkan device.
#[derive(clap::Args)]
pub struct Args {
    /// Where the cases run: `engine` (the CPU engine) or `gpu` (the Vulkan device the loader
    /// gives, e.g. through `sid-run` for lavapipe).
    #[arg(long, default_value = "engine")]
    pub device: String,
    /// The device profile whose cooperative-matrix list and subgroup size the cases follow
    /// (built-in name or JSON file); with `--device gpu` the device's own list must agree.
    #[arg(long, default_value = "coopmat-engine")]
    pub profile: String,
    /// Only these families (load-store, muladd, convert, elementwise, reduce, per-element).
    #[arg(long = "family")]
    pub families: Vec<String>,
    /// Run every case whose index is I modulo N (`I/N`), to split the suite over calls.
    #[arg(long)]
    pub shard: Option<String>,
    /// Also SaturatingAccumulation on every integer tuple (the engine has it for all; a
    /// device only where its list says so).
    #[arg(long)]
    pub saturating_all: bool,
    /// List the cases, run nothing.
    #[arg(long)]
    pub list: bool,
    /// Print every case's verdict.
    #[arg(short, long)]
    pub verbose: bool,
}

/// Runs `coopmat conformance`; returns 0 when every case passed, 1 otherwise.
pub fn run(a: Args) -> Result<u8> {
    let profile = match coopmat_val::Profile::builtin(&a.profile) {
        Some(p) => p,
        None => {
            let text = crate::inputs::read_text_file(&a.profile)
                .with_context(|| format!("--profile {}", a.profile))?;
            coopmat_val::Profile::from_json(&text)
                .with_context(|| format!("--profile {}", a.profile))?
        }
    };
    let mut target = Target::from_profile(&profile);
    let engine = match a.device.as_str() {
        "engine" => true,
        "gpu" => false,
        other => bail!("--device {other:?}: engine or gpu"),
    };
    if engine {
        target.coop2_functions = true;
        target.tensor_addressing = true;
    }
    if a.saturating_all {
        // VkCooperativeMatrixPropertiesKHR::saturatingAccumulation: where it is VK_FALSE the
        // operand "must not be present"; a device's answer to it would be undefined.
        if !engine {
            bail!(
                "--saturating-all is for the engine: a device takes SaturatingAccumulation only on the \
                 tuples its property list marks saturatingAccumulation (Vulkan: elsewhere the operand must not be present)"
            );
        }
        target = target.with_saturating_everywhere();
    }
    let mut cases: Vec<Case> = coopmat_conformance::cases(&target);
    if !a.families.is_empty() {
        cases.retain(|c| a.families.iter().any(|f| f == c.family));
    }
    if let Some(s) = &a.shard {
        let (i, n) = s
            .split_once('/')
            .and_then(|(i, n)| Some((i.parse::<usize>().ok()?, n.parse::<usize>().ok()?)))
            .filter(|&(i, n)| n > 0 && i < n)
            .with_context(|| format!("--shard {s:?}: I/N with I < N"))?;
        cases = cases
            .into_iter()
            .enumerate()
            .filter(|(k, _)| k % n == i)
            .map(|(_, c)| c)
            .collect();
    }
    if a.list {
        for c in &cases {
            outln!("{}", c.name);
        }
        return Ok(0);
    }
    let gpu = if engine {
        None
    } else {
        let gpu = coopmat_gpu::Gpu::open()?;
        // The cases follow the profile: say where the device's own list differs.
        let listed = gpu.cooperative_matrix_properties()?;
        eprintln!(
            "device: {} ({} cooperative-matrix entries; the cases follow profile {})",
            gpu.name(),
            listed.len(),
            profile.name
        );
        Some(gpu)
    };
    let mut per_family: std::collections::BTreeMap<&str, [usize; 4]> = Default::default();
    let mut problems = Vec::new();
    for c in &cases {
        // Validated against the profile first: a case that uses what the device does not list
        // is not for it (counted apart); an invalid module is the generator's fault.
        match target.refuses(c) {
            None => {}
            Some(Ok(why)) => {
                per_family.entry(c.family).or_default()[3] += 1;
                if a.verbose {
                    outln!("NotApplicable {} ({why})", c.name);
                }
                continue;
            }
            Some(Err(why)) => {
                per_family.entry(c.family).or_default()[2] += 1;
                problems.push(format!("INVALID {}: {why}", c.name));
                continue;
            }
        }
        let (v, passes) = match &gpu {
            None => (
                coopmat_conformance::run_engine(c, target.subgroup_size),
                Vec::new(),
            ),
            Some(g) => coopmat_conformance::run_gpu(g, c, Some(target.subgroup_size)),
        };
        let slot = per_family.entry(c.family).or_default();
        match &v {
            Verdict::Pass => slot[0] += 1,
            Verdict::Fail(why) => {
                slot[1] += 1;
                problems.push(format!("FAIL {}: {why}", c.name));
            }
            Verdict::Error(why) => {
                slot[2] += 1;
                problems.push(format!("ERROR {}: {why}", c.name));
            }
        }
        if a.verbose {
            if passes.is_empty() {
                outln!("{:?} {}", v, c.name);
            } else {
                outln!("{:?} {} (through {})", v, c.name, passes.join(", "));
            }
        }
    }
    outln!(
        "| family | cases | passed | failed | errors | not for this device |\n|---|---:|---:|---:|---:|---:|"
    );
    let mut total = [0usize; 4];
    for (f, [p, fl, e, na]) in &per_family {
        outln!("| {f} | {} | {p} | {fl} | {e} | {na} |", p + fl + e);
        for (t, v) in total.iter_mut().zip([p, fl, e, na]) {
            *t += v;
        }
    }
    outln!(
        "| all ({} on {}) | {} | {} | {} | {} | {} |",
        profile.name,
        if engine { "the engine" } else { "the device" },
        total[..3].iter().sum::<usize>(),
        total[0],
        total[1],
        total[2],
        total[3]
    );
    for p in &problems {
        outln!("{p}");
    }
    Ok(u8::from(!problems.is_empty()))
}

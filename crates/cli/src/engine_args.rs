//! The engine options every command that runs shaders takes (`run`, `amber`, `ggml-matmul`),
//! defined once and flattened into each command's arguments, with typed value parsers so that a
//! bad value is refused by clap with the option's name (negative numbers included: they are
//! taken as values, not as unknown flags, so the error names the option).

use coopmat_exec::{DecodePolicy, EngineOptions, OpTime};

/// Most worker threads accepted (more than this only adds scheduling overhead).
pub const MAX_THREADS: usize = 1024;

/// Prints, when a dispatch copied rows from the row above instead of computing them
/// (`DispatchStats::repeated_rows`), how many, and the option (`--every-row`) that turns it off.
pub fn report_repeated_rows(rows: u64) {
    if rows > 0 {
        outln!(
            "rows copied from the row above instead of computed: {rows} (--every-row computes them)"
        );
    }
}

/// Prints the table of `--profile-ops` (`DispatchStats::op_times`, [`OpTime::table`]) for
/// `what` (the dispatch it covers), under a line with the total: by op kind, or with
/// `by_instruction` (`--profile-instructions`) a line per SPIR-V instruction.
pub fn report_op_times(times: &[OpTime], what: &str, by_instruction: bool) {
    if times.is_empty() {
        return;
    }
    let by_kind;
    let times = if by_instruction {
        times
    } else {
        by_kind = OpTime::by_kind(times);
        &by_kind
    };
    let total: f64 = times.iter().map(|t| t.time.as_secs_f64()).sum();
    outln!(
        "op times ({what}; each op's own time, summed over threads: {:.3} ms):",
        total * 1e3
    );
    outln!("{}", OpTime::table(times));
}

/// Engine options on the command line.
#[derive(clap::Args, Clone, Debug)]
pub struct EngineArgs {
    /// Invocations per subgroup: a power of two in 8..=128 (Amber's `SUBGROUP REQUIRED_SIZE`
    /// overrides it per pipeline).
    #[arg(long, default_value_t = 32, value_parser = parse_subgroup_size, allow_hyphen_values = true)]
    pub subgroup_size: u32,
    /// Worker threads for independent workgroups (0 = all cores).
    #[arg(long, default_value_t = 0, value_parser = parse_threads, allow_hyphen_values = true)]
    pub threads: usize,
    /// Robust buffer access (out-of-bounds loads read 0, stores are dropped) instead of errors.
    #[arg(long)]
    pub robust: bool,
    /// Lane-instructions a workgroup may run before it is stopped (0 = no limit).
    #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
    pub budget: u64,
    /// Do not print NonSemantic.DebugPrintf output.
    #[arg(long)]
    pub no_printf: bool,
    /// Which decode function tensor loads call: vector (DecodeVectorFunc wherever the spec
    /// allows it, DecodeFunc elsewhere) | scalar (DecodeFunc only) | mixed | random[:SEED].
    #[arg(long, default_value = "vector", value_parser = parse_decode_policy)]
    pub decode_policy: DecodePolicy,
    /// Run DecodeFunc and DecodeVectorFunc for every group and fail on a disagreement.
    #[arg(long)]
    pub check_decode: bool,
    /// Bytes the variables of concurrently running workgroups may take (0 = half the memory
    /// available); a dispatch that needs more fails before allocating.
    #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
    pub max_memory: u64,
    /// Run every workgroup in a batch of its own (by default small workgroups that cannot
    /// interact are run several to a batch; results are the same).
    #[arg(long)]
    pub no_pack: bool,
    /// MiB of decoded tiles a dispatch may keep for reuse (a tensor load that would call its
    /// decode function with the same arguments over the same memory reuses the results);
    /// 0 turns reuse off.
    #[arg(long, default_value_t = 128, value_parser = clap::value_parser!(u64).range(0..=1 << 20))]
    pub tile_cache_mib: u64,
    /// Compute every row of row-local tile ops (by default rows whose operands repeat the row
    /// above bit for bit, such as padded rows, are computed once and copied; results are the
    /// same).
    #[arg(long)]
    pub every_row: bool,
    /// Time every engine op and print where the dispatch spent its time, by function and op
    /// (each op then costs two clock reads more, which the smallest ops' times include).
    #[arg(long)]
    pub profile_ops: bool,
    /// As --profile-ops, a line per SPIR-V instruction (the instruction each op was compiled
    /// from) instead of per op kind.
    #[arg(long)]
    pub profile_instructions: bool,
}

impl EngineArgs {
    /// The engine options these arguments select.
    pub fn options(&self) -> EngineOptions {
        EngineOptions {
            subgroup_size: self.subgroup_size,
            threads: self.threads,
            robust: self.robust,
            instruction_budget: self.budget,
            printf: !self.no_printf,
            decode_policy: self.decode_policy,
            check_decode: self.check_decode,
            observe_uniformity: false,
            max_memory: self.max_memory,
            pack_workgroups: !self.no_pack,
            decoded_tile_cache: self.tile_cache_mib << 20,
            repeated_rows_once: !self.every_row,
            profile_ops: self.profile_ops || self.profile_instructions,
        }
    }
}

fn parse_subgroup_size(s: &str) -> Result<u32, String> {
    let v: u32 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a whole number"))?;
    if v.is_power_of_two() && (8..=128).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{v} is not a power of two in 8..=128"))
    }
}

fn parse_threads(s: &str) -> Result<usize, String> {
    let v: usize = s
        .parse()
        .map_err(|_| format!("{s:?} is not a whole number"))?;
    if v <= MAX_THREADS {
        Ok(v)
    } else {
        Err(format!("{v} is more than {MAX_THREADS}"))
    }
}

fn parse_decode_policy(s: &str) -> Result<DecodePolicy, String> {
    s.parse()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        engine: EngineArgs,
    }

    #[test]
    fn values_are_checked_by_the_parser() {
        let ok = Cli::try_parse_from(["x", "--subgroup-size", "64", "--decode-policy", "random:7"])
            .unwrap();
        assert_eq!(ok.engine.options().subgroup_size, 64);
        assert_eq!(ok.engine.options().decode_policy, DecodePolicy::Random(7));
        for bad in [
            &["x", "--subgroup-size", "48"][..],
            &["x", "--subgroup-size", "-8"],
            &["x", "--threads", "100000"],
            &["x", "--threads", "-1"],
            &["x", "--budget", "-1"],
            &["x", "--decode-policy", "sometimes"],
        ] {
            let e = Cli::try_parse_from(bad).err().expect("refused");
            let opt = bad[1];
            assert!(e.to_string().contains(opt), "{opt}: {e}");
        }
    }
}

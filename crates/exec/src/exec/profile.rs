//! Per-op timing of a batch (`EngineOptions::profile_ops`): exclusive time and call count by
//! function, op kind and instruction, summed into `DispatchStats::op_times`.

use crate::OpTime;
use crate::program::Program;
use rustc_hash::FxHashMap;
use std::time::{Duration, Instant};

/// One batch's op times. Ops nest (a call runs its callee's ops inside its own, a tensor
/// load its decode function's in a sub-batch that borrows this profile), so each op's time is
/// its own: what the ops inside it took is taken off.
#[derive(Default)]
pub(super) struct OpProfile {
    /// (function index, op kind, description index) → (calls, exclusive time).
    times: FxHashMap<(usize, &'static str, u32), (u64, Duration)>,
    /// For each op running now, innermost last, the time of the ops nested in it so far.
    nested: Vec<Duration>,
}

impl OpProfile {
    /// An op starts: its clock.
    pub fn enter(&mut self) -> Instant {
        self.nested.push(Duration::ZERO);
        Instant::now()
    }

    /// The op `kind` of function `func`, compiled from the instruction of description `desc`,
    /// that [`OpProfile::enter`] started at `t0` ends.
    pub fn exit(&mut self, t0: Instant, func: usize, kind: &'static str, desc: u32) {
        let took = t0.elapsed();
        let inner = self.nested.pop().unwrap_or_default();
        if let Some(outer) = self.nested.last_mut() {
            *outer += took;
        }
        let e = self.times.entry((func, kind, desc)).or_default();
        e.0 += 1;
        e.1 += took.saturating_sub(inner);
    }

    /// Adds this batch's times to `out` (one entry per function name, kind and instruction)
    /// and clears them.
    pub fn drain_into(&mut self, p: &Program, out: &mut Vec<OpTime>) {
        let mine = self
            .times
            .drain()
            .map(|((func, op, desc), (calls, time))| OpTime {
                function: p
                    .funcs
                    .get(func)
                    .map_or("?", |f| f.name.as_str())
                    .to_string(),
                op,
                instruction: p.descs.get(desc as usize).cloned().unwrap_or_default(),
                calls,
                time,
            });
        OpTime::merge(out, mine);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An op's time leaves out the ops nested in it, at every depth, and the calls are counted.
    #[test]
    fn nested_ops_are_timed_apart() {
        let mut p = OpProfile::default();
        let nap = || std::thread::sleep(Duration::from_millis(20));
        let outer = p.enter();
        let middle = p.enter();
        let inner = p.enter();
        nap();
        p.exit(inner, 2, "Inner", 0);
        nap();
        p.exit(middle, 1, "Middle", 0);
        p.exit(outer, 0, "Outer", 0);
        let t = |f: usize, k: &'static str| p.times[&(f, k, 0)];
        assert_eq!(
            (t(0, "Outer").0, t(1, "Middle").0, t(2, "Inner").0),
            (1, 1, 1)
        );
        let ms = |f: usize, k: &'static str| t(f, k).1.as_secs_f64() * 1e3;
        assert!(ms(2, "Inner") >= 20.0 && ms(1, "Middle") >= 20.0);
        assert!(
            ms(1, "Middle") < ms(2, "Inner") + 15.0,
            "middle counted inner's time"
        );
        assert!(
            ms(0, "Outer") < 10.0,
            "outer counted nested time: {} ms",
            ms(0, "Outer")
        );
        assert!(p.nested.is_empty());
    }

    /// Rows merge by function, kind and instruction; `by_kind` sums a kind's instructions.
    #[test]
    fn rows_merge_by_instruction_and_sum_by_kind() {
        let row = |op: &'static str, instruction: &str, ms: u64| OpTime {
            function: "main".into(),
            op,
            instruction: instruction.into(),
            calls: 1,
            time: Duration::from_millis(ms),
        };
        let mut all = Vec::new();
        OpTime::merge(
            &mut all,
            [row("Bin", "%a = OpIAdd", 1), row("Bin", "%b = OpIMul", 5)],
        );
        OpTime::merge(
            &mut all,
            [row("Bin", "%a = OpIAdd", 2), row("Store", "OpStore", 4)],
        );
        let rows = |times: &[OpTime]| -> Vec<(&'static str, String, u64, u64)> {
            times
                .iter()
                .map(|t| {
                    (
                        t.op,
                        t.instruction.clone(),
                        t.calls,
                        t.time.as_millis() as u64,
                    )
                })
                .collect()
        };
        let want = |op, i: &str, calls, ms| (op, i.to_string(), calls, ms);
        assert_eq!(
            rows(&all),
            [
                want("Bin", "%b = OpIMul", 1, 5),
                want("Store", "OpStore", 1, 4),
                want("Bin", "%a = OpIAdd", 2, 3)
            ]
        );
        assert_eq!(
            rows(&OpTime::by_kind(&all)),
            [want("Bin", "", 3, 8), want("Store", "", 1, 4)]
        );
    }
}

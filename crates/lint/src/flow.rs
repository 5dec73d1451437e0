//! Where a value may come from, flow-insensitively: through copies, phis, selects, loads of
//! Function and Private variables (every store to them) and function parameters (every call
//! site). The tensor-layout and element-access rules ask this of opaque values that unoptimized
//! glslang output keeps in variables and passes to helpers by pointer.

use coopmat_analysis::arg_ids;
use coopmat_spirv::grammar::{op, storage_class};
use coopmat_spirv::types::Type;
use coopmat_spirv::{Instruction, Module};
use rustc_hash::{FxHashMap, FxHashSet};

/// A possible origin of a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Origin {
    /// The instruction (index) that computes it.
    Def(usize),
    /// Something the walk does not follow: memory other than private variables, an access chain
    /// into a variable, a parameter of a function nobody calls.
    Unknown,
}

/// The calls and control flow of a module, indexed once.
pub(crate) struct Flow {
    /// Variables also written through an access chain or passed where the walk cannot see.
    partial: FxHashSet<u32>,
    /// Function -> the indices of the calls to it.
    calls: FxHashMap<u32, Vec<usize>>,
    /// Parameter id -> (function, position).
    params: FxHashMap<u32, (u32, usize)>,
    /// Instruction in a function body -> (function, block) positions in `Module::functions`.
    inst_block: FxHashMap<usize, (usize, usize)>,
    /// Per function, per block: the blocks that branch to it.
    preds: Vec<Vec<Vec<usize>>>,
}

/// The bound on the values one question visits (modules are finite; this keeps a hostile module
/// with a million phis from costing more than a moment).
const MAX_VISITS: usize = 4096;

/// How many callers up a pointer parameter is followed (SPIR-V has no recursion, but a hostile
/// module may).
const MAX_CALL_DEPTH: usize = 16;

impl Flow {
    /// Indexes `m`.
    pub(crate) fn new(m: &Module) -> Flow {
        let mut flow = Flow {
            partial: FxHashSet::default(),
            calls: FxHashMap::default(),
            params: FxHashMap::default(),
            inst_block: FxHashMap::default(),
            preds: Vec::new(),
        };
        for (fi, f) in m.functions().iter().enumerate() {
            let index: FxHashMap<u32, usize> = f
                .blocks
                .iter()
                .enumerate()
                .map(|(b, blk)| (blk.id, b))
                .collect();
            let mut preds = vec![Vec::new(); f.blocks.len()];
            for (b, blk) in f.blocks.iter().enumerate() {
                for j in blk.body.clone() {
                    flow.inst_block.insert(j, (fi, b));
                }
                let Some(last) = blk.body.end.checked_sub(1) else {
                    continue;
                };
                let term = &m.instructions[last];
                if matches!(term.opcode, op::Branch | op::BranchConditional | op::Switch) {
                    for target in arg_ids(term) {
                        if let Some(&t) = index.get(&target)
                            && !preds[t].contains(&b)
                        {
                            preds[t].push(b);
                        }
                    }
                }
            }
            flow.preds.push(preds);
            for (k, &p) in f.params.iter().enumerate() {
                if let Some(id) = m.instructions[p].result_id {
                    flow.params.insert(id, (f.id, k));
                }
            }
        }
        for (i, inst) in m.instructions.iter().enumerate() {
            match inst.opcode {
                op::Store => {
                    let Some(ptr) = inst.word(0) else {
                        continue;
                    };
                    if let Some(d) = m.def(ptr)
                        && matches!(d.opcode, op::AccessChain | op::InBoundsAccessChain)
                        && let Some(base) = d.word(2)
                    {
                        flow.partial.insert(base);
                    }
                }
                op::FunctionCall => {
                    if let Some(callee) = inst.word(2) {
                        flow.calls.entry(callee).or_default().push(i);
                    }
                }
                _ => {}
            }
        }
        flow
    }

    /// The instructions that may compute `id`.
    pub(crate) fn origins(&self, m: &Module, id: u32) -> Vec<Origin> {
        let mut out = Vec::new();
        let mut seen = FxHashSet::default();
        let mut work = vec![id];
        while let Some(id) = work.pop() {
            if !seen.insert(id) {
                continue;
            }
            if seen.len() > MAX_VISITS {
                out.push(Origin::Unknown);
                break;
            }
            let Some(i) = m.def_index(id) else {
                out.push(Origin::Unknown);
                continue;
            };
            let inst = &m.instructions[i];
            let a = inst.first_arg();
            match inst.opcode {
                op::CopyObject => work.extend(inst.word(a)),
                op::Phi => work.extend(arg_ids(inst).step_by(2)),
                op::Select => {
                    work.extend([inst.word(a + 1), inst.word(a + 2)].into_iter().flatten())
                }
                op::FunctionParameter => self.arguments(m, id, &mut work, &mut out),
                op::Load => {
                    let ptr = inst.word(a).unwrap_or(0);
                    self.pointee_values(m, i, ptr, &mut work, &mut out, 0);
                }
                _ => out.push(Origin::Def(i)),
            }
        }
        out.sort_unstable_by_key(|o| match o {
            Origin::Def(i) => *i,
            Origin::Unknown => usize::MAX,
        });
        out.dedup();
        out
    }

    /// The values a load through `ptr` (instruction `load`) may read: the stores that reach it
    /// along the control flow, scanning back through the blocks (flow-sensitive, since
    /// unoptimized glslang output stores every new value of a local to the same variable).
    fn pointee_values(
        &self,
        m: &Module,
        load: usize,
        ptr: u32,
        work: &mut Vec<u32>,
        out: &mut Vec<Origin>,
        depth: usize,
    ) {
        let private_var = m
            .def(ptr)
            .is_some_and(|d| d.opcode == op::Variable && private(d));
        let param = m
            .def(ptr)
            .is_some_and(|d| d.opcode == op::FunctionParameter);
        if self.partial.contains(&ptr) || !(private_var || param) || depth > MAX_CALL_DEPTH {
            out.push(Origin::Unknown);
            return;
        }
        let Some(&(fi, bi)) = self.inst_block.get(&load) else {
            out.push(Origin::Unknown);
            return;
        };
        let f = &m.functions()[fi];
        // (block, scan from this instruction backwards)
        let mut scans = vec![(bi, load)];
        let mut scanned = FxHashSet::default();
        while let Some((b, from)) = scans.pop() {
            let block = &f.blocks[b];
            let mut found = false;
            for j in (block.body.start..from).rev() {
                let inst = &m.instructions[j];
                match inst.opcode {
                    op::Store if inst.word(0) == Some(ptr) => {
                        work.extend(inst.word(1));
                        found = true;
                    }
                    // A callee may write it.
                    op::FunctionCall if arg_ids(inst).any(|a| a == ptr) => {
                        out.push(Origin::Unknown);
                        found = true;
                    }
                    _ => {}
                }
                if found {
                    break;
                }
            }
            if found {
                continue;
            }
            let preds = self.preds[fi].get(b).map(Vec::as_slice).unwrap_or(&[]);
            if preds.is_empty() {
                // The function's entry: the initializer, or what the callers stored.
                if private_var {
                    match m.def(ptr).and_then(|d| d.word(3)) {
                        Some(init) => work.push(init),
                        None => out.push(Origin::Unknown),
                    }
                } else {
                    let mut args = Vec::new();
                    self.arguments(m, ptr, &mut args, out);
                    let Some(&(callee, _)) = self.params.get(&ptr) else {
                        continue;
                    };
                    for (&call, arg) in self.calls.get(&callee).into_iter().flatten().zip(args) {
                        self.pointee_values(m, call, arg, work, out, depth + 1);
                    }
                }
            }
            for &p in preds {
                if scanned.insert(p) {
                    scans.push((p, f.blocks[p].body.end));
                }
            }
        }
    }

    /// The arguments every call passes for parameter `param`.
    fn arguments(&self, m: &Module, param: u32, work: &mut Vec<u32>, out: &mut Vec<Origin>) {
        let Some(&(f, k)) = self.params.get(&param) else {
            out.push(Origin::Unknown);
            return;
        };
        let calls = self.calls.get(&f).map(Vec::as_slice).unwrap_or(&[]);
        if calls.is_empty() {
            out.push(Origin::Unknown);
        }
        for &c in calls {
            match m.instructions[c].word(3 + k) {
                Some(arg) => work.push(arg),
                None => out.push(Origin::Unknown),
            }
        }
    }
}

/// Whether a variable lives in memory only its invocation writes (Function or Private).
fn private(var: &Instruction) -> bool {
    matches!(
        var.word(2),
        Some(storage_class::Function | storage_class::Private)
    )
}

/// The component count of a vector type, if `ty` is one.
pub(crate) fn vector_count(m: &Module, ty: u32) -> Option<u32> {
    match m.type_view(ty) {
        Type::Vector { count, .. } => Some(count),
        _ => None,
    }
}

//! `coopmat-mapping-dependence`: code that reads or writes the components of a cooperative
//! matrix as if it knew which (row, column) each index of each invocation holds. The mapping is
//! implementation-dependent (SPV_KHR_cooperative_matrix, "Cooperative Matrix"), so only
//! operations that treat every component alike are portable.

use crate::flow::Origin;
use crate::{Cx, Finding, rules};
use coopmat_analysis::{Level as Uniformity, Step, arg_ids};
use coopmat_spirv::grammar::{built_in, decoration, op, storage_class};
use rustc_hash::FxHashSet;

/// What a value was found to depend on.
#[derive(Default)]
struct Deps {
    /// Instructions that load an invocation-identity built-in (LocalInvocationId, ...).
    identity: Vec<usize>,
    /// Result ids of the values reached (to match an index's roots).
    values: FxHashSet<u32>,
    /// Element reads reached: (instruction, the matrix type read from).
    element_reads: Vec<(usize, u32)>,
}

/// The bound on the values one dependence walk visits.
const MAX_DEPS: usize = 4096;

/// Built-ins that name an invocation within its workgroup or subgroup.
fn is_identity(b: u32) -> bool {
    matches!(
        b,
        built_in::LocalInvocationId
            | built_in::LocalInvocationIndex
            | built_in::GlobalInvocationId
            | built_in::SubgroupLocalInvocationId
    )
}

impl Cx<'_> {
    /// The cooperative-matrix type `ptr` points to, if it is a pointer to one.
    fn pointee_matrix(&self, ptr: u32) -> Option<u32> {
        let m = self.m;
        let t = m.type_of(ptr)?;
        match m.type_view(t) {
            coopmat_spirv::types::Type::Pointer { pointee, .. } => {
                m.type_view(pointee).coop_matrix().map(|_| pointee)
            }
            _ => None,
        }
    }

    /// The variable at the root of a pointer (through access chains), if any.
    fn root_variable(&self, mut ptr: u32) -> Option<&coopmat_spirv::Instruction> {
        for _ in 0..64 {
            let d = self.m.def(ptr)?;
            match d.opcode {
                op::Variable => return Some(d),
                op::AccessChain | op::InBoundsAccessChain | op::PtrAccessChain => {
                    ptr = d.word(2)?;
                }
                _ => return None,
            }
        }
        None
    }

    /// If `ptr` addresses one component of a matrix: (the matrix variable or pointer, its
    /// matrix type, the index).
    fn element_pointer(&self, ptr: u32) -> Option<(u32, u32, u32)> {
        let d = self.m.def(ptr)?;
        if !matches!(d.opcode, op::AccessChain | op::InBoundsAccessChain) {
            return None;
        }
        let base = d.word(2)?;
        let ty = self.pointee_matrix(base)?;
        Some((base, ty, d.word(3)?))
    }

    /// Walks back from `id` through the values it is computed from.
    fn dependencies(&self, id: u32) -> Deps {
        let m = self.m;
        let mut deps = Deps::default();
        let mut work = vec![id];
        while let Some(id) = work.pop() {
            if !deps.values.insert(id) || deps.values.len() > MAX_DEPS {
                continue;
            }
            let Some(i) = m.def_index(id) else { continue };
            let inst = &m.instructions[i];
            let a = inst.first_arg();
            match inst.opcode {
                op::Load => {
                    let ptr = inst.word(a).unwrap_or(0);
                    if let Some((_, ty, _)) = self.element_pointer(ptr) {
                        deps.element_reads.push((i, ty));
                        continue;
                    }
                    let var = self.root_variable(ptr);
                    if let Some(var) = var
                        && let Some(Some(b)) = var
                            .result_id
                            .and_then(|v| m.decoration_param(v, decoration::BuiltIn))
                    {
                        if is_identity(b) {
                            deps.identity.push(i);
                        }
                        continue;
                    }
                    let private = var.is_some_and(|v| {
                        matches!(
                            v.word(2),
                            Some(storage_class::Function | storage_class::Private)
                        )
                    });
                    if private {
                        for o in self.flow.origins(m, id) {
                            if let Origin::Def(d) = o {
                                work.extend(m.instructions[d].result_id);
                            }
                        }
                    }
                    // Memory read at an address: depends on the address.
                    work.push(ptr);
                }
                op::CompositeExtract
                    if inst
                        .word(a)
                        .and_then(|c| m.type_of(c))
                        .is_some_and(|t| m.type_view(t).coop_matrix().is_some()) =>
                {
                    let ty = m.type_of(inst.word(a).unwrap_or(0)).unwrap_or(0);
                    deps.element_reads.push((i, ty));
                }
                op::Phi => work.extend(arg_ids(inst).step_by(2)),
                op::FunctionParameter => {
                    for o in self.flow.origins(m, id) {
                        if let Origin::Def(d) = o {
                            work.extend(m.instructions[d].result_id);
                        }
                    }
                }
                op::Variable | op::Function => {}
                _ if inst.result_type.is_some() && !is_constant(inst.opcode) => {
                    work.extend(arg_ids(inst).filter(|&x| m.function(x).is_none()));
                }
                _ => {}
            }
        }
        deps
    }

    /// The values an index is computed from that are not constants (a loop counter's update, a
    /// load of it): another value that reaches one of them depends on the index.
    fn index_roots(&self, index: u32) -> FxHashSet<u32> {
        let m = self.m;
        let mut roots: FxHashSet<u32> = FxHashSet::default();
        roots.insert(index);
        for o in self.flow.origins(m, index) {
            if let Origin::Def(d) = o
                && !is_constant(m.instructions[d].opcode)
            {
                roots.extend(m.instructions[d].result_id);
            }
        }
        roots
    }

    /// The rule at instruction `i`, when it reads or writes matrix components.
    pub(crate) fn mapping_dependence(&self, i: usize, out: &mut Vec<Finding>) {
        let m = self.m;
        let inst = &m.instructions[i];
        let a = inst.first_arg();
        let is_matrix = |id: u32| {
            m.type_of(id)
                .is_some_and(|t| m.type_view(t).coop_matrix().is_some())
        };
        match inst.opcode {
            op::CompositeExtract => {
                let Some(mat) = inst.word(a).filter(|&c| is_matrix(c)) else {
                    return;
                };
                if !self.a.may_hold_different_elements(mat) {
                    return;
                }
                let k = inst.word(a + 1).unwrap_or(0);
                self.constant_component(i, "reads", k.into(), mat, out);
            }
            op::CompositeInsert => {
                let Some(mat) = inst.word(a + 1).filter(|&c| is_matrix(c)) else {
                    return;
                };
                let k = inst.word(a + 2).unwrap_or(0);
                self.constant_component(i, "writes", k.into(), mat, out);
            }
            op::Load => {
                let ptr = inst.word(a).unwrap_or(0);
                let Some((base, _, index)) = self.element_pointer(ptr) else {
                    return;
                };
                let Some(k) = m.constant_u64(index) else {
                    return;
                };
                if !self.a.may_hold_different_elements(base) {
                    return;
                }
                self.constant_component(i, "reads", k, base, out);
            }
            op::Store => {
                let (Some(ptr), Some(value)) = (inst.word(0), inst.word(1)) else {
                    return;
                };
                if let Some((base, ty, index)) = self.element_pointer(ptr) {
                    self.element_store(i, base, ty, index, value, out);
                } else if !self.root_variable(ptr).is_some_and(|v| {
                    matches!(
                        v.word(2),
                        Some(storage_class::Function | storage_class::Private)
                    )
                }) {
                    self.component_to_memory(i, ptr, value, out);
                }
            }
            _ => {}
        }
    }

    /// Instruction `i` reads or writes component `k` (a constant) of matrix `mat`.
    fn constant_component(&self, i: usize, verb: &str, k: u64, mat: u32, out: &mut Vec<Finding>) {
        let inst = &self.m.instructions[i];
        let op_name = coopmat_spirv::grammar::instruction(inst.opcode).map_or("Op?", |d| d.name);
        let what = if verb == "reads" {
            "every invocation reads a different, unknown element"
        } else {
            "which elements of the matrix change is implementation-dependent"
        };
        let msg = format!(
            "{op_name} {verb} component {k} of each invocation's share of matrix {}, whose (row, column) is implementation-dependent: {what}",
            self.name(mat)
        );
        out.extend(self.finding(&rules::MAPPING_DEPENDENCE, i, msg, Vec::new()));
    }

    /// A store of `value` into component `index` of a matrix (variable `base`, type `ty`).
    fn element_store(
        &self,
        i: usize,
        base: u32,
        ty: u32,
        index: u32,
        value: u32,
        out: &mut Vec<Finding>,
    ) {
        let m = self.m;
        if let Some(k) = m.constant_u64(index) {
            self.constant_component(i, "writes", k, base, out);
            return;
        }
        let deps = self.dependencies(value);
        let roots = self.index_roots(index);
        let step = |inst: usize, note: &str| Step {
            inst,
            level: Uniformity::Divergent,
            note: note.to_string(),
        };
        if let Some(&r) = roots.iter().find(|r| deps.values.contains(r)) {
            let at = m.def_index(r).unwrap_or(i);
            let msg = format!(
                "the value stored to component %{index} of matrix {} is computed from that index: component i of an invocation is an implementation-dependent (row, column), so the matrix this builds differs between implementations",
                self.name(base)
            )
            .replace("%{index}", &self.name(index));
            let chain = vec![step(at, "the index the stored value is computed from")];
            out.extend(self.finding(&rules::MAPPING_DEPENDENCE, i, msg, chain));
        } else if let Some(&b) = deps.identity.first() {
            let msg = format!(
                "the value stored to each component of matrix {} depends on which invocation stores it: the invocation that holds an element is implementation-dependent",
                self.name(base)
            );
            let chain = vec![step(b, "the invocation's identity")];
            out.extend(self.finding(&rules::MAPPING_DEPENDENCE, i, msg, chain));
        } else if let Some(&(r, from)) = deps.element_reads.iter().find(|(_, t)| *t != ty) {
            let msg = format!(
                "component i of matrix {} is set from component i of a matrix of another type: the two types need not map index i to the same (row, column)",
                self.name(base)
            );
            let chain = vec![step(
                r,
                &format!(
                    "the component read from a matrix of type {}",
                    self.name(from)
                ),
            )];
            out.extend(self.finding(&rules::MAPPING_DEPENDENCE, i, msg, chain));
        }
    }

    /// A store to memory other than the invocation's own: reported when it writes a component
    /// read at a run-time index to an address computed from that index (laying the matrix out
    /// in memory by a guessed mapping).
    fn component_to_memory(&self, i: usize, ptr: u32, value: u32, out: &mut Vec<Finding>) {
        let deps = self.dependencies(value);
        if deps.element_reads.is_empty() {
            return;
        }
        let address = self.dependencies(ptr);
        for &(r, _) in &deps.element_reads {
            let read = &self.m.instructions[r];
            let Some(index) = (read.opcode == op::Load)
                .then(|| read.word(2))
                .flatten()
                .and_then(|p| self.element_pointer(p))
                .map(|(_, _, index)| index)
            else {
                continue;
            };
            if self.m.constant_u64(index).is_some() {
                continue;
            }
            let roots = self.index_roots(index);
            if roots.iter().any(|r| address.values.contains(r)) {
                let msg = format!(
                    "OpStore writes matrix component %{index} to an address computed from the component's index: that assumes which (row, column) the index is, which is implementation-dependent (store the whole matrix with OpCooperativeMatrixStoreKHR instead)"
                )
                .replace("%{index}", &self.name(index));
                let chain = vec![Step {
                    inst: r,
                    level: Uniformity::Divergent,
                    note: "the component read".into(),
                }];
                out.extend(self.finding(&rules::MAPPING_DEPENDENCE, i, msg, chain));
                return;
            }
        }
    }
}

fn is_constant(opcode: u16) -> bool {
    matches!(
        opcode,
        op::Constant
            | op::ConstantTrue
            | op::ConstantFalse
            | op::ConstantNull
            | op::ConstantComposite
            | op::SpecConstant
            | op::SpecConstantTrue
            | op::SpecConstantFalse
            | op::SpecConstantComposite
            | op::SpecConstantOp
            | op::Undef
    )
}

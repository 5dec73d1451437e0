//! `nv-to-khr`: SPV_NV_cooperative_matrix rewritten as SPV_KHR_cooperative_matrix.
//!
//! An NV matrix type has no Use; a KHR type has one. Every matrix value gets the Use the
//! multiply-adds it reaches demand (A, B, or Accumulator for C and the result), propagated through
//! phis, selects, copies, element-wise arithmetic, conversions (KHR requires the same Use on both
//! sides) and Function variables; values that reach no multiply-add become accumulators. An NV
//! type used in several roles becomes several KHR types (and its pointer types and matrix
//! constants are split the same way). Loads and stores get a constant MemoryLayout in place of
//! the ColumnMajor boolean (same stride), multiply-adds the signedness operands the NV form took
//! from the component types, OpCooperativeMatrixLengthNV becomes the KHR Length.
//!
//! Refused, with the reason: a value that would need two roles, matrices as function
//! parameters or results, in structs or arrays, a ColumnMajor operand that is not a constant, and
//! the Length of a type used in several roles (KHR lengths may differ by Use).

use crate::LowerError;
use coopmat_spirv::Module;
use coopmat_spirv::binary::{decode_string, encode_string};
use coopmat_spirv::grammar::{
    OperandKind, capability, cooperative_matrix_layout as layout,
    cooperative_matrix_operands as cmo, cooperative_matrix_use as usage, op,
};
use coopmat_spirv::module::Section;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// What `nv_to_khr` did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NvToKhrReport {
    /// NV matrix types rewritten (each may have become several KHR types).
    pub types: usize,
    /// KHR types made in all.
    pub khr_types: usize,
    /// Loads, stores, multiply-adds and lengths rewritten.
    pub instructions: usize,
}

/// Operand word `k` of an instruction (operands counted with the result type and id).
fn w(inst: &coopmat_spirv::binary::Instruction, k: usize) -> u32 {
    inst.word(k).unwrap_or(0)
}

/// One instruction's words.
fn encode(opcode: u16, operands: &[u32]) -> Vec<u32> {
    let mut v = Vec::with_capacity(operands.len() + 1);
    v.push((((operands.len() + 1) as u32) << 16) | opcode as u32);
    v.extend_from_slice(operands);
    v
}

/// Union-find over ids, each class with the roles fixed on it.
#[derive(Default)]
struct Roles {
    parent: HashMap<u32, u32>,
    fixed: HashMap<u32, BTreeSet<u32>>,
}

impl Roles {
    fn find(&mut self, x: u32) -> u32 {
        let p = *self.parent.entry(x).or_insert(x);
        if p == x {
            return x;
        }
        let r = self.find(p);
        self.parent.insert(x, r);
        r
    }
    fn union(&mut self, a: u32, b: u32) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            self.parent.insert(rb, ra);
            let moved = self.fixed.remove(&rb).unwrap_or_default();
            self.fixed.entry(ra).or_default().extend(moved);
        }
    }
    fn fix(&mut self, x: u32, role: u32) {
        let r = self.find(x);
        self.fixed.entry(r).or_default().insert(role);
    }
    /// The class's role: the one fixed on it, or Accumulator when none is.
    fn role(&mut self, x: u32) -> Result<u32, BTreeSet<u32>> {
        let r = self.find(x);
        match self.fixed.get(&r) {
            Some(s) if s.len() > 1 => Err(s.clone()),
            Some(s) => Ok(s.first().copied().unwrap_or(usage::MatrixAccumulatorKHR)),
            None => Ok(usage::MatrixAccumulatorKHR),
        }
    }
}

fn role_name(r: u32) -> &'static str {
    match r {
        usage::MatrixAKHR => "MatrixA",
        usage::MatrixBKHR => "MatrixB",
        _ => "MatrixAccumulator",
    }
}

/// Rewrites SPV_NV_cooperative_matrix as SPV_KHR_cooperative_matrix (see the module docs).
pub fn nv_to_khr(module: &mut Module) -> Result<NvToKhrReport, LowerError> {
    let m = &*module;
    let refuse = |what: String| Err(LowerError::Refused(what));
    // NV matrix types: id -> (component, scope, rows, columns).
    let mut nv: BTreeMap<u32, [u32; 4]> = BTreeMap::new();
    for inst in &m.instructions {
        if inst.opcode == op::TypeCooperativeMatrixNV {
            nv.insert(w(inst, 0), [w(inst, 1), w(inst, 2), w(inst, 3), w(inst, 4)]);
        }
    }
    let mut report = NvToKhrReport::default();
    if nv.is_empty() {
        return Ok(report);
    }
    // Pointer types to them: id -> pointee.
    let mut ptrs: BTreeMap<u32, u32> = BTreeMap::new();
    for inst in &m.instructions {
        match inst.opcode {
            op::TypePointer if nv.contains_key(&w(inst, 2)) => {
                ptrs.insert(w(inst, 0), w(inst, 2));
            }
            op::TypeStruct | op::TypeArray | op::TypeRuntimeArray | op::TypeFunction => {
                let members = (1..inst.operands.len()).map(|k| w(inst, k));
                if let Some(t) = members
                    .clone()
                    .find(|t| nv.contains_key(t) || ptrs.contains_key(t))
                {
                    let what = match inst.opcode {
                        op::TypeFunction => "a function parameter or result",
                        _ => "a struct or array member",
                    };
                    return refuse(format!(
                        "%{t}, an NV cooperative matrix type, is {what} (%{}): only values and Function variables are lowered",
                        w(inst, 0)
                    ));
                }
            }
            _ => {}
        }
    }
    let is_matrix = |id: u32| m.type_of(id).is_some_and(|t| nv.contains_key(&t));
    let is_constant = |id: u32| {
        m.def(id).is_some_and(|d| {
            matches!(
                d.opcode,
                op::ConstantNull
                    | op::ConstantComposite
                    | op::SpecConstantComposite
                    | op::Undef
                    | op::ConstantCompositeReplicateEXT
                    | op::SpecConstantCompositeReplicateEXT
            ) && d.result_type.is_some_and(|t| nv.contains_key(&t))
        })
    };
    // The Function variable a pointer operand names (loads and stores of whole matrices go
    // straight through a variable; anything else is refused).
    let root = |ptr: u32| -> Option<u32> {
        let d = m.def(ptr)?;
        (d.opcode == op::Variable && d.result_type.is_some_and(|t| ptrs.contains_key(&t)))
            .then_some(ptr)
    };
    let mut roles = Roles::default();
    // (constant, the instruction index using it, the role it must take there) are settled
    // after the classes.
    let mut constant_uses: Vec<(u32, usize, Option<u32>)> = Vec::new();
    let link =
        |roles: &mut Roles, uses: &mut Vec<(u32, usize, Option<u32>)>, i: usize, a: u32, b: u32| {
            match (is_constant(a), is_constant(b)) {
                (false, false) => roles.union(a, b),
                (true, false) => uses.push((a, i, None)),
                (false, true) => uses.push((b, i, None)),
                (true, true) => {}
            }
        };
    for (i, inst) in m.instructions.iter().enumerate() {
        if m.section(i) != Section::Function {
            continue;
        }
        let rid = inst.result_id.unwrap_or(0);
        let result_matrix = inst.result_type.is_some_and(|t| nv.contains_key(&t));
        match inst.opcode {
            op::CooperativeMatrixMulAddNV => {
                let (a, b, c) = (w(inst, 2), w(inst, 3), w(inst, 4));
                for (x, r) in [
                    (a, usage::MatrixAKHR),
                    (b, usage::MatrixBKHR),
                    (c, usage::MatrixAccumulatorKHR),
                ] {
                    if is_constant(x) {
                        constant_uses.push((x, i, Some(r)));
                    } else {
                        roles.fix(x, r);
                    }
                }
                roles.fix(rid, usage::MatrixAccumulatorKHR);
            }
            op::FunctionParameter | op::FunctionCall if result_matrix => {
                return refuse(format!(
                    "%{rid} passes a cooperative matrix through a function call"
                ));
            }
            op::FunctionCall => {
                if let Some(arg) = (3..inst.operands.len())
                    .map(|k| w(inst, k))
                    .find(|&a| is_matrix(a) || root(a).is_some())
                {
                    return refuse(format!(
                        "%{rid} passes the cooperative matrix %{arg} to a function"
                    ));
                }
            }
            op::Load if result_matrix => match root(w(inst, 2)) {
                Some(v) => link(&mut roles, &mut constant_uses, i, rid, v),
                None => {
                    return refuse(format!(
                        "%{rid} loads a matrix through %{}, which is not a Function variable of matrix type",
                        w(inst, 2)
                    ));
                }
            },
            op::Store if is_matrix(w(inst, 1)) => match root(w(inst, 0)) {
                Some(v) => link(&mut roles, &mut constant_uses, i, w(inst, 1), v),
                None => {
                    return refuse(format!(
                        "a store of %{} through %{}, which is not a Function variable of matrix type",
                        w(inst, 1),
                        w(inst, 0)
                    ));
                }
            },
            op::Variable if inst.result_type.is_some_and(|t| ptrs.contains_key(&t)) => {
                roles.find(rid);
                if let Some(init) = inst.word(3) {
                    link(&mut roles, &mut constant_uses, i, rid, init);
                }
            }
            op::CooperativeMatrixLoadNV
            | op::CompositeConstruct
            | op::CompositeConstructReplicateEXT
                if result_matrix =>
            {
                roles.find(rid);
            }
            op::CooperativeMatrixStoreNV | op::CooperativeMatrixLengthNV => {}
            _ if result_matrix => {
                // Element-wise arithmetic, conversions, phis, selects, copies, inserts: the
                // result and every matrix operand share one Use.
                roles.find(rid);
                for k in 2..inst.operands.len() {
                    if inst.operands[k].kind == Some(OperandKind::IdRef) {
                        let x = w(inst, k);
                        if is_matrix(x) {
                            link(&mut roles, &mut constant_uses, i, rid, x);
                        }
                    }
                }
            }
            _ => {
                // Anything else taking a variable's address (access chains to elements are
                // fine: they do not change the matrix's role).
                if inst.opcode != op::AccessChain && inst.opcode != op::InBoundsAccessChain {
                    for k in 0..inst.operands.len() {
                        if inst.operands[k].kind == Some(OperandKind::IdRef)
                            && root(w(inst, k)).is_some()
                            && !matches!(inst.opcode, op::Load | op::Store)
                        {
                            return refuse(format!(
                                "%{} (a matrix variable) is used by {}",
                                w(inst, k),
                                coopmat_spirv::grammar::instruction(inst.opcode)
                                    .map_or("?", |d| d.name)
                            ));
                        }
                    }
                }
            }
        }
    }
    // Each class's role; conflicts are refused.
    let mut role_of: HashMap<u32, u32> = HashMap::new();
    let ids: Vec<u32> = roles.parent.keys().copied().collect();
    for id in ids {
        match roles.role(id) {
            Ok(r) => {
                role_of.insert(id, r);
            }
            Err(set) => {
                let names: Vec<&str> = set.iter().map(|&r| role_name(r)).collect();
                return refuse(format!(
                    "%{id} would have to be a {} matrix at once: KHR matrices have one Use",
                    names.join(" and a ")
                ));
            }
        }
    }
    // The role a constant takes at instruction i: the one fixed there, else the class of the
    // instruction's result (or, for a store, of the variable).
    let mut constant_roles: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
    let mut constant_at: HashMap<(u32, usize), u32> = HashMap::new();
    for &(c, i, fixed) in &constant_uses {
        let inst = &m.instructions[i];
        let r = match fixed {
            Some(r) => r,
            None => {
                let anchor = match inst.opcode {
                    op::Store => w(inst, 0),
                    _ => inst.result_id.unwrap_or(0),
                };
                role_of
                    .get(&anchor)
                    .copied()
                    .unwrap_or(usage::MatrixAccumulatorKHR)
            }
        };
        constant_roles.entry(c).or_default().insert(r);
        constant_at.insert((c, i), r);
    }
    // Roles each type (and pointer type) is needed in.
    let mut type_roles: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
    let mut ptr_roles: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
    for (i, inst) in m.instructions.iter().enumerate() {
        let (Some(rt), Some(rid)) = (inst.result_type, inst.result_id) else {
            continue;
        };
        if m.section(i) == Section::Function
            && let Some(&r) = role_of.get(&rid)
        {
            if nv.contains_key(&rt) {
                type_roles.entry(rt).or_default().insert(r);
            }
            if let Some(&t) = ptrs.get(&rt) {
                ptr_roles.entry(rt).or_default().insert(r);
                type_roles.entry(t).or_default().insert(r);
            }
        }
    }
    for (c, rs) in &constant_roles {
        if let Some(t) = m.type_of(*c) {
            type_roles.entry(t).or_default().extend(rs.iter().copied());
        }
    }
    for rs in type_roles.values_mut().chain(ptr_roles.values_mut()) {
        if rs.is_empty() {
            rs.insert(usage::MatrixAccumulatorKHR);
        }
    }
    for &t in nv.keys() {
        type_roles
            .entry(t)
            .or_insert_with(|| [usage::MatrixAccumulatorKHR].into());
    }
    // Ids: each split type, pointer or constant keeps its id for its first role.
    let mut bound = m.header.bound;
    let mut fresh = || {
        bound += 1;
        bound - 1
    };
    let mut type_id: HashMap<(u32, u32), u32> = HashMap::new();
    for (&t, rs) in &type_roles {
        for (k, &r) in rs.iter().enumerate() {
            type_id.insert((t, r), if k == 0 { t } else { fresh() });
        }
    }
    let mut ptr_id: HashMap<(u32, u32), u32> = HashMap::new();
    for (&p, rs) in &ptr_roles {
        for (k, &r) in rs.iter().enumerate() {
            ptr_id.insert((p, r), if k == 0 { p } else { fresh() });
        }
    }
    let mut const_id: HashMap<(u32, u32), u32> = HashMap::new();
    for (&c, rs) in &constant_roles {
        for (k, &r) in rs.iter().enumerate() {
            const_id.insert((c, r), if k == 0 { c } else { fresh() });
        }
    }
    // Lengths (an instruction, or glslang's OpSpecConstantOp form): of a type with one role only.
    let length_type = |inst: &coopmat_spirv::binary::Instruction| match inst.opcode {
        op::CooperativeMatrixLengthNV => Some(w(inst, 2)),
        op::SpecConstantOp if w(inst, 2) == op::CooperativeMatrixLengthNV as u32 => {
            Some(w(inst, 3))
        }
        _ => None,
    };
    for inst in &m.instructions {
        if let Some(t) = length_type(inst)
            && type_roles.get(&t).is_some_and(|rs| rs.len() > 1)
        {
            return refuse(format!(
                "OpCooperativeMatrixLengthNV of %{t}, which is used in several roles (KHR lengths may differ by Use)"
            ));
        }
    }
    // Constants for the Uses and layouts, of the type of the first NV type's scope.
    let int_type = nv
        .values()
        .next()
        .and_then(|ops| m.type_of(ops[1]))
        .ok_or_else(|| LowerError::Refused("the matrix scope is not a typed constant".into()))?;
    let use_const: [u32; 3] = [fresh(), fresh(), fresh()];
    let layout_const: [u32; 2] = [fresh(), fresh()];
    let mut constants_emitted = false;
    // Signedness of a matrix's components (NV MulAdd takes it from OpTypeInt).
    let signed = |matrix: u32| {
        m.type_of(matrix)
            .and_then(|t| nv.get(&t))
            .and_then(|ops| m.def(ops[0]))
            .is_some_and(|c| c.opcode == op::TypeInt && c.word(2) == Some(1))
    };
    let mut out: Vec<u32> = Vec::new();
    let mut has_khr_cap = false;
    let mut has_khr_ext = false;
    for inst in &m.instructions {
        if inst.opcode == op::Capability && inst.word(0) == Some(capability::CooperativeMatrixKHR) {
            has_khr_cap = true;
        }
        if inst.opcode == op::Extension
            && decode_string(&inst.words[1..]).0 == "SPV_KHR_cooperative_matrix"
        {
            has_khr_ext = true;
        }
    }
    for (i, inst) in m.instructions.iter().enumerate() {
        let rid = inst.result_id.unwrap_or(0);
        // The role this instruction's matrix values take.
        let role = role_of.get(&rid).copied().or_else(|| {
            (inst.opcode == op::Store)
                .then(|| role_of.get(&w(inst, 0)).copied())
                .flatten()
        });
        let map_const = |x: u32| -> u32 {
            match constant_at.get(&(x, i)) {
                Some(&r) => const_id.get(&(x, r)).copied().unwrap_or(x),
                None => x,
            }
        };
        match inst.opcode {
            op::Capability if inst.word(0) == Some(capability::CooperativeMatrixNV) => {
                if !has_khr_cap {
                    out.extend(encode(op::Capability, &[capability::CooperativeMatrixKHR]));
                    has_khr_cap = true;
                }
                continue;
            }
            op::Extension if decode_string(&inst.words[1..]).0 == "SPV_NV_cooperative_matrix" => {
                if !has_khr_ext {
                    let mut s = Vec::new();
                    encode_string("SPV_KHR_cooperative_matrix", &mut s);
                    out.extend(encode(op::Extension, &s));
                    has_khr_ext = true;
                }
                continue;
            }
            op::TypeCooperativeMatrixNV => {
                if !constants_emitted {
                    for (k, &c) in use_const.iter().enumerate() {
                        out.extend(encode(op::Constant, &[int_type, c, k as u32]));
                    }
                    out.extend(encode(
                        op::Constant,
                        &[int_type, layout_const[0], layout::RowMajorKHR],
                    ));
                    out.extend(encode(
                        op::Constant,
                        &[int_type, layout_const[1], layout::ColumnMajorKHR],
                    ));
                    constants_emitted = true;
                }
                let [comp, scope, rows, cols] = nv[&rid];
                report.types += 1;
                for &r in &type_roles[&rid] {
                    let u = use_const[r as usize];
                    out.extend(encode(
                        op::TypeCooperativeMatrixKHR,
                        &[type_id[&(rid, r)], comp, scope, rows, cols, u],
                    ));
                    report.khr_types += 1;
                }
                continue;
            }
            op::TypePointer if ptrs.contains_key(&rid) => {
                let t = ptrs[&rid];
                let rs = ptr_roles.get(&rid).cloned().unwrap_or_else(|| {
                    [type_roles[&t]
                        .iter()
                        .next()
                        .copied()
                        .unwrap_or(usage::MatrixAccumulatorKHR)]
                    .into()
                });
                for r in rs {
                    let pid = ptr_id.get(&(rid, r)).copied().unwrap_or(rid);
                    let pointee = type_id.get(&(t, r)).copied().unwrap_or(t);
                    out.extend(encode(op::TypePointer, &[pid, w(inst, 1), pointee]));
                }
                continue;
            }
            _ => {}
        }
        // Matrix constants: one declaration per role.
        if let Some(rs) = constant_roles.get(&rid)
            && m.section(i) != Section::Function
        {
            let t = inst.result_type.unwrap_or(0);
            for &r in rs {
                let mut words = inst.words.clone();
                words[1] = type_id.get(&(t, r)).copied().unwrap_or(t);
                words[2] = const_id[&(rid, r)];
                out.extend(words);
            }
            continue;
        }
        let mut words = inst.words.clone();
        // Result types of matrix values and variables.
        if let (Some(rt), Some(r)) = (inst.result_type, role) {
            if nv.contains_key(&rt) {
                words[1] = type_id.get(&(rt, r)).copied().unwrap_or(rt);
            } else if ptrs.contains_key(&rt) {
                words[1] = ptr_id.get(&(rt, r)).copied().unwrap_or(rt);
            }
        }
        // Matrix constants used here: the copy of this role.
        for (k, o) in inst.operands.iter().enumerate() {
            if o.kind == Some(OperandKind::IdRef) {
                let at = o.offset as usize;
                words[at] = map_const(w(inst, k));
            }
        }
        match inst.opcode {
            op::CooperativeMatrixLoadNV => {
                // [rt, id, pointer, stride, column major, memory access...]
                let cm = m.def(w(inst, 4)).map(|d| d.opcode);
                let l = match cm {
                    Some(op::ConstantTrue) => layout_const[1],
                    Some(op::ConstantFalse) => layout_const[0],
                    _ => {
                        return refuse(format!(
                            "%{rid}: the ColumnMajor operand %{} is not a constant (KHR needs a constant MemoryLayout)",
                            w(inst, 4)
                        ));
                    }
                };
                let mut ops = vec![words[1], words[2], words[3], l, words[4]];
                ops.extend_from_slice(&words[6..]);
                words = encode(op::CooperativeMatrixLoadKHR, &ops);
                report.instructions += 1;
            }
            op::CooperativeMatrixStoreNV => {
                // [pointer, object, stride, column major, memory access...]
                let l = match m.def(w(inst, 3)).map(|d| d.opcode) {
                    Some(op::ConstantTrue) => layout_const[1],
                    Some(op::ConstantFalse) => layout_const[0],
                    _ => {
                        return refuse(format!(
                            "a store of %{}: the ColumnMajor operand %{} is not a constant",
                            w(inst, 1),
                            w(inst, 3)
                        ));
                    }
                };
                let mut ops = vec![words[1], words[2], l, words[3]];
                ops.extend_from_slice(&words[5..]);
                words = encode(op::CooperativeMatrixStoreKHR, &ops);
                report.instructions += 1;
            }
            op::CooperativeMatrixMulAddNV => {
                let (a, b, c) = (w(inst, 2), w(inst, 3), w(inst, 4));
                let mut mask = 0;
                for (x, bit) in [
                    (a, cmo::MatrixASignedComponentsKHR),
                    (b, cmo::MatrixBSignedComponentsKHR),
                    (c, cmo::MatrixCSignedComponentsKHR),
                    (rid, cmo::MatrixResultSignedComponentsKHR),
                ] {
                    if signed(x) {
                        mask |= bit;
                    }
                }
                let mut ops = words[1..6].to_vec();
                if mask != 0 {
                    ops.push(mask);
                }
                words = encode(op::CooperativeMatrixMulAddKHR, &ops);
                report.instructions += 1;
            }
            op::SpecConstantOp if w(inst, 2) == op::CooperativeMatrixLengthNV as u32 => {
                // [rt, id, opcode, type]
                let t = w(inst, 3);
                let r = type_roles[&t]
                    .iter()
                    .next()
                    .copied()
                    .unwrap_or(usage::MatrixAccumulatorKHR);
                words[3] = op::CooperativeMatrixLengthKHR as u32;
                words[4] = type_id[&(t, r)];
                report.instructions += 1;
            }
            op::CooperativeMatrixLengthNV => {
                let t = w(inst, 2);
                let r = type_roles[&t]
                    .iter()
                    .next()
                    .copied()
                    .unwrap_or(usage::MatrixAccumulatorKHR);
                words = encode(
                    op::CooperativeMatrixLengthKHR,
                    &[words[1], words[2], type_id[&(t, r)]],
                );
                report.instructions += 1;
            }
            _ => {}
        }
        out.extend(words);
    }
    let mut header = m.header;
    header.bound = bound;
    let mut all = coopmat_spirv::binary::write_words(&header, &[]);
    all.extend(out);
    *module = Module::from_words(&all)?;
    Ok(report)
}

//! `qcom-to-khr`: SPV_QCOM_cooperative_matrix_conversion rewritten with SPV_KHR_cooperative_matrix,
//! Workgroup memory and subgroup built-ins, so that its shaders run on drivers without the
//! extension (NVIDIA, AMD, lavapipe).
//!
//! - OpCompositeConstructCoopMatQCOM: each invocation stores its array as line
//!   SubgroupLocalInvocationId of its subgroup's region of a Workgroup scratch array (a row for
//!   Use A and Accumulator, a column for Use B: "The array from invocation with
//!   SubgroupLocalInvocationID i goes to the i-th row ... and to the i-th column if MatrixBKHR");
//!   invocations past the matrix's rows (columns) write a spare line, since their arrays "are
//!   ignored"; a subgroup barrier; one OpCooperativeMatrixLoadKHR of the region (row-major, or
//!   column-major for B; uint32-packed arrays are stored as words and loaded through a uint32
//!   pointer, the same bytes); a barrier before the region is reused.
//! - OpCompositeExtractCoopMatQCOM: the inverse, a cooperative store, a barrier, each invocation
//!   reading its line (past the last line, the last: those invocations get "an OpUndef value").
//! - OpBitCastArrayQCOM: element by element through OpBitcast (pairs of 16-bit elements through a
//!   two-component vector: element 0 in the low bits, as OpBitcast orders them).
//! - OpExtractSubArrayQCOM: OpCompositeExtract at a constant start; at a computed one, through a
//!   Function variable holding the source array.
//!
//! Refused, with the reason: a workgroup size that is not a plain LocalSize (the scratch is
//! sized by it), arrays whose length is not a constant.

use crate::LowerError;
use coopmat_spirv::Module;
use coopmat_spirv::binary::{Instruction, decode_string, encode_string};
use coopmat_spirv::grammar::{
    built_in, capability, cooperative_matrix_layout as layout, cooperative_matrix_use as usage,
    decoration, execution_mode, memory_semantics as sem, op, scope, storage_class,
};
use coopmat_spirv::module::Section;
use coopmat_spirv::types::Type;
use std::collections::HashMap;

/// The longest array a QCOM instruction takes or makes (256 bytes of 16-bit elements).
const MAX_ARRAY_LEN: u32 = 128;

/// What `qcom_to_khr` did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QcomToKhrReport {
    /// Constructs and extracts rewritten.
    pub conversions: usize,
    /// Array bitcasts and sub-array extractions rewritten.
    pub arrays: usize,
    /// Workgroup scratch arrays added (one per element type).
    pub scratch_arrays: usize,
}

fn encode(opcode: u16, operands: &[u32]) -> Vec<u32> {
    let mut v = Vec::with_capacity(operands.len() + 1);
    v.push((((operands.len() + 1) as u32) << 16) | opcode as u32);
    v.extend_from_slice(operands);
    v
}

/// New declarations, made once and placed at the end of the global section.
struct Globals<'m> {
    m: &'m Module,
    bound: u32,
    /// Capabilities and extensions to add after the existing ones.
    header: Vec<u32>,
    annotations: Vec<u32>,
    decls: Vec<u32>,
    made: HashMap<(u16, Vec<u32>), u32>,
    /// New variables the entry points must list (SPIR-V 1.4 and later).
    interface: Vec<u32>,
}

impl Globals<'_> {
    fn fresh(&mut self) -> u32 {
        self.bound += 1;
        self.bound - 1
    }

    /// A type or constant `opcode operands` (operands after the result id): the module's own
    /// when it declares one (non-aggregate types must be unique), else a new one.
    fn declare(&mut self, opcode: u16, operands: &[u32], reuse_existing: bool) -> u32 {
        let key = (opcode, operands.to_vec());
        if let Some(&id) = self.made.get(&key) {
            return id;
        }
        if reuse_existing
            && let Some(id) = self.m.instructions.iter().enumerate().find_map(|(k, i)| {
                (i.opcode == opcode
                    && self.m.section(k) == Section::Global
                    && i.words.get(2..) == Some(operands))
                .then_some(i.result_id)
                .flatten()
            })
        {
            self.made.insert(key, id);
            return id;
        }
        let id = self.fresh();
        let mut ops = vec![id];
        ops.extend_from_slice(operands);
        self.decls.extend(encode(opcode, &ops));
        self.made.insert(key, id);
        id
    }

    /// A result-typed declaration (a constant or variable): `opcode ty id operands`.
    fn declare_typed(&mut self, opcode: u16, ty: u32, operands: &[u32]) -> u32 {
        let mut key_ops = vec![ty];
        key_ops.extend_from_slice(operands);
        let key = (opcode, key_ops);
        if let Some(&id) = self.made.get(&key) {
            return id;
        }
        let id = self.fresh();
        let mut ops = vec![ty, id];
        ops.extend_from_slice(operands);
        self.decls.extend(encode(opcode, &ops));
        self.made.insert(key, id);
        id
    }

    fn uint(&mut self) -> u32 {
        self.declare(op::TypeInt, &[32, 0], true)
    }

    fn bool_ty(&mut self) -> u32 {
        self.declare(op::TypeBool, &[], true)
    }

    fn u32_const(&mut self, v: u32) -> u32 {
        let u = self.uint();
        self.declare_typed(op::Constant, u, &[v])
    }

    fn pointer(&mut self, storage: u32, pointee: u32) -> u32 {
        self.declare(op::TypePointer, &[storage, pointee], false)
    }

    /// The module's variable decorated with built-in `b`, or a new one (a uint Input).
    fn builtin(&mut self, b: u32) -> u32 {
        let m = self.m;
        let existing = m.instructions.iter().find_map(|i| {
            let v = i.result_id?;
            (i.opcode == op::Variable
                && m.decoration_param(v, decoration::BuiltIn) == Some(Some(b)))
            .then_some(v)
        });
        if let Some(v) = existing {
            return v;
        }
        if let Some(&v) = self.made.get(&(op::Variable, vec![u32::MAX, b])) {
            return v;
        }
        let u = self.uint();
        let p = self.pointer(storage_class::Input, u);
        let v = self.fresh();
        self.decls
            .extend(encode(op::Variable, &[p, v, storage_class::Input]));
        self.annotations
            .extend(encode(op::Decorate, &[v, decoration::BuiltIn, b]));
        self.made.insert((op::Variable, vec![u32::MAX, b]), v);
        self.interface.push(v);
        v
    }
}

/// One QCOM construct or extract: the matrix and array shapes.
struct Conversion {
    matrix_ty: u32,
    rows: u32,
    cols: u32,
    use_b: bool,
    array_ty: u32,
    elem_ty: u32,
    elem_bytes: u32,
    len: u32,
}

impl Conversion {
    /// Lines the invocations of a subgroup fill: rows (A, Accumulator) or columns (B).
    fn lines(&self) -> u32 {
        if self.use_b { self.cols } else { self.rows }
    }

    /// Elements of scratch one subgroup uses: a spare line beyond the matrix's, rounded up to 16
    /// bytes so that every region starts aligned for a cooperative load or store.
    fn region(&self) -> u32 {
        let per16 = (16 / self.elem_bytes).max(1);
        ((self.lines() + 1) * self.len).div_ceil(per16) * per16
    }
}

/// Rewrites SPV_QCOM_cooperative_matrix_conversion (see the module docs).
pub fn qcom_to_khr(module: &mut Module) -> Result<QcomToKhrReport, LowerError> {
    let m = &*module;
    let refuse = |what: String| Err(LowerError::Refused(what));
    let qcom = |o: u16| {
        matches!(
            o,
            op::CompositeConstructCoopMatQCOM
                | op::CompositeExtractCoopMatQCOM
                | op::BitCastArrayQCOM
                | op::ExtractSubArrayQCOM
        )
    };
    let mut report = QcomToKhrReport::default();
    if !m.instructions.iter().any(|i| qcom(i.opcode)) {
        return Ok(report);
    }
    let word = |inst: &Instruction, k: usize| inst.word(k).unwrap_or(0);
    let constant =
        |id: u32| -> Option<u32> { m.constant_u64(id).and_then(|v| u32::try_from(v).ok()) };
    let array_of = |ty: u32| -> Result<(u32, u32, u32), LowerError> {
        match m.type_view(ty) {
            Type::Array { elem, len } => {
                let Some(n) = constant(len) else {
                    return Err(LowerError::Refused(format!(
                        "the array type %{ty} has a length that is not a constant"
                    )));
                };
                // The extension's arrays are at most 256 bytes (GLSL_QCOM_cooperative_matrix_conversion:
                // 64 32-bit or 128 16-bit elements); each element becomes instructions here.
                if n > MAX_ARRAY_LEN {
                    return Err(LowerError::Refused(format!(
                        "the array type %{ty} has {n} elements, more than the {MAX_ARRAY_LEN} the extension's arrays can have"
                    )));
                }
                let bytes = match m.type_view(elem) {
                    Type::Int { width, .. } | Type::Float { width, .. } => width / 8,
                    _ => 0,
                };
                Ok((elem, n, bytes))
            }
            _ => Err(LowerError::Refused(format!("%{ty} is not an array type"))),
        }
    };
    // The workgroup size sizes the scratch: at most ceil(W / lines) subgroups, since the spec
    // requires lines <= SubgroupSize.
    if m.instructions.iter().any(|i| {
        i.opcode == op::Decorate
            && i.word(1) == Some(decoration::BuiltIn)
            && i.word(2) == Some(built_in::WorkgroupSize)
    }) {
        return refuse(
            "the workgroup size comes from a WorkgroupSize constant, not LocalSize".into(),
        );
    }
    let Some(invocations) = m.instructions.iter().find_map(|i| {
        (i.opcode == op::ExecutionMode && i.word(1) == Some(execution_mode::LocalSize))
            .then(|| word(i, 2) as u64 * word(i, 3) as u64 * word(i, 4) as u64)
    }) else {
        return refuse(
            "the workgroup size is not given by LocalSize (the scratch memory is sized by it)"
                .into(),
        );
    };
    // The conversions, and the scratch each element type needs.
    let mut conversions: HashMap<usize, Conversion> = HashMap::new();
    let mut scratch_len: HashMap<u32, u64> = HashMap::new();
    for (i, inst) in m.instructions.iter().enumerate() {
        let (matrix_ty, array_ty) = match inst.opcode {
            op::CompositeConstructCoopMatQCOM => {
                (word(inst, 0), m.type_of(word(inst, 2)).unwrap_or(0))
            }
            op::CompositeExtractCoopMatQCOM => {
                (m.type_of(word(inst, 2)).unwrap_or(0), word(inst, 0))
            }
            _ => continue,
        };
        let Type::CoopKhr {
            rows,
            cols,
            usage: u,
            ..
        } = m.type_view(matrix_ty)
        else {
            return refuse(format!("%{matrix_ty} is not a KHR cooperative matrix type"));
        };
        let (Some(rows), Some(cols), Some(u)) = (constant(rows), constant(cols), constant(u))
        else {
            return refuse(format!(
                "the matrix type %{matrix_ty} has rows, columns or Use that are not constants"
            ));
        };
        // Rows and columns are at most the subgroup size (128) or a 256-bit line (32).
        if rows > MAX_ARRAY_LEN || cols > MAX_ARRAY_LEN {
            return refuse(format!(
                "the matrix type %{matrix_ty} is {rows}x{cols}: QCOM conversions need lines within a subgroup (at most 128)"
            ));
        }
        let (elem_ty, len, elem_bytes) = array_of(array_ty)?;
        if elem_bytes == 0 {
            return refuse(format!("the array type %{array_ty} does not hold scalars"));
        }
        let c = Conversion {
            matrix_ty,
            rows,
            cols,
            use_b: u == usage::MatrixBKHR,
            array_ty,
            elem_ty,
            elem_bytes,
            len,
        };
        let slots = invocations.div_ceil(c.lines().max(1) as u64);
        let need = slots * c.region() as u64;
        let e = scratch_len.entry(elem_ty).or_default();
        *e = (*e).max(need);
        conversions.insert(i, c);
    }
    let mut g = Globals {
        m,
        bound: m.header.bound,
        header: Vec::new(),
        annotations: Vec::new(),
        decls: Vec::new(),
        made: HashMap::new(),
        interface: Vec::new(),
    };
    // Scratch arrays: one Workgroup variable per element type.
    let mut scratch: HashMap<u32, u32> = HashMap::new();
    let mut elem_ptr: HashMap<u32, u32> = HashMap::new();
    let mut sorted: Vec<_> = scratch_len.iter().map(|(&e, &n)| (e, n)).collect();
    sorted.sort_unstable();
    for (elem, n) in sorted {
        let Ok(n) = u32::try_from(n) else {
            return refuse(format!(
                "{n} elements of scratch memory do not fit a 32-bit length"
            ));
        };
        let len = g.u32_const(n);
        let arr = g.fresh();
        g.decls.extend(encode(op::TypeArray, &[arr, elem, len]));
        let parr = g.pointer(storage_class::Workgroup, arr);
        let var = g.fresh();
        g.decls
            .extend(encode(op::Variable, &[parr, var, storage_class::Workgroup]));
        g.interface.push(var);
        scratch.insert(elem, var);
        let pe = g.pointer(storage_class::Workgroup, elem);
        elem_ptr.insert(elem, pe);
        report.scratch_arrays += 1;
    }
    let (sid_var, lane_var) = if conversions.is_empty() {
        (0, 0)
    } else {
        (
            g.builtin(built_in::SubgroupId),
            g.builtin(built_in::SubgroupLocalInvocationId),
        )
    };
    // Function variables for sub-arrays at computed starts, placed after the first label of
    // their function: label index -> (pointer type, variable).
    let mut function_vars: HashMap<usize, Vec<(u32, u32)>> = HashMap::new();
    let mut subarray_var: HashMap<usize, u32> = HashMap::new();
    for (i, inst) in m.instructions.iter().enumerate() {
        if inst.opcode != op::ExtractSubArrayQCOM || constant(word(inst, 3)).is_some() {
            continue;
        }
        let src_ty = m.type_of(word(inst, 2)).unwrap_or(0);
        let Some(f) = m.functions().iter().find(|f| f.def < i && i < f.end) else {
            return refuse(format!("%{} is outside a function", word(inst, 1)));
        };
        let Some(first) = f.blocks.first() else {
            return refuse("a sub-array extraction in a function without blocks".into());
        };
        let p = g.pointer(storage_class::Function, src_ty);
        let v = g.fresh();
        function_vars.entry(first.label).or_default().push((p, v));
        subarray_var.insert(i, v);
    }
    // Constants every rewrite uses.
    let (u, b) = (g.uint(), g.bool_ty());
    let subgroup = g.u32_const(scope::Subgroup);
    let semantics = g.u32_const(sem::AcquireRelease | sem::WorkgroupMemory);
    let row_major = g.u32_const(layout::RowMajorKHR);
    let col_major = g.u32_const(layout::ColumnMajorKHR);
    let barrier = encode(op::ControlBarrier, &[subgroup, subgroup, semantics]);

    // The body rewrites, by instruction index.
    let mut body: HashMap<usize, Vec<u32>> = HashMap::new();
    for (i, inst) in m.instructions.iter().enumerate() {
        if !qcom(inst.opcode) {
            continue;
        }
        let (rt, rid) = (word(inst, 0), word(inst, 1));
        let mut out = Vec::new();
        match inst.opcode {
            op::CompositeConstructCoopMatQCOM | op::CompositeExtractCoopMatQCOM => {
                let c = &conversions[&i];
                let construct = inst.opcode == op::CompositeConstructCoopMatQCOM;
                let (var, pe) = (scratch[&c.elem_ty], elem_ptr[&c.elem_ty]);
                let region = g.u32_const(c.region());
                let len = g.u32_const(c.len);
                let lines = g.u32_const(c.lines());
                let last_line = g.u32_const(c.lines().saturating_sub(1));
                let (sid, lane, base) = (g.fresh(), g.fresh(), g.fresh());
                out.extend(encode(op::Load, &[u, sid, sid_var]));
                out.extend(encode(op::Load, &[u, lane, lane_var]));
                out.extend(encode(op::IMul, &[u, base, sid, region]));
                // The invocation's line: its lane, or the spare (construct) / last (extract)
                // line past the matrix's.
                let (inside, line, line_start, start) =
                    (g.fresh(), g.fresh(), g.fresh(), g.fresh());
                out.extend(encode(op::ULessThan, &[b, inside, lane, lines]));
                let beyond = if construct { lines } else { last_line };
                out.extend(encode(op::Select, &[u, line, inside, lane, beyond]));
                out.extend(encode(op::IMul, &[u, line_start, line, len]));
                out.extend(encode(op::IAdd, &[u, start, base, line_start]));
                let region_ptr = g.fresh();
                out.extend(encode(op::AccessChain, &[pe, region_ptr, var, base]));
                let (lay, stride) = if c.use_b {
                    (col_major, len)
                } else {
                    (row_major, len)
                };
                if construct {
                    let src = word(inst, 2);
                    for k in 0..c.len {
                        let (e, at, p) = (g.fresh(), g.fresh(), g.fresh());
                        let kc = g.u32_const(k);
                        out.extend(encode(op::CompositeExtract, &[c.elem_ty, e, src, k]));
                        out.extend(encode(op::IAdd, &[u, at, start, kc]));
                        out.extend(encode(op::AccessChain, &[pe, p, var, at]));
                        out.extend(encode(op::Store, &[p, e]));
                    }
                    out.extend(&barrier);
                    out.extend(encode(
                        op::CooperativeMatrixLoadKHR,
                        &[c.matrix_ty, rid, region_ptr, lay, stride],
                    ));
                    out.extend(&barrier);
                } else {
                    let src = word(inst, 2);
                    out.extend(encode(
                        op::CooperativeMatrixStoreKHR,
                        &[region_ptr, src, lay, stride],
                    ));
                    out.extend(&barrier);
                    let mut elems = Vec::new();
                    for k in 0..c.len {
                        let (e, at, p) = (g.fresh(), g.fresh(), g.fresh());
                        let kc = g.u32_const(k);
                        out.extend(encode(op::IAdd, &[u, at, start, kc]));
                        out.extend(encode(op::AccessChain, &[pe, p, var, at]));
                        out.extend(encode(op::Load, &[c.elem_ty, e, p]));
                        elems.push(e);
                    }
                    let mut ops = vec![c.array_ty, rid];
                    ops.extend(elems);
                    out.extend(encode(op::CompositeConstruct, &ops));
                    out.extend(&barrier);
                }
                report.conversions += 1;
            }
            op::BitCastArrayQCOM => {
                let src = word(inst, 2);
                let (se, sn, sb) = array_of(m.type_of(src).unwrap_or(0))?;
                let (de, dn, db) = array_of(rt)?;
                let mut elems = Vec::new();
                let extract = |out: &mut Vec<u32>, g: &mut Globals, k: u32| {
                    let e = g.fresh();
                    out.extend(encode(op::CompositeExtract, &[se, e, src, k]));
                    e
                };
                if sb == db {
                    for k in 0..sn {
                        let e = extract(&mut out, &mut g, k);
                        if se == de {
                            elems.push(e);
                        } else {
                            let x = g.fresh();
                            out.extend(encode(op::Bitcast, &[de, x, e]));
                            elems.push(x);
                        }
                    }
                } else if sb == 4 && db == 2 {
                    // A 32-bit word into two 16-bit elements, element 0 in the low bits.
                    let v2 = g.declare(op::TypeVector, &[de, 2], true);
                    for k in 0..sn {
                        let e = extract(&mut out, &mut g, k);
                        let (v, lo, hi) = (g.fresh(), g.fresh(), g.fresh());
                        out.extend(encode(op::Bitcast, &[v2, v, e]));
                        out.extend(encode(op::CompositeExtract, &[de, lo, v, 0]));
                        out.extend(encode(op::CompositeExtract, &[de, hi, v, 1]));
                        elems.extend([lo, hi]);
                    }
                } else if sb == 2 && db == 4 {
                    let v2 = g.declare(op::TypeVector, &[se, 2], true);
                    for k in 0..sn / 2 {
                        let lo = extract(&mut out, &mut g, 2 * k);
                        let hi = extract(&mut out, &mut g, 2 * k + 1);
                        let (v, x) = (g.fresh(), g.fresh());
                        out.extend(encode(op::CompositeConstruct, &[v2, v, lo, hi]));
                        out.extend(encode(op::Bitcast, &[de, x, v]));
                        elems.push(x);
                    }
                } else {
                    return refuse(format!(
                        "%{rid}: an array bitcast between {}-byte and {}-byte elements",
                        sb, db
                    ));
                }
                if elems.len() != dn as usize {
                    return refuse(format!(
                        "%{rid}: {} elements do not make the {dn} of the result",
                        elems.len()
                    ));
                }
                let mut ops = vec![rt, rid];
                ops.extend(elems);
                out.extend(encode(op::CompositeConstruct, &ops));
                report.arrays += 1;
            }
            op::ExtractSubArrayQCOM => {
                let (src, start) = (word(inst, 2), word(inst, 3));
                let (de, dn, _) = array_of(rt)?;
                let mut elems = Vec::new();
                if let Some(s) = constant(start) {
                    for k in 0..dn {
                        let e = g.fresh();
                        out.extend(encode(op::CompositeExtract, &[de, e, src, s + k]));
                        elems.push(e);
                    }
                } else {
                    let var = subarray_var[&i];
                    let pe = g.pointer(storage_class::Function, de);
                    out.extend(encode(op::Store, &[var, src]));
                    for k in 0..dn {
                        let (at, p, e) = (g.fresh(), g.fresh(), g.fresh());
                        let kc = g.u32_const(k);
                        out.extend(encode(op::IAdd, &[u, at, start, kc]));
                        out.extend(encode(op::AccessChain, &[pe, p, var, at]));
                        out.extend(encode(op::Load, &[de, e, p]));
                        elems.push(e);
                    }
                }
                let mut ops = vec![rt, rid];
                ops.extend(elems);
                out.extend(encode(op::CompositeConstruct, &ops));
                report.arrays += 1;
            }
            _ => {}
        }
        body.insert(i, out);
    }
    // Capabilities and extensions: the QCOM ones go; KHR cooperative matrices (which the QCOM
    // capability declared implicitly) and the subgroup built-ins' capability come in.
    let has_cap = |c: u32| {
        m.instructions
            .iter()
            .any(|i| i.opcode == op::Capability && i.word(0) == Some(c))
    };
    let has_ext = |e: &str| m.extensions().any(|x| x == e);
    for c in [
        capability::CooperativeMatrixKHR,
        capability::GroupNonUniform,
    ] {
        if !has_cap(c) && (c != capability::GroupNonUniform || !conversions.is_empty()) {
            g.header.extend(encode(op::Capability, &[c]));
        }
    }
    let mut ext_words = Vec::new();
    if !has_ext("SPV_KHR_cooperative_matrix") {
        let mut ops = Vec::new();
        encode_string("SPV_KHR_cooperative_matrix", &mut ops);
        ext_words = encode(op::Extension, &ops);
    }
    let new_version_interface = m.header.version >= 0x0001_0400;
    // Emit.
    let mut out = Vec::new();
    let mut header_done = false;
    let mut annotations_done = false;
    let mut decls_done = false;
    for (i, inst) in m.instructions.iter().enumerate() {
        let section = m.section(i);
        if !header_done && !matches!(section, Section::Capability) {
            out.extend(&g.header);
            header_done = true;
        }
        if inst.opcode == op::Capability
            && inst.word(0) == Some(capability::CooperativeMatrixConversionQCOM)
        {
            continue;
        }
        if inst.opcode == op::Extension {
            let name = decode_string(&inst.words[1..]).0;
            if name == "SPV_QCOM_cooperative_matrix_conversion" {
                if !ext_words.is_empty() {
                    out.append(&mut ext_words);
                }
                continue;
            }
        }
        if !annotations_done && section > Section::Annotation {
            out.extend(&g.annotations);
            annotations_done = true;
        }
        if !decls_done && section == Section::Function {
            out.extend(&g.decls);
            decls_done = true;
        }
        if let Some(words) = body.get(&i) {
            out.extend(words);
            continue;
        }
        if inst.opcode == op::EntryPoint && new_version_interface && !g.interface.is_empty() {
            let mut words = inst.words.clone();
            words.extend(&g.interface);
            words[0] = ((words.len() as u32) << 16) | op::EntryPoint as u32;
            out.extend(words);
            continue;
        }
        out.extend(&inst.words);
        if let Some(vars) = function_vars.get(&i) {
            for &(p, v) in vars {
                out.extend(encode(op::Variable, &[p, v, storage_class::Function]));
            }
        }
    }
    if !ext_words.is_empty() {
        return refuse(
            "no OpExtension \"SPV_QCOM_cooperative_matrix_conversion\" to replace".into(),
        );
    }
    let mut header = m.header;
    header.bound = g.bound;
    let mut all = coopmat_spirv::binary::write_words(&header, &[]);
    all.extend(out);
    *module = Module::from_words(&all)?;
    Ok(report)
}

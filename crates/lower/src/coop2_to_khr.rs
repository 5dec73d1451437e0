//! `coop2-to-khr`: tensor loads and stores of SPV_NV_cooperative_matrix2 (with
//! SPV_NV_tensor_addressing) rewritten as SPV_KHR_cooperative_matrix loads and stores with
//! computed pointers and strides, so that such a shader runs on a driver with only the KHR
//! extension.
//!
//! Without a view, block sizes of 1 and clamp mode Undefined, the tensor addressing of element
//! (row, col) of an M x N matrix (SPV_NV_cooperative_matrix2, "Tensor Layout and View",
//! `matrixCoordToTensorElement`) is
//! `(offset0 + (row*N+col)/span1 % span0) * stride0 + (offset1 + (row*N+col) % span1) * stride1`,
//! which is a KHR row-major load of stride `stride0` at `Pointer + offset0*stride0 + offset1`
//! when `stride1 = 1`, `span1 = N` and `span0 >= M` (column-major with stride `stride1` when
//! `stride0 = 1`; one dimension: row-major of stride N when `stride0 = 1` and `span0 >= M*N`).
//! Out-of-range elements are undefined behaviour under clamp mode Undefined, so the dimensions
//! need no check.
//!
//! The layout objects become structs of their strides and offsets (the only fields the
//! addressing still needs), so they flow through Function variables, phis and selects as
//! before; `OpTensorLayout*` instructions become struct arithmetic. The spans and strides that
//! decide the orientation are proven constant by an abstract interpretation over every value
//! and Function variable of a layout type (the join of everything that can reach the load).
//!
//! Refused, naming the instruction and why: tensor views (permutation and clipping),
//! DecodeFunc, block sizes other than constant 1, clamp modes other than Undefined (per-element
//! bounds checks), layouts of more than two dimensions, spans and strides not provably of the
//! shapes above, Workgroup-scope matrices, reductions, per-element operations, transposes and
//! conversions between Uses, and layouts passed through function calls.

use crate::LowerError;
use coopmat_spirv::Module;
use coopmat_spirv::binary::{Instruction, decode_string, encode_string};
use coopmat_spirv::grammar::{
    capability, cooperative_matrix_layout as layout, memory_access, op, scope, tensor_clamp_mode,
};
use coopmat_spirv::module::Section;
use coopmat_spirv::types::Type;
use std::collections::{BTreeMap, HashMap};

/// What `coop2_to_khr` did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coop2ToKhrReport {
    /// Tensor layout types turned into structs.
    pub layout_types: usize,
    /// Tensor loads rewritten as KHR loads.
    pub loads: usize,
    /// Tensor stores rewritten as KHR stores.
    pub stores: usize,
    /// `OpCreateTensorLayoutNV` and `OpTensorLayout*` instructions rewritten.
    pub layout_ops: usize,
}

fn encode(opcode: u16, operands: &[u32]) -> Vec<u32> {
    let mut v = Vec::with_capacity(operands.len() + 1);
    v.push((((operands.len() + 1) as u32) << 16) | opcode as u32);
    v.extend_from_slice(operands);
    v
}

/// What is known statically about one stride or span of a layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Known {
    /// Nothing reaches yet.
    Nothing,
    /// An OpConstant's value.
    Constant(u64),
    /// A specialization constant's id (one value per pipeline).
    Spec(u32),
    /// Anything.
    Any,
}

impl Known {
    fn join(self, other: Known) -> Known {
        match (self, other) {
            (Known::Nothing, x) | (x, Known::Nothing) => x,
            (a, b) if a == b => a,
            _ => Known::Any,
        }
    }
}

/// The statically known strides and spans of a layout value (dimensions 0 and 1; a
/// one-dimensional layout uses entry 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct KnownLayout {
    stride: [Known; 2],
    span: [Known; 2],
}

impl KnownLayout {
    const NOTHING: KnownLayout = KnownLayout {
        stride: [Known::Nothing; 2],
        span: [Known::Nothing; 2],
    };
    fn join(self, o: KnownLayout) -> KnownLayout {
        KnownLayout {
            stride: [
                self.stride[0].join(o.stride[0]),
                self.stride[1].join(o.stride[1]),
            ],
            span: [self.span[0].join(o.span[0]), self.span[1].join(o.span[1])],
        }
    }
}

/// A tensor layout type: its dimension count and the integer type of its struct fields.
#[derive(Clone, Copy)]
struct LayoutType {
    dims: usize,
    field: u32,
}

/// How a tensor access becomes a KHR one.
#[derive(Clone, Copy)]
enum Orientation {
    /// Row-major, stride from the layout's `stride0`.
    RowMajor,
    /// Column-major, stride from the layout's `stride1`.
    ColumnMajor,
    /// One dimension: row-major with stride N.
    Flat,
}

/// Layout state of every variable of a layout type at one program point.
type VariableState = HashMap<u32, KnownLayout>;

fn join_state(into: &mut VariableState, from: &VariableState) -> bool {
    let mut changed = false;
    for (&v, &l) in from {
        let slot = into.entry(v).or_insert(KnownLayout::NOTHING);
        let joined = slot.join(l);
        if joined != *slot {
            *slot = joined;
            changed = true;
        }
    }
    changed
}

/// The abstract interpretation of layout values (see [`coop2_to_khr`]).
struct Analysis<'a> {
    m: &'a Module,
    layouts: &'a BTreeMap<u32, LayoutType>,
    layout_ptrs: &'a BTreeMap<u32, u32>,
    known: &'a dyn Fn(u32) -> Known,
}

impl Analysis<'_> {
    /// What reaches each layout value, and each variable (the join over the program); on an
    /// instruction making a layout in a way not lowered, its result id and opcode.
    #[allow(clippy::type_complexity)]
    fn run(&self) -> Result<(HashMap<u32, KnownLayout>, VariableState), (u32, u16)> {
        let m = self.m;
        let mut values: HashMap<u32, KnownLayout> = HashMap::new();
        // Variables outside functions: the join of their initializer and every store.
        let mut globals: VariableState = HashMap::new();
        let mut all_variables: VariableState = HashMap::new();
        let mut block_in: HashMap<u32, VariableState> = HashMap::new();
        loop {
            let mut changed = false;
            for (i, inst) in m.instructions.iter().enumerate() {
                if m.section(i) != Section::Function
                    && inst.opcode == op::Variable
                    && self.layout_ptrs.contains_key(&inst.word(0).unwrap_or(0))
                {
                    let init = self.initializer(inst, &values);
                    changed |= join_state(
                        &mut globals,
                        &HashMap::from([(inst.word(1).unwrap_or(0), init)]),
                    );
                }
            }
            for f in m.functions() {
                for block in &f.blocks {
                    let mut state = block_in.get(&block.id).cloned().unwrap_or_default();
                    for i in block.body.clone() {
                        let inst = &m.instructions[i];
                        changed |= self.step(inst, &mut state, &mut globals, &mut values)?;
                    }
                    changed |= join_state(&mut all_variables, &state);
                    let Some(last) = block.body.clone().last() else {
                        continue;
                    };
                    for succ in successors(&m.instructions[last]) {
                        changed |= join_state(block_in.entry(succ).or_default(), &state);
                    }
                }
            }
            if !changed {
                join_state(&mut all_variables, &globals);
                return Ok((values, all_variables));
            }
        }
    }

    fn initializer(&self, var: &Instruction, values: &HashMap<u32, KnownLayout>) -> KnownLayout {
        (var.operands.len() > 3)
            .then(|| values.get(&var.word(3).unwrap_or(0)).copied())
            .flatten()
            .unwrap_or(KnownLayout::NOTHING)
    }

    /// One instruction's effect; whether a value or a non-Function variable grew.
    fn step(
        &self,
        inst: &Instruction,
        state: &mut VariableState,
        globals: &mut VariableState,
        values: &mut HashMap<u32, KnownLayout>,
    ) -> Result<bool, (u32, u16)> {
        let word = |k: usize| inst.word(k).unwrap_or(0);
        let is_layout_type = |t: u32| self.layouts.contains_key(&t);
        let input = |k: usize| {
            values
                .get(&word(k))
                .copied()
                .unwrap_or(KnownLayout::NOTHING)
        };
        let rid = inst.result_id.unwrap_or(0);
        let new = match inst.opcode {
            op::Variable if self.layout_ptrs.contains_key(&word(0)) => {
                state.insert(rid, self.initializer(inst, values));
                return Ok(false);
            }
            op::Store if self.m.type_of(word(1)).is_some_and(is_layout_type) => {
                let (ptr, stored) = (word(0), input(1));
                if let Some(g) = globals.get_mut(&ptr) {
                    let joined = g.join(stored);
                    let grew = joined != *g;
                    *g = joined;
                    return Ok(grew);
                }
                state.insert(ptr, stored);
                return Ok(false);
            }
            _ if !inst.result_type.is_some_and(is_layout_type) => return Ok(false),
            op::Load => {
                let ptr = word(2);
                globals
                    .get(&ptr)
                    .or_else(|| state.get(&ptr))
                    .copied()
                    .unwrap_or(KnownLayout::NOTHING)
            }
            op::CreateTensorLayoutNV => KnownLayout {
                stride: [Known::Constant(0); 2],
                span: [Known::Constant(0); 2],
            },
            op::TensorLayoutSetDimensionNV => {
                let n = self.layouts[&word(0)].dims;
                let d: Vec<Known> = (0..n).map(|k| (self.known)(word(3 + k))).collect();
                let mut l = input(2);
                // stride[last] = 1, stride[i] = stride[i+1] * dimension[i+1] (block size 1).
                if n == 2 {
                    l.stride = [d[1], Known::Constant(1)];
                    l.span = [d[0], d[1]];
                } else {
                    l.stride[0] = Known::Constant(1);
                    l.span[0] = d[0];
                }
                l
            }
            op::TensorLayoutSetStrideNV => {
                let n = self.layouts[&word(0)].dims;
                let mut l = input(2);
                for k in 0..n {
                    l.stride[k] = (self.known)(word(3 + k));
                }
                l
            }
            op::TensorLayoutSliceNV => {
                let n = self.layouts[&word(0)].dims;
                let mut l = input(2);
                for k in 0..n {
                    l.span[k] = (self.known)(word(4 + 2 * k));
                }
                l
            }
            op::TensorLayoutSetBlockSizeNV | op::TensorLayoutSetClampValueNV | op::CopyObject => {
                input(2)
            }
            op::Phi => (2..inst.operands.len())
                .step_by(2)
                .map(input)
                .fold(KnownLayout::NOTHING, KnownLayout::join),
            op::Select => input(3).join(input(4)),
            op::Undef => KnownLayout {
                stride: [Known::Any; 2],
                span: [Known::Any; 2],
            },
            other => return Err((rid, other)),
        };
        let v = values.entry(rid).or_insert(KnownLayout::NOTHING);
        let joined = v.join(new);
        let grew = joined != *v;
        *v = joined;
        Ok(grew)
    }
}

/// The labels a block's terminator may branch to.
fn successors(terminator: &Instruction) -> Vec<u32> {
    let word = |k: usize| terminator.word(k).unwrap_or(0);
    match terminator.opcode {
        op::Branch => vec![word(0)],
        op::BranchConditional => vec![word(1), word(2)],
        op::Switch => std::iter::once(word(1))
            .chain((3..terminator.operands.len()).step_by(2).map(word))
            .collect(),
        _ => Vec::new(),
    }
}

/// One tensor access to rewrite.
#[derive(Clone, Copy)]
struct Access {
    orientation: Orientation,
    /// The layout value it reads.
    layout: u32,
    /// The layout's field type.
    field: u32,
    /// The matrix's Columns id.
    cols: u32,
    /// Index of the access chain that makes its pointer.
    chain: usize,
}

/// New ids, and constants declared once before the first function.
struct Emitter {
    bound: u32,
    decls: Vec<u32>,
    constants: HashMap<(u32, u32), u32>,
}

impl Emitter {
    fn fresh(&mut self) -> u32 {
        self.bound += 1;
        self.bound - 1
    }

    fn constant(&mut self, ty: u32, value: u32) -> u32 {
        if let Some(&id) = self.constants.get(&(ty, value)) {
            return id;
        }
        let id = self.fresh();
        self.decls.extend(encode(op::Constant, &[ty, id, value]));
        self.constants.insert((ty, value), id);
        id
    }

    /// `id` as type `ty` (OpCompositeConstruct wants the members' exact types): itself, or a
    /// bitcast between 32-bit integers of the other signedness.
    fn as_type(&mut self, out: &mut Vec<u32>, m: &Module, ty: u32, id: u32) -> u32 {
        if m.type_of(id) == Some(ty) {
            return id;
        }
        let x = self.fresh();
        out.extend(encode(op::Bitcast, &[ty, x, id]));
        x
    }

    fn extract(&mut self, out: &mut Vec<u32>, ty: u32, composite: u32, member: usize) -> u32 {
        let x = self.fresh();
        out.extend(encode(
            op::CompositeExtract,
            &[ty, x, composite, member as u32],
        ));
        x
    }
}

/// Rewrites cooperative-matrix-2 tensor loads and stores as KHR ones (see the module docs).
pub fn coop2_to_khr(module: &mut Module) -> Result<Coop2ToKhrReport, LowerError> {
    let m = &*module;
    let refuse = |what: String| Err(LowerError::Refused(what));
    let mut report = Coop2ToKhrReport::default();
    let word = |inst: &Instruction, k: usize| inst.word(k).unwrap_or(0);
    let known = |id: u32| -> Known {
        match m.def(id).map(|d| d.opcode) {
            Some(op::Constant) => m.constant_u64(id).map_or(Known::Any, Known::Constant),
            Some(
                op::SpecConstant
                | op::SpecConstantOp
                | op::SpecConstantTrue
                | op::SpecConstantFalse
                | op::SpecConstantComposite,
            ) => Known::Spec(id),
            _ => Known::Any,
        }
    };
    let name = |id: u32| match m.name(id) {
        Some(n) if !n.is_empty() => format!("%{id} ({n})"),
        _ => format!("%{id}"),
    };

    // Types: tensor layouts (refused when viewed, clamped or of more than two dimensions),
    // Workgroup-scope matrices, and every type that would carry a layout through a call.
    let mut layouts: BTreeMap<u32, LayoutType> = BTreeMap::new();
    let mut layout_ptrs: BTreeMap<u32, u32> = BTreeMap::new();
    for inst in &m.instructions {
        let rid = inst.result_id.unwrap_or(0);
        match inst.opcode {
            op::TypeTensorViewNV => {
                return refuse(format!(
                    "tensor view type {}: a view permutes and clips the matrix, which a KHR load cannot express",
                    name(rid)
                ));
            }
            op::TypeTensorLayoutNV => {
                let (dim_id, mode_id) = (word(inst, 1), word(inst, 2));
                let dims = m.constant_u64(dim_id).unwrap_or(0);
                let mode = m.constant_u64(mode_id);
                if mode != Some(tensor_clamp_mode::Undefined as u64) {
                    return refuse(format!(
                        "tensor layout type {} has clamp mode {}: out-of-range elements would need per-element bounds checks, which a KHR load cannot express (only Undefined is lowered)",
                        name(rid),
                        match mode.map(|v| v as u32) {
                            Some(tensor_clamp_mode::Constant) => "Constant".to_string(),
                            Some(tensor_clamp_mode::ClampToEdge) => "ClampToEdge".into(),
                            Some(tensor_clamp_mode::Repeat) => "Repeat".into(),
                            Some(tensor_clamp_mode::RepeatMirrored) => "RepeatMirrored".into(),
                            Some(v) => v.to_string(),
                            None => "(not a constant)".into(),
                        }
                    ));
                }
                if !(1..=2).contains(&dims) {
                    return refuse(format!(
                        "tensor layout type {} has {dims} dimensions (only 1 and 2 are lowered)",
                        name(rid)
                    ));
                }
                let field = m.type_of(dim_id).unwrap_or(0);
                if !matches!(m.type_view(field), Type::Int { width: 32, .. }) {
                    return refuse(format!(
                        "the dimension count of tensor layout type {} is not a 32-bit integer",
                        name(rid)
                    ));
                }
                layouts.insert(
                    rid,
                    LayoutType {
                        dims: dims as usize,
                        field,
                    },
                );
            }
            op::TypePointer if layouts.contains_key(&word(inst, 2)) => {
                layout_ptrs.insert(rid, word(inst, 2));
            }
            op::TypeCooperativeMatrixKHR
                if m.constant_u64(word(inst, 2)) != Some(scope::Subgroup as u64)
                    || m.def(word(inst, 2)).map(|d| d.opcode) != Some(op::Constant) =>
            {
                return refuse(format!(
                    "cooperative matrix type {} is not of Subgroup scope (Workgroup-scope matrices are SPV_NV_cooperative_matrix2 only)",
                    name(rid)
                ));
            }
            op::TypeFunction | op::TypeStruct | op::TypeArray | op::TypeRuntimeArray => {
                let carried = (1..inst.operands.len())
                    .map(|k| word(inst, k))
                    .find(|t| layouts.contains_key(t) || layout_ptrs.contains_key(t));
                if let Some(t) = carried {
                    let what = if inst.opcode == op::TypeFunction {
                        "a function parameter or result"
                    } else {
                        "a struct or array member"
                    };
                    return refuse(format!(
                        "the tensor layout type %{t} is {what} ({}): only values and Function variables are lowered",
                        name(rid)
                    ));
                }
            }
            _ => {}
        }
    }

    // Instructions with no KHR form, and tensor-addressing operands that have none.
    for inst in &m.instructions {
        let rid = inst.result_id.unwrap_or(0);
        let what = match inst.opcode {
            op::CooperativeMatrixReduceNV => Some("a reduction (OpCooperativeMatrixReduceNV)"),
            op::CooperativeMatrixPerElementOpNV => {
                Some("a per-element operation (OpCooperativeMatrixPerElementOpNV)")
            }
            op::CooperativeMatrixTransposeNV => {
                Some("a transpose (OpCooperativeMatrixTransposeNV)")
            }
            op::CooperativeMatrixConvertNV => {
                Some("a conversion between Uses (OpCooperativeMatrixConvertNV)")
            }
            op::FConvert
            | op::SConvert
            | op::UConvert
            | op::ConvertFToS
            | op::ConvertFToU
            | op::ConvertSToF
            | op::ConvertUToF
            | op::Bitcast => {
                let use_of = |ty: u32| match m.type_view(ty) {
                    Type::CoopKhr { usage, .. } => m.constant_u64(usage),
                    _ => None,
                };
                let from = m.type_of(word(inst, 2)).and_then(use_of);
                let to = use_of(word(inst, 0));
                (from.is_some() && to.is_some() && from != to)
                    .then_some("a conversion between matrix Uses")
            }
            op::TensorLayoutSetBlockSizeNV => (2..inst.operands.len())
                .any(|k| known(word(inst, k)) != Known::Constant(1))
                .then_some("a block size other than constant 1 (blocks address whole blocks, not a strided matrix)"),
            op::CooperativeMatrixLoadTensorNV | op::CooperativeMatrixStoreTensorNV => {
                match tensor_operands(inst) {
                    Some((_, 0)) => None,
                    Some(_) => Some(
                        "a tensor access with a TensorView or DecodeFunc (a view permutes and clips, a decode function computes each element)",
                    ),
                    None => Some("a malformed tensor access"),
                }
            }
            _ => None,
        };
        if let Some(what) = what {
            let at = if rid != 0 {
                format!(" (result {})", name(rid))
            } else {
                String::new()
            };
            return refuse(format!("{what}{at} has no SPV_KHR_cooperative_matrix form"));
        }
    }

    // What reaches each layout value and variable, to a fixed point: Function variables
    // flow-sensitively (a store replaces what the variable held: their pointers are only
    // loaded and stored, checked below), other variables as the join of all their stores.
    let analysis = Analysis {
        m,
        layouts: &layouts,
        layout_ptrs: &layout_ptrs,
        known: &known,
    };
    let (values, variables) = analysis.run().map_err(|(id, opcode)| {
        LowerError::Refused(format!(
            "the tensor layout {} comes from {}, which is not lowered",
            name(id),
            opcode_name(opcode)
        ))
    })?;

    // Every use of a layout value or variable is one the rewrite knows.
    let du = m.def_use();
    for id in values.keys().chain(variables.keys()) {
        for &(i, operand) in du.uses(*id) {
            let user = &m.instructions[i];
            let ok = match user.opcode {
                op::Store => operand <= 1,
                op::Load
                | op::Phi
                | op::Select
                | op::CopyObject
                | op::TensorLayoutSetDimensionNV
                | op::TensorLayoutSetStrideNV
                | op::TensorLayoutSliceNV
                | op::TensorLayoutSetBlockSizeNV
                | op::TensorLayoutSetClampValueNV
                | op::Name => true,
                op::CooperativeMatrixLoadTensorNV => operand == 4,
                op::CooperativeMatrixStoreTensorNV => operand == 2,
                _ => false,
            };
            if !ok {
                return refuse(format!(
                    "the tensor layout {} is used by {} (instruction {i}), which is not lowered",
                    name(*id),
                    opcode_name(user.opcode)
                ));
            }
        }
    }

    // Each tensor access: its orientation, proven from what reaches its layout.
    let mut accesses: HashMap<usize, Access> = HashMap::new();
    for (i, inst) in m.instructions.iter().enumerate() {
        let (matrix_ty, pointer, layout_id) = match inst.opcode {
            op::CooperativeMatrixLoadTensorNV => (word(inst, 0), word(inst, 2), word(inst, 4)),
            op::CooperativeMatrixStoreTensorNV => (
                m.type_of(word(inst, 1)).unwrap_or(0),
                word(inst, 0),
                word(inst, 2),
            ),
            _ => continue,
        };
        let at = format!("the tensor access at instruction {i}");
        let Type::CoopKhr {
            comp, rows, cols, ..
        } = m.type_view(matrix_ty)
        else {
            return refuse(format!(
                "{at}: %{matrix_ty} is not a KHR cooperative matrix type"
            ));
        };
        let Some(lt) = m.type_of(layout_id).and_then(|t| layouts.get(&t)) else {
            return refuse(format!("{at}: %{layout_id} is not a tensor layout"));
        };
        let l = values
            .get(&layout_id)
            .copied()
            .unwrap_or(KnownLayout::NOTHING);
        let (rows_k, cols_k) = (known(rows), known(cols));
        let equal = |a: Known, b: Known| a == b && matches!(a, Known::Constant(_) | Known::Spec(_));
        let at_least = |a: Known, b: Known| match (a, b) {
            (Known::Constant(x), Known::Constant(y)) => x >= y,
            _ => equal(a, b),
        };
        let describe = |k: Known| match k {
            Known::Constant(v) => v.to_string(),
            Known::Spec(id) => format!("spec constant %{id}"),
            Known::Nothing => "nothing (no layout value reaches)".into(),
            Known::Any => "not a constant".into(),
        };
        let o = if lt.dims == 2 {
            if !equal(l.span[1], cols_k) || !at_least(l.span[0], rows_k) {
                return refuse(format!(
                    "{at}: the layout's spans ({}, {}) are not provably (>= the matrix's {} rows, the matrix's {} columns), so the matrix does not map to whole rows of the tensor",
                    describe(l.span[0]),
                    describe(l.span[1]),
                    describe(rows_k),
                    describe(cols_k)
                ));
            }
            if l.stride[1] == Known::Constant(1) {
                Orientation::RowMajor
            } else if l.stride[0] == Known::Constant(1) {
                Orientation::ColumnMajor
            } else {
                return refuse(format!(
                    "{at}: neither stride of the layout is provably 1 (strides {}, {}), so elements of a row or column are not contiguous",
                    describe(l.stride[0]),
                    describe(l.stride[1])
                ));
            }
        } else {
            let elements = match (rows_k, cols_k) {
                (Known::Constant(r), Known::Constant(c)) => Known::Constant(r * c),
                _ => Known::Any,
            };
            if l.stride[0] != Known::Constant(1) || !at_least(l.span[0], elements) {
                return refuse(format!(
                    "{at}: a one-dimensional layout needs stride 1 and a span of at least rows*columns (stride {}, span {})",
                    describe(l.stride[0]),
                    describe(l.span[0])
                ));
            }
            Orientation::Flat
        };
        // The pointer: an access chain whose last index selects an element of the component
        // type, so the computed offset moves it along the same array.
        let chain = m.def_index(pointer).filter(|&c| {
            let d = &m.instructions[c];
            matches!(d.opcode, op::AccessChain | op::InBoundsAccessChain) && d.operands.len() > 3
        });
        let Some(chain) = chain else {
            return refuse(format!(
                "{at}: the pointer %{pointer} is not an access chain into an array"
            ));
        };
        let pointee = m
            .type_of(pointer)
            .and_then(|p| m.def(p))
            .map(|p| word(p, 2))
            .unwrap_or(0);
        if pointee != comp {
            return refuse(format!(
                "{at}: the pointer %{pointer} points to %{pointee}, not to the matrix's component type %{comp} (the tensor is indexed in components)"
            ));
        }
        accesses.insert(
            i,
            Access {
                orientation: o,
                layout: layout_id,
                field: lt.field,
                cols,
                chain,
            },
        );
    }

    // Emit.
    let mut e = Emitter {
        bound: m.header.bound,
        decls: Vec::new(),
        constants: HashMap::new(),
    };
    let mut nulls: HashMap<u32, u32> = HashMap::new();
    for &t in layouts.keys() {
        nulls.insert(t, e.fresh());
    }
    let mut body: HashMap<usize, Vec<u32>> = HashMap::new();
    for (i, inst) in m.instructions.iter().enumerate() {
        let rid = inst.result_id.unwrap_or(0);
        let layout_of = |ty: u32| -> Result<LayoutType, LowerError> {
            layouts.get(&ty).copied().ok_or_else(|| {
                LowerError::Refused(format!(
                    "instruction {i}: %{ty} is not a tensor layout type"
                ))
            })
        };
        let mut out = Vec::new();
        match inst.opcode {
            op::TypeTensorLayoutNV => {
                let lt = layout_of(rid)?;
                let mut ops = vec![rid];
                ops.extend(std::iter::repeat_n(lt.field, 2 * lt.dims));
                out.extend(encode(op::TypeStruct, &ops));
                out.extend(encode(op::ConstantNull, &[rid, nulls[&rid]]));
                report.layout_types += 1;
            }
            op::CreateTensorLayoutNV => {
                let t = word(inst, 0);
                let null = nulls.get(&t).copied().ok_or_else(|| {
                    LowerError::Refused(format!(
                        "instruction {i}: %{t} is not a tensor layout type"
                    ))
                })?;
                out.extend(encode(op::CopyObject, &[t, rid, null]));
                report.layout_ops += 1;
            }
            op::TensorLayoutSetBlockSizeNV | op::TensorLayoutSetClampValueNV => {
                out.extend(encode(op::CopyObject, &[word(inst, 0), rid, word(inst, 2)]));
                report.layout_ops += 1;
            }
            op::TensorLayoutSetDimensionNV
            | op::TensorLayoutSetStrideNV
            | op::TensorLayoutSliceNV => {
                let t = word(inst, 0);
                let lt = layout_of(t)?;
                let (n, f, input) = (lt.dims, lt.field, word(inst, 2));
                let mut members = vec![0u32; 2 * n];
                match inst.opcode {
                    op::TensorLayoutSetDimensionNV => {
                        // stride[last] = 1, stride[0] = dimension[1] (block size 1); offsets 0.
                        let (one, zero) = (e.constant(f, 1), e.constant(f, 0));
                        members[n - 1] = one;
                        if n == 2 {
                            members[0] = e.as_type(&mut out, m, f, word(inst, 4));
                        }
                        for member in &mut members[n..] {
                            *member = zero;
                        }
                    }
                    op::TensorLayoutSetStrideNV => {
                        for k in 0..n {
                            members[k] = e.as_type(&mut out, m, f, word(inst, 3 + k));
                            members[n + k] = e.extract(&mut out, f, input, n + k);
                        }
                    }
                    _ => {
                        // Slice: offsets accumulate (NOTES.md §2.4: offset[i] += off_i).
                        for k in 0..n {
                            members[k] = e.extract(&mut out, f, input, k);
                            let old = e.extract(&mut out, f, input, n + k);
                            let add = e.as_type(&mut out, m, f, word(inst, 3 + 2 * k));
                            let sum = e.fresh();
                            out.extend(encode(op::IAdd, &[f, sum, old, add]));
                            members[n + k] = sum;
                        }
                    }
                }
                let mut ops = vec![t, rid];
                ops.extend(members);
                out.extend(encode(op::CompositeConstruct, &ops));
                report.layout_ops += 1;
            }
            op::CooperativeMatrixLoadTensorNV | op::CooperativeMatrixStoreTensorNV => {
                let load = inst.opcode == op::CooperativeMatrixLoadTensorNV;
                let Some(&access) = accesses.get(&i) else {
                    return refuse(format!("instruction {i}: a tensor access was not analysed"));
                };
                let (f, l) = (access.field, access.layout);
                let (delta, stride, major) = match access.orientation {
                    Orientation::RowMajor => {
                        let s0 = e.extract(&mut out, f, l, 0);
                        let o0 = e.extract(&mut out, f, l, 2);
                        let o1 = e.extract(&mut out, f, l, 3);
                        let (t, d) = (e.fresh(), e.fresh());
                        out.extend(encode(op::IMul, &[f, t, o0, s0]));
                        out.extend(encode(op::IAdd, &[f, d, t, o1]));
                        (d, s0, layout::RowMajorKHR)
                    }
                    Orientation::ColumnMajor => {
                        let s1 = e.extract(&mut out, f, l, 1);
                        let o0 = e.extract(&mut out, f, l, 2);
                        let o1 = e.extract(&mut out, f, l, 3);
                        let (t, d) = (e.fresh(), e.fresh());
                        out.extend(encode(op::IMul, &[f, t, o1, s1]));
                        out.extend(encode(op::IAdd, &[f, d, o0, t]));
                        (d, s1, layout::ColumnMajorKHR)
                    }
                    Orientation::Flat => {
                        let o0 = e.extract(&mut out, f, l, 1);
                        (o0, access.cols, layout::RowMajorKHR)
                    }
                };
                // The moved pointer: the same access chain, its last index plus the offset
                // (offsets are signed: sign-extended to a wider index).
                let chain = &m.instructions[access.chain];
                let last = chain.operands.len() - 1;
                let index = word(chain, last);
                let index_ty = m.type_of(index).unwrap_or(0);
                let delta = match m.type_view(index_ty) {
                    Type::Int { width, .. } if width != 32 => {
                        let w = e.fresh();
                        out.extend(encode(op::SConvert, &[index_ty, w, delta]));
                        w
                    }
                    _ => delta,
                };
                let (moved_index, moved) = (e.fresh(), e.fresh());
                out.extend(encode(op::IAdd, &[index_ty, moved_index, index, delta]));
                let mut chain_ops: Vec<u32> = (0..last).map(|k| word(chain, k)).collect();
                chain_ops[1] = moved;
                chain_ops.push(moved_index);
                out.extend(encode(chain.opcode, &chain_ops));
                let major = e.constant(f, major);
                let memory = memory_operands_without_alignment(inst, if load { 6 } else { 4 });
                if load {
                    let mut ops = vec![word(inst, 0), rid, moved, major, stride];
                    ops.extend(memory);
                    out.extend(encode(op::CooperativeMatrixLoadKHR, &ops));
                    report.loads += 1;
                } else {
                    let mut ops = vec![moved, word(inst, 1), major, stride];
                    ops.extend(memory);
                    out.extend(encode(op::CooperativeMatrixStoreKHR, &ops));
                    report.stores += 1;
                }
            }
            _ => continue,
        }
        body.insert(i, out);
    }
    let Emitter { bound, decls, .. } = e;

    // Capabilities and extensions: those of cooperative matrix 2 and tensor addressing go
    // (nothing that needs them is left); KHR cooperative matrices stay or come in.
    let dropped_capabilities = [
        capability::TensorAddressingNV,
        capability::CooperativeMatrixTensorAddressingNV,
        capability::CooperativeMatrixBlockLoadsNV,
        capability::CooperativeMatrixReductionsNV,
        capability::CooperativeMatrixConversionsNV,
        capability::CooperativeMatrixPerElementOperationsNV,
        capability::CooperativeMatrixDecodeVectorNV,
    ];
    let dropped_extensions = [
        "SPV_NV_tensor_addressing",
        "SPV_NV_cooperative_matrix2",
        "SPV_NV_cooperative_matrix_decode_vector",
    ];
    let has_khr_capability = m
        .capabilities()
        .any(|c| c == capability::CooperativeMatrixKHR);
    let has_khr_extension = m.extensions().any(|e| e == "SPV_KHR_cooperative_matrix");
    let mut out = Vec::new();
    let mut decls_done = false;
    let mut header_added = false;
    for (i, inst) in m.instructions.iter().enumerate() {
        let section = m.section(i);
        if inst.opcode == op::Capability && dropped_capabilities.contains(&word(inst, 0)) {
            continue;
        }
        if inst.opcode == op::Extension {
            let ext = decode_string(&inst.words[1..]).0;
            if dropped_extensions.contains(&ext.as_str()) {
                continue;
            }
        }
        if !header_added && !matches!(section, Section::Capability) {
            if !has_khr_capability {
                out.extend(encode(op::Capability, &[capability::CooperativeMatrixKHR]));
            }
            if !has_khr_extension {
                let mut ops = Vec::new();
                encode_string("SPV_KHR_cooperative_matrix", &mut ops);
                out.extend(encode(op::Extension, &ops));
            }
            header_added = true;
        }
        if !decls_done && section == Section::Function {
            out.extend(&decls);
            decls_done = true;
        }
        match body.get(&i) {
            Some(words) => out.extend(words),
            None => out.extend(&inst.words),
        }
    }
    if !decls_done {
        out.extend(&decls);
    }
    let mut header = m.header;
    header.bound = bound;
    let mut all = coopmat_spirv::binary::write_words(&header, &[]);
    all.extend(out);
    *module = Module::from_words(&all)?;
    Ok(report)
}

/// The TensorAddressingOperands mask of a tensor load or store and the word index where it
/// sits, or `None` for a malformed instruction.
fn tensor_operands(inst: &Instruction) -> Option<(usize, u32)> {
    let memory_mask_at = if inst.opcode == op::CooperativeMatrixLoadTensorNV {
        6
    } else {
        4
    };
    let mask = *inst.words.get(memory_mask_at)?;
    let at = memory_mask_at + 1 + memory_parameter_words(mask);
    Some((at, *inst.words.get(at)?))
}

/// Words of parameters after a MemoryAccess mask: Aligned's literal and one id for each of
/// MakePointerAvailable, MakePointerVisible, AliasScopeINTELMask and NoAliasINTELMask
/// (SPIR-V 3.26, "Memory Operands": parameters follow in bit order).
fn memory_parameter_words(mask: u32) -> usize {
    [
        memory_access::Aligned,
        memory_access::MakePointerAvailable,
        memory_access::MakePointerVisible,
        memory_access::AliasScopeINTELMask,
        memory_access::NoAliasINTELMask,
    ]
    .iter()
    .filter(|&&b| mask & b != 0)
    .count()
}

/// The memory operands of a tensor access (mask at word `at`) as KHR operands, without Aligned:
/// the alignment promised for the tensor's base does not hold at the moved pointer.
fn memory_operands_without_alignment(inst: &Instruction, at: usize) -> Vec<u32> {
    let mask = inst.words.get(at).copied().unwrap_or(0);
    let params = &inst.words[(at + 1).min(inst.words.len())..];
    let mut out = vec![mask & !memory_access::Aligned];
    let mut k = 0;
    for bit in [
        memory_access::Aligned,
        memory_access::MakePointerAvailable,
        memory_access::MakePointerVisible,
        memory_access::AliasScopeINTELMask,
        memory_access::NoAliasINTELMask,
    ] {
        if mask & bit != 0 {
            if bit != memory_access::Aligned
                && let Some(&p) = params.get(k)
            {
                out.push(p);
            }
            k += 1;
        }
    }
    if out == [memory_access::None] {
        out.clear();
    }
    out
}

fn opcode_name(opcode: u16) -> String {
    coopmat_spirv::grammar::instruction(opcode)
        .map(|d| format!("Op{}", d.name))
        .unwrap_or_else(|| format!("opcode {opcode}"))
}

//! Rules of the cooperative-matrix family: SPV_NV_cooperative_matrix, SPV_KHR_cooperative_matrix,
//! SPV_NV_cooperative_matrix2, SPV_NV_tensor_addressing, SPV_NV_cooperative_matrix_decode_vector,
//! SPV_QCOM_cooperative_matrix_conversion and SPV_NV_cooperative_vector.

use crate::ctx::Words;
use crate::ctx::{Ctx, Ty};
use crate::rules::*;
use coopmat_spirv::binary::Instruction;
use coopmat_spirv::grammar::{
    OperandKind, capability, cooperative_matrix_layout as layout,
    cooperative_matrix_operands as mo, cooperative_matrix_reduce as red,
    cooperative_matrix_use as usage, decoration, execution_mode, memory_access, op, scope,
    storage_class as sc, tensor_addressing_operands as tao,
};
use std::collections::HashMap;

/// A cooperative matrix type, KHR or NV.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Mat {
    khr: bool,
    comp: u32,
    scope: u32,
    rows: u32,
    cols: u32,
    /// Use id (KHR only).
    usage: u32,
}

/// A dimension or enum operand of a type: known value, or the id when not a plain constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Val {
    Known(u64),
    Id(u32),
}

impl Val {
    /// Definitely different (both known and unequal); unknown values never conflict.
    fn differs(self, o: Val) -> bool {
        matches!((self, o), (Val::Known(a), Val::Known(b)) if a != b)
    }
    fn known(self) -> Option<u64> {
        match self {
            Val::Known(v) => Some(v),
            Val::Id(_) => None,
        }
    }
}

fn show(v: Val) -> String {
    match v {
        Val::Known(x) => x.to_string(),
        Val::Id(id) => format!("%{id}"),
    }
}

fn use_name(v: Val) -> String {
    match v.known() {
        Some(0) => "MatrixAKHR".into(),
        Some(1) => "MatrixBKHR".into(),
        Some(2) => "MatrixAccumulatorKHR".into(),
        _ => show(v),
    }
}

impl Ctx<'_> {
    fn mat(&self, ty: u32) -> Option<Mat> {
        match self.ty(ty) {
            Ty::CoopKhr {
                comp,
                scope,
                rows,
                cols,
                usage,
            } => Some(Mat {
                khr: true,
                comp,
                scope,
                rows,
                cols,
                usage,
            }),
            Ty::CoopNv {
                comp,
                scope,
                rows,
                cols,
            } => Some(Mat {
                khr: false,
                comp,
                scope,
                rows,
                cols,
                usage: 0,
            }),
            _ => None,
        }
    }
    fn vmat(&self, id: u32) -> Option<Mat> {
        self.mat(self.vty(id))
    }
    fn val(&self, id: u32) -> Val {
        match self.const_value(id) {
            Some(v) => Val::Known(v),
            None => Val::Id(id),
        }
    }
    fn is_coop_type(&self, ty: u32) -> bool {
        matches!(self.ty(ty), Ty::CoopKhr { .. } | Ty::CoopNv { .. })
    }
    /// Whether a type is or contains a cooperative matrix (through arrays and structs).
    fn contains_coop(&self, ty: u32, depth: u32) -> bool {
        if depth > 32 {
            return false;
        }
        match self.ty(ty) {
            Ty::CoopKhr { .. } | Ty::CoopNv { .. } => true,
            Ty::Array { elem, .. } | Ty::RuntimeArray { elem } => {
                self.contains_coop(elem, depth + 1)
            }
            Ty::Struct => self.def(ty).is_some_and(|d| {
                let inst = &self.m.instructions[d];
                (1..inst.operands.len())
                    .any(|k| self.contains_coop(inst.w(k).unwrap_or(0), depth + 1))
            }),
            _ => false,
        }
    }
    fn type_name(&self, ty: u32) -> String {
        self.type_name_at(ty, 0)
    }
    /// `depth` stops self-referencing (malformed) types from recursing without end.
    fn type_name_at(&self, ty: u32, depth: u32) -> String {
        if depth > 3 {
            return self.name(ty);
        }
        match self.ty(ty) {
            Ty::Int { width, signed } => format!("{}int{width}", if signed { "" } else { "u" }),
            Ty::Float {
                width,
                encoding: None,
            } => format!("float{width}"),
            Ty::Float { width, .. } => format!("float{width} (encoded)"),
            Ty::Bool => "bool".into(),
            Ty::Vector { comp, count } => {
                format!("vec{count} of {}", self.type_name_at(comp, depth + 1))
            }
            Ty::CoopKhr { .. } | Ty::CoopNv { .. } => {
                let m = self.mat(ty).expect("coop type");
                let mut s = format!(
                    "coopmat<{}, scope {}, {}x{}",
                    self.type_name_at(m.comp, depth + 1),
                    show(self.val(m.scope)),
                    show(self.val(m.rows)),
                    show(self.val(m.cols))
                );
                if m.khr {
                    s.push_str(&format!(", {}", use_name(self.val(m.usage))));
                }
                s.push('>');
                s
            }
            _ => self.name(ty),
        }
    }
    fn op_word(&self, inst: &Instruction, k: usize) -> u32 {
        inst.w(k).unwrap_or(0)
    }
}

pub(crate) fn check(cx: &mut Ctx) {
    let m = cx.m;
    let mut uses_workgroup_scope: Option<usize> = None;
    let mut callbacks: Vec<(usize, u32, &'static str)> = Vec::new();
    for (i, inst) in m.instructions.iter().enumerate() {
        match inst.opcode {
            op::TypeCooperativeMatrixKHR => {
                if type_khr(cx, i, inst) {
                    uses_workgroup_scope.get_or_insert(i);
                }
            }
            op::TypeCooperativeMatrixNV => type_nv(cx, i, inst),
            op::TypeTensorLayoutNV => type_layout(cx, i, inst),
            op::TypeTensorViewNV => type_view(cx, i, inst),
            op::TypeCooperativeVectorNV => type_coopvec(cx, i, inst),
            op::Variable | op::UntypedVariableKHR => storage(cx, i, inst),
            op::CooperativeMatrixLoadKHR | op::CooperativeMatrixStoreKHR => {
                load_store_khr(cx, i, inst)
            }
            op::CooperativeMatrixLoadNV | op::CooperativeMatrixStoreNV => {
                load_store_nv(cx, i, inst)
            }
            op::CooperativeMatrixMulAddKHR => muladd_khr(cx, i, inst),
            op::CooperativeMatrixMulAddNV => muladd_nv(cx, i, inst),
            op::CooperativeMatrixLengthKHR | op::CooperativeMatrixLengthNV => length(cx, i, inst),
            op::CooperativeMatrixLoadTensorNV | op::CooperativeMatrixStoreTensorNV => {
                tensor_load_store(cx, i, inst, &mut callbacks)
            }
            op::CooperativeMatrixReduceNV => {
                reduce(cx, i, inst);
                callbacks.push((i, cx.op_word(inst, 4), "CombineFunc"));
            }
            op::CooperativeMatrixPerElementOpNV => {
                per_element(cx, i, inst);
                callbacks.push((i, cx.op_word(inst, 3), "per-element Func"));
            }
            op::CooperativeMatrixConvertNV => convert_use(cx, i, inst),
            op::CooperativeMatrixTransposeNV => transpose(cx, i, inst),
            op::CreateTensorLayoutNV | op::CreateTensorViewNV => create_tensor(cx, i, inst),
            op::TensorLayoutSetDimensionNV
            | op::TensorLayoutSetStrideNV
            | op::TensorLayoutSliceNV
            | op::TensorLayoutSetClampValueNV
            | op::TensorLayoutSetBlockSizeNV
            | op::TensorViewSetDimensionNV
            | op::TensorViewSetStrideNV
            | op::TensorViewSetClipNV => tensor_set(cx, i, inst),
            op::BitCastArrayQCOM => qcom_bitcast(cx, i, inst),
            op::CompositeConstructCoopMatQCOM => qcom_construct(cx, i, inst, true),
            op::CompositeExtractCoopMatQCOM => qcom_construct(cx, i, inst, false),
            op::ExtractSubArrayQCOM => qcom_sub_array(cx, i, inst),
            op::CooperativeVectorLoadNV | op::CooperativeVectorStoreNV => {
                coopvec_load_store(cx, i, inst)
            }
            op::CooperativeVectorMatrixMulNV | op::CooperativeVectorMatrixMulAddNV => {
                coopvec_matmul(cx, i, inst)
            }
            op::CooperativeVectorOuterProductAccumulateNV
            | op::CooperativeVectorReduceSumAccumulateNV => coopvec_accumulate(cx, i, inst),
            _ => generic(cx, i, inst),
        }
    }
    if let Some(t) = uses_workgroup_scope {
        workgroup_size_specified(cx, t);
    }
    if cx.has_cap(capability::CooperativeMatrixKHR)
        && cx.has_cap(capability::Shader)
        && !cx.has_cap(capability::VulkanMemoryModel)
        && m.header.version() < (1, 5)
        && !cx.exts.contains("SPV_KHR_vulkan_memory_model")
    {
        cx.err_module(&KHR_VMM, "CooperativeMatrixKHR in a shader needs the Vulkan memory model (SPV_KHR_vulkan_memory_model or SPIR-V 1.5)");
    }
    no_tangled(cx, &callbacks);
}

// ---- types ------------------------------------------------------------------------------

/// Checks OpTypeCooperativeMatrixKHR; returns whether its scope is Workgroup.
fn type_khr(cx: &mut Ctx, i: usize, inst: &Instruction) -> bool {
    let comp = cx.op_word(inst, 1);
    if !cx.is_numerical(comp) {
        cx.err(
            &KHR_TYPE_COMPONENT,
            i,
            format!(
                "Component Type {} is not a scalar numerical type",
                cx.name(comp)
            ),
        )
        .rel_id(comp, "component type");
    }
    let names = ["Scope", "Rows", "Columns", "Use"];
    for (k, name) in names.iter().enumerate() {
        let id = cx.op_word(inst, 2 + k);
        if !cx.is_constant(id) || !cx.is_int32_value(id) {
            cx.err(
                &KHR_TYPE_OPERANDS,
                i,
                format!(
                    "{name} {} must be a constant instruction with scalar 32-bit integer type",
                    cx.name(id)
                ),
            )
            .rel_id(id, name.to_string());
        }
    }
    let use_id = cx.op_word(inst, 5);
    if let Some(u) = cx.const_value(use_id)
        && u > usage::MatrixAccumulatorKHR as u64
    {
        cx.err(&KHR_TYPE_USE, i, format!("Use {u} is not a Cooperative Matrix Use (MatrixAKHR 0, MatrixBKHR 1, MatrixAccumulatorKHR 2)"))
                .rel_id(use_id, "Use");
    }
    let scope_id = cx.op_word(inst, 2);
    let mut wg = false;
    if let Some(s) = cx.const_or_default(scope_id) {
        let vulkan = cx.opts.target_env.is_vulkan();
        if s > scope::ShaderCallKHR as u64 {
            cx.err(
                &KHR_TYPE_SCOPE,
                i,
                format!("Scope {s} is not a valid Scope"),
            )
            .rel_id(scope_id, "Scope");
        } else if vulkan && s != scope::Subgroup as u64 && s != scope::Workgroup as u64 {
            cx.err(
                &KHR_TYPE_SCOPE,
                i,
                format!(
                    "Vulkan limits cooperative matrix Scope to Subgroup or Workgroup, found {s}"
                ),
            )
            .rel_id(scope_id, "Scope");
        }
        wg = s == scope::Workgroup as u64;
    }
    wg
}

fn type_nv(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let scope_id = cx.op_word(inst, 2);
    if let Some(s) = cx.const_or_default(scope_id)
        && (s > scope::ShaderCallKHR as u64
            || (cx.opts.target_env.is_vulkan()
                && s != scope::Subgroup as u64
                && s != scope::Workgroup as u64))
    {
        cx.err(
            &NV_TYPE,
            i,
            format!(
                "Scope {s} is not a valid cooperative matrix Scope (Vulkan: Subgroup or Workgroup)"
            ),
        )
        .rel_id(scope_id, "Scope");
    }
    let comp = cx.op_word(inst, 1);
    if !cx.is_numerical(comp) {
        cx.err(
            &NV_TYPE,
            i,
            format!(
                "Component Type {} is not a scalar numerical type",
                cx.name(comp)
            ),
        );
    }
    for (k, name) in ["Scope", "Rows", "Columns"].iter().enumerate() {
        let id = cx.op_word(inst, 2 + k);
        if !cx.is_constant(id) || !cx.is_int32_value(id) {
            cx.err(
                &NV_TYPE,
                i,
                format!(
                    "{name} {} must be a constant instruction with scalar 32-bit integer type",
                    cx.name(id)
                ),
            )
            .rel_id(id, name.to_string());
        }
    }
}

fn type_coopvec(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let comp = cx.op_word(inst, 1);
    if !cx.is_numerical(comp) {
        cx.err(
            &CV_TYPE,
            i,
            format!(
                "Component Type {} is not a scalar numerical type",
                cx.name(comp)
            ),
        );
    }
    let n = cx.op_word(inst, 2);
    if !cx.is_constant(n) || !cx.is_int32_value(n) {
        cx.err(
            &CV_TYPE,
            i,
            "Component Count must be a constant instruction with scalar 32-bit integer type",
        )
        .rel_id(n, "Component Count");
    } else if cx.const_value(n) == Some(0) {
        cx.err(&CV_TYPE, i, "Component Count must be at least 1");
    }
}

/// Checks a Dim-like type operand: constant (gap rule), 32-bit integer, and returns its value.
fn type_const_int(cx: &mut Ctx, i: usize, id: u32, what: &str, rule: &'static Rule) -> Option<u64> {
    if !cx.is_constant(id) {
        cx.err(
            &TA_TYPE_CONST,
            i,
            format!("{what} {} must be a constant instruction", cx.name(id)),
        )
        .rel_id(id, what.to_string());
        return None;
    }
    if !cx.is_int32_value(id) {
        cx.err(
            rule,
            i,
            format!(
                "{what} {} must have scalar 32-bit integer type",
                cx.name(id)
            ),
        )
        .rel_id(id, what.to_string());
        return None;
    }
    cx.const_or_default(id)
}

fn type_layout(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let dim = cx.op_word(inst, 1);
    if let Some(d) = type_const_int(cx, i, dim, "Dim", &TA_LAYOUT_TYPE)
        && !(1..=5).contains(&d)
    {
        cx.err(
            &TA_LAYOUT_TYPE,
            i,
            format!("Dim {d} must be between 1 and 5"),
        );
    }
    let clamp = cx.op_word(inst, 2);
    if let Some(c) = type_const_int(cx, i, clamp, "ClampMode", &TA_LAYOUT_TYPE)
        && c > 4
    {
        cx.err(
            &TA_LAYOUT_TYPE,
            i,
            format!("ClampMode {c} is not a TensorClampMode"),
        );
    }
}

fn type_view(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let dim = cx.op_word(inst, 1);
    let d = type_const_int(cx, i, dim, "Dim", &TA_VIEW_TYPE);
    if let Some(d) = d
        && !(1..=5).contains(&d)
    {
        cx.err(&TA_VIEW_TYPE, i, format!("Dim {d} must be between 1 and 5"));
    }
    let hd = cx.op_word(inst, 2);
    if !cx.is_constant(hd) {
        cx.err(
            &TA_TYPE_CONST,
            i,
            format!(
                "HasDimensions {} must be a constant instruction",
                cx.name(hd)
            ),
        );
    } else if cx.vshape_bool(hd) {
        cx.err(&TA_VIEW_TYPE, i, "HasDimensions must have boolean type");
    }
    let perms = inst.operands.len().saturating_sub(3);
    if let Some(d) = d
        && perms as u64 != d
    {
        cx.err(
            &TA_VIEW_TYPE,
            i,
            format!("{perms} permutation operands given, Dim is {d}"),
        );
        return;
    }
    let mut seen = [false; 8];
    for k in 0..perms {
        let p = cx.op_word(inst, 3 + k);
        match type_const_int(cx, i, p, "permutation operand", &TA_VIEW_TYPE) {
            Some(v) if (v as usize) < perms && !seen[v as usize] => seen[v as usize] = true,
            Some(_) => {
                cx.err(
                    &TA_VIEW_TYPE,
                    i,
                    format!("the permutation operands do not form a permutation of [0,{perms})"),
                );
                return;
            }
            None => {}
        }
    }
}

impl Ctx<'_> {
    /// True when `id` is NOT of boolean type.
    fn vshape_bool(&self, id: u32) -> bool {
        self.ty(self.vty(id)) != Ty::Bool
    }
}

fn storage(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let class = cx.op_word(inst, 2);
    if class == sc::Function || class == sc::Private {
        return;
    }
    let pointee = match cx.ty(inst.result_type.unwrap_or(0)) {
        Ty::Pointer { pointee, .. } => pointee,
        _ => match inst.opcode {
            op::UntypedVariableKHR => cx.op_word(inst, 3),
            _ => return,
        },
    };
    if cx.contains_coop(pointee, 0) {
        let nv = !matches!(cx.ty(pointee), Ty::CoopKhr { .. })
            && cx.has_cap(capability::CooperativeMatrixNV)
            && !cx.has_cap(capability::CooperativeMatrixKHR);
        let rule = if nv { &NV_STORAGE } else { &KHR_STORAGE };
        cx.err(
            rule,
            i,
            "cooperative matrix types may only be allocated in Function or Private storage",
        )
        .rel_id(pointee, "the allocated type");
    }
}

// ---- KHR / NV load, store, muladd, length -----------------------------------------------

/// The pointer operand's (storage class, pointee) if it is a typed pointer; `Err` if not a pointer.
fn pointer_of(cx: &Ctx, id: u32) -> Result<Option<(u32, u32)>, ()> {
    match cx.vshape_ty(id) {
        Ty::Pointer { storage, pointee } => Ok(Some((storage, pointee))),
        Ty::OpaquePointer { .. } => Ok(None),
        _ => Err(()),
    }
}

impl Ctx<'_> {
    fn vshape_ty(&self, id: u32) -> Ty {
        self.ty(self.vty(id))
    }
    fn storage_of(&self, id: u32) -> Option<u32> {
        match self.vshape_ty(id) {
            Ty::Pointer { storage, .. } | Ty::OpaquePointer { storage } => Some(storage),
            _ => None,
        }
    }
}

/// Finds the operand index of the first operand of `kind`.
fn operand_of_kind(inst: &Instruction, kind: OperandKind, from: usize) -> Option<usize> {
    (from..inst.operands.len()).find(|&k| inst.operands[k].kind == Some(kind))
}

/// Checks the `Pointer` operand of a cooperative-matrix load or store: a pointer whose pointee
/// is a scalar or vector (KHR and NV alike). Returns the storage class of a typed pointer,
/// `Ok(None)` for an untyped one, `Err` when it is no pointer (already reported).
fn coop_pointer(cx: &mut Ctx, i: usize, ptr: u32, rule: &'static Rule) -> Result<Option<u32>, ()> {
    match pointer_of(cx, ptr) {
        Err(()) => {
            cx.err(
                rule,
                i,
                format!("Pointer {} is not a pointer", cx.name(ptr)),
            );
            Err(())
        }
        Ok(Some((storage, pointee))) => {
            if !matches!(
                cx.ty(pointee),
                Ty::Int { .. } | Ty::Float { .. } | Ty::Vector { .. }
            ) {
                cx.err(
                    rule,
                    i,
                    "Pointer's pointee type must be a scalar or vector type",
                )
                .rel_id(cx.vty(ptr), "pointer type");
            }
            Ok(Some(storage))
        }
        Ok(None) => Ok(None),
    }
}

fn load_store_khr(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let load = inst.opcode == op::CooperativeMatrixLoadKHR;
    let (ptr, obj_ty, layout_k) = if load {
        (cx.op_word(inst, 2), inst.result_type.unwrap_or(0), 3)
    } else {
        let o = cx.op_word(inst, 1);
        (cx.op_word(inst, 0), cx.vty(o), 2)
    };
    if !matches!(cx.ty(obj_ty), Ty::CoopKhr { .. }) {
        let what = if load { "Result Type" } else { "Object's type" };
        cx.err(
            &KHR_LOAD_TYPES,
            i,
            format!("{what} must be an OpTypeCooperativeMatrixKHR"),
        )
        .rel_id(obj_ty, "type");
    }
    match coop_pointer(cx, i, ptr, &KHR_LOAD_POINTER) {
        Ok(Some(storage)) => pointer_storage(cx, i, storage, &KHR_LOAD_STORAGE),
        Ok(None) => {
            if let Some(s) = cx.storage_of(ptr) {
                pointer_storage(cx, i, s, &KHR_LOAD_STORAGE);
            }
        }
        Err(()) => {}
    }
    let lay = cx.op_word(inst, layout_k);
    let mut layout_value = None;
    if !cx.is_constant(lay) || !cx.is_int32_value(lay) {
        cx.err(
            &KHR_LOAD_LAYOUT,
            i,
            format!(
                "MemoryLayout {} must be a 32-bit integer constant instruction",
                cx.name(lay)
            ),
        )
        .rel_id(lay, "MemoryLayout");
    } else if let Some(v) = cx.const_or_default(lay) {
        let arm = v == layout::RowBlockedInterleavedARM as u64
            || v == layout::ColumnBlockedInterleavedARM as u64;
        if v > 1 && !arm {
            cx.err(
                &KHR_LOAD_LAYOUT,
                i,
                format!("MemoryLayout value {v} is not a Cooperative Matrix Layout"),
            );
        } else if arm && !cx.has_cap(capability::CooperativeMatrixLayoutsARM) {
            cx.err(
                &CORE_CAPABILITY,
                i,
                "blocked-interleaved layouts need the CooperativeMatrixLayoutsARM capability",
            );
        }
        layout_value = Some(v);
    }
    let stride_k = layout_k + 1;
    let has_stride = inst
        .operands
        .get(stride_k)
        .is_some_and(|o| o.kind == Some(OperandKind::IdRef));
    if has_stride {
        let s = cx.op_word(inst, stride_k);
        if !cx.is_int(cx.vty(s)) {
            cx.err(
                &KHR_LOAD_STRIDE,
                i,
                format!("Stride {} must be a scalar integer", cx.name(s)),
            );
        } else if !load && cx.const_value(s) == Some(0) {
            cx.err(
                &KHR_LOAD_STRIDE,
                i,
                "Stride must be greater than 0 when passed to OpCooperativeMatrixStoreKHR",
            );
        }
    } else if matches!(layout_value, Some(0) | Some(1)) {
        cx.err(
            &KHR_LOAD_STRIDE,
            i,
            "Stride is required with RowMajorKHR and ColumnMajorKHR layouts",
        );
    }
    mem_operand(cx, i, inst, load, &KHR_LOAD_MEMOP);
}

fn pointer_storage(cx: &mut Ctx, i: usize, storage: u32, rule: &'static Rule) {
    if cx.opts.target_env.is_vulkan()
        && !matches!(
            storage,
            sc::Workgroup | sc::StorageBuffer | sc::PhysicalStorageBuffer
        )
    {
        cx.err(rule, i, format!("Pointer's storage class {storage} must be Workgroup, StorageBuffer or PhysicalStorageBuffer"));
    }
}

fn mem_operand(cx: &mut Ctx, i: usize, inst: &Instruction, load: bool, rule: &'static Rule) {
    if let Some(k) = operand_of_kind(inst, OperandKind::MemoryAccess, 0) {
        let bits = cx.op_word(inst, k);
        if load && bits & memory_access::MakePointerAvailable != 0 {
            cx.err(rule, i, "MakePointerAvailable cannot be used with a load");
        }
        if !load && bits & memory_access::MakePointerVisible != 0 {
            cx.err(rule, i, "MakePointerVisible cannot be used with a store");
        }
    }
}

fn load_store_nv(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let load = inst.opcode == op::CooperativeMatrixLoadNV;
    let (ptr, obj_ty, k) = if load {
        (cx.op_word(inst, 2), inst.result_type.unwrap_or(0), 3)
    } else {
        (cx.op_word(inst, 0), cx.vty(cx.op_word(inst, 1)), 2)
    };
    if !matches!(cx.ty(obj_ty), Ty::CoopNv { .. }) {
        cx.err(
            &NV_LOAD,
            i,
            "the loaded or stored object must be an OpTypeCooperativeMatrixNV",
        );
    }
    if let Ok(Some(storage)) = coop_pointer(cx, i, ptr, &NV_LOAD)
        && !matches!(
            storage,
            sc::Workgroup | sc::StorageBuffer | sc::PhysicalStorageBuffer
        )
    {
        cx.err(
            &NV_LOAD,
            i,
            "Pointer must be in Workgroup, StorageBuffer or PhysicalStorageBuffer storage",
        );
    }
    let stride = cx.op_word(inst, k);
    if !cx.is_int(cx.vty(stride)) {
        cx.err(&NV_LOAD, i, "Stride must be a scalar integer");
    }
    let cm = cx.op_word(inst, k + 1);
    if !cx.is_constant(cm) || cx.ty(cx.vty(cm)) != Ty::Bool {
        cx.err(
            &NV_LOAD,
            i,
            "Column Major must be a boolean constant instruction",
        );
    }
}

fn int_comp(cx: &Ctx, m: &Mat) -> bool {
    cx.is_int(m.comp)
}

fn muladd_khr(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let rt = inst.result_type.unwrap_or(0);
    let ids = [
        cx.op_word(inst, 2),
        cx.op_word(inst, 3),
        cx.op_word(inst, 4),
    ];
    let r = cx.mat(rt).filter(|m| m.khr);
    let a = cx.vmat(ids[0]).filter(|m| m.khr);
    let b = cx.vmat(ids[1]).filter(|m| m.khr);
    let c = cx.vmat(ids[2]).filter(|m| m.khr);
    let (Some(r), Some(a), Some(b), Some(c)) = (r, a, b, c) else {
        let d = cx.err(
            &KHR_MULADD_TYPES,
            i,
            "Result Type, A, B and C must all be OpTypeCooperativeMatrixKHR",
        );
        let _ = d;
        return;
    };
    let v = |id: u32| cx.val(id);
    let (m_, n_, k_) = (v(a.rows), v(b.cols), v(a.cols));
    let mut bad = Vec::new();
    if v(b.rows).differs(k_) {
        bad.push(format!(
            "B has {} rows but A has {} columns (K)",
            show(v(b.rows)),
            show(k_)
        ));
    }
    if v(c.rows).differs(m_) || v(c.cols).differs(n_) {
        bad.push(format!(
            "C is {}x{} but A x B is {}x{}",
            show(v(c.rows)),
            show(v(c.cols)),
            show(m_),
            show(n_)
        ));
    }
    if v(r.rows).differs(m_) || v(r.cols).differs(n_) {
        bad.push(format!(
            "Result is {}x{} but A x B is {}x{}",
            show(v(r.rows)),
            show(v(r.cols)),
            show(m_),
            show(n_)
        ));
    }
    if !bad.is_empty() {
        let msg = bad.join("; ");
        let ta = cx.vty(ids[0]);
        let tb = cx.vty(ids[1]);
        cx.err(&KHR_MULADD_SHAPE, i, msg)
            .rel_id(ta, "type of A")
            .rel_id(tb, "type of B");
    }
    for (mat, want, what, id) in [
        (a, usage::MatrixAKHR, "A", ids[0]),
        (b, usage::MatrixBKHR, "B", ids[1]),
        (c, usage::MatrixAccumulatorKHR, "C", ids[2]),
    ] {
        let u = v(mat.usage);
        if u.differs(Val::Known(want as u64)) {
            let t = cx.vty(id);
            cx.err(
                &KHR_MULADD_USE,
                i,
                format!(
                    "{what} must have Use {}, found {}",
                    use_name(Val::Known(want as u64)),
                    use_name(u)
                ),
            )
            .rel_id(t, format!("type of {what}"));
        }
    }
    let ru = v(r.usage);
    if ru.differs(Val::Known(usage::MatrixAccumulatorKHR as u64)) {
        cx.err(
            &KHR_MULADD_RESULT_USE,
            i,
            format!(
                "Result Type must have Use MatrixAccumulatorKHR, found {}",
                use_name(ru)
            ),
        )
        .rel_id(rt, "Result Type");
    }
    let s = v(r.scope);
    if [a, b, c].iter().any(|m| v(m.scope).differs(s)) {
        cx.err(
            &KHR_MULADD_SCOPE,
            i,
            "A, B, C and Result Type must have the same scope",
        );
    }
    if let Some(k) = operand_of_kind(inst, OperandKind::CooperativeMatrixOperands, 5) {
        let bits = cx.op_word(inst, k);
        for (bit, mat, what) in [
            (
                mo::MatrixASignedComponentsKHR,
                a,
                "MatrixASignedComponentsKHR",
            ),
            (
                mo::MatrixBSignedComponentsKHR,
                b,
                "MatrixBSignedComponentsKHR",
            ),
            (
                mo::MatrixCSignedComponentsKHR,
                c,
                "MatrixCSignedComponentsKHR",
            ),
            (
                mo::MatrixResultSignedComponentsKHR,
                r,
                "MatrixResultSignedComponentsKHR",
            ),
        ] {
            if bits & bit != 0 && !int_comp(cx, &mat) {
                cx.err(
                    &KHR_MULADD_SIGNED,
                    i,
                    format!(
                        "{what} is set but that matrix's component type is {}",
                        cx.type_name(mat.comp)
                    ),
                )
                .rel_id(mat.comp, "component type");
            }
        }
    }
}

fn muladd_nv(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let rt = inst.result_type.unwrap_or(0);
    let r = cx.mat(rt).filter(|m| !m.khr);
    let a = cx.vmat(cx.op_word(inst, 2)).filter(|m| !m.khr);
    let b = cx.vmat(cx.op_word(inst, 3)).filter(|m| !m.khr);
    let c = cx.vmat(cx.op_word(inst, 4)).filter(|m| !m.khr);
    let (Some(r), Some(a), Some(b), Some(c)) = (r, a, b, c) else {
        cx.err(
            &NV_MULADD,
            i,
            "Result Type, A, B and C must all be OpTypeCooperativeMatrixNV",
        );
        return;
    };
    let v = |id: u32| cx.val(id);
    let (m_, n_, k_) = (v(a.rows), v(b.cols), v(a.cols));
    if v(b.rows).differs(k_)
        || v(c.rows).differs(m_)
        || v(c.cols).differs(n_)
        || v(r.rows).differs(m_)
        || v(r.cols).differs(n_)
    {
        cx.err(
            &NV_MULADD,
            i,
            format!(
                "shapes do not agree: A {}x{}, B {}x{}, C {}x{}, Result {}x{}",
                show(m_),
                show(k_),
                show(v(b.rows)),
                show(n_),
                show(v(c.rows)),
                show(v(c.cols)),
                show(v(r.rows)),
                show(v(r.cols))
            ),
        );
    }
    if [a, b, c].iter().any(|m| v(m.scope).differs(v(r.scope))) {
        cx.err(
            &NV_MULADD,
            i,
            "A, B, C and Result Type must have the same scope",
        );
    }
}

fn length(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let khr = inst.opcode == op::CooperativeMatrixLengthKHR;
    let rule = if khr { &KHR_LENGTH } else { &NV_LENGTH };
    let rt = inst.result_type.unwrap_or(0);
    let ok = match cx.ty(rt) {
        Ty::Int { width: 32, signed } => !khr || !signed,
        _ => false,
    };
    if !ok {
        cx.err(
            rule,
            i,
            "Result Type must be a 32-bit unsigned integer (OpTypeInt 32 0)",
        );
    }
    let t = cx.op_word(inst, 2);
    let is = match cx.ty(t) {
        Ty::CoopKhr { .. } => khr,
        Ty::CoopNv { .. } => !khr,
        _ => false,
    };
    if !is {
        cx.err(
            rule,
            i,
            format!("Type {} must be a cooperative matrix type", cx.name(t)),
        );
    }
}

// ---- generic instructions on cooperative matrices --------------------------------------

fn is_arith(o: u16) -> bool {
    matches!(
        o,
        op::SNegate
            | op::FNegate
            | op::IAdd
            | op::FAdd
            | op::ISub
            | op::FSub
            | op::FMul
            | op::IMul
            | op::FDiv
            | op::SDiv
            | op::UDiv
    )
}

fn is_conversion(o: u16) -> bool {
    matches!(
        o,
        op::ConvertFToU
            | op::ConvertFToS
            | op::ConvertSToF
            | op::ConvertUToF
            | op::UConvert
            | op::SConvert
            | op::FConvert
            | op::Bitcast
    )
}

fn generic(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let rt = inst.result_type.unwrap_or(0);
    let rmat = cx.mat(rt);
    let o = inst.opcode;
    if matches!(
        o,
        op::CompositeConstruct | op::ConstantComposite | op::SpecConstantComposite
    ) {
        if let Some(m) = rmat {
            let n = inst.operands.len().saturating_sub(2);
            if n != 1 {
                cx.err(
                    &KHR_COMPOSITE,
                    i,
                    format!(
                        "a cooperative matrix composite takes exactly one constituent, found {n}"
                    ),
                );
            } else {
                let c = cx.op_word(inst, 2);
                if cx.vty(c) != m.comp {
                    cx.err(
                        &KHR_COMPOSITE,
                        i,
                        format!(
                            "the constituent must have the component type {}",
                            cx.type_name(m.comp)
                        ),
                    );
                }
            }
        }
        return;
    }
    if matches!(o, op::CompositeExtract | op::CompositeInsert) {
        let (comp_id, obj) = if o == op::CompositeExtract {
            (cx.op_word(inst, 2), None)
        } else {
            (cx.op_word(inst, 3), Some(cx.op_word(inst, 2)))
        };
        if let Some(m) = cx.vmat(comp_id) {
            let idx = inst
                .operands
                .len()
                .saturating_sub(if o == op::CompositeExtract { 3 } else { 4 });
            if idx != 1 {
                cx.err(
                    &KHR_EXTRACT,
                    i,
                    format!(
                        "component access into a cooperative matrix takes one index, found {idx}"
                    ),
                );
            }
            let elem_ty = match obj {
                None => rt,
                Some(ob) => cx.vty(ob),
            };
            if elem_ty != m.comp {
                cx.err(
                    &KHR_EXTRACT,
                    i,
                    format!(
                        "the component must have the matrix's component type {}",
                        cx.type_name(m.comp)
                    ),
                );
            }
            if obj.is_some() && rt != cx.vty(comp_id) {
                cx.err(
                    &KHR_EXTRACT,
                    i,
                    "OpCompositeInsert's Result Type must be the composite's type",
                );
            }
        }
        return;
    }
    let class = crate::ctx::desc(inst.opcode).map(|d| d.class).unwrap_or("");
    if !matches!(
        class,
        "Arithmetic"
            | "Bit"
            | "Relational_and_Logical"
            | "Conversion"
            | "Extension"
            | "Derivative"
            | "Composite"
    ) {
        return;
    }
    let first = inst.first_arg();
    let operand_mat = (first..inst.operands.len())
        .filter(|&k| inst.operands[k].kind == Some(OperandKind::IdRef))
        .map(|k| cx.op_word(inst, k))
        .find_map(|id| cx.vmat(id).map(|mm| (id, mm)));
    if rmat.is_none() && operand_mat.is_none() {
        return;
    }
    let khr = rmat.or(operand_mat.map(|x| x.1)).is_some_and(|m| m.khr);
    if is_arith(o) && (khr || !matches!(o, op::FMul | op::IMul)) {
        let Some(r) = rmat else {
            cx.err(
                &KHR_ARITH,
                i,
                "arithmetic on cooperative matrices must produce a cooperative matrix",
            );
            return;
        };
        for k in first..inst.operands.len() {
            let id = cx.op_word(inst, k);
            if cx.vty(id) != rt {
                cx.err(
                    &KHR_ARITH,
                    i,
                    format!(
                        "operand {} must have the Result Type {}",
                        cx.name(id),
                        cx.type_name(rt)
                    ),
                )
                .rel_id(cx.vty(id), "operand type");
                return;
            }
        }
        let float_op = matches!(o, op::FNegate | op::FAdd | op::FSub | op::FMul | op::FDiv);
        if float_op != matches!(cx.ty(r.comp), Ty::Float { .. }) {
            cx.err(
                &KHR_ARITH,
                i,
                format!(
                    "{} does not fit the component type {}",
                    crate::ctx::desc(inst.opcode).map(|d| d.name).unwrap_or("?"),
                    cx.type_name(r.comp)
                ),
            );
        }
        return;
    }
    if o == op::MatrixTimesScalar {
        let mat = cx.op_word(inst, 2);
        let s = cx.op_word(inst, 3);
        match (rmat, cx.vty(mat) == rt) {
            (Some(r), true) => {
                if cx.vty(s) != r.comp {
                    cx.err(
                        &KHR_MATRIX_TIMES_SCALAR,
                        i,
                        format!(
                            "Scalar must have the component type {}",
                            cx.type_name(r.comp)
                        ),
                    );
                }
            }
            _ => {
                cx.err(
                    &KHR_MATRIX_TIMES_SCALAR,
                    i,
                    "Matrix must have the Result Type",
                );
            }
        }
        return;
    }
    if is_conversion(o) {
        let src = cx.op_word(inst, 2);
        let (Some(r), Some(s)) = (rmat, cx.vmat(src)) else {
            cx.err(&KHR_CONVERT, i, "a conversion involving a cooperative matrix must have cooperative matrix operand and result");
            return;
        };
        let v = |id: u32| cx.val(id);
        if r.khr != s.khr
            || v(r.scope).differs(v(s.scope))
            || v(r.rows).differs(v(s.rows))
            || v(r.cols).differs(v(s.cols))
        {
            cx.err(
                &KHR_CONVERT,
                i,
                format!(
                    "conversion must keep Scope, Rows and Columns: {} to {}",
                    cx.type_name(cx.vty(src)),
                    cx.type_name(rt)
                ),
            );
            return;
        }
        if r.khr {
            let (ru, su) = (v(r.usage), v(s.usage));
            if ru.differs(su) {
                let relaxed = o != op::Bitcast
                    && (cx.has_cap(capability::CooperativeMatrixConversionsNV)
                        || cx.has_cap(capability::CooperativeMatrixConversionsEXT))
                    && su.known() == Some(usage::MatrixAccumulatorKHR as u64);
                if !relaxed {
                    cx.err(
                        &KHR_CONVERT,
                        i,
                        format!(
                            "conversion must keep Use ({} to {})",
                            use_name(su),
                            use_name(ru)
                        ),
                    );
                }
            }
        }
        // "OpBitcast on objects of cooperative matrix type whose Component Type are integer
        // types with the same Width" (SPV_KHR_cooperative_matrix, conversion instructions).
        if o == op::Bitcast
            && (!cx.is_int(r.comp) || !cx.is_int(s.comp) || cx.width(r.comp) != cx.width(s.comp))
        {
            cx.err(
                &KHR_CONVERT,
                i,
                "OpBitcast between cooperative matrices needs integer components of the same width",
            );
        }
        return;
    }
    if matches!(
        o,
        op::CopyObject | op::CopyLogical | op::CompositeConstructReplicateEXT
    ) {
        return;
    }
    let name = crate::ctx::desc(inst.opcode).map(|d| d.name).unwrap_or("?");
    cx.err(
        &KHR_ARITH,
        i,
        format!("{name} is not allowed on cooperative matrices"),
    );
}

// ---- coopmat2 ---------------------------------------------------------------------------

/// The Dim of a tensor layout or view type, if known.
fn tensor_dim(cx: &Ctx, ty: u32) -> Option<u64> {
    match cx.ty(ty) {
        Ty::Layout { dim, .. } | Ty::View { dim, .. } => cx.const_or_default(dim),
        _ => None,
    }
}

/// Walks a tensor layout value back to its last OpTensorLayoutSetBlockSizeNV; returns the
/// block size operand ids, or `None` when unknown (phi, parameter, load) or never set (all 1).
fn block_sizes(cx: &Ctx, mut id: u32) -> Option<(usize, Vec<u32>)> {
    for _ in 0..4096 {
        let d = cx.def(id)?;
        let inst = &cx.m.instructions[d];
        match inst.opcode {
            op::TensorLayoutSetBlockSizeNV => {
                return Some((
                    d,
                    (3..inst.operands.len())
                        .map(|k| inst.w(k).unwrap_or(0))
                        .collect(),
                ));
            }
            op::TensorLayoutSetDimensionNV
            | op::TensorLayoutSetStrideNV
            | op::TensorLayoutSliceNV
            | op::TensorLayoutSetClampValueNV => {
                id = inst.w(2)?;
            }
            // Unoptimized glslang output keeps the layout in a Function variable: follow the
            // load to the last store to the same variable earlier in the same block.
            op::Load => {
                let var = inst.w(2)?;
                if cx.def_op(var) != op::Variable {
                    return None;
                }
                id = stored_before(cx, d, var)?;
            }
            _ => return None,
        }
    }
    None
}

/// The value last stored to `var` before instruction `load`, scanning back within its block;
/// `None` at the block start or at a call (which may store to it).
fn stored_before(cx: &Ctx, load: usize, var: u32) -> Option<u32> {
    for j in (0..load).rev() {
        let inst = &cx.m.instructions[j];
        match inst.opcode {
            op::Store if inst.w(0) == Some(var) => return inst.w(1),
            op::Label | op::FunctionCall => return None,
            _ => {}
        }
    }
    None
}

fn tensor_load_store(
    cx: &mut Ctx,
    i: usize,
    inst: &Instruction,
    callbacks: &mut Vec<(usize, u32, &'static str)>,
) {
    let load = inst.opcode == op::CooperativeMatrixLoadTensorNV;
    let base = if load { 2 } else { 0 };
    let ptr = cx.op_word(inst, base);
    let obj = cx.op_word(inst, base + 1);
    let lay = cx.op_word(inst, base + 2);
    let rule = if load {
        &NV2_LOAD_TENSOR
    } else {
        &NV2_STORE_TENSOR
    };
    let mat_ty = if load {
        inst.result_type.unwrap_or(0)
    } else {
        cx.vty(obj)
    };
    let mat = cx.mat(mat_ty).filter(|m| m.khr);
    if mat.is_none() {
        cx.err(
            rule,
            i,
            if load {
                "Result Type must be an OpTypeCooperativeMatrixKHR"
            } else {
                "Object must be a cooperative matrix (OpTypeCooperativeMatrixKHR)"
            },
        );
    }
    if load && cx.vty(obj) != mat_ty {
        cx.err(rule, i, "Object must have the Result Type")
            .rel_id(cx.vty(obj), "Object's type");
    }
    if pointer_of(cx, ptr).is_err() {
        cx.err(
            rule,
            i,
            format!("Pointer {} is not a pointer", cx.name(ptr)),
        );
    }
    let lay_ty = cx.vty(lay);
    if !matches!(cx.ty(lay_ty), Ty::Layout { .. }) {
        cx.err(
            rule,
            i,
            format!(
                "TensorLayout {} must be a tensor layout (OpTypeTensorLayoutNV)",
                cx.name(lay)
            ),
        );
    }
    let ldim = tensor_dim(cx, lay_ty);
    mem_operand(cx, i, inst, load, &NV2_MEMOP);
    let Some(tk) = operand_of_kind(inst, OperandKind::TensorAddressingOperands, base + 3) else {
        return;
    };
    let bits = cx.op_word(inst, tk);
    let mut k = tk + 1;
    let mut next = |cx: &Ctx| {
        let v = cx.op_word(inst, k);
        k += 1;
        v
    };
    if bits & tao::TensorView != 0 {
        let v = next(cx);
        let vt = cx.vty(v);
        if !matches!(cx.ty(vt), Ty::View { .. }) {
            cx.err(
                &NV2_TENSOR_VIEW,
                i,
                format!(
                    "TensorView {} must be a tensor view (OpTypeTensorViewNV)",
                    cx.name(v)
                ),
            );
        } else if let (Some(vd), Some(ld), Ty::View { has_dim, .. }) =
            (tensor_dim(cx, vt), ldim, cx.ty(vt))
        {
            // Without its own dimensions the view indexes the layout's span[0..VDim) (the
            // spec's linearToViewCoord), so a larger VDim reads past the layout: warn.
            if vd > ld && cx.const_value(has_dim) == Some(0) {
                cx.warn(&NV2_TENSOR_VIEW, i, format!("the tensor view has Dim {vd} and no dimensions of its own, but the tensor layout has Dim {ld}"))
                    .rel_id(vt, "view type")
                    .rel_id(lay_ty, "layout type");
            }
        }
    }
    let decode = (bits & tao::DecodeFunc != 0).then(|| next(cx));
    let decode_vec = (bits & tao::DecodeVectorFunc != 0).then(|| next(cx));
    if !load && decode.is_some() {
        cx.err(
            &NV2_STORE_TENSOR,
            i,
            "DecodeFunc cannot be used with OpCooperativeMatrixStoreTensorNV",
        );
    }
    if decode_vec.is_some() && decode.is_none() {
        cx.err(
            &DV_REQUIRES_DECODE,
            i,
            "DecodeVectorFunc requires DecodeFunc to be present as well",
        );
    }
    if (decode.is_some() || decode_vec.is_some()) && load {
        match cx.storage_of(ptr) {
            Some(sc::StorageBuffer | sc::PhysicalStorageBuffer) => {}
            Some(s) => {
                cx.err(&NV2_DECODE_STORAGE, i, format!("with DecodeFunc, Pointer must be in StorageBuffer or PhysicalStorageBuffer storage, found storage class {s}"))
                    .rel_id(cx.vty(ptr), "pointer type");
            }
            None => {}
        }
    }
    let comp = mat.map(|m| m.comp);
    if let Some(f) = decode {
        callbacks.push((i, f, "DecodeFunc"));
        if load {
            decode_signature(cx, i, f, comp, ldim, None);
        }
    }
    if let Some(f) = decode_vec {
        callbacks.push((i, f, "DecodeVectorFunc"));
        let width = decode_signature(cx, i, f, comp, ldim, Some(()));
        if let (Some(w), Some((bi, sizes))) = (width, block_sizes(cx, lay))
            && let Some(&last) = sizes.last()
            && let Some(b) = cx.const_value(last)
            && b % w as u64 != 0
        {
            cx.err(
                &DV_BLOCK_MULTIPLE,
                i,
                format!(
                    "blockSize[Dim-1] = {b} is not a multiple of the DecodeVectorFunc width {w}"
                ),
            )
            .at(bi, "block size set here");
        }
    }
    if !load
        && let Some((bi, sizes)) = block_sizes(cx, lay)
        && let Some(b) = sizes
            .iter()
            .filter_map(|&s| cx.const_value(s))
            .find(|&b| b > 1)
    {
        cx.err(&NV2_STORE_BLOCK, i, format!("a tensor layout with block size {b} cannot be used with OpCooperativeMatrixStoreTensorNV"))
                    .at(bi, "block size set here");
    }
}

/// Checks a DecodeFunc (`vector` None) or DecodeVectorFunc signature; returns the vector width.
fn decode_signature(
    cx: &mut Ctx,
    i: usize,
    f: u32,
    comp: Option<u32>,
    ldim: Option<u64>,
    vector: Option<()>,
) -> Option<u32> {
    let (what, func_rule, params_rule, ret_rule) = match vector {
        None => (
            "DecodeFunc",
            &NV2_DECODE_FUNC,
            &NV2_DECODE_PARAMS,
            &NV2_DECODE_FUNC,
        ),
        Some(()) => ("DecodeVectorFunc", &NV2_DECODE_FUNC, &DV_PARAMS, &DV_RETURN),
    };
    let Some(func) = cx.m.function(f) else {
        cx.err(
            func_rule,
            i,
            format!("{what} {} is not an OpFunction", cx.name(f)),
        );
        return None;
    };
    let def = func.def;
    let params = func.params.clone();
    let ret = cx.m.instructions[def].result_type.unwrap_or(0);
    let mut width = None;
    match vector {
        None => {
            if comp.is_some_and(|c| c != ret) {
                cx.err(
                    ret_rule,
                    i,
                    format!(
                        "{what} must return the matrix component type {}",
                        cx.type_name(comp.unwrap_or(0))
                    ),
                )
                .at(def, what);
            }
        }
        Some(()) => match cx.ty(ret) {
            Ty::Vector { comp: c, count }
                if matches!(count, 2 | 4 | 8) && comp.is_none_or(|mc| mc == c) =>
            {
                width = Some(count)
            }
            // OpTypeVectorIdEXT (LongVectorEXT): the length may be a specialization constant.
            Ty::CoopVec { comp: c, count }
                if comp.is_none_or(|mc| mc == c)
                    && cx
                        .const_or_default(count)
                        .is_none_or(|n| matches!(n, 2 | 4 | 8)) =>
            {
                width = cx.const_value(count).map(|n| n as u32)
            }
            _ => {
                cx.err(ret_rule, i, format!("{what} must return a vector of 2, 4 or 8 components of the matrix component type"))
                    .at(def, what);
            }
        },
    }
    if params.len() != 3 {
        cx.err(
            params_rule,
            i,
            format!(
                "{what} must have exactly 3 parameters, found {}",
                params.len()
            ),
        )
        .at(def, what);
        return width;
    }
    let p0 = cx.m.instructions[params[0]].result_type.unwrap_or(0);
    if !matches!(
        cx.ty(p0),
        Ty::Pointer {
            storage: sc::PhysicalStorageBuffer,
            ..
        }
    ) {
        let rule = if vector.is_some() {
            &DV_PARAMS
        } else {
            &NV2_DECODE_FUNC
        };
        cx.err(
            rule,
            i,
            format!("{what}'s first parameter must be a pointer in PhysicalStorageBuffer storage"),
        )
        .at(params[0], "parameter");
    }
    for (n, &p) in params.iter().enumerate().skip(1) {
        let pt = cx.m.instructions[p].result_type.unwrap_or(0);
        let ok = match cx.ty(pt) {
            Ty::Array { elem, len } => {
                cx.is_int32(elem)
                    && match (cx.const_value(len), ldim) {
                        (Some(l), Some(d)) => l == d,
                        _ => true,
                    }
            }
            _ => false,
        };
        if !ok {
            let dim = ldim.map(|d| d.to_string()).unwrap_or_else(|| "Dim".into());
            cx.err(
                params_rule,
                i,
                format!(
                    "{what}'s parameter {} must be an array of {dim} 32-bit integers",
                    n + 1
                ),
            )
            .at(p, "parameter");
        }
    }
    width
}

fn reduce(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let rt = inst.result_type.unwrap_or(0);
    let src = cx.op_word(inst, 2);
    let (Some(r), Some(s)) = (cx.mat(rt).filter(|m| m.khr), cx.vmat(src).filter(|m| m.khr)) else {
        cx.err(
            &NV2_REDUCE,
            i,
            "Result Type and Matrix must be OpTypeCooperativeMatrixKHR",
        );
        return;
    };
    let v = |id: u32| cx.val(id);
    if r.comp != s.comp {
        cx.err(
            &NV2_REDUCE,
            i,
            "Result Type and Matrix must have the same component type",
        );
    }
    let acc = Val::Known(usage::MatrixAccumulatorKHR as u64);
    if v(r.usage).differs(acc) || v(s.usage).differs(acc) {
        cx.err(
            &NV2_REDUCE,
            i,
            "Result Type and Matrix must both have Use MatrixAccumulatorKHR",
        );
    }
    if v(r.scope).differs(v(s.scope)) {
        cx.err(
            &NV2_REDUCE,
            i,
            "Result Type and Matrix must have the same scope",
        );
    }
    let mode = cx.op_word(inst, 3);
    let row = mode & red::Row != 0;
    let col = mode & red::Column != 0;
    let quad = mode & red::_2x2 != 0;
    if mode == 0 || (quad && (row || col)) {
        cx.err(
            &NV2_REDUCE,
            i,
            "Reduce must be Row, Column, Row|Column or 2x2 (2x2 cannot be combined)",
        );
    } else if quad {
        let half = |a: Val, b: Val| matches!((a, b), (Val::Known(x), Val::Known(y)) if x * 2 != y);
        if half(v(r.rows), v(s.rows)) || half(v(r.cols), v(s.cols)) {
            cx.err(
                &NV2_REDUCE,
                i,
                "with 2x2 the result must have half the rows and half the columns of Matrix",
            );
        }
    } else if row && !col && v(r.rows).differs(v(s.rows)) {
        cx.err(
            &NV2_REDUCE,
            i,
            "with Row the result must have the same number of rows as Matrix",
        );
    } else if col && !row && v(r.cols).differs(v(s.cols)) {
        cx.err(
            &NV2_REDUCE,
            i,
            "with Column the result must have the same number of columns as Matrix",
        );
    }
    let f = cx.op_word(inst, 4);
    let Some(func) = cx.m.function(f) else {
        cx.err(
            &NV2_REDUCE_FUNC,
            i,
            format!("CombineFunc {} is not an OpFunction", cx.name(f)),
        );
        return;
    };
    let def = func.def;
    let ptys: Vec<u32> = func
        .params
        .iter()
        .map(|&p| cx.m.instructions[p].result_type.unwrap_or(0))
        .collect();
    let ret = cx.m.instructions[def].result_type.unwrap_or(0);
    if ptys.len() != 2 || ptys.iter().any(|&t| t != s.comp) || ret != s.comp {
        cx.err(
            &NV2_REDUCE_FUNC,
            i,
            format!(
                "CombineFunc must take two {} parameters and return {}",
                cx.type_name(s.comp),
                cx.type_name(s.comp)
            ),
        )
        .at(def, "CombineFunc");
    }
}

fn per_element(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let rt = inst.result_type.unwrap_or(0);
    let src = cx.op_word(inst, 2);
    let Some(s) = cx.vmat(src).filter(|m| m.khr) else {
        cx.err(
            &NV2_PER_ELEMENT,
            i,
            "Matrix must be an OpTypeCooperativeMatrixKHR",
        );
        return;
    };
    if cx.vty(src) != rt {
        cx.err(
            &NV2_PER_ELEMENT,
            i,
            "Result Type must be the type of Matrix",
        );
    }
    let f = cx.op_word(inst, 3);
    let Some(func) = cx.m.function(f) else {
        cx.err(
            &NV2_PER_ELEMENT,
            i,
            format!("Func {} is not an OpFunction", cx.name(f)),
        );
        return;
    };
    let def = func.def;
    let ptys: Vec<(usize, u32)> = func
        .params
        .iter()
        .map(|&p| (p, cx.m.instructions[p].result_type.unwrap_or(0)))
        .collect();
    let ret = cx.m.instructions[def].result_type.unwrap_or(0);
    if ret != s.comp {
        cx.err(
            &NV2_PER_ELEMENT,
            i,
            format!(
                "Func must return the component type {}",
                cx.type_name(s.comp)
            ),
        )
        .at(def, "Func");
    }
    let extra = inst.operands.len().saturating_sub(4);
    if ptys.len() != 3 + extra {
        cx.err(
            &NV2_PER_ELEMENT,
            i,
            format!(
                "Func must take {} parameters (row, column, element and {} operand(s)), found {}",
                3 + extra,
                extra,
                ptys.len()
            ),
        )
        .at(def, "Func");
        return;
    }
    for (k, &(p, t)) in ptys.iter().enumerate().take(2) {
        if !cx.is_int32(t) {
            cx.err(
                &NV2_PER_ELEMENT,
                i,
                format!("Func parameter {} must be a 32-bit integer", k + 1),
            )
            .at(p, "parameter");
        }
    }
    if ptys[2].1 != s.comp {
        cx.err(
            &NV2_PER_ELEMENT,
            i,
            "Func parameter 3 must have the component type",
        )
        .at(ptys[2].0, "parameter");
    }
    for k in 0..extra {
        let o = cx.op_word(inst, 4 + k);
        let ot = cx.vty(o);
        let (p, pt) = ptys[3 + k];
        let ok = if cx.is_coop_type(ot) {
            ot == rt && pt == s.comp
        } else {
            ot == pt
        };
        if !ok {
            cx.err(&NV2_PER_ELEMENT, i, format!("operand {} does not match Func parameter {} (a matrix operand must have Matrix's type and the parameter its component type)", cx.name(o), 4 + k))
                .at(p, "parameter");
        }
    }
}

fn convert_use(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let rt = inst.result_type.unwrap_or(0);
    let src = cx.op_word(inst, 2);
    let (Some(r), Some(s)) = (cx.mat(rt).filter(|m| m.khr), cx.vmat(src).filter(|m| m.khr)) else {
        cx.err(
            &NV2_CONVERT_USE,
            i,
            "Result Type and Matrix must be OpTypeCooperativeMatrixKHR",
        );
        return;
    };
    let v = |id: u32| cx.val(id);
    if r.comp != s.comp
        || v(r.scope).differs(v(s.scope))
        || v(r.rows).differs(v(s.rows))
        || v(r.cols).differs(v(s.cols))
    {
        cx.err(
            &NV2_CONVERT_USE,
            i,
            "Result Type and Matrix must have the same component type, scope, rows and columns",
        );
    }
    let (ru, su) = (v(r.usage), v(s.usage));
    if cx.has_cap(capability::CooperativeMatrixConversionsEXT)
        && !cx.has_cap(capability::CooperativeMatrixConversionsNV)
    {
        if !ru.differs(su) && ru.known().is_some() {
            cx.err(&NV2_CONVERT_USE, i, "the conversion must change Use");
        }
    } else if su.differs(Val::Known(usage::MatrixAccumulatorKHR as u64))
        || ru.differs(Val::Known(0)) && ru.differs(Val::Known(1))
    {
        cx.err(
            &NV2_CONVERT_USE,
            i,
            format!(
                "converts MatrixAccumulatorKHR to MatrixAKHR or MatrixBKHR, found {} to {}",
                use_name(su),
                use_name(ru)
            ),
        );
    }
}

fn transpose(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let rt = inst.result_type.unwrap_or(0);
    let src = cx.op_word(inst, 2);
    let (Some(r), Some(s)) = (cx.mat(rt).filter(|m| m.khr), cx.vmat(src).filter(|m| m.khr)) else {
        cx.err(
            &NV2_TRANSPOSE,
            i,
            "Result Type and Matrix must be OpTypeCooperativeMatrixKHR",
        );
        return;
    };
    let v = |id: u32| cx.val(id);
    if v(r.scope).differs(v(s.scope))
        || v(r.rows).differs(v(s.cols))
        || v(r.cols).differs(v(s.rows))
    {
        cx.err(
            &NV2_TRANSPOSE,
            i,
            "the result must have Matrix's scope with Rows and Columns swapped",
        );
    }
    if v(s.usage).differs(Val::Known(usage::MatrixAccumulatorKHR as u64))
        || v(r.usage).differs(Val::Known(usage::MatrixBKHR as u64))
    {
        cx.err(
            &NV2_TRANSPOSE,
            i,
            format!(
                "transposes MatrixAccumulatorKHR to MatrixBKHR, found {} to {}",
                use_name(v(s.usage)),
                use_name(v(r.usage))
            ),
        );
    }
    if r.comp != s.comp {
        cx.err(
            &NV2_TRANSPOSE_COMPONENT,
            i,
            format!(
                "component types differ: {} to {}",
                cx.type_name(s.comp),
                cx.type_name(r.comp)
            ),
        )
        .rel_id(rt, "Result Type")
        .rel_id(cx.vty(src), "Matrix type");
    }
}

fn workgroup_size_specified(cx: &mut Ctx, type_inst: usize) {
    let m = cx.m;
    let has_mode = m.instructions.iter().any(|inst| {
        matches!(inst.opcode, op::ExecutionMode | op::ExecutionModeId)
            && matches!(
                inst.w(1),
                Some(execution_mode::LocalSize | execution_mode::LocalSizeId)
            )
    });
    let has_builtin = m.instructions.iter().any(|inst| {
        inst.opcode == op::Decorate
            && inst.w(1) == Some(decoration::BuiltIn)
            && inst.w(2) == Some(coopmat_spirv::grammar::built_in::WorkgroupSize)
    });
    if !has_mode && !has_builtin {
        cx.err(&NV2_WORKGROUP_SIZE, type_inst, "a Workgroup-scope cooperative matrix type needs the workgroup size specified in the module (LocalSize, LocalSizeId or WorkgroupSize)");
    }
}

// ---- tensor addressing ------------------------------------------------------------------

fn create_tensor(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let rt = inst.result_type.unwrap_or(0);
    let ok = match inst.opcode {
        op::CreateTensorLayoutNV => matches!(cx.ty(rt), Ty::Layout { .. }),
        _ => matches!(cx.ty(rt), Ty::View { .. }),
    };
    if !ok {
        cx.err(
            &TA_CREATE,
            i,
            format!(
                "Result Type {} must be a tensor {} type",
                cx.name(rt),
                if inst.opcode == op::CreateTensorLayoutNV {
                    "layout"
                } else {
                    "view"
                }
            ),
        );
    }
}

fn tensor_set(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let rt = inst.result_type.unwrap_or(0);
    let obj = cx.op_word(inst, 2);
    let layout_op = matches!(
        inst.opcode,
        op::TensorLayoutSetDimensionNV
            | op::TensorLayoutSetStrideNV
            | op::TensorLayoutSliceNV
            | op::TensorLayoutSetClampValueNV
            | op::TensorLayoutSetBlockSizeNV
    );
    let ty_ok = if layout_op {
        matches!(cx.ty(rt), Ty::Layout { .. })
    } else {
        matches!(cx.ty(rt), Ty::View { .. })
    };
    if !ty_ok {
        cx.err(
            &TA_OPERAND_TYPES,
            i,
            format!(
                "Result Type must be a tensor {} type",
                if layout_op { "layout" } else { "view" }
            ),
        );
        return;
    }
    if cx.vty(obj) != rt {
        cx.err(
            &TA_OPERAND_TYPES,
            i,
            format!(
                "the input object {} must have the Result Type",
                cx.name(obj)
            ),
        )
        .rel_id(cx.vty(obj), "its type");
    }
    let n = inst.operands.len().saturating_sub(3);
    let expect = match (inst.opcode, tensor_dim(cx, rt)) {
        (op::TensorViewSetClipNV, _) => Some(4),
        (op::TensorLayoutSetClampValueNV, _) => Some(1),
        (op::TensorLayoutSliceNV, Some(d)) => Some(2 * d as usize),
        (_, Some(d)) => Some(d as usize),
        _ => None,
    };
    if let Some(e) = expect
        && e != n
    {
        cx.err(
            &TA_OPERANDS,
            i,
            format!(
                "{} operands expected for this tensor dimension, found {n}",
                e
            ),
        )
        .rel_id(rt, "tensor type");
    }
    for k in 3..inst.operands.len() {
        let v = cx.op_word(inst, k);
        if !cx.is_int32_value(v) {
            cx.err(
                &TA_OPERAND_TYPES,
                i,
                format!("operand {} must be a scalar 32-bit integer", cx.name(v)),
            );
            break;
        }
    }
}

// ---- QCOM -------------------------------------------------------------------------------

fn qcom_elem_ok(cx: &Ctx, elem: u32) -> bool {
    matches!(
        cx.ty(elem),
        Ty::Int { width: 32, .. }
            | Ty::Float {
                width: 32 | 16,
                encoding: None
            }
    )
}

fn array_of(cx: &Ctx, ty: u32) -> Option<(u32, Option<u64>)> {
    match cx.ty(ty) {
        Ty::Array { elem, len } => Some((elem, cx.const_value(len))),
        _ => None,
    }
}

fn qcom_bitcast(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let rt = inst.result_type.unwrap_or(0);
    let src = cx.op_word(inst, 2);
    let (Some((re, rl)), Some((se, sl))) = (array_of(cx, rt), array_of(cx, cx.vty(src))) else {
        cx.err(
            &QCOM_BITCAST_ARRAY,
            i,
            "Result Type and Source Array must be one-dimensional arrays",
        );
        return;
    };
    if !qcom_elem_ok(cx, re) || !qcom_elem_ok(cx, se) {
        cx.err(
            &QCOM_BITCAST_ARRAY,
            i,
            "array elements must be 32-bit integers, fp32 or fp16",
        );
        return;
    }
    if let (Some(rl), Some(sl), Some(rw), Some(sw)) = (rl, sl, cx.width(re), cx.width(se))
        && rl * rw as u64 != sl * sw as u64
    {
        cx.err(
            &QCOM_BITCAST_ARRAY,
            i,
            format!(
                "total sizes differ: {} bits to {} bits",
                sl * sw as u64,
                rl * rw as u64
            ),
        );
    }
}

fn qcom_construct(cx: &mut Ctx, i: usize, inst: &Instruction, construct: bool) {
    let rule = if construct {
        &QCOM_CONSTRUCT
    } else {
        &QCOM_EXTRACT
    };
    let rt = inst.result_type.unwrap_or(0);
    let other = cx.op_word(inst, 2);
    let (mat_ty, arr_ty) = if construct {
        (rt, cx.vty(other))
    } else {
        (cx.vty(other), rt)
    };
    let Some(mt) = cx.mat(mat_ty).filter(|m| m.khr) else {
        cx.err(
            rule,
            i,
            if construct {
                "Result Type must be an OpTypeCooperativeMatrixKHR"
            } else {
                "the source must be a cooperative matrix"
            },
        );
        return;
    };
    let Some((elem, len)) = array_of(cx, arr_ty) else {
        cx.err(
            rule,
            i,
            "the per-invocation value must be a one-dimensional array",
        );
        return;
    };
    if cx.val(mt.scope).differs(Val::Known(scope::Subgroup as u64)) {
        cx.err(rule, i, "the cooperative matrix must have Subgroup scope");
    }
    let packed = matches!(
        cx.ty(elem),
        Ty::Int {
            width: 32,
            signed: false
        }
    ) && elem != mt.comp;
    if elem != mt.comp && !packed {
        cx.err(
            rule,
            i,
            format!(
                "array elements must be the component type {} or a 32-bit unsigned integer",
                cx.type_name(mt.comp)
            ),
        );
        return;
    }
    let cw = cx.width(mt.comp).unwrap_or(32) as u64;
    let (Some(u), rows, cols) = (
        cx.val(mt.usage).known(),
        cx.val(mt.rows).known(),
        cx.val(mt.cols).known(),
    ) else {
        return;
    };
    let is_float = matches!(cx.ty(mt.comp), Ty::Float { .. });
    let comp_ok = match u {
        0 | 1 => matches!((cw, is_float), (8, false) | (32, true) | (16, true)),
        _ => matches!((cw, is_float), (32, false) | (32, true) | (16, true)),
    };
    if !comp_ok {
        cx.err(
            rule,
            i,
            format!(
                "component type {} is not allowed for this Use",
                cx.type_name(mt.comp)
            ),
        );
        return;
    }
    // Use A: Columns span 256 bits; Use B: Rows span 256 bits (one row/column per invocation).
    let span = 256 / cw;
    let (fixed, line) = match u {
        0 => (cols, cols),
        1 => (rows, rows),
        _ => (None, cols),
    };
    if u <= 1 && fixed.is_some_and(|f| f != span) {
        cx.err(
            rule,
            i,
            format!(
                "with Use {} the {} must be {span} for {}",
                use_name(Val::Known(u)),
                if u == 0 { "Columns" } else { "Rows" },
                cx.type_name(mt.comp)
            ),
        );
        return;
    }
    let want = match (u, packed) {
        (0 | 1, true) => Some(8),
        (0 | 1, false) => line,
        (_, true) if cw == 16 => line.map(|c| c / 2),
        (_, _) => line,
    };
    if let (Some(w), Some(l)) = (want, len)
        && w != l
    {
        cx.err(
            rule,
            i,
            format!("the array must have {w} elements, found {l}"),
        );
    }
}

fn qcom_sub_array(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let rt = inst.result_type.unwrap_or(0);
    let src = cx.op_word(inst, 2);
    let idx = cx.op_word(inst, 3);
    let (Some((re, rl)), Some((se, sl))) = (array_of(cx, rt), array_of(cx, cx.vty(src))) else {
        cx.err(
            &QCOM_SUB_ARRAY,
            i,
            "Result Type and Source Array must be one-dimensional arrays",
        );
        return;
    };
    if re != se || !qcom_elem_ok(cx, re) {
        cx.err(
            &QCOM_SUB_ARRAY,
            i,
            "the result must be an array of the source's element type (i32, u32, f32 or f16)",
        );
    }
    if !cx.is_int32_value(idx) {
        cx.err(&QCOM_SUB_ARRAY, i, "Start Index must be a 32-bit integer");
    }
    if let (Some(rl), Some(sl)) = (rl, sl) {
        if rl > sl {
            cx.err(
                &QCOM_SUB_ARRAY,
                i,
                format!("the result ({rl} elements) is longer than the source ({sl})"),
            );
        } else if let Some(s) = cx.const_value(idx)
            && s + rl > sl
        {
            cx.err(
                &QCOM_SUB_ARRAY,
                i,
                format!("Start Index {s} + {rl} exceeds the source length {sl}"),
            );
        }
    }
}

// ---- cooperative vector -----------------------------------------------------------------

fn coopvec_storage_ok(s: u32, workgroup: bool) -> bool {
    matches!(
        s,
        sc::StorageBuffer | sc::PhysicalStorageBuffer | sc::CrossWorkgroup
    ) || (workgroup && s == sc::Workgroup)
}

fn coopvec_load_store(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let load = inst.opcode == op::CooperativeVectorLoadNV;
    let base = if load { 2 } else { 0 };
    let ptr = cx.op_word(inst, base);
    let off = cx.op_word(inst, base + 1);
    let vt = if load {
        inst.result_type.unwrap_or(0)
    } else {
        cx.vty(cx.op_word(inst, 2))
    };
    if !matches!(cx.ty(vt), Ty::CoopVec { .. }) {
        cx.err(
            &CV_LOAD_STORE,
            i,
            "the loaded or stored object must be an OpTypeCooperativeVectorNV",
        );
    }
    match cx.vshape_ty(ptr) {
        Ty::Pointer { storage, pointee } => {
            if !coopvec_storage_ok(storage, true) {
                cx.err(&CV_LOAD_STORE, i, "Pointer must be in Workgroup, StorageBuffer, PhysicalStorageBuffer or CrossWorkgroup storage");
            }
            if !matches!(cx.ty(pointee), Ty::Array { .. } | Ty::RuntimeArray { .. }) {
                cx.err(&CV_LOAD_STORE, i, "Pointer must point to an array");
            }
        }
        Ty::OpaquePointer { .. } => {}
        _ => {
            cx.err(&CV_LOAD_STORE, i, "Pointer is not a pointer");
        }
    }
    if !cx.is_int32_value(off) {
        cx.err(&CV_LOAD_STORE, i, "Offset must be a 32-bit integer");
    }
}

fn coopvec_matmul(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let add = inst.opcode == op::CooperativeVectorMatrixMulAddNV;
    let rt = inst.result_type.unwrap_or(0);
    if !matches!(cx.ty(rt), Ty::CoopVec { .. }) {
        cx.err(
            &CV_MATMUL,
            i,
            "Result Type must be a cooperative vector type",
        );
    }
    let input = cx.op_word(inst, 2);
    if !matches!(cx.vshape_ty(input), Ty::CoopVec { .. }) {
        cx.err(&CV_MATMUL, i, "Input must be a cooperative vector");
    }
    let mut ptrs = vec![(cx.op_word(inst, 4), cx.op_word(inst, 5), "Matrix")];
    let mut consts = vec![
        (cx.op_word(inst, 3), "InputInterpretation"),
        (cx.op_word(inst, 6), "MatrixInterpretation"),
    ];
    let rest = if add {
        ptrs.push((cx.op_word(inst, 7), cx.op_word(inst, 8), "Bias"));
        consts.push((cx.op_word(inst, 9), "BiasInterpretation"));
        10
    } else {
        7
    };
    // "The number of components of 'Result Type' must equal 'M'"; unless the input
    // interpretation is packed, "'Input' must have 'K' components" (SPV_NV_cooperative_vector).
    let (m_id, k_id) = (cx.op_word(inst, rest), cx.op_word(inst, rest + 1));
    if let (Ty::CoopVec { count, .. }, Some(mv)) = (cx.ty(rt), cx.const_value(m_id))
        && cx.const_value(count).is_some_and(|c| c != mv)
    {
        cx.err(
            &CV_MATMUL,
            i,
            format!(
                "Result Type has {} components but M is {mv}",
                cx.const_value(count).unwrap_or(0)
            ),
        );
    }
    let packed = cx.const_value(cx.op_word(inst, 3)).is_some_and(|v| {
        v == coopmat_spirv::grammar::component_type::SignedInt8PackedNV as u64
            || v == coopmat_spirv::grammar::component_type::UnsignedInt8PackedNV as u64
    });
    if let (false, Ty::CoopVec { count, .. }, Some(kv)) =
        (packed, cx.ty(cx.vty(input)), cx.const_value(k_id))
        && cx.const_value(count).is_some_and(|c| c != kv)
    {
        cx.err(
            &CV_MATMUL,
            i,
            format!(
                "Input has {} components but K is {kv}",
                cx.const_value(count).unwrap_or(0)
            ),
        );
    }
    consts.push((cx.op_word(inst, rest), "M"));
    consts.push((cx.op_word(inst, rest + 1), "K"));
    consts.push((cx.op_word(inst, rest + 2), "MemoryLayout"));
    for (p, off, what) in ptrs {
        match cx.storage_of(p) {
            Some(s) if coopvec_storage_ok(s, false) => {}
            _ => {
                cx.err(&CV_MATMUL, i, format!("{what} must be a pointer in StorageBuffer, PhysicalStorageBuffer or CrossWorkgroup storage"));
            }
        }
        if !cx.is_int32_value(off) {
            cx.err(
                &CV_MATMUL,
                i,
                format!("{what}Offset must be a 32-bit integer"),
            );
        }
    }
    for (c, what) in consts {
        if !cx.is_constant(c) || !cx.is_int32_value(c) {
            cx.err(
                &CV_MATMUL,
                i,
                format!("{what} must be a 32-bit integer constant instruction"),
            );
        }
    }
    let tr = cx.op_word(inst, rest + 3);
    if !cx.is_constant(tr) || cx.ty(cx.vty(tr)) != Ty::Bool {
        cx.err(
            &CV_MATMUL,
            i,
            "Transpose must be a boolean constant instruction",
        );
    }
}

fn coopvec_accumulate(cx: &mut Ctx, i: usize, inst: &Instruction) {
    let ptr = cx.op_word(inst, 0);
    let off = cx.op_word(inst, 1);
    match cx.storage_of(ptr) {
        Some(s) if coopvec_storage_ok(s, true) => {}
        _ => {
            cx.err(&CV_ACCUMULATE, i, "Pointer must be a pointer in Workgroup, StorageBuffer, PhysicalStorageBuffer or CrossWorkgroup storage");
        }
    }
    if !cx.is_int32_value(off) {
        cx.err(&CV_ACCUMULATE, i, "Offset must be a 32-bit integer");
    }
    if inst.opcode == op::CooperativeVectorOuterProductAccumulateNV {
        let a = cx.vshape_ty(cx.op_word(inst, 2));
        let b = cx.vshape_ty(cx.op_word(inst, 3));
        match (a, b) {
            (Ty::CoopVec { comp: ca, .. }, Ty::CoopVec { comp: cb, .. }) if ca == cb => {}
            _ => {
                cx.err(
                    &CV_ACCUMULATE,
                    i,
                    "A and B must be cooperative vectors with the same component type",
                );
            }
        }
    } else if !matches!(cx.vshape_ty(cx.op_word(inst, 2)), Ty::CoopVec { .. }) {
        cx.err(&CV_ACCUMULATE, i, "V must be a cooperative vector");
    }
}

// ---- tangled instructions in callbacks --------------------------------------------------

/// Whether an instruction is tangled (executes across the invocations of a scope).
fn is_tangled(cx: &Ctx, inst: &Instruction) -> bool {
    let o = inst.opcode;
    if matches!(
        o,
        op::ControlBarrier
            | op::CooperativeMatrixLoadKHR
            | op::CooperativeMatrixStoreKHR
            | op::CooperativeMatrixMulAddKHR
            | op::CooperativeMatrixLoadNV
            | op::CooperativeMatrixStoreNV
            | op::CooperativeMatrixMulAddNV
            | op::CooperativeMatrixLoadTensorNV
            | op::CooperativeMatrixStoreTensorNV
            | op::CooperativeMatrixReduceNV
            | op::CooperativeMatrixConvertNV
            | op::CooperativeMatrixTransposeNV
            | op::CooperativeMatrixPerElementOpNV
            | op::CompositeConstructCoopMatQCOM
            | op::CompositeExtractCoopMatQCOM
    ) {
        return true;
    }
    let class = crate::ctx::desc(inst.opcode).map(|d| d.class).unwrap_or("");
    if matches!(class, "Group" | "Non-Uniform" | "Derivative") {
        return true;
    }
    if (is_arith(o)
        || is_conversion(o)
        || matches!(
            o,
            op::CompositeConstruct | op::CompositeConstructReplicateEXT | op::MatrixTimesScalar
        ))
        && (inst.result_type.is_some_and(|t| cx.is_coop_type(t))
            || (inst.first_arg()..inst.operands.len())
                .any(|k| cx.is_coop_type(cx.vty(inst.w(k).unwrap_or(0)))))
    {
        return true;
    }
    false
}

fn no_tangled(cx: &mut Ctx, callbacks: &[(usize, u32, &'static str)]) {
    if callbacks.is_empty() {
        return;
    }
    let m = cx.m;
    // Direct facts per function: first tangled instruction and callees.
    let mut direct: HashMap<u32, (Option<usize>, Vec<u32>)> = HashMap::new();
    for f in m.functions() {
        let mut first = None;
        let mut callees = Vec::new();
        for b in &f.blocks {
            for i in b.body.clone() {
                let inst = &m.instructions[i];
                if inst.opcode == op::FunctionCall {
                    callees.push(inst.w(2).unwrap_or(0));
                }
                if first.is_none() && is_tangled(cx, inst) {
                    first = Some(i);
                }
            }
        }
        direct.insert(f.id, (first, callees));
    }
    let mut memo: HashMap<u32, Option<usize>> = HashMap::new();
    let mut reported: std::collections::HashSet<(u32, usize)> = Default::default();
    for &(i, f, what) in callbacks {
        let found = find_tangled(f, &direct, &mut memo, &mut Vec::new());
        if let Some(t) = found {
            if !reported.insert((f, i)) {
                continue;
            }
            let tname = crate::ctx::desc(m.instructions[t].opcode)
                .map(|d| d.name)
                .unwrap_or("?");
            let owner = m.owner(t).unwrap_or(0);
            let msg = if owner == f {
                format!(
                    "{what} {} contains the tangled instruction {tname}",
                    cx.name(f)
                )
            } else {
                format!(
                    "{what} {} calls {} which contains the tangled instruction {tname}",
                    cx.name(f),
                    cx.name(owner)
                )
            };
            cx.err(&NV2_NO_TANGLED, i, msg)
                .at(t, "tangled instruction")
                .rel_id(f, what);
        }
    }
}

fn find_tangled(
    f: u32,
    direct: &HashMap<u32, (Option<usize>, Vec<u32>)>,
    memo: &mut HashMap<u32, Option<usize>>,
    stack: &mut Vec<u32>,
) -> Option<usize> {
    if let Some(&r) = memo.get(&f) {
        return r;
    }
    // Recursion is invalid SPIR-V anyway; the depth cap keeps hostile call chains from
    // exhausting the stack (and bounds the `contains` scan).
    if stack.len() > 512 || stack.contains(&f) {
        return None;
    }
    let (first, callees) = direct.get(&f)?;
    let mut r = *first;
    if r.is_none() {
        stack.push(f);
        for &c in callees {
            if let Some(t) = find_tangled(c, direct, memo, stack) {
                r = Some(t);
                break;
            }
        }
        stack.pop();
    }
    memo.insert(f, r);
    r
}

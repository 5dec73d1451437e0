//! Vulkan device profiles: what a device reports for cooperative matrices
//! (VkCooperativeMatrixPropertiesKHR, VkCooperativeMatrixFlexibleDimensionsPropertiesNV,
//! VkPhysicalDeviceCooperativeMatrix2PropertiesNV/FeaturesNV, subgroup size) and the rules
//! that depend on it.

use crate::ctx::Words;
use crate::ctx::{Ctx, Ty};
use crate::rules::*;
use coopmat_spirv::coopvec::ComponentType;
use coopmat_spirv::grammar::{
    built_in, cooperative_matrix_layout as layout, cooperative_matrix_operands as mo, decoration,
    execution_mode, execution_model, fp_encoding, op, scope,
};
use serde::Deserialize;

/// Built-in profile: NVIDIA H100 with the 580 driver.
pub const NVIDIA_H100_580: &str = include_str!("../profiles/nvidia-h100-580.json");
/// What the coopmat engine advertises (the coopmat Vulkan driver reports this profile).
pub const COOPMAT_ENGINE: &str = include_str!("../profiles/coopmat-engine.json");
/// Built-in profile: Mesa 26 lavapipe.
pub const LAVAPIPE_26: &str = include_str!("../profiles/lavapipe-26.json");

/// One VkCooperativeMatrixPropertiesKHR entry.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct MatrixEntry {
    /// MSize.
    #[serde(rename = "M")]
    pub m: u32,
    /// NSize.
    #[serde(rename = "N")]
    pub n: u32,
    /// KSize.
    #[serde(rename = "K")]
    pub k: u32,
    /// AType (e.g. `float16`, `sint8`, `bfloat16`).
    #[serde(rename = "A")]
    pub a: String,
    /// BType.
    #[serde(rename = "B")]
    pub b: String,
    /// CType.
    #[serde(rename = "C")]
    pub c: String,
    /// ResultType.
    #[serde(rename = "Result")]
    pub result: String,
    /// saturatingAccumulation.
    #[serde(default)]
    pub saturating: bool,
    /// `subgroup` or `workgroup`.
    pub scope: String,
}

/// One VkCooperativeMatrixFlexibleDimensionsPropertiesNV entry.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct FlexEntry {
    /// MGranularity.
    #[serde(rename = "M_granularity")]
    pub m: u32,
    /// NGranularity.
    #[serde(rename = "N_granularity")]
    pub n: u32,
    /// KGranularity.
    #[serde(rename = "K_granularity")]
    pub k: u32,
    /// AType.
    #[serde(rename = "A")]
    pub a: String,
    /// BType.
    #[serde(rename = "B")]
    pub b: String,
    /// CType.
    #[serde(rename = "C")]
    pub c: String,
    /// ResultType.
    #[serde(rename = "Result")]
    pub result: String,
    /// saturatingAccumulation.
    #[serde(default)]
    pub saturating: bool,
    /// `subgroup` or `workgroup`.
    pub scope: String,
    /// workgroupInvocations (Workgroup scope only).
    #[serde(default)]
    pub workgroup_invocations: u32,
}

/// VkPhysicalDeviceCooperativeMatrix2FeaturesNV (0/1 as the probe prints them).
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct Features {
    /// cooperativeMatrixWorkgroupScope.
    #[serde(default)]
    pub workgroup_scope: u32,
    /// cooperativeMatrixFlexibleDimensions.
    #[serde(default)]
    pub flexible_dimensions: u32,
    /// cooperativeMatrixReductions.
    #[serde(default)]
    pub reductions: u32,
    /// cooperativeMatrixConversions.
    #[serde(default)]
    pub conversions: u32,
    /// cooperativeMatrixPerElementOperations.
    #[serde(default)]
    pub per_element_operations: u32,
    /// cooperativeMatrixTensorAddressing.
    #[serde(default)]
    pub tensor_addressing: u32,
    /// cooperativeMatrixBlockLoads.
    #[serde(default)]
    pub block_loads: u32,
}

/// One VkCooperativeVectorPropertiesNV entry (component types by their short names:
/// `coopmat_spirv::coopvec::ComponentType::name`).
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct CoopVecEntry {
    /// inputType.
    pub input_type: String,
    /// inputInterpretation.
    pub input_interpretation: String,
    /// matrixInterpretation.
    pub matrix_interpretation: String,
    /// biasInterpretation.
    pub bias_interpretation: String,
    /// resultType.
    pub result_type: String,
    /// transpose.
    pub transpose: bool,
}

/// The device's cooperative-vector support (VK_NV_cooperative_vector): absent from a profile
/// means unknown (not checked); present with no combinations means the device has none.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct CoopVecProfile {
    /// vkGetPhysicalDeviceCooperativeVectorPropertiesNV.
    #[serde(default)]
    pub combinations: Vec<CoopVecEntry>,
    /// maxCooperativeVectorComponents.
    #[serde(default)]
    pub max_components: u32,
    /// The cooperativeVectorTraining feature.
    #[serde(default)]
    pub training: bool,
    /// cooperativeVectorTrainingFloat16Accumulation.
    #[serde(default)]
    pub training_f16_accumulation: bool,
    /// cooperativeVectorTrainingFloat32Accumulation.
    #[serde(default)]
    pub training_f32_accumulation: bool,
}

/// A measured cost of cooperative-matrix loads by memory layout (`bench/layout/`): loading a
/// matrix of this Use and component type with `layout` took `percent` % of the time the same
/// loads took with `baseline`.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct LayoutCost {
    /// `A`, `B` or `Accumulator`.
    #[serde(rename = "use")]
    pub usage: String,
    /// Component type, as in `cooperative_matrix` (`float16`, `sint8`, ...).
    pub component: String,
    /// The layout measured (`RowMajor`, `ColumnMajor`).
    pub layout: String,
    /// The layout it is compared with.
    pub baseline: String,
    /// Time with `layout` per time with `baseline`, in percent.
    pub percent: u32,
}

/// A device profile (JSON; see crates/val/profiles/).
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct Profile {
    /// Profile name.
    #[serde(default)]
    pub name: String,
    /// Where the numbers come from.
    #[serde(default)]
    pub source: String,
    /// Device name.
    #[serde(default)]
    pub device: String,
    /// VkPhysicalDeviceSubgroupProperties::subgroupSize.
    #[serde(default)]
    pub subgroup_size: u32,
    /// cooperativeMatrixSupportedStages (VkShaderStageFlags; 0x20 = compute).
    #[serde(default = "compute_stage")]
    pub cooperative_matrix_supported_stages_mask: u32,
    /// coopmat2 features.
    #[serde(default)]
    pub features: Features,
    /// cooperativeMatrixWorkgroupScopeMaxWorkgroupSize.
    #[serde(default)]
    pub workgroup_scope_max_workgroup_size: u32,
    /// cooperativeMatrixFlexibleDimensionsMaxDimension.
    #[serde(default)]
    pub flexible_dimensions_max_dimension: u32,
    /// cooperativeMatrixWorkgroupScopeReservedSharedMemory.
    #[serde(default)]
    pub workgroup_scope_reserved_shared_memory: u32,
    /// Supported fixed-size tuples.
    #[serde(default)]
    pub cooperative_matrix: Vec<MatrixEntry>,
    /// Flexible-dimension tuples.
    #[serde(default)]
    pub flexible_dimensions: Vec<FlexEntry>,
    /// Cooperative-vector support (None: not recorded for this device).
    #[serde(default)]
    pub cooperative_vector: Option<CoopVecProfile>,
    /// Whether the device has VK_ARM_cooperative_matrix_layouts (the blocked-interleaved
    /// layouts).
    #[serde(default)]
    pub arm_layouts: bool,
    /// Measured load costs by layout (`coopmat lint`'s coopmat-layout-for-use).
    #[serde(default)]
    pub layout_costs: Vec<LayoutCost>,
    /// How `layout_costs` was measured.
    #[serde(default)]
    pub layout_costs_source: String,
}

fn compute_stage() -> u32 {
    0x20
}

impl Profile {
    /// Parses a profile from JSON.
    pub fn from_json(text: &str) -> Result<Profile, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// A built-in profile by name (`nvidia-h100-580`, `lavapipe-26`, `coopmat-engine`).
    pub fn builtin(name: &str) -> Option<Profile> {
        let text = match name {
            "nvidia-h100-580" => NVIDIA_H100_580,
            "lavapipe-26" => LAVAPIPE_26,
            "coopmat-engine" => COOPMAT_ENGINE,
            _ => return None,
        };
        Profile::from_json(text).ok()
    }

    /// Names of the built-in profiles.
    pub fn builtin_names() -> &'static [&'static str] {
        &["nvidia-h100-580", "lavapipe-26", "coopmat-engine"]
    }
}

/// A matrix type with every parameter known.
#[derive(Clone, Copy, Debug)]
struct Known {
    comp: u32,
    scope: u64,
    rows: u64,
    cols: u64,
    usage: u64,
}

fn known(cx: &Ctx, ty: u32) -> Option<Known> {
    match cx.ty(ty) {
        Ty::CoopKhr {
            comp,
            scope,
            rows,
            cols,
            usage,
        } => Some(Known {
            comp,
            scope: cx.const_value(scope)?,
            rows: cx.const_value(rows)?,
            cols: cx.const_value(cols)?,
            usage: cx.const_value(usage)?,
        }),
        _ => None,
    }
}

/// The VkComponentTypeKHR name of a SPIR-V component type, `signed` overriding integer signedness.
fn comp_name(cx: &Ctx, ty: u32, signed: Option<bool>) -> String {
    match cx.ty(ty) {
        Ty::Int { width, signed: s } => {
            format!("{}int{width}", if signed.unwrap_or(s) { "s" } else { "u" })
        }
        Ty::Float {
            width: 16,
            encoding: Some(fp_encoding::BFloat16KHR),
        } => "bfloat16".into(),
        Ty::Float {
            width: 8,
            encoding: Some(fp_encoding::Float8E4M3EXT),
        } => "float8_e4m3".into(),
        Ty::Float {
            width: 8,
            encoding: Some(fp_encoding::Float8E5M2EXT),
        } => "float8_e5m2".into(),
        Ty::Float { width, .. } => format!("float{width}"),
        _ => "unknown".into(),
    }
}

/// Compares a type name with a profile name; integers compare by width only when `any_sign`.
fn comp_eq(name: &str, want: &str, any_sign: bool) -> bool {
    if name == want {
        return true;
    }
    any_sign
        && name.len() > 1
        && want.len() > 1
        && name.ends_with("int") == want.ends_with("int")
        && {
            let strip = |s: &str| s.trim_start_matches(['s', 'u']).to_string();
            name.contains("int") && want.contains("int") && strip(name) == strip(want)
        }
}

fn scope_name(s: u64) -> &'static str {
    if s == scope::Workgroup as u64 {
        "workgroup"
    } else if s == scope::Subgroup as u64 {
        "subgroup"
    } else {
        "other"
    }
}

pub(crate) fn check(cx: &mut Ctx, p: &Profile) {
    let m = cx.m;
    let mut any_coop = false;
    let mut workgroup = None;
    let mut coopvec_absent = false;
    for (i, inst) in m.instructions.iter().enumerate() {
        match inst.opcode {
            op::TypeCooperativeMatrixKHR => {
                any_coop = true;
                let id = inst.result_id.unwrap_or(0);
                let Some(k) = known(cx, id) else { continue };
                if k.scope == scope::Workgroup as u64 {
                    workgroup.get_or_insert(i);
                    if p.features.workgroup_scope == 0 {
                        cx.err(&VK_SCOPE, i, format!("the device ({}) does not support Workgroup-scope cooperative matrices", p.name));
                    }
                }
                type_supported(cx, p, i, k);
            }
            op::CooperativeMatrixMulAddKHR => muladd(cx, p, i),
            op::TypeCooperativeVectorNV
            | op::CooperativeVectorMatrixMulNV
            | op::CooperativeVectorMatrixMulAddNV
            | op::CooperativeVectorOuterProductAccumulateNV
            | op::CooperativeVectorReduceSumAccumulateNV => {
                match &p.cooperative_vector {
                    // No cooperative vectors on the device: said once, at the first use.
                    Some(cv) if cv.combinations.is_empty() => {
                        if !coopvec_absent {
                            cx.err(&VK_COOPVEC_TYPE, i, format!("the device ({}) has no cooperative vectors (VK_NV_cooperative_vector)", p.name));
                        }
                        coopvec_absent = true;
                    }
                    Some(cv) => coopvec(cx, p, cv, i),
                    None => {}
                }
            }
            op::CooperativeMatrixLoadKHR | op::CooperativeMatrixStoreKHR => alignment(cx, i),
            _ => {}
        }
    }
    if any_coop {
        stages_and_sizes(cx, p, workgroup);
    }
}

/// The short name of the component type in constant `id` (an interpretation operand).
fn interpretation(cx: &Ctx, id: u32) -> Option<&'static str> {
    let v = u32::try_from(cx.const_value(id)?).ok()?;
    ComponentType::from_raw(v).map(ComponentType::name)
}

/// The short name of a SPIR-V scalar type as a cooperative-vector component type.
fn scalar_component(cx: &Ctx, ty: u32) -> Option<&'static str> {
    let t = match cx.ty(ty) {
        Ty::Int { width, signed } => match (width, signed) {
            (8, true) => ComponentType::S8,
            (16, true) => ComponentType::S16,
            (32, true) => ComponentType::S32,
            (64, true) => ComponentType::S64,
            (8, false) => ComponentType::U8,
            (16, false) => ComponentType::U16,
            (32, false) => ComponentType::U32,
            (64, false) => ComponentType::U64,
            _ => return None,
        },
        Ty::Float {
            width: 8,
            encoding: Some(fp_encoding::Float8E4M3EXT),
        } => ComponentType::E4M3,
        Ty::Float {
            width: 8,
            encoding: Some(fp_encoding::Float8E5M2EXT),
        } => ComponentType::E5M2,
        Ty::Float {
            width: 16,
            encoding: None,
        } => ComponentType::F16,
        Ty::Float {
            width: 32,
            encoding: None,
        } => ComponentType::F32,
        Ty::Float {
            width: 64,
            encoding: None,
        } => ComponentType::F64,
        _ => return None,
    };
    Some(t.name())
}

/// The component type name of cooperative vector type `ty`, and its component count when
/// constant.
fn coopvec_type(cx: &Ctx, ty: u32) -> Option<(&'static str, Option<u64>)> {
    match cx.ty(ty) {
        Ty::CoopVec { comp, count } => Some((scalar_component(cx, comp)?, cx.const_value(count))),
        _ => None,
    }
}

/// The profile rules of SPV_NV_cooperative_vector (Vulkan "Runtime SPIR-V Validation").
fn coopvec(cx: &mut Ctx, p: &Profile, cv: &CoopVecProfile, i: usize) {
    let inst = &cx.m.instructions[i];
    let opcode = inst.opcode;
    if cv.combinations.is_empty() {
        cx.err(
            &VK_COOPVEC_TYPE,
            i,
            format!(
                "the device ({}) has no cooperative vectors (VK_NV_cooperative_vector)",
                p.name
            ),
        );
        return;
    }
    match opcode {
        op::TypeCooperativeVectorNV => {
            let Some((comp, count)) = coopvec_type(cx, inst.result_id.unwrap_or(0)) else {
                return;
            };
            if let Some(n) = count
                && cv.max_components > 0
                && n > cv.max_components as u64
            {
                cx.err(
                    &VK_COOPVEC_TYPE,
                    i,
                    format!(
                        "{n} components exceed maxCooperativeVectorComponents {} of {}",
                        cv.max_components, p.name
                    ),
                );
            }
            let listed = cv
                .combinations
                .iter()
                .any(|e| e.input_type == comp || e.result_type == comp);
            if !listed {
                cx.err(&VK_COOPVEC_TYPE, i, format!("{comp} cooperative vectors: {} lists no combination with that input or result type", p.name));
            }
        }
        op::CooperativeVectorMatrixMulNV | op::CooperativeVectorMatrixMulAddNV => {
            use coopmat_spirv::grammar::operands::{
                CooperativeVectorMatrixMulAddNV as MulAdd, CooperativeVectorMatrixMulNV as Mul,
            };
            // Operand positions after the result type and id.
            let arg = |k: usize| inst.w(k + 2).unwrap_or(0);
            let add = opcode == op::CooperativeVectorMatrixMulAddNV;
            let (input, input_interp, matrix_interp, transpose) = if add {
                (
                    arg(MulAdd::INPUT),
                    arg(MulAdd::INPUT_INTERPRETATION),
                    arg(MulAdd::MATRIX_INTERPRETATION),
                    arg(MulAdd::TRANSPOSE),
                )
            } else {
                (
                    arg(Mul::INPUT),
                    arg(Mul::INPUT_INTERPRETATION),
                    arg(Mul::MATRIX_INTERPRETATION),
                    arg(Mul::TRANSPOSE),
                )
            };
            let bias = add.then(|| interpretation(cx, arg(MulAdd::BIAS_INTERPRETATION)));
            let result = coopvec_type(cx, inst.result_type.unwrap_or(0)).map(|t| t.0);
            let input = coopvec_type(cx, cx.vty(input)).map(|t| t.0);
            let (Some(input), Some(ii), Some(mi), Some(result)) = (
                input,
                interpretation(cx, input_interp),
                interpretation(cx, matrix_interp),
                result,
            ) else {
                return;
            };
            let bias = match bias {
                Some(None) => return,
                Some(Some(b)) => Some(b),
                None => None,
            };
            let transposed = cx.const_value(transpose).is_some_and(|t| t != 0);
            let matches = |e: &CoopVecEntry| {
                e.input_type == input
                    && e.input_interpretation == ii
                    && e.matrix_interpretation == mi
                    && bias.is_none_or(|b| e.bias_interpretation == b)
                    && e.result_type == result
            };
            let found = cv.combinations.iter().any(matches);
            let what = format!(
                "input {input}, input interpretation {ii}, matrix {mi}{}, result {result}",
                bias.map(|b| format!(", bias {b}")).unwrap_or_default()
            );
            if !found {
                cx.err(
                    &VK_COOPVEC_COMBINATION,
                    i,
                    format!("{what}: not a combination {} lists", p.name),
                );
            } else if transposed && !cv.combinations.iter().any(|e| matches(e) && e.transpose) {
                cx.err(
                    &VK_COOPVEC_COMBINATION,
                    i,
                    format!("{what}: {} does not support Transpose for it", p.name),
                );
            }
        }
        op::CooperativeVectorOuterProductAccumulateNV
        | op::CooperativeVectorReduceSumAccumulateNV => {
            use coopmat_spirv::grammar::operands::CooperativeVectorOuterProductAccumulateNV as Outer;
            let acc = if opcode == op::CooperativeVectorOuterProductAccumulateNV {
                interpretation(cx, inst.w(Outer::MATRIX_INTERPRETATION).unwrap_or(0))
            } else {
                use coopmat_spirv::grammar::operands::CooperativeVectorReduceSumAccumulateNV as Reduce;
                coopvec_type(cx, cx.vty(inst.w(Reduce::V).unwrap_or(0))).map(|t| t.0)
            };
            if !cv.training {
                cx.err(
                    &VK_COOPVEC_TRAINING,
                    i,
                    format!("{} does not support cooperativeVectorTraining", p.name),
                );
                return;
            }
            let ok = match acc {
                Some("float16") => cv.training_f16_accumulation,
                Some("float32") => cv.training_f32_accumulation,
                Some(_) => false,
                None => return,
            };
            if !ok {
                cx.err(
                    &VK_COOPVEC_TRAINING,
                    i,
                    format!(
                        "{} accumulation: {} does not support it",
                        acc.unwrap_or("?"),
                        p.name
                    ),
                );
            }
        }
        _ => {}
    }
}

fn type_supported(cx: &mut Ctx, p: &Profile, i: usize, k: Known) {
    let sc = scope_name(k.scope);
    let cn = comp_name(cx, k.comp, None);
    let fixed = p.cooperative_matrix.iter().any(|e| {
        e.scope == sc
            && match k.usage {
                0 => e.m as u64 == k.rows && e.k as u64 == k.cols && comp_eq(&cn, &e.a, true),
                1 => e.k as u64 == k.rows && e.n as u64 == k.cols && comp_eq(&cn, &e.b, true),
                _ => {
                    e.m as u64 == k.rows
                        && e.n as u64 == k.cols
                        && (comp_eq(&cn, &e.c, true) || comp_eq(&cn, &e.result, true))
                }
            }
    });
    if fixed {
        return;
    }
    let max = p.flexible_dimensions_max_dimension as u64;
    let flex = p.flexible_dimensions.iter().any(|e| {
        let (gr, gc, ok) = match k.usage {
            0 => (e.m, e.k, comp_eq(&cn, &e.a, true)),
            1 => (e.k, e.n, comp_eq(&cn, &e.b, true)),
            _ => (
                e.m,
                e.n,
                comp_eq(&cn, &e.c, true) || comp_eq(&cn, &e.result, true),
            ),
        };
        e.scope == sc
            && ok
            && gr > 0
            && gc > 0
            && k.rows.is_multiple_of(gr as u64)
            && k.cols.is_multiple_of(gc as u64)
    });
    if flex {
        if max > 0 && (k.rows > max || k.cols > max) {
            cx.err(
                &VK_FLEX_MAX,
                i,
                format!(
                    "{}x{} exceeds cooperativeMatrixFlexibleDimensionsMaxDimension {max}",
                    k.rows, k.cols
                ),
            );
        }
        return;
    }
    let u = ["MatrixA", "MatrixB", "MatrixAccumulator"]
        .get(k.usage as usize)
        .copied()
        .unwrap_or("?");
    cx.err(&VK_TYPE, i, format!("{} {cn} {}x{} {u} matrices are not supported by {} (no VkCooperativeMatrixPropertiesKHR or flexible-dimension entry)", sc, k.rows, k.cols, p.name));
}

fn muladd(cx: &mut Ctx, p: &Profile, i: usize) {
    let inst = &cx.m.instructions[i];
    let rt = inst.result_type.unwrap_or(0);
    let ids = [
        inst.w(2).unwrap_or(0),
        inst.w(3).unwrap_or(0),
        inst.w(4).unwrap_or(0),
    ];
    let (Some(r), Some(a), Some(b), Some(c)) = (
        known(cx, rt),
        known(cx, cx.vty(ids[0])),
        known(cx, cx.vty(ids[1])),
        known(cx, cx.vty(ids[2])),
    ) else {
        return;
    };
    let bits = (5..inst.operands.len())
        .find(|&k| {
            inst.operands[k].kind
                == Some(coopmat_spirv::grammar::OperandKind::CooperativeMatrixOperands)
        })
        .and_then(|k| inst.w(k))
        .unwrap_or(0);
    let sat = bits & mo::SaturatingAccumulationKHR != 0;
    // KHR: integer signedness comes from the operand bits, not OpTypeInt.
    let names = [
        comp_name(cx, a.comp, Some(bits & mo::MatrixASignedComponentsKHR != 0)),
        comp_name(cx, b.comp, Some(bits & mo::MatrixBSignedComponentsKHR != 0)),
        comp_name(cx, c.comp, Some(bits & mo::MatrixCSignedComponentsKHR != 0)),
        comp_name(
            cx,
            r.comp,
            Some(bits & mo::MatrixResultSignedComponentsKHR != 0),
        ),
    ];
    let sc = scope_name(r.scope);
    let (mm, nn, kk) = (a.rows, b.cols, a.cols);
    let fits = |e_m: u32, e_n: u32, e_k: u32, flex: bool| {
        if flex {
            e_m > 0
                && e_n > 0
                && e_k > 0
                && mm % e_m as u64 == 0
                && nn % e_n as u64 == 0
                && kk % e_k as u64 == 0
        } else {
            mm == e_m as u64 && nn == e_n as u64 && kk == e_k as u64
        }
    };
    let types = |ea: &str, eb: &str, ec: &str, er: &str, any_sign: bool| {
        comp_eq(&names[0], ea, any_sign)
            && comp_eq(&names[1], eb, any_sign)
            && comp_eq(&names[2], ec, any_sign)
            && comp_eq(&names[3], er, any_sign)
    };
    let mut exact = false;
    let mut sign_only = false;
    let mut sat_only = false;
    let candidates = p
        .cooperative_matrix
        .iter()
        .map(|e| {
            (
                e.m,
                e.n,
                e.k,
                &e.a,
                &e.b,
                &e.c,
                &e.result,
                e.saturating,
                &e.scope,
                false,
            )
        })
        .chain(p.flexible_dimensions.iter().map(|e| {
            (
                e.m,
                e.n,
                e.k,
                &e.a,
                &e.b,
                &e.c,
                &e.result,
                e.saturating,
                &e.scope,
                true,
            )
        }));
    for (em, en, ek, ea, eb, ec, er, esat, esc, flex) in candidates {
        if esc != sc || !fits(em, en, ek, flex) {
            continue;
        }
        if types(ea, eb, ec, er, false) {
            if esat == sat {
                exact = true;
                break;
            }
            sat_only = true;
        } else if types(ea, eb, ec, er, true) {
            sign_only = true;
        }
    }
    if exact {
        return;
    }
    let desc = format!(
        "{mm}x{nn}x{kk} A={} B={} C={} Result={} saturating={sat} scope={sc}",
        names[0], names[1], names[2], names[3]
    );
    if sat_only {
        cx.err(
            &VK_SATURATING,
            i,
            format!(
                "MulAdd {desc}: SaturatingAccumulation does not match the supported entry of {}",
                p.name
            ),
        );
    } else if sign_only {
        cx.err(&VK_SIGNED, i, format!("MulAdd {desc}: Matrix*SignedComponents must be set exactly for the SINT types of a supported entry of {}", p.name));
    } else {
        cx.err(
            &VK_MULADD,
            i,
            format!("MulAdd {desc} is not a supported tuple of {}", p.name),
        );
    }
}

fn alignment(cx: &mut Ctx, i: usize) {
    let inst = &cx.m.instructions[i];
    let load = inst.opcode == op::CooperativeMatrixLoadKHR;
    let (ptr, mat_ty, lk) = if load {
        (inst.w(2), inst.result_type, 3)
    } else {
        (inst.w(0), inst.w(1).map(|o| cx.vty(o)), 2)
    };
    let (Some(ptr), Some(mat_ty)) = (ptr, mat_ty) else {
        return;
    };
    let Some(k) = known(cx, mat_ty) else { return };
    let Some(lay) = inst.w(lk).and_then(|l| cx.const_value(l)) else {
        return;
    };
    let Some(stride) = inst
        .operands
        .get(lk + 1)
        .and_then(|o| {
            (o.kind == Some(coopmat_spirv::grammar::OperandKind::IdRef)).then(|| inst.at(o))
        })
        .and_then(|s| cx.const_value(s))
    else {
        return;
    };
    let elem_bytes = match cx.ty(cx.vty(ptr)) {
        Ty::Pointer { pointee, .. } => match cx.ty(pointee) {
            Ty::Vector { comp, count } => cx.width(comp).map(|w| w as u64 / 8 * count as u64),
            _ => cx.width(pointee).map(|w| w as u64 / 8),
        },
        _ => None,
    };
    let (Some(eb), Some(cw)) = (elem_bytes, cx.width(k.comp)) else {
        return;
    };
    let line = if lay == layout::RowMajorKHR as u64 {
        k.cols
    } else if lay == layout::ColumnMajorKHR as u64 {
        k.rows
    } else {
        return;
    };
    let natural = line * cw as u64 / 8;
    let need = natural.min(16);
    let bytes = stride * eb;
    if need > 0 && bytes % need != 0 {
        cx.err(&VK_ALIGNMENT, i, format!("Stride {stride} ({bytes} bytes) is not a multiple of {need} bytes (min of 16 and the {natural}-byte row/column)"));
    }
    if let Some(off) = constant_byte_offset(cx, ptr)
        && need > 0
        && off % need != 0
    {
        cx.err(&VK_ALIGNMENT, i, format!("Pointer is at byte offset {off} from its variable, not a multiple of {need} bytes (min of 16 and the {natural}-byte row/column)"))
            .rel_id(ptr, "pointer");
    }
}

/// The byte offset of an access chain from its (descriptor or workgroup) variable when every
/// index is a constant and every step has an explicit Offset / ArrayStride; `None` otherwise.
/// Variables are taken as 16-byte aligned (descriptor bindings honour the offset alignment).
fn constant_byte_offset(cx: &Ctx, ptr: u32) -> Option<u64> {
    let inst = &cx.m.instructions[cx.def(ptr)?];
    if !matches!(inst.opcode, op::AccessChain | op::InBoundsAccessChain) {
        return None;
    }
    let base = inst.w(2)?;
    if cx.def_op(base) != op::Variable {
        return None;
    }
    let Ty::Pointer { pointee, .. } = cx.ty(cx.vty(base)) else {
        return None;
    };
    let mut ty = pointee;
    let mut off = 0u64;
    for k in 3..inst.operands.len() {
        let idx = cx.const_value(inst.w(k)?)?;
        match cx.ty(ty) {
            Ty::Struct => {
                let member =
                    cx.m.member_decoration_param(ty, idx as u32, decoration::Offset)??;
                off += member as u64;
                let sdef = &cx.m.instructions[cx.def(ty)?];
                ty = sdef.w(1 + idx as usize)?;
            }
            Ty::Array { elem, .. } | Ty::RuntimeArray { elem } => {
                let stride = cx.m.decoration_param(ty, decoration::ArrayStride)??;
                off += idx * stride as u64;
                ty = elem;
            }
            _ => return None,
        }
    }
    Some(off)
}

fn stages_and_sizes(cx: &mut Ctx, p: &Profile, workgroup: Option<usize>) {
    let m = cx.m;
    let stage_bit = |model: u32| -> u32 {
        match model {
            execution_model::Vertex => 0x1,
            execution_model::TessellationControl => 0x2,
            execution_model::TessellationEvaluation => 0x4,
            execution_model::Geometry => 0x8,
            execution_model::Fragment => 0x10,
            execution_model::GLCompute => 0x20,
            execution_model::TaskEXT | execution_model::TaskNV => 0x40,
            execution_model::MeshEXT | execution_model::MeshNV => 0x80,
            _ => 0x100,
        }
    };
    // WorkgroupSize built-in (a constant composite) overrides LocalSize.
    let mut wgs_builtin: Option<[Option<u64>; 3]> = None;
    for inst in &m.instructions {
        if inst.opcode == op::Decorate
            && inst.w(1) == Some(decoration::BuiltIn)
            && inst.w(2) == Some(built_in::WorkgroupSize)
            && let Some(d) = inst.w(0).and_then(|t| cx.def(t))
        {
            let c = &m.instructions[d];
            if c.operands.len() == 5 {
                wgs_builtin = Some([2, 3, 4].map(|k| c.w(k).and_then(|x| cx.const_value(x))));
            }
        }
    }
    // Local sizes by entry-point function, in one pass.
    let mut local_sizes: crate::ctx::FxMap<u32, [Option<u64>; 3]> = Default::default();
    for e in &m.instructions {
        let Some(f) = e.w(0) else { continue };
        if e.opcode == op::ExecutionMode && e.w(1) == Some(execution_mode::LocalSize) {
            local_sizes.insert(f, [2, 3, 4].map(|k| e.w(k).map(u64::from)));
        } else if e.opcode == op::ExecutionModeId && e.w(1) == Some(execution_mode::LocalSizeId) {
            local_sizes.insert(f, [2, 3, 4].map(|k| e.w(k).and_then(|x| cx.const_value(x))));
        }
    }
    for (i, inst) in m.instructions.iter().enumerate() {
        if inst.opcode != op::EntryPoint {
            continue;
        }
        let model = inst.w(0).unwrap_or(0);
        if p.cooperative_matrix_supported_stages_mask & stage_bit(model) == 0 {
            cx.err(&VK_STAGE, i, format!("cooperative matrices are not supported in this stage by {} (supported stage mask 0x{:x})", p.name, p.cooperative_matrix_supported_stages_mask));
            continue;
        }
        if model != execution_model::GLCompute {
            continue;
        }
        let size = inst.w(1).and_then(|f| local_sizes.get(&f).copied());
        let Some([Some(x), Some(y), Some(z)]) = wgs_builtin.or(size) else {
            continue;
        };
        let sg = p.subgroup_size as u64;
        if sg > 0 && x % sg != 0 {
            cx.err(
                &VK_LOCAL_SIZE,
                i,
                format!(
                    "local size X {x} is not a multiple of the subgroup size {sg} of {}",
                    p.name
                ),
            );
        }
        if let (Some(t), true) = (workgroup, sg > 0) {
            let total = x * y * z;
            let ratio = total / sg;
            if total % sg != 0 || !ratio.is_power_of_two() {
                cx.err(&VK_LOCAL_SIZE, i, format!("with Workgroup scope the workgroup size {total} must be a power-of-two multiple of the subgroup size {sg}"))
                    .at(t, "Workgroup-scope type");
            } else if p.workgroup_scope_max_workgroup_size > 0
                && total > p.workgroup_scope_max_workgroup_size as u64
            {
                cx.err(&VK_LOCAL_SIZE, i, format!("with Workgroup scope the workgroup size {total} exceeds cooperativeMatrixWorkgroupScopeMaxWorkgroupSize {}", p.workgroup_scope_max_workgroup_size))
                    .at(t, "Workgroup-scope type");
            }
        }
    }
}

//! How ggml-vulkan dispatches llama.cpp's `matmul_*_cm2` shaders (GGML-FACTS §3-§4, checked
//! against the disassembly of the corpus modules by this crate's tests): bindings, the 68-byte
//! push-constant block, specialization constants by id and workgroup counts, as plain data.

use crate::GgmlError;
use crate::matmul::BatchShape;
use crate::quants::GgmlType;
use std::collections::BTreeMap;

/// Size of the push-constant block (17 u32).
pub const PUSH_CONSTANT_BYTES: usize = 68;

/// The three tile variants ggml builds from each module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Variant {
    /// Large tiles.
    L,
    /// Medium tiles.
    M,
    /// Small tiles.
    S,
}

/// What a binding holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BindingRole {
    /// A = src0 (weights, M x K, possibly quantized), read only.
    A,
    /// B = src1 (N x K f16), read only.
    B,
    /// D = dst (N x M f32, or f16 is never used: always f32 here), write only.
    D,
}

/// One descriptor binding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DispatchBinding {
    /// Descriptor set.
    pub set: u32,
    /// Binding number.
    pub binding: u32,
    /// Which tensor.
    pub role: BindingRole,
    /// Bytes the shader may touch (the minimum buffer size).
    pub min_bytes: u64,
}

/// The parameters of one MUL_MAT dispatch.
#[derive(Debug, Clone, PartialEq)]
pub struct MatmulParams {
    /// Rows of A (ne01).
    pub m: u32,
    /// Rows of B (ne11, tokens).
    pub n: u32,
    /// Shared dimension (ne00 = ne10).
    pub k: u32,
    /// Batch shape (default: one matrix).
    pub batch: BatchShape,
    /// A row pitch in elements (default K).
    pub stride_a: Option<u32>,
    /// B row pitch in elements (default K).
    pub stride_b: Option<u32>,
    /// D row pitch in elements (default M).
    pub stride_d: Option<u32>,
    /// Rows of B that exist in memory (default N; ggml's staging buffer uses roundup(N, BN)).
    pub padded_n: Option<u32>,
    /// Force a variant (default: ggml's size rule).
    pub variant: Option<Variant>,
    /// Force ALIGNED (default: ggml's rule).
    pub aligned: Option<bool>,
    /// ggml's "prefer_large" (true when the shader-core count is unknown).
    pub prefer_large: bool,
    /// Split-k factor (1: none).
    pub split_k: u32,
    /// The A type for `matmul_quant_f16_cm2` (specialization constants 7 and 8).
    pub quant_type: Option<GgmlType>,
    /// Value for specialization constant 6 (subgroup size, unreferenced by non-ID modules).
    pub subgroup_size: u32,
}

impl MatmulParams {
    /// Plain 2-D MUL_MAT with ggml's defaults.
    pub fn new(m: u32, n: u32, k: u32) -> Self {
        Self {
            m,
            n,
            k,
            batch: BatchShape::default(),
            stride_a: None,
            stride_b: None,
            stride_d: None,
            padded_n: None,
            variant: None,
            aligned: None,
            prefer_large: true,
            split_k: 1,
            quant_type: None,
            subgroup_size: 32,
        }
    }
}

/// Everything needed to run one cm2 matmul dispatch.
#[derive(Debug, Clone, PartialEq)]
pub struct Dispatch {
    /// The module name (`matmul_q4_k_f16_cm2`, ...).
    pub shader: String,
    /// The A type.
    pub a_type: GgmlType,
    /// True for the `_f16acc` modules (f16 accumulators).
    pub f16_acc: bool,
    /// Chosen tile variant.
    pub variant: Variant,
    /// ALIGNED (specialization constant 5).
    pub aligned: bool,
    /// Bindings of descriptor set 0.
    pub bindings: Vec<DispatchBinding>,
    /// The 17 push-constant words.
    pub push_words: [u32; 17],
    /// The same, as the 68 little-endian bytes to upload.
    pub push_constants: Vec<u8>,
    /// Specialization constants: id -> value (booleans as 0/1; all are 32-bit).
    pub spec: BTreeMap<u32, u64>,
    /// Workgroup size (`LocalSizeId (spec 0) 1 1`).
    pub local_size: [u32; 3],
    /// Workgroup counts.
    pub groups: [u32; 3],
    /// Tile shape (BM, BN, BK).
    pub tile: [u32; 3],
}

/// Names of the push-constant words, in order (GGML-FACTS §3, `vk_mat_mat_push_constants`).
pub const PUSH_CONSTANT_NAMES: [&str; 17] = [
    "M",
    "N",
    "K",
    "stride_a",
    "stride_b",
    "stride_d",
    "batch_stride_a",
    "batch_stride_b",
    "batch_stride_d",
    "base_work_group_z",
    "num_batches",
    "k_split",
    "ne02",
    "ne12",
    "broadcast2",
    "broadcast3",
    "padded_N",
];

/// Parses a cm2 matmul module name: `matmul_<a>[_f16]{_cm2,_f16acc_cm2}` with `<a>` one of
/// f16 or a quant type with A decoded to f16 (`quant` for the merged module). Returns (A type
/// or None for `quant`, f16 accumulator).
pub fn parse_shader_name(name: &str) -> Result<(Option<GgmlType>, bool), GgmlError> {
    let unknown = || GgmlError::UnknownShader(name.to_string());
    let rest = name.strip_prefix("matmul_").ok_or_else(unknown)?;
    let (rest, f16_acc) = if let Some(r) = rest.strip_suffix("_f16acc_cm2") {
        (r, true)
    } else {
        (rest.strip_suffix("_cm2").ok_or_else(unknown)?, false)
    };
    if rest == "f16" {
        return Ok((Some(GgmlType::F16), f16_acc));
    }
    let a = rest.strip_suffix("_f16").ok_or_else(unknown)?;
    if a == "quant" {
        return Ok((None, f16_acc));
    }
    match GgmlType::from_shader_name(a) {
        Some(t) if t != GgmlType::F16 => Ok((Some(t), f16_acc)),
        _ => Err(unknown()),
    }
}

/// (spec 0..=4 = {BLOCK_SIZE, BM, BN, BK, enable_smaller_matrices}, align) per variant
/// (GGML-FACTS §4.1).
fn warptile(a: GgmlType, v: Variant) -> ([u32; 5], u32) {
    let f16 = a == GgmlType::F16;
    match (v, f16) {
        (Variant::L, _) => ([256, 128, 256, 64, 1], 128),
        (Variant::M, true) => ([256, 128, 128, 64, 0], 64),
        (Variant::M, false) => ([256, 128, 128, 64, 1], 64),
        (Variant::S, true) => ([128, 64, 64, 64, 0], 32),
        (Variant::S, false) => ([256, 32, 64, 128, 0], 32),
    }
}

/// The dispatch of `shader` for `p`, as ggml-vulkan issues it (no split-k unless asked).
pub fn cm2_matmul_dispatch(shader: &str, p: &MatmulParams) -> Result<Dispatch, GgmlError> {
    let (a_opt, f16_acc) = parse_shader_name(shader)?;
    let merged = a_opt.is_none();
    let a_type = match a_opt {
        Some(t) => t,
        None => {
            let t = p.quant_type.ok_or_else(|| {
                GgmlError::Params(format!("{shader}: quant_type (spec 7) is required"))
            })?;
            // The merged module's decode switch (GGML-FACTS §7) among the types known here.
            if !matches!(
                t,
                GgmlType::Q4_0
                    | GgmlType::Q4_1
                    | GgmlType::Q5_0
                    | GgmlType::Q5_1
                    | GgmlType::Q8_0
                    | GgmlType::Q2K
                    | GgmlType::Q3K
                    | GgmlType::Q6K
            ) {
                return Err(GgmlError::Params(format!(
                    "{shader}: {t:?} is not decoded by the merged module"
                )));
            }
            t
        }
    };
    let err = |m: String| Err(GgmlError::Params(format!("{shader}: {m}")));
    if p.m == 0 || p.n == 0 || p.k == 0 {
        return err("M, N and K must be positive".into());
    }
    if p.split_k == 0 {
        return err("split_k must be >= 1".into());
    }
    p.batch.check()?;
    let qk = a_type.block_elems() as u32;
    if !p.k.is_multiple_of(qk) {
        return err(format!("K = {} is not a multiple of QUANT_K = {qk}", p.k));
    }
    let stride_a = p.stride_a.unwrap_or(p.k);
    let stride_b = p.stride_b.unwrap_or(p.k);
    let stride_d = p.stride_d.unwrap_or(p.m);
    if !stride_a.is_multiple_of(qk) || stride_a < p.k || stride_b < p.k || stride_d < p.m {
        return err(format!(
            "bad strides a={stride_a} b={stride_b} d={stride_d}"
        ));
    }
    let variant = p.variant.unwrap_or(if p.n > 128 && p.prefer_large {
        Variant::L
    } else if p.n > 64 {
        Variant::M
    } else {
        Variant::S
    });
    let (wt, align) = warptile(a_type, variant);
    let [block_size, bm, bn, bk, _enable_smaller] = wt;
    let padded_n = p.padded_n.unwrap_or(p.n);
    if padded_n < p.n {
        return err(format!("padded_N {padded_n} < N {}", p.n));
    }
    // ggml's rule, plus the stride condition under which ALIGNED is correct (§4.4).
    let strides_ok =
        stride_b.is_multiple_of(8) && (a_type != GgmlType::F16 || stride_a.is_multiple_of(8));
    let aligned = p
        .aligned
        .unwrap_or(p.k.is_multiple_of(align) && p.m > 8 && p.n > 8 && strides_ok);
    if aligned && !strides_ok {
        return err("ALIGNED needs stride_b (and stride_a for f16) to be a multiple of 8".into());
    }

    let batches = p.batch.batches();
    let k_split = if p.split_k == 1 {
        p.k
    } else {
        p.k.div_ceil(p.split_k).div_ceil(256) * 256
    };
    // The batch strides are 32-bit push constants (as in ggml-vulkan): a matrix of 2^32
    // elements or more cannot be described to the shader.
    let stride_of = |what: &str, stride: u32, rows: u32| {
        stride.checked_mul(rows).ok_or_else(|| {
            GgmlError::Params(format!(
                "{shader}: {what} has {} elements ({rows} rows of {stride}), more than the 32-bit push constants can address",
                stride as u64 * rows as u64
            ))
        })
    };
    let batch_stride_a = stride_of("A", stride_a, p.m)?;
    let batch_stride_b = stride_of("B", stride_b, padded_n)?;
    let batch_stride_d = stride_of("D", stride_d, p.n)?;
    let push_words = [
        p.m,
        p.n,
        p.k,
        stride_a,
        stride_b,
        stride_d,
        batch_stride_a,
        batch_stride_b,
        batch_stride_d,
        0,
        batches,
        k_split,
        p.batch.ne02,
        p.batch.ne12,
        p.batch.ne12 / p.batch.ne02,
        p.batch.ne13 / p.batch.ne03,
        padded_n,
    ];
    let push_constants = push_words.iter().flat_map(|w| w.to_le_bytes()).collect();

    let mut spec = BTreeMap::new();
    for (id, v) in wt.iter().enumerate() {
        spec.insert(id as u32, *v as u64);
    }
    spec.insert(5, aligned as u64);
    // Harmless where undeclared (Vulkan ignores map entries the module does not use).
    spec.insert(6, p.subgroup_size as u64);
    if merged {
        spec.insert(7, a_type.type_id() as u64);
        spec.insert(8, a_type.block_bytes() as u64);
    }

    let bytes_a = p.batch.a_batches() as u64 * batch_stride_a as u64 / qk as u64
        * a_type.block_bytes() as u64;
    let bytes_b = batches as u64 * batch_stride_b as u64 * 2;
    let bytes_d = p.split_k as u64 * batches as u64 * batch_stride_d as u64 * 4;
    let bindings = vec![
        DispatchBinding {
            set: 0,
            binding: 0,
            role: BindingRole::A,
            min_bytes: bytes_a,
        },
        DispatchBinding {
            set: 0,
            binding: 1,
            role: BindingRole::B,
            min_bytes: bytes_b,
        },
        DispatchBinding {
            set: 0,
            binding: 2,
            role: BindingRole::D,
            min_bytes: bytes_d,
        },
    ];
    Ok(Dispatch {
        shader: shader.to_string(),
        a_type,
        f16_acc,
        variant,
        aligned,
        bindings,
        push_words,
        push_constants,
        spec,
        local_size: [block_size, 1, 1],
        groups: [p.m.div_ceil(bm) * p.split_k, p.n.div_ceil(bn), batches],
        tile: [bm, bn, bk],
    })
}

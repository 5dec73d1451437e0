//! Flash attention (ggml's FLASH_ATTN_EXT) reference in f64, and the interface facts of the
//! `flash_attn_*_cm2` modules as far as the disassembly shows them.
//!
//! Layouts (ggml, innermost dimension first): Q `[HSK, n_q, H, B]` f32, K `[HSK, n_kv, H_kv, B]`
//! and V `[HSV, n_kv, H_kv, B]` f16, mask `[n_kv, n_q]` f16 (shared by all heads), output
//! `[HSV, H, n_q, B]` f32 (note: heads before rows, ggml permutes the result). Grouped-query
//! attention: query head `h` uses K/V head `h / (H / H_kv)`.
//!
//! `O[b][i][h] = Σ_j softmax_j(s_ij) · V[b][h_kv][j]` with
//! `s_ij = softcap(scale · Q[b][h][i]·K[b][h_kv][j]) + slope(h) · mask[i][j]`,
//! `softcap(x) = c·tanh(x/c)` when `logit_softcap = c != 0`, ALiBi `slope(h)` from `max_bias`
//! (1 when max_bias is 0), and an optional per-head sink logit that joins the softmax
//! denominator only.

use crate::GgmlError;

/// Shape and options of one attention.
#[derive(Debug, Clone, PartialEq)]
pub struct FlashAttnParams {
    /// Head size of Q and K (HSK).
    pub hsk: usize,
    /// Head size of V and O (HSV).
    pub hsv: usize,
    /// Query rows (N).
    pub n_q: usize,
    /// Key/value rows (KV).
    pub n_kv: usize,
    /// Query heads (H).
    pub heads: usize,
    /// K/V heads (H_kv, divides H).
    pub kv_heads: usize,
    /// Batches (ne3).
    pub batch: usize,
    /// Logit scale (usually 1/sqrt(HSK)).
    pub scale: f64,
    /// ALiBi max bias (0: off).
    pub max_bias: f64,
    /// Logit soft cap (0: off).
    pub logit_softcap: f64,
}

/// ALiBi slope of head `h` of `heads` (ggml: `m0 = 2^(-max_bias/n)`, `m1 = 2^(-max_bias/2/n)`,
/// `n = 2^floor(log2(heads))`; `h < n ? m0^(h+1) : m1^(2(h-n)+1)`).
pub fn alibi_slope(max_bias: f64, heads: usize, h: usize) -> f64 {
    if max_bias <= 0.0 {
        return 1.0;
    }
    let n = 1usize << (usize::BITS - 1 - heads.max(1).leading_zeros());
    let m0 = 2f64.powf(-max_bias / n as f64);
    let m1 = 2f64.powf(-max_bias / 2.0 / n as f64);
    if h < n {
        m0.powi(h as i32 + 1)
    } else {
        m1.powi(2 * (h - n) as i32 + 1)
    }
}

/// The reference. `q`, `k`, `v` are packed in ggml order (see the module docs); `mask` is
/// `n_q x n_kv` (row i, column j at `i * n_kv + j`; `-inf` masks); `sinks` has one logit per
/// query head. Returns O packed as `[HSV, H, n_q, B]`.
pub fn flash_attn(
    p: &FlashAttnParams,
    q: &[f64],
    k: &[f64],
    v: &[f64],
    mask: Option<&[f64]>,
    sinks: Option<&[f64]>,
) -> Result<Vec<f64>, GgmlError> {
    let bad = |m: String| Err(GgmlError::Params(format!("flash_attn: {m}")));
    if p.kv_heads == 0 || p.heads == 0 || !p.heads.is_multiple_of(p.kv_heads) {
        return bad(format!(
            "{} heads are not a multiple of {} kv heads",
            p.heads, p.kv_heads
        ));
    }
    let (hsk, hsv, nq, nkv, h, hkv, b) =
        (p.hsk, p.hsv, p.n_q, p.n_kv, p.heads, p.kv_heads, p.batch);
    if q.len() != hsk * nq * h * b
        || k.len() != hsk * nkv * hkv * b
        || v.len() != hsv * nkv * hkv * b
    {
        return bad("Q/K/V sizes do not match the shape".into());
    }
    if mask.is_some_and(|m| m.len() != nq * nkv) || sinks.is_some_and(|s| s.len() != h) {
        return bad("mask or sinks size does not match".into());
    }
    let gqa = h / hkv;
    let mut out = vec![0f64; hsv * h * nq * b];
    let mut s = vec![0f64; nkv];
    for bi in 0..b {
        for hi in 0..h {
            let hk = hi / gqa;
            let slope = alibi_slope(p.max_bias, h, hi);
            for i in 0..nq {
                let qrow = &q[((bi * h + hi) * nq + i) * hsk..][..hsk];
                for (j, sj) in s.iter_mut().enumerate() {
                    let krow = &k[((bi * hkv + hk) * nkv + j) * hsk..][..hsk];
                    let mut x = p.scale * qrow.iter().zip(krow).map(|(a, c)| a * c).sum::<f64>();
                    if p.logit_softcap != 0.0 {
                        x = p.logit_softcap * (x / p.logit_softcap).tanh();
                    }
                    if let Some(m) = mask {
                        x += slope * m[i * nkv + j];
                    }
                    *sj = x;
                }
                let sink = sinks.map(|sv| sv[hi]);
                let mx = s
                    .iter()
                    .copied()
                    .chain(sink)
                    .fold(f64::NEG_INFINITY, f64::max);
                let o = &mut out[((bi * nq + i) * h + hi) * hsv..][..hsv];
                if mx == f64::NEG_INFINITY {
                    continue; // everything masked: ggml writes 0
                }
                let mut denom = sink.map_or(0.0, |x| (x - mx).exp());
                for (j, &sj) in s.iter().enumerate() {
                    let w = (sj - mx).exp();
                    denom += w;
                    let vrow = &v[((bi * hkv + hk) * nkv + j) * hsv..][..hsv];
                    for (od, vd) in o.iter_mut().zip(vrow) {
                        *od += w * vd;
                    }
                }
                for od in o.iter_mut() {
                    *od /= denom;
                }
            }
        }
    }
    Ok(out)
}

/// What a `flash_attn_*_cm2` binding holds (set 0). From the disassembly: several
/// variables alias one binding with different element types (noted per entry).
pub const FA_BINDINGS: [(u32, &str); 8] = [
    (
        0,
        "Q (f32 data; declared as u8 runtime array, read through decode/bitcast views)",
    ),
    (1, "K (f16; declared as half, f16vec4 and u8 views)"),
    (2, "V (f16; declared as half, f16vec4 and u8 views)"),
    (3, "mask (f16; declared as half and u8 views)"),
    (4, "sinks (f32 per head)"),
    (5, "O / D (f32; declared as float and vec4 views)"),
    (
        6,
        "u32 array (not identified; ggml's mask-optimisation bits, by its position)",
    ),
    (7, "i32 array (not identified)"),
];

/// The 32-word push-constant block of `flash_attn_*_cm2` (128 bytes): names as in ggml's
/// `vk_flash_attn_push_constants`; the u32/f32 pattern and offsets (4·i) are checked against
/// the disassembly by the tests.
pub const FA_PUSH_CONSTANTS: [(&str, bool); 32] = [
    ("N", false),
    ("KV", false),
    ("ne1", false),
    ("ne2", false),
    ("ne3", false),
    ("neq2", false),
    ("neq3", false),
    ("nek2", false),
    ("nek3", false),
    ("nev2", false),
    ("nev3", false),
    ("nem1", false),
    ("nem2", false),
    ("nem3", false),
    ("nb01", false),
    ("nb02", false),
    ("nb03", false),
    ("nb11", false),
    ("nb12", false),
    ("nb13", false),
    ("nb21", false),
    ("nb22", false),
    ("nb23", false),
    ("scale", true),
    ("max_bias", true),
    ("logit_softcap", true),
    ("mask_n_head_log2", false),
    ("m0", true),
    ("m1", true),
    ("gqa_ratio", false),
    ("split_kv", false),
    ("k_num", false),
];

/// One specialization constant of `flash_attn_*_cm2` as read from the disassembly of
/// `flash_attn_f32_f16_cm2` (cyllama b11669).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaSpecConstant {
    /// SpecId.
    pub id: u32,
    /// The module's default value (of the main declaration; id 0 has several).
    pub default: u32,
    /// Meaning: established from use in the module where marked "(seen)", otherwise the name
    /// ggml's flash_attn_cm2.comp gives that id (not visible in the optimized binary).
    pub meaning: &'static str,
    /// False when the module declares it but never uses it.
    pub referenced: bool,
}

/// Specialization constants 0..=15 of `flash_attn_f32_f16_cm2`.
pub const FA_SPEC_CONSTANTS: [FaSpecConstant; 16] = [
    FaSpecConstant {
        id: 0,
        default: 1,
        meaning: "workgroup size X (seen: LocalSizeId; another SpecId 0 constant defaults to 128)",
        referenced: true,
    },
    FaSpecConstant {
        id: 1,
        default: 1,
        meaning: "Br, query rows per workgroup (seen: tile shapes)",
        referenced: true,
    },
    FaSpecConstant {
        id: 2,
        default: 32,
        meaning: "Bc, KV columns per step (seen: tile shapes)",
        referenced: true,
    },
    FaSpecConstant {
        id: 3,
        default: 32,
        meaning: "HSK, Q/K head size",
        referenced: true,
    },
    FaSpecConstant {
        id: 4,
        default: 32,
        meaning: "HSV, V head size",
        referenced: true,
    },
    FaSpecConstant {
        id: 5,
        default: 0,
        meaning: "Clamp: 1 = clamp partial tiles (seen: compared with 1)",
        referenced: true,
    },
    FaSpecConstant {
        id: 6,
        default: 16,
        meaning: "D_split (unreferenced here)",
        referenced: false,
    },
    FaSpecConstant {
        id: 7,
        default: 1,
        meaning: "row split (unreferenced here)",
        referenced: false,
    },
    FaSpecConstant {
        id: 8,
        default: 32,
        meaning: "subgroup size (unreferenced here)",
        referenced: false,
    },
    FaSpecConstant {
        id: 9,
        default: 0,
        meaning: "shared-memory staging flag (unreferenced here)",
        referenced: false,
    },
    FaSpecConstant {
        id: 10,
        default: 0,
        meaning: "Flags bit mask (seen: bit 16 tested)",
        referenced: true,
    },
    FaSpecConstant {
        id: 11,
        default: 0,
        meaning: "occupancy limit (unreferenced here)",
        referenced: false,
    },
    FaSpecConstant {
        id: 12,
        default: 0,
        meaning: "K ggml_type (seen: compared with 1 = F16)",
        referenced: true,
    },
    FaSpecConstant {
        id: 13,
        default: 0,
        meaning: "V ggml_type (seen: compared with 1 = F16)",
        referenced: true,
    },
    FaSpecConstant {
        id: 14,
        default: 2,
        meaning: "K block size in bytes (seen: u8[spec 14] block struct)",
        referenced: true,
    },
    FaSpecConstant {
        id: 15,
        default: 2,
        meaning: "V block size in bytes (seen: u8[spec 15] block struct)",
        referenced: true,
    },
];

/// Push-constant values of `flash_attn_*_cm2`, in block order (see [`FA_PUSH_CONSTANTS`]).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FaPushConstants {
    /// Words 0..=22 (u32): N, KV, ne1, ne2, ne3, neq2, neq3, nek2, nek3, nev2, nev3, nem1,
    /// nem2, nem3, nb01, nb02, nb03, nb11, nb12, nb13, nb21, nb22, nb23.
    pub u: [u32; 23],
    /// scale.
    pub scale: f32,
    /// max_bias.
    pub max_bias: f32,
    /// logit_softcap.
    pub logit_softcap: f32,
    /// mask_n_head_log2.
    pub mask_n_head_log2: u32,
    /// m0.
    pub m0: f32,
    /// m1.
    pub m1: f32,
    /// gqa_ratio (word 29).
    pub gqa_ratio: u32,
    /// split_kv (word 30).
    pub split_kv: u32,
    /// k_num (word 31).
    pub k_num: u32,
}

impl FaPushConstants {
    /// The 128 little-endian bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w: Vec<u32> = self.u.to_vec();
        w.extend([
            self.scale.to_bits(),
            self.max_bias.to_bits(),
            self.logit_softcap.to_bits(),
            self.mask_n_head_log2,
            self.m0.to_bits(),
            self.m1.to_bits(),
            self.gqa_ratio,
            self.split_kv,
            self.k_num,
        ]);
        w.iter().flat_map(|x| x.to_le_bytes()).collect()
    }
}

/// What one workgroup of `flash_attn_*_cm2` works on, as the module derives it from
/// `gl_WorkGroupID` and the push constants (read from the disassembly of
/// `flash_attn_f32_f16_cm2`: the `k_num > 1` / `gqa_ratio > 1` branches on words 31 and 29).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaWorkgroup {
    /// Query row tile (rows `i*Br ..`).
    pub i: u32,
    /// Split-k slice.
    pub split_k_index: u32,
    /// GQA sub-index (the x id when grouped-query rows share a workgroup).
    pub gqa_iq1: u32,
    /// First query head: `wg.y * gqa_ratio`.
    pub iq2: u32,
    /// Batch: `wg.z`.
    pub iq3: u32,
    /// KV tile range `[start_j, end_j)` in units of Bc.
    pub start_j: u32,
    /// End of the KV tile range.
    pub end_j: u32,
}

/// The module's workgroup decomposition (`br`, `bc` are spec constants 1 and 2).
pub fn fa_workgroup(wg: [u32; 3], pc: &FaPushConstants, bc: u32) -> FaWorkgroup {
    let (k_num, gqa) = (pc.k_num, pc.gqa_ratio);
    let x = wg[0];
    let (i, gqa_iq1, split) = match (k_num > 1, gqa > 1) {
        (true, true) => (0, x / k_num, x % k_num),
        (true, false) => (x / k_num, 0, x % k_num),
        (false, true) => (0, x, 0),
        (false, false) => (x, 0, 0),
    };
    let kv = pc.u[1];
    let start_j = split.wrapping_mul(pc.split_kv) / bc.max(1);
    let end_j = kv
        .min((split + 1).wrapping_mul(pc.split_kv))
        .div_ceil(bc.max(1));
    FaWorkgroup {
        i,
        split_k_index: split,
        gqa_iq1,
        iq2: wg[1].wrapping_mul(gqa),
        iq3: wg[2],
        start_j,
        end_j,
    }
}

/// Workgroup counts that make [`fa_workgroup`] cover every (row tile, split, head group,
/// batch) once: `x = (gqa_ratio > 1 ? N : ceil(N/Br)) * k_num`, `y = heads / gqa_ratio`,
/// `z = batches`. With `gqa_ratio > 1` each workgroup takes one query row (`gqa_iq1`) of
/// `gqa_ratio` consecutive heads as its tile rows (so `gqa_ratio <= Br`); that host-side
/// choice is inferred from the shader's indexing, not read from ggml's host code.
pub fn fa_groups(
    n: u32,
    br: u32,
    heads: u32,
    batches: u32,
    gqa_ratio: u32,
    k_num: u32,
) -> [u32; 3] {
    let gqa = gqa_ratio.max(1);
    let rows = if gqa > 1 { n } else { n.div_ceil(br.max(1)) };
    [rows * k_num.max(1), heads / gqa, batches]
}

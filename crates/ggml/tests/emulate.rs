//! The integration path in miniature: run a cm2 matmul dispatch tile by tile on the CPU with
//! coopmat-tensor's addressing (the layouts GGML-FACTS §4.3 describes: A blocked (1, QUANT_K)
//! with stride (stride_a/QUANT_K, 1); B read through a (1,0)-permuted view; D stored through a
//! (1,0) view, Constant clamp for partial tiles) and the decode = dequantize_block of the
//! addressed block, then compare with the f64 reference. This checks that the dispatch facts,
//! the tensor semantics and the dequantization fit together, and that stores cover D exactly.

use coopmat_ggml::f16::{f16_to_f32, f32_to_f16, round_f16};
use coopmat_ggml::matmul::{BatchShape, dequantize_matrix, mul_mat};
use coopmat_ggml::{GgmlType, MatmulParams, cm2_matmul_dispatch, dequantize_block, quantize_row};
use coopmat_tensor::{
    ClampMode, ElementSource, TensorLayout, TensorView, load_sources, store_sources,
};

fn values(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|i| {
            (((i as u32).wrapping_mul(2654435761).wrapping_add(seed) >> 8) % 2001) as f32 / 1000.0
                - 1.0
        })
        .collect()
}

fn run(shader: &str, ty: GgmlType, m: u32, n: u32, k: u32) {
    let d = cm2_matmul_dispatch(shader, &MatmulParams::new(m, n, k)).unwrap();
    let [bm, bn, bk] = d.tile;
    let pc = d.push_words;
    let (stride_a, stride_b, stride_d, padded_n) = (pc[3], pc[4], pc[5], pc[16]);
    let qk = ty.block_elems() as u32;

    // Buffers: A quantized (M rows of stride_a), B f16 (padded_N rows), D f32 (poisoned).
    let a_f32 = values((m * stride_a) as usize, 7);
    let a_bytes = quantize_row(ty, &a_f32).unwrap();
    assert_eq!(a_bytes.len() as u64, d.bindings[0].min_bytes);
    let b_f16: Vec<u16> = values((padded_n * stride_b) as usize, 11)
        .iter()
        .map(|&x| f32_to_f16(x))
        .collect();
    assert_eq!(b_f16.len() as u64 * 2, d.bindings[1].min_bytes);
    let mut out = vec![f32::NAN; (d.bindings[2].min_bytes / 4) as usize];
    let mut writes = vec![0u32; out.len()];

    let a_layout = TensorLayout::create(2, ClampMode::Constant)
        .unwrap()
        .set_block_size(&[1, qk])
        .unwrap()
        .set_dimension(&[m, k])
        .unwrap()
        .set_stride(&[stride_a / qk, 1])
        .unwrap();
    let b_layout = TensorLayout::create(2, ClampMode::Constant)
        .unwrap()
        .set_dimension(&[padded_n, k])
        .unwrap()
        .set_stride(&[stride_b, 1])
        .unwrap();
    let d_layout = TensorLayout::create(2, ClampMode::Constant)
        .unwrap()
        .set_dimension(&[n, m])
        .unwrap()
        .set_stride(&[stride_d, 1])
        .unwrap();
    let transpose = TensorView::create(2, false, &[1, 0]).unwrap();

    let [gx, gy, gz] = d.groups;
    assert_eq!(gz, 1);
    for ir in 0..gx {
        for ic in 0..gy {
            let mut acc = vec![0f64; (bm * bn) as usize];
            for k0 in (0..k).step_by(bk as usize) {
                let la = a_layout.slice(&[ir * bm, bm, k0, bk]).unwrap();
                let a_src = load_sources(&la, None, bm, bk).unwrap();
                let a_tile: Vec<f64> = a_src
                    .iter()
                    .map(|s| match s {
                        ElementSource::Memory(e) => {
                            let off = e.byte_offset(ty.block_bytes() as u64).unwrap() as usize;
                            let blk = dequantize_block(ty, &a_bytes[off..off + ty.block_bytes()])
                                .unwrap();
                            round_f16(blk[e.coord_in_block[1] as usize]) as f64
                        }
                        ElementSource::Constant(c) => f16_to_f32(*c as u16) as f64,
                        other => panic!("A: {other:?}"),
                    })
                    .collect();
                let lb = b_layout.slice(&[ic * bn, bn, k0, bk]).unwrap();
                let b_src = load_sources(&lb, Some(&transpose), bk, bn).unwrap();
                let b_tile: Vec<f64> = b_src
                    .iter()
                    .map(|s| match s {
                        ElementSource::Memory(e) => f16_to_f32(b_f16[e.index as usize]) as f64,
                        ElementSource::Constant(c) => f16_to_f32(*c as u16) as f64,
                        other => panic!("B: {other:?}"),
                    })
                    .collect();
                for r in 0..bm as usize {
                    for c in 0..bn as usize {
                        for kk in 0..bk as usize {
                            acc[r * bn as usize + c] +=
                                a_tile[r * bk as usize + kk] * b_tile[kk * bn as usize + c];
                        }
                    }
                }
            }
            let ld = d_layout.slice(&[ic * bn, bn, ir * bm, bm]).unwrap();
            for (i, t) in store_sources(&ld, Some(&transpose), bm, bn)
                .unwrap()
                .iter()
                .enumerate()
            {
                if let ElementSource::Memory(e) = t {
                    out[e.index as usize] = acc[i] as f32;
                    writes[e.index as usize] += 1;
                }
            }
        }
    }

    // Reference: D = B · f16(dequant(A))ᵀ.
    let a_ref: Vec<f64> = dequantize_matrix(
        ty,
        &a_bytes,
        m as usize,
        k as usize,
        stride_a as usize,
        true,
    )
    .unwrap()
    .iter()
    .map(|&x| x as f64)
    .collect();
    let b_ref: Vec<f64> = (0..n as usize)
        .flat_map(|r| (0..k as usize).map(move |c| (r, c)))
        .map(|(r, c)| f16_to_f32(b_f16[r * stride_b as usize + c]) as f64)
        .collect();
    let want = mul_mat(
        &a_ref,
        &b_ref,
        m as usize,
        n as usize,
        k as usize,
        BatchShape::default(),
    )
    .unwrap();
    for ni in 0..n as usize {
        for mi in 0..m as usize {
            let at = ni * stride_d as usize + mi;
            assert_eq!(
                writes[at], 1,
                "{shader}: D[{ni}][{mi}] written {} times",
                writes[at]
            );
            let (got, w) = (out[at] as f64, want[ni * m as usize + mi]);
            assert!(
                (got - w).abs() <= 1e-5 * (1.0 + w.abs()),
                "{shader} D[{ni}][{mi}] = {got}, want {w}"
            );
        }
    }
    // Nothing outside the N x M result was touched.
    assert_eq!(
        writes.iter().map(|&w| w as usize).sum::<usize>(),
        (m * n) as usize
    );
}

#[test]
fn q4_0_unaligned_through_tensor_semantics() {
    run("matmul_q4_0_f16_cm2", GgmlType::Q4_0, 40, 21, 96);
}

#[test]
fn iq4_nl_and_mxfp4_and_q4_k() {
    run("matmul_iq4_nl_f16_cm2", GgmlType::IQ4NL, 33, 9, 64);
    run("matmul_mxfp4_f16_cm2", GgmlType::MXFP4, 17, 70, 128);
    run("matmul_q4_k_f16_cm2", GgmlType::Q4K, 35, 5, 512);
}

#[test]
fn f16_a() {
    run("matmul_f16_cm2", GgmlType::F16, 70, 3, 40);
}

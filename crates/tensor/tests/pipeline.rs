//! Hand-computed cases from the spec text, every clamp mode at every out-of-range side,
//! 1..=5 dimensions, views, block sizes, and property tests against the model in `model.rs`.

mod model;

use coopmat_tensor::{
    Access, ClampMode, ElementSource, TensorError, TensorLayout, TensorView, element_source,
    load_sources, store_sources,
};
use model::{ModelResult, model};
use proptest::prelude::*;

fn mem(s: &ElementSource) -> (u64, Vec<u32>, Vec<u32>) {
    match s {
        ElementSource::Memory(e) => (
            e.index,
            e.block_coord().to_vec(),
            e.coord_in_block().to_vec(),
        ),
        other => panic!("expected memory, got {other:?}"),
    }
}

#[test]
fn create_defaults() {
    let l = TensorLayout::create(3, ClampMode::Constant).unwrap();
    assert_eq!(l.block_size(), &[1, 1, 1]);
    assert_eq!(l.layout_dimension(), &[0, 0, 0]);
    assert_eq!(l.stride(), &[0, 0, 0]);
    assert_eq!(l.offset(), &[0, 0, 0]);
    assert_eq!(l.span(), &[0, 0, 0]);
    assert_eq!(l.clamp_value(), 0);
    let v = TensorView::create(2, false, &[1, 0]).unwrap();
    assert_eq!(v.clip(), (0, u32::MAX, 0, u32::MAX));
    assert_eq!(v.view_dimension(), &[0, 0]);
    assert!(TensorLayout::create(0, ClampMode::Undefined).is_err());
    assert!(TensorLayout::create(6, ClampMode::Undefined).is_err());
    assert!(matches!(
        TensorView::create(3, true, &[0, 0, 1]),
        Err(TensorError::BadPermutation(_))
    ));
    assert!(TensorView::create(2, true, &[0]).is_err());
    for m in ClampMode::ALL {
        assert_eq!(ClampMode::from_raw(m.raw()).unwrap(), m);
    }
    assert!(ClampMode::from_raw(5).is_err());
}

#[test]
fn set_dimension_strides_and_slice() {
    // SetDimension: stride[i] = stride[i+1] * ceil(d[i+1] / blockSize[i+1]).
    let l = TensorLayout::create(3, ClampMode::Undefined)
        .unwrap()
        .set_block_size(&[1, 2, 32])
        .unwrap()
        .set_dimension(&[7, 5, 100])
        .unwrap();
    // ceil(100/32) = 4; ceil(5/2) = 3 -> strides (12, 4, 1).
    assert_eq!(l.stride(), &[12, 4, 1]);
    assert_eq!(l.span(), &[7, 5, 100]);
    // Slice adds offsets (cumulatively) and replaces spans; SetDimension resets offsets.
    let s = l
        .slice(&[1, 2, 2, 3, 0, 64])
        .unwrap()
        .slice(&[(-1i32) as u32, 1, 1, 2, 32, 32])
        .unwrap();
    assert_eq!(s.offset(), &[0, 3, 32]);
    assert_eq!(s.span(), &[1, 2, 32]);
    assert_eq!(s.set_dimension(&[7, 5, 100]).unwrap().offset(), &[0, 0, 0]);
    assert!(s.slice(&[0, 1]).is_err());
    assert_eq!(
        l.set_stride(&[1000, 10, 1]).unwrap().stride(),
        &[1000, 10, 1]
    );
    // The stride rule: s0 >= s1 * ceil(5/2).
    assert_eq!(
        l.set_stride(&[11, 4, 1]).unwrap().stride_rule_violation(),
        Some(0)
    );
    assert_eq!(l.stride_rule_violation(), None);
    let v = TensorView::create(3, true, &[0, 1, 2])
        .unwrap()
        .set_dimension(&[2, 3, 4])
        .unwrap();
    assert_eq!(v.view_stride(), &[12, 4, 1]);
}

#[test]
fn plain_2d_slice() {
    // A 4x6 tensor; load the 2x3 region at (1, 2): element (r, c) is at (1+r)*6 + 2+c.
    let l = TensorLayout::create(2, ClampMode::Undefined)
        .unwrap()
        .set_dimension(&[4, 6])
        .unwrap()
        .slice(&[1, 2, 2, 3])
        .unwrap();
    let src = load_sources(&l, None, 2, 3).unwrap();
    for r in 0..2u32 {
        for c in 0..3u32 {
            let (idx, bc, cib) = mem(&src[(r * 3 + c) as usize]);
            assert_eq!(idx, ((1 + r) * 6 + 2 + c) as u64);
            assert_eq!(bc, vec![1 + r, 2 + c]);
            assert_eq!(cib, vec![0, 0]);
        }
    }
}

#[test]
fn ggml_a_layout_blocks() {
    // GGML-FACTS §4.3/§5: A with block size (1, 32), stride (stride_a/32, 1): element (m, k)
    // reads block m*(stride_a/32) + k/32 with blockCoord (m, k/32), coordInBlock (0, k%32).
    let (m_rows, k, stride_a) = (4u32, 96u32, 128u32);
    let l = TensorLayout::create(2, ClampMode::Constant)
        .unwrap()
        .set_block_size(&[1, 32])
        .unwrap()
        .set_dimension(&[m_rows, k])
        .unwrap()
        .set_stride(&[stride_a / 32, 1])
        .unwrap();
    let src = load_sources(&l, None, m_rows, k).unwrap();
    for m in 0..m_rows {
        for kk in 0..k {
            let (idx, bc, cib) = mem(&src[(m * k + kk) as usize]);
            assert_eq!(idx, (m * (stride_a / 32) + kk / 32) as u64);
            assert_eq!(bc, vec![m, kk / 32]);
            assert_eq!(cib, vec![0, kk % 32]);
        }
    }
    // Reading an 8x64 tile at (2, 64): rows 4.. and k 96.. are outside -> clamp value.
    let t = l.set_clamp_value(0x3c00).slice(&[2, 8, 64, 64]).unwrap();
    let src = load_sources(&t, None, 8, 64).unwrap();
    assert!(matches!(src[0], ElementSource::Memory(_)));
    assert_eq!(src[32], ElementSource::Constant(0x3c00)); // k = 96
    assert_eq!(src[2 * 64], ElementSource::Constant(0x3c00)); // row 4
    assert_eq!(
        coopmat_tensor::address::constant_bits(0x1234_3c00, 16),
        0x3c00
    );
}

#[test]
fn transposing_view_reads_b() {
    // B is stored N x K (K contiguous); a BK x BN matrix through a view with permutation (1,0)
    // and no dimensions reads element (k, n) from B[n][k] (GGML-FACTS §4.3).
    let (n, k) = (5u32, 7u32);
    let l = TensorLayout::create(2, ClampMode::Constant)
        .unwrap()
        .set_dimension(&[n, k])
        .unwrap();
    let v = TensorView::create(2, false, &[1, 0]).unwrap();
    let src = load_sources(&l, Some(&v), k, n).unwrap();
    for kk in 0..k {
        for nn in 0..n {
            let (idx, _, _) = mem(&src[(kk * n + nn) as usize]);
            assert_eq!(idx, (nn * k + kk) as u64, "k={kk} n={nn}");
        }
    }
}

#[test]
fn clip_region() {
    // Clip rows 1..3, cols 1..4 of a 4x5 matrix; the clipped 2D view is 2 x min(5,3) = 2x3.
    let l = TensorLayout::create(1, ClampMode::Undefined)
        .unwrap()
        .set_dimension(&[100])
        .unwrap();
    let v = TensorView::create(1, false, &[0])
        .unwrap()
        .set_clip(1, 2, 1, 3);
    let src = load_sources(&l, Some(&v), 4, 5).unwrap();
    for r in 0..4u32 {
        for c in 0..5u32 {
            let s = &src[(r * 5 + c) as usize];
            if (1..3).contains(&r) && (1..4).contains(&c) {
                assert_eq!(mem(s).0, ((r - 1) * 3 + (c - 1)) as u64);
            } else {
                assert_eq!(*s, ElementSource::Clipped);
            }
        }
    }
    // Clip spans near u32::MAX must not overflow.
    let v = v.set_clip(u32::MAX - 1, u32::MAX, 0, u32::MAX);
    assert_eq!(
        element_source(&l, Some(&v), Access::Load, 4, 5, 0, 0).unwrap(),
        ElementSource::Clipped
    );
}

#[test]
fn view_with_dimensions_and_strides() {
    // View dims (2, 3, 4), permutation (0, 2, 1): linear index i of the matrix is split as
    // v[1] fastest (extent 3), then v[2] (extent 4), then v[0] (extent 2); custom strides.
    let l = TensorLayout::create(1, ClampMode::Undefined)
        .unwrap()
        .set_dimension(&[1000])
        .unwrap();
    let v = TensorView::create(3, true, &[0, 2, 1])
        .unwrap()
        .set_dimension(&[2, 3, 4])
        .unwrap()
        .set_stride(&[100, 10, 1])
        .unwrap();
    let src = load_sources(&l, Some(&v), 4, 6).unwrap();
    for i in 0..24u32 {
        let v1 = i % 3;
        let v2 = (i / 3) % 4;
        let v0 = (i / 12) % 2;
        assert_eq!(mem(&src[i as usize]).0, (v0 * 100 + v1 * 10 + v2) as u64);
    }
}

#[test]
fn five_dims() {
    // 5D tensor (2,3,4,5,6), packed; a 6x60 matrix reads span (1,3,4,5,6)... element (r, c):
    // linear = r*60 + c; spanCoord (0, l/120 %3, l/30 % 4, l/6 % 5, l % 6) plus offset (1,0,0,0,0).
    let l = TensorLayout::create(5, ClampMode::Undefined)
        .unwrap()
        .set_dimension(&[2, 3, 4, 5, 6])
        .unwrap();
    assert_eq!(l.stride(), &[360, 120, 30, 6, 1]);
    let s = l.slice(&[1, 1, 0, 3, 0, 4, 0, 5, 0, 6]).unwrap();
    let src = load_sources(&s, None, 6, 60).unwrap();
    for lin in 0..360u32 {
        let (idx, bc, _) = mem(&src[lin as usize]);
        assert_eq!(idx, (360 + lin) as u64);
        assert_eq!(
            bc,
            vec![1, lin / 120 % 3, lin / 30 % 4, lin / 6 % 5, lin % 6]
        );
    }
}

#[test]
fn span_wraps_outermost() {
    // Span 2x3 but a 3x3 matrix: the spec takes `% span[0]` too, so row 2 wraps to row 0.
    let l = TensorLayout::create(2, ClampMode::Undefined)
        .unwrap()
        .set_dimension(&[10, 10])
        .unwrap()
        .slice(&[0, 2, 0, 3])
        .unwrap();
    let src = load_sources(&l, None, 3, 3).unwrap();
    assert_eq!(mem(&src[6]).0, 0);
    assert_eq!(mem(&src[8]).0, 2);
    let z = l.slice(&[0, 0, 0, 3]).unwrap();
    assert!(matches!(
        load_sources(&z, None, 1, 1),
        Err(TensorError::ZeroDivisor { .. })
    ));
}

/// 1D: dimension 5, slice offset -3 with span 11 covers coordinates -3..=7.
fn clamp_1d(mode: ClampMode) -> (Vec<ElementSource>, Vec<ElementSource>) {
    let l = TensorLayout::create(1, mode)
        .unwrap()
        .set_dimension(&[5])
        .unwrap()
        .slice(&[(-3i32) as u32, 11])
        .unwrap()
        .set_clamp_value(0xdead_beef);
    (
        load_sources(&l, None, 1, 11).unwrap(),
        store_sources(&l, None, 1, 11).unwrap(),
    )
}

#[test]
fn clamp_modes_1d_both_sides() {
    // Hand tables for coordinates -3..=7 on a dimension of 5.
    let edge = [0, 0, 0, 0, 1, 2, 3, 4, 4, 4, 4];
    let repeat = [2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2];
    let mirror = [3, 2, 1, 0, 1, 2, 3, 4, 3, 2, 1];
    for (mode, table) in [
        (ClampMode::ClampToEdge, edge),
        (ClampMode::Repeat, repeat),
        (ClampMode::RepeatMirrored, mirror),
    ] {
        let (ld, st) = clamp_1d(mode);
        for (i, want) in table.iter().enumerate() {
            let (idx, _, _) = mem(&ld[i]);
            assert_eq!(idx, *want as u64, "{mode:?} coordinate {}", i as i32 - 3);
            let inside = (3..8).contains(&i);
            if inside {
                assert_eq!(mem(&st[i]).0, (i - 3) as u64);
            } else {
                assert_eq!(st[i], ElementSource::Discarded, "{mode:?} store {i}");
            }
        }
    }
    let (ld, st) = clamp_1d(ClampMode::Constant);
    for i in 0..11 {
        if (3..8).contains(&i) {
            assert_eq!(mem(&ld[i]).0, (i - 3) as u64);
        } else {
            assert_eq!(ld[i], ElementSource::Constant(0xdead_beef));
            assert_eq!(st[i], ElementSource::Discarded);
        }
    }
    let (ld, st) = clamp_1d(ClampMode::Undefined);
    for i in [0, 1, 2, 8, 9, 10] {
        assert_eq!(ld[i], ElementSource::Undefined);
        assert_eq!(st[i], ElementSource::Undefined);
    }
}

#[test]
fn clamp_modes_2d_every_side() {
    // A 3x4 tensor, reading a 5x6 window at (-1, -1): row -1 (top), row 3 (bottom),
    // col -1 (left), col 4 (right) are outside.
    for mode in ClampMode::ALL {
        let l = TensorLayout::create(2, mode)
            .unwrap()
            .set_dimension(&[3, 4])
            .unwrap()
            .slice(&[(-1i32) as u32, 5, (-1i32) as u32, 6])
            .unwrap()
            .set_clamp_value(7);
        let ld = load_sources(&l, None, 5, 6).unwrap();
        for r in 0..5i32 {
            for c in 0..6i32 {
                let (tr, tc) = (r - 1, c - 1);
                let s = &ld[(r * 6 + c) as usize];
                let inside = (0..3).contains(&tr) && (0..4).contains(&tc);
                let fix = |x: i32, d: i32| -> i32 {
                    match mode {
                        ClampMode::ClampToEdge => x.clamp(0, d - 1),
                        ClampMode::Repeat => x.rem_euclid(d),
                        // Dimension 3: ... 1 [0 1 2] 1 0 ...; dimension 4: ... 1 [0 1 2 3] 2 1 ...
                        ClampMode::RepeatMirrored => {
                            if x < 0 {
                                -x
                            } else if x >= d {
                                2 * d - 2 - x
                            } else {
                                x
                            }
                        }
                        _ => x,
                    }
                };
                match mode {
                    _ if inside => assert_eq!(mem(s).0, (tr * 4 + tc) as u64),
                    ClampMode::Undefined => assert_eq!(*s, ElementSource::Undefined),
                    ClampMode::Constant => assert_eq!(*s, ElementSource::Constant(7)),
                    _ => {
                        let (fr, fc) = (fix(tr, 3), fix(tc, 4));
                        assert_eq!(mem(s).0, (fr * 4 + fc) as u64, "{mode:?} ({tr},{tc})");
                        assert!(s.memory().unwrap().clamped);
                    }
                }
            }
        }
    }
}

#[test]
fn mirror_of_dimension_one_and_zero() {
    let l = TensorLayout::create(1, ClampMode::RepeatMirrored)
        .unwrap()
        .set_dimension(&[1])
        .unwrap()
        .slice(&[(-2i32) as u32, 5])
        .unwrap();
    for s in load_sources(&l, None, 1, 5).unwrap() {
        assert_eq!(mem(&s).0, 0);
    }
    let z = l.set_dimension(&[0]).unwrap().slice(&[0, 1]).unwrap();
    assert!(load_sources(&z, None, 1, 1).is_err());
}

#[test]
fn blocks_without_decode_share_address() {
    // NOTES §2.5 point 4: with block size > 1 and no decode, every element of a block reads the
    // same index; strides count blocks.
    let l = TensorLayout::create(2, ClampMode::Undefined)
        .unwrap()
        .set_block_size(&[2, 2])
        .unwrap()
        .set_dimension(&[4, 4])
        .unwrap();
    assert_eq!(l.stride(), &[2, 1]);
    let src = load_sources(&l, None, 4, 4).unwrap();
    let idx: Vec<u64> = src.iter().map(|s| mem(s).0).collect();
    assert_eq!(idx, vec![0, 0, 1, 1, 0, 0, 1, 1, 2, 2, 3, 3, 2, 2, 3, 3]);
}

// ---------------------------------------------------------------- property tests

#[derive(Debug, Clone)]
struct Case {
    layout: TensorLayout,
    view: Option<TensorView>,
    rows: u32,
    cols: u32,
}

fn arb_case() -> impl Strategy<Value = Case> {
    (1usize..=5, 0usize..5, any::<bool>(), 1u32..=6, 1u32..=6).prop_flat_map(
        |(ld, mode, use_view, rows, cols)| {
            let per_dim = (0u32..=5, 1u32..=3, -4i32..=4, 1u32..=5, 0u32..=3);
            let view = (
                1usize..=5,
                any::<bool>(),
                Just((0u32..5).collect::<Vec<u32>>()).prop_shuffle(),
                proptest::collection::vec((1u32..=4, 0u32..=6), 5),
                (
                    0u32..3,
                    prop_oneof![Just(u32::MAX), 0u32..6],
                    0u32..3,
                    prop_oneof![Just(u32::MAX), 0u32..6],
                ),
            );
            (
                proptest::collection::vec(per_dim, ld),
                any::<u32>(),
                any::<bool>(),
                view,
            )
                .prop_map(
                    move |(dims, cv, custom_stride, (vd, has_dims, perm, vdims, clip))| {
                        let mut l = TensorLayout::create(ld as u32, ClampMode::ALL[mode]).unwrap();
                        let bs: Vec<u32> = dims.iter().map(|d| d.1).collect();
                        l = l.set_block_size(&bs).unwrap();
                        let dd: Vec<u32> = dims.iter().map(|d| d.0).collect();
                        l = l.set_dimension(&dd).unwrap();
                        if custom_stride {
                            let st: Vec<u32> = dims.iter().map(|d| d.4 * 3 + 1).collect();
                            l = l.set_stride(&st).unwrap();
                        }
                        let sl: Vec<u32> = dims.iter().flat_map(|d| [d.2 as u32, d.3]).collect();
                        l = l.slice(&sl).unwrap().set_clamp_value(cv);
                        let view = use_view.then(|| {
                            let vd = if has_dims { vd } else { ld };
                            // A permutation of 0..vd from the shuffled 0..5.
                            let p: Vec<u32> = perm
                                .iter()
                                .copied()
                                .filter(|&x| (x as usize) < vd)
                                .collect();
                            let mut v = TensorView::create(vd as u32, has_dims, &p).unwrap();
                            if has_dims {
                                let d: Vec<u32> = vdims[..vd].iter().map(|x| x.0).collect();
                                v = v.set_dimension(&d).unwrap();
                                if custom_stride {
                                    let s: Vec<u32> = vdims[..vd].iter().map(|x| x.1).collect();
                                    v = v.set_stride(&s).unwrap();
                                }
                            }
                            v.set_clip(clip.0, clip.1, clip.2, clip.3)
                        });
                        Case {
                            layout: l,
                            view,
                            rows,
                            cols,
                        }
                    },
                )
        },
    )
}

fn agree(real: &Result<ElementSource, TensorError>, m: &ModelResult) -> bool {
    match (real, m) {
        (Err(_), ModelResult::Error) => true,
        (
            Ok(ElementSource::Memory(e)),
            ModelResult::Memory {
                index,
                block_coord,
                coord_in_block,
            },
        ) => {
            e.index as u128 == *index
                && e.block_coord() == block_coord.as_slice()
                && e.coord_in_block() == coord_in_block.as_slice()
        }
        (Ok(ElementSource::Constant(a)), ModelResult::Constant(b)) => a == b,
        (Ok(ElementSource::Clipped), ModelResult::Clipped) => true,
        (Ok(ElementSource::Discarded), ModelResult::Discarded) => true,
        (Ok(ElementSource::Undefined), ModelResult::Undefined) => true,
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn pipeline_matches_model(case in arb_case()) {
        for r in 0..case.rows {
            for c in 0..case.cols {
                for (access, store) in [(Access::Load, false), (Access::Store, true)] {
                    let real = element_source(&case.layout, case.view.as_ref(), access, case.rows, case.cols, r, c);
                    let m = model(&case.layout, case.view.as_ref(), store, case.rows, case.cols, r, c);
                    prop_assert!(agree(&real, &m), "({r},{c}) {access:?}: real {real:?} model {m:?}");
                }
            }
        }
    }

    /// No store address falls outside the tensor: every written element has an in-range
    /// tensor coordinate, was not moved by a clamp, and its index is at most the last block's.
    #[test]
    fn stores_stay_inside_tensor(case in arb_case()) {
        let Ok(targets) = store_sources(&case.layout, case.view.as_ref(), case.rows, case.cols) else {
            return Ok(());
        };
        let l = &case.layout;
        for t in &targets {
            if let ElementSource::Memory(e) = t {
                prop_assert!(!e.clamped);
                for d in 0..l.dims() {
                    prop_assert!(e.tensor_coord[d] < l.layout_dimension()[d]);
                    prop_assert_eq!(e.tensor_coord[d], e.block_coord[d] * l.block_size()[d] + e.coord_in_block[d]);
                }
                prop_assert!(e.index <= l.max_block_index().unwrap());
            }
            prop_assert!(!matches!(t, ElementSource::Constant(_)));
        }
        // Loads: every memory element is inside the tensor too (clamping included).
        if let Ok(src) = load_sources(l, case.view.as_ref(), case.rows, case.cols) {
            for s in &src {
                if let ElementSource::Memory(e) = s {
                    prop_assert!(e.index <= l.max_block_index().unwrap());
                }
                prop_assert!(!matches!(s, ElementSource::Discarded));
            }
        }
    }
}

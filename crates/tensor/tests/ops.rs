//! Decode-vector grouping, QCOM conversion and the matrix operations, against hand-computed
//! cases from the spec text and independent formulations.

use coopmat_tensor::decode::{check_vector_size, decode_vector_calls, decode_vector_groups};
use coopmat_tensor::ops::{
    ConvertRules, MatrixUse, ReduceMode, convert_use, per_element, reduce, reduce_sources,
    transpose,
};
use coopmat_tensor::qcom::{
    bitcast_array, construct, extract, extract_sub_array, invocation_elements, pack_words,
    source_len, unpack_words,
};
use coopmat_tensor::{
    ClampMode, ElementSource, TensorError, TensorLayout, TensorView, load_sources,
};
use proptest::prelude::*;

fn a_layout(rows: u32, k: u32, qk: u32) -> TensorLayout {
    TensorLayout::create(2, ClampMode::Constant)
        .unwrap()
        .set_block_size(&[1, qk])
        .unwrap()
        .set_dimension(&[rows, k])
        .unwrap()
}

#[test]
fn decode_vector_groups_of_ggml_a() {
    // A 2x64 q4_0-style load (block (1, 32)) with V = 4: groups are 4 consecutive k in a block,
    // starting at multiples of 4; the call uses the lowest element's coordinates.
    let l = a_layout(2, 64, 32);
    let src = load_sources(&l, None, 2, 64).unwrap();
    let groups = decode_vector_groups(&l, &src, 4).unwrap();
    assert_eq!(groups.len(), 2 * 64 / 4);
    for (gi, g) in groups.iter().enumerate() {
        let row = gi as u32 / 16;
        let base_k = (gi as u32 % 16) * 4;
        assert_eq!(g.call.block_coord(), &[row, base_k / 32]);
        assert_eq!(g.call.coord_in_block(), &[0, base_k % 32]);
        assert_eq!(g.call.index, (row * 2 + base_k / 32) as u64);
        assert!(g.is_full());
        for (lane, m) in g.members.iter().enumerate() {
            assert_eq!(m, &vec![(row * 64 + base_k + lane as u32) as usize]);
        }
    }
    // blockSize[LDim-1] = 32 is not a multiple of 8? It is; 12 is not a multiple of 8.
    assert!(check_vector_size(&l, 8).is_ok());
    let l12 = a_layout(2, 48, 12);
    let src = load_sources(&l12, None, 2, 48).unwrap();
    assert_eq!(
        decode_vector_groups(&l12, &src, 8),
        Err(TensorError::DecodeVectorBlockSize {
            block_size: 12,
            v: 8
        })
    );
    assert_eq!(check_vector_size(&l, 3), Err(TensorError::BadVectorSize(3)));
}

#[test]
fn decode_vector_partial_and_constant() {
    // A 1x6 load at k offset 2 of a (1, 8)-blocked row of 7 elements, V = 4: tensor k = 2..8;
    // k = 7 is out of range (Constant); groups [0..4) has members for lanes 2, 3 only.
    let l = a_layout(1, 7, 8)
        .slice(&[0, 1, 2, 6])
        .unwrap()
        .set_clamp_value(9);
    let src = load_sources(&l, None, 1, 6).unwrap();
    assert_eq!(src[5], ElementSource::Constant(9));
    let g = decode_vector_groups(&l, &src, 4).unwrap();
    assert_eq!(g.len(), 2);
    assert_eq!(g[0].call.coord_in_block(), &[0, 0]);
    assert_eq!(g[0].members, vec![vec![], vec![], vec![0], vec![1]]);
    assert!(!g[0].is_full());
    assert_eq!(g[1].members, vec![vec![2], vec![3], vec![4], vec![]]);
    // The flat form: the same calls, one member per memory element in element order (element
    // 5, the Constant, has none).
    let flat = decode_vector_calls(&l, &src, 4).unwrap();
    let calls: Vec<_> = g.iter().map(|g| g.call).collect();
    assert_eq!(flat.calls, calls);
    let members: Vec<(usize, u32, usize)> = flat
        .members
        .iter()
        .map(|m| (m.group, m.component, m.element))
        .collect();
    assert_eq!(
        members,
        vec![(0, 2, 0), (0, 3, 1), (1, 0, 2), (1, 1, 3), (1, 2, 4)]
    );
}

proptest! {
    /// Every memory element is in exactly one group, at lane coordInBlock[last] % V, and all
    /// members of a group share the block and the other coordInBlock components.
    #[test]
    fn groups_partition_elements(rows in 1u32..5, cols in 1u32..40, bs_exp in 0u32..4, v_exp in 1u32..4,
                                 off in 0u32..20, dim1 in 1u32..64) {
        let v = 1u32 << v_exp;
        let bs = v << bs_exp;
        let l = a_layout(rows + 1, dim1, bs).slice(&[0, rows, off, cols]).unwrap();
        let src = load_sources(&l, None, rows, cols).unwrap();
        let groups = decode_vector_groups(&l, &src, v).unwrap();
        let mut seen = vec![0u32; src.len()];
        for g in &groups {
            prop_assert_eq!(g.call.coord_in_block[1] % v, 0);
            for (lane, ms) in g.members.iter().enumerate() {
                for &m in ms {
                    seen[m] += 1;
                    let e = src[m].memory().unwrap();
                    prop_assert_eq!(e.block_coord, g.call.block_coord);
                    prop_assert_eq!(e.coord_in_block[0], g.call.coord_in_block[0]);
                    prop_assert_eq!(e.coord_in_block[1], g.call.coord_in_block[1] + lane as u32);
                    prop_assert_eq!(e.index, g.call.index);
                }
            }
        }
        for (i, s) in src.iter().enumerate() {
            prop_assert_eq!(seen[i], u32::from(s.memory().is_some()));
        }
    }
}

#[test]
fn qcom_ownership_and_packing() {
    // Invocation i holds row i for A and Accumulator, column i for B.
    assert_eq!(
        invocation_elements(MatrixUse::A, 2, 3, 1),
        Some(vec![(1, 0), (1, 1), (1, 2)])
    );
    assert_eq!(invocation_elements(MatrixUse::Accumulator, 2, 3, 2), None);
    assert_eq!(
        invocation_elements(MatrixUse::B, 2, 3, 2),
        Some(vec![(0, 2), (1, 2)])
    );
    assert_eq!(invocation_elements(MatrixUse::B, 2, 3, 3), None);
    // Source lengths from the spec: A f16 16 columns -> 8 words; Acc f16 Cols/2; Acc f32 Cols.
    assert_eq!(source_len(MatrixUse::A, 16, 16, 16, true).unwrap(), 8);
    assert_eq!(source_len(MatrixUse::A, 16, 32, 8, true).unwrap(), 8);
    assert_eq!(source_len(MatrixUse::B, 8, 16, 32, true).unwrap(), 8);
    assert_eq!(
        source_len(MatrixUse::Accumulator, 16, 16, 16, true).unwrap(),
        8
    );
    assert_eq!(
        source_len(MatrixUse::Accumulator, 16, 16, 32, true).unwrap(),
        16
    );
    assert_eq!(
        source_len(MatrixUse::Accumulator, 16, 16, 16, false).unwrap(),
        16
    );
    // Little-endian packing equals the memory image: the words read back from the bytes of
    // the elements laid out in order.
    let h = [0x3c00u32, 0xc000, 0x1234, 0xffff];
    let bytes: Vec<u8> = h.iter().flat_map(|&x| (x as u16).to_le_bytes()).collect();
    let want: Vec<u32> = bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(pack_words(16, &h).unwrap(), want);
    assert_eq!(want[0], 0xc000_3c00);
    let b8 = [1u32, 2, 3, 4, 0x80, 0xff, 0, 7];
    let bytes: Vec<u8> = b8.iter().map(|&x| x as u8).collect();
    let want: Vec<u32> = bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(pack_words(8, &b8).unwrap(), want);
    assert_eq!(unpack_words(8, &want).unwrap(), b8.to_vec());
    assert!(pack_words(16, &h[..3]).is_err());
    // OpBitCastArrayQCOM: f32[2] <-> f16[4] with equal sizes only.
    let f = [1.0f32.to_bits(), 2.5f32.to_bits()];
    let halves = bitcast_array(32, &f, 16, 4).unwrap();
    assert_eq!(halves, vec![0x0000, 0x3f80, 0x0000, 0x4020]);
    assert_eq!(bitcast_array(16, &halves, 32, 2).unwrap(), f.to_vec());
    assert!(bitcast_array(32, &f, 16, 3).is_err());
    // OpExtractSubArrayQCOM.
    assert_eq!(
        extract_sub_array(&[1, 2, 3, 4, 5], 2, 3).unwrap(),
        vec![3, 4, 5]
    );
    assert!(extract_sub_array(&[1, 2, 3], 2, 2).is_err());
    assert!(extract_sub_array(&[1, 2, 3], -1, 1).is_err());
}

#[test]
fn qcom_construct_extract_round_trip() {
    let (rows, cols) = (3u32, 4u32);
    let m: Vec<u32> = (0..12).collect();
    for u in [MatrixUse::A, MatrixUse::B, MatrixUse::Accumulator] {
        let arrays: Vec<Vec<u32>> = (0..8)
            .map(|i| extract(u, rows, cols, &m, i).unwrap().unwrap_or_default())
            .collect();
        if u == MatrixUse::B {
            assert_eq!(arrays[1], vec![1, 5, 9]);
        } else {
            assert_eq!(arrays[1], vec![4, 5, 6, 7]);
        }
        assert_eq!(construct(u, rows, cols, &arrays).unwrap(), m);
    }
    assert!(extract(MatrixUse::A, 3, 3, &m, 0).is_err());
}

#[test]
fn reduce_shapes_from_spec_text() {
    // 2x4 matrix [[1,2,3,4],[5,6,7,8]] with + as CombineFunc.
    let m = [1i64, 2, 3, 4, 5, 6, 7, 8];
    let add = |a: i64, b: i64| Ok::<_, TensorError>(a + b);
    // Row: same rows, any columns; every element of result row r is the sum of row r.
    assert_eq!(
        reduce(&m, 2, 4, ReduceMode::Row, 2, 3, add).unwrap(),
        vec![10, 10, 10, 26, 26, 26]
    );
    // Column: same columns, any rows.
    assert_eq!(
        reduce(&m, 2, 4, ReduceMode::Column, 1, 4, add).unwrap(),
        vec![6, 8, 10, 12]
    );
    // Row|Column: any shape, all the same.
    assert_eq!(
        reduce(&m, 2, 4, ReduceMode::RowColumn, 2, 2, add).unwrap(),
        vec![36; 4]
    );
    // 2x2: result is half in each dimension.
    assert_eq!(
        reduce(&m, 2, 4, ReduceMode::TwoByTwo, 1, 2, add).unwrap(),
        vec![14, 22]
    );
    assert_eq!(
        reduce_sources(ReduceMode::TwoByTwo, 4, 4, 2, 2).unwrap()[3],
        vec![(2, 2), (3, 2), (2, 3), (3, 3)]
    );
    // Max as CombineFunc.
    let mx = |a: i64, b: i64| Ok::<_, TensorError>(a.max(b));
    assert_eq!(
        reduce(&m, 2, 4, ReduceMode::Row, 2, 1, mx).unwrap(),
        vec![4, 8]
    );
    // Shape violations.
    assert!(reduce(&m, 2, 4, ReduceMode::Row, 3, 4, add).is_err());
    assert!(reduce(&m, 2, 4, ReduceMode::Column, 2, 3, add).is_err());
    assert!(reduce(&m, 2, 4, ReduceMode::TwoByTwo, 2, 2, add).is_err());
    assert!(reduce(&m, 3, 3, ReduceMode::Row, 3, 3, add).is_err());
    // The mask values come from the grammar.
    assert_eq!(ReduceMode::from_mask(3).unwrap(), ReduceMode::RowColumn);
    assert!(ReduceMode::from_mask(5).is_err());
    assert!(ReduceMode::from_mask(0).is_err());
    // A failing CombineFunc propagates.
    let fail = |_: i64, _: i64| Err::<i64, _>(TensorError::Overflow("combine"));
    assert!(reduce(&m, 2, 4, ReduceMode::Row, 2, 1, fail).is_err());
}

#[test]
fn per_element_transpose_convert() {
    let m = [10, 20, 30, 40, 50, 60];
    let out = per_element(&m, 2, 3, |r, c, x| {
        Ok::<_, TensorError>(x + 100 * r as i32 + c as i32)
    })
    .unwrap();
    assert_eq!(out, vec![10, 21, 32, 140, 151, 162]);
    assert_eq!(transpose(&m, 2, 3).unwrap(), vec![10, 40, 20, 50, 30, 60]);
    assert!(transpose(&m, 4, 2).is_err());
    use MatrixUse::*;
    assert_eq!(
        convert_use(ConvertRules::Nv, Accumulator, A, &m, 2, 3, false).unwrap(),
        m.to_vec()
    );
    assert!(convert_use(ConvertRules::Nv, A, Accumulator, &m, 2, 3, false).is_err());
    assert!(convert_use(ConvertRules::Ext, A, Accumulator, &m, 2, 3, false).is_ok());
    assert!(convert_use(ConvertRules::Ext, A, A, &m, 2, 3, false).is_err());
    assert_eq!(
        convert_use(ConvertRules::Ext, Accumulator, B, &m, 2, 3, true).unwrap(),
        vec![10, 40, 20, 50, 30, 60]
    );
    assert!(convert_use(ConvertRules::Ext, A, Accumulator, &m, 2, 3, true).is_err());
    assert_eq!(MatrixUse::from_raw(2), Some(Accumulator));
    // Unused import guard: views are exercised in pipeline.rs.
    let _ = TensorView::create(1, false, &[0]).unwrap();
}

proptest! {
    /// `TensorLayout::from_fields` builds what the setters build from the same fields
    /// (create, block size, dimension, stride, slice, clamp value), and `TensorView::from_fields`
    /// what create, dimension, stride and clip build; both refuse what `create` refuses.
    #[test]
    fn layouts_and_views_from_fields_match_the_setters(
        dims in 0u32..7, mode in 0usize..5, f in proptest::array::uniform5(any::<u32>()),
        g in proptest::array::uniform5(any::<u32>()), h in proptest::array::uniform5(any::<u32>()),
        o in proptest::array::uniform5(any::<i32>()), s in proptest::array::uniform5(any::<u32>()),
        clamp in any::<u32>(), perm_seed in any::<u64>(), clip in any::<(u32, u32, u32, u32)>(),
        has in any::<bool>(),
    ) {
        let mode = ClampMode::ALL[mode];
        let fields = coopmat_tensor::LayoutFields {
            block_size: f, layout_dimension: g, stride: h, offset: o, span: s, clamp_value: clamp,
        };
        let direct = TensorLayout::from_fields(dims, mode, &fields);
        let replay = TensorLayout::create(dims, mode).and_then(|l| {
            let n = l.dims();
            let slice: Vec<u32> = (0..n).flat_map(|i| [o[i] as u32, s[i]]).collect();
            Ok(l.set_dimension(&g[..n])?
                .set_stride(&h[..n])?
                .set_block_size(&f[..n])?
                .slice(&slice)?
                .set_clamp_value(clamp))
        });
        prop_assert_eq!(direct, replay);
        // A permutation of 0..dims (or, for some seeds, a repeated entry, which both refuse).
        let n = dims.clamp(1, 5) as usize;
        let mut perm: Vec<u32> = (0..n as u32).collect();
        for i in (1..n).rev() {
            perm.swap(i, (perm_seed >> (3 * i)) as usize % (i + 1));
        }
        if perm_seed % 7 == 0 && n > 1 {
            perm[0] = perm[1];
        }
        let perm = &perm[..n.min(dims as usize).max(1)];
        let direct = TensorView::from_fields(dims, has, perm, &g, &h, clip);
        let replay = TensorView::create(dims, has, perm).and_then(|v| {
            let n = v.dims();
            Ok(v.set_dimension(&g[..n])?
                .set_stride(&h[..n])?
                .set_clip(clip.0, clip.1, clip.2, clip.3))
        });
        prop_assert_eq!(direct, replay);
    }
}

//! Dequantization against llama.cpp's own GPU code: `tests/data/dequant/<type>.blocks` holds
//! pseudo-random blocks and `<type>.f16` the f16 values that the compiled
//! `dequant_<type>.spv` shader of the corpus produced for them, run on lavapipe by the
//! one-off host in `tests/data/dequant/gen/` (see its README). The shader writes f16, so we
//! compare `f16(our f32 dequantization)`; the shader's operation order differs slightly from
//! ggml's CPU code for some types (e.g. q2_K computes `d * float(sc*q)`), so a value may differ
//! by one f16 step after double rounding, and a zero may carry the other sign; anything
//! further is a layout error. Values are compared as f16.

use coopmat_ggml::f16::{f16_to_f32, f32_to_f16};
use coopmat_ggml::{GgmlType, dequantize_row};
use std::path::PathBuf;

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/dequant")
}

#[test]
fn matches_llama_cpp_dequant_shaders() {
    let types = [
        GgmlType::Q4_0,
        GgmlType::Q4_1,
        GgmlType::Q5_0,
        GgmlType::Q5_1,
        GgmlType::Q8_0,
        GgmlType::Q2K,
        GgmlType::Q3K,
        GgmlType::Q4K,
        GgmlType::Q5K,
        GgmlType::Q6K,
        GgmlType::IQ4NL,
        GgmlType::MXFP4,
    ];
    let mut checked = 0;
    for ty in types {
        let name = ty.shader_name();
        let (Ok(blocks), Ok(f16s)) = (
            std::fs::read(data_dir().join(format!("{name}.blocks"))),
            std::fs::read(data_dir().join(format!("{name}.f16"))),
        ) else {
            panic!("missing test data for {name}");
        };
        let ours = dequantize_row(ty, &blocks).unwrap();
        assert_eq!(ours.len() * 2, f16s.len(), "{name}: element count");
        let mut off_by_one = 0;
        for (i, (x, h)) in ours.iter().zip(f16s.chunks(2)).enumerate() {
            let want = u16::from_le_bytes([h[0], h[1]]);
            let got = f32_to_f16(*x);
            // +0 and -0 are the same value (the shader multiplies in a different order).
            if got != want && f16_to_f32(got) != f16_to_f32(want) {
                // One f16 step apart (same sign) is double rounding; more is a bug.
                let step = (got as i32 - want as i32).abs();
                assert!(
                    step == 1 && (got ^ want) & 0x8000 == 0,
                    "{name} element {i} (block {}, {}): ours {x} -> {got:#06x} ({}), shader {want:#06x} ({})",
                    i / ty.block_elems(),
                    i % ty.block_elems(),
                    f16_to_f32(got),
                    f16_to_f32(want)
                );
                off_by_one += 1;
            }
        }
        // Double rounding is rare: allow it on at most 1% of the elements.
        assert!(
            off_by_one * 100 <= ours.len(),
            "{name}: {off_by_one} of {} differ by one step",
            ours.len()
        );
        eprintln!(
            "{name}: {} elements, {off_by_one} one-step differences",
            ours.len()
        );
        checked += 1;
    }
    assert_eq!(checked, types.len());
}

//! Memory isolation: whatever index a shader uses, an access chain reaches only the object its
//! base points into. Out-of-bounds indices are errors (or Vulkan's robust result), never a write
//! into another binding. Property tests over random indices, plain and through
//! PhysicalStorageBuffer pointers.

mod common;
use common::*;
use coopmat_exec::{EngineOptions, ErrorKind, Pipeline, Resources};
use proptest::prelude::*;

/// 512-byte structs (the stride that turns index 0x80000000 into -2^40 bytes).
const PLAIN: &str = r#"#version 450
layout(local_size_x = 1) in;
struct S { uint v[128]; };
layout(std430, binding = 0) buffer Victim { uint victim[]; };
layout(std430, binding = 1) buffer Target { S t[]; };
layout(push_constant) uniform P { int i; int j; } pc;
void main() { t[pc.i].v[pc.j] = 0xdeadbeefu; }"#;

const PSB: &str = r#"#version 450
#extension GL_EXT_buffer_reference : require
layout(local_size_x = 1) in;
struct S { uint v[128]; };
layout(buffer_reference, std430) buffer Ref { S s[]; };
layout(std430, binding = 0) buffer Victim { uint victim[]; };
layout(std430, binding = 1) buffer Target { uint t[]; };
layout(push_constant) uniform P { Ref r; int i; int j; } pc;
void main() { pc.r.s[pc.i].v[pc.j] = 0xdeadbeefu; }"#;

/// Target holds 2 structs (1024 bytes); the victim 4096 bytes of 0x55.
fn resources(psb: bool, i: i32, j: i32) -> Resources {
    let mut r = Resources::default();
    r.buffers.insert((0, 0), vec![0x55; 4096]);
    r.buffers.insert((0, 1), vec![0; 1024]);
    let mut push = Vec::new();
    if psb {
        push.extend(r.device_address(0, 1).unwrap().to_le_bytes());
    }
    push.extend(i.to_le_bytes());
    push.extend(j.to_le_bytes());
    r.push_constants = push;
    r
}

/// Runs one dispatch and checks the property: the victim is untouched; the target changed only
/// at the addressed word, and only when that word is inside it.
fn check(p: &Pipeline, psb: bool, robust: bool, i: i32, j: i32) {
    let mut r = resources(psb, i, j);
    let result = p.dispatch(&mut r, [1, 1, 1]);
    assert!(
        r.buffers[&(0, 0)].iter().all(|&b| b == 0x55),
        "index ({i}, {j}) wrote into another binding"
    );
    let word = i as i64 * 128 + j as i64;
    let inside = (0..256).contains(&word);
    let target = &r.buffers[&(0, 1)];
    for (k, w) in target.chunks(4).enumerate() {
        let expect = if inside && k as i64 == word {
            0xdeadbeefu32
        } else {
            0
        };
        assert_eq!(
            u32::from_le_bytes(w.try_into().unwrap()),
            expect,
            "word {k}"
        );
    }
    match result {
        Ok(_) => assert!(inside || robust, "({i}, {j}) out of bounds but no error"),
        Err(e) => {
            assert!(!inside && !robust, "({i}, {j}): {e}");
            assert_eq!(e.kind, ErrorKind::OutOfBounds, "{e}");
        }
    }
}

/// Both pipelines of a shader (plain and robust), compiled once per test binary.
fn pipelines(src: &'static str) -> Option<&'static [Pipeline; 2]> {
    static PLAIN_P: std::sync::OnceLock<Option<[Pipeline; 2]>> = std::sync::OnceLock::new();
    static PSB_P: std::sync::OnceLock<Option<[Pipeline; 2]>> = std::sync::OnceLock::new();
    let cell = if std::ptr::eq(src, PLAIN) {
        &PLAIN_P
    } else {
        &PSB_P
    };
    cell.get_or_init(|| build(src)).as_ref()
}

fn build(src: &str) -> Option<[Pipeline; 2]> {
    let m = glsl(src)?;
    let p = |robust| {
        let opts = EngineOptions {
            robust,
            threads: 1,
            ..Default::default()
        };
        Pipeline::compile(&m, "main", &Default::default(), &opts).unwrap()
    };
    Some([p(false), p(true)])
}

fn index() -> impl Strategy<Value = i32> {
    prop_oneof![
        -4..4i32,
        Just(i32::MIN),
        Just(i32::MAX),
        Just(-(1 << 23)),
        Just(1 << 23),
        any::<i32>(),
    ]
}

#[test]
fn the_reported_case_is_an_error_not_a_write_into_the_previous_binding() {
    let Some([plain, robust]) = pipelines(PLAIN) else {
        return;
    };
    // 0x80000000 × 512 bytes = -2^40: exactly one object back in the old address arithmetic.
    check(plain, false, false, i32::MIN, 0);
    check(robust, false, true, i32::MIN, 0);
    check(plain, false, false, 1, 127);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn access_chains_stay_in_their_object(i in index(), j in index()) {
        let Some([plain, robust]) = pipelines(PLAIN) else {
            return Ok(());
        };
        check(plain, false, false, i, j);
        check(robust, false, true, i, j);
    }

    #[test]
    fn physical_storage_buffer_chains_stay_in_their_object(i in index(), j in index()) {
        let Some([plain, robust]) = pipelines(PSB) else {
            return Ok(());
        };
        check(plain, true, false, i, j);
        check(robust, true, true, i, j);
    }
}

//! Scalar kernels, control flow, memory classes: GLSL compiled at test time, checked against
//! references computed here in Rust.

mod common;
use common::*;
use coopmat_exec::{EngineOptions, Resources};

#[test]
fn stores_global_invocation_id() {
    let Some(m) = glsl(
        r#"#version 450
layout(local_size_x = 8, local_size_y = 2) in;
layout(std430, binding = 0) buffer B { uint v[]; };
void main() {
    uint i = gl_GlobalInvocationID.y * 32u + gl_GlobalInvocationID.x;
    v[i] = gl_GlobalInvocationID.x * 1000u + gl_GlobalInvocationID.y + gl_LocalInvocationIndex * 100000u;
}"#,
    ) else {
        return;
    };
    let mut res = Resources::default();
    res.buffers.insert((0, 0), vec![0; 4 * 32 * 4]);
    let st = run(&m, &mut res, [4, 2, 1], &EngineOptions::default());
    assert_eq!(st.invocations, 4 * 2 * 16);
    let out = u32s(&res.buffers[&(0, 0)]);
    for y in 0..4u32 {
        for x in 0..32u32 {
            let li = (y % 2) * 8 + x % 8;
            assert_eq!(out[(y * 32 + x) as usize], x * 1000 + y + li * 100000, "x={x} y={y}");
        }
    }
}

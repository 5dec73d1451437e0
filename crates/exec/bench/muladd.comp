#version 450
// The GEMM benchmark's inner step alone: one subgroup multiplies 4 A tiles by 4 B tiles into
// 16 accumulators (16x16x16 f16 -> f32, KHR cooperative matrices) REPS times, with no staging,
// so the time is the engine's MulAdd path (dispatch and kernel). Each workgroup stores its
// accumulators so that nothing is dead.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = 32) in;
layout(constant_id = 0) const uint REPS = 256;
layout(std430, binding = 0) readonly buffer A { float16_t a[]; };
layout(std430, binding = 1) writeonly buffer C { float c[]; };
void main() {
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma[4];
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb[4];
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc[4][4];
    [[unroll]] for (uint i = 0; i < 4; i++) {
        coopMatLoad(ma[i], a, i * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(mb[i], a, 1024 + i * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
        [[unroll]] for (uint j = 0; j < 4; j++)
            acc[i][j] = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    }
    for (uint r = 0; r < REPS; r++)
        [[unroll]] for (uint i = 0; i < 4; i++)
            [[unroll]] for (uint j = 0; j < 4; j++)
                acc[i][j] = coopMatMulAdd(ma[i], mb[j], acc[i][j]);
    [[unroll]] for (uint i = 0; i < 4; i++)
        [[unroll]] for (uint j = 0; j < 4; j++)
            coopMatStore(acc[i][j], c, (gl_WorkGroupID.x * 16 + i * 4 + j) * 256, 16,
                         gl_CooperativeMatrixLayoutRowMajor);
}

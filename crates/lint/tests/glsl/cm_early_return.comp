#version 450
#extension GL_KHR_cooperative_matrix : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : enable
// Fires coopmat-divergent-control-flow: invocations past the end return early, the rest go on
// to a subgroup-scope load.
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer A { float16_t a[]; };
layout(set = 0, binding = 1) buffer C { float16_t c[]; };
layout(push_constant) uniform P { uint n; } pc;

void main() {
    if (gl_GlobalInvocationID.x >= pc.n) {
        return;
    }
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
    coopMatLoad(m, a, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(m, c, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}

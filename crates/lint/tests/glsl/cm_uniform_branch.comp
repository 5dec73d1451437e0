#version 450
#extension GL_KHR_cooperative_matrix : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : enable
// Silent: the early return and the branch depend on the workgroup only; the element value
// read in divergent control flow is not tangled.
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer A { float16_t a[]; };
layout(set = 0, binding = 1) buffer C { float16_t c[]; };
layout(push_constant) uniform P { uint n; } pc;

void main() {
    if (gl_WorkGroupID.x * 16 >= pc.n) {
        return;
    }
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
    coopMatLoad(m, a, gl_WorkGroupID.x * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    if (gl_LocalInvocationID.x < 3) {
        for (int i = 0; i < m.length(); ++i) {
            m[i] = m[i] * float16_t(2.0);
        }
    }
    if (gl_NumWorkGroups.x > 1) {
        m = m * float16_t(0.5);
    }
    coopMatStore(m, c, gl_WorkGroupID.x * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
}

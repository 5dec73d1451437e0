#version 450
#extension GL_KHR_cooperative_matrix : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : enable
// Fires coopmat-nonuniform-operand: the stride is read from a writable buffer at a per-lane
// index, after a loop whose exit diverges.
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer A { float16_t a[]; };
layout(set = 0, binding = 1) buffer C { float16_t c[]; };
layout(set = 0, binding = 2) buffer S { uint strides[]; };

void main() {
    uint s = 16;
    for (uint i = 0; i < gl_LocalInvocationID.x; i++) {
        s += strides[0];
    }
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
    coopMatLoad(m, a, 0, s, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(m, c, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}

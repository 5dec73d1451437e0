#version 450
#extension GL_KHR_cooperative_matrix : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : enable
// Fires coopmat-nonuniform-operand: the load's element offset depends on the invocation.
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer A { float16_t a[]; };
layout(set = 0, binding = 1) buffer C { float16_t c[]; };

void main() {
    uint row = gl_LocalInvocationID.x / 4;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
    coopMatLoad(m, a, row * 16, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(m, c, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}

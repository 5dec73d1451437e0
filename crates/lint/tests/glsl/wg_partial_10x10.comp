#version 450
#extension GL_KHR_cooperative_matrix : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : enable
// Fires coopmat-workgroup-size-vs-subgroup: 10x10 = 100 invocations, the fourth subgroup has 4 lanes.
layout(local_size_x = 10, local_size_y = 10) in;
layout(set = 0, binding = 0) readonly buffer A { float16_t a[]; };
layout(set = 0, binding = 1) buffer C { float16_t c[]; };

void main() {
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
    coopMatLoad(m, a, gl_WorkGroupID.x * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(m, c, gl_WorkGroupID.x * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
}

#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
// Fires coopmat-mapping-dependence: each invocation scales its components by its own id.
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer In { float16_t x[]; } inb;
layout(set = 0, binding = 1) buffer Out { float16_t y[]; } outb;
layout(push_constant) uniform P { float scale; } pc;
void main() {
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
  coopMatLoad(m, inb.x, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  for (int i = 0; i < m.length(); ++i) m[i] = m[i] * float16_t(gl_SubgroupInvocationID);
  coopMatStore(m, outb.y, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}

#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
// Fires coopmat-mapping-dependence: an accumulator set component by component from an A matrix.
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer In { float16_t x[]; } inb;
layout(set = 0, binding = 1) buffer Out { float16_t y[]; } outb;
layout(push_constant) uniform P { float scale; } pc;
void main() {
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> a;
  coopMatLoad(a, inb.x, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> c;
  coopMatLoad(c, inb.x, 256, 16, gl_CooperativeMatrixLayoutRowMajor);
  for (int i = 0; i < c.length(); ++i) c[i] = c[i] + a[i];
  coopMatStore(c, outb.y, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}

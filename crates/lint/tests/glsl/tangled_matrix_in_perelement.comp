#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
// Fires coopmat-tangled-in-callback: the per-element function of coopMatPerElementNV calls a
// helper that loads a cooperative matrix.
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer In { float x[]; } inb;
layout(set = 0, binding = 1) buffer Out { float y[]; } outb;
float helper(float v) {
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> inner;
  coopMatLoad(inner, inb.x, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  return v + inner[0];
}
float scale(const in uint row, const in uint col, const in float v) {
  return helper(v) * 2.0;
}
void main() {
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
  coopMatLoad(m, inb.x, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> r;
  coopMatPerElementNV(r, m, scale);
  coopMatStore(r, outb.y, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}

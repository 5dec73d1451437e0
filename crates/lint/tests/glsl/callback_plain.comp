#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_buffer_reference : require
// Silent: a DecodeFunc and a per-element function that compute from their arguments only.
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer In { uint x[]; } inb;
layout(set = 0, binding = 1) buffer Out { float y[]; } outb;
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer Blk { uint q[4]; };
float dec(const in Blk b, const in uint bc[2], const in uint cib[2]) {
  return float(b.q[cib[1] & 3]) - 8.0;
}
float scale(const in uint row, const in uint col, const in float v) {
  return row == col ? v * 2.0 : v;
}
void main() {
  tensorLayoutNV<2> t = createTensorLayoutNV(2);
  t = setTensorLayoutDimensionNV(t, 16, 64);
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
  coopMatLoadTensorNV(m, inb.x, 0, t, dec);
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> r;
  coopMatPerElementNV(r, m, scale);
  coopMatStore(r, outb.y, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}

#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_NV_cooperative_matrix_decode_vector : require
#extension GL_EXT_long_vector : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_buffer_reference : require
// V (2, 4 or 8) and BS (block size along columns) come from -D.
layout(local_size_x = 32) in;
layout(set=0, binding=0) buffer In { uint x[]; } inb;
layout(set=0, binding=1) buffer Out { float y[]; } outb;
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer Blk { uint q[BS]; };
float dec(const in Blk b, const in uint bc[2], const in uint cib[2]) {
  return float(b.q[cib[1]]) + float(bc[0]) * 0.5 + float(cib[0]) * 1000.0;
}
vector<float, V> decv(const in Blk b, const in uint bc[2], const in uint cib[2]) {
  vector<float, V> r;
  for (uint i = 0; i < V; i++) r[i] = float(b.q[cib[1] + i]) + float(bc[0]) * 0.5 + float(cib[0]) * 1000.0;
  return r;
}
void main() {
  tensorLayoutNV<2> t = createTensorLayoutNV(2);
  t = setTensorLayoutBlockSizeNV(t, 1, BS);
  t = setTensorLayoutDimensionNV(t, 16, 32);
  t = sliceTensorLayoutNV(t, 0, 16, 8, 16);
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
  coopMatLoadTensorNV(m, inb.x, 0, t, dec, decv);
  coopMatStore(m, outb.y, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}

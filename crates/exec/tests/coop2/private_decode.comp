#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_buffer_reference : require
layout(local_size_x = 32) in;
layout(set=0, binding=0) buffer In { uint x[]; } inb;
layout(set=0, binding=1) buffer Out { float y[]; } outb;
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer Blk { uint q[1]; };
// A DecodeFunc reading a Private variable the invocation set before the load: on the H100 every
// element sees 2.0 (6.0 = 3 x 2.0); the engine gives each call the Private values of the scope
// instance's first active invocation.
// With -DTHROUGH_CALL the DecodeFunc reads it through a function of its own.
float scale;
float scale_of() { return scale; }
float dec(const in Blk b, const in uint bc[2], const in uint cib[2]) {
#ifdef THROUGH_CALL
  return float(b.q[0]) * scale_of();
#else
  return float(b.q[0]) * scale;
#endif
}
void main() {
  scale = 2.0;
  tensorLayoutNV<2> t = createTensorLayoutNV(2);
  t = setTensorLayoutDimensionNV(t, 16, 16);
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
  coopMatLoadTensorNV(m, inb.x, 0, t, dec);
  coopMatStore(m, outb.y, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}

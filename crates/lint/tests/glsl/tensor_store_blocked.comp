#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_NV_cooperative_matrix_decode_vector : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_buffer_reference : require
// Fires coopmat-store-stride-overlap: a tensor store through a layout with block size 2 and 4.
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer In { uint x[]; } inb;
layout(set = 0, binding = 1) buffer Out { float y[]; } outb;
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer Blk { uint q[4]; };
layout(push_constant) uniform P { uint wide; } pc;
void main() {
  tensorLayoutNV<2> t = createTensorLayoutNV(2);
  t = setTensorLayoutBlockSizeNV(t, 2, 4);
  t = setTensorLayoutDimensionNV(t, 16, 16);
  tensorLayoutNV<2> u = createTensorLayoutNV(2);
  u = setTensorLayoutDimensionNV(u, 16, 16);
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
  coopMatLoadTensorNV(m, outb.y, 0, u);
  coopMatStoreTensorNV(m, outb.y, 0, t);
}

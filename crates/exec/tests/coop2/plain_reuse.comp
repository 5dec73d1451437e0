#version 450
// Tensor loads without a decode function, kept for reuse across workgroups or not: workgroup w
// loads tile T = (SAME ? 0 : w) of a stack of 16x16 f16 tiles twice, through a transposing view
// (gathered across its runs: kept) and by rows (read again as cheaply: never kept), and stores
// both to its own 512 halves of the output.
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 32) in;
layout(constant_id = 0) const uint SAME = 1;
layout(constant_id = 1) const uint TILES = 1;
layout(set=0, binding=0) readonly buffer In { float16_t x[]; } inb;
layout(set=0, binding=1) buffer Out { float16_t y[]; } outb;
void main() {
  uint w = gl_WorkGroupID.x;
  uint t = SAME != 0 ? 0 : w;
  tensorLayoutNV<2> l = createTensorLayoutNV(2);
  l = setTensorLayoutDimensionNV(l, 16 * TILES, 16);
  l = sliceTensorLayoutNV(l, 16 * t, 16, 0, 16);
  tensorViewNV<2, false, 1, 0> v = createTensorViewNV(2, false, 1, 0);
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> a, b;
  coopMatLoadTensorNV(a, inb.x, 0, l, v);
  coopMatLoadTensorNV(b, inb.x, 0, l);
  coopMatStore(a, outb.y, w * 512, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatStore(b, outb.y, w * 512 + 256, 16, gl_CooperativeMatrixLayoutRowMajor);
}

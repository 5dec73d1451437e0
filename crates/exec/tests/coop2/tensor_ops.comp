#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 32) in;
layout(set=0, binding=0) buffer In { float x[]; } inb;
layout(set=0, binding=1) buffer Out { float y[]; } outb;
// The same buffer as halves, for an f16 tensor store.
layout(set=0, binding=1) buffer OutH { float16_t h[]; } outh;
float add(const in float a, const in float b) { return a + b; }
shared float shv[256];
float pe(const in uint r, const in uint c, const in float e, const in float s) {
  outb.y[2048 + r*16 + c] = e + 1.0;
  shv[r*16 + c] = e - 1.0;
  return e * s + float(r*100 + c);
}
void main() {
  tensorLayoutNV<2, MODE> l = createTensorLayoutNV(2, MODE);
  l = setTensorLayoutDimensionNV(l, 10, 12);
  l = setTensorLayoutClampValueNV(l, floatBitsToUint(-7.0));
  l = sliceTensorLayoutNV(l, 4, 16, 2, 16);
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
  coopMatLoadTensorNV(m, inb.x, 0, l);
  coopMatStore(m, outb.y, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  // transposed view of rows 0..15, cols 0..15 of a 16x16 tensor at offset 256
  tensorLayoutNV<2> l2 = createTensorLayoutNV(2);
  l2 = setTensorLayoutDimensionNV(l2, 16, 16);
  tensorViewNV<2, false, 1, 0> v = createTensorViewNV(2, false, 1, 0);
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> t;
  coopMatLoadTensorNV(t, inb.x, 256, l2, v);
  coopMatStore(t, outb.y, 256, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> r;
  coopMatReduceNV(r, t, gl_CooperativeMatrixReduceRowNV, add);
  coopMatStore(r, outb.y, 512, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatReduceNV(r, t, gl_CooperativeMatrixReduceColumnNV, add);
  coopMatStore(r, outb.y, 768, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatReduceNV(r, t, gl_CooperativeMatrixReduceRowNV | gl_CooperativeMatrixReduceColumnNV, add);
  coopMatStore(r, outb.y, 1024, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopmat<float, gl_ScopeSubgroup, 8, 8, gl_MatrixUseAccumulator> q;
  coopMatReduceNV(q, t, gl_CooperativeMatrixReduce2x2NV, add);
  coopMatStore(q, outb.y, 1280, 8, gl_CooperativeMatrixLayoutRowMajor);
  coopMatPerElementNV(r, t, pe, 2.0);
  coopMatStore(r, outb.y, 1536, 16, gl_CooperativeMatrixLayoutRowMajor);
  // The per-element function's shared-memory stores are visible to the workgroup.
  barrier();
  for (uint k = 0; k < 8; k++) outb.y[2304 + gl_LocalInvocationIndex * 8 + k] = shv[gl_LocalInvocationIndex * 8 + k];
  // store through a clipped view: only rows 2..5, cols 3..9 written, at offset 1792
  tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> l3 = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  l3 = setTensorLayoutDimensionNV(l3, 16, 16);
  tensorViewNV<2> v3 = createTensorViewNV(2);
  v3 = setTensorViewClipNV(v3, 2, 4, 3, 7);
  coopMatStoreTensorNV(t, outb.y, 1792, l3, v3);
  // stores by rows and by columns: through the transposing view (columns of t are rows of
  // memory), over the edge of a 10x12 tensor (Constant: only elements inside are written) and
  // of an f16 matrix into f16 memory
  coopMatStoreTensorNV(t, outb.y, 2560, l2, v);
  tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> l4 = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  l4 = setTensorLayoutDimensionNV(l4, 10, 12);
  l4 = sliceTensorLayoutNV(l4, 4, 16, 2, 16);
  coopMatStoreTensorNV(t, outb.y, 2816, l4);
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> th = coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(t);
  coopMatStoreTensorNV(th, outh.h, 2 * 2944, l2);
  // columns overlapping in memory (element (r, c) at 8c + r): the last element in row-major
  // order writes each address
  tensorLayoutNV<2> l5 = createTensorLayoutNV(2);
  l5 = setTensorLayoutDimensionNV(l5, 16, 16);
  l5 = setTensorLayoutStrideNV(l5, 8, 1);
  coopMatStoreTensorNV(t, outb.y, 3072, l5, v);
}

#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 32) in;
layout(set=0, binding=0) buffer In { float x[]; } inb;
layout(set=0, binding=1) buffer Out { float y[]; } outb;
void main() {
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
  tensorLayoutNV<1> l1 = createTensorLayoutNV(1);
  l1 = setTensorLayoutDimensionNV(l1, 4096);
  l1 = sliceTensorLayoutNV(l1, 100, 256);
  coopMatLoadTensorNV(m, inb.x, 0, l1);
  coopMatStore(m, outb.y, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  tensorLayoutNV<3> l3 = createTensorLayoutNV(3);
  l3 = setTensorLayoutDimensionNV(l3, 2, 16, 16);
  l3 = sliceTensorLayoutNV(l3, 1, 1, 0, 16, 0, 16);
  coopMatLoadTensorNV(m, inb.x, 0, l3);
  coopMatStore(m, outb.y, 256, 16, gl_CooperativeMatrixLayoutRowMajor);
  tensorLayoutNV<4> l4 = createTensorLayoutNV(4);
  l4 = setTensorLayoutDimensionNV(l4, 2, 4, 8, 16);
  l4 = sliceTensorLayoutNV(l4, 1, 1, 2, 2, 0, 8, 0, 16);
  coopMatLoadTensorNV(m, inb.x, 0, l4);
  coopMatStore(m, outb.y, 512, 16, gl_CooperativeMatrixLayoutRowMajor);
  tensorLayoutNV<5> l5 = createTensorLayoutNV(5);
  l5 = setTensorLayoutDimensionNV(l5, 2, 2, 2, 16, 16);
  l5 = sliceTensorLayoutNV(l5, 1, 1, 1, 1, 0, 1, 0, 16, 0, 16);
  coopMatLoadTensorNV(m, inb.x, 0, l5);
  coopMatStore(m, outb.y, 768, 16, gl_CooperativeMatrixLayoutRowMajor);
  // 3-D view with a permutation over a 3-D layout: view (p = 2, 0, 1).
  tensorViewNV<3, true, 2, 0, 1> v3 = createTensorViewNV(3, true, 2, 0, 1);
  v3 = setTensorViewDimensionsNV(v3, 1, 16, 16);
  tensorLayoutNV<3> l3b = createTensorLayoutNV(3);
  l3b = setTensorLayoutDimensionNV(l3b, 16, 16, 4);
  l3b = sliceTensorLayoutNV(l3b, 0, 16, 0, 16, 3, 1);
  coopMatLoadTensorNV(m, inb.x, 0, l3b, v3);
  coopMatStore(m, outb.y, 1024, 16, gl_CooperativeMatrixLayoutRowMajor);
  // Block size 1x4 without a decode function: the 4 elements of a block read the same index.
  tensorLayoutNV<2> lb = createTensorLayoutNV(2);
  lb = setTensorLayoutBlockSizeNV(lb, 1, 4);
  lb = setTensorLayoutDimensionNV(lb, 16, 64);
  lb = sliceTensorLayoutNV(lb, 0, 16, 8, 16);
  coopMatLoadTensorNV(m, inb.x, 0, lb);
  coopMatStore(m, outb.y, 1280, 16, gl_CooperativeMatrixLayoutRowMajor);
}

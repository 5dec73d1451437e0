#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_16bit_storage : require
// Tiles loaded through a transposing view from a 37x29 row-major tensor (an odd row length,
// so runs start at both halves of a word), sliced at (3, 2): the tile's 34 first columns are
// runs of 27 elements, the others lie outside the tensor (Constant clamp). f16 and f32 tiles.
layout(local_size_x = 32) in;
layout(set=0, binding=0) buffer InH { float16_t x[]; } inh;
layout(set=0, binding=1) buffer InF { float x[]; } inf;
layout(set=0, binding=2) buffer OutH { float16_t y[]; } outh;
layout(set=0, binding=3) buffer OutF { float y[]; } outf;
void main() {
  tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> l = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  l = setTensorLayoutDimensionNV(l, 37, 29);
  l = sliceTensorLayoutNV(l, 3, 48, 2, 32);
  tensorViewNV<2, false, 1, 0> v = createTensorViewNV(2, false, 1, 0);
  tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> lh = setTensorLayoutClampValueNV(l, 0x4b00);
  coopmat<float16_t, gl_ScopeSubgroup, 32, 48, gl_MatrixUseAccumulator> h;
  coopMatLoadTensorNV(h, inh.x, 0, lh, v);
  coopMatStore(h, outh.y, 0, 48, gl_CooperativeMatrixLayoutRowMajor);
  tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> lf = setTensorLayoutClampValueNV(l, floatBitsToUint(-7.0));
  coopmat<float, gl_ScopeSubgroup, 32, 48, gl_MatrixUseAccumulator> f;
  coopMatLoadTensorNV(f, inf.x, 0, lf, v);
  coopMatStore(f, outf.y, 0, 48, gl_CooperativeMatrixLayoutRowMajor);
}

#version 450
// Max and min reductions of f32 and f16 16x16 tiles in every mode (Row, Column, Row|Column,
// 2x2), each result stored as it is: the engine folds these combine functions itself; with
// uniformity observed it calls them, and the two must agree bit for bit.
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 32) in;
layout(set=0, binding=0) buffer In32 { float x[]; } in32;
layout(set=0, binding=1) buffer In16 { float16_t x[]; } in16;
layout(set=0, binding=2) buffer Out32 { float y[]; } out32;
layout(set=0, binding=3) buffer Out16 { float16_t y[]; } out16;
float mx(const in float a, const in float b) { return max(a, b); }
float mn(const in float a, const in float b) { return min(b, a); }
float16_t mx16(const in float16_t a, const in float16_t b) { return max(a, b); }
float16_t mn16(const in float16_t a, const in float16_t b) { return min(a, b); }
#define ALL(T, M, F, OUT, BASE) \
  coopMatReduceNV(r##T, M, gl_CooperativeMatrixReduceRowNV, F); \
  coopMatStore(r##T, OUT.y, BASE, 16, gl_CooperativeMatrixLayoutRowMajor); \
  coopMatReduceNV(r##T, M, gl_CooperativeMatrixReduceColumnNV, F); \
  coopMatStore(r##T, OUT.y, BASE + 256, 16, gl_CooperativeMatrixLayoutRowMajor); \
  coopMatReduceNV(r##T, M, gl_CooperativeMatrixReduceRowNV | gl_CooperativeMatrixReduceColumnNV, F); \
  coopMatStore(r##T, OUT.y, BASE + 512, 16, gl_CooperativeMatrixLayoutRowMajor); \
  coopMatReduceNV(q##T, M, gl_CooperativeMatrixReduce2x2NV, F); \
  coopMatStore(q##T, OUT.y, BASE + 768, 8, gl_CooperativeMatrixLayoutRowMajor);
void main() {
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m32, r32;
  coopmat<float, gl_ScopeSubgroup, 8, 8, gl_MatrixUseAccumulator> q32;
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m16, r16;
  coopmat<float16_t, gl_ScopeSubgroup, 8, 8, gl_MatrixUseAccumulator> q16;
  coopMatLoad(m32, in32.x, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatLoad(m16, in16.x, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  ALL(32, m32, mx, out32, 0)
  ALL(32, m32, mn, out32, 1024)
  ALL(16, m16, mx16, out16, 0)
  ALL(16, m16, mn16, out16, 1024)
}

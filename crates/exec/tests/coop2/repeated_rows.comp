#version 450
// Row-local tile ops on tiles whose last rows repeat (flash attention's padded rows): a MulAdd
// into f32 and into f16, in place too; a Row reduction; a per-element exp and a per-element
// product with a matrix operand. The engine computes such rows once and copies the result
// (EngineOptions::repeated_rows_once); with that off it computes every row, and the two must
// agree bit for bit. Two subgroups, each its own tiles: instance 1 lies a tile further on.
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x = 64) in;
layout(set=0, binding=0) buffer A { float16_t x[]; } a;
layout(set=0, binding=1) buffer B { float16_t x[]; } b;
layout(set=0, binding=2) buffer C { float x[]; } c;
layout(set=0, binding=3) buffer Out { float y[]; } o;
layout(set=0, binding=4) buffer Out16 { float16_t y[]; } o16;
float mx(const in float p, const in float q) { return max(p, q); }
float e(const in uint row, const in uint col, const in float v) { return exp(v); }
float times(const in uint row, const in uint col, const in float v, const in float w) { return v * w; }
void main() {
  uint at = gl_SubgroupID * 256;
  uint out_at = gl_SubgroupID * 2048;
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> mc, d, r, p, q;
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> c16, d16;
  coopMatLoad(ma, a.x, at, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatLoad(mb, b.x, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatLoad(mc, c.x, at, 16, gl_CooperativeMatrixLayoutRowMajor);
  d = coopMatMulAdd(ma, mb, mc);
  coopMatStore(d, o.y, out_at, 16, gl_CooperativeMatrixLayoutRowMajor);
  // In place: the result in C's own matrix.
  mc = coopMatMulAdd(ma, mb, mc);
  coopMatStore(mc, o.y, out_at + 256, 16, gl_CooperativeMatrixLayoutRowMajor);
  // f16 results round every element.
  c16 = coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(mc);
  d16 = coopMatMulAdd(ma, mb, c16);
  coopMatStore(d16, o16.y, at, 16, gl_CooperativeMatrixLayoutRowMajor);
  // Row reduction, per-element functions (one reading a second matrix), in place too.
  coopMatReduceNV(r, d, gl_CooperativeMatrixReduceRowNV, mx);
  coopMatStore(r, o.y, out_at + 512, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatLoad(p, c.x, at, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatPerElementNV(q, p, e);
  coopMatStore(q, o.y, out_at + 768, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatPerElementNV(q, p, times, d);
  coopMatStore(q, o.y, out_at + 1024, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatPerElementNV(p, p, e);
  coopMatStore(p, o.y, out_at + 1280, 16, gl_CooperativeMatrixLayoutRowMajor);
}

#version 450
// Per-element max and min of an f32 tile with a second f32 tile (flash attention's running row
// maxima), in both operand orders and in place: the engine folds these functions onto the
// tiles itself; with uniformity observed it calls them, and the two must agree bit for bit.
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 32) in;
layout(set=0, binding=0) buffer In32 { float x[]; } in32;
layout(set=0, binding=1) buffer Out32 { float y[]; } out32;
float mx(const in uint r, const in uint c, const in float a, const in float b) { return max(a, b); }
float mn(const in uint r, const in uint c, const in float a, const in float b) { return min(a, b); }
float xm(const in uint r, const in uint c, const in float a, const in float b) { return max(b, a); }
void main() {
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> a, b, r;
  coopMatLoad(a, in32.x, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatLoad(b, in32.x, 256, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatPerElementNV(r, a, mx, b);
  coopMatStore(r, out32.y, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatPerElementNV(r, a, mn, b);
  coopMatStore(r, out32.y, 256, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatPerElementNV(r, a, xm, b);
  coopMatStore(r, out32.y, 512, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatPerElementNV(a, a, mx, b);
  coopMatStore(a, out32.y, 768, 16, gl_CooperativeMatrixLayoutRowMajor);
}

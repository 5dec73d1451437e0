#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
// coopMatPerElementNV over a workgroup matrix of 48x40 elements: more than the engine calls
// a function on at once, its parts starting inside a row. Each call gets its own element's
// row and column (SPV_NV_cooperative_matrix2, PerElementOpNV).
layout(local_size_x = 64) in;
layout(set=0, binding=0) buffer In { float x[]; } inb;
layout(set=0, binding=1) buffer Out { float y[]; } outb;
float f(const in uint r, const in uint c, const in float a, const in float s) {
  return a * s + float(r) * 64.0 + float(c);
}
void main() {
  coopmat<float, gl_ScopeWorkgroup, 48, 40, gl_MatrixUseAccumulator> a;
  coopMatLoad(a, inb.x, 0, 40, gl_CooperativeMatrixLayoutRowMajor);
  coopmat<float, gl_ScopeWorkgroup, 48, 40, gl_MatrixUseAccumulator> r;
  coopMatPerElementNV(r, a, f, 2.0);
  coopMatStore(r, outb.y, 0, 40, gl_CooperativeMatrixLayoutRowMajor);
}

#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
// coopMatPerElementNV with a second matrix among the extra operands: each call gets that
// matrix's element at the same (row, column) (SPV_NV_cooperative_matrix2, PerElementOpNV), and
// every component of a vector operand.
layout(local_size_x = 32) in;
layout(set=0, binding=0) buffer In { float x[]; } inb;
layout(set=0, binding=1) buffer Out { float y[]; } outb;
float f(const in uint r, const in uint c, const in float a, const in float b, const in vec2 s) {
  return a * s.x + b - float(r) + float(c) * s.y;
}
void main() {
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> a;
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> b;
  coopMatLoad(a, inb.x, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatLoad(b, inb.x, 256, 16, gl_CooperativeMatrixLayoutColumnMajor);
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> r;
  coopMatPerElementNV(r, a, f, b, vec2(3.0, 0.5));
  coopMatStore(r, outb.y, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}

#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
// Silent with --profile nvidia-h100-580: int8 A row-major, B column-major, accumulator column-major.
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer In { int8_t x[]; } inb;
layout(set = 0, binding = 1) buffer Out { int y[]; } outb;
void main() {
  coopmat<int8_t, gl_ScopeSubgroup, 16, 32, gl_MatrixUseA> a;
  coopmat<int8_t, gl_ScopeSubgroup, 32, 16, gl_MatrixUseB> b;
  coopmat<int, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> c;
  coopMatLoad(a, inb.x, 0, 32, gl_CooperativeMatrixLayoutRowMajor);
  coopMatLoad(b, inb.x, 512, 32, gl_CooperativeMatrixLayoutColumnMajor);
  coopMatLoad(c, outb.y, 0, 16, gl_CooperativeMatrixLayoutColumnMajor);
  c = coopMatMulAdd(a, b, c);
  coopMatStore(c, outb.y, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}

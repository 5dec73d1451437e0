#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
// With --profile nvidia-h100-580, fires coopmat-layout-for-use: a float16 A matrix loaded column-major.
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer In { float16_t x[]; } inb;
layout(set = 0, binding = 1) buffer Out { float y[]; } outb;
void main() {
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> a;
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> b;
  coopMatLoad(a, inb.x, 0, 16, gl_CooperativeMatrixLayoutColumnMajor);
  coopMatLoad(b, inb.x, 256, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> c = coopMatMulAdd(a, b, coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0));
  coopMatStore(c, outb.y, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}

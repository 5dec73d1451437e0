#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer B { float b[]; };
void main() {
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> a = coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>(1.0);
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> m = coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>(1.0);
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> c = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
  for (uint i = 0; i < 100000000u; i++) { c = coopMatMulAdd(a, m, c); }
  coopMatStore(c, b, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}

#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
// Stores whose stride is shorter than a row: 8 elements for 16-element rows (row-major), and
// 1 uvec4 (8 halfs) for 16-element columns (column-major).
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer A { float16_t a[]; };
layout(std430, binding = 1) buffer B { uvec4 b[]; };
void main() {
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
    coopMatLoad(m, a, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(m, a, 1024, 8, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(m, b, 256, 1, gl_CooperativeMatrixLayoutColumnMajor);
}

#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
// Silent: strides of exactly a row (16 halfs, 2 uvec4) or more; a load may overlap rows.
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer A { float16_t a[]; };
layout(std430, binding = 1) buffer B { uvec4 b[]; };
void main() {
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
    coopMatLoad(m, a, 0, 8, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(m, a, 1024, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(m, b, 256, 2, gl_CooperativeMatrixLayoutColumnMajor);
    coopMatStore(m, a, 4096, 40, gl_CooperativeMatrixLayoutColumnMajor);
}

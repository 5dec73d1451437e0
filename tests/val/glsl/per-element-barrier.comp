// expect: NV2-Callback-NoTangled
// a barrier in a per-element function
#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_buffer_reference : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x = 32) in;
layout(buffer_reference, std430, buffer_reference_align = 2) buffer decodeBuf { float16_t v; };
layout(set = 0, binding = 0) buffer Src { float16_t data[]; } src;
layout(set = 0, binding = 1) buffer Dst { float16_t data[]; } dst;
float16_t scale(const in uint32_t row, const in uint32_t col, const in float16_t x, const in float16_t s) {
    barrier();
    return x * s;
}
void main() {
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
    coopMatLoad(m, src.data, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> r;
    coopMatPerElementNV(r, m, scale, float16_t(2));
    coopMatStore(r, dst.data, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}

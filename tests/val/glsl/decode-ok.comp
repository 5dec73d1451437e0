// expect: valid
// a plain decode function
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
float16_t decode(const in decodeBuf b, const in uint32_t blockCoord[2], const in uint32_t coordInBlock[2]) {
    return b.v * float16_t(2);
}
void main() {
    tensorLayoutNV<2> t = createTensorLayoutNV(2);
    t = setTensorLayoutDimensionNV(t, 16, 16);
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> m;
    coopMatLoadTensorNV(m, src.data, 0, t, decode);
    coopMatStore(m, dst.data, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}

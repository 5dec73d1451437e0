// expect: NV2-StoreTensor-BlockSize
// a store through a layout with block size 4
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
void main() {
    tensorLayoutNV<2> t = createTensorLayoutNV(2);
    t = setTensorLayoutBlockSizeNV(t, 1, 4);
    t = setTensorLayoutDimensionNV(t, 16, 16);
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m = coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(1.0);
    coopMatStoreTensorNV(m, dst.data, 0, t);
}

#version 460
// A small MLP per invocation, as neural shading runs it: 16 -> 32 -> 32 -> 8, f16 throughout,
// ReLU between layers, weights in the inferencing-optimal layout at offsets W1, W2, W3 and
// biases at B1, B2, B3 (bytes, from -D defines).
#extension GL_NV_cooperative_vector : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer In { float16_t x[]; };
layout(std430, binding = 1) readonly buffer Weights { float16_t w[]; };
layout(std430, binding = 2) buffer Out { float16_t y[]; };

const int OPT = gl_CooperativeVectorMatrixLayoutInferencingOptimalNV;
const int F16 = gl_ComponentTypeFloat16NV;

void main() {
    uint i = gl_GlobalInvocationID.x;
    coopvecNV<float16_t, 16> v;
    coopVecLoadNV(v, x, i * 32);
    coopvecNV<float16_t, 32> h1, h2;
    coopvecNV<float16_t, 8> o;
    coopVecMatMulAddNV(h1, v, F16, w, W1, F16, w, B1, F16, 32, 16, OPT, false, 0);
    h1 = max(h1, coopvecNV<float16_t, 32>(0.0));
    coopVecMatMulAddNV(h2, h1, F16, w, W2, F16, w, B2, F16, 32, 32, OPT, false, 0);
    h2 = max(h2, coopvecNV<float16_t, 32>(0.0));
    coopVecMatMulAddNV(o, h2, F16, w, W3, F16, w, B3, F16, 8, 32, OPT, false, 0);
    coopVecStoreNV(o, y, i * 16);
}

#version 460
// The training accumulations: every invocation adds the outer product of its two f16 vectors
// into one M x N matrix (training-optimal, ACC_INTERP elements) and its f32 and f16 vectors
// into sums (the f16 one when ACC_F16, the f16-accumulation variant), all with device-scope
// atomic adds.
#extension GL_NV_cooperative_vector : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 64) in;
const int M = 10;
const int N = 7;
layout(std430, binding = 0) readonly buffer In { float16_t v[]; };
layout(std430, binding = 1) buffer Grad { float grad[]; };
layout(std430, binding = 2) buffer Sum { float sum[]; };
layout(std430, binding = 3) buffer SumH { float16_t sumh[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    coopvecNV<float16_t, M> a;
    coopvecNV<float16_t, N> b;
    coopVecLoadNV(a, v, i * 64);
    coopVecLoadNV(b, v, i * 64 + 32);
    coopVecOuterProductAccumulateNV(a, b, grad, 0, 0, gl_CooperativeVectorMatrixLayoutTrainingOptimalNV, ACC_INTERP);
    coopVecReduceSumAccumulateNV(coopvecNV<float, M>(a), sum, 16);
#if ACC_F16
    coopVecReduceSumAccumulateNV(b, sumh, 32);
#endif
}

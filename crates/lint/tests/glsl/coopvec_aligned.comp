#version 450
#extension GL_NV_cooperative_vector : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : enable
// Every constant offset and stride aligned, every layout allowed: silent.
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer Weights { float16_t weights[]; };
layout(set = 0, binding = 1) readonly buffer Inputs { float16_t inputs[]; };
layout(set = 0, binding = 2) buffer Outputs { float16_t outputs[]; };

void main() {
    coopvecNV<float16_t, 16> inputVec;
    coopVecLoadNV(inputVec, inputs, 16);
    coopvecNV<float16_t, 16> a, b;
    coopVecMatMulAddNV(a, inputVec, gl_ComponentTypeFloat16NV, weights, 64,
                       gl_ComponentTypeFloat16NV, weights, 16, gl_ComponentTypeFloat16NV, 16, 16,
                       gl_CooperativeVectorMatrixLayoutRowMajorNV, false, 32);
    coopVecMatMulNV(b, inputVec, gl_ComponentTypeFloatE4M3NV, weights, 1024,
                    gl_ComponentTypeFloatE4M3NV, 16, 16,
                    gl_CooperativeVectorMatrixLayoutInferencingOptimalNV, true, 0);
    coopVecOuterProductAccumulateNV(a, b, weights, 4096, 0,
                                    gl_CooperativeVectorMatrixLayoutTrainingOptimalNV,
                                    gl_ComponentTypeFloat16NV);
    coopVecReduceSumAccumulateNV(a, weights, 8192);
    coopVecStoreNV(a + b, outputs, gl_GlobalInvocationID.x * 32);
}

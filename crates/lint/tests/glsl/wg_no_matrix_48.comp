#version 450
#extension GL_NV_cooperative_vector : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : enable
// Silent: 48 invocations, but cooperative vectors need no full subgroup.
layout(local_size_x = 48) in;
layout(set = 0, binding = 0) readonly buffer Weights { float16_t weights[]; };
layout(set = 0, binding = 1) readonly buffer Inputs { float16_t inputs[]; };
layout(set = 0, binding = 2) buffer Outputs { float16_t outputs[]; };

void main() {
    uint tid = gl_GlobalInvocationID.x;
    coopvecNV<float16_t, 16> inputVec;
    coopVecLoadNV(inputVec, inputs, tid * 32);
    coopvecNV<float16_t, 16> outputVec;
    coopVecMatMulNV(outputVec, inputVec, gl_ComponentTypeFloat16NV, weights, 0,
                    gl_ComponentTypeFloat16NV, 16, 16,
                    gl_CooperativeVectorMatrixLayoutInferencingOptimalNV, false, 0);
    coopVecStoreNV(outputVec, outputs, tid * 32);
}

#version 450
#extension GL_NV_cooperative_vector : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : enable
// Silent: the matrix offset follows the workgroup (uniform within every subgroup) and the bias
// offset comes from a push constant; only the vectors' own offsets are per lane.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer Weights { float16_t weights[]; };
layout(set = 0, binding = 1) readonly buffer Inputs { float16_t inputs[]; };
layout(set = 0, binding = 2) buffer Outputs { float16_t outputs[]; };
layout(push_constant) uniform Push { uint biasOffset; };

void main() {
    uint matOffset = gl_WorkGroupID.x * 512;
    coopvecNV<float16_t, 16> inputVec;
    coopVecLoadNV(inputVec, inputs, gl_GlobalInvocationID.x * 32);
    coopvecNV<float16_t, 16> outputVec;
    coopVecMatMulAddNV(outputVec, inputVec, gl_ComponentTypeFloat16NV, weights, matOffset,
                       gl_ComponentTypeFloat16NV, weights, biasOffset, gl_ComponentTypeFloat16NV,
                       16, 16, gl_CooperativeVectorMatrixLayoutInferencingOptimalNV, false, 0);
    coopVecStoreNV(outputVec, outputs, gl_GlobalInvocationID.x * 32);
}

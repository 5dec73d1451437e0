#version 450
#extension GL_NV_cooperative_vector : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : enable
#extension GL_KHR_shader_subgroup_basic : enable
// Fires: the bias offset is read at a per-lane index, and the matrix offset is picked by a
// branch on the lane (a phi after divergent control).
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer Weights { float16_t weights[]; };
layout(set = 0, binding = 1) readonly buffer Inputs { float16_t inputs[]; };
layout(set = 0, binding = 2) buffer Outputs { float16_t outputs[]; };
layout(set = 0, binding = 3) readonly buffer Experts { uint biasOffsets[]; };

void main() {
    uint lane = gl_SubgroupInvocationID;
    coopvecNV<float16_t, 16> inputVec;
    coopVecLoadNV(inputVec, inputs, gl_GlobalInvocationID.x * 32);
    uint matOffset = 0;
    if (lane >= 16) {
        matOffset = 512;
    }
    uint biasOffset = biasOffsets[lane & 3u];
    coopvecNV<float16_t, 16> outputVec;
    coopVecMatMulAddNV(outputVec, inputVec, gl_ComponentTypeFloat16NV, weights, matOffset,
                       gl_ComponentTypeFloat16NV, weights, biasOffset, gl_ComponentTypeFloat16NV,
                       16, 16, gl_CooperativeVectorMatrixLayoutInferencingOptimalNV, false, 0);
    coopVecStoreNV(outputVec, outputs, gl_GlobalInvocationID.x * 32);
}

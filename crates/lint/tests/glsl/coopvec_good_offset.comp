#version 450
#extension GL_NV_cooperative_vector : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : enable
// The seed page's "Good" example: the matrix offset comes from a uniform buffer.
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer Weights { float16_t weights[]; };
layout(set = 0, binding = 1) readonly buffer Inputs { float16_t inputs[]; };
layout(set = 0, binding = 2) buffer Outputs { float16_t outputs[]; };
layout(set = 0, binding = 3) uniform Cfg { uint matOffset; };

void main() {
    uint tid = gl_GlobalInvocationID.x;
    coopvecNV<float16_t, 16> inputVec;
    coopVecLoadNV(inputVec, inputs, tid * 32);
    coopvecNV<float16_t, 16> outputVec;
    coopVecMatMulNV(outputVec, inputVec, gl_ComponentTypeFloat16NV, weights, matOffset,
                    gl_ComponentTypeFloat16NV, 16, 16,
                    gl_CooperativeVectorMatrixLayoutInferencingOptimalNV, false, 0);
    coopVecStoreNV(outputVec, outputs, tid * 32);
}

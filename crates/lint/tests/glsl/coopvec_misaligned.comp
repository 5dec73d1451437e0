#version 450
#extension GL_NV_cooperative_vector : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : enable
// Constant offsets and a stride that break the Vulkan alignment rules: a vector load at byte 8
// (16 needed), a matrix at byte 32 (64 needed), a bias at byte 8 (16 needed), a row-major
// stride of 24 bytes (16 needed).
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer Weights { float16_t weights[]; };
layout(set = 0, binding = 1) readonly buffer Inputs { float16_t inputs[]; };
layout(set = 0, binding = 2) buffer Outputs { float16_t outputs[]; };

void main() {
    coopvecNV<float16_t, 12> inputVec;
    coopVecLoadNV(inputVec, inputs, 8);
    coopvecNV<float16_t, 16> outputVec;
    coopVecMatMulAddNV(outputVec, inputVec, gl_ComponentTypeFloat16NV, weights, 32,
                       gl_ComponentTypeFloat16NV, weights, 8, gl_ComponentTypeFloat16NV, 16, 12,
                       gl_CooperativeVectorMatrixLayoutRowMajorNV, false, 24);
    coopVecStoreNV(outputVec, outputs, gl_GlobalInvocationID.x * 32);
}

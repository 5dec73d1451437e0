#version 450
#extension GL_NV_cooperative_vector : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : enable
// Layouts the Vulkan rules forbid: an E4M3 matrix in the row-major layout, a transposed
// row-major matrix, and an outer product accumulated into a column-major matrix.
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer Weights { float16_t weights[]; };
layout(set = 0, binding = 1) readonly buffer Inputs { float16_t inputs[]; };
layout(set = 0, binding = 2) buffer Outputs { float16_t outputs[]; };

void main() {
    uint tid = gl_GlobalInvocationID.x;
    coopvecNV<float16_t, 16> inputVec;
    coopVecLoadNV(inputVec, inputs, tid * 32);
    coopvecNV<float16_t, 16> a, b;
    coopVecMatMulNV(a, inputVec, gl_ComponentTypeFloatE4M3NV, weights, 0,
                    gl_ComponentTypeFloatE4M3NV, 16, 16,
                    gl_CooperativeVectorMatrixLayoutRowMajorNV, false, 16);
    coopVecMatMulNV(b, inputVec, gl_ComponentTypeFloat16NV, weights, 1024,
                    gl_ComponentTypeFloat16NV, 16, 16,
                    gl_CooperativeVectorMatrixLayoutRowMajorNV, true, 32);
    coopVecOuterProductAccumulateNV(a, b, weights, 4096, 32,
                                    gl_CooperativeVectorMatrixLayoutColumnMajorNV,
                                    gl_ComponentTypeFloat16NV);
    coopVecStoreNV(a + b, outputs, tid * 32);
}

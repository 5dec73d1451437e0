#version 460
// One matrix-vector product per invocation, every parameter from a -D define:
// IN_T / IN_N (input type and components), IN_INTERP, MAT_INTERP, BIAS_INTERP (gl_ComponentType*),
// RES_T, M, K, LAYOUT (gl_CooperativeVectorMatrixLayout*), TRANSPOSE, STRIDE (bytes),
// MAT_BYTES (bytes between the two matrices lanes alternate over), BIAS (0/1), SKIP (lanes with
// index % SKIP == 1 do nothing, 0 = none).
#extension GL_NV_cooperative_vector : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer In { uint inputs[]; };
layout(std430, binding = 1) readonly buffer Mat { uint matrix[]; };
layout(std430, binding = 2) readonly buffer Bias { uint bias[]; };
layout(std430, binding = 3) buffer Out { uint results[]; };

const uint IN_STRIDE = (IN_N * 8 + 15) / 16 * 16;   // bytes per input vector (8 bytes/comp max)
const uint OUT_STRIDE = (M * 4 + 15) / 16 * 16;

void main() {
    uint i = gl_LocalInvocationIndex;
#if SKIP
    if (i % SKIP == 1) return;
#endif
    coopvecNV<IN_T, IN_N> x;
    coopVecLoadNV(x, inputs, i * IN_STRIDE);
    coopvecNV<RES_T, M> r;
    uint moff = (i % 2) * MAT_BYTES;
#if BIAS
    coopVecMatMulAddNV(r, x, IN_INTERP, matrix, moff, MAT_INTERP, bias, (i % 2) * 16 * ((M * 4 + 15) / 16),
                       BIAS_INTERP, M, K, LAYOUT, TRANSPOSE, STRIDE);
#else
    coopVecMatMulNV(r, x, IN_INTERP, matrix, moff, MAT_INTERP, M, K, LAYOUT, TRANSPOSE, STRIDE);
#endif
    coopVecStoreNV(r, results, i * OUT_STRIDE);
}

#version 450
// C (f32, N x N) = A (f16, N x N, row-major) x B (f16, N x N, row-major), KHR cooperative
// matrices with 16x16x16 tiles. A workgroup of 4 subgroups computes a 128x128 block of C, each
// subgroup a 64x64 quarter (4x4 accumulator tiles). Per 32-deep K step the workgroup stages a
// 128x32 slice of A and a 32x128 slice of B in shared memory (uvec4 = 8 halves per element).
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = 128) in;
layout(constant_id = 0) const uint N = 1024;
layout(std430, binding = 0) readonly buffer A { uvec4 a[]; };
layout(std430, binding = 1) readonly buffer B { uvec4 b[]; };
layout(std430, binding = 2) writeonly buffer C { float c[]; };
const uint BM = 128, BN = 128, BK = 32;
shared uvec4 sa[BM * BK / 8];
shared uvec4 sb[BK * BN / 8];
void main() {
    uint tid = gl_LocalInvocationID.x;
    uint sg = gl_SubgroupID;
    uint wm = (sg / 2) * 64, wn = (sg % 2) * 64;
    uint bm = gl_WorkGroupID.y * BM, bn = gl_WorkGroupID.x * BN;
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc[4][4];
    [[unroll]] for (uint i = 0; i < 4; i++)
        [[unroll]] for (uint j = 0; j < 4; j++)
            acc[i][j] = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    for (uint k0 = 0; k0 < N; k0 += BK) {
        [[unroll]] for (uint r = 0; r < 4; r++) {
            uint idx = tid + r * 128;
            sa[idx] = a[((bm + idx / 4) * N + k0) / 8 + idx % 4];
            sb[idx] = b[((k0 + idx / 16) * N + bn) / 8 + idx % 16];
        }
        barrier();
        [[unroll]] for (uint kk = 0; kk < BK; kk += 16) {
            coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma[4];
            coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb[4];
            [[unroll]] for (uint i = 0; i < 4; i++)
                coopMatLoad(ma[i], sa, ((wm + i * 16) * BK + kk) / 8, BK / 8, gl_CooperativeMatrixLayoutRowMajor);
            [[unroll]] for (uint j = 0; j < 4; j++)
                coopMatLoad(mb[j], sb, (kk * BN + wn + j * 16) / 8, BN / 8, gl_CooperativeMatrixLayoutRowMajor);
            [[unroll]] for (uint i = 0; i < 4; i++)
                [[unroll]] for (uint j = 0; j < 4; j++)
                    acc[i][j] = coopMatMulAdd(ma[i], mb[j], acc[i][j]);
        }
        barrier();
    }
    [[unroll]] for (uint i = 0; i < 4; i++)
        [[unroll]] for (uint j = 0; j < 4; j++)
            coopMatStore(acc[i][j], c, (bm + wm + i * 16) * N + bn + wn + j * 16, N, gl_CooperativeMatrixLayoutRowMajor);
}

#version 450
#extension GL_KHR_cooperative_matrix : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_vote : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : enable
// Fires coopmat-divergent-control-flow: the loop misses the last subgroup's vote, so an invocation of that subgroup may keep a value above the threshold while the others skip.
layout(local_size_x = 128) in;
layout(set = 0, binding = 0) readonly buffer A { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer M { float m[]; };
layout(set = 0, binding = 2) buffer C { float c[]; };
layout(push_constant) uniform P { uint blocks; } p;

shared float tmpsh[4];

void main() {
    const float NEG_FLT_MAX_OVER_2 = uintBitsToFloat(0xFEFFFFFF);
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc =
        coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    for (uint j = 0; j < p.blocks; ++j) {
        float max_mask = NEG_FLT_MAX_OVER_2;
        for (uint idx = 0; idx < 256; idx += gl_WorkGroupSize.x) {
            max_mask = max(max_mask, m[j * 256 + idx + gl_LocalInvocationIndex]);
        }
        bool all_less = subgroupAll(max_mask <= NEG_FLT_MAX_OVER_2);
        barrier();
        if (gl_SubgroupInvocationID == 0) {
            tmpsh[gl_SubgroupID] = all_less ? NEG_FLT_MAX_OVER_2 : 0.0f;
        }
        barrier();
        for (uint s = 0; s < gl_NumSubgroups - 1u; ++s) {
            max_mask = max(max_mask, tmpsh[s]);
        }
        if (max_mask <= NEG_FLT_MAX_OVER_2) {
            continue;
        }
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
        coopMatLoad(ma, a, j * 512, 16, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(mb, a, j * 512 + 256, 16, gl_CooperativeMatrixLayoutRowMajor);
        acc = coopMatMulAdd(ma, mb, acc);
        barrier();
    }
    coopMatStore(acc, c, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}

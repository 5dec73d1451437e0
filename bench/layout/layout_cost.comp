#version 450
// Cost of a cooperative-matrix load by memory layout and Use, for the device profiles'
// `layout_costs` (coopmat-layout-for-use). Built with -DT=<type> -DACC=<acc type> -DK=<K>
// -DUSE_A=<1: the loaded matrix is A; 0: B> -DLAYOUT=<gl_CooperativeMatrixLayout...>.
// Each subgroup loads one tile per iteration (the same bytes whatever the layout: a tile is
// contiguous, read row- or column-major) and multiplies it into an accumulator.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x = 128) in;
layout(constant_id = 0) const uint ITERS = 1024;
layout(set = 0, binding = 0) readonly buffer In { T x[]; } inb;
layout(set = 0, binding = 1) buffer Out { ACC y[]; } outb;
const uint TILES = 1024;
void main() {
  uint sg = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
  coopmat<ACC, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc =
      coopmat<ACC, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(ACC(0));
  coopmat<T, gl_ScopeSubgroup, 16, K, gl_MatrixUseA> a;
  coopmat<T, gl_ScopeSubgroup, K, 16, gl_MatrixUseB> b;
#if USE_A
  coopMatLoad(b, inb.x, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
#else
  coopMatLoad(a, inb.x, 0, K, gl_CooperativeMatrixLayoutRowMajor);
#endif
  for (uint i = 0; i < ITERS; i++) {
    uint off = ((sg * 7u + i * 13u) % TILES) * (16u * K);
#if USE_A
    // Row-major: rows of K elements; column-major: columns of 16.
    coopMatLoad(a, inb.x, off, LAYOUT == gl_CooperativeMatrixLayoutRowMajor ? K : 16u, LAYOUT);
#else
    coopMatLoad(b, inb.x, off, LAYOUT == gl_CooperativeMatrixLayoutRowMajor ? 16u : K, LAYOUT);
#endif
    acc = coopMatMulAdd(a, b, acc);
  }
  coopMatStore(acc, outb.y, sg * 256u, 16, gl_CooperativeMatrixLayoutRowMajor);
}

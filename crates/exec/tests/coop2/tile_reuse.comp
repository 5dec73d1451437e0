#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_buffer_reference : require
// Every workgroup decodes the same f16 tile of binding 0 (the decoded-tile cache may reuse it)
// and stores it at its own place in binding 1. TABLE_PER_WORKGROUP: the decode adds a
// Workgroup table that differs per workgroup. WRITE_SOURCE: each workgroup then adds 1 to
// every word of binding 0; WRITE_ALIAS: the same through binding 2 (bound to binding 0's
// memory by the test). DECODE_COUNTS: the decode function counts its calls in binding 3 (a
// side effect: its results may not be reused).
layout(local_size_x = 32) in;
layout(set=0, binding=0) buffer In { uint x[]; } inb;
layout(set=0, binding=1) buffer Out { float y[]; } outb;
layout(set=0, binding=2) buffer Alias { uint z[]; } alias;
layout(set=0, binding=3) buffer Calls { uint n; } calls;
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer Blk { uint q[8]; };
shared uint table[16];
float16_t dec(const in Blk b, const in uint bc[2], const in uint cib[2]) {
#ifdef DECODE_COUNTS
  atomicAdd(calls.n, 1);
#endif
  return float16_t(b.q[cib[1]] + table[bc[0] % 16]);
}
void main() {
  uint wg = gl_WorkGroupID.x;
  uint i = gl_LocalInvocationIndex;
#ifdef TABLE_PER_WORKGROUP
  if (i < 16) table[i] = wg * 100 + i;
#else
  if (i < 16) table[i] = i;
#endif
  barrier();
  tensorLayoutNV<2> t = createTensorLayoutNV(2);
  t = setTensorLayoutBlockSizeNV(t, 1, 8);
  t = setTensorLayoutDimensionNV(t, 16, 32);
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
  coopMatLoadTensorNV(m, inb.x, 0, t, dec);
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> f =
      coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(m);
  coopMatStore(f, outb.y, wg * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
  barrier();
#ifdef WRITE_SOURCE
  if (i == 0) for (uint k = 0; k < 512; k++) inb.x[k] += 1;
#endif
#ifdef WRITE_ALIAS
  if (i == 0) for (uint k = 0; k < 512; k++) alias.z[k] += 1;
#endif
}

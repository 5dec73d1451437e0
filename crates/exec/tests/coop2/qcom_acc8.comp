#version 450
// Every QCOM instruction on 8x8 accumulators (the shape lavapipe, with 8-invocation subgroups,
// has): row i from the invocation with gl_SubgroupInvocationID i, one matrix per subgroup.
#extension GL_KHR_cooperative_matrix : require
#extension GL_QCOM_cooperative_matrix_conversion : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer In { uint x[]; } inb;
layout(set = 0, binding = 1) buffer Out { uint y[]; } outb;
void main() {
  uint i = gl_SubgroupInvocationID, s = gl_SubgroupID;
  // f32 accumulator: row i from 8 floats; stored row-major, 64 words per subgroup.
  float fr[8];
  for (int k = 0; k < 8; k++) fr[k] = uintBitsToFloat(inb.x[s * 64 + i * 8 + k]);
  coopmat<float, gl_ScopeSubgroup, 8, 8, gl_MatrixUseAccumulator> c;
  vectorToCoopmatQCOM(fr, c);
  coopMatStore(c, outb.y, s * 64, 8, gl_CooperativeMatrixLayoutRowMajor);
  // f16 accumulator from 4 packed words per row, back out as words, through f16[8] and a
  // sub-array of its last 4 halves.
  uint w[4];
  for (int k = 0; k < 4; k++) w[k] = inb.x[1024 + s * 32 + i * 4 + k];
  coopmat<float16_t, gl_ScopeSubgroup, 8, 8, gl_MatrixUseAccumulator> h;
  vectorToCoopmatQCOM(w, h);
  uint r[4];
  coopmatToVectorQCOM(h, r);
  float16_t hh[8];
  bitcastQCOM(r, hh);
  float16_t tail[4];
  extractSubArrayQCOM(hh, 4, tail);
  uint t2[2];
  bitcastQCOM(tail, t2);
  for (int k = 0; k < 4; k++) outb.y[512 + s * 32 + i * 4 + k] = r[k];
  for (int k = 0; k < 2; k++) outb.y[768 + s * 16 + i * 2 + k] = t2[k];
  // Extract of the f32 matrix scaled by 2: row i back to invocation i.
  c = c * 2.0;
  float back[8];
  coopmatToVectorQCOM(c, back);
  for (int k = 0; k < 8; k++) outb.y[1024 + s * 64 + i * 8 + k] = floatBitsToUint(back[k]);
}

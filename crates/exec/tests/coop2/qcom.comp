#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_QCOM_cooperative_matrix_conversion : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
#ifndef LOCAL
#define LOCAL 32
#endif
layout(local_size_x = LOCAL) in;
layout(set=0, binding=0) buffer In { uint x[]; } inb;
layout(set=0, binding=1) buffer Out { uint y[]; } outb;
void main() {
  uint i = gl_SubgroupInvocationID;
  // A 16x16 f16 from packed rows: 8 words per invocation (invocations 16..31 ignored).
  uint w[8];
  for (int k = 0; k < 8; k++) w[k] = inb.x[i * 8 + k];
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> a;
  vectorToCoopmatQCOM(w, a);
  coopMatStore(a, outb.y, 0, 8, gl_CooperativeMatrixLayoutRowMajor);
  // Back to packed words, through a bitcast to f16 and a sub-array.
  uint r[8];
  coopmatToVectorQCOM(a, r);
  float16_t h[16];
  bitcastQCOM(r, h);
  float16_t hs[8];
  extractSubArrayQCOM(h, 8, hs);
  uint r2[4];
  bitcastQCOM(hs, r2);
  for (int k = 0; k < 4; k++) outb.y[256 + i * 4 + k] = r2[k];
  // B 16x16 f16 from unpacked columns.
  float16_t colv[16];
  for (int k = 0; k < 16; k++) colv[k] = uint16BitsToHalf(uint16_t(inb.x[k * 16 + i] & 0xffffu));
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> b;
  vectorToCoopmatQCOM(colv, b);
  coopMatStore(b, outb.y, 512, 8, gl_CooperativeMatrixLayoutRowMajor);
  // Accumulator f32, 16x16: row i from 16 floats.
  float fr[16];
  for (int k = 0; k < 16; k++) fr[k] = uintBitsToFloat(inb.x[i * 16 + k]);
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> c;
  vectorToCoopmatQCOM(fr, c);
  coopMatStore(c, outb.y, 1024, 16, gl_CooperativeMatrixLayoutRowMajor);
}

#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
// A per-element function whose first values depend only on push constants and its non-matrix
// extra operand (one value per call, a different one in each workgroup): the engine runs those
// once per call, the rest per element.
layout(local_size_x = 32) in;
layout(set=0, binding=0) buffer In { float x[]; } inb;
layout(set=0, binding=1) buffer Out { float y[]; } outb;
layout(push_constant) uniform P { uint base; float gain; } pc;
float f(const in uint r, const in uint c, const in float a, const in uint w) {
  uint s = pc.base * 7u + w * 3u;
  float g = pc.gain * float(s);
  return a * g + float(r * 16u + c);
}
void main() {
  uint w = gl_WorkGroupID.x;
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> a;
  coopMatLoad(a, inb.x, w * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> r;
  coopMatPerElementNV(r, a, f, w);
  coopMatStore(r, outb.y, w * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
}

#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
// Silent: the same operation on every component, a sum of all components, same-type pairs.
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer In { float16_t x[]; } inb;
layout(set = 0, binding = 1) buffer Out { float16_t y[]; } outb;
layout(push_constant) uniform P { float scale; } pc;
shared float16_t partial[1];
void main() {
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> n;
  coopMatLoad(m, inb.x, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatLoad(n, inb.x, 256, 16, gl_CooperativeMatrixLayoutRowMajor);
  float s = 0.0;
  for (int i = 0; i < m.length(); ++i) {
    m[i] = max(m[i], float16_t(0)) * float16_t(pc.scale) + n[i];
    s += float(m[i]);
  }
  s = subgroupAdd(s);
  if (subgroupElect()) outb.y[4096 + gl_WorkGroupID.x] = float16_t(s);
  coopMatStore(m, outb.y, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}

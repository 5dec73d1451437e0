#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_QCOM_cooperative_matrix_conversion : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
// Silent: 32 rows from the 32 invocations of a subgroup (workgroup of 64), and back.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer In { float16_t x[]; } inb;
layout(set = 0, binding = 1) buffer Out { float16_t y[]; } outb;
void main() {
  float16_t row[16];
  for (uint k = 0; k < 16; k++) row[k] = inb.x[gl_SubgroupInvocationID * 16 + k];
  coopmat<float16_t, gl_ScopeSubgroup, 32, 16, gl_MatrixUseA> a;
  vectorToCoopmatQCOM(row, a);
  float16_t back[16];
  coopmatToVectorQCOM(a, back);
  for (uint k = 0; k < 16; k++) outb.y[gl_SubgroupInvocationID * 16 + k] = back[k];
}

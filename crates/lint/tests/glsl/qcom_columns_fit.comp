#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_QCOM_cooperative_matrix_conversion : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
// Silent: a B matrix's 16 columns come from invocations 0..15 of a 32-invocation workgroup.
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer In { float16_t x[]; } inb;
layout(set = 0, binding = 1) buffer Out { float16_t y[]; } outb;
void main() {
  float16_t col[16];
  for (uint k = 0; k < 16; k++) col[k] = inb.x[gl_SubgroupInvocationID * 16 + k];
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> b;
  vectorToCoopmatQCOM(col, b);
  coopMatStore(b, outb.y, 0, 16, gl_CooperativeMatrixLayoutColumnMajor);
}

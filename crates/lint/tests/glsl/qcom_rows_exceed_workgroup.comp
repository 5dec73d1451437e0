#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_QCOM_cooperative_matrix_conversion : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
// Fires coopmat-qcom-subgroup-requirements: row i of the 32-row matrix comes from the
// invocation with SubgroupLocalInvocationId i, but the workgroup has only 16 invocations.
layout(local_size_x = 16) in;
layout(set = 0, binding = 0) buffer In { float16_t x[]; } inb;
layout(set = 0, binding = 1) buffer Out { float16_t y[]; } outb;
void main() {
  float16_t row[16];
  for (uint k = 0; k < 16; k++) row[k] = inb.x[gl_SubgroupInvocationID * 16 + k];
  coopmat<float16_t, gl_ScopeSubgroup, 32, 16, gl_MatrixUseA> a;
  vectorToCoopmatQCOM(row, a);
  coopMatStore(a, outb.y, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}

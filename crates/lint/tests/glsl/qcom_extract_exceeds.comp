#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_QCOM_cooperative_matrix_conversion : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
// Fires coopmat-qcom-subgroup-requirements: the 32 rows of the accumulator go to invocations
// 0..31 of the subgroup, but the workgroup (8x2) has 16.
layout(local_size_x = 8, local_size_y = 2) in;
layout(set = 0, binding = 0) buffer In { float x[]; } inb;
layout(set = 0, binding = 1) buffer Out { float y[]; } outb;
void main() {
  coopmat<float, gl_ScopeSubgroup, 32, 16, gl_MatrixUseAccumulator> c;
  coopMatLoad(c, inb.x, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  float row[16];
  coopmatToVectorQCOM(c, row);
  for (uint k = 0; k < 16; k++) outb.y[gl_SubgroupInvocationID * 16 + k] = row[k];
}

#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_QCOM_cooperative_matrix_conversion : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
// Silent without a profile (64 rows, 64 invocations). With --profile nvidia-h100-580 (subgroup
// size 32): the 64 rows outnumber the subgroup, and 4 accumulator columns are not 32, 16 or 8.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer In { float x[]; } inb;
layout(set = 0, binding = 1) buffer Out { float y[]; } outb;
void main() {
  float row[4];
  for (uint k = 0; k < 4; k++) row[k] = inb.x[gl_SubgroupInvocationID * 4 + k];
  coopmat<float, gl_ScopeSubgroup, 64, 4, gl_MatrixUseAccumulator> c;
  vectorToCoopmatQCOM(row, c);
  coopMatStore(c, outb.y, 0, 4, gl_CooperativeMatrixLayoutRowMajor);
}

#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
// Thousands of distinct tensor layout values in one workgroup (more than the engine's table
// holds before it first collects), with values made before the loop, kept in a dynamically
// indexed array and carried through the loop's phi, all read after it.
layout(local_size_x = 32) in;
layout(set=0, binding=0) buffer In { float x[]; } inb;
layout(set=0, binding=1) buffer Out { float y[]; } outb;
const uint ITERS = 9000;
void main() {
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc =
      coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
  tensorLayoutNV<2> full = createTensorLayoutNV(2);
  full = setTensorLayoutDimensionNV(full, 64, ITERS + 16);
  uint wg = gl_WorkGroupID.x;
  tensorLayoutNV<2> kept = sliceTensorLayoutNV(full, wg * 16, 16, 8, 16);
  tensorLayoutNV<2> saved[2];
  saved[wg & 1] = kept;
  saved[(wg + 1) & 1] = sliceTensorLayoutNV(full, 0, 16, wg, 16);
  tensorLayoutNV<2> cur = kept;
  for (uint i = 0; i < ITERS; i++) {
    cur = sliceTensorLayoutNV(full, (i + wg) % 48, 16, i, 16);
    coopMatLoadTensorNV(m, inb.x, 0, cur);
    acc += m;
  }
  uint o = wg * 1024;
  coopMatStore(acc, outb.y, o, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatLoadTensorNV(m, inb.x, 0, kept);
  coopMatStore(m, outb.y, o + 256, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatLoadTensorNV(m, inb.x, 0, cur);
  coopMatStore(m, outb.y, o + 512, 16, gl_CooperativeMatrixLayoutRowMajor);
  // Element wg & 1 holds kept, the other the second slice.
  coopMatLoadTensorNV(m, inb.x, 0, saved[0]);
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m2;
  coopMatLoadTensorNV(m2, inb.x, 0, saved[1]);
  coopMatStore(m + m2, outb.y, o + 768, 16, gl_CooperativeMatrixLayoutRowMajor);
}

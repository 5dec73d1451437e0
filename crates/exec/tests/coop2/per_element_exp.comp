#version 450
// PerElementOp with a function that is one exp (flash attention's softmax step): the engine
// folds it and runs its f32 exp kernel straight on the tile; with uniformity observed it calls
// the function, and the two must agree bit for bit.
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 32) in;
layout(set=0, binding=0) buffer In { float x[]; } inp;
layout(set=0, binding=1) buffer Out { float y[]; } outp;
float e(const in uint row, const in uint col, const in float v) { return exp(v); }
void main() {
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m, r;
  coopMatLoad(m, inp.x, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatPerElementNV(r, m, e);
  coopMatStore(r, outp.y, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  // In place (the result the operand's own matrix).
  coopMatPerElementNV(m, m, e);
  coopMatStore(m, outp.y, 256, 16, gl_CooperativeMatrixLayoutRowMajor);
}

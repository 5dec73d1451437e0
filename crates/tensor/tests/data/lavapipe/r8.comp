#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x_id = 0) in;
layout(set=0, binding=0) buffer In { float data[]; } inb;
layout(set=0, binding=1) buffer Params { uint p[]; } prm;
layout(set=0, binding=2) buffer Out { float o[]; } outb;
float add(const in float a, const in float b) { return a + b; }
#define ACC(R, C) coopmat<float, gl_ScopeSubgroup, R, C, gl_MatrixUseAccumulator>
void main() {
    ACC(8, 8) m;
    coopMatLoad(m, inb.data, 0, 8, gl_CooperativeMatrixLayoutRowMajor);
    ACC(8, 8) r;
    coopMatReduceNV(r, m, gl_CooperativeMatrixReduceRowNV, add);
    coopMatStore(r, outb.o, 0, 8, gl_CooperativeMatrixLayoutRowMajor);
    coopMatReduceNV(r, m, gl_CooperativeMatrixReduceColumnNV, add);
    coopMatStore(r, outb.o, 64, 8, gl_CooperativeMatrixLayoutRowMajor);
    ACC(16, 16) m2;
    coopMatLoad(m2, inb.data, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    ACC(16, 8) r2;
    coopMatReduceNV(r2, m2, gl_CooperativeMatrixReduceRowNV, add);
    coopMatStore(r2, outb.o, 128, 8, gl_CooperativeMatrixLayoutRowMajor);
}

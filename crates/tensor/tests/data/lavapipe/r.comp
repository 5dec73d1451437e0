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
float mx(const in float a, const in float b) { return max(a, b); }
float pe(const in uint r, const in uint c, const in float x) { return x * 1000.0 + float(r * 16 + c); }
#define ACC(R, C) coopmat<float, gl_ScopeSubgroup, R, C, gl_MatrixUseAccumulator>
void main() {
    ACC(16, 16) m;
    coopMatLoad(m, inb.data, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    ACC(16, 16) r;
    coopMatReduceNV(r, m, gl_CooperativeMatrixReduceRowNV, add);
    coopMatStore(r, outb.o, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatReduceNV(r, m, gl_CooperativeMatrixReduceColumnNV, add);
    coopMatStore(r, outb.o, 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatReduceNV(r, m, gl_CooperativeMatrixReduceRowAndColumnNV, mx);
    coopMatStore(r, outb.o, 512, 16, gl_CooperativeMatrixLayoutRowMajor);
    ACC(8, 8) h;
    coopMatReduceNV(h, m, gl_CooperativeMatrixReduce2x2NV, add);
    coopMatStore(h, outb.o, 768, 8, gl_CooperativeMatrixLayoutRowMajor);
    ACC(16, 16) q;
    coopMatPerElementNV(q, m, pe);
    coopMatStore(q, outb.o, 1024, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> t;
    coopMatTransposeNV(t, m);
    coopMatStore(t, outb.o, 1280, 16, gl_CooperativeMatrixLayoutRowMajor);
}

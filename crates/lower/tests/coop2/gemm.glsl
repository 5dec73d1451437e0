// A 16x16 tile of C = A * B: A row-major (stride lda) sliced at (row0, kk), B column-major
// (strides 1, ldb) sliced at (kk, col0), both through layouts kept in Function variables and
// re-sliced in a loop; the tile stored twice: through a 2-D row-major layout at (row0, col0)
// of C (stride ldc, offsets from two cumulative slices, one chosen by a branch) and through a
// 1-D layout at the end of C.
void main() {
    tensorLayoutNV<2> la = createTensorLayoutNV(2);
    la = setTensorLayoutDimensionNV(la, 64, p.k);
    la = setTensorLayoutStrideNV(la, p.lda, 1);
    tensorLayoutNV<2> lb = createTensorLayoutNV(2);
    lb = setTensorLayoutDimensionNV(lb, p.k, 64);
    lb = setTensorLayoutStrideNV(lb, 1, p.ldb);
    MC acc = MC(0.0);
    for (uint kk = 0; kk < p.k; kk += 16) {
        MA ma;
        MB mb;
        coopMatLoadTensorNV(ma, a, 0, sliceTensorLayoutNV(la, p.row0, 16, kk, 16));
        coopMatLoadTensorNV(mb, b, 0, sliceTensorLayoutNV(lb, kk, 16, p.col0, 16));
        acc = coopMatMulAdd(ma, mb, acc);
    }
    tensorLayoutNV<2> lc = createTensorLayoutNV(2);
    lc = setTensorLayoutDimensionNV(lc, 64, 64);
    lc = setTensorLayoutStrideNV(lc, p.ldc, 1);
    lc = sliceTensorLayoutNV(lc, p.row0, 32, 0, 64);
    if (gl_WorkGroupID.x == 0) {
        lc = sliceTensorLayoutNV(lc, 0, 16, p.col0, 16);
    } else {
        lc = sliceTensorLayoutNV(lc, 1, 16, p.col0, 16);
    }
    coopMatStoreTensorNV(acc, c, 0, lc);
    tensorLayoutNV<1> lf = createTensorLayoutNV(1);
    lf = setTensorLayoutDimensionNV(lf, 256);
    coopMatStoreTensorNV(acc, c, 64 * 64, lf);
}

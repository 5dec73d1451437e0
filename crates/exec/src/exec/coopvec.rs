//! SPV_NV_cooperative_vector ops: loads and stores at byte offsets, matrix-vector products run
//! as one small GEMM over all active lanes that read the same matrix, and the training
//! accumulations (atomic float adds into memory).
//!
//! Precision of the products (the Vulkan chapter "Cooperative Vectors" leaves it to the
//! implementation; DESIGN.md "Cooperative vectors" has the table): inputs are first converted
//! to InputInterpretation (RNE; integers saturate), then every product and sum is taken in f32
//! when both the input and the matrix interpretation are floats of at most 16 bits (their
//! products are exact in f32), in f64 for 32- and 64-bit float interpretations, and in
//! wrapping 32-bit integers for integer interpretations; the sum runs over k ascending, the
//! bias is added last, and the result is rounded once to the result type.

use super::*;
use crate::coopvec::{ComponentType, ComponentValue, MatrixShape};
use crate::program::{component_num, component_of_scalar};

/// A decoded matrix W (M×K, row-major: `W[j·K + k]`) in the arithmetic of a product.
pub(super) enum Dense {
    F32(Vec<f32>),
    F64(Vec<f64>),
    I32(Vec<i32>),
}

/// What identifies a decoded matrix: it cannot change while a dispatch may read it
/// (SPV_NV_cooperative_vector: "the matrix and bias values must not be modified while a
/// shader might be using them"), so a batch decodes it once per dispatch.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct MatrixKey {
    addr: u64,
    shape: MatrixShape,
    ty: ComponentType,
    transpose: bool,
    arith: u8,
}

/// Decoded matrices of a batch, by [`MatrixKey`].
pub(super) type MatrixCache = std::collections::HashMap<MatrixKey, Dense>;

/// The arithmetic a product runs in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Arith {
    F32,
    F64,
    I32,
}

impl Arith {
    fn of(input: ComponentType, matrix: ComponentType) -> Arith {
        if !matrix.is_float() {
            Arith::I32
        } else if matrix.bytes() <= 2 && input.bytes() <= 2 {
            Arith::F32
        } else {
            Arith::F64
        }
    }
}

/// `y[j·g + l] = Σ_k w[j·k_n + k] · x[k·g + l]`, k ascending (each lane's sum in its own
/// accumulator, so the inner loop runs over lanes and vectorizes).
macro_rules! gemm {
    ($name:ident, $t:ty, $mul:expr, $add:expr) => {
        fn $name(m: usize, k_n: usize, g: usize, w: &[$t], x: &[$t], y: &mut [$t]) {
            for j in 0..m {
                let row = &mut y[j * g..(j + 1) * g];
                row.fill(<$t>::default());
                for k in 0..k_n {
                    let wv = w[j * k_n + k];
                    let xr = &x[k * g..(k + 1) * g];
                    for (yv, &xv) in row.iter_mut().zip(xr) {
                        *yv = $add(*yv, $mul(wv, xv));
                    }
                }
            }
        }
    };
}
gemm!(gemm_f32, f32, |a: f32, b: f32| a * b, |a: f32, b: f32| a
    + b);
gemm!(gemm_f64, f64, |a: f64, b: f64| a * b, |a: f64, b: f64| a
    + b);
gemm!(gemm_i32, i32, i32::wrapping_mul, i32::wrapping_add);

/// Adds `x` to the float of kind `acc` (F16 or F32) at byte `b` of `words`, rounding once
/// (a compare-and-swap on the containing word, so it is atomic against every other access
/// the engine makes to that word).
fn atomic_float_add(words: &[AtomicU32], b: usize, acc: Num, x: f64) {
    let word = &words[b / 4];
    let (shift, bits) = match acc {
        Num::F16 => ((b % 4) * 8, 16),
        _ => (0, 32),
    };
    let m = if bits == 32 {
        u32::MAX
    } else {
        0xffffu32 << shift
    };
    let _ = word.fetch_update(Relaxed, Relaxed, |cur| {
        let old = ((cur & m) >> shift) as u64;
        let new = floats::from_f64(acc, floats::to_f64(acc, old) + x) as u32;
        Some((cur & !m) | ((new << shift) & m))
    });
}

impl Batch<'_, '_> {
    /// Runs one cooperative-vector op for the active lanes.
    pub(super) fn coopvec(&mut self, c: &Cv, mask: &Mask, dense: bool) -> Result<(), Fault> {
        match c {
            Cv::Load(a) => self.cv_load_store(a, mask, dense, false),
            Cv::Store(a) => self.cv_load_store(a, mask, dense, true),
            Cv::ReduceSum(a) => self.cv_reduce_sum(a, mask, dense),
            Cv::OuterProduct(a) => self.cv_outer_product(a, mask, dense),
            Cv::MatMul(a) => self.cv_matmul(a, mask, dense),
        }
    }

    /// `ptr + off` of lane `l` (the offset is an unsigned 32-bit byte count).
    fn cv_addr(&self, ptr: Col, off: Col, l: usize) -> u64 {
        let lanes = self.lanes;
        let base = self.cols[ptr.ix() * lanes + l];
        let off = self.cols[off.ix() * lanes + l] as u32;
        memory::offset_address(base, off as i128)
    }

    /// The Vulkan environment's alignment rule `vuid` for the address of lane `l`.
    fn cv_aligned(&self, addr: u64, align: u64, vuid: &str, l: usize) -> Result<(), Fault> {
        let off = memory::object_offset(addr);
        if off.is_multiple_of(align) {
            return Ok(());
        }
        Err(Fault {
            kind: ErrorKind::UndefinedBehavior,
            what: format!(
                "{vuid}: the address (pointer + offset) is {off} bytes into its buffer, \
                 not a multiple of {align}"
            ),
            lane: Some(l),
        })
    }

    fn cv_fault(e: MemErr, l: usize) -> Fault {
        Fault {
            kind: e.kind,
            what: e.to_string(),
            lane: Some(l),
        }
    }

    /// LoadNV (`store` false) and StoreNV: `n` components between the columns and
    /// `ptr + off`, no conversion.
    fn cv_load_store(
        &mut self,
        a: &CvMemArgs,
        mask: &Mask,
        dense: bool,
        store: bool,
    ) -> Result<(), Fault> {
        let (lanes, nb) = (self.lanes, a.num.bytes());
        let robust = self.p.options.robust;
        each_lane!(mask, lanes, dense, |l| {
            let addr = self.cv_addr(a.ptr, a.off, l);
            // The same VUID covers loads and stores.
            self.cv_aligned(
                addr,
                16,
                "VUID-RuntimeSpirv-OpCooperativeVectorLoadNV-10099",
                l,
            )?;
            let col = |i: u32| (a.v + i).ix() * lanes + l;
            match self.mem.resolve(addr, l, (a.n * nb) as u64, store) {
                Ok((sh, idx, b)) => {
                    let words = self.mem.words(sh, idx);
                    for i in 0..a.n {
                        let at = b + (i * nb) as usize;
                        if store {
                            memory::write_bytes(words, at, nb, self.cols[col(i)], sh);
                        } else {
                            self.cols[col(i)] = memory::read_bytes(words, at, nb);
                        }
                    }
                }
                Err(_) if robust => {
                    // robustBufferAccess: components outside the buffer read as zero, and
                    // stores to them are dropped.
                    for i in 0..a.n {
                        let at = addr.wrapping_add((i * nb) as u64);
                        if store {
                            let _ = self.mem.write(at, l, nb, self.cols[col(i)]);
                        } else {
                            self.cols[col(i)] = self.mem.read(at, l, nb).unwrap_or(0);
                        }
                    }
                }
                Err(e) => return Err(Self::cv_fault(e, l)),
            }
        });
        Ok(())
    }

    fn cv_reduce_sum(&mut self, a: &CvMemArgs, mask: &Mask, dense: bool) -> Result<(), Fault> {
        let (lanes, nb) = (self.lanes, a.num.bytes());
        each_lane!(mask, lanes, dense, |l| {
            let addr = self.cv_addr(a.ptr, a.off, l);
            self.cv_aligned(
                addr,
                16,
                "VUID-RuntimeSpirv-OpCooperativeVectorReduceSumAccumulateNV-10100",
                l,
            )?;
            let (sh, idx, b) = self
                .mem
                .resolve(addr, l, (a.n * nb) as u64, true)
                .map_err(|e| Self::cv_fault(e, l))?;
            let words = self.mem.words(sh, idx);
            for i in 0..a.n {
                let x = floats::to_f64(a.num, self.cols[(a.v + i).ix() * lanes + l]);
                atomic_float_add(words, b + (i * nb) as usize, a.num, x);
            }
        });
        Ok(())
    }

    fn cv_outer_product(&mut self, a: &CvOuterArgs, mask: &Mask, dense: bool) -> Result<(), Fault> {
        let lanes = self.lanes;
        let acc = component_num(a.matrix.ty);
        each_lane!(mask, lanes, dense, |l| {
            let addr = self.cv_addr(a.matrix.ptr, a.matrix.off, l);
            self.cv_aligned(
                addr,
                64,
                "VUID-RuntimeSpirv-OpCooperativeVectorOuterProductAccumulateNV-10101",
                l,
            )?;
            let shape = self.cv_shape(a.m, a.n, a.matrix.ty, a.layout, a.stride, l)?;
            let (sh, idx, b) = self
                .mem
                .resolve(addr, l, shape.size(), true)
                .map_err(|e| Self::cv_fault(e, l))?;
            let words = self.mem.words(sh, idx);
            for i in 0..a.m {
                let x = floats::to_f64(a.num, self.cols[(a.a + i).ix() * lanes + l]);
                for j in 0..a.n {
                    let y = floats::to_f64(a.num, self.cols[(a.b + j).ix() * lanes + l]);
                    // The product of two floats of at most 32 bits is exact in f64: one
                    // rounding, in the accumulation.
                    atomic_float_add(words, b + shape.offset(i, j) as usize, acc, x * y);
                }
            }
        });
        Ok(())
    }

    /// The memory shape of a `rows × cols` matrix operand for lane `l` (its stride read from
    /// the stride column for row- and column-major layouts).
    fn cv_shape(
        &self,
        rows: u32,
        cols: u32,
        ty: ComponentType,
        layout: crate::coopvec::MatrixLayout,
        stride: Option<Col>,
        l: usize,
    ) -> Result<MatrixShape, Fault> {
        let stride = match (layout.is_optimal(), stride) {
            (false, Some(c)) => {
                let s = self.cols[c.ix() * self.lanes + l] as u32 as u64;
                if !s.is_multiple_of(16) {
                    return Err(Fault {
                        kind: ErrorKind::UndefinedBehavior,
                        what: format!(
                            "VUID-RuntimeSpirv-OpCooperativeVectorMatrixMulNV-10096: \
                             MatrixStride {s} is not a multiple of 16"
                        ),
                        lane: Some(l),
                    });
                }
                s
            }
            _ => 0,
        };
        Ok(MatrixShape {
            rows,
            cols,
            elem_bytes: ty.bytes(),
            layout,
            stride,
        })
    }

    fn cv_matmul(&mut self, a: &CvMatMulArgs, mask: &Mask, dense: bool) -> Result<(), Fault> {
        let lanes = self.lanes;
        let arith = Arith::of(a.input_ty, a.matrix.ty);
        let (rows, cols) = if a.transpose { (a.k, a.m) } else { (a.m, a.k) };
        // Group the active lanes by the matrix and bias they read: usually one group.
        let mut groups: Vec<(MatrixKey, u64, Vec<usize>)> = Vec::new();
        each_lane!(mask, lanes, dense, |l| {
            let maddr = self.cv_addr(a.matrix.ptr, a.matrix.off, l);
            self.cv_aligned(
                maddr,
                64,
                "VUID-RuntimeSpirv-OpCooperativeVectorMatrixMulNV-10097",
                l,
            )?;
            let shape = self.cv_shape(rows, cols, a.matrix.ty, a.layout, a.stride, l)?;
            let baddr = match a.bias {
                Some(bias) => {
                    let b = self.cv_addr(bias.ptr, bias.off, l);
                    self.cv_aligned(
                        b,
                        16,
                        "VUID-RuntimeSpirv-OpCooperativeVectorMatrixMulAddNV-10098",
                        l,
                    )?;
                    b
                }
                None => 0,
            };
            let key = MatrixKey {
                addr: maddr,
                shape,
                ty: a.matrix.ty,
                transpose: a.transpose,
                arith: arith as u8,
            };
            match groups.iter_mut().find(|g| g.0 == key && g.1 == baddr) {
                Some(g) => g.2.push(l),
                None => groups.push((key, baddr, vec![l])),
            }
        });
        for (key, baddr, group) in groups {
            let (w, cacheable) = self.cv_matrix(a, key, group[0])?;
            let bias = match a.bias {
                Some(b) => Some(self.cv_bias(b, a.m, baddr, group[0])?),
                None => None,
            };
            self.cv_gemm(a, arith, &w, bias.as_deref(), &group);
            self.flops += 2 * a.m as u64 * a.k as u64 * group.len() as u64;
            if cacheable {
                if self.cv_cache.len() >= 64 {
                    self.cv_cache.clear();
                }
                self.cv_cache.insert(key, w);
            }
        }
        Ok(())
    }

    /// The decoded matrix of `key` (from the cache, or read as lane `l` reads it), and whether
    /// it may be cached.
    fn cv_matrix(
        &mut self,
        a: &CvMatMulArgs,
        key: MatrixKey,
        l: usize,
    ) -> Result<(Dense, bool), Fault> {
        if let Some(d) = self.cv_cache.remove(&key) {
            return Ok((d, true));
        }
        let (m, k) = (a.m as usize, a.k as usize);
        let shape = key.shape;
        let nb = a.matrix.ty.bytes();
        let robust = self.p.options.robust;
        let read: Vec<u64> = {
            let whole = self.mem.resolve(key.addr, l, shape.size(), false);
            let at = |j: usize, kk: usize| -> u64 {
                if a.transpose {
                    shape.offset(kk as u32, j as u32)
                } else {
                    shape.offset(j as u32, kk as u32)
                }
            };
            let mut raw = Vec::with_capacity(m * k);
            match whole {
                Ok((sh, idx, b)) => {
                    let words = self.mem.words(sh, idx);
                    for j in 0..m {
                        for kk in 0..k {
                            raw.push(memory::read_bytes(words, b + at(j, kk) as usize, nb));
                        }
                    }
                }
                Err(_) if robust => {
                    for j in 0..m {
                        for kk in 0..k {
                            let addr = key.addr.wrapping_add(at(j, kk));
                            raw.push(self.mem.read(addr, l, nb).unwrap_or(0));
                        }
                    }
                }
                Err(e) => return Err(Self::cv_fault(e, l)),
            }
            raw
        };
        let ty = a.matrix.ty;
        let dense = match Arith::of(a.input_ty, ty) {
            Arith::F32 => Dense::F32(read.iter().map(|&r| ty.value_of(r) as f32).collect()),
            Arith::F64 => Dense::F64(read.iter().map(|&r| ty.value_of(r)).collect()),
            Arith::I32 => Dense::I32(read.iter().map(|&r| int_value(ty, r)).collect()),
        };
        // Batch-owned memory (Workgroup, per-lane) changes between workgroups: not cached.
        let shared = self
            .mem
            .resolve(key.addr, l, 1, false)
            .is_ok_and(|(sh, _, _)| sh);
        Ok((dense, shared))
    }

    /// The M bias elements at `addr`, in the product's arithmetic.
    fn cv_bias(&self, b: CvMemOperand, m: u32, addr: u64, l: usize) -> Result<Vec<f64>, Fault> {
        let nb = b.ty.bytes();
        let robust = self.p.options.robust;
        let mut out = Vec::with_capacity(m as usize);
        match self.mem.resolve(addr, l, (m * nb) as u64, false) {
            Ok((sh, idx, off)) => {
                let words = self.mem.words(sh, idx);
                for j in 0..m {
                    let raw = memory::read_bytes(words, off + (j * nb) as usize, nb);
                    out.push(bias_value(b.ty, raw));
                }
            }
            Err(_) if robust => {
                for j in 0..m {
                    let at = addr.wrapping_add((j * nb) as u64);
                    out.push(bias_value(b.ty, self.mem.read(at, l, nb).unwrap_or(0)));
                }
            }
            Err(e) => return Err(Self::cv_fault(e, l)),
        }
        Ok(out)
    }

    /// Converts the inputs of `group`, multiplies, adds the bias and writes the results.
    fn cv_gemm(
        &mut self,
        a: &CvMatMulArgs,
        arith: Arith,
        w: &Dense,
        bias: Option<&[f64]>,
        group: &[usize],
    ) {
        let (m, k, g, lanes) = (a.m as usize, a.k as usize, group.len(), self.lanes);
        let src_ty = component_of_scalar(a.input_num, a.input_signed);
        // Input value k of lane l, converted to InputInterpretation (raw bits of that type).
        let input = |cols: &[u64], kk: usize, l: usize| -> u64 {
            if a.input_ty.packed() {
                let word = cols[(a.input + (kk / 4) as u32).ix() * lanes + l] as u32;
                return ((word >> (8 * (kk % 4))) & 0xff) as u64;
            }
            let raw = cols[(a.input + kk as u32).ix() * lanes + l];
            match src_ty {
                Some(s) if s == a.input_ty => raw,
                Some(s) if !s.is_float() && !a.input_ty.is_float() => {
                    let v = if s.signed() {
                        sext(raw, component_num(s).bits()) as i128
                    } else {
                        trunc(raw, component_num(s).bits()) as i128
                    };
                    a.input_ty.saturate_int(v)
                }
                Some(s) => a.input_ty.bits_of(s.value_of(raw)),
                None => 0,
            }
        };
        let write = |cols: &mut [u64], j: usize, l: usize, v: u64| {
            cols[(a.d + j as u32).ix() * lanes + l] = v;
        };
        match (arith, w) {
            (Arith::F32, Dense::F32(wv)) => {
                let mut x = vec![0f32; k * g];
                if a.input_num == Num::F16 && a.input_ty == ComponentType::F16 {
                    // The common case (f16 in, f16 interpretation): one table lookup each.
                    let lut = floats::f16_lut();
                    for kk in 0..k {
                        let col = &self.cols[(a.input + kk as u32).ix() * lanes..];
                        for (i, &l) in group.iter().enumerate() {
                            x[kk * g + i] = lut[col[l] as u16 as usize];
                        }
                    }
                } else {
                    for kk in 0..k {
                        for (i, &l) in group.iter().enumerate() {
                            x[kk * g + i] = a.input_ty.value_of(input(&self.cols, kk, l)) as f32;
                        }
                    }
                }
                let mut y = vec![0f32; m * g];
                gemm_f32(m, k, g, wv, &x, &mut y);
                for j in 0..m {
                    let bj = bias.map_or(0.0, |b| b[j] as f32);
                    let row = &mut y[j * g..(j + 1) * g];
                    if bias.is_some() {
                        row.iter_mut().for_each(|v| *v += bj);
                    }
                    let col = &mut self.cols[(a.d + j as u32).ix() * lanes..];
                    match a.d_num {
                        // One rounding from f32, as float_result does through f64 (exact).
                        Num::F16 => {
                            for (i, &l) in group.iter().enumerate() {
                                col[l] = floats::f32_to_f16(row[i]) as u64;
                            }
                        }
                        Num::F32 => {
                            for (i, &l) in group.iter().enumerate() {
                                col[l] = row[i].to_bits() as u64;
                            }
                        }
                        _ => {
                            for (i, &l) in group.iter().enumerate() {
                                col[l] = float_result(a, row[i] as f64);
                            }
                        }
                    }
                }
            }
            (Arith::F64, Dense::F64(wv)) => {
                let mut x = vec![0f64; k * g];
                for kk in 0..k {
                    for (i, &l) in group.iter().enumerate() {
                        x[kk * g + i] = a.input_ty.value_of(input(&self.cols, kk, l));
                    }
                }
                let mut y = vec![0f64; m * g];
                gemm_f64(m, k, g, wv, &x, &mut y);
                for j in 0..m {
                    let bj = bias.map_or(0.0, |b| b[j]);
                    for (i, &l) in group.iter().enumerate() {
                        write(&mut self.cols, j, l, float_result(a, y[j * g + i] + bj));
                    }
                }
            }
            (Arith::I32, Dense::I32(wv)) => {
                let mut x = vec![0i32; k * g];
                for kk in 0..k {
                    for (i, &l) in group.iter().enumerate() {
                        x[kk * g + i] = int_value(a.input_ty, input(&self.cols, kk, l));
                    }
                }
                let mut y = vec![0i32; m * g];
                gemm_i32(m, k, g, wv, &x, &mut y);
                for j in 0..m {
                    let bj = bias.map_or(0, |b| b[j] as i64 as i32);
                    for (i, &l) in group.iter().enumerate() {
                        let v = y[j * g + i].wrapping_add(bj);
                        let out = if a.d_num.is_float() {
                            floats::from_f64(a.d_num, v as f64)
                        } else {
                            v as u32 as u64
                        };
                        write(&mut self.cols, j, l, out);
                    }
                }
            }
            // Arith::of picks the decoding and the product alike.
            _ => unreachable!("matrix decoded in another arithmetic"),
        }
    }
}

/// An integer element of type `ty` (raw bits) as the i32 of wrapping 32-bit arithmetic.
fn int_value(ty: ComponentType, raw: u64) -> i32 {
    let bits = component_num(ty).bits();
    if ty.signed() {
        sext(raw, bits) as i32
    } else {
        trunc(raw, bits) as i32
    }
}

/// A bias element as f64 (integers by their signedness; exact for every 32-bit integer).
fn bias_value(ty: ComponentType, raw: u64) -> f64 {
    ty.value_of(raw)
}

/// A float sum as the result type: rounded once (integer results: RNE, saturating).
fn float_result(a: &CvMatMulArgs, v: f64) -> u64 {
    if a.d_num.is_float() {
        return floats::from_f64(a.d_num, v);
    }
    let t = if a.d_signed {
        ComponentType::S32
    } else {
        ComponentType::U32
    };
    t.bits_of(v)
}

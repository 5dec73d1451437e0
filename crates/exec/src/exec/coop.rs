//! Cooperative-matrix ops on whole tiles: load/store, MulAdd, element-wise ops, conversions.
//!
//! A matrix is one dense row-major tile per scope instance (subgroup or workgroup); lane `l`
//! of an instance, component `i` is element `l + i·scope` (see DESIGN.md).

use super::*;

/// Splits `v` into the destination range and shared views of the source ranges.
fn split_dst<'v, T, const N: usize>(
    v: &'v mut [T],
    d: (usize, usize),
    srcs: &[(usize, usize); N],
) -> Option<(&'v mut [T], [&'v [T]; N])> {
    let (lo, rest) = v.split_at_mut(d.0);
    let (dm, hi) = rest.split_at_mut(d.1);
    let (lo, hi): (&[T], &[T]) = (lo, hi);
    // A fixed array, not a Vec: this runs once per MulAdd tile.
    let mut out: [&[T]; N] = [&[]; N];
    for (slot, &(o, n)) in out.iter_mut().zip(srcs) {
        if o + n <= d.0 {
            *slot = &lo[o..o + n];
        } else if o >= d.0 + d.1 {
            *slot = &hi[o - d.0 - d.1..o - d.0 - d.1 + n];
        } else {
            return None;
        }
    }
    Some((dm, out))
}

impl Batch<'_, '_> {
    /// A lazy cooperative-matrix load ([`CmLoadArgs::lazy`]): each instance's tile stays where
    /// it is, its place recorded in `lazy_tiles`, when it is a word-aligned f16 tile inside
    /// batch-owned memory (what a GEMM stages in Workgroup memory) and the kernels read such
    /// tiles in place (`kernels::f16_tiles_read_in_place`). Otherwise, or when any instance's
    /// tile is not, the load widens every instance's tile into the slot as any load does (and
    /// reports a fault there); the records then say so.
    pub(super) fn load_lazy(&mut self, x: &CmLoadArgs, mask: &Mask) -> Result<(), Fault> {
        let base = self.p.lazy_base[x.d.ix()] as usize;
        let lanes = self.lanes;
        let mut in_place = self.reads.is_none() && kernels::f16_tiles_read_in_place();
        for (i, l0) in self.instances(x.d, mask) {
            let addr = self.cols[x.ptr.ix() * lanes + l0];
            let st = x
                .stride
                .map_or(0, |s| self.cols[s.ix() * lanes + l0] & 0xffff_ffff);
            let tile = in_place
                .then(|| self.tile_in_place(addr, l0, st.wrapping_mul(x.pbytes as u64)))
                .flatten();
            in_place &= tile.is_some();
            self.lazy_tiles[base + i] = tile;
        }
        if !in_place {
            for (i, _) in self.instances(x.d, mask) {
                self.lazy_tiles[base + i] = None;
            }
            return self.cm_mem(x.d, x.ptr, x.stride, x.col_major, x.pbytes, false, mask);
        }
        Ok(())
    }

    /// Where the 16×16 f16 tile at `addr` (rows `row_bytes` apart) lies when it is inside one
    /// batch-owned (Workgroup) object with its rows at whole words: that object (an index into
    /// `Mem::local`), its first word and the words between rows.
    fn tile_in_place(&self, addr: u64, lane: usize, row_bytes: u64) -> Option<kernels::HalfTile> {
        match self.f16_tile_words(addr, lane, row_bytes, 16, 16)? {
            (false, object, first, stride) => Some(kernels::HalfTile {
                object: object as usize,
                first,
                stride,
            }),
            (true, ..) => None,
        }
    }

    /// Where a row-major f16 tile of `rows` × `cols` at `addr` (rows `row_bytes` apart) lies,
    /// with one bounds check for the whole tile, when its rows start at whole words:
    /// (shared?, object index, first word, words between rows).
    fn f16_tile_words(
        &self,
        addr: u64,
        lane: usize,
        row_bytes: u64,
        rows: usize,
        cols: usize,
    ) -> Option<(bool, u32, usize, usize)> {
        let extent = (rows as u64 - 1)
            .checked_mul(row_bytes)?
            .checked_add(cols as u64 * 2)?;
        let (sh, idx, b) = self.mem.resolve(addr, lane, extent, false).ok()?;
        (b.is_multiple_of(4) && row_bytes.is_multiple_of(4)).then_some((
            sh,
            idx,
            b / 4,
            (row_bytes / 4) as usize,
        ))
    }

    /// Widens the tiles lazy loads left in memory for slot `m` into the slot, as the load
    /// would have (the memory has not changed since: `compile::lazy_tile_load`).
    pub(super) fn widen_lazy(&mut self, m: Mat, mask: &Mask) -> Result<(), Fault> {
        let base = self.p.lazy_base[m.ix()] as usize;
        let off = self.slot(m).off;
        for (i, _) in self.instances(m, mask) {
            let Some(t) = self.lazy_tiles.get_mut(base + i).and_then(Option::take) else {
                continue;
            };
            let out = &mut self.mf[off + i * 256..off + (i + 1) * 256];
            let words = &self.mem.local[t.object];
            if !kernels::f16_rows_to_f32(words, (t.first, t.stride, 16, 8), out) {
                return Err(lazy_fault());
            }
        }
        Ok(())
    }

    /// A MulAdd group whose A and B tiles, of every instance, lazy loads left in memory
    /// ([`LazyOperands`]), through [`kernels::matmul_shared_a_f16b`]. False, with nothing
    /// done, when it does not apply (the caller widens the lazy tiles into their slots and
    /// runs the group as any other).
    fn shared_a_in_place(&mut self, g: &CmMulAddSharedAArgs, mask: &Mask) -> bool {
        let Some(&(d0, _, _)) = g.parts.first() else {
            return false;
        };
        let (n, nseg) = (g.parts.len(), if g.first.is_some() { 2 } else { 1 });
        let d = self.slot(d0);
        if n > 4 || d.cm.num != Num::F32 || (d.cm.rows, d.cm.cols) != (16, 16) {
            return false;
        }
        // Where each operand's records start: A of each segment (the chain's first, then the
        // group's own), then B of each segment and part.
        let record = |m: Mat, lazy: bool| {
            let b = *self.p.lazy_base.get(m.ix())?;
            (lazy && b != u32::MAX).then_some(b as usize)
        };
        let mut a_at = [0usize; 2];
        let mut b_at = [[0usize; 4]; 2];
        for s in 0..nseg {
            let (a, a_lazy, seg) = match (&g.first, s) {
                (Some(f), 0) => (f.a, g.lazy.a[1], 1),
                _ => (g.a, g.lazy.a[0], 0),
            };
            let Some(at) = record(a, a_lazy) else {
                return false;
            };
            a_at[s] = at;
            for (p, b) in b_at[s][..n].iter_mut().enumerate() {
                let m = match (&g.first, seg) {
                    (Some(f), 1) => f.b[p],
                    _ => g.parts[p].1,
                };
                let Some(at) = record(m, g.lazy.b[p][seg]) else {
                    return false;
                };
                *b = at;
            }
        }
        // Consecutive instances only (their tiles lie one tile apart in every slot).
        let (mut first_inst, mut count) = (None, 0);
        for (i, _) in self.instances(d0, mask) {
            if i != *first_inst.get_or_insert(i) + count {
                return false;
            }
            count += 1;
        }
        let Some(i0) = first_inst else {
            return true;
        };
        let tiles = &self.lazy_tiles;
        let tile = |r: usize, o: kernels::Operand| {
            let at = match o {
                kernels::Operand::A(s) => a_at[s],
                kernels::Operand::B(s, p) => b_at[s][p],
            };
            *tiles.get(at + i0 + r)?
        };
        let mut cd = [(0usize, 0usize); 4];
        for (o, &(d, _, c)) in cd.iter_mut().zip(&g.parts) {
            *o = (
                self.mat_off[c.ix()] + i0 * 256,
                self.mat_off[d.ix()] + i0 * 256,
            );
        }
        let (arena, objects) = (&mut self.mf, &mut self.mem.local);
        let shape = (nseg, n, count);
        if !kernels::matmul_shared_a_f16b(arena, objects, shape, tile, &cd[..n], 256) {
            return false;
        }
        let flops = (2 * 16 * 16 * 16 * n * nseg * count) as u64;
        self.flops += flops;
        if g.first.is_some() {
            self.chained += (n * count) as u64;
        }
        self.in_place += ((n + 1) * nseg * count) as u64;
        true
    }

    /// Row-major f16 tile load with one bounds check for the whole tile, each row loaded and
    /// widened in vectors (the per-row path costs a resolve and a kernel call per 16 elements);
    /// false when the tile is not word-aligned or not in bounds (the caller then goes row by
    /// row and reports the faulting row).
    fn load_f16_tile(
        &mut self,
        addr: u64,
        lane: usize,
        row_bytes: u64,
        rows: usize,
        cols: usize,
        toff: usize,
    ) -> bool {
        let Some((sh, idx, w0, wstride)) = self.f16_tile_words(addr, lane, row_bytes, rows, cols)
        else {
            return false;
        };
        kernels::f16_rows_to_f32(
            self.mem.words(sh, idx),
            (w0, wstride, rows, cols / 2),
            &mut self.mf[toff..toff + rows * cols],
        )
    }

    /// Row-major f32 tile store with one bounds check for the whole tile, each row stored with
    /// vector stores; false, storing nothing, when the tile is not word-aligned or not in
    /// bounds (the caller then goes row by row and reports the faulting row, or drops the rows
    /// outside under robust access). A row at a time paid a resolve for every 16 elements:
    /// 8 thousand TSC cycles for a GEMM's four instances of a 16×16 accumulator.
    fn store_f32_tile(
        &mut self,
        addr: u64,
        lane: usize,
        row_bytes: u64,
        (rows, cols): (usize, usize),
        toff: usize,
    ) -> bool {
        let Some(extent) = (rows as u64)
            .checked_sub(1)
            .and_then(|r| r.checked_mul(row_bytes))
            .and_then(|x| x.checked_add(cols as u64 * 4))
        else {
            return false;
        };
        let Ok((sh, idx, b)) = self.mem.resolve(addr, lane, extent, true) else {
            return false;
        };
        if !b.is_multiple_of(4) || !row_bytes.is_multiple_of(4) {
            return false;
        }
        let (w0, stride) = (b / 4, (row_bytes / 4) as usize);
        let words = self.mem.words(sh, idx);
        for r in 0..rows {
            let src = &self.mf[toff + r * cols..toff + (r + 1) * cols];
            kernels::store_f32_words(&words[w0 + r * stride..w0 + r * stride + cols], src);
        }
        true
    }

    /// A cooperative-matrix load (`store` false: `m` is the result) or store (`m` is the
    /// Object).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn cm_mem(
        &mut self,
        m: Mat,
        ptr: Col,
        stride: Option<Col>,
        col_major: bool,
        pbytes: u32,
        store: bool,
        mask: &Mask,
    ) -> Result<(), Fault> {
        let s = self.slot(m);
        let cm = s.cm;
        let (rows, cols) = (cm.rows as usize, cm.cols as usize);
        let cb = cm.num.bytes() as u64;
        let robust = self.p.options.robust;
        let n_el = cm.elems();
        // Instances loaded so far from a shared object: (address, stride, tile offset). Another
        // instance with the same address and stride gets a copy of that tile (subgroups of a
        // GEMM's workgroup load each staged tile twice).
        let mut loaded = [(0u64, 0u64, 0usize); 8];
        let mut nloaded = 0;
        for (i, l0) in self.instances(m, mask) {
            let addr = self.cols[ptr.ix() * self.lanes + l0];
            let st = match stride {
                None => 0,
                Some(s) => self.cols[s.ix() * self.lanes + l0] & 0xffff_ffff,
            };
            let toff = s.off + i * n_el;
            if !store {
                if let Some(&(_, _, from)) = loaded[..nloaded]
                    .iter()
                    .find(|&&(a, t, _)| a == addr && t == st)
                {
                    if cm.is_f32_arena() {
                        self.mf.copy_within(from..from + n_el, toff);
                    } else {
                        self.mw.copy_within(from..from + n_el, toff);
                    }
                    continue;
                }
                if nloaded < loaded.len()
                    && self
                        .mem
                        .obj(addr >> memory::OBJ_SHIFT)
                        .is_some_and(|o| o.per_lane == 0)
                {
                    loaded[nloaded] = (addr, st, toff);
                    nloaded += 1;
                }
            }
            if store && st == 0 && stride.is_some() && (if col_major { cols } else { rows }) > 1 {
                return Err(Fault {
                    kind: ErrorKind::InvalidOperand,
                    what: "cooperative matrix store with stride 0".into(),
                    lane: Some(l0),
                });
            }
            let (outer, inner) = if col_major {
                (cols, rows)
            } else {
                (rows, cols)
            };
            if !store
                && cm.num == Num::F16
                && !col_major
                && inner % 2 == 0
                && n_el <= 1024
                && self.load_f16_tile(addr, l0, st * pbytes as u64, outer, inner, toff)
            {
                continue;
            }
            if store
                && cm.num == Num::F32
                && !col_major
                && self.store_f32_tile(addr, l0, st * pbytes as u64, (outer, inner), toff)
            {
                continue;
            }
            for oi in 0..outer {
                let base = memory::offset_address(addr, oi as i128 * st as i128 * pbytes as i128);
                let run = inner as u64 * cb;
                let res = self.mem.resolve(base, l0, run, store);
                let (sh, idx, b) = match res {
                    Ok(r) => r,
                    Err(e) => {
                        if !robust {
                            return Err(Fault {
                                kind: e.kind,
                                what: e.to_string(),
                                lane: Some(l0),
                            });
                        }
                        // Robust: element by element, zeros / dropped stores outside.
                        for ii in 0..inner {
                            let e = if col_major {
                                ii * cols + oi
                            } else {
                                oi * cols + ii
                            };
                            let a = memory::offset_address(base, ii as i128 * cb as i128);
                            if store {
                                let x = self.mat_get(m, i, e);
                                let _ = self.mem.write(a, l0, cb as u32, x);
                            } else {
                                let x = self.mem.read(a, l0, cb as u32).unwrap_or(0);
                                self.mat_set(m, i, e, x);
                            }
                        }
                        continue;
                    }
                };
                let words = self.mem.words(sh, idx);
                if store && cm.num == Num::F32 && !col_major && b % 4 == 0 {
                    // Whole f32 rows: plain word stores (the row is in bounds, resolved above).
                    let src = &self.mf[toff + oi * cols..toff + oi * cols + inner];
                    kernels::store_f32_words(&words[b / 4..b / 4 + inner], src);
                } else if store {
                    for ii in 0..inner {
                        let e = if col_major {
                            ii * cols + oi
                        } else {
                            oi * cols + ii
                        };
                        let x = if cm.is_f32_arena() {
                            let v = self.mf[toff + e];
                            match cm.num {
                                Num::F32 => v.to_bits() as u64,
                                Num::F16 => floats::f32_to_f16(v) as u64,
                                n => floats::from_f64(n, v as f64),
                            }
                        } else {
                            self.mw[toff + e]
                        };
                        memory::write_bytes(words, b + ii * cb as usize, cb as u32, x, sh);
                    }
                } else if cm.num == Num::F16 && !col_major && b % 4 == 0 && inner % 2 == 0 {
                    // Fast path: whole f16 rows, two per word, converted in one vector loop.
                    // Whole rows through a stack buffer, converted in one vector call.
                    let nw = inner / 2;
                    let e0 = toff + oi * cols;
                    let mut tmp = [0u32; 64];
                    for w0 in (0..nw).step_by(64) {
                        let cnt = (nw - w0).min(64);
                        for (k, t) in tmp[..cnt].iter_mut().enumerate() {
                            *t = words[b / 4 + w0 + k].load(Relaxed);
                        }
                        kernels::f16_words_to_f32(
                            &tmp[..cnt],
                            &mut self.mf[e0 + 2 * w0..e0 + 2 * (w0 + cnt)],
                        );
                    }
                } else if cm.num == Num::F32 && b % 4 == 0 {
                    for ii in 0..inner {
                        let e = if col_major {
                            ii * cols + oi
                        } else {
                            oi * cols + ii
                        };
                        self.mf[toff + e] = f32::from_bits(words[b / 4 + ii].load(Relaxed));
                    }
                } else {
                    let lut = floats::f16_lut();
                    for ii in 0..inner {
                        let e = if col_major {
                            ii * cols + oi
                        } else {
                            oi * cols + ii
                        };
                        let x = memory::read_bytes(words, b + ii * cb as usize, cb as u32);
                        if cm.is_f32_arena() {
                            self.mf[toff + e] = match cm.num {
                                Num::F16 => lut[x as usize],
                                n => floats::to_f64(n, x) as f32,
                            };
                        } else {
                            self.mw[toff + e] = x;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    pub(super) fn muladd(
        &mut self,
        d: Mat,
        a: Mat,
        b: Mat,
        c: Mat,
        flags: u32,
        mask: &Mask,
    ) -> Result<(), Fault> {
        for (i, _) in self.instances(d, mask) {
            self.muladd_instance(i, (d, a, b, c), flags);
        }
        Ok(())
    }

    /// MulAdds that share A ([`Op::CmMulAddSharedA`]): the parts go through the shared-A kernel
    /// together, for all scope instances in one call when the tiles are square (instance i's lie
    /// i tiles further on in every slot), else per instance, or one by one where it declines
    /// (neither AVX-512 nor AVX2, tiles not 16 wide, storage that overlaps). A chain's parts
    /// one by one are its first MulAdd into D, then the second on D (the compiler made sure
    /// that D is none of the operands the second reads, so the intermediate sum can live
    /// there).
    pub(super) fn muladd_shared_a(
        &mut self,
        g: &CmMulAddSharedAArgs,
        mask: &Mask,
    ) -> Result<(), Fault> {
        let Some(&(d0, b0, _)) = g.parts.first() else {
            return Ok(());
        };
        // Lazy loads leave tiles in place only where the kernels read them there.
        if g.lazy.any() && kernels::f16_tiles_read_in_place() {
            if self.shared_a_in_place(g, mask) {
                return Ok(());
            }
            let lazy = g
                .lazy
                .a
                .iter()
                .zip([Some(g.a), g.first.as_ref().map(|f| f.a)]);
            let lazy_b = g.lazy.b.iter().enumerate().flat_map(|(p, l)| {
                l.iter()
                    .zip([Some(g.parts[p].1), g.first.as_ref().map(|f| f.b[p])])
            });
            // `g` is the program's, not the batch's: nothing to collect first.
            for m in lazy.chain(lazy_b).filter_map(|(&l, m)| m.filter(|_| l)) {
                self.widen_lazy(m, mask)?;
            }
        }
        let sa = self.slot(g.a);
        let (m, n, k) = (
            sa.cm.rows as usize,
            self.slot(b0).cm.cols as usize,
            sa.cm.cols as usize,
        );
        let part = |off: &[usize], i: usize, &(d, b, c): &(Mat, Mat, Mat)| kernels::SharedAPart {
            b: off[b.ix()] + i * k * n,
            c: off[c.ix()] + i * m * n,
            d: off[d.ix()] + i * m * n,
        };
        // The chain's first A and Bs of instance i.
        let first = |off: &[usize], i: usize, out: &mut [usize]| {
            g.first.as_ref().map(|f| {
                for (o, b) in out.iter_mut().zip(&f.b) {
                    *o = off[b.ix()] + i * k * n;
                }
                off[f.a.ix()] + i * m * k
            })
        };
        let flops = (2 * m * n * k * g.parts.len() * if g.first.is_some() { 2 } else { 1 }) as u64;
        // One call for a run of consecutive instances: one overlap check instead of one per
        // instance (the parts on the stack: this runs for every MulAdd group of a GEMM).
        let i0 = self.instances(d0, mask).next().map(|(i, _)| i);
        let count = self.instances(d0, mask).count();
        let mut stack = [kernels::SharedAPart { b: 0, c: 0, d: 0 }; 8];
        let mut b_first = [0usize; 8];
        if let Some(i0) = i0
            && m == n
            && n == k
            && g.parts.len() <= stack.len()
            && self
                .instances(d0, mask)
                .enumerate()
                .all(|(j, (i, _))| i == i0 + j)
        {
            for (s, p) in stack.iter_mut().zip(&g.parts) {
                *s = part(&self.mat_off, i0, p);
            }
            let parts = &stack[..g.parts.len()];
            let a_off = sa.off + i0 * m * k;
            let run = (count, m * k);
            let chain =
                first(&self.mat_off, i0, &mut b_first).map(|af| (af, &b_first[..parts.len()]));
            if kernels::matmul_f32_shared_a((m, n, k), &mut self.mf, (chain, a_off), parts, run) {
                self.flops += flops * count as u64;
                if g.first.is_some() {
                    self.chained += (g.parts.len() * count) as u64;
                }
                return Ok(());
            }
        }
        let mut parts = Vec::with_capacity(g.parts.len());
        let mut b_first = vec![0usize; g.parts.len()];
        for (i, _) in self.instances(d0, mask) {
            parts.clear();
            parts.extend(g.parts.iter().map(|p| part(&self.mat_off, i, p)));
            let a_off = sa.off + i * m * k;
            if g.first.is_some() {
                self.chained += g.parts.len() as u64;
            }
            let chain = first(&self.mat_off, i, &mut b_first).map(|af| (af, &b_first[..]));
            if kernels::matmul_f32_shared_a((m, n, k), &mut self.mf, (chain, a_off), &parts, (1, 0))
            {
                self.flops += flops;
                continue;
            }
            for (p, &(d, b, c)) in g.parts.iter().enumerate() {
                match &g.first {
                    None => self.muladd_instance(i, (d, g.a, b, c), g.flags),
                    Some(f) => {
                        self.muladd_instance(i, (d, f.a, f.b[p], c), g.flags);
                        self.muladd_instance(i, (d, g.a, b, d), g.flags);
                    }
                }
            }
        }
        Ok(())
    }

    /// The rows of instance `i` of slot `m` that a row-local op must compute: those up to and
    /// including the first of the rows that end the tile and repeat its last row bit for bit
    /// (every row when the last two differ, when the tile does not hold f32 values, or with
    /// `EngineOptions::repeated_rows_once` off). A row-local op computes each result row by
    /// the same function of its operands' same row, whatever the row, so the rows after that
    /// one would repeat its result: [`Batch::copy_row_down`] writes them.
    pub(super) fn rows_to_compute(&self, m: Mat, i: usize) -> usize {
        let s = self.slot(m);
        let (rows, cols) = (s.cm.rows as usize, s.cm.cols as usize);
        if !self.p.options.repeated_rows_once || !s.cm.is_f32_arena() || rows < 2 {
            return rows;
        }
        let n = rows * cols;
        match self.mf.get(s.off + i * n..s.off + (i + 1) * n) {
            Some(t) => kernels::repeated_tail(t, cols) + 1,
            None => rows,
        }
    }

    /// Copies row `done - 1` of instance `i` of f32 slot `d` into its rows from `done` on: the
    /// rows a row-local op left ([`Batch::rows_to_compute`]).
    pub(super) fn copy_row_down(&mut self, d: Mat, i: usize, done: usize) {
        let s = self.slot(d);
        let (rows, cols) = (s.cm.rows as usize, s.cm.cols as usize);
        if done == 0 || done >= rows {
            return;
        }
        let base = s.off + i * rows * cols;
        let from = base + (done - 1) * cols;
        for r in done..rows {
            self.mf.copy_within(from..from + cols, base + r * cols);
        }
        self.repeated_rows += (rows - done) as u64;
    }

    /// One scope instance of a MulAdd.
    fn muladd_instance(&mut self, i: usize, (d, a, b, c): (Mat, Mat, Mat, Mat), flags: u32) {
        let p = self.p;
        let (sd, sa, sb, sc) = (self.slot(d), self.slot(a), self.slot(b), self.slot(c));
        let (m, n, k) = (
            sd.cm.rows as usize,
            sd.cm.cols as usize,
            sa.cm.cols as usize,
        );
        let all_f32 = [sd, sa, sb, sc].iter().all(|s| s.cm.is_f32_arena());
        self.flops += (2 * m * n * k) as u64;
        if all_f32 {
            // Row r of D is C's row r plus A's row r times B, the same FMAs in the same order
            // for every row (`kernels::matmul_f32`): rows where A and C repeat the row above
            // repeat it in D too, so only the rows before them (`mm`) are computed. C is only
            // looked at when A has such rows (an accumulator of zeros would be read whole).
            let rows_a = match sa.cm.rows == sd.cm.rows && sc.cm.rows == sd.cm.rows {
                true => self.rows_to_compute(a, i),
                false => m,
            };
            let mm = match rows_a < m {
                true => rows_a.max(self.rows_to_compute(c, i)),
                false => m,
            };
            let dr = (sd.off + i * m * n, mm * n);
            let srcs = [
                (sa.off + i * m * k, mm * k),
                (sb.off + i * k * n, k * n),
                (sc.off + i * m * n, mm * n),
            ];
            match split_dst(&mut self.mf, dr, &srcs) {
                Some((dm, s)) => kernels::matmul_f32(mm, n, k, s[0], s[1], s[2], dm),
                None => {
                    let s: Vec<Vec<f32>> = srcs
                        .iter()
                        .map(|&(o, l)| self.mf[o..o + l].to_vec())
                        .collect();
                    kernels::matmul_f32(
                        mm,
                        n,
                        k,
                        &s[0],
                        &s[1],
                        &s[2],
                        &mut self.mf[dr.0..dr.0 + dr.1],
                    );
                }
            }
            if sd.cm.num != Num::F32 {
                let num = sd.cm.num;
                let tile = &mut self.mf[dr.0..dr.0 + dr.1];
                // An f16 result rounds in one F16C pass (the same RNE rounding of the f32
                // value), unless the tile holds a NaN, whose bits the loop below fixes.
                let mut wide = std::mem::take(&mut self.scratch_f32);
                wide.clear();
                wide.extend_from_slice(tile);
                if num != Num::F16 || !kernels::round_through_f16(&wide, tile) {
                    // From the saved values: a refused pass may have written part of the tile.
                    for (x, &w) in tile.iter_mut().zip(&wide) {
                        *x = floats::to_f64(num, floats::from_f64(num, w as f64)) as f32;
                    }
                }
                self.scratch_f32 = wide;
            }
            self.copy_row_down(d, i, mm);
        } else if [sd, sa, sb, sc].iter().all(|s| s.cm.num.is_float()) {
            let get = |s: &Self, slot: Mat, e: usize| {
                let ms = p.mats[slot.ix()];
                floats::to_f64(ms.cm.num, s.mat_get(slot, i, e))
            };
            let av: Vec<f64> = (0..m * k).map(|e| get(self, a, e)).collect();
            let bv: Vec<f64> = (0..k * n).map(|e| get(self, b, e)).collect();
            let cv: Vec<f64> = (0..m * n).map(|e| get(self, c, e)).collect();
            let mut dv = vec![0f64; m * n];
            kernels::matmul_f64(m, n, k, &av, &bv, &cv, &mut dv);
            for (e, &x) in dv.iter().enumerate() {
                let raw = floats::from_f64(sd.cm.num, x);
                self.mat_set(d, i, e, raw);
            }
        } else {
            // Integers (KHR rules, SPV_KHR_cooperative_matrix "OpCooperativeMatrixMulAddKHR"):
            // signedness from the operand bits; A·B exact; C added at result precision with
            // wrap, or saturation with the result's signedness when SaturatingAccumulation.
            let ext = |s: &Self, slot: Mat, e: usize, signed: bool| -> i128 {
                let ms = p.mats[slot.ix()];
                let raw = s.mat_get(slot, i, e);
                if ms.cm.num.is_float() {
                    floats::to_f64(ms.cm.num, raw) as i128
                } else if signed {
                    sext(raw, ms.cm.num.bits()) as i128
                } else {
                    trunc(raw, ms.cm.num.bits()) as i128
                }
            };
            let av: Vec<i128> = (0..m * k)
                .map(|e| ext(self, a, e, flags & cmo::MatrixASignedComponentsKHR != 0))
                .collect();
            let bv: Vec<i128> = (0..k * n)
                .map(|e| ext(self, b, e, flags & cmo::MatrixBSignedComponentsKHR != 0))
                .collect();
            let mut ab = vec![0i128; m * n];
            kernels::matmul_int(m, n, k, &av, &bv, &mut ab);
            let rbits = sd.cm.num.bits();
            let rsigned = flags & cmo::MatrixResultSignedComponentsKHR != 0;
            let sat = flags & cmo::SaturatingAccumulationKHR != 0;
            for (e, &x) in ab.iter().enumerate() {
                let cval = ext(self, c, e, flags & cmo::MatrixCSignedComponentsKHR != 0);
                let r = if sd.cm.num.is_float() {
                    floats::from_f64(sd.cm.num, (x + cval) as f64)
                } else if sat {
                    let v = x + cval;
                    let (lo, hi) = if rsigned {
                        (-(1i128 << (rbits - 1)), (1i128 << (rbits - 1)) - 1)
                    } else {
                        (0, (1i128 << rbits) - 1)
                    };
                    trunc(v.clamp(lo, hi) as u64, rbits)
                } else {
                    trunc(x.wrapping_add(cval) as u64, rbits)
                };
                self.mat_set(d, i, e, r);
            }
        }
    }

    /// Element-wise [`Op::CmUn`] over whole tiles.
    pub(super) fn cm_un(
        &mut self,
        &CmUnArgs { op, d, a }: &CmUnArgs,
        mask: &Mask,
    ) -> Result<(), Fault> {
        let sd = self.slot(d);
        let n = sd.cm.elems();
        for (i, _) in self.instances(d, mask) {
            if sd.cm.num == Num::F32 && op == UnOp::FNeg {
                let sa = self.slot(a);
                for e in 0..n {
                    self.mf[sd.off + i * n + e] = -self.mf[sa.off + i * n + e];
                }
                continue;
            }
            for e in 0..n {
                let x = self.mat_get(a, i, e);
                self.mat_set(d, i, e, un1(op, sd.cm.num, x));
            }
        }
        Ok(())
    }

    /// Element-wise [`Op::CmBin`] over whole tiles.
    pub(super) fn cm_bin(
        &mut self,
        &CmBinArgs { op, d, a, b }: &CmBinArgs,
        mask: &Mask,
    ) -> Result<(), Fault> {
        let sd = self.slot(d);
        let (sa, sb) = (self.slot(a), self.slot(b));
        let n = sd.cm.elems();
        let arith = matches!(op, BinOp::FAdd | BinOp::FSub | BinOp::FMul | BinOp::FDiv);
        let nums = [sd.cm.num, sa.cm.num, sb.cm.num];
        let (all_f16, all_f32) = (nums == [Num::F16; 3], nums == [Num::F32; 3]);
        let mut wide = std::mem::take(&mut self.scratch_f32);
        for (i, _) in self.instances(d, mask) {
            if arith && (all_f16 || all_f32) {
                // f32 +, −, ×, ÷ in one loop per op, so that it vectorizes, into scratch (the
                // result may be an operand's tile). For f32 that is what `bin1` computes; f16
                // operands are exact in f32, and an f32 result rounded again to f16 is the
                // correctly rounded f16 result (24 ≥ 2·11 + 2 bits: the double rounding is
                // innocuous), which is what `bin1` gives through f64. A NaN result takes
                // `bin1`, which fixes its bits whatever operand order the loop used.
                let (xs, ys) = (
                    &self.mf[sa.off + i * n..][..n],
                    &self.mf[sb.off + i * n..][..n],
                );
                if wide.len() < n {
                    wide.resize(n, 0.0);
                }
                let kop = match op {
                    BinOp::FAdd => kernels::F32Arith::Add,
                    BinOp::FSub => kernels::F32Arith::Sub,
                    BinOp::FMul => kernels::F32Arith::Mul,
                    _ => kernels::F32Arith::Div,
                };
                if !kernels::f32_arith(kop, xs, ys, &mut wide[..n]) {
                    self.put_f32_results(sd.off + i * n, &wide[..n], all_f16);
                    continue;
                }
            }
            for e in 0..n {
                let (x, y) = (self.mat_get(a, i, e), self.mat_get(b, i, e));
                self.mat_set(d, i, e, bin1(op, sd.cm.num, x, y));
            }
        }
        self.scratch_f32 = wide;
        Ok(())
    }

    /// Writes NaN-free f32 results into the f32-arena tile at `at`: as they are for an f32
    /// matrix, rounded to f16 (and held widened) for an f16 one (`f16`).
    fn put_f32_results(&mut self, at: usize, wide: &[f32], f16: bool) {
        let tile = &mut self.mf[at..at + wide.len()];
        if f16 {
            let rounded = kernels::round_through_f16(wide, tile);
            debug_assert!(rounded, "no NaN, so every value rounds");
        } else {
            tile.copy_from_slice(wide);
        }
    }

    /// Element-wise [`Op::CmScale`] over whole tiles.
    pub(super) fn cm_scale(
        &mut self,
        &CmScaleArgs { d, a, s }: &CmScaleArgs,
        mask: &Mask,
    ) -> Result<(), Fault> {
        let (sd, sa) = (self.slot(d), self.slot(a));
        let n = sd.cm.elems();
        let num = sd.cm.num;
        // f32 and f16 tiles in one vector pass, as `cm_bin`'s arithmetic (the same reasoning:
        // f16 products are exact in f32, the f32 product rounded to f16 is the correctly
        // rounded one); a NaN result takes the element loop, which fixes its bits.
        let floats = matches!(num, Num::F32 | Num::F16) && sa.cm.num == num;
        let mut wide = std::mem::take(&mut self.scratch_f32);
        for (i, l) in self.instances(d, mask) {
            let sv = self.cols[s.ix() * self.lanes + l];
            if floats {
                let factor = if num == Num::F32 {
                    f32::from_bits(sv as u32)
                } else {
                    half::f16::from_bits(sv as u16).to_f32()
                };
                if wide.len() < n {
                    wide.resize(n, 0.0);
                }
                let xs = &self.mf[sa.off + i * n..][..n];
                if !kernels::f32_scale(xs, factor, &mut wide[..n]) {
                    self.put_f32_results(sd.off + i * n, &wide[..n], num == Num::F16);
                    continue;
                }
            }
            let op = if sd.cm.num.is_float() {
                BinOp::FMul
            } else {
                BinOp::IMul
            };
            for e in 0..n {
                let x = self.mat_get(a, i, e);
                self.mat_set(d, i, e, bin1(op, sd.cm.num, x, sv));
            }
        }
        self.scratch_f32 = wide;
        Ok(())
    }

    /// Element-wise [`Op::CmCvt`] over whole tiles.
    pub(super) fn cm_cvt(
        &mut self,
        &CmCvtArgs { kind, d, a }: &CmCvtArgs,
        mask: &Mask,
    ) -> Result<(), Fault> {
        let (sd, sa) = (self.slot(d), self.slot(a));
        let n = sd.cm.elems();
        for (i, _) in self.instances(d, mask) {
            if kind == CvtKind::FConv && sd.cm.num == Num::F16 && sa.cm.num == Num::F32 {
                // One vector pass; a tile with a NaN (whose bits the vector narrowing would
                // change) takes the element loop below. Nothing is written before the check, so
                // a result aliasing its operand is no problem.
                let src = &self.mf[sa.off + i * n..][..n];
                if !kernels::any_nan(src) {
                    let mut wide = std::mem::take(&mut self.scratch_f32);
                    wide.clear();
                    wide.extend_from_slice(src);
                    self.put_f32_results(sd.off + i * n, &wide, true);
                    self.scratch_f32 = wide;
                    continue;
                }
            }
            if kind == CvtKind::FConv && sd.cm.num == Num::F32 && sa.cm.is_f32_arena() {
                // The arena holds the narrower values widened exactly: the f32 result is the
                // same bits.
                self.mf
                    .copy_within(sa.off + i * n..sa.off + (i + 1) * n, sd.off + i * n);
                continue;
            }
            if kind == CvtKind::FConv && sd.cm.is_f32_arena() && sa.cm.is_f32_arena() {
                let to = sd.cm.num;
                for e in 0..n {
                    let x = self.mf[sa.off + i * n + e];
                    self.mf[sd.off + i * n + e] = match to {
                        Num::F32 => x,
                        Num::F16 => half::f16::from_f32(x).to_f32(),
                        t => floats::to_f64(t, floats::from_f64(t, x as f64)) as f32,
                    };
                }
                continue;
            }
            for e in 0..n {
                let x = self.mat_get(a, i, e);
                self.mat_set(d, i, e, cvt1(kind, sa.cm.num, sd.cm.num, x));
            }
        }
        Ok(())
    }
}

/// A lazy tile that was inside its memory when loaded is not: the engine's own invariant
/// broke (Workgroup memory does not shrink), reported rather than read.
fn lazy_fault() -> Fault {
    Fault {
        kind: ErrorKind::OutOfBounds,
        what: "a lazily loaded matrix tile is no longer inside its memory".into(),
        lane: None,
    }
}

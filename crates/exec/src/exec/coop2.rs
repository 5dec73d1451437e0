//! Executing SPV_NV_cooperative_matrix2 tensor ops ([`C2`]): layout/view values, tensor
//! loads and stores, and DecodeFunc / DecodeVectorFunc calls through the engine's own
//! function-call machinery (a reusable sub-batch, one lane per element or V-group).

use super::tensor_values::{self, Tensor};
use super::*;
use crate::eval::tensor::{LAYOUT_WORDS, VIEW_WORDS, layout_from, layout_to, view_from, view_to};
use crate::eval::{ColumnOp, scratch_bin};
use coopmat_tensor::{ElementSource, TensorElement, address::constant_bits};

/// Runs along adjacent tile columns read together before being written back row by row
/// ([`Batch::place_runs`]): 16 f32 are one 64-byte cache line of the tile's row.
const TRANSPOSE_GROUP: usize = 16;

/// The active lanes of a mask, in order.
pub(super) fn mask_lanes(mask: &Mask) -> impl Iterator<Item = usize> + '_ {
    mask.iter().enumerate().flat_map(|(w, &bits)| {
        let mut bb = bits;
        std::iter::from_fn(move || {
            if bb == 0 {
                return None;
            }
            let l = w * 64 + bb.trailing_zeros() as usize;
            bb &= bb - 1;
            Some(l)
        })
    })
}

/// Element sources of tensor loads/stores for layouts with their offset set to zero, keyed by
/// (offset-free layout encoding, view encoding, rows, cols, store).
///
/// Why this is exact (SPV_NV_cooperative_matrix2 "matrixCoordToTensorElement"): the offset only
/// enters at `c = spanCoord + offset`; everything before (clip, view, linearToSpanCoord) ignores
/// it. If for every dimension `0 <= offset`, `offset % blockSize == 0` and
/// `offset + span <= layoutDimension`, no coordinate is out of range (spanCoord < span), so no
/// clamp applies, and `blockCoord = blockCoord₀ + offset/blockSize`, `coordInBlock` is
/// unchanged and `index = index₀ + Σ (offset/blockSize)·stride`: the sources are those of the
/// offset-free layout, shifted. A dimension whose span leaves the tensor keeps its offset in
/// the key: clamping is decided one dimension at a time ("spanCoordToTensorCoord"), the
/// shifted dimensions never clamp, so whether and how an element clamps is the key's (a tile
/// over a tensor's edge, or over a tensor smaller than the tile, is still shifted along its
/// other dimensions). A negative offset or a zero block size: computed in full.
///
/// The sources themselves are kept per thread ([`SOURCES`]), the scratch below per batch.
#[derive(Default)]
pub(super) struct SourceCache {
    /// Scratch list of a tile's memory elements (decode loads).
    elems: Vec<(usize, TensorElement)>,
    /// Reused block-address column of the decode calls whose addresses may leave their
    /// object (`Batch::decode_calls`; the others are moved as they are written).
    args: Vec<u64>,
    /// Scratch words of a staging copy whose destination is not batch-owned memory
    /// (`Batch::copy_words`).
    pub(super) words: Vec<u32>,
    /// Scratch f32 values of a tile's runs and decode results.
    row: Vec<f32>,
    /// Reused result columns of a tile's decode calls.
    results: Vec<u64>,
    /// Scratch f16 pairs of a decoded tile that is not kept.
    halves: Vec<u32>,
    /// Where each tensor load (by salt and instance) last read its runs, and how far it moved
    /// from the time before: [`Batch::next_runs`].
    strides: rustc_hash::FxHashMap<(u32, usize), RunStride>,
    /// The tile each tensor load (by salt and instance) last kept in the dispatch's cache: the
    /// next one it keeps is linked from it ([`tiles::KeptTile::next`]).
    last_kept: rustc_hash::FxHashMap<(u32, usize), std::sync::Weak<tiles::KeptTile>>,
}

/// Tensor loads whose steps a batch tracks before it starts over.
const MAX_TRACKED_LOADS: usize = 4096;

/// A tensor load's last position: the object, the byte of its index 0 and the step before.
#[derive(Clone, Copy)]
struct RunStride {
    object: (bool, u32),
    byte: usize,
    step: usize,
}

/// Tile sources kept by a thread before it starts over (a flash-attention dispatch needs
/// four, a matmul two or three).
const MAX_KEPT_SOURCES: usize = 32;

thread_local! {
    /// The tile sources computed on this thread, by [`source_key`]. Per thread, not per batch:
    /// the key holds all they depend on, so they serve every batch, dispatch and program the
    /// thread runs. A flash-attention dispatch whose batches each computed their own spent
    /// 3.5 % of its time there (168 thousand cycles a 128×32 tile, four tiles a batch).
    static SOURCES: std::cell::RefCell<rustc_hash::FxHashMap<Vec<u64>, std::rc::Rc<TileSources>>> =
        std::cell::RefCell::new(Default::default());
}

/// A tile's element sources and what is derived from them once, cached with them.
pub(super) struct TileSources {
    srcs: Vec<ElementSource>,
    /// Maximal runs of memory elements with consecutive indices along a row or a column of the
    /// tile (first element, its index, length): a row of a tile over a row-major tensor is one
    /// run, moved with one bounds check.
    runs: Vec<(usize, u64, usize)>,
    /// The distance in the tile between consecutive elements of a run: 1 (along a row) or
    /// the tile's column count (along a column).
    run_stride: usize,
    /// Whether no two runs share a memory index (each run's are distinct): a store may then
    /// write the runs in any order.
    runs_disjoint: bool,
    /// The elements whose source is not memory.
    others: Vec<usize>,
    /// Of those, the maximal runs of consecutive elements with one Constant source (first
    /// element, length, the clamp value): a clamped tile's padded rows, filled whole.
    constant_runs: Vec<(usize, usize, u32)>,
    /// And the rest of them, visited one by one.
    not_constant: Vec<usize>,
    /// DecodeFunc's arguments for the memory elements, offset-free, built on first use.
    decode_args: std::cell::OnceCell<DecodeArgs>,
    /// DecodeVectorFunc's arguments for the V-groups, by V (None where the layout does not
    /// allow DecodeVectorFunc), built on first use. By V: the sources are kept per thread, for
    /// every program, and two decode functions may group the same tile differently.
    vector_args: std::cell::RefCell<Vec<(u32, std::rc::Rc<Option<DecodeArgs>>)>>,
    /// Whether a load keeps some element of its Object operand (Clipped, or Discarded): only
    /// then is the Object's tile copied into the result first.
    keeps_object: bool,
}

impl TileSources {
    /// DecodeVectorFunc's arguments for groups of `v` over these sources of a tile of `lay`.
    fn vector_args(
        &self,
        lay: &coopmat_tensor::TensorLayout,
        v: u32,
    ) -> std::rc::Rc<Option<DecodeArgs>> {
        if let Some((_, args)) = self.vector_args.borrow().iter().find(|(w, _)| *w == v) {
            return args.clone();
        }
        let args = std::rc::Rc::new(DecodeArgs::vector(lay, &self.srcs, v).ok());
        self.vector_args.borrow_mut().push((v, args.clone()));
        args
    }

    fn new(srcs: Vec<ElementSource>, cols: usize) -> Self {
        // Runs along rows (element stride 1) and along columns (stride `cols`: a tile read
        // through a transposing view); the order with fewer runs wins.
        let runs_along = |stride: usize| {
            let n = srcs.len();
            let mut runs: Vec<(usize, u64, usize)> = Vec::new();
            let order = (0..n).map(|j| {
                if stride == 1 || cols == 0 {
                    j
                } else {
                    (j % (n / cols)) * cols + j / (n / cols)
                }
            });
            for e in order {
                if let ElementSource::Memory(te) = &srcs[e] {
                    match runs.last_mut() {
                        Some((e0, i0, len))
                            if *e0 + *len * stride == e
                                && i0.wrapping_add(*len as u64) == te.index =>
                        {
                            *len += 1
                        }
                        _ => runs.push((e, te.index, 1)),
                    }
                }
            }
            runs
        };
        let by_rows = runs_along(1);
        let (runs, run_stride) = if cols > 1 && by_rows.len() > 1 {
            let by_cols = runs_along(cols);
            if by_cols.len() < by_rows.len() {
                (by_cols, cols)
            } else {
                (by_rows, 1)
            }
        } else {
            (by_rows, 1)
        };
        // A run whose indices wrap around u64 is not a stretch of memory: no shortcut.
        let spans: Option<Vec<(u64, u64)>> = runs
            .iter()
            .map(|&(_, i0, len)| Some((i0, i0.checked_add(len as u64)?)))
            .collect();
        let runs_disjoint = spans.is_some_and(|mut spans| {
            spans.sort_unstable();
            spans.windows(2).all(|w| w[0].1 <= w[1].0)
        });
        let keeps_object = srcs
            .iter()
            .any(|s| matches!(s, ElementSource::Clipped | ElementSource::Discarded));
        let others: Vec<usize> = (0..srcs.len())
            .filter(|&e| srcs[e].memory().is_none())
            .collect();
        let mut constant_runs: Vec<(usize, usize, u32)> = Vec::new();
        let mut not_constant = Vec::new();
        for &e in &others {
            match (srcs[e], constant_runs.last_mut()) {
                (ElementSource::Constant(v), Some((e0, len, w))) if *e0 + *len == e && *w == v => {
                    *len += 1
                }
                (ElementSource::Constant(v), _) => constant_runs.push((e, 1, v)),
                _ => not_constant.push(e),
            }
        }
        TileSources {
            others,
            constant_runs,
            not_constant,
            srcs,
            runs,
            run_stride,
            runs_disjoint,
            decode_args: Default::default(),
            vector_args: Default::default(),
            keeps_object,
        }
    }

    /// Whether every run, its indices moved by `shift`, lies within the first `avail` bytes of
    /// elements of `cb` bytes (the rest of the pointer's object): one check a run.
    fn runs_inside(&self, shift: u64, cb: u64, avail: u64) -> bool {
        self.runs.iter().all(|&(_, i0, len)| {
            i0.wrapping_add(shift)
                .checked_add(len as u64)
                .and_then(|end| end.checked_mul(cb))
                .is_some_and(|end| end <= avail)
        })
    }
}

/// A reduction over a tile of the f32 arena whose combine function returns a parameter, or is
/// f16/f32 min or max, computed from the arena's values (an f16 tile's are its elements
/// widened, exactly): `acc` gets each list's result. False (nothing computed) for other folds
/// and for tiles holding a NaN (the general path folds those through `bin1`).
///
/// Min and max need no fold order: a NaN-free fold with `eval::min_max_nan` (GLSL.std.450
/// FMax: "y if x < y, otherwise x") returns one of the list's elements, the extreme value, and
/// equal non-zero values have equal bits. Only an extreme of zero depends on the order: the
/// accumulator keeps an equal operand, so the first zero of the list wins (the last one when
/// the function's parameters are swapped, `max(b, a)`).
fn fold_tile(plan: &ReducePlan, v: &[f32], fold: Fold, acc: &mut Vec<f32>) -> bool {
    let len = plan.order.len() / plan.groups.max(1);
    if plan.groups == 0 || len == 0 || v.len() != plan.elems {
        return false;
    }
    if kernels::any_nan(v) {
        return false;
    }
    acc.clear();
    let list = |k: usize| &plan.lists[k * len..(k + 1) * len];
    match fold {
        Fold::Param(second) => {
            acc.extend((0..plan.groups).map(|k| {
                let l = list(k);
                v[l[if second { len - 1 } else { 0 }] as usize]
            }));
        }
        Fold::Bin { op, num, swapped } => {
            let max = match op {
                BinOp::FMax | BinOp::NMax => true,
                BinOp::FMin | BinOp::NMin => false,
                _ => return false,
            };
            if !matches!(num, Num::F16 | Num::F32) {
                return false;
            }
            let extreme = |a: f32, b: f32| if max { a.max(b) } else { a.min(b) };
            for k in 0..plan.groups {
                let l = list(k);
                let first = v[l[0] as usize];
                let m = match plan.contiguous {
                    // No NaN (checked above): the vector kernel.
                    true => kernels::extreme_f32(&v[l[0] as usize..][..len], max, first),
                    false => l.iter().fold(first, |a, &e| extreme(a, v[e as usize])),
                };
                let m = if m == 0.0 {
                    let mut zeros = l.iter().map(|&e| v[e as usize]).filter(|&x| x == 0.0);
                    let z = if swapped {
                        zeros.next_back()
                    } else {
                        zeros.next()
                    };
                    z.unwrap_or(m)
                } else {
                    m
                };
                acc.push(m);
            }
        }
    }
    true
}

/// Runs a column op over `lanes` lanes of scratch columns `c`, every lane active (the engine's
/// folds of combine and per-element functions: the kernel the call would have run).
fn run_scratch(c: &mut [u64], lanes: usize, op: ColumnOp) {
    let mask = [u64::MAX; MW];
    crate::eval::Columns {
        c,
        lanes,
        mask: &mask,
        dense: true,
    }
    .run(op);
}

/// Runs an [`ElementFold`]'s column kernel over the `lanes` lanes of a three-column scratch
/// block whose column 1 (and 2, for a binary op) holds the operands: the result in column 0.
fn run_element_fold(c: &mut [u64], lanes: usize, f: ElementFold) {
    match f {
        ElementFold::Un { op, num, .. } => {
            let un = UnArgs {
                op,
                num,
                d: Col(0),
                a: Col(1),
                n: 1,
            };
            run_scratch(c, lanes, ColumnOp::Un(&un));
        }
        ElementFold::Bin { op, num, .. } => {
            run_scratch(c, lanes, ColumnOp::Bin(&scratch_bin(op, num)));
        }
    }
}

/// A key of the tile cache: `head` (the function or 0, the block size, the pointer, whether the
/// elements are f16), the tile's shape, then the layout and view values. It is built for every
/// load that may keep its tile and allocated only when the tile is kept.
fn tile_key_of(
    head: [u64; 4],
    cm: &CmType,
    lcols: &[u64],
    vcols: Option<&[u64]>,
) -> Option<TileKey> {
    let mut key = TileKey::default();
    key.push(&head)?;
    key.push(&[cm.rows as u64, cm.cols as u64, lcols.len() as u64])?;
    key.push(lcols)?;
    key.push(vcols.unwrap_or(&[]))?;
    Some(key)
}

/// The `out.len()` consecutive elements of type `num` (F16 or F32) at byte `byte` of `words`
/// (bounds checked by the caller), as f32: aligned f16 pairs through the vector conversion,
/// the rest element by element.
fn run_to_f32(words: &[AtomicU32], byte: usize, num: Num, out: &mut [f32]) {
    if num == Num::F32 {
        for (j, x) in out.iter_mut().enumerate() {
            *x = f32::from_bits(memory::read_bytes(words, byte + 4 * j, 4) as u32);
        }
        return;
    }
    let lut = floats::f16_lut();
    // `at`: elements of `out` done, `byte`: where the next one is.
    let (mut byte, mut at) = (byte, 0);
    if byte % 4 == 2 && !out.is_empty() {
        out[0] = lut[memory::read_bytes(words, byte, 2) as usize];
        (byte, at) = (byte + 2, 1);
    }
    let nw = (out.len() - at) / 2;
    // Whole words straight from memory through the vector conversion; false (out of bounds,
    // which the caller's check excludes) leaves them to the element loop below.
    if byte % 4 == 0
        && nw > 0
        && kernels::f16_rows_to_f32(words, (byte / 4, 0, 1, nw), &mut out[at..at + 2 * nw])
    {
        (byte, at) = (byte + 4 * nw, at + 2 * nw);
    }
    for (j, x) in out[at..].iter_mut().enumerate() {
        *x = lut[memory::read_bytes(words, byte + 2 * j, 2) as usize];
    }
}

/// An argument of a function the engine calls over many lanes ([`Batch::call_sub_logged`]),
/// in the form that costs least to hand over: per-element calls pass the element's row and
/// column and their non-matrix operands without building a column of `n` lanes for each.
#[derive(Clone, Copy)]
enum SubArg<'a> {
    /// Each component's `n` lanes, one component after the other (`c·n + lane`).
    Lanes(&'a [u64]),
    /// One value a component, the same in every lane.
    Same(&'a [u64]),
    /// The row of lane `l` of a row-major tile of this many columns: `l / cols`.
    Row(usize),
    /// The column of lane `l` of a row-major tile of this many columns: `l % cols`.
    Column(usize),
    /// One component, `lanes[l] · mul + add` (wrapping): a decode call's block address from
    /// the tile's offset-free block index, without a column built for it.
    Affine {
        lanes: &'a [u64],
        mul: u64,
        add: u64,
    },
    /// `lanes`' components (`c·n + lane`, as [`SubArg::Lanes`]), each moved by its own 32-bit
    /// offset (wrapping at 32 bits): a decode call's blockCoord from the offset-free one.
    OffsetU32 { lanes: &'a [u64], add: &'a [u32] },
}

impl SubArg<'_> {
    /// Component `c` of lanes `start .. start + out.len()` of a call over `n` lanes.
    fn write(self, c: usize, (start, n): (usize, usize), out: &mut [u64]) {
        match self {
            SubArg::Lanes(a) => out.copy_from_slice(&a[c * n + start..c * n + start + out.len()]),
            SubArg::Same(vals) => out.fill(vals[c]),
            SubArg::Affine { lanes, mul, add } => {
                for (o, &x) in out.iter_mut().zip(&lanes[start..]) {
                    *o = x.wrapping_mul(mul).wrapping_add(add);
                }
            }
            SubArg::OffsetU32 { lanes, add } => {
                let add = add[c];
                for (o, &x) in out.iter_mut().zip(&lanes[c * n + start..]) {
                    *o = (x as u32).wrapping_add(add) as u64;
                }
            }
            SubArg::Row(cols) | SubArg::Column(cols) => {
                // Row by row of the tile (no division a lane): a run of one row's lanes is
                // that row's index, or its columns counted up.
                let cols = cols.max(1);
                let (mut row, mut col) = (start / cols, start % cols);
                let (mut at, n_out) = (0, out.len());
                while at < n_out {
                    let run = &mut out[at..(at + cols - col).min(n_out)];
                    if matches!(self, SubArg::Row(_)) {
                        run.fill(row as u64);
                    } else {
                        for (x, c) in run.iter_mut().zip(col as u64..) {
                            *x = c;
                        }
                    }
                    (at, row, col) = (at + run.len(), row + 1, 0);
                }
            }
        }
    }
}

/// Where [`Batch::call_sub_logged`] puts a call's results.
enum SubResults<'a> {
    /// Every result column gathered (`c·n + lane`), the vector's earlier contents dropped.
    Columns(&'a mut Vec<u64>),
    /// Each chunk of lanes' results handed over as the chunk finishes, from the sub-batch's
    /// registers (no copy of the columns): its first lane and its results.
    Chunks(&'a mut dyn FnMut(usize, &ChunkResults)),
}

/// The results of one chunk of a sub-batch call ([`SubResults::Chunks`]).
struct ChunkResults<'a> {
    /// The sub-batch's registers, `MAX_LANES` words a column.
    cols: &'a [u64],
    /// The return value's first column.
    first: usize,
    /// The chunk's lanes.
    lanes: usize,
}

impl ChunkResults<'_> {
    /// Component `c` of the return value, one word a lane of the chunk.
    fn component(&self, c: usize) -> &[u64] {
        let at = (self.first + c) * MAX_LANES;
        &self.cols[at..at + self.lanes]
    }
}

/// Fetches every cache line of `runs` (elements of `cb` bytes, index 0 at byte `start` of
/// `words`) that lies inside `words`.
fn prefetch_runs(words: &[AtomicU32], runs: &[(usize, u64, usize)], start: usize, cb: u64) {
    for &(_, i0, len) in runs {
        let first = start.wrapping_add((i0.wrapping_mul(cb)) as usize);
        for byte in (first..first.saturating_add(len * cb as usize)).step_by(64) {
            if let Some(w) = words.get(byte / 4) {
                kernels::prefetch(w);
            }
        }
    }
}

/// Runs of equal length one after the other into `out` (`byte_of` gives a run's first byte):
/// runs equally far apart in memory (a tensor's rows) through one vector conversion of the
/// whole set, others run by run ([`run_to_f32`]). One call instead of one per run: a flash
/// attention step converts 32 rows of 128 halves for each of K and V.
fn runs_to_f32(
    words: &[AtomicU32],
    runs: &[(usize, u64, usize)],
    byte_of: impl Fn(u64) -> usize,
    num: Num,
    out: &mut [f32],
) {
    let Some(&(_, _, len)) = runs.first() else {
        return;
    };
    if let Some((w0, step)) = f16_word_rows(runs, &byte_of, num)
        && kernels::f16_rows_to_f32(words, (w0, step, runs.len(), len / 2), out)
    {
        return;
    }
    for (&(_, i0, _), out) in runs.iter().zip(out.chunks_exact_mut(len)) {
        run_to_f32(words, byte_of(i0), num, out);
    }
}

/// Where runs of f16s (at least two, of one even length) are whole words evenly spaced in
/// memory, as vector conversions read them: the first run's word and the step in words.
fn f16_word_rows(
    runs: &[(usize, u64, usize)],
    byte_of: impl Fn(u64) -> usize,
    num: Num,
) -> Option<(usize, usize)> {
    let (&(_, i0, len), rest) = runs.split_first()?;
    let first = byte_of(i0);
    let step = byte_of(rest.first()?.1).wrapping_sub(first);
    let even = runs
        .windows(2)
        .all(|w| byte_of(w[1].1).wrapping_sub(byte_of(w[0].1)) == step);
    (even
        && num == Num::F16
        && len.is_multiple_of(2)
        && first.is_multiple_of(4)
        && step.is_multiple_of(4))
    .then_some((first / 4, step / 4))
}

/// `dst[j · step] = src[j]` for every j (one component of DecodeVectorFunc's results placed
/// V apart), unrolled for the usual steps so that the index arithmetic is constant.
fn interleave_into(dst: &mut [f32], step: usize, src: &[f32]) {
    fn fixed<const S: usize>(dst: &mut [f32], src: &[f32]) {
        for (chunk, &x) in dst.chunks_mut(S).zip(src) {
            chunk[0] = x;
        }
    }
    match step {
        1 => dst.copy_from_slice(src),
        2 => fixed::<2>(dst, src),
        4 => fixed::<4>(dst, src),
        8 => fixed::<8>(dst, src),
        _ => {
            for (j, &x) in src.iter().enumerate() {
                dst[j * step] = x;
            }
        }
    }
}

/// A tile's f16 decode results (`r`: result columns, each value in the low 16 bits of its
/// word) in tile order, two to a word, the first in the low half, into `words` (its earlier
/// contents dropped): `words_len` words, by the runs of `da`, which cover every element of the
/// tile, whatever their shape. DecodeVectorFunc's usual shape is packed a chunk of calls at a
/// time instead ([`pack_interleaved`]).
fn halves_in_tile_order(da: &DecodeArgs, r: &[u64], words_len: usize, words: &mut Vec<u32>) {
    let runs = &da.runs;
    let half = |x: u64| x as u32 & 0xffff;
    words.clear();
    words.resize(words_len, 0);
    for w in runs {
        for j in 0..w.len {
            let e = w.e + j * w.e_step;
            let sh = 16 * (e % 2) as u32;
            let word = &mut words[e / 2];
            *word = (*word & !(0xffff << sh)) | half(r[w.ri + j * w.ri_step]) << sh;
        }
    }
}

/// V (2 or 4) when the results of `da`'s calls fill a tile of `words_len` f16 pairs in
/// DecodeVectorFunc's usual shape: component k of call j at element V·j + k, so that calls
/// j0.. fill words from V·j0 / 2 on ([`pack_interleaved`]).
fn interleaved_halves(da: &DecodeArgs, words_len: usize) -> Option<usize> {
    let runs = &da.runs;
    let v = runs.len();
    let n = da.calls();
    ((v == 2 || v == 4)
        && n * v == 2 * words_len
        && runs
            .iter()
            .enumerate()
            .all(|(k, w)| (w.ri, w.ri_step, w.e, w.e_step, w.len) == (k * n, 1, k, v, n)))
    .then_some(v)
}

/// The f16 results of the consecutive calls `first..` (`cols`: V = 2 or 4 components, one
/// word a call, the value in its low 16 bits) as pairs in [`interleaved_halves`]' order, V / 2
/// words a call from word V·first / 2 of the tile's `words`.
fn pack_interleaved(cols: &[&[u64]], first: usize, words: &mut [u32]) {
    let half = |x: u64| x as u32 & 0xffff;
    let v = cols.len();
    let calls = cols.first().map_or(0, |c| c.len());
    let words = &mut words[first * v / 2..(first + calls) * v / 2];
    match *cols {
        [c0, c1, c2, c3] => kernels::interleave4_halves([c0, c1, c2, c3], words),
        [c0, c1] => {
            for ((w, &a), &b) in words.iter_mut().zip(c0).zip(c1) {
                *w = half(a) | half(b) << 16;
            }
        }
        _ => debug_assert!(false, "pack_interleaved of {} components", cols.len()),
    }
}

/// The decode calls of a tile in the column form a call takes (blockCoord and coordInBlock one
/// dimension after another), offset-free like the sources they come from, and where each
/// result goes: one DecodeFunc call per memory element, or one DecodeVectorFunc call per V-group
/// (SPV_NV_cooperative_matrix_decode_vector: the V consecutive elements of a block row).
struct DecodeArgs {
    /// The calls' arguments (`index` one per call; the others `dims` columns of `calls`).
    index: Vec<u64>,
    /// The smallest and largest of `index` (a tile's calls address one stretch of blocks).
    index_range: (u64, u64),
    block_coord: Vec<u64>,
    coord_in_block: Vec<u64>,
    dims: usize,
    /// Where the results go, as strided runs of (result position, tile element) in result
    /// order (see [`WriteRun`]): component k of call c is at result position `k · calls + c`.
    runs: Vec<WriteRun>,
}

/// `len` writes `tile[e + j·e_step] = result[ri + j·ri_step]`: a tile's decode results in
/// result order. DecodeVectorFunc's component k of every call is one run (its elements V
/// apart in the tile), so a tile's results go in a few passes instead of a write list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct WriteRun {
    ri: usize,
    ri_step: usize,
    e: usize,
    e_step: usize,
    len: usize,
}

impl WriteRun {
    /// Greedy runs over `writes` sorted by result position (each element is written once, so
    /// the order does not matter).
    fn from_writes(writes: &[(usize, usize)]) -> Vec<WriteRun> {
        let mut sorted = writes.to_vec();
        sorted.sort_unstable();
        let mut runs: Vec<WriteRun> = Vec::new();
        for &(ri, e) in &sorted {
            if let Some(r) = runs.last_mut() {
                let (last_ri, last_e) =
                    (r.ri + (r.len - 1) * r.ri_step, r.e + (r.len - 1) * r.e_step);
                if r.len == 1 && ri > last_ri && e > last_e {
                    (r.ri_step, r.e_step, r.len) = (ri - last_ri, e - last_e, 2);
                    continue;
                }
                if r.len > 1 && ri == last_ri + r.ri_step && e == last_e + r.e_step {
                    r.len += 1;
                    continue;
                }
            }
            runs.push(WriteRun {
                ri,
                ri_step: 1,
                e,
                e_step: 1,
                len: 1,
            });
        }
        runs
    }
}

impl DecodeArgs {
    /// Arguments of the given calls (element-order tensor elements).
    fn columns(calls: &[&TensorElement], dims: usize, writes: Vec<(usize, usize)>) -> Self {
        let column = |f: &dyn Fn(&TensorElement, usize) -> u64| -> Vec<u64> {
            (0..dims)
                .flat_map(|c| calls.iter().map(move |te| f(te, c)))
                .collect()
        };
        let index: Vec<u64> = calls.iter().map(|te| te.index).collect();
        DecodeArgs {
            index_range: (
                index.iter().copied().min().unwrap_or(0),
                index.iter().copied().max().unwrap_or(0),
            ),
            index,
            block_coord: column(&|te, c| te.block_coord[c] as u64),
            coord_in_block: column(&|te, c| te.coord_in_block[c] as u64),
            dims,
            runs: WriteRun::from_writes(&writes),
        }
    }

    /// One DecodeFunc call per memory element, in element order.
    fn scalar(srcs: &[ElementSource], dims: usize) -> Self {
        let mem: Vec<(usize, &TensorElement)> = srcs
            .iter()
            .enumerate()
            .filter_map(|(e, s)| s.memory().map(|te| (e, te)))
            .collect();
        let calls: Vec<&TensorElement> = mem.iter().map(|&(_, te)| te).collect();
        let writes = mem.iter().enumerate().map(|(l, &(e, _))| (l, e)).collect();
        Self::columns(&calls, dims, writes)
    }

    /// One DecodeVectorFunc call per V-group, in the order of the groups' first elements
    /// (every memory element belongs to a group).
    fn vector(
        lay: &coopmat_tensor::TensorLayout,
        srcs: &[ElementSource],
        v: u32,
    ) -> Result<Self, String> {
        let flat = coopmat_tensor::decode_vector_calls(lay, srcs, v).map_err(|e| e.to_string())?;
        let n = flat.calls.len();
        let calls: Vec<&TensorElement> = flat.calls.iter().collect();
        let writes = flat
            .members
            .iter()
            .map(|m| (m.component as usize * n + m.group, m.element))
            .collect();
        Ok(Self::columns(&calls, lay.dims(), writes))
    }

    /// The number of calls.
    fn calls(&self) -> usize {
        self.index.len()
    }
}

/// A reduction's fold, worked out once per (mode, source rows, cols, result rows, cols): the
/// distinct source lists (`groups` of them, all of one length), step t holding the element
/// index of each list's t-th source, and for each result element its list. Computing it means
/// hashing every result element's whole list, which cost more than the fold itself when it
/// was done at every OpCooperativeMatrixReduceNV (flash attention reduces every KV block).
pub(super) struct ReducePlan {
    groups: usize,
    /// Step-major: step t is `order[t·groups..(t + 1)·groups]`.
    order: Vec<u32>,
    /// List-major: list k is `lists[k·len..(k + 1)·len]`, in fold order.
    lists: Vec<u32>,
    /// Whether list k is the elements `k·len..(k + 1)·len` in order (the rows of a Row
    /// reduction, the whole tile of a Row|Column one).
    contiguous: bool,
    /// The source tile's element count: every index above is below it (`new` checks).
    elems: usize,
    which: Vec<usize>,
    /// `Some(n)` when result element e is list `e / n`'s value (a Row reduction: each result
    /// row of n elements is its list's; a Row|Column one: n is the whole result), so a result
    /// is filled row by row.
    row_fill: Option<usize>,
}

/// The key of a [`ReducePlan`].
type ReduceKey = (coopmat_tensor::ops::ReduceMode, u32, u32, u32, u32);

impl ReducePlan {
    /// The plan of `key`, from a cache of the thread's: it depends on the shapes alone, and
    /// every workgroup of every dispatch of a flash-attention pipeline needs the same few. Per
    /// thread, not per process: a shared cache's lock and reference counts were 2.5 % of flash
    /// attention on two workers.
    fn get(key: ReduceKey) -> Result<std::rc::Rc<ReducePlan>, Fault> {
        use std::cell::RefCell;
        use std::rc::Rc;
        thread_local! {
            static PLANS: RefCell<Vec<(ReduceKey, Rc<ReducePlan>)>> = const { RefCell::new(Vec::new()) };
        }
        if let Some(p) = PLANS.with_borrow(|plans| {
            plans
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, p)| p.clone())
        }) {
            return Ok(p);
        }
        let plan = Rc::new(ReducePlan::new(key)?);
        PLANS.with_borrow_mut(|plans| {
            if plans.len() >= 64 {
                plans.remove(0);
            }
            plans.push((key, plan.clone()));
        });
        Ok(plan)
    }

    fn new((mode, rows, cols, drows, dcols): ReduceKey) -> Result<Self, Fault> {
        let sources =
            coopmat_tensor::ops::reduce_sources(mode, rows, cols, drows, dcols).map_err(tfault)?;
        let mut uniq: Vec<&Vec<(u32, u32)>> = Vec::new();
        let mut which = Vec::with_capacity(sources.len());
        let mut index: std::collections::HashMap<&Vec<(u32, u32)>, usize> = Default::default();
        for s in &sources {
            let k = *index.entry(s).or_insert_with(|| {
                uniq.push(s);
                uniq.len() - 1
            });
            which.push(k);
        }
        let len = uniq.first().map_or(0, |u| u.len());
        if len == 0 || uniq.iter().any(|u| u.len() != len) {
            return Err(tfault(
                "reduction source lists are empty or of different lengths",
            ));
        }
        let index_of = |&(r, c): &(u32, u32)| r * cols + c;
        let order = (0..len)
            .flat_map(|t| uniq.iter().map(move |u| index_of(&u[t])))
            .collect();
        let lists: Vec<u32> = uniq.iter().flat_map(|u| u.iter().map(index_of)).collect();
        let elems = rows as usize * cols as usize;
        if lists.iter().any(|&e| e as usize >= elems) {
            return Err(tfault("reduction source outside the source matrix"));
        }
        let contiguous = lists.iter().enumerate().all(|(i, &e)| e as usize == i);
        // A whole-matrix reduction's one value fills the result as one "row".
        let n = if uniq.len() == 1 {
            which.len()
        } else {
            dcols as usize
        };
        let row_fill = (n > 0 && which.iter().enumerate().all(|(e, &k)| k == e / n)).then_some(n);
        Ok(ReducePlan {
            groups: uniq.len(),
            order,
            lists,
            contiguous,
            elems,
            which,
            row_fill,
        })
    }

    /// The steps, each the element index of every list's next source (at least one step, all
    /// `groups` long: `new` refuses empty lists).
    fn steps(&self) -> std::slice::ChunksExact<'_, u32> {
        self.order.chunks_exact(self.groups.max(1))
    }
}

/// What to add to an offset-free source: (index delta, blockCoord delta, tensorCoord delta).
type Shift = (u64, coopmat_tensor::Coord, coopmat_tensor::Coord);

fn shifted(te: &TensorElement, sh: &Shift) -> TensorElement {
    let mut t = *te;
    t.index = t.index.wrapping_add(sh.0);
    for k in 0..t.dims as usize {
        t.block_coord[k] = t.block_coord[k].wrapping_add(sh.1[k]);
        t.tensor_coord[k] = t.tensor_coord[k].wrapping_add(sh.2[k]);
    }
    t
}

/// The key under which the element sources of a tile over `lay` (encoded as `lcols`, viewed
/// through `vcols`) are cached, and the shift from the key's sources to `lay`'s (see
/// [`SourceCache`]); None when they are computed in full (a negative offset, a zero block size).
fn source_key(
    lay: &coopmat_tensor::TensorLayout,
    lcols: &[u64],
    vcols: Option<&[u64]>,
    rows: u32,
    cols: u32,
    store: bool,
) -> Option<(SourceKey, Shift)> {
    let mut shift: Shift = (0, [0; 5], [0; 5]);
    let mut phase = [0u64; 5];
    for (k, ph) in phase.iter_mut().enumerate().take(lay.dims()) {
        let (o, bs, sp, d) = (
            lay.offset()[k] as i64,
            lay.block_size()[k] as i64,
            lay.span()[k] as i64,
            lay.layout_dimension()[k] as i64,
        );
        if o < 0 || bs == 0 {
            return None;
        }
        if o + sp > d {
            // The span leaves the tensor in this dimension (a tile over its edge, the tensor
            // smaller than the tile): its offset stays in the key as it is, so its clamping is
            // the key's. Clamping is decided per dimension, and the shifted dimensions never
            // clamp, so the sources are still the key's, shifted.
            *ph = o as u64;
            continue;
        }
        // Offset o = b·bs + r: the sources of offset r (the key's), shifted by b blocks.
        // Clamping is not involved (o + span <= dimension, so r + span too), and block
        // coordinates, coordinates in the block and indices shift uniformly.
        let (b, r) = ((o / bs) as u64, (o % bs) as u64);
        shift.0 = shift.0.wrapping_add(b.wrapping_mul(lay.stride()[k] as u64));
        shift.1[k] = b as u32;
        shift.2[k] = (o as u64 - r) as u32;
        *ph = r;
    }
    let mut key = SourceKey::default();
    let view = vcols.unwrap_or(&[]);
    let tail = [
        rows as u64,
        cols as u64,
        store as u64,
        vcols.is_some() as u64,
    ];
    for part in [lcols, view, &tail] {
        key.push(part)?;
    }
    key.words.get_mut(17..22)?.copy_from_slice(&phase);
    Some((key, shift))
}

/// Words of the longest [`SourceKey`]: a layout's, a view's and four more.
const SOURCE_KEY_WORDS: usize = LAYOUT_WORDS + VIEW_WORDS + 4;

/// Up to `N` words on the stack: keys and encodings that tensor loads build for every tile,
/// where a vector cost an allocation each time.
struct StackWords<const N: usize> {
    words: [u64; N],
    len: usize,
}

impl<const N: usize> Default for StackWords<N> {
    fn default() -> Self {
        StackWords {
            words: [0; N],
            len: 0,
        }
    }
}

impl<const N: usize> StackWords<N> {
    /// Appends `part`; None (nothing appended) when it does not fit.
    fn push(&mut self, part: &[u64]) -> Option<()> {
        let end = self.len.checked_add(part.len())?;
        self.words.get_mut(self.len..end)?.copy_from_slice(part);
        self.len = end;
        Some(())
    }
}

impl<const N: usize> std::ops::Deref for StackWords<N> {
    type Target = [u64];
    fn deref(&self) -> &[u64] {
        &self.words[..self.len]
    }
}

/// A key of the offset-free source cache ([`source_key`]).
type SourceKey = StackWords<SOURCE_KEY_WORDS>;

/// A key of the dispatch's tile cache ([`tile_key_of`]): seven words, a layout's and a view's.
type TileKey = StackWords<{ 7 + LAYOUT_WORDS + VIEW_WORDS }>;

/// A lane's layout or view encoding copied out of its interned table ([`Batch::value_words`]).
type ValueWords = StackWords<MAX_VALUE_WORDS>;

/// Words of the longer of a layout's and a view's encodings.
const MAX_VALUE_WORDS: usize = if LAYOUT_WORDS > VIEW_WORDS {
    LAYOUT_WORDS
} else {
    VIEW_WORDS
};

use tensor_values::MAX_SET_ARGS;

/// A set op's operands as the u32s the `coopmat_tensor` setters take (which check the count
/// against the value's dimensions); more than any set takes is an error.
fn a32_of(a: &[u64]) -> Result<[u32; MAX_SET_ARGS], Fault> {
    if a.len() > MAX_SET_ARGS {
        return Err(tfault(format!(
            "tensor layout or view set with {} operands (at most {MAX_SET_ARGS})",
            a.len()
        )));
    }
    Ok(std::array::from_fn(|i| a.get(i).map_or(0, |&x| x as u32)))
}

fn tfault(e: impl std::fmt::Display) -> Fault {
    Fault {
        kind: ErrorKind::InvalidOperand,
        what: e.to_string(),
        lane: None,
    }
}

impl C2 {
    /// A layout or view set's op, result column, input and argument columns.
    pub(super) fn set_op(&self) -> Option<(SetOp, Col, Col, &[Col])> {
        match self {
            C2::SetLayout { kind, d, src, args } => Some((SetOp::Layout(*kind), *d, *src, args)),
            C2::SetView { kind, d, src, args } => Some((SetOp::View(*kind), *d, *src, args)),
            C2::CreateLayout { .. }
            | C2::CreateView { .. }
            | C2::Load { .. }
            | C2::Store { .. }
            | C2::QcomArray(_)
            | C2::QcomMatrix(_)
            | C2::GetCoord { .. }
            | C2::Reduce { .. }
            | C2::PerElement { .. }
            | C2::Transpose { .. } => None,
        }
    }
}

/// A layout or view set op: the field it sets.
#[derive(Clone, Copy)]
pub(super) enum SetOp {
    /// OpTensorLayoutSet*NV and OpTensorLayoutSliceNV.
    Layout(LayoutSet),
    /// OpTensorViewSet*NV.
    View(ViewSet),
}

impl SetOp {
    /// The kind of value it sets.
    fn kind(self) -> Tensor {
        match self {
            SetOp::Layout(_) => Tensor::Layout,
            SetOp::View(_) => Tensor::View,
        }
    }

    /// Its key in its kind's memo of set results (`tensor_values::SetKey`).
    fn key(self) -> u8 {
        match self {
            SetOp::Layout(k) => k as u8,
            SetOp::View(k) => k as u8,
        }
    }

    /// The encoding `out` of the value it makes from encoding `inp` and argument words `a`.
    fn apply(self, inp: &[u64], a: &[u64], out: &mut [u64]) -> Result<(), Fault> {
        match self {
            SetOp::Layout(kind) => {
                let l = layout_from(inp).map_err(tfault)?;
                let a32 = a32_of(a)?;
                let a32 = &a32[..a.len()];
                let r = match kind {
                    LayoutSet::Dimension => l.set_dimension(a32),
                    LayoutSet::Stride => l.set_stride(a32),
                    LayoutSet::BlockSize => l.set_block_size(a32),
                    LayoutSet::Slice => l.slice(a32),
                    LayoutSet::ClampValue => {
                        Ok(l.set_clamp_value(a32.first().copied().unwrap_or(0)))
                    }
                }
                .map_err(tfault)?;
                layout_to(&r, out);
            }
            SetOp::View(kind) => {
                let v = view_from(inp).map_err(tfault)?;
                let a32 = a32_of(a)?;
                let a32 = &a32[..a.len()];
                let r = match kind {
                    ViewSet::Dimension => v.set_dimension(a32).map_err(tfault)?,
                    ViewSet::Stride => v.set_stride(a32).map_err(tfault)?,
                    ViewSet::Clip => {
                        if a32.len() != 4 {
                            return Err(tfault("OpTensorViewSetClipNV: expected 4 operands"));
                        }
                        v.set_clip(a32[0], a32[1], a32[2], a32[3])
                    }
                };
                view_to(&r, out);
            }
        }
        Ok(())
    }
}

impl<'p, 'a> Batch<'p, 'a> {
    pub(super) fn coop2(&mut self, c: &C2, mask: &Mask) -> Result<(), Fault> {
        match c {
            C2::CreateLayout { d, dims, mode } => {
                let l = coopmat_tensor::TensorLayout::create(
                    *dims,
                    coopmat_tensor::ClampMode::from_raw(*mode).map_err(tfault)?,
                )
                .map_err(tfault)?;
                let mut v = [0u64; LAYOUT_WORDS];
                layout_to(&l, &mut v);
                let h = self.intern_value(Tensor::Layout, &v);
                self.fill_cols(*d, &[h], mask);
            }
            C2::CreateView {
                d,
                dims,
                has_dim,
                perm,
            } => {
                let v =
                    coopmat_tensor::TensorView::create(*dims, *has_dim, &perm[..*dims as usize])
                        .map_err(tfault)?;
                let mut w = [0u64; VIEW_WORDS];
                view_to(&v, &mut w);
                let h = self.intern_value(Tensor::View, &w);
                self.fill_cols(*d, &[h], mask);
            }
            C2::SetLayout { kind, d, src, args } => {
                self.set_value(SetOp::Layout(*kind), *d, *src, args, mask)?
            }
            C2::SetView { kind, d, src, args } => {
                self.set_value(SetOp::View(*kind), *d, *src, args, mask)?
            }
            C2::Load {
                d,
                ptr,
                obj,
                layout,
                view,
                decode,
                salt,
            } => self.load_tensor(*d, *ptr, *obj, *layout, *view, decode.as_ref(), *salt, mask)?,
            C2::Store {
                ptr,
                m,
                layout,
                view,
            } => self.store_tensor(*ptr, *m, *layout, *view, mask)?,
            C2::QcomArray(q) => self.qcom_array_op(q, mask)?,
            C2::QcomMatrix(q) => self.qcom_matrix(q, mask)?,
            C2::GetCoord { d, m, idx } => {
                // The engine's mapping (DESIGN.md): lane l of its scope instance, component i
                // is row-major element l + i·scope.
                let s = self.slot(*m);
                let (scope, ncols) = (s.scope as u64, s.cm.cols as u64);
                let lanes = self.lanes;
                for l in mask_lanes(mask) {
                    let i = self.cols[idx.ix() * lanes + l] & 0xffff_ffff;
                    let e = (l as u64 % scope) + i * scope;
                    self.cols[d.ix() * lanes + l] = (e / ncols) & 0xffff_ffff;
                    self.cols[(d.ix() + 1) * lanes + l] = e % ncols;
                }
            }
            C2::Reduce { d, m, mode, func } => self.reduce(*d, *m, *mode, *func, mask)?,
            C2::PerElement { d, m, func, extras } => {
                self.per_element(*d, *m, *func, extras, mask)?
            }
            C2::Transpose { d, m } => {
                let (sd, sm) = (self.slot(*d).cm, self.slot(*m).cm);
                for (i, _) in self.instances(*d, mask) {
                    let v: Vec<u64> = (0..sm.elems()).map(|e| self.mat_get(*m, i, e)).collect();
                    let t = coopmat_tensor::ops::transpose(&v, sm.rows, sm.cols).map_err(tfault)?;
                    if t.len() != sd.elems() {
                        return fault(
                            ErrorKind::InvalidOperand,
                            "OpCooperativeMatrixTransposeNV: result shape mismatch",
                        );
                    }
                    for (e, x) in t.into_iter().enumerate() {
                        self.mat_set(*d, i, e, x);
                    }
                }
            }
        }
        Ok(())
    }

    /// Writes the same value into columns `d..` of every active lane (a plain fill when all
    /// are active).
    pub(super) fn fill_cols(&mut self, d: Col, v: &[u64], mask: &Mask) {
        let lanes = self.lanes;
        let dense = *mask == self.full;
        for (k, &x) in v.iter().enumerate() {
            let column = &mut self.cols[(d.ix() + k) * lanes..(d.ix() + k + 1) * lanes];
            if dense {
                // Layout fields a set leaves as they were (dimensions, strides and clamp values
                // of the unused dimensions) often hold the value already: a read, not a write.
                if column.first() != Some(&x) || !kernels::column_is(column, x) {
                    kernels::fill_column(column, x);
                }
            } else {
                for l in mask_lanes(mask) {
                    column[l] = x;
                }
            }
        }
    }

    /// Computes a layout/view set (handles in column `d`) per active lane from the value `src`
    /// and argument columns; lanes whose inputs equal the previous lane's reuse its result
    /// (values are almost always uniform: then one evaluation, [`Batch::set_value_at`]).
    fn set_value(
        &mut self,
        op: SetOp,
        d: Col,
        src: Col,
        args: &[Col],
        mask: &Mask,
    ) -> Result<(), Fault> {
        let lanes = self.lanes;
        let Some(first) = mask_lanes(mask).next() else {
            return Ok(());
        };
        // Uniform inputs (the usual case: layouts and views are built from constants, push
        // constants and workgroup ids): one evaluation, found by comparing whole columns
        // (plain slices when every lane is active).
        let dense = *mask == self.full;
        let uniform = |c: Col| {
            let column = &self.cols[c.ix() * lanes..(c.ix() + 1) * lanes];
            let v = column[first];
            if dense {
                kernels::column_is(column, v)
            } else {
                mask_lanes(mask).all(|l| column[l] == v)
            }
        };
        if uniform(src) && args.iter().all(|&c| uniform(c)) {
            let h = self.set_value_at(op, src, args, first)?;
            self.fill_cols(d, &[h], mask);
            return Ok(());
        }
        let at = |b: &Self, c: Col, l: usize| b.cols[c.ix() * lanes + l];
        let mut prev: Option<(u64, Vec<u64>, u64)> = None;
        let mut av = vec![0u64; args.len()];
        for l in mask_lanes(mask) {
            let h = at(self, src, l);
            for (x, &c) in av.iter_mut().zip(args) {
                *x = at(self, c, l);
            }
            let r = match &prev {
                Some((ph, pa, r)) if *ph == h && *pa == av => *r,
                _ => {
                    let r = self.run_set(op, h, &av, l)?;
                    prev = Some((h, av.clone(), r));
                    r
                }
            };
            self.cols[d.ix() * lanes + l] = r;
        }
        Ok(())
    }

    /// The handle set op `op` gives for lane `l`'s operands: the one it gave before for the
    /// same input handle and arguments in this workgroup (the memo), else computed and
    /// interned. [`Batch::once`] calls this straight for a set proved uniform.
    pub(super) fn set_value_at(
        &mut self,
        op: SetOp,
        src: Col,
        args: &[Col],
        l: usize,
    ) -> Result<u64, Fault> {
        let lanes = self.lanes;
        let input = self.cols[src.ix() * lanes + l];
        let mut buf = [0u64; MAX_SET_ARGS];
        let long: Vec<u64>;
        let av: &[u64] = if args.len() <= MAX_SET_ARGS {
            for (x, &c) in buf.iter_mut().zip(args) {
                *x = self.cols[c.ix() * lanes + l];
            }
            &buf[..args.len()]
        } else {
            long = args
                .iter()
                .map(|&c| self.cols[c.ix() * lanes + l])
                .collect();
            &long
        };
        let kind = op.kind();
        let key = tensor_values::SetKey::new(op.key(), input, av);
        if let Some(h) = key.and_then(|k| self.values(kind).recall(&k)) {
            return Ok(h);
        }
        let h = self.run_set(op, input, av, l)?;
        if let Some(k) = key {
            self.values_mut(kind).remember(k, h);
        }
        Ok(h)
    }

    /// Set op `op` on the value of handle `h` with argument words `av`, interned.
    fn run_set(&mut self, op: SetOp, h: u64, av: &[u64], l: usize) -> Result<u64, Fault> {
        let kind = op.kind();
        // Encodings on the stack (this runs for every layout and view set that misses the memo).
        let mut inp = [0u64; MAX_VALUE_WORDS];
        let value = self.values(kind).get(h);
        let inp = &mut inp[..value.len().min(MAX_VALUE_WORDS)];
        inp.copy_from_slice(&value[..inp.len()]);
        let mut out = [0u64; MAX_VALUE_WORDS];
        let out = &mut out[..kind.words()];
        op.apply(inp, av, out).map_err(|e| Fault {
            kind: ErrorKind::InvalidOperand,
            what: e.what,
            lane: Some(l),
        })?;
        Ok(self.intern_value(kind, out))
    }

    /// The interned values of `kind`.
    fn values(&self, kind: Tensor) -> &tensor_values::Interned {
        match kind {
            Tensor::Layout => &self.layouts,
            Tensor::View => &self.views,
        }
    }

    /// The interned values of `kind`, to add to.
    fn values_mut(&mut self, kind: Tensor) -> &mut tensor_values::Interned {
        match kind {
            Tensor::Layout => &mut self.layouts,
            Tensor::View => &mut self.views,
        }
    }

    /// The handle of `value`, an encoding of `kind`. A table that reached its bound first
    /// frees the entries no word of the batch's registers and memory could name (never in a
    /// sub-batch: its caller's registers hold handles of the same table).
    fn intern_value(&mut self, kind: Tensor, value: &[u64]) -> u64 {
        let lent = self.values_lent;
        let table = match kind {
            Tensor::Layout => &mut self.layouts,
            Tensor::View => &mut self.views,
        };
        if table.wants_collection() && !lent {
            let n = table.len();
            let mut referenced = vec![false; n];
            let mut mark = |x: u64| {
                if let Some(r) = usize::try_from(x).ok().and_then(|x| referenced.get_mut(x)) {
                    *r = true;
                }
            };
            self.cols.iter().for_each(|&x| mark(x));
            for words in &self.mem.local {
                words.iter().for_each(|w| mark(w.load(Relaxed) as u64));
            }
            table.collect(&referenced);
        }
        table.intern(value)
    }

    /// The encoding of lane `l`'s value of `kind` in column `c`.
    fn value_words(&self, kind: Tensor, c: Col, l: usize) -> ValueWords {
        let v = self.values(kind).get(self.cols[c.ix() * self.lanes + l]);
        let mut out = ValueWords::default();
        // Every encoding fits (MAX_VALUE_WORDS is the longer kind's).
        let _ = out.push(&v[..v.len().min(MAX_VALUE_WORDS)]);
        out
    }

    /// The element sources of a tile: from the offset-free cache and a shift when the
    /// condition of [`SourceCache`] holds, else computed in full (shift zero).
    fn tile_sources(
        &mut self,
        (lay, lcols): (&coopmat_tensor::TensorLayout, &[u64]),
        vcols: Option<&[u64]>,
        rows: u32,
        cols: u32,
        store: bool,
    ) -> Result<(std::rc::Rc<TileSources>, Shift), Fault> {
        let vw = match vcols {
            Some(v) => Some(view_from(v).map_err(|e| tfault(e.what))?),
            None => None,
        };
        let full = |lay: &coopmat_tensor::TensorLayout| {
            if store {
                coopmat_tensor::store_sources(lay, vw.as_ref(), rows, cols)
            } else {
                coopmat_tensor::load_sources(lay, vw.as_ref(), rows, cols)
            }
            .map_err(tfault)
        };
        let Some((key, shift)) = source_key(lay, lcols, vcols, rows, cols, store) else {
            return Ok((
                std::rc::Rc::new(TileSources::new(full(lay)?, cols as usize)),
                (0, [0; 5], [0; 5]),
            ));
        };
        if let Some(s) = SOURCES.with_borrow(|m| m.get(&*key).cloned()) {
            return Ok((s, shift));
        }
        let base = layout_from(&key[..LAYOUT_WORDS]).map_err(|e| tfault(e.what))?;
        let srcs = std::rc::Rc::new(TileSources::new(full(&base)?, cols as usize));
        SOURCES.with_borrow_mut(|m| {
            if m.len() >= MAX_KEPT_SOURCES {
                m.clear();
            }
            m.insert(key.to_vec(), srcs.clone());
        });
        Ok((srcs, shift))
    }

    /// Moves a tile's memory runs (each inside the object `(sh, idx)` from byte `b0`, checked
    /// by the caller) into the f32 arena from `tile`. Runs along rows that follow one another
    /// in the tile are converted together ([`runs_to_f32`]).
    /// Runs along columns (a transposing view: ggml's B tiles) that fill up to
    /// [`TRANSPOSE_GROUP`] adjacent columns with the same length are read one after the other
    /// into a scratch block and written back row by row, so that each row of the group is one
    /// contiguous store instead of one store per column into lines a tile apart; sixteen evenly
    /// spaced f16 runs skip the scratch ([`kernels::f16_runs_to_columns16`]).
    fn place_runs(
        &mut self,
        srcs: &TileSources,
        (sh, idx, b0): (bool, u32, usize),
        shift: u64,
        num: Num,
        tile: usize,
    ) {
        let cb = num.bytes() as u64;
        let stride = srcs.run_stride;
        let byte_of = |i0: u64| b0 + (i0.wrapping_add(shift) * cb) as usize;
        let mut row = std::mem::take(&mut self.src_cache.row);
        let runs = &srcs.runs;
        let mut r = 0;
        while r < runs.len() {
            let (e0, _, len) = runs[r];
            let words = self.mem.words(sh, idx);
            let group = if stride == 1 {
                // Along rows: straight into the arena, the runs that follow one another in the
                // tile (whole tile rows: a flash attention's V tile) together.
                let group = 1 + runs[r + 1..]
                    .iter()
                    .enumerate()
                    .take_while(|&(j, &(e, _, l))| e == e0 + (j + 1) * len && l == len)
                    .count();
                let out = &mut self.mf[tile + e0..tile + e0 + group * len];
                runs_to_f32(words, &runs[r..r + group], byte_of, num, out);
                group
            } else {
                // Up to TRANSPOSE_GROUP adjacent columns of the same length: their runs one
                // after the other into the scratch block, then as columns.
                let group = 1 + runs[r + 1..]
                    .iter()
                    .take(TRANSPOSE_GROUP - 1)
                    .enumerate()
                    .take_while(|&(j, &(e, _, l))| e == e0 + j + 1 && l == len)
                    .count();
                let end = tile + e0 + (len - 1) * stride + group;
                let block = &mut self.mf[tile + e0..end];
                let fused = group == 16
                    && f16_word_rows(&runs[r..r + group], byte_of, num).is_some_and(
                        |(w0, step)| {
                            kernels::f16_runs_to_columns16(
                                words,
                                (w0, step, len / 2),
                                block,
                                stride,
                            )
                        },
                    );
                if !fused {
                    row.resize(group * len, 0.0);
                    runs_to_f32(words, &runs[r..r + group], byte_of, num, &mut row);
                    kernels::runs_to_columns(&row, len, group, block, stride);
                }
                group
            };
            r += group;
        }
        self.src_cache.row = row;
    }

    /// Records that tensor load `at` (salt, instance) read its runs from byte `start` of
    /// `object` (the byte of index 0); returns the step to the next read when this one moved
    /// by the same step as the one before (wrapping: a step down is as good as one up).
    fn next_runs(&mut self, at: (u32, usize), object: (bool, u32), start: usize) -> Option<usize> {
        // One entry a load op and instance of the programs this batch ran: bounded anyway.
        if self.src_cache.strides.len() >= MAX_TRACKED_LOADS {
            self.src_cache.strides.clear();
        }
        use std::collections::hash_map::Entry;
        match self.src_cache.strides.entry(at) {
            Entry::Vacant(v) => {
                v.insert(RunStride {
                    object,
                    byte: start,
                    step: 0,
                });
                None
            }
            Entry::Occupied(mut o) => {
                let last = *o.get();
                // Another object (a pointer that changed): no step yet.
                let same = last.object == object;
                let step = if same {
                    start.wrapping_sub(last.byte)
                } else {
                    0
                };
                o.insert(RunStride {
                    object,
                    byte: start,
                    step,
                });
                (step != 0 && step == last.step).then_some(step)
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn load_tensor(
        &mut self,
        d: Mat,
        ptr: Col,
        obj: Mat,
        layout: Col,
        view: Option<Col>,
        decode: Option<&Decode>,
        salt: u32,
        mask: &Mask,
    ) -> Result<(), Fault> {
        let s = self.slot(d);
        let cm = s.cm;
        let cb = cm.num.bytes() as u64;
        let bits = cm.num.bits();
        let n_el = cm.elems();
        let f16_arena = cm.num == Num::F16;
        let f32_arena = cm.num == Num::F32;
        let lut = floats::f16_lut();
        for (i, l0) in self.instances(d, mask) {
            let lf = |e: ExecError| Fault {
                kind: ErrorKind::InvalidOperand,
                what: e.what,
                lane: Some(l0),
            };
            let lcols = self.value_words(Tensor::Layout, layout, l0);
            let lay = layout_from(&lcols).map_err(lf)?;
            let vcols = view.map(|v| self.value_words(Tensor::View, v, l0));
            let (srcs, shift) =
                self.tile_sources((&lay, &lcols), vcols.as_deref(), cm.rows, cm.cols, false)?;
            if obj != d && srcs.keeps_object {
                let n = cm.elems();
                let so = self.slot(obj);
                if cm.is_f32_arena() {
                    self.mf
                        .copy_within(so.off + i * n..so.off + (i + 1) * n, s.off + i * n);
                } else {
                    self.mw
                        .copy_within(so.off + i * n..so.off + (i + 1) * n, s.off + i * n);
                }
            }
            let base = self.cols[ptr.ix() * self.lanes + l0];
            // A tile read from memory nothing writes during the dispatch is the same for the
            // same layout, view and pointer: an earlier workgroup's copy is reused. Only a tile
            // gathered across its runs (through a transposing view) is worth keeping: one read
            // by rows costs what copying the kept tile back does.
            let plain_key = (decode.is_none()
                && (f16_arena || f32_arena)
                && !srcs.keeps_object
                && srcs.run_stride != 1
                && self.tiles.as_ref().is_some_and(|c| c.keeps_plain(salt)))
            .then(|| self.loaded_tile_key(base, &cm, &lcols, vcols.as_deref()))
            .flatten();
            if let Some(k) = &plain_key
                && let Some(c) = &self.tiles
                && let Some(t) = c.get(k)
            {
                c.count_plain(salt, true);
                let k0 = s.off + i * n_el;
                t.elements.write_to(&mut self.mf[k0..k0 + n_el]);
                c.reused(k);
                t.prefetch_next();
                continue;
            }
            let fast = match self.mem.resolve(base, l0, 0, false) {
                Ok((sh, idx, b0)) => self.mem.bytes_from(base).map(|a| (sh, idx, b0, a)),
                Err(_) => None,
            };
            // Whole runs when every run lies inside the pointer's object: one check a run.
            let run_object = fast.filter(|&(_, _, _, avail)| {
                decode.is_none() && (f16_arena || f32_arena) && srcs.runs_inside(shift.0, cb, avail)
            });
            if let Some((sh, idx, b0, _)) = run_object {
                let start = b0.wrapping_add((shift.0.wrapping_mul(cb)) as usize);
                // The same step as last time (a loop walking a tensor: flash attention's K and
                // V, one block of rows a step): this load's lines were fetched by the last one.
                let step = self.next_runs((salt, i), (sh, idx), start);
                if step.is_none() {
                    // Runs are short (a tile's row or column) and far apart in the source (a
                    // tensor's rows): touch every cache line of every run first, so that the
                    // misses overlap instead of each run waiting for its own.
                    prefetch_runs(self.mem.words(sh, idx), &srcs.runs, start, cb);
                }
                self.place_runs(&srcs, (sh, idx, b0), shift.0, cm.num, s.off + i * n_el);
                if let Some(step) = step {
                    // The next load's lines now, so that its misses overlap the work in
                    // between instead of the next step waiting for memory at its start.
                    prefetch_runs(
                        self.mem.words(sh, idx),
                        &srcs.runs,
                        start.wrapping_add(step),
                        cb,
                    );
                }
            }
            let runs_done = run_object.is_some();
            // DecodeFunc calls only (the usual case), or DecodeVectorFunc wherever the spec
            // allows it without checking against DecodeFunc: arguments from cached columns.
            let columns_decode = decode.filter(|dec| {
                !self.vector_decode(dec)
                    || self.p.options.decode_policy == crate::DecodePolicy::Vector
                        && !self.p.options.check_decode
            });
            // Reused between loads (large tiles would otherwise mmap/munmap every time).
            let mut mem_elems = std::mem::take(&mut self.src_cache.elems);
            mem_elems.clear();
            // With the memory elements moved in bulk only the others are left to visit.
            let bulk = runs_done || columns_decode.is_some();
            let visit: &mut dyn Iterator<Item = (usize, &ElementSource)> = if bulk {
                // Clamped stretches filled whole.
                for &(e0, len, v) in &srcs.constant_runs {
                    self.fill_elements(d, i, e0..e0 + len, constant_bits(v, bits));
                }
                &mut srcs.not_constant.iter().map(|&e| (e, &srcs.srcs[e]))
            } else {
                &mut srcs.srcs.iter().enumerate()
            };
            for (e, src) in visit {
                match src {
                    ElementSource::Memory(te) => {
                        if decode.is_some() {
                            mem_elems.push((e, shifted(te, &shift)));
                        } else {
                            let index = te.index.wrapping_add(shift.0);
                            // Fast path: inside the pointer's object, no re-resolving.
                            if let Some((sh, idx, b0, avail)) = fast {
                                let off = index.wrapping_mul(cb);
                                if index < avail / cb.max(1) && off + cb <= avail {
                                    let x = memory::read_bytes(
                                        self.mem.words(sh, idx),
                                        b0 + off as usize,
                                        cb as u32,
                                    );
                                    let k = s.off + i * n_el + e;
                                    if f16_arena {
                                        self.mf[k] = lut[x as usize];
                                    } else if f32_arena {
                                        self.mf[k] = f32::from_bits(x as u32);
                                    } else {
                                        self.mat_set(d, i, e, x);
                                    }
                                    continue;
                                }
                            }
                            let a = memory::offset_address(base, index as i128 * cb as i128);
                            let x = match self.mem.read(a, l0, cb as u32) {
                                Ok(x) => x,
                                Err(_) if self.p.options.robust => 0,
                                Err(err) => {
                                    return Err(Fault {
                                        kind: ErrorKind::InvalidOperand,
                                        what: format!(
                                            "tensor load of element {e} (row {}, col {}): {err}",
                                            e / cm.cols as usize,
                                            e % cm.cols as usize
                                        ),
                                        lane: Some(l0),
                                    });
                                }
                            };
                            self.mat_set(d, i, e, x);
                        }
                    }
                    ElementSource::Constant(v) => {
                        self.mat_set(d, i, e, constant_bits(*v, bits));
                    }
                    ElementSource::Clipped | ElementSource::Discarded => {}
                    ElementSource::Undefined => {
                        return Err(Fault {
                            kind: ErrorKind::InvalidOperand,
                            what: format!(
                                "tensor load: element (row {}, col {}) is outside the tensor with clamp mode Undefined (undefined behaviour)",
                                e / cm.cols as usize,
                                e % cm.cols as usize
                            ),
                            lane: Some(l0),
                        });
                    }
                }
            }
            if let Some(dec) = columns_decode {
                self.src_cache.elems = mem_elems;
                // The vector policy calls DecodeVectorFunc where the spec allows it: not when
                // blockSize[LDim-1] is no multiple of V (SPV_NV_cooperative_matrix_decode_vector:
                // undefined behaviour if it is invoked then; "the implementation may invoke
                // either at any call site"), where DecodeFunc decodes the whole tile.
                let vector_args = dec
                    .vector
                    .filter(|_| self.vector_decode(dec))
                    .map(|(vf, v)| (vf, srcs.vector_args(&lay, v)));
                let vector = vector_args
                    .as_ref()
                    .and_then(|(vf, args)| args.as_ref().as_ref().map(|da| (*vf, da)));
                let (func, da) = vector.unwrap_or_else(|| {
                    (
                        dec.func,
                        srcs.decode_args
                            .get_or_init(|| DecodeArgs::scalar(&srcs.srcs, lay.dims())),
                    )
                });
                let key = self.tile_key(func, dec.block_bytes, base, &cm, &lcols, vcols.as_deref());
                self.decode_tile(
                    d,
                    i,
                    l0,
                    base,
                    da,
                    &shift,
                    (func, salt),
                    dec.block_bytes,
                    key,
                )?;
            } else if let Some(dec) = decode {
                let r = self.decode_elems(
                    d, i, l0, base, &lay, &srcs.srcs, &shift, &mem_elems, dec, salt,
                );
                self.src_cache.elems = mem_elems;
                r?;
            } else {
                self.src_cache.elems = mem_elems;
            }
            // The cache's handle cloned only for a tile to keep: its count is a cache line the
            // workers share, and every load paid for it (70-80 cycles in flash attention).
            if let Some(k) = plain_key
                && let Some(c) = self.tiles.clone()
            {
                let k0 = s.off + i * n_el;
                let elements = tiles::TileElements::of(&self.mf[k0..k0 + n_el], f16_arena);
                let tile = tiles::KeptTile {
                    bytes: elements.bytes(),
                    elements,
                    workgroup: Vec::new(),
                    next: Default::default(),
                };
                let present = self.keep_tile(k.to_vec(), tile, (salt, i));
                // A tile another worker kept while this one read it counts as reused:
                // workgroups running side by side miss together (the first two of a GEMM's
                // tile row, which then judged B tiles not worth keeping in most runs), the
                // later ones hit.
                c.count_plain(salt, present);
            }
        }
        Ok(())
    }

    /// The key of a tile a tensor load reads without a decode function, where it may be kept
    /// in the dispatch's cache: only when the pointer's object is a buffer no write of the
    /// dispatch can reach ([`tiles::TileCache::never_written`]); 0 first (no function has id 0),
    /// then the pointer, the tile's type and the layout and view values.
    fn loaded_tile_key(
        &self,
        base: u64,
        cm: &CmType,
        lcols: &[u64],
        vcols: Option<&[u64]>,
    ) -> Option<TileKey> {
        let cache = self.tiles.as_ref()?;
        let o = self.mem.obj(base >> memory::OBJ_SHIFT)?;
        if !o.shared || !cache.never_written(self.mem.shared[o.idx as usize]) {
            return None;
        }
        tile_key_of([0, 0, base, (cm.num == Num::F16) as u64], cm, lcols, vcols)
    }

    /// Whether loads through `dec` call DecodeVectorFunc for some groups (the policy, or
    /// `check_decode`, which runs both).
    fn vector_decode(&self, dec: &Decode) -> bool {
        let policy = self.p.options.decode_policy;
        dec.vector.is_some()
            && (policy != crate::DecodePolicy::Scalar || self.p.options.check_decode)
    }

    /// The decode calls of a tile ([`DecodeArgs`]: one DecodeFunc call per memory element, or
    /// one DecodeVectorFunc call per V-group), their arguments shifted from the cached
    /// offset-free columns into reused buffers; the results go straight into the tile. Same
    /// lanes, same order and same values as [`Batch::decode_elems`] gives them.
    ///
    /// With a `key` ([`Batch::tile_key`]) the results may come from the dispatch's decoded
    /// tiles, and are kept there when nothing the calls read can change ([`tiles`]).
    #[allow(clippy::too_many_arguments)]
    fn decode_tile(
        &mut self,
        d: Mat,
        i: usize,
        l0: usize,
        base: u64,
        da: &DecodeArgs,
        shift: &Shift,
        (func, salt): (u32, u32),
        block_bytes: u64,
        key: Option<TileKey>,
    ) -> Result<(), Fault> {
        let n = da.calls();
        if n == 0 {
            return Ok(());
        }
        let s = self.slot(d);
        let tile = s.off + i * s.cm.elems()..s.off + (i + 1) * s.cm.elems();
        // Only tiles the calls' results cover completely are kept whole.
        let whole = da.runs.iter().map(|w| w.len).sum::<usize>() == tile.len();
        let key = key.filter(|_| whole);
        let kept = key
            .as_ref()
            .and_then(|k| self.tiles.as_ref()?.get(k))
            .filter(|t| t.workgroup_matches(&self.mem.local));
        if let (Some(t), Some(c), Some(k)) = (kept, &self.tiles, &key) {
            t.elements.write_to(&mut self.mf[tile]);
            c.reused(k);
            t.prefetch_next();
            return Ok(());
        }
        let f16_pairs = self.slot(d).cm.num == Num::F16 && whole && tile.len().is_multiple_of(2);
        // The results cover the tile: their f16 bits are packed in tile order (the form a
        // kept tile takes) and widened into the arena in one pass.
        let mut words = Vec::new();
        if f16_pairs && key.is_none() {
            words = std::mem::take(&mut self.src_cache.halves);
        }
        let mut r = std::mem::take(&mut self.src_cache.results);
        let v = interleaved_halves(da, tile.len() / 2).filter(|_| f16_pairs);
        // DecodeVectorFunc's usual shape: each chunk of calls packs its own stretch of the
        // tile straight from the sub-batch's registers.
        let vw = v.unwrap_or(0);
        if v.is_some() {
            words.resize(tile.len() / 2, 0);
        }
        let mut pack = |first: usize, chunk: &ChunkResults| {
            let cols: [&[u64]; 4] =
                std::array::from_fn(|k| if k < vw { chunk.component(k) } else { &[] });
            pack_interleaved(&cols[..vw], first, &mut words);
        };
        let sink = match v {
            Some(_) => SubResults::Chunks(&mut pack),
            None => SubResults::Columns(&mut r),
        };
        let results =
            self.decode_calls(da, base, shift, func, block_bytes, l0, key.is_some(), sink);
        let reads = match results {
            Ok(reads) => reads,
            Err(e) => {
                self.src_cache.results = r;
                return Err(e);
            }
        };
        if f16_pairs {
            if v.is_none() {
                halves_in_tile_order(da, &r, tile.len() / 2, &mut words);
            }
            kernels::f16_words_to_f32(&words, &mut self.mf[tile.clone()]);
            self.src_cache.results = r;
            match (key, reads) {
                (Some(k), Some(reads)) => {
                    if let Some(kept) = self.tile_to_keep(&reads, tiles::TileElements::Half(words))
                    {
                        self.keep_tile(k.to_vec(), kept, (salt, i));
                    }
                }
                _ => self.src_cache.halves = words,
            }
            return Ok(());
        }
        if self.slot(d).cm.num == Num::F16 {
            // Every result column converted at once (F16C where the CPU has it), then placed
            // by runs.
            let mut vals = std::mem::take(&mut self.src_cache.row);
            // Every value is overwritten: resized, not cleared (a 32 KiB fill a tile).
            vals.resize(r.len(), 0.0);
            kernels::f16_cols_to_f32(&r, &mut vals);
            self.place_f32(d, i, da, &vals);
            self.src_cache.row = vals;
        } else {
            for w in &da.runs {
                for j in 0..w.len {
                    self.mat_set(d, i, w.e + j * w.e_step, r[w.ri + j * w.ri_step]);
                }
            }
        }
        self.src_cache.results = r;
        if let (Some(k), Some(reads)) = (key, reads)
            && let Some(kept) =
                self.tile_to_keep(&reads, tiles::TileElements::of(&self.mf[tile], true))
        {
            self.keep_tile(k.to_vec(), kept, (salt, i));
        }
        Ok(())
    }

    /// Keeps `tile` in the dispatch's cache under `key` for load `at` (salt, instance) and
    /// links it from the tile the same load kept before; true when a tile was kept under
    /// `key` already (see [`tiles::TileCache::insert`]).
    fn keep_tile(&mut self, key: Vec<u64>, tile: tiles::KeptTile, at: (u32, usize)) -> bool {
        let Some(c) = &self.tiles else {
            return false;
        };
        let (present, kept) = c.insert(key, tile, at.0);
        if let Some(kept) = kept {
            if self.src_cache.last_kept.len() >= MAX_TRACKED_LOADS {
                self.src_cache.last_kept.clear();
            }
            let before = self
                .src_cache
                .last_kept
                .insert(at, std::sync::Arc::downgrade(&kept));
            if let Some(before) = before.and_then(|w| w.upgrade()) {
                let _ = before.next.set(std::sync::Arc::downgrade(&kept));
            }
        }
        present
    }

    /// The key of a tile's decoded results in the dispatch's cache, where they may be kept:
    /// everything the calls' arguments are computed from (function, pointer, block size,
    /// tile shape, layout and view values). None without a cache, for results other than f16,
    /// or for a function that is not a pure reader.
    fn tile_key(
        &self,
        func: u32,
        block_bytes: u64,
        base: u64,
        cm: &CmType,
        lcols: &[u64],
        vcols: Option<&[u64]>,
    ) -> Option<TileKey> {
        self.tiles.as_ref()?;
        let pure = self.p.funcs.iter().any(|f| f.id == func && f.pure_reader);
        // A tensor in per-invocation memory would be read through the sub-batch's own copy:
        // not kept.
        let per_lane = self
            .mem
            .obj(base >> memory::OBJ_SHIFT)
            .is_some_and(|o| o.per_lane != 0);
        if !pure || per_lane || cm.num != Num::F16 {
            return None;
        }
        tile_key_of([func as u64, block_bytes, base, 1], cm, lcols, vcols)
    }

    /// The decoded tile to keep with `elements`, if every object the calls read (`reads`)
    /// stays as it is for the rest of the dispatch or is compared before reuse: buffers outside
    /// all writable ones, Workgroup objects (their words kept with the tile); the calls' own
    /// per-invocation variables do not count. None when a read buffer may be written.
    fn tile_to_keep(
        &mut self,
        reads: &[u64],
        elements: tiles::TileElements,
    ) -> Option<tiles::KeptTile> {
        let cache = self.tiles.as_ref()?;
        let mut workgroup: Vec<(usize, std::sync::Arc<[u32]>)> = Vec::new();
        let mut bytes = elements.bytes();
        for &oi in reads {
            // Null and poisoned pointers read nothing (the access failed, or gave the robust
            // zero, the same every time).
            let Some(o) = self.mem.obj(oi) else { continue };
            if o.shared {
                if !cache.never_written(self.mem.shared[o.idx as usize]) {
                    return None;
                }
            } else if o.per_lane == 0 {
                let idx = o.idx as usize;
                let now = &self.mem.local[idx];
                // The words the previous tile kept, when they are still the same (ggml's scales
                // change every few K steps).
                let same = self
                    .tile_words
                    .iter()
                    .find(|(i, w)| *i == idx && tiles::words_equal(now, w));
                let words = match same {
                    Some((_, w)) => w.clone(),
                    None => {
                        let w: std::sync::Arc<[u32]> =
                            now.iter().map(|x| x.load(Relaxed)).collect();
                        bytes += w.len() as u64 * 4;
                        self.tile_words.retain(|(i, _)| *i != idx);
                        self.tile_words.push((idx, w.clone()));
                        w
                    }
                };
                workgroup.push((idx, words));
            }
        }
        Some(tiles::KeptTile {
            bytes,
            elements,
            workgroup,
            next: Default::default(),
        })
    }

    /// Runs the decode calls of [`DecodeArgs`] `da` (shifted by `shift`, pointers from `base`):
    /// their results into `results`; with `log`, returns the objects their loads read. The
    /// arguments are moved from the cached offset-free columns as they are written into the
    /// sub-batch, unless a block address may leave the pointer's object range (then they are
    /// built, poisoned where they overflow, first).
    #[allow(clippy::too_many_arguments)]
    fn decode_calls(
        &mut self,
        da: &DecodeArgs,
        base: u64,
        shift: &Shift,
        func: u32,
        block_bytes: u64,
        l0: usize,
        log: bool,
        results: SubResults<'_>,
    ) -> Result<Option<Vec<u64>>, Fault> {
        let n = da.calls();
        // As `offset_address(base, index · block_bytes)` over i128: a product that leaves i64
        // is poisoned either way.
        let block_bytes = i64::try_from(block_bytes).ok();
        let at = |i: u64| {
            i64::try_from(i)
                .ok()
                .zip(block_bytes)
                .and_then(|(i, b)| i.checked_mul(b))
                .map_or(memory::POISON, |off| memory::offset_address_i64(base, off))
        };
        // When the last block of the tile is a valid address of the pointer's object, every
        // block before it is too (the address grows with the index from a non-negative one,
        // nothing overflows): `base + (index + shift) · block_bytes` in plain multiply-adds.
        let (lo, hi) = da.index_range;
        let shifted = lo.checked_add(shift.0).zip(hi.checked_add(shift.0));
        let mut built = std::mem::take(&mut self.src_cache.args);
        let address = match (shifted, block_bytes) {
            (Some((_, h)), Some(b)) if at(h) != memory::POISON => SubArg::Affine {
                lanes: &da.index,
                mul: b as u64,
                add: base.wrapping_add(shift.0.wrapping_mul(b as u64)),
            },
            _ => {
                built.clear();
                built.extend(da.index.iter().map(|&x| at(x.wrapping_add(shift.0))));
                SubArg::Lanes(&built)
            }
        };
        // coordInBlock needs no shift: the cached column is passed as it is.
        let cols = [
            address,
            SubArg::OffsetU32 {
                lanes: &da.block_coord[..da.dims * n],
                add: &shift.1[..da.dims],
            },
            SubArg::Lanes(&da.coord_in_block),
        ];
        let r = self.call_sub_logged(func, &cols, n, l0, log, results);
        self.src_cache.args = built;
        r
    }

    /// Places a tile's f16 decode results, widened (`vals`, result order), into tile `i` of
    /// `d` (an f16 matrix: its elements are kept as f32) by the runs of `da`.
    fn place_f32(&mut self, d: Mat, i: usize, da: &DecodeArgs, vals: &[f32]) {
        let s = self.slot(d);
        let k0 = s.off + i * s.cm.elems();
        let tile = &mut self.mf[k0..k0 + s.cm.elems()];
        for w in &da.runs {
            if w.len == 0 {
                continue;
            }
            // Slices over the run's whole extent, so the loops index without per-element
            // iterator state (the runs were built inside the tile and the results).
            let src = &vals[w.ri..=w.ri + (w.len - 1) * w.ri_step];
            let dst = &mut tile[w.e..=w.e + (w.len - 1) * w.e_step];
            if w.ri_step == 1 {
                interleave_into(dst, w.e_step, src);
            } else {
                for j in 0..w.len {
                    dst[j * w.e_step] = src[j * w.ri_step];
                }
            }
        }
    }

    /// Runs the decode calls of one tile: scalar calls for elements not covered by a
    /// vector-decoded group, one vector call per vector group; checks both with `check_decode`.
    #[allow(clippy::too_many_arguments)]
    fn decode_elems(
        &mut self,
        d: Mat,
        i: usize,
        l0: usize,
        base: u64,
        lay: &coopmat_tensor::TensorLayout,
        srcs: &[ElementSource],
        shift: &Shift,
        mem_elems: &[(usize, TensorElement)],
        dec: &Decode,
        salt: u32,
    ) -> Result<(), Fault> {
        let policy = self.p.options.decode_policy;
        let check = self.p.options.check_decode;
        let use_vec = dec.vector.is_some() && (policy != crate::DecodePolicy::Scalar || check);
        // Elements decoded by scalar calls.
        let mut scalar: Vec<(usize, TensorElement)> = Vec::new();
        let mut vgroups: Vec<coopmat_tensor::DecodeVectorGroup> = Vec::new();
        if let (true, Some((_, v))) = (use_vec, dec.vector) {
            let groups = coopmat_tensor::decode_vector_groups(lay, srcs, v).map_err(|e| Fault {
                kind: ErrorKind::InvalidOperand,
                what: e.to_string(),
                lane: Some(l0),
            })?;
            for (g, mut grp) in groups.into_iter().enumerate() {
                let salt = (salt as u64) << 20 ^ i as u64;
                if policy.vector_for(g, salt) {
                    // Groups of the offset-free sources, shifted (a uniform blockCoord shift
                    // does not change the grouping).
                    grp.call = shifted(&grp.call, shift);
                    vgroups.push(grp);
                } else {
                    for m in grp.members.iter().flatten() {
                        if let ElementSource::Memory(te) = &srcs[*m] {
                            scalar.push((*m, shifted(te, shift)));
                        }
                    }
                }
            }
        }
        // Without vector groups every memory element is decoded by DecodeFunc.
        let scalar: &[(usize, TensorElement)] = if use_vec { &scalar } else { mem_elems };
        let dims = lay.dims();
        let mk_args = |els: &mut dyn Iterator<Item = TensorElement>, n: usize| {
            // Filled completely below (every lane, every dimension).
            let mut pa = vec![0u64; n];
            let mut bc = vec![0u64; dims * n];
            let mut ib = vec![0u64; dims * n];
            for (l, te) in els.enumerate() {
                pa[l] = memory::offset_address(base, te.index as i128 * dec.block_bytes as i128);
                for c in 0..dims {
                    bc[c * n + l] = te.block_coord[c] as u64;
                    ib[c * n + l] = te.coord_in_block[c] as u64;
                }
            }
            vec![pa, bc, ib]
        };
        if !scalar.is_empty() {
            let n = scalar.len();
            let args = mk_args(&mut scalar.iter().map(|x| x.1), n);
            let r = self.call_sub(dec.func, &args, n, l0)?;
            for (l, &(e, _)) in scalar.iter().enumerate() {
                self.mat_set(d, i, e, r[l]);
            }
        }
        if let (false, Some((vf, _))) = (vgroups.is_empty(), dec.vector) {
            let n = vgroups.len();
            let args = mk_args(&mut vgroups.iter().map(|g| g.call), n);
            let r = self.call_sub(vf, &args, n, l0)?;
            for (l, g) in vgroups.iter().enumerate() {
                for (k, mem) in g.members.iter().enumerate() {
                    for &e in mem {
                        self.mat_set(d, i, e, r[k * n + l]);
                    }
                }
            }
            if check {
                // Scalar decode of the same elements; the first disagreement is an error.
                let els: Vec<(usize, usize, usize, TensorElement)> = vgroups
                    .iter()
                    .enumerate()
                    .flat_map(|(gi, g)| {
                        g.members.iter().enumerate().flat_map(move |(k, mem)| {
                            mem.iter().filter_map(move |&e| match &srcs[e] {
                                ElementSource::Memory(te) => Some((gi, k, e, shifted(te, shift))),
                                ElementSource::Constant(_)
                                | ElementSource::Clipped
                                | ElementSource::Discarded
                                | ElementSource::Undefined => None,
                            })
                        })
                    })
                    .collect();
                let ns = els.len();
                let args = mk_args(&mut els.iter().map(|x| x.3), ns);
                let rs = self.call_sub(dec.func, &args, ns, l0)?;
                let cols = self.slot(d).cm.cols as usize;
                for (l, &(gi, k, e, _)) in els.iter().enumerate() {
                    let vv = r[k * n + gi];
                    if rs[l] != vv {
                        return Err(Fault {
                            kind: ErrorKind::InvalidOperand,
                            what: format!(
                                "check-decode: DecodeFunc and DecodeVectorFunc disagree at element (row {}, col {}), group {gi} (block {:?}, component {k}): scalar 0x{:x}, vector 0x{:x}",
                                e / cols,
                                e % cols,
                                &vgroups[gi].call.block_coord[..dims],
                                rs[l],
                                vv
                            ),
                            lane: Some(l0),
                        });
                    }
                }
            }
        }
        Ok(())
    }

    /// Calls function `fid` over `n` lanes on the sub-batch (`args[p][c·n + lane]`), returns
    /// its result columns (`c·n + lane`).
    fn call_sub(
        &mut self,
        fid: u32,
        args: &[Vec<u64>],
        n: usize,
        l0: usize,
    ) -> Result<Vec<u64>, Fault> {
        let mut out = Vec::new();
        let cols: Vec<SubArg> = args.iter().map(|a| SubArg::Lanes(a)).collect();
        self.call_sub_logged(fid, &cols, n, l0, false, SubResults::Columns(&mut out))?;
        Ok(out)
    }

    /// [`Batch::call_sub`] into `out` (gathered columns, their vector's earlier contents
    /// dropped and its allocation reused, or handed over a chunk at a time), with `log` also
    /// the objects the call's loads read.
    fn call_sub_logged(
        &mut self,
        fid: u32,
        args: &[SubArg<'_>],
        n: usize,
        l0: usize,
        log: bool,
        mut out: SubResults<'_>,
    ) -> Result<Option<Vec<u64>>, Fault> {
        let t0 = Instant::now();
        let p = self.p;
        let Some(fi) = p.funcs.iter().position(|f| f.id == fid) else {
            return fault(
                ErrorKind::InvalidOperand,
                format!("function %{fid} (called by the engine) was not compiled"),
            );
        };
        let f = &p.funcs[fi];
        if f.params.len() != args.len() {
            return fault(
                ErrorKind::InvalidOperand,
                format!(
                    "function {} takes {} parameters, the engine passes {}",
                    f.name,
                    f.params.len(),
                    args.len()
                ),
            );
        }
        for (v, a) in f.params.iter().zip(args) {
            let given = match a {
                SubArg::Lanes(a) if a.len() == v.ncols as usize * n => v.ncols as usize,
                SubArg::Lanes(a) => a.len() / n.max(1),
                SubArg::OffsetU32 { lanes, add } => (lanes.len() / n.max(1)).min(add.len()),
                SubArg::Same(vals) => vals.len(),
                SubArg::Row(_) | SubArg::Column(_) | SubArg::Affine { .. } => 1,
            };
            if given != v.ncols as usize || v.nmats != 0 {
                return fault(
                    ErrorKind::InvalidOperand,
                    format!(
                        "function {}: a parameter has {} components, expected {given}",
                        f.name, v.ncols,
                    ),
                );
            }
        }
        let mut sub = match self.sub.take() {
            Some(s) => s,
            None => {
                let sh = Shared {
                    objs: self.mem.objs.clone(),
                    addressable: self.mem.addressable.clone(),
                    words: self.mem.shared.clone(),
                    binding_obj: Default::default(),
                    push_obj: 0,
                    local_base: 0,
                    groups: self.groups,
                    array_len: self.array_len.clone(),
                    tiles: None,
                };
                let mut b = Batch::new(p, &sh, MAX_LANES);
                // Global variables' pointers as the parent sees them.
                for &(c, _) in &p.var_cols {
                    let v = self.cols[c.ix() * self.lanes];
                    b.cols[c.ix() * MAX_LANES..(c.ix() + 1) * MAX_LANES].fill(v);
                }
                Box::new(b)
            }
        };
        // The calling invocation's workgroup (for the sub-batch's messages).
        let wg = self
            .pack_wgs
            .get(l0 / p.group_lanes.max(1) as usize)
            .or(self.pack_wgs.first())
            .copied()
            .unwrap_or_default();
        sub.pack_wgs.clear();
        sub.pack_wgs.push(wg);
        sub.reads = log.then(Vec::new);
        // The decode function sees this workgroup's Workgroup memory (ggml's decode tables
        // live there): lend those objects to the sub-batch for the call.
        let wg_objs: Vec<usize> = (0..p.locals.len())
            .filter(|&i| !p.locals[i].per_lane)
            .collect();
        for &i in &wg_objs {
            std::mem::swap(&mut sub.mem.local[i], &mut self.mem.local[i]);
        }
        // Layout and view handles in the arguments and Private words name this batch's values.
        std::mem::swap(&mut sub.layouts, &mut self.layouts);
        std::mem::swap(&mut sub.views, &mut self.views);
        sub.values_lent = true;
        // The callee's ops are timed in this batch's profile, nested in the op calling it.
        std::mem::swap(&mut sub.profile, &mut self.profile);
        let ret = f.ret.unwrap_or_default();
        // Every word is overwritten by the chunks' results below (or the call fails): resized,
        // not cleared (q4_k's decode fills 64 KiB a tile).
        if let SubResults::Columns(out) = &mut out {
            out.resize(ret.ncols as usize * n, 0);
        }
        let mut start = 0;
        let mut res = Ok(());
        // Private variables: every call sees those of the scope instance's first active
        // invocation, and its writes to them are dropped when it returns (DESIGN.md, "call_function").
        let privs: Vec<usize> = if f.touches_private {
            (0..p.locals.len())
                .filter(|&i| p.locals[i].private)
                .collect()
        } else {
            Vec::new()
        };
        while start < n {
            let cnt = (n - start).min(MAX_LANES);
            for &i in &privs {
                let words = (p.locals[i].bytes.next_multiple_of(8) / 4) as usize;
                let src = &self.mem.local[i][l0 * words..(l0 + 1) * words];
                for sl in 0..cnt {
                    for (d, w) in sub.mem.local[i][sl * words..(sl + 1) * words]
                        .iter()
                        .zip(src)
                    {
                        d.store(w.load(Relaxed), Relaxed);
                    }
                }
            }
            for (v, a) in f.params.iter().zip(args) {
                for c in 0..v.ncols as usize {
                    let dst = (v.col.ix() + c) * MAX_LANES;
                    a.write(c, (start, n), &mut sub.cols[dst..dst + cnt]);
                }
            }
            let mut m = [0u64; MW];
            for l in 0..cnt {
                m[l / 64] |= 1 << (l % 64);
            }
            sub.live = m;
            sub.exited = [0; MW];
            if let Err(e) = sub.call(fi, m) {
                res = Err(Fault {
                    kind: ErrorKind::InvalidOperand,
                    what: format!("in function {} (called by the engine): {e}", f.name),
                    lane: Some(l0),
                });
                break;
            }
            match &mut out {
                SubResults::Columns(out) => {
                    for c in 0..ret.ncols as usize {
                        let src = (ret.col.ix() + c) * MAX_LANES;
                        out[c * n + start..c * n + start + cnt]
                            .copy_from_slice(&sub.cols[src..src + cnt]);
                    }
                }
                SubResults::Chunks(take) => take(
                    start,
                    &ChunkResults {
                        cols: &sub.cols,
                        first: ret.col.ix(),
                        lanes: cnt,
                    },
                ),
            }
            start += cnt;
        }
        for &i in &wg_objs {
            std::mem::swap(&mut sub.mem.local[i], &mut self.mem.local[i]);
        }
        std::mem::swap(&mut sub.layouts, &mut self.layouts);
        std::mem::swap(&mut sub.views, &mut self.views);
        std::mem::swap(&mut sub.profile, &mut self.profile);
        self.lane_instr += std::mem::take(&mut sub.lane_instr);
        self.instr += std::mem::take(&mut sub.instr);
        self.uniform_copies += std::mem::take(&mut sub.uniform_copies);
        self.chained += std::mem::take(&mut sub.chained);
        self.in_place += std::mem::take(&mut sub.in_place);
        self.reused += std::mem::take(&mut sub.reused);
        let reads = sub.reads.take();
        self.sub = Some(sub);
        self.t_decode += t0.elapsed();
        res.map(|_| reads)
    }

    /// Reduce: the result's source lists come from `coopmat_tensor::ops::reduce_sources`;
    /// each distinct list is folded left to right (the order `coopmat_tensor::ops::reduce`
    /// documents), all lists of a tile in lockstep, so each fold step is one batched
    /// CombineFunc call.
    fn reduce(
        &mut self,
        d: Mat,
        m: Mat,
        mode: coopmat_tensor::ops::ReduceMode,
        func: u32,
        mask: &Mask,
    ) -> Result<(), Fault> {
        let (sd, sm) = (self.slot(d).cm, self.slot(m).cm);
        let key = (mode, sm.rows, sm.cols, sd.rows, sd.cols);
        let plan = ReducePlan::get(key)?;
        let g = plan.groups;
        // A combine function that is one binary op (or returns a parameter) is folded here,
        // with the interpreter's per-lane definition of the op; observing uniformity still
        // runs it, so that its values are observed.
        let fold = match self.p.funcs.iter().find(|f| f.id == func) {
            Some(f) if !self.p.options.observe_uniformity => f.as_fold(),
            _ => None,
        };
        // Column loops pay off over wide groups; a whole-matrix reduction (Row|Column: one
        // group, a step per element) folds element by element with the same `bin1`.
        let columns = (8..=MAX_LANES).contains(&g);
        // Sized on first use: the folds on f32 tiles need none (two Row reductions a KV step).
        let mut c = Vec::new();
        let (mut src, mut result) = (Vec::new(), Vec::new());
        let mut accf = Vec::new();
        // Result element e is its list's value `acc[which[e]]`.
        let put = |b: &mut Self, i: usize, acc: &[u64], result: &mut Vec<u64>| {
            result.clear();
            result.extend(plan.which.iter().map(|&k| acc[k]));
            b.set_tile_bits(d, i, result);
        };
        // A fold done here counts what the calls would have: one op over the lists a step.
        let rest = (plan.steps().len() as u64).saturating_sub(1);
        let (sd, sm) = (self.slot(d), self.slot(m));
        let arena = sd.cm.is_f32_arena() && sm.cm.is_f32_arena() && sd.cm.num == sm.cm.num;
        for (i, l0) in self.instances(d, mask) {
            if let (true, Some(f)) = (arena, fold) {
                let (nd, nm) = (sd.cm.elems(), sm.cm.elems());
                let (dk, mk) = (self.mat_off[d.ix()] + i * nd, self.mat_off[m.ix()] + i * nm);
                // Result row r of a Row reduction folds source row r alone, the same way for
                // every row: rows that repeat the row above give its result (a plan for the
                // rows up to the first of them, from the same cache).
                let rows = match mode {
                    coopmat_tensor::ops::ReduceMode::Row if sd.cm.rows == sm.cm.rows => {
                        self.rows_to_compute(m, i)
                    }
                    _ => sm.cm.rows as usize,
                };
                let part = if rows < sm.cm.rows as usize {
                    let r = rows as u32;
                    Some(ReducePlan::get((mode, r, sm.cm.cols, r, sd.cm.cols))?)
                } else {
                    None
                };
                let (plan, nd, nm) = match &part {
                    Some(p) => (p, rows * sd.cm.cols as usize, rows * sm.cm.cols as usize),
                    None => (&plan, nd, nm),
                };
                if plan.which.len() == nd && fold_tile(plan, &self.mf[mk..mk + nm], f, &mut accf) {
                    self.instr += rest;
                    self.lane_instr += rest * g as u64;
                    let result = &mut self.mf[dk..dk + nd];
                    match plan.row_fill {
                        Some(n) => {
                            for (row, &x) in result.chunks_mut(n).zip(&accf) {
                                row.fill(x);
                            }
                        }
                        None => {
                            for (t, &k) in result.iter_mut().zip(&plan.which) {
                                *t = accf[k];
                            }
                        }
                    }
                    self.copy_row_down(d, i, rows);
                    continue;
                }
            }
            self.tile_bits(m, i, &mut src);
            let mut acc = Vec::new();
            let el = |e: u32| src[e as usize];
            let mut steps = plan.steps();
            let first = steps.next().unwrap_or(&[]);
            acc.extend(first.iter().map(|&e| el(e)));
            if let Some(Fold::Param(second)) = fold {
                // `return a` keeps each list's first element, `return b` ends with its last
                // (every list has one length): no step in between changes anything.
                if let (true, Some(last)) = (second, steps.last()) {
                    for (a, &e) in acc.iter_mut().zip(last) {
                        *a = el(e);
                    }
                }
                self.instr += rest;
                self.lane_instr += rest * g as u64;
                put(self, i, &acc, &mut result);
                continue;
            }
            for step in steps {
                match fold {
                    // A binary op over the whole group at once: the interpreter's column loop
                    // (the same bits as `bin1`, `eval::fast_path_tests`).
                    Some(Fold::Bin { op, num, swapped }) if columns && step.len() == g => {
                        let (first, second) = if swapped { (2, 1) } else { (1, 2) };
                        c.resize(3 * g, 0);
                        for (k, &e) in step.iter().enumerate() {
                            c[first * g + k] = acc[k];
                            c[second * g + k] = el(e);
                        }
                        run_scratch(&mut c, g, ColumnOp::Bin(&scratch_bin(op, num)));
                        acc.copy_from_slice(&c[..g]);
                    }
                    Some(fold) => {
                        for (a, &e) in acc.iter_mut().zip(step) {
                            let x = el(e);
                            *a = match fold {
                                Fold::Param(false) => *a,
                                Fold::Param(true) => x,
                                Fold::Bin { op, num, swapped } if swapped => bin1(op, num, x, *a),
                                Fold::Bin { op, num, .. } => bin1(op, num, *a, x),
                            };
                        }
                    }
                    None => {
                        let rhs: Vec<u64> = step.iter().map(|&e| el(e)).collect();
                        acc = self.call_sub(func, &[acc, rhs], g, l0)?;
                    }
                }
                if fold.is_some() {
                    // What the call would have counted: one op over the group's lanes.
                    self.instr += 1;
                    self.lane_instr += g as u64;
                }
            }
            put(self, i, &acc, &mut result);
        }
        Ok(())
    }

    /// PerElementOp: one batched call of Func over all elements of a tile (row-major lanes),
    /// the elements in the order of `coopmat_tensor::ops::per_element`.
    fn per_element(
        &mut self,
        d: Mat,
        m: Mat,
        func: u32,
        extras: &[(Val, bool)],
        mask: &Mask,
    ) -> Result<(), Fault> {
        let sm = self.slot(m).cm;
        let n = sm.elems();
        // As for combine functions (`reduce`): observing uniformity runs the call.
        let fold = match self.p.funcs.iter().find(|f| f.id == func) {
            Some(f) if !self.p.options.observe_uniformity => f.as_element_fold(),
            _ => None,
        };
        for (i, l0) in self.instances(d, mask) {
            if let Some(f) = fold
                && self.element_fold_f32(d, m, i, f, extras)
            {
                continue;
            }
            // The argument columns, in buffers kept between ops: the row, the column and the
            // element of each lane (row-major, as `coopmat_tensor::ops::per_element` visits
            // them), then the extras.
            let mut args = std::mem::take(&mut self.element_args);
            args.resize_with(3 + extras.len(), Vec::new);
            self.tile_bits(m, i, &mut args[2]);
            let (c, r) = (sm.cols as usize, sm.rows as usize);
            // A fold that reads neither the row nor the column takes the elements alone.
            if fold.is_some_and(|f| f.reads_param(0) || f.reads_param(1))
                && let [rows, cols, ..] = &mut args[..]
            {
                rows.clear();
                cols.clear();
                for row in 0..r as u64 {
                    rows.extend(std::iter::repeat_n(row, c));
                    cols.extend(0..c as u64);
                }
            }
            for (&(x, is_mat), a) in extras.iter().zip(&mut args[3..]) {
                if is_mat {
                    self.tile_bits(x.mat, i, a);
                } else {
                    // A non-matrix operand: the instance's first active lane's value, one a
                    // component (a fold takes it in every lane).
                    a.clear();
                    for c in 0..x.ncols as usize {
                        let val = self.cols[(x.col.ix() + c) * self.lanes + l0];
                        a.extend(std::iter::repeat_n(val, if fold.is_some() { n } else { 1 }));
                    }
                }
            }
            let r = match fold {
                Some(f) => Ok(self.element_fold(f, &args, n)),
                None => {
                    // The call takes the row, the column and the non-matrix operands as they
                    // are instead of as columns of n lanes.
                    let mut call_args =
                        vec![SubArg::Row(c), SubArg::Column(c), SubArg::Lanes(&args[2])];
                    call_args.extend(extras.iter().zip(&args[3..]).map(|(&(_, is_mat), a)| {
                        if is_mat {
                            SubArg::Lanes(a)
                        } else {
                            SubArg::Same(a)
                        }
                    }));
                    let mut out = Vec::new();
                    self.call_sub_logged(
                        func,
                        &call_args,
                        n,
                        l0,
                        false,
                        SubResults::Columns(&mut out),
                    )
                    .map(|_| out)
                }
            };
            self.element_args = args;
            let r = r?;
            self.set_tile_bits(d, i, &r[..n.min(r.len())]);
        }
        Ok(())
    }

    /// [`Batch::element_fold`] over instance `i` of f32 tiles, from the arena and back: when the
    /// op reads neither the row nor the column and every operand is the element or an f32
    /// matrix extra of the tile's size. The same column kernel on the same bits, without the
    /// argument vectors (flash attention's `exp` and `max` run on every KV block). False:
    /// nothing done.
    fn element_fold_f32(
        &mut self,
        d: Mat,
        m: Mat,
        i: usize,
        f: ElementFold,
        extras: &[(Val, bool)],
    ) -> bool {
        let n = self.slot(m).cm.elems();
        let f32_tile = |b: &Self, x: Mat| {
            let s = b.slot(x);
            (s.cm.num == Num::F32 && s.cm.elems() == n).then_some(s.off + i * n)
        };
        // Parameter p's tile: 2 is the element, 3.. the extras.
        let param = |p: usize| match p {
            2 => Some(m),
            _ => match extras.get(p.wrapping_sub(3)) {
                Some(&(v, true)) => Some(v.mat),
                _ => None,
            },
        };
        let (num, ma, mb) = match f {
            ElementFold::Un { num, a, .. } => (num, param(a), None),
            ElementFold::Bin { num, a, b, .. } => (num, param(a), param(b)),
        };
        let offset = |x: Option<Mat>| x.and_then(|x| f32_tile(self, x));
        let kb = match f {
            ElementFold::Un { .. } => Some(0),
            ElementFold::Bin { .. } => offset(mb),
        };
        let (Some(dk), Some(ka), Some(kb), Num::F32) = (f32_tile(self, d), offset(ma), kb, num)
        else {
            return false;
        };
        // The op reads the element and its operands' elements at the same place alone, the
        // same way in every row: rows where every operand repeats the row above repeat its
        // result, so only the elements of the rows before them are computed.
        let shape = self.slot(d).cm;
        let same_shape = |x: Mat| {
            let c = self.slot(x).cm;
            (c.rows, c.cols) == (shape.rows, shape.cols)
        };
        let all_rows = shape.rows as usize;
        let rows = match [ma, mb] {
            [Some(a), b] if same_shape(a) && b.is_none_or(same_shape) => {
                let rows_a = self.rows_to_compute(a, i);
                match b {
                    Some(b) if rows_a < all_rows => rows_a.max(self.rows_to_compute(b, i)),
                    Some(_) => all_rows,
                    None => rows_a,
                }
            }
            _ => all_rows,
        };
        let n_all = n;
        let n = rows * shape.cols as usize;
        if let ElementFold::Un { op: UnOp::Exp, .. } = f {
            // Straight from the f32 tile, without widening it into u64 columns and back:
            // the same function on the same values, the lanes outside its range through `un1`
            // as the column kernel does them.
            let mut wide = std::mem::take(&mut self.scratch_f32);
            wide.resize(n, 0.0);
            if kernels::exp_f32(&self.mf[ka..ka + n], &mut wide) {
                for (o, &x) in wide.iter_mut().zip(&self.mf[ka..ka + n]) {
                    if !floats::in_exp_range(x as f64) {
                        *o = arena_f32(un1(UnOp::Exp, Num::F32, x.to_bits() as u64));
                    }
                }
            }
            return self.end_tile_fold(wide, (d, i), dk, rows, n_all);
        }
        // FMax and FMin (flash attention's running row maxima) straight on the f32 tiles, as
        // `exp` above; a lane with a NaN operand is redone with `bin1`.
        if let ElementFold::Bin { op, .. } = f
            && matches!(op, BinOp::FMax | BinOp::NMax | BinOp::FMin | BinOp::NMin)
        {
            let kop = if matches!(op, BinOp::FMax | BinOp::NMax) {
                kernels::F32Arith::Max
            } else {
                kernels::F32Arith::Min
            };
            let mut wide = std::mem::take(&mut self.scratch_f32);
            wide.resize(n, 0.0);
            let (xs, ys) = (&self.mf[ka..ka + n], &self.mf[kb..kb + n]);
            if kernels::f32_arith(kop, xs, ys, &mut wide) {
                for ((o, &x), &y) in wide.iter_mut().zip(xs).zip(ys) {
                    if x.is_nan() || y.is_nan() {
                        let r = bin1(op, Num::F32, x.to_bits() as u64, y.to_bits() as u64);
                        *o = arena_f32(r);
                    }
                }
            }
            return self.end_tile_fold(wide, (d, i), dk, rows, n_all);
        }
        let lanes = MAX_LANES.min(n);
        // Every column a kernel reads is written first: no clearing.
        let mut c = std::mem::take(&mut self.scratch_cols);
        c.resize(3 * lanes, 0);
        for start in (0..n).step_by(lanes) {
            let len = (n - start).min(lanes);
            let operand = |b: &Self, c: &mut [u64], k: usize, at: usize| {
                for (x, v) in c[k * len..(k + 1) * len]
                    .iter_mut()
                    .zip(&b.mf[at + start..at + start + len])
                {
                    *x = v.to_bits() as u64;
                }
            };
            operand(self, &mut c, 1, ka);
            if let ElementFold::Bin { .. } = f {
                operand(self, &mut c, 2, kb);
            }
            run_element_fold(&mut c[..3 * len], len, f);
            for (t, &x) in self.mf[dk + start..dk + start + len]
                .iter_mut()
                .zip(&c[..len])
            {
                *t = arena_f32(x);
            }
        }
        self.scratch_cols = c;
        self.fold_done(d, i, rows, n_all)
    }

    /// Ends a fold computed straight on f32 tiles into `wide` (the batch's scratch, given back):
    /// its values into instance `i` of `d` at `dk`, then [`Batch::fold_done`].
    fn end_tile_fold(
        &mut self,
        wide: Vec<f32>,
        (d, i): (Mat, usize),
        dk: usize,
        rows: usize,
        n_all: usize,
    ) -> bool {
        self.mf[dk..dk + wide.len()].copy_from_slice(&wide);
        self.scratch_f32 = wide;
        self.fold_done(d, i, rows, n_all)
    }

    /// The end of every fold on f32 tiles: instance `i` of `d`'s rows past `rows` repeat the
    /// last one computed, and the counts are what the call would have counted (one op over
    /// `n_all` lanes).
    fn fold_done(&mut self, d: Mat, i: usize, rows: usize, n_all: usize) -> bool {
        self.copy_row_down(d, i, rows);
        self.instr += 1;
        self.lane_instr += n_all as u64;
        true
    }

    /// A per-element function's one op ([`ElementFold`]) over `n` argument lanes
    /// (`args[p][lane]`), with the column kernel the call would have run, `MAX_LANES` at a time.
    fn element_fold(&mut self, f: ElementFold, args: &[Vec<u64>], n: usize) -> Vec<u64> {
        let mut out = Vec::with_capacity(n);
        let mut c = vec![0u64; 3 * MAX_LANES.min(n)];
        for start in (0..n).step_by(MAX_LANES) {
            let lanes = (n - start).min(MAX_LANES);
            let operand = |c: &mut [u64], k: usize, p: usize| {
                c[k * lanes..(k + 1) * lanes].copy_from_slice(&args[p][start..start + lanes]);
            };
            match f {
                ElementFold::Un { a, .. } => operand(&mut c, 1, a),
                ElementFold::Bin { a, b, .. } => {
                    operand(&mut c, 1, a);
                    operand(&mut c, 2, b);
                }
            }
            run_element_fold(&mut c[..3 * lanes], lanes, f);
            out.extend_from_slice(&c[..lanes]);
        }
        // What the call would have counted: one op over the tile's lanes.
        self.instr += 1;
        self.lane_instr += n as u64;
        out
    }

    /// OpBitCastArrayQCOM / OpExtractSubArrayQCOM, per lane (coopmat_tensor::qcom).
    fn qcom_array_op(&mut self, c: &QcomArray, mask: &Mask) -> Result<(), Fault> {
        let lanes = self.lanes;
        for l in mask_lanes(mask) {
            let get = |b: &Self, col: Col, n: u32| -> Vec<u32> {
                (0..n as usize)
                    .map(|k| b.cols[(col.ix() + k) * lanes + l] as u32)
                    .collect()
            };
            let (d, out) = match *c {
                QcomArray::Bitcast {
                    d,
                    a,
                    sbits,
                    slen,
                    dbits,
                    dlen,
                } => (
                    d,
                    coopmat_tensor::qcom::bitcast_array(
                        sbits,
                        &get(self, a, slen),
                        dbits,
                        dlen as usize,
                    ),
                ),
                QcomArray::SubArray {
                    d,
                    a,
                    slen,
                    dlen,
                    start,
                } => {
                    let st = self.cols[start.ix() * lanes + l] as u32 as i32;
                    (
                        d,
                        coopmat_tensor::qcom::extract_sub_array(
                            &get(self, a, slen),
                            st,
                            dlen as usize,
                        ),
                    )
                }
            };
            let out = out.map_err(|e| Fault {
                kind: ErrorKind::InvalidOperand,
                what: e.to_string(),
                lane: Some(l),
            })?;
            for (k, x) in out.into_iter().enumerate() {
                self.cols[(d.ix() + k) * lanes + l] = x as u64;
            }
        }
        Ok(())
    }

    /// OpCompositeConstructCoopMatQCOM / OpCompositeExtractCoopMatQCOM: invocation i of the
    /// subgroup holds row i (A, Accumulator) or column i (B); packed arrays hold the components
    /// little-endian in uint32 words (coopmat_tensor::qcom). The subgroup must have a power of
    /// two invocations (a partial last subgroup does not).
    fn qcom_matrix(&mut self, c: &QcomMatrix, mask: &Mask) -> Result<(), Fault> {
        let m = match *c {
            QcomMatrix::Construct { d, .. } => d,
            QcomMatrix::Extract { m, .. } => m,
        };
        let s = self.slot(m);
        let cm = s.cm;
        let use_ = coopmat_tensor::ops::MatrixUse::from_raw(cm.use_)
            .ok_or_else(|| tfault("QCOM conversion of a matrix without a Use"))?;
        let scope = s.scope as usize;
        let lanes = self.lanes;
        for (i, l0) in self.instances(m, mask) {
            let lo = i * scope;
            let hi = ((i + 1) * scope).min(lanes);
            if !(hi - lo).is_power_of_two() {
                return Err(Fault {
                    kind: ErrorKind::InvalidOperand,
                    what: format!(
                        "QCOM cooperative matrix conversion in a subgroup of {} invocations: the subgroup size must be a power of two (undefined behaviour)",
                        hi - lo
                    ),
                    lane: Some(l0),
                });
            }
            match *c {
                QcomMatrix::Construct { d, a, alen, packed } => {
                    let mut arrays = Vec::with_capacity(hi - lo);
                    for l in lo..hi {
                        let v: Vec<u32> = (0..alen as usize)
                            .map(|k| self.cols[(a.ix() + k) * lanes + l] as u32)
                            .collect();
                        arrays.push(match packed {
                            Some(bits) => {
                                coopmat_tensor::qcom::unpack_words(bits, &v).map_err(tfault)?
                            }
                            None => v,
                        });
                    }
                    let mat = coopmat_tensor::qcom::construct(use_, cm.rows, cm.cols, &arrays)
                        .map_err(tfault)?;
                    for (e, x) in mat.into_iter().enumerate() {
                        self.mat_set(d, i, e, x as u64);
                    }
                }
                QcomMatrix::Extract { d, m, dlen, packed } => {
                    let mat: Vec<u32> = (0..cm.elems())
                        .map(|e| self.mat_get(m, i, e) as u32)
                        .collect();
                    for l in lo..hi {
                        let arr = coopmat_tensor::qcom::extract(
                            use_,
                            cm.rows,
                            cm.cols,
                            &mat,
                            (l - lo) as u32,
                        )
                        .map_err(tfault)?;
                        let words = match (arr, packed) {
                            (Some(v), Some(bits)) => {
                                coopmat_tensor::qcom::pack_words(bits, &v).map_err(tfault)?
                            }
                            (Some(v), None) => v,
                            (None, _) => vec![0; dlen as usize],
                        };
                        if mask[l / 64] >> (l % 64) & 1 == 0 {
                            continue;
                        }
                        for (k, &x) in words.iter().enumerate().take(dlen as usize) {
                            self.cols[(d.ix() + k) * lanes + l] = x as u64;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn store_tensor(
        &mut self,
        ptr: Col,
        m: Mat,
        layout: Col,
        view: Option<Col>,
        mask: &Mask,
    ) -> Result<(), Fault> {
        let s = self.slot(m);
        let cm = s.cm;
        let cb = cm.num.bytes() as u64;
        for (i, l0) in self.instances(m, mask) {
            let lf = |e: ExecError| Fault {
                kind: ErrorKind::InvalidOperand,
                what: e.what,
                lane: Some(l0),
            };
            let lcols = self.value_words(Tensor::Layout, layout, l0);
            let lay = layout_from(&lcols).map_err(lf)?;
            let vcols = view.map(|v| self.value_words(Tensor::View, v, l0));
            let (srcs, shift) =
                self.tile_sources((&lay, &lcols), vcols.as_deref(), cm.rows, cm.cols, true)?;
            let base = self.cols[ptr.ix() * self.lanes + l0];
            let fast = match self.mem.resolve(base, l0, 0, true) {
                Ok((sh, idx, b0)) => self.mem.bytes_from(base).map(|a| (sh, idx, b0, a)),
                Err(_) => None,
            };
            if let Some(place) = fast
                && self.store_runs(m, i, &srcs, shift.0, place)
            {
                continue;
            }
            for (e, src) in srcs.srcs.iter().enumerate() {
                match src {
                    ElementSource::Memory(te) => {
                        let x = self.mat_get(m, i, e);
                        let index = te.index.wrapping_add(shift.0);
                        if let Some((sh, idx, b0, avail)) = fast {
                            let off = index.wrapping_mul(cb);
                            if index < avail / cb.max(1) && off + cb <= avail {
                                memory::write_bytes(
                                    self.mem.words(sh, idx),
                                    b0 + off as usize,
                                    cb as u32,
                                    x,
                                    sh,
                                );
                                continue;
                            }
                        }
                        let a = memory::offset_address(base, index as i128 * cb as i128);
                        if let Err(err) = self.mem.write(a, l0, cb as u32, x)
                            && !self.p.options.robust
                        {
                            return Err(Fault {
                                kind: err.kind,
                                what: format!(
                                    "tensor store of element (row {}, col {}): {err}",
                                    e / cm.cols as usize,
                                    e % cm.cols as usize
                                ),
                                lane: Some(l0),
                            });
                        }
                    }
                    ElementSource::Undefined => {
                        return Err(Fault {
                            kind: ErrorKind::UndefinedBehavior,
                            what: format!(
                                "tensor store: element (row {}, col {}) is outside the tensor with clamp mode Undefined (undefined behaviour)",
                                e / cm.cols as usize,
                                e % cm.cols as usize
                            ),
                            lane: Some(l0),
                        });
                    }
                    // Nothing to write (Constant is a load-only outcome).
                    ElementSource::Constant(_)
                    | ElementSource::Clipped
                    | ElementSource::Discarded => {}
                }
            }
        }
        Ok(())
    }

    /// Writes instance `i` of `m` by its tile's runs, one bounds check a run, when that is
    /// the same as the element loop of [`Self::store_tensor`]: runs along rows (in element
    /// order, so a later element still overwrites an earlier one at the same address) or runs
    /// that share no address (a tile stored through a transposing view: the order does not
    /// matter), every run inside the object `place` (`(shared, idx, first byte, bytes
    /// available)`), and no element outside the tensor with clamp mode Undefined (an error).
    /// False, having written nothing, otherwise.
    fn store_runs(
        &self,
        m: Mat,
        i: usize,
        srcs: &TileSources,
        shift: u64,
        (sh, idx, b0, avail): (bool, u32, usize, u64),
    ) -> bool {
        let cm = self.slot(m).cm;
        let cb = cm.num.bytes() as u64;
        if (srcs.run_stride != 1 && !srcs.runs_disjoint)
            || cb == 0
            || !srcs.runs_inside(shift, cb, avail)
            || srcs
                .others
                .iter()
                .any(|&e| matches!(srcs.srcs[e], ElementSource::Undefined))
        {
            return false;
        }
        let words = self.mem.words(sh, idx);
        let tile = self.slot(m).off + i * cm.elems();
        let f32_words = cm.num == Num::F32 && b0.is_multiple_of(4);
        let stride = srcs.run_stride;
        for &(e0, i0, len) in &srcs.runs {
            let start = b0 + (i0.wrapping_add(shift) * cb) as usize;
            if f32_words {
                // f32 elements are the arena's bits (`mat_get`), a word each.
                let values = self.mf[tile + e0..].iter().step_by(stride);
                for (w, v) in words[start / 4..start / 4 + len].iter().zip(values) {
                    w.store(v.to_bits(), Relaxed);
                }
            } else {
                for j in 0..len {
                    let x = self.mat_get(m, i, e0 + j * stride);
                    memory::write_bytes(words, start + j * cb as usize, cb as u32, x, sh);
                }
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coopmat_tensor::{ClampMode, TensorLayout, TensorView};

    /// Runs converted together by [`runs_to_f32`] are the runs converted one by one: evenly
    /// spaced runs (the one-call path: tensor rows, rows as long as the stride, a stride down),
    /// uneven ones, odd lengths, a run that starts mid-word, f32 elements, and a NaN among f16s
    /// (which the vector conversion hands back to the row path).
    #[test]
    fn runs_converted_together_equal_runs_one_by_one() {
        let mut next = coopmat_testkit::xorshift64(0x51ed_270b_2718_2818);
        // Finite halves (exponent below 31) except where a case plants a NaN.
        let words: Vec<u32> = (0..4096).map(|_| (next() as u32) & 0x3bff_3bff).collect();
        let mut nan = words.clone();
        nan[700] = 0x7e01_3c00;
        // (words, element type, first byte, run length, run starts)
        type Case<'a> = (&'a [u32], Num, u64, usize, &'a [u64]);
        let cases: [Case; 9] = [
            (&words, Num::F16, 0, 16, &[0, 64, 128, 192]),
            (&words, Num::F16, 8, 64, &[0, 64, 128, 192]),
            (&words, Num::F16, 0, 32, &[640, 480, 320, 160, 0]),
            (&words, Num::F16, 0, 16, &[0, 64, 160, 192]),
            (&words, Num::F16, 0, 15, &[0, 64, 128]),
            (&words, Num::F16, 1, 16, &[0, 64, 128]),
            (&words, Num::F16, 2, 48, &[2, 130, 258, 386]),
            (&words, Num::F32, 0, 16, &[0, 32, 64]),
            (&nan, Num::F16, 0, 128, &[1280, 1408, 1536]),
        ];
        for (n, &(src, num, b0, len, starts)) in cases.iter().enumerate() {
            let atomics: Vec<AtomicU32> = src.iter().map(|&w| AtomicU32::new(w)).collect();
            let cb = num.bytes() as u64;
            let byte_of = |i0: u64| (b0 + i0 * cb) as usize;
            let runs: Vec<(usize, u64, usize)> = starts
                .iter()
                .enumerate()
                .map(|(j, &i0)| (j * len, i0, len))
                .collect();
            let mut together = vec![0f32; runs.len() * len];
            runs_to_f32(&atomics, &runs, byte_of, num, &mut together);
            let mut one_by_one = vec![0f32; runs.len() * len];
            for (&(_, i0, _), out) in runs.iter().zip(one_by_one.chunks_exact_mut(len)) {
                run_to_f32(&atomics, byte_of(i0), num, out);
            }
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&together), bits(&one_by_one), "case {n}");
            // And both are the elements themselves.
            for (j, &(_, i0, _)) in runs.iter().enumerate() {
                for k in 0..len {
                    let byte = byte_of(i0) + k * cb as usize;
                    let x = memory::read_bytes(&atomics, byte, cb as u32);
                    let want = if num == Num::F16 {
                        floats::f16_lut()[x as usize].to_bits()
                    } else {
                        x as u32
                    };
                    assert_eq!(
                        together[j * len + k].to_bits(),
                        want,
                        "case {n} run {j} element {k}"
                    );
                }
            }
        }
    }

    /// Arguments moved as they are written equal the columns built first: block addresses
    /// `index · mul + add` wrapping at 64 bits, blockCoord moved per component wrapping at 32
    /// bits, for any stretch of lanes of the call.
    #[test]
    fn moved_arguments_equal_built_columns() {
        let n = 7;
        let index: Vec<u64> = (0..n as u64).map(|i| i * 3 + u64::MAX / 2).collect();
        let (mul, add) = (144u64, 0xffff_0000_0000_1000u64);
        let coords: Vec<u64> = (0..2 * n as u64).map(|i| 0xffff_fff0 + i).collect();
        let shift = [0x20u32, 5];
        for (start, len) in [(0, n), (2, 3), (6, 1)] {
            let mut out = vec![0u64; len];
            SubArg::Affine {
                lanes: &index,
                mul,
                add,
            }
            .write(0, (start, n), &mut out);
            let want: Vec<u64> = index[start..start + len]
                .iter()
                .map(|&x| x.wrapping_mul(mul).wrapping_add(add))
                .collect();
            assert_eq!(out, want);
            for c in 0..2 {
                SubArg::OffsetU32 {
                    lanes: &coords,
                    add: &shift,
                }
                .write(c, (start, n), &mut out);
                let want: Vec<u64> = coords[c * n + start..c * n + start + len]
                    .iter()
                    .map(|&x| (x as u32).wrapping_add(shift[c]) as u64)
                    .collect();
                assert_eq!(out, want, "component {c} from lane {start}");
            }
        }
    }

    /// Decode results packed in tile order are the write list's placement, element for element:
    /// by [`halves_in_tile_order`] for every shape (DecodeVectorFunc's interleaved V = 4 and 2,
    /// a permutation, DecodeFunc's one result an element), and by [`pack_interleaved`] a chunk
    /// of calls at a time (20, the last chunk shorter) for exactly the interleaved shapes, which
    /// [`interleaved_halves`] recognizes; with bits above the low 16 in the result words.
    #[test]
    fn decode_results_pack_in_tile_order() {
        let mut next = coopmat_testkit::xorshift64(0x9e37_79b9_7f4a_7c15);
        let calls = 48;
        // Elements, calls, (result, element) writes, the V of an interleaved shape.
        type Shape = (usize, usize, Vec<(usize, usize)>, Option<usize>);
        let mut shapes: Vec<Shape> = Vec::new();
        for v in [4, 2, 1] {
            // Component k of call j (result k·calls + j) at element v·j + k.
            let writes = (0..calls * v).map(|ri| (ri, v * (ri % calls) + ri / calls));
            shapes.push((calls * v, calls, writes.collect(), (v > 1).then_some(v)));
        }
        // A permutation: element e from result (e · 7) mod 96.
        shapes.push((96, 96, (0..96).map(|e| ((e * 7) % 96, e)).collect(), None));
        for (elems, n, writes, interleaved) in shapes {
            let r: Vec<u64> = (0..elems).map(|_| next()).collect();
            let da = DecodeArgs {
                index: vec![0; n],
                index_range: (0, 0),
                block_coord: Vec::new(),
                coord_in_block: Vec::new(),
                dims: 0,
                runs: WriteRun::from_writes(&writes),
            };
            let placed = |words: &[u32], how: &str| {
                assert_eq!(words.len(), elems / 2);
                for &(ri, e) in &writes {
                    let got = (words[e / 2] >> (16 * (e % 2))) & 0xffff;
                    assert_eq!(
                        got as u64,
                        r[ri] & 0xffff,
                        "{how}: {elems} elements, element {e}"
                    );
                }
            };
            let mut words = vec![0xdead_beef; 3];
            halves_in_tile_order(&da, &r, elems / 2, &mut words);
            placed(&words, "write list");
            let v = interleaved_halves(&da, elems / 2);
            assert_eq!(v, interleaved, "{elems} elements");
            if let Some(v) = v {
                let mut words = vec![0xdead_beef; elems / 2];
                for first in (0..n).step_by(20) {
                    let end = (first + 20).min(n);
                    let cols: Vec<&[u64]> =
                        (0..v).map(|k| &r[k * n + first..k * n + end]).collect();
                    pack_interleaved(&cols, first, &mut words);
                }
                placed(&words, "by chunks");
            }
        }
    }

    /// The cached sources of the key of [`source_key`], shifted, are the layout's own sources,
    /// element for element, for loads and stores over random 1- to 3-dimensional layouts
    /// (offsets inside, over the edge and past the end, block sizes, strides, every clamp
    /// mode, with and without a transposing, clipped view).
    #[test]
    fn shifted_key_sources_are_the_layouts_own() {
        let mut rng = coopmat_testkit::xorshift64(0x2545_f491_4f6c_dd1d);
        let mut next = |n: u32| (rng() % n as u64) as u32;
        let modes = [
            ClampMode::Undefined,
            ClampMode::Constant,
            ClampMode::ClampToEdge,
            ClampMode::Repeat,
            ClampMode::RepeatMirrored,
        ];
        let (mut shifted_cases, mut edge_cases) = (0, 0);
        for case in 0..3000 {
            let dims = 1 + next(3) as usize;
            let (rows, cols) = (1 + next(6), 1 + next(6));
            let mode = modes[next(5) as usize];
            let mut lay = TensorLayout::create(dims as u32, mode).unwrap();
            let bs: Vec<u32> = (0..dims).map(|_| 1 + next(3)).collect();
            lay = lay.set_block_size(&bs).unwrap();
            let dim: Vec<u32> = (0..dims).map(|_| 1 + next(12)).collect();
            lay = lay.set_dimension(&dim).unwrap();
            if next(4) == 0 {
                let strides: Vec<u32> = (0..dims).map(|_| next(40)).collect();
                lay = lay.set_stride(&strides).unwrap();
            }
            // Spans that cover the tile (the last dimensions rows and columns, the rest 1).
            let slice: Vec<u32> = (0..dims)
                .flat_map(|k| {
                    let span = match dims - 1 - k {
                        0 => cols,
                        1 => rows,
                        _ => 1,
                    };
                    [next(16), span]
                })
                .collect();
            lay = lay.slice(&slice).unwrap().set_clamp_value(next(1000));
            let view = (dims == 2 && next(2) == 0).then(|| {
                TensorView::create(2, false, &[1, 0]).unwrap().set_clip(
                    next(3),
                    1 + next(8),
                    next(3),
                    1 + next(8),
                )
            });
            let mut lcols = vec![0u64; LAYOUT_WORDS];
            layout_to(&lay, &mut lcols);
            let vcols = view.as_ref().map(|v| {
                let mut w = vec![0u64; VIEW_WORDS];
                view_to(v, &mut w);
                w
            });
            let store = next(2) == 0;
            let sources = |l: &TensorLayout| {
                if store {
                    coopmat_tensor::store_sources(l, view.as_ref(), rows, cols)
                } else {
                    coopmat_tensor::load_sources(l, view.as_ref(), rows, cols)
                }
            };
            let Ok(own) = sources(&lay) else { continue };
            let (key, shift) =
                source_key(&lay, &lcols, vcols.as_deref(), rows, cols, store).unwrap();
            let base = layout_from(&key[..LAYOUT_WORDS]).unwrap();
            let keyed = sources(&base).unwrap();
            assert_eq!(own.len(), keyed.len(), "case {case}");
            for (e, (a, b)) in own.iter().zip(&keyed).enumerate() {
                let b = match b {
                    ElementSource::Memory(te) => ElementSource::Memory(shifted(te, &shift)),
                    other => *other,
                };
                assert_eq!(
                    *a, b,
                    "case {case} element {e}: {lay:?} {view:?} store {store}"
                );
            }
            shifted_cases += (shift.0 != 0) as u32;
            edge_cases += (0..dims).any(|k| {
                lay.offset()[k] as i64 + lay.span()[k] as i64 > lay.layout_dimension()[k] as i64
            }) as u32;
        }
        // Both kinds of dimension came up often.
        assert!(
            shifted_cases > 500 && edge_cases > 500,
            "{shifted_cases} {edge_cases}"
        );
    }
}

//! Memory objects and the 64-bit address space.
//!
//! Every pointer is a 64-bit address: object index in bits 40.., byte offset below. Buffers
//! bound in [`crate::Resources`] get objects `1..` in (set, binding) order, so their
//! PhysicalStorageBuffer addresses are `(i + 1) << 40`; push constants and the engine's own
//! objects (Function, Private, Input, Workgroup variables) follow. Function, Private and
//! Input objects are per lane: the same address names each lane's own copy.
//!
//! All memory is `AtomicU32` words. Buffers are shared by the rayon workers that run
//! workgroups in parallel, so plain words would need `unsafe`; relaxed atomic loads and stores
//! compile to plain moves, sub-word stores to buffers use a compare-exchange loop so that two
//! workgroups writing neighbouring bytes of one word never lose each other's bytes.

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

/// Bit position of the object index in an address.
pub const OBJ_SHIFT: u32 = 40;
/// Object index of the first bound buffer.
pub const FIRST_BUFFER_OBJECT: u32 = 1;
/// Object index of the first memory object reachable only by device address
/// ([`crate::BoundResources::addressable`]): far above the dispatch's own objects.
pub const FIRST_ADDRESSABLE_OBJECT: u64 = 1 << 20;
/// The byte-offset bits of an address (below the object index).
pub const OFF_MASK: u64 = (1u64 << OBJ_SHIFT) - 1;
/// Largest object: offsets from here up to the next object's base are a guard band that no
/// object covers, so an offset can never run from one object into the next by accident.
pub const MAX_OBJECT_BYTES: u64 = 1 << (OBJ_SHIFT - 1);
/// The object index of [`POISON`].
const POISON_OBJECT: u64 = u64::MAX >> OBJ_SHIFT;
/// The address an offset computation gives when it leaves its object: every access through it
/// is an out-of-bounds error (or Vulkan's robust result), never an access to another object.
pub const POISON: u64 = POISON_OBJECT << OBJ_SHIFT;

/// `base` moved by `delta` bytes, or [`POISON`] when the result leaves `base`'s object (before
/// its start, or past the largest object size). Every address the engine derives from a pointer
/// and a computed offset (access chains, cooperative and tensor loads and stores) goes through
/// this, so memory isolation holds by construction. (The leaves of a load or store add their
/// member offsets, below 2^32, with plain addition: a derived address's offset is below 2^39,
/// so the sum stays inside the object's 2^40-byte window; [`POISON`] plus one stays poisoned.)
/// Integers turned into pointers (PhysicalStorageBuffer) are device addresses as the shader
/// computes them.
#[inline]
pub fn offset_address(base: u64, delta: i128) -> u64 {
    match i64::try_from(delta) {
        Ok(d) => offset_address_i64(base, d),
        Err(_) => POISON,
    }
}

/// [`offset_address`] for a 64-bit offset (the access-chain path).
#[inline(always)]
pub fn offset_address_i64(base: u64, delta: i64) -> u64 {
    // A negative sum becomes a huge unsigned offset: outside too.
    match ((base & OFF_MASK) as i64).checked_add(delta) {
        Some(off) if base >> OBJ_SHIFT != POISON_OBJECT && (off as u64) < MAX_OBJECT_BYTES => {
            (base & !OFF_MASK) | off as u64
        }
        _ => POISON,
    }
}

/// The byte offset of `addr` inside its object.
#[inline(always)]
pub fn object_offset(addr: u64) -> u64 {
    addr & OFF_MASK
}

/// The address of byte 0 of object `i`.
pub fn object_base(i: u32) -> u64 {
    (i as u64) << OBJ_SHIFT
}

/// What an object is.
#[derive(Clone, Copy, Debug)]
pub struct ObjInfo {
    /// Index into the shared (buffer) or local word vectors.
    pub idx: u32,
    /// Shared between workers (a buffer) rather than owned by the batch.
    pub shared: bool,
    /// Bytes per lane for per-lane objects, 0 for one copy.
    pub per_lane: u64,
    /// Usable bytes (per lane for per-lane objects).
    pub size: u64,
    /// Stores allowed.
    pub writable: bool,
}

/// The last object [`Mem::resolve_cached`] looked up.
#[derive(Clone, Copy, Debug)]
pub struct ResolveCache {
    oi: u64,
    size: u64,
    per_lane: u64,
    shared: bool,
    idx: u32,
}

impl Default for ResolveCache {
    fn default() -> Self {
        ResolveCache {
            oi: u64::MAX,
            size: 0,
            per_lane: 0,
            shared: false,
            idx: 0,
        }
    }
}

/// A memory error: the address and what was wrong.
#[derive(Clone, Debug)]
pub struct MemErr {
    /// The faulting address.
    pub addr: u64,
    /// Bytes accessed.
    pub bytes: u64,
    /// Why.
    pub why: &'static str,
    /// The error kind it becomes.
    pub kind: crate::ErrorKind,
}

impl std::fmt::Display for MemErr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.addr >> OBJ_SHIFT == POISON_OBJECT {
            return write!(f, "{} ({} bytes)", self.why, self.bytes);
        }
        write!(
            f,
            "{} ({} bytes at address {:#x}: object {}, offset {})",
            self.why,
            self.bytes,
            self.addr,
            self.addr >> OBJ_SHIFT,
            self.addr & OFF_MASK
        )
    }
}

/// The memory a batch sees.
pub struct Mem<'a> {
    /// Objects by index (index 0 is the null object).
    pub objs: Vec<ObjInfo>,
    /// Objects reachable by device address, from index [`FIRST_ADDRESSABLE_OBJECT`] on.
    pub addressable: Vec<ObjInfo>,
    /// Buffer words (shared by all workers).
    pub shared: Vec<&'a [AtomicU32]>,
    /// Batch-owned words.
    pub local: Vec<Vec<AtomicU32>>,
}

impl<'a> Mem<'a> {
    /// The object with index `oi` (None for the null object and indices nothing has).
    #[inline(always)]
    pub fn obj(&self, oi: u64) -> Option<&ObjInfo> {
        if (oi as usize) < self.objs.len() {
            (oi != 0).then(|| &self.objs[oi as usize])
        } else {
            self.addressable
                .get(oi.wrapping_sub(FIRST_ADDRESSABLE_OBJECT) as usize)
        }
    }

    /// Resolves `bytes` bytes at `addr` for `lane`: (shared?, word vector index, byte offset).
    #[inline]
    pub fn resolve(
        &self,
        addr: u64,
        lane: usize,
        bytes: u64,
        write: bool,
    ) -> Result<(bool, u32, usize), MemErr> {
        let oi = (addr >> OBJ_SHIFT) as usize;
        let off = addr & OFF_MASK;
        let bad = |kind, why| MemErr {
            addr,
            bytes,
            why,
            kind,
        };
        let Some(o) = self.obj(oi as u64) else {
            // No object has the poison index (there are fewer than 2^24): told apart only here,
            // off the hot path.
            if addr >> OBJ_SHIFT == POISON_OBJECT {
                return Err(bad(
                    crate::ErrorKind::OutOfBounds,
                    "out-of-bounds access (the address was computed past the bounds of its object)",
                ));
            }
            return Err(bad(
                crate::ErrorKind::NullPointer,
                "access through an invalid or null pointer",
            ));
        };
        if off.checked_add(bytes).is_none_or(|e| e > o.size) {
            return Err(bad(crate::ErrorKind::OutOfBounds, "out-of-bounds access"));
        }
        if write && !o.writable {
            return Err(bad(
                crate::ErrorKind::ReadOnlyWrite,
                "store to read-only memory",
            ));
        }
        Ok((o.shared, o.idx, (o.per_lane * lane as u64 + off) as usize))
    }

    /// Like [`Mem::resolve`] but remembering the last object (most lanes of an op touch the
    /// same one); None on any failure, for the caller to redo with `resolve` and its error.
    #[inline(always)]
    pub fn resolve_cached(
        &self,
        c: &mut ResolveCache,
        addr: u64,
        lane: usize,
        bytes: u64,
        write: bool,
    ) -> Option<(bool, u32, usize)> {
        let oi = addr >> OBJ_SHIFT;
        if oi != c.oi {
            let o = self.obj(oi)?;
            if write && !o.writable {
                return None;
            }
            *c = ResolveCache {
                oi,
                size: o.size,
                per_lane: o.per_lane,
                shared: o.shared,
                idx: o.idx,
            };
        }
        let off = addr & OFF_MASK;
        if off + bytes > c.size {
            return None;
        }
        Some((c.shared, c.idx, (c.per_lane * lane as u64 + off) as usize))
    }

    /// Bytes of the object from `addr` to its end (per lane for per-lane objects), or None for
    /// an invalid pointer.
    pub fn bytes_from(&self, addr: u64) -> Option<u64> {
        let oi = (addr >> OBJ_SHIFT) as usize;
        let o = self.obj(oi as u64)?;
        Some(o.size.saturating_sub(addr & OFF_MASK))
    }

    /// The words of a resolved object.
    #[inline(always)]
    pub fn words(&self, shared: bool, idx: u32) -> &[AtomicU32] {
        if shared {
            self.shared[idx as usize]
        } else {
            &self.local[idx as usize]
        }
    }

    /// The words of object (`shared`, `idx`) and, mutably, those of local object `local`; None
    /// when they are the same object.
    pub fn words_and_local(
        &mut self,
        shared: bool,
        idx: u32,
        local: u32,
    ) -> Option<(&[AtomicU32], &mut [AtomicU32])> {
        let (i, l) = (idx as usize, local as usize);
        if shared {
            return Some((self.shared[i], &mut self.local[l]));
        }
        match i.cmp(&l) {
            std::cmp::Ordering::Less => {
                let (lo, hi) = self.local.split_at_mut(l);
                Some((&lo[i], &mut hi[0]))
            }
            std::cmp::Ordering::Greater => {
                let (lo, hi) = self.local.split_at_mut(i);
                Some((&hi[0], &mut lo[l]))
            }
            std::cmp::Ordering::Equal => None,
        }
    }

    /// Reads `n` (1, 2, 4 or 8) bytes, little-endian, zero-extended.
    #[inline]
    pub fn read(&self, addr: u64, lane: usize, n: u32) -> Result<u64, MemErr> {
        let (s, i, b) = self.resolve(addr, lane, n as u64, false)?;
        Ok(read_bytes(self.words(s, i), b, n))
    }

    /// Writes the low `n` bytes of `v`.
    #[inline]
    pub fn write(&self, addr: u64, lane: usize, n: u32, v: u64) -> Result<(), MemErr> {
        let (s, i, b) = self.resolve(addr, lane, n as u64, true)?;
        write_bytes(self.words(s, i), b, n, v, s);
        Ok(())
    }
}

/// Reads `n` bytes at byte offset `b` of a word vector.
#[inline(always)]
pub fn read_bytes(w: &[AtomicU32], b: usize, n: u32) -> u64 {
    let sh = (b % 4) * 8;
    match n {
        4 if sh == 0 => w[b / 4].load(Relaxed) as u64,
        2 if sh <= 16 => ((w[b / 4].load(Relaxed) >> sh) & 0xffff) as u64,
        1 => ((w[b / 4].load(Relaxed) >> sh) & 0xff) as u64,
        8 if sh == 0 => w[b / 4].load(Relaxed) as u64 | ((w[b / 4 + 1].load(Relaxed) as u64) << 32),
        _ => read_bytes_slow(w, b, n),
    }
}

/// Unaligned or straddling reads, byte by byte (kept out of line so the fast path inlines).
#[inline(never)]
fn read_bytes_slow(w: &[AtomicU32], b: usize, n: u32) -> u64 {
    let mut v = 0u64;
    for k in 0..n as usize {
        let x = b + k;
        v |= (((w[x / 4].load(Relaxed) >> ((x % 4) * 8)) & 0xff) as u64) << (8 * k);
    }
    v
}

/// Writes the low `n` bytes of `v` at byte offset `b`; `shared` words get an atomic
/// read-modify-write for partial words.
#[inline(always)]
pub fn write_bytes(w: &[AtomicU32], b: usize, n: u32, v: u64, shared: bool) {
    let sh = (b % 4) * 8;
    match n {
        4 if sh == 0 => w[b / 4].store(v as u32, Relaxed),
        8 if sh == 0 => {
            w[b / 4].store(v as u32, Relaxed);
            w[b / 4 + 1].store((v >> 32) as u32, Relaxed);
        }
        1 | 2 if sh + 8 * n as usize <= 32 => {
            let m = (((1u64 << (8 * n)) - 1) as u32) << sh;
            let bits = ((v as u32) << sh) & m;
            let word = &w[b / 4];
            if shared {
                let mut cur = word.load(Relaxed);
                loop {
                    match word.compare_exchange_weak(cur, (cur & !m) | bits, Relaxed, Relaxed) {
                        Ok(_) => break,
                        Err(x) => cur = x,
                    }
                }
            } else {
                word.store((word.load(Relaxed) & !m) | bits, Relaxed);
            }
        }
        _ => write_bytes_slow(w, b, n, v, shared),
    }
}

/// Unaligned or straddling writes, byte by byte.
#[inline(never)]
fn write_bytes_slow(w: &[AtomicU32], b: usize, n: u32, v: u64, shared: bool) {
    for k in 0..n as usize {
        let x = b + k;
        let sh = (x % 4) * 8;
        let m = 0xffu32 << sh;
        let bits = (((v >> (8 * k)) as u32) & 0xff) << sh;
        let word = &w[x / 4];
        if shared {
            let _ = word.fetch_update(Relaxed, Relaxed, |cur| Some((cur & !m) | bits));
        } else {
            word.store((word.load(Relaxed) & !m) | bits, Relaxed);
        }
    }
}

/// Word vector of `bytes` bytes (rounded up), zeroed.
pub fn zeroed(bytes: usize) -> Vec<AtomicU32> {
    (0..bytes.div_ceil(4)).map(|_| AtomicU32::new(0)).collect()
}

/// Word vector holding a copy of `data`.
pub fn from_bytes(data: &[u8]) -> Vec<AtomicU32> {
    let mut v: Vec<AtomicU32> = data
        .chunks_exact(4)
        .map(|c| AtomicU32::new(u32::from_le_bytes([c[0], c[1], c[2], c[3]])))
        .collect();
    let rest = data.chunks_exact(4).remainder();
    if !rest.is_empty() {
        let mut b = [0u8; 4];
        b[..rest.len()].copy_from_slice(rest);
        v.push(AtomicU32::new(u32::from_le_bytes(b)));
    }
    v
}

/// Fills `v` (reusing its allocation) with a copy of `data`, the last word zero-padded.
pub fn fill_from_bytes(v: &mut Vec<AtomicU32>, data: &[u8]) {
    let n = data.len().div_ceil(4);
    v.truncate(n);
    let keep = v.len();
    let whole = data.chunks_exact(4);
    let rest = whole.remainder();
    for (x, c) in v.iter().zip(whole.clone()) {
        x.store(u32::from_le_bytes([c[0], c[1], c[2], c[3]]), Relaxed);
    }
    v.extend(
        whole
            .skip(keep)
            .map(|c| AtomicU32::new(u32::from_le_bytes([c[0], c[1], c[2], c[3]]))),
    );
    if !rest.is_empty() {
        let mut b = [0u8; 4];
        b[..rest.len()].copy_from_slice(rest);
        let w = u32::from_le_bytes(b);
        if v.len() == n {
            v[n - 1].store(w, Relaxed);
        } else {
            v.push(AtomicU32::new(w));
        }
    }
}

/// Copies words back into bytes.
pub fn to_bytes(w: &[AtomicU32], out: &mut [u8]) {
    let whole = out.len() / 4;
    let (head, tail) = out.split_at_mut(whole * 4);
    for (c, x) in head.chunks_exact_mut(4).zip(w) {
        c.copy_from_slice(&x.load(Relaxed).to_le_bytes());
    }
    if let Some(x) = w.get(whole) {
        let b = x.load(Relaxed).to_le_bytes();
        tail.copy_from_slice(&b[..tail.len()]);
    }
}

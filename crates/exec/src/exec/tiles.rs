//! Decoded tiles kept for reuse within one dispatch (DESIGN.md, "Decoded tiles reused").
//!
//! A tensor load with a decode function calls it once per element (or V-group) of its tile.
//! ggml's matmuls decode the same A tile in every workgroup of a tile row (N / BN of them):
//! when the calls' arguments are the same and so is every byte of memory the calls read, the
//! results are the same, and the first workgroup's are reused.
//!
//! What makes that sound:
//! * the function is a pure reader (`compile::reuse::pure_readers`): its results depend on its
//!   arguments and the memory it reads alone, and it writes nothing but its own variables;
//! * the key holds everything the arguments are computed from: the function, the pointer, the
//!   block size, the tile's shape and the tensor layout and view values;
//! * buffers: every buffer object a call read lies outside the memory of every buffer the
//!   module can write (`compile::reuse::written_bindings`, compared by the words' addresses, so
//!   two bindings of one buffer are caught), so no write during the dispatch can change it;
//! * Workgroup memory: the words of each Workgroup object the calls read are kept with the
//!   tile and compared with the reusing workgroup's own before reuse.
//!
//! The cache is shared by the dispatch's workers and bounded in bytes (oldest tiles go first).

use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

/// A tile's elements in tile order, as a load left them in the f32 arena.
pub(super) enum TileElements {
    /// f16 bits, two to a word (the first in the low half): the arena's values are exactly
    /// these f16 values widened (checked when the tile is kept).
    Half(Vec<u32>),
    /// The arena's values themselves.
    Float(Vec<f32>),
}

impl TileElements {
    /// The elements of `tile` (an f16 matrix's when `f16`), in the smaller form that gives
    /// them back bit for bit.
    pub fn of(tile: &[f32], f16: bool) -> Self {
        if f16 && tile.len().is_multiple_of(2) {
            let mut words = vec![0u32; tile.len() / 2];
            // An f16 matrix holds widened f16 values, which narrow back exactly; NaNs may not
            // (F16C quiets signaling ones): with one the tile is widened again, a piece at a
            // time, and kept as it is if a bit changed.
            if !crate::kernels::f32_to_f16_pairs(tile, &mut words) {
                return TileElements::Half(words);
            }
            let mut back = [0f32; 64];
            let exact = words.chunks(32).zip(tile.chunks(64)).all(|(w, t)| {
                crate::kernels::f16_words_to_f32(w, &mut back[..t.len()]);
                back.iter().zip(t).all(|(a, b)| a.to_bits() == b.to_bits())
            });
            if exact {
                return TileElements::Half(words);
            }
        }
        TileElements::Float(tile.to_vec())
    }

    /// Writes the elements into `tile` (the same length as the tile they came from).
    pub fn write_to(&self, tile: &mut [f32]) {
        match self {
            TileElements::Half(words) => crate::kernels::f16_words_to_f32(words, tile),
            TileElements::Float(v) => tile.copy_from_slice(v),
        }
    }

    /// Bytes held.
    pub fn bytes(&self) -> u64 {
        match self {
            TileElements::Half(w) => w.len() as u64 * 4,
            TileElements::Float(v) => v.len() as u64 * 4,
        }
    }
}

/// A tile a tensor load produced (decoded or read), with the Workgroup words its decode calls
/// read.
pub(super) struct KeptTile {
    /// The tile.
    pub elements: TileElements,
    /// Each Workgroup object the calls read (local index) with its words at the time (shared
    /// between the tiles of a workgroup that saw the same words).
    pub workgroup: Vec<(usize, Arc<[u32]>)>,
    /// Bytes it adds to the cache: its elements, and the Workgroup words it does not share
    /// with the tile kept before it.
    pub bytes: u64,
}

impl KeptTile {
    /// Whether `local` (the reusing batch's objects) holds the same Workgroup words.
    pub fn workgroup_matches(&self, local: &[Vec<AtomicU32>]) -> bool {
        self.workgroup
            .iter()
            .all(|(i, words)| local.get(*i).is_some_and(|now| words_equal(now, words)))
    }
}

/// Whether `now` holds exactly `kept` (a kept tile's Workgroup words against a batch's, when a
/// tile is reused and when one is kept). The differences are OR-ed over blocks of 64 words, one
/// branch a block; q4_k's 2080 words took as long with a branch a word, so the comparison is
/// bound by reading the words.
pub(super) fn words_equal(now: &[AtomicU32], kept: &[u32]) -> bool {
    now.len() == kept.len()
        && now.chunks(64).zip(kept.chunks(64)).all(|(a, b)| {
            a.iter()
                .zip(b)
                .fold(0, |diff, (x, &y)| diff | (x.load(Relaxed) ^ y))
                == 0
        })
}

#[derive(Default)]
struct Entries {
    map: FxHashMap<Vec<u64>, Arc<KeptTile>>,
    order: VecDeque<Vec<u64>>,
    bytes: u64,
}

/// The decoded tiles of one dispatch.
pub(super) struct TileCache {
    cap: u64,
    /// Address ranges of the words of every buffer the module can write.
    written: Vec<(usize, usize)>,
    entries: Mutex<Entries>,
    /// Tiles reused.
    pub hits: AtomicU64,
    /// Tiles decoded and kept.
    pub stored: AtomicU64,
    /// Per load without a decode function (by its salt, modulo the length): tiles kept and
    /// tiles reused, for [`Self::keeps_plain`].
    plain_kept: [AtomicU32; PLAIN_SLOTS],
    plain_hits: [AtomicU32; PLAIN_SLOTS],
}

/// Slots of the per-load counters of tiles read without a decode function (loads whose salts
/// share a slot share their counts: a policy, not a result).
const PLAIN_SLOTS: usize = 64;

/// Tiles a load without a decode function keeps before its reuse is judged.
const PLAIN_TRIAL: u32 = 256;

impl TileCache {
    /// A cache of at most `cap` bytes; `written` are the address ranges of writable buffers.
    pub fn new(cap: u64, written: Vec<(usize, usize)>) -> Self {
        TileCache {
            cap,
            written,
            entries: Mutex::default(),
            hits: AtomicU64::new(0),
            stored: AtomicU64::new(0),
            plain_kept: std::array::from_fn(|_| AtomicU32::new(0)),
            plain_hits: std::array::from_fn(|_| AtomicU32::new(0)),
        }
    }

    /// Whether the load `salt` (one without a decode function) still keeps and looks up its
    /// tiles: until it has kept [`PLAIN_TRIAL`] of them, then while one in eight kept is
    /// reused. Such a tile costs a gather to read again, while keeping and looking up cost
    /// about as much: flash attention's K tiles, read once each, took 60 % longer with them.
    pub fn keeps_plain(&self, salt: u32) -> bool {
        let slot = salt as usize % PLAIN_SLOTS;
        let kept = self.plain_kept[slot].load(Relaxed);
        kept < PLAIN_TRIAL || self.plain_hits[slot].load(Relaxed).saturating_mul(8) >= kept
    }

    /// Counts a tile the load `salt` kept (`hit` false) or reused.
    pub fn count_plain(&self, salt: u32, hit: bool) {
        let slot = salt as usize % PLAIN_SLOTS;
        let counter = if hit {
            &self.plain_hits[slot]
        } else {
            &self.plain_kept[slot]
        };
        counter.fetch_add(1, Relaxed);
    }

    /// Whether the words `w` lie outside every writable buffer.
    pub fn never_written(&self, w: &[AtomicU32]) -> bool {
        let r = w.as_ptr_range();
        let (lo, hi) = (r.start as usize, r.end as usize);
        self.written.iter().all(|&(a, b)| hi <= a || b <= lo)
    }

    /// The tile stored under `key`.
    pub fn get(&self, key: &[u64]) -> Option<Arc<KeptTile>> {
        let e = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        e.map.get(key).cloned()
    }

    /// Keeps `tile` under `key`, dropping the oldest tiles to stay within the bound; true when
    /// a tile was already kept under `key` (another worker produced it meanwhile).
    pub fn insert(&self, key: Vec<u64>, tile: KeptTile) -> bool {
        let size = tile.bytes + key.len() as u64 * 8;
        if size > self.cap {
            return false;
        }
        let mut e = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if e.map.contains_key(&key) {
            return true;
        }
        while e.bytes + size > self.cap {
            let Some(old) = e.order.pop_front() else {
                break;
            };
            if let Some(t) = e.map.remove(&old) {
                e.bytes -= t.bytes + old.len() as u64 * 8;
            }
        }
        e.bytes += size;
        e.order.push_back(key.clone());
        e.map.insert(key, Arc::new(tile));
        self.stored.fetch_add(1, Relaxed);
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// f16 tiles are kept as f16 bits only when widening them gives every element's bits back:
    /// a signaling NaN (which F16C narrowing quiets) keeps the tile as f32; every element of
    /// either form comes back bit for bit.
    #[test]
    fn kept_elements_come_back_bit_for_bit() {
        let plain: Vec<f32> = (0..256)
            .map(|i| half::f16::from_bits(i * 97).to_f32())
            .collect();
        let mut with_snan = plain.clone();
        with_snan[77] = f32::from_bits(0x7f80_2000); // f16 0x7c01 widened
        for (tile, half_form) in [(&plain, true), (&with_snan, false)] {
            let kept = TileElements::of(tile, true);
            assert_eq!(matches!(kept, TileElements::Half(_)), half_form);
            let mut back = vec![0f32; tile.len()];
            kept.write_to(&mut back);
            assert!(
                back.iter()
                    .zip(tile.iter())
                    .all(|(a, b)| a.to_bits() == b.to_bits())
            );
        }
        // A second insert under the same key keeps the first tile and says so.
        let cache = TileCache::new(1 << 20, Vec::new());
        let tile = || KeptTile {
            elements: TileElements::of(&plain, true),
            workgroup: Vec::new(),
            bytes: 512,
        };
        assert!(!cache.insert(vec![1, 2], tile()));
        assert!(cache.insert(vec![1, 2], tile()));
        assert_eq!(cache.stored.load(Relaxed), 1);
        // Not an f16 matrix: kept as it is.
        assert!(matches!(
            TileElements::of(&[0.1, 0.2], false),
            TileElements::Float(_)
        ));
    }
}

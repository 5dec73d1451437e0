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
//! The cache is shared by the dispatch's workers and bounded in bytes (the least recently used
//! tiles go first). A tile used as often as its load's tiles are expected to be is dropped a
//! little later, so that the cache holds the tiles still to be reused rather than all it made.

use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

use crate::program::{PLAIN_VERDICT_SLOTS, PlainVerdicts};

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

    /// Fetches every cache line of the elements (a hint: no value changes).
    pub fn prefetch(&self) {
        match self {
            TileElements::Half(w) => w.iter().step_by(16).for_each(crate::kernels::prefetch),
            TileElements::Float(v) => v.iter().step_by(16).for_each(crate::kernels::prefetch),
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
    /// The tile the same load of the same batch kept next (the K loop's next step, usually):
    /// a batch that reuses this tile fetches that one's lines ahead ([`TileElements::prefetch`]).
    pub next: std::sync::OnceLock<std::sync::Weak<KeptTile>>,
}

impl KeptTile {
    /// Fetches the lines of the tile linked as this one's next ([`KeptTile::next`]), if it is
    /// still kept: a load that reuses this tile will most likely want that one next.
    pub fn prefetch_next(&self) {
        if let Some(next) = self.next.get().and_then(std::sync::Weak::upgrade) {
            next.elements.prefetch();
        }
    }

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

/// A kept tile, when it was last kept or reused, how many workgroups used it, and the slot of
/// the load that keeps it.
struct Entry {
    tile: Arc<KeptTile>,
    last: u64,
    uses: u32,
    site: usize,
}

/// The kept tiles, least recently used first: `order` holds a (use, key) pair for every keep
/// and reuse, and a pair whose use is no longer its tile's last is skipped when evicting.
#[derive(Default)]
struct Entries {
    map: FxHashMap<Arc<[u64]>, Entry>,
    order: VecDeque<(u64, Arc<[u64]>)>,
    uses: u64,
    bytes: u64,
    /// Tiles used as often as expected, oldest first ([`Entries::count_use`]).
    done_queue: VecDeque<Arc<[u64]>>,
    /// Hashes of the keys of tiles dropped from the done queue.
    done: rustc_hash::FxHashSet<u64>,
}

impl Entries {
    /// Marks `key`'s tile used now.
    fn touch(&mut self, key: &Arc<[u64]>) {
        self.uses += 1;
        if let Some(e) = self.map.get_mut(&**key) {
            e.last = self.uses;
        }
        self.order.push_back((self.uses, key.clone()));
        // Stale pairs are dropped once they outnumber the live ones.
        if self.order.len() > 2 * self.map.len() + 64 {
            let map = &self.map;
            self.order
                .retain(|(u, k)| map.get(&**k).is_some_and(|e| e.last == *u));
        }
    }

    /// Drops the least recently used tile; false when none is left.
    fn evict_one(&mut self) -> bool {
        while let Some((u, k)) = self.order.pop_front() {
            if self.map.get(&*k).is_some_and(|e| e.last == u) {
                self.remove(&k);
                return true;
            }
        }
        false
    }

    /// Drops `key`'s tile (its pairs in `order` become stale).
    fn remove(&mut self, key: &[u64]) {
        if let Some(e) = self.map.remove(key) {
            self.bytes -= e.tile.bytes + key.len() as u64 * 8;
        }
    }

    /// One more workgroup used `key`'s tile. A tile whose load's expected count of uses
    /// (`expect`, by site) is reached joins the done queue; one used more often than expected
    /// shows the expectation wrong, and its load's tiles are kept from then on. The done queue
    /// drops its oldest tiles past [`DONE_QUEUE`] of them (their keys remembered), so a use
    /// beyond the expected count that comes soon still finds its tile.
    fn count_use(&mut self, key: &[u64], expect: &[AtomicU32; PLAIN_SLOTS]) {
        let Some(e) = self.map.get_mut(key) else {
            return;
        };
        e.uses = e.uses.saturating_add(1);
        let want = expect[e.site].load(Relaxed);
        if e.uses > want && want != u32::MAX {
            expect[e.site].store(u32::MAX, Relaxed);
            return;
        }
        if e.uses < want {
            return;
        }
        let key = self.map.get_key_value(key).map(|(k, _)| k.clone());
        self.done_queue.extend(key);
        while self.done_queue.len() > DONE_QUEUE {
            let Some(k) = self.done_queue.pop_front() else {
                break;
            };
            let done = self
                .map
                .get(&*k)
                .is_some_and(|e| e.uses >= expect[e.site].load(Relaxed));
            if done {
                self.remove(&k);
                if self.done.len() >= DONE_KEYS {
                    self.done.clear();
                }
                self.done.insert(super::fx_hash(&k[..]));
            }
        }
    }
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
    /// Per load (by its salt, modulo the length): the uses after which its tiles are done.
    expect: [AtomicU32; PLAIN_SLOTS],
    /// The pipeline's verdicts on keeping plain tiles, and this dispatch's key among them (its
    /// workgroup counts hashed); none in the unit tests.
    learned: Option<(Arc<PlainVerdicts>, u64)>,
}

impl Drop for TileCache {
    /// Leaves the verdict of every load judged in this dispatch (its trial done) to the
    /// pipeline's next dispatches with the same workgroup counts.
    fn drop(&mut self) {
        let Some((verdicts, key)) = &self.learned else {
            return;
        };
        for (slot, kept) in self.plain_kept.iter().enumerate() {
            let kept = kept.load(Relaxed);
            if kept >= PLAIN_TRIAL {
                let keep = self.plain_hits[slot].load(Relaxed).saturating_mul(8) >= kept;
                verdicts.set(slot, *key, keep);
            }
        }
    }
}

/// Slots of the per-load counters of tiles read without a decode function (loads whose salts
/// share a slot share their counts: a policy, not a result).
const PLAIN_SLOTS: usize = PLAIN_VERDICT_SLOTS;

/// Tiles a load without a decode function keeps before its reuse is judged.
const PLAIN_TRIAL: u32 = 256;

/// Tiles used as often as expected that are kept a while before they are dropped (a q4_k A
/// tile is 16 KiB, so 4 MiB of them), in case their load's tiles are used more often.
const DONE_QUEUE: usize = 256;

/// Keys of dropped tiles remembered at most (then forgotten at once: a policy, not a result).
const DONE_KEYS: usize = 1 << 20;

/// Uses after which a load's tiles are dropped, until one of them is used more often (while it
/// waits in the done queue, or made again after its drop): two, a tile made by one workgroup
/// and reused by one other, as in a matmul with two column tiles.
const FIRST_EXPECT: u32 = 2;

impl TileCache {
    /// A cache of at most `cap` bytes; `written` are the address ranges of writable buffers;
    /// `learned`: the pipeline's verdicts and this dispatch's workgroup counts.
    pub fn new(
        cap: u64,
        written: Vec<(usize, usize)>,
        learned: Option<(Arc<PlainVerdicts>, [u32; 3])>,
    ) -> Self {
        TileCache {
            learned: learned.map(|(v, groups)| (v, super::fx_hash(&groups))),
            cap,
            written,
            entries: Mutex::default(),
            hits: AtomicU64::new(0),
            stored: AtomicU64::new(0),
            plain_kept: std::array::from_fn(|_| AtomicU32::new(0)),
            plain_hits: std::array::from_fn(|_| AtomicU32::new(0)),
            expect: std::array::from_fn(|_| AtomicU32::new(FIRST_EXPECT)),
        }
    }

    /// Whether the load `salt` (one without a decode function) still keeps and looks up its
    /// tiles: until it has kept [`PLAIN_TRIAL`] of them, then while one in eight kept is
    /// reused. Such a tile costs a gather to read again, while keeping and looking up cost
    /// about as much: flash attention's K tiles, read once each, took 60 % longer with them.
    pub fn keeps_plain(&self, salt: u32) -> bool {
        let slot = salt as usize % PLAIN_SLOTS;
        if let Some(keep) =
            (self.learned.as_ref()).and_then(|(verdicts, key)| verdicts.get(slot, *key))
        {
            return keep;
        }
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

    /// The tile stored under `key`, now its most recently used.
    pub fn get(&self, key: &[u64]) -> Option<Arc<KeptTile>> {
        let mut e = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let (k, tile) = e
            .map
            .get_key_value(key)
            .map(|(k, v)| (k.clone(), v.tile.clone()))?;
        e.touch(&k);
        Some(tile)
    }

    /// A workgroup reused `key`'s tile. Tiles are dropped once their load's expected count of
    /// uses is reached, so that a dispatch's memory holds the tiles still to be reused rather
    /// than every tile it made (q4_k's 117 MB of A tiles, each reused once, were fresh pages
    /// for the whole dispatch).
    pub fn reused(&self, key: &[u64]) {
        self.hits.fetch_add(1, Relaxed);
        let mut e = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        e.count_use(key, &self.expect);
    }

    /// Keeps `tile` under `key` for the load `salt`, dropping the least recently used tiles to
    /// stay within the bound; true when a tile was already kept under `key` (another worker
    /// produced it meanwhile, which counts as a use). A key made again after its tile was
    /// dropped as done means the load's tiles are used more often than expected: from then on
    /// its tiles stay until evicted. The tile kept, if this call kept it, comes back too.
    pub fn insert(
        &self,
        key: Vec<u64>,
        tile: KeptTile,
        salt: u32,
    ) -> (bool, Option<Arc<KeptTile>>) {
        let size = tile.bytes + key.len() as u64 * 8;
        if size > self.cap {
            return (false, None);
        }
        let site = salt as usize % PLAIN_SLOTS;
        let mut e = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if e.map.contains_key(&key[..]) {
            e.count_use(&key, &self.expect);
            return (true, None);
        }
        if !e.done.is_empty() && e.done.remove(&super::fx_hash(&key[..])) {
            self.expect[site].store(u32::MAX, Relaxed);
        }
        while e.bytes + size > self.cap && e.evict_one() {}
        e.bytes += size;
        let key: Arc<[u64]> = key.into();
        let tile = Arc::new(tile);
        e.map.insert(
            key.clone(),
            Entry {
                tile: tile.clone(),
                last: 0,
                uses: 1,
                site,
            },
        );
        e.touch(&key);
        self.stored.fetch_add(1, Relaxed);
        (false, Some(tile))
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
        // A second insert under the same key keeps the first tile and says so; the first
        // hands back the tile it kept (the one `get` finds).
        let cache = TileCache::new(1 << 20, Vec::new(), None);
        let tile = || KeptTile {
            elements: TileElements::of(&plain, true),
            workgroup: Vec::new(),
            bytes: 512,
            next: Default::default(),
        };
        let (present, kept) = cache.insert(vec![1, 2], tile(), 0);
        assert!(!present);
        assert!(kept.is_some_and(|t| Arc::ptr_eq(&t, &cache.get(&[1, 2]).unwrap())));
        let (present, kept) = cache.insert(vec![1, 2], tile(), 0);
        assert!(present && kept.is_none());
        assert_eq!(cache.stored.load(Relaxed), 1);
        // Not an f16 matrix: kept as it is.
        assert!(matches!(
            TileElements::of(&[0.1, 0.2], false),
            TileElements::Float(_)
        ));
    }

    fn small_tile() -> KeptTile {
        let elements = TileElements::Float(vec![0.5; 4]);
        KeptTile {
            bytes: elements.bytes(),
            next: Default::default(),
            elements,
            workgroup: Vec::new(),
        }
    }

    /// The least recently used tile is evicted first: a tile reused after a later one was kept
    /// outlives it.
    #[test]
    fn eviction_takes_the_least_recently_used_tile() {
        // Room for two tiles of 16 bytes with their one-word keys.
        let cache = TileCache::new(2 * (16 + 8), Vec::new(), None);
        cache.insert(vec![1], small_tile(), 0);
        cache.insert(vec![2], small_tile(), 0);
        assert!(cache.get(&[1]).is_some());
        cache.insert(vec![3], small_tile(), 0);
        assert!(cache.get(&[1]).is_some(), "the tile used last was evicted");
        assert!(
            cache.get(&[2]).is_none(),
            "the least recently used tile stayed"
        );
        assert!(cache.get(&[3]).is_some());
    }

    /// A load whose tiles are each reused once (as expected at first) has them dropped once
    /// the done queue is full, and only then; a load whose tiles are reused more often keeps
    /// them all, whether the extra use comes while the tile waits in the done queue or after
    /// its drop.
    #[test]
    fn verdicts_on_plain_tiles_carry_to_dispatches_of_the_same_counts() {
        let verdicts = Arc::new(PlainVerdicts::default());
        let dispatch = |groups: [u32; 3]| {
            TileCache::new(1 << 20, Vec::new(), Some((verdicts.clone(), groups)))
        };
        // Load 5 keeps its trial's tiles and none is reused; load 6 has one hit in four.
        let first = dispatch([8, 4, 1]);
        for k in 0..PLAIN_TRIAL {
            assert!(first.keeps_plain(5) && first.keeps_plain(6));
            first.count_plain(5, false);
            first.count_plain(6, false);
            if k % 4 == 0 {
                first.count_plain(6, true);
            }
        }
        assert!(!first.keeps_plain(5) && first.keeps_plain(6));
        drop(first);
        // The same counts start from the verdicts, with no trial.
        let same = dispatch([8, 4, 1]);
        assert!(!same.keeps_plain(5) && same.keeps_plain(6));
        // A load judged in no dispatch, and other counts, are on trial again.
        assert!(same.keeps_plain(7));
        let other = dispatch([8, 2, 1]);
        assert!(other.keeps_plain(5) && other.keeps_plain(6));
        // A cache with nothing learned (and a dispatch without its trial done) changes nothing.
        drop(other);
        assert!(!dispatch([8, 4, 1]).keeps_plain(5));
    }

    #[test]
    fn tiles_used_as_expected_are_dropped_and_others_kept() {
        let keys = (DONE_QUEUE + 10) as u64;
        let cache = TileCache::new(1 << 30, Vec::new(), None);
        for k in 0..keys {
            cache.insert(vec![k], small_tile(), 1);
            assert!(cache.get(&[k]).is_some());
            cache.reused(&[k]);
        }
        let kept = (0..keys).filter(|&k| cache.get(&[k]).is_some()).count();
        assert_eq!(
            kept, DONE_QUEUE,
            "the done queue's length stays, older tiles go"
        );
        assert!(cache.get(&[0]).is_none() && cache.get(&[keys - 1]).is_some());

        // Reused twice while in the done queue: the load's tiles stay from then on.
        let busy = TileCache::new(1 << 30, Vec::new(), None);
        busy.insert(vec![7], small_tile(), 2);
        busy.reused(&[7]);
        busy.reused(&[7]);
        for k in 100..100 + keys {
            busy.insert(vec![k], small_tile(), 2);
            busy.reused(&[k]);
        }
        assert!(busy.get(&[7]).is_some() && busy.get(&[100]).is_some());

        // Made again after its drop: the load's later tiles stay.
        let again = TileCache::new(1 << 30, Vec::new(), None);
        for k in 0..keys {
            again.insert(vec![k], small_tile(), 3);
            again.reused(&[k]);
        }
        assert!(again.get(&[0]).is_none());
        again.insert(vec![0], small_tile(), 3);
        for k in 1000..1000 + keys {
            again.insert(vec![k], small_tile(), 3);
            again.reused(&[k]);
        }
        assert!(
            again.get(&[1000]).is_some(),
            "tiles dropped after the load proved reused"
        );
        // Another load (another slot) still drops its own.
        for k in 5000..5000 + keys {
            again.insert(vec![k], small_tile(), 4);
            again.reused(&[k]);
        }
        assert!(again.get(&[5000]).is_none());
    }
}

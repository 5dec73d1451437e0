//! Tensor layout and view values of one batch, interned (DESIGN.md, "Tensor layouts and views
//! as handles").
//!
//! A layout's encoding is 28 words and a view's 21 (`eval::tensor`); a register holds a handle,
//! one word per lane, that indexes this table. The values are almost always uniform: a set op
//! then checks and writes one column instead of 28, and a phi or a copy moves one. Equal
//! encodings have equal handles (the table interns them), so comparing handles compares
//! values, as the uniformity observation and the per-lane paths rely on.
//!
//! Handle 0 is the all-zero encoding, what an OpUndef, a fresh variable or zeroed memory holds:
//! the ops then report an uninitialized value exactly as they did for zero words. A handle the
//! table does not hold (a stale one from an earlier workgroup read through an uninitialized
//! variable) reads as handle 0.

use crate::eval::tensor::{LAYOUT_WORDS, VIEW_WORDS};
use rustc_hash::FxHashMap;

/// Which kind of value a handle names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Tensor {
    /// OpTypeTensorLayoutNV.
    Layout,
    /// OpTypeTensorViewNV.
    View,
}

impl Tensor {
    /// Words of an encoding.
    pub fn words(self) -> usize {
        match self {
            Tensor::Layout => LAYOUT_WORDS,
            Tensor::View => VIEW_WORDS,
        }
    }
}

/// Entries a table holds before it first looks for unreferenced ones.
const FIRST_COLLECTION: usize = 4096;

/// Set-op results a table remembers before it forgets them all.
const MEMO_ENTRIES: usize = 1024;

/// A set op on a value (`OpTensorLayoutSet*NV`, `OpTensorViewSet*NV`): which op, the handle of
/// its input and its argument words (unused ones zero, with their count).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct SetKey {
    op: u8,
    input: u64,
    args: [u64; MAX_SET_ARGS],
    nargs: u8,
}

/// Operands of a layout or view set at most (OpTensorLayoutSliceNV: two per dimension).
pub(super) const MAX_SET_ARGS: usize = 2 * coopmat_tensor::MAX_DIM;

impl SetKey {
    /// The key of op `op` on handle `input` with `args`; None with more than
    /// [`MAX_SET_ARGS`] of them.
    pub fn new(op: u8, input: u64, args: &[u64]) -> Option<Self> {
        let mut a = [0; MAX_SET_ARGS];
        a.get_mut(..args.len())?.copy_from_slice(args);
        Some(SetKey {
            op,
            input,
            args: a,
            nargs: args.len() as u8,
        })
    }
}

/// The interned encodings of one kind (layouts or views) of one batch.
pub(super) struct Interned {
    /// Words of one encoding.
    words: usize,
    /// Encoding `h` at `values[h·words..]`.
    values: Vec<u64>,
    /// Handle of each live encoding, hashed by the encoding it names in `values` (no copy of
    /// it: interning a value allocates nothing but the table's growth).
    index: hashbrown::HashTable<u32>,
    /// Handles whose entries were collected, reused first.
    free: Vec<u32>,
    /// Entry count at which [`Interned::intern`] asks for a collection.
    collect_at: usize,
    /// Results of set ops already computed on the values held: the same op on the same value
    /// with the same arguments gives the same value (flash attention rebuilds its layouts the
    /// same way every KV step). Forgotten whenever a handle may change its meaning.
    memo: FxHashMap<SetKey, u32>,
}

impl Interned {
    /// An empty table of `words`-word encodings (handle 0, the zero encoding, only).
    pub fn new(words: usize) -> Self {
        let mut t = Interned {
            words,
            values: Vec::new(),
            index: hashbrown::HashTable::new(),
            free: Vec::new(),
            collect_at: FIRST_COLLECTION,
            memo: FxHashMap::default(),
        };
        t.clear();
        t
    }

    /// Forgets every value but handle 0 (a new workgroup: no register or memory word of the
    /// batch holds an older handle that a defined read can reach).
    pub fn clear(&mut self) {
        self.memo.clear();
        // Most workgroups make no layout: nothing to forget (every workgroup clears).
        if self.len() == 1 {
            return;
        }
        self.values.clear();
        self.values.resize(self.words, 0);
        self.index.clear();
        let zero = super::fx_hash(&self.values[..]);
        self.index.insert_unique(zero, 0, |_| zero);
        self.free.clear();
        self.collect_at = FIRST_COLLECTION;
    }

    /// The encoding of handle `h` (handle 0's for one the table does not hold).
    pub fn get(&self, h: u64) -> &[u64] {
        let w = self.words;
        usize::try_from(h)
            .ok()
            .and_then(|h| h.checked_mul(w))
            .and_then(|at| self.values.get(at..at + w))
            .unwrap_or(&self.values[..w])
    }

    /// The handle set op `key` gave before, if remembered.
    pub fn recall(&self, key: &SetKey) -> Option<u64> {
        self.memo.get(key).map(|&h| h as u64)
    }

    /// Remembers that set op `key` gave handle `h` (a handle this table gave out).
    pub fn remember(&mut self, key: SetKey, h: u64) {
        let Ok(h) = u32::try_from(h) else { return };
        if self.memo.len() >= MEMO_ENTRIES {
            self.memo.clear();
        }
        self.memo.insert(key, h);
    }

    /// Entries held, free ones included.
    pub fn len(&self) -> usize {
        self.values.len() / self.words
    }

    /// Whether adding an encoding should first collect unreferenced entries.
    pub fn wants_collection(&self) -> bool {
        self.free.is_empty() && self.len() >= self.collect_at
    }

    /// The handle of `value` (`words` long), added if new.
    pub fn intern(&mut self, value: &[u64]) -> u64 {
        let (w, values) = (self.words, &self.values);
        let entry = |h: u32| &values[h as usize * w..(h as usize + 1) * w];
        let hash = super::fx_hash(value);
        if let Some(&h) = self.index.find(hash, |&h| entry(h) == value) {
            return h as u64;
        }
        let h = match self.free.pop() {
            Some(h) => {
                let at = h as usize * w;
                self.values[at..at + w].copy_from_slice(value);
                h
            }
            None => {
                self.values.extend_from_slice(value);
                (self.len() - 1) as u32
            }
        };
        let values = &self.values;
        self.index.insert_unique(hash, h, |&h| {
            super::fx_hash(&values[h as usize * w..(h as usize + 1) * w])
        });
        h as u64
    }

    /// Frees every entry but handle 0 whose handle `referenced` does not hold. Conservative:
    /// the caller marks every word that might be a handle, so nothing referenced is freed;
    /// entries are never moved, so no register needs rewriting.
    pub fn collect(&mut self, referenced: &[bool]) {
        // A freed handle may come back for another value.
        self.memo.clear();
        let w = self.words;
        let mut freed = Vec::new();
        self.index.retain(|h| {
            let keep = *h == 0 || referenced.get(*h as usize).copied().unwrap_or(true);
            if !keep {
                freed.push(*h);
            }
            keep
        });
        for &h in &freed {
            self.values[h as usize * w..(h as usize + 1) * w].fill(0);
        }
        self.free = freed;
        // Growth doubles the live entries before the next look, so collections stay rare.
        self.collect_at = (2 * (self.len() - self.free.len())).max(FIRST_COLLECTION);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Equal encodings share a handle, handle 0 is the zero encoding, unknown handles read as
    /// it, and a collection frees exactly the unreferenced entries, whose handles come back.
    #[test]
    fn interned_values_share_handles_and_collect() {
        let mut t = Interned::new(3);
        assert_eq!(t.intern(&[0, 0, 0]), 0);
        let a = t.intern(&[1, 2, 3]);
        let b = t.intern(&[4, 5, 6]);
        assert_eq!((a, b), (1, 2));
        assert_eq!(t.intern(&[1, 2, 3]), a);
        assert_eq!(t.get(b), &[4, 5, 6]);
        assert_eq!(t.get(99), &[0, 0, 0]);
        assert_eq!(t.get(u64::MAX), &[0, 0, 0]);
        // Only `b` referenced: `a` is freed and its handle reused for the next new value.
        t.collect(&[false, false, true]);
        assert_eq!(t.get(b), &[4, 5, 6]);
        assert_eq!(t.intern(&[4, 5, 6]), b);
        assert_eq!(t.intern(&[7, 8, 9]), a);
        assert_eq!(t.get(a), &[7, 8, 9]);
        assert_eq!(t.intern(&[1, 2, 3]), 3);
        t.clear();
        assert_eq!(t.len(), 1);
        assert_eq!(t.get(1), &[0, 0, 0]);
        // Clearing an empty table leaves it empty; values start again at handle 1.
        t.clear();
        assert_eq!(t.intern(&[0, 0, 0]), 0);
        assert_eq!(t.intern(&[1, 2, 3]), 1);
    }
}

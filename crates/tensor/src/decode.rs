//! SPV_NV_cooperative_matrix_decode_vector grouping.
//!
//! A V-group is V tensor elements that share `blockCoord` and every `coordInBlock` component
//! except `[LDim-1]`, whose `coordInBlock[LDim-1]` values are `base..base+V` with `base % V ==
//! 0`. DecodeVectorFunc is called with the pointer, blockCoord and coordInBlock of the group's
//! lowest element (`coordInBlock[LDim-1] = base`) and component `i` goes to the element at
//! `base + i`. It is undefined behaviour if `blockSize[LDim-1] % V != 0`.

use crate::TensorError;
use crate::address::{ElementSource, TensorElement};
use crate::layout::{Coord, TensorLayout};
use rustc_hash::FxHashMap;

/// One DecodeVectorFunc call and where its components go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeVectorGroup {
    /// The arguments: the element with `coordInBlock[LDim-1] = base` (index, blockCoord,
    /// coordInBlock). `tensor_coord` is that of the lowest element too.
    pub call: TensorElement,
    /// `members[i]`: matrix element indices (row-major, `row * cols + col`) that receive
    /// component `i`. Several matrix elements can share a tensor element (clamping, repeat,
    /// views that alias); a component may also have no matrix element (its value is dropped).
    pub members: Vec<Vec<usize>>,
}

impl DecodeVectorGroup {
    /// True when every one of the V components is used by at least one matrix element.
    pub fn is_full(&self) -> bool {
        self.members.iter().all(|m| !m.is_empty())
    }
}

/// Checks the decode-vector preconditions: V in {2, 4, 8} and `blockSize[LDim-1] % V == 0`.
pub fn check_vector_size(layout: &TensorLayout, v: u32) -> Result<(), TensorError> {
    if !matches!(v, 2 | 4 | 8) {
        return Err(TensorError::BadVectorSize(v));
    }
    let bs = layout.block_size()[layout.dims() - 1];
    if !bs.is_multiple_of(v) {
        return Err(TensorError::DecodeVectorBlockSize { block_size: bs, v });
    }
    Ok(())
}

/// The V-groups of a load in flat form: group `g` is the DecodeVectorFunc call `calls[g]`, and
/// each [`VectorMember`] sends one of its components to one matrix element. What
/// [`decode_vector_groups`] returns, without a vector per group and component (2048 groups
/// of four made a q4_k tile's grouping cost 3.3 million cycles, most of it allocation).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DecodeVectorCalls {
    /// One call per group, in order of the groups' first matrix elements.
    pub calls: Vec<TensorElement>,
    /// Every memory element of the load, in matrix-element order.
    pub members: Vec<VectorMember>,
}

/// Matrix element `element` receives component `component` of call `group`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VectorMember {
    /// Index into [`DecodeVectorCalls::calls`].
    pub group: usize,
    /// The component, below V.
    pub component: u32,
    /// Row-major matrix element index (`row * cols + col`).
    pub element: usize,
}

/// Groups the memory elements of a load (from [`crate::load_sources`]) into V-groups, in flat
/// form. Elements that are Constant, Clipped or Undefined are not part of any group.
pub fn decode_vector_calls(
    layout: &TensorLayout,
    sources: &[ElementSource],
    v: u32,
) -> Result<DecodeVectorCalls, TensorError> {
    check_vector_size(layout, v)?;
    let last = layout.dims() - 1;
    let bs = layout.block_size();
    // Key: (blockCoord, coordInBlock with the last component rounded down to a multiple of V).
    // A lookup only: the groups' order is that of their first element (the Vec below).
    let mut by_key: FxHashMap<(Coord, Coord), usize> =
        FxHashMap::with_capacity_and_hasher(sources.len() / v as usize, Default::default());
    let mut out = DecodeVectorCalls {
        calls: Vec::with_capacity(sources.len() / v as usize),
        members: Vec::with_capacity(sources.len()),
    };
    for (i, s) in sources.iter().enumerate() {
        let Some(e) = s.memory() else { continue };
        let lane = e.coord_in_block[last] % v;
        let mut base_cib = e.coord_in_block;
        base_cib[last] -= lane;
        let key = (e.block_coord, base_cib);
        let calls = &mut out.calls;
        let group = *by_key.entry(key).or_insert_with(|| {
            let mut call = *e;
            call.coord_in_block = base_cib;
            call.tensor_coord[last] = e.block_coord[last] * bs[last] + base_cib[last];
            call.clamped = false;
            calls.push(call);
            calls.len() - 1
        });
        out.members.push(VectorMember {
            group,
            component: lane,
            element: i,
        });
    }
    Ok(out)
}

/// Groups the memory elements of a load (from [`crate::load_sources`]) into V-groups.
/// Elements that are Constant, Clipped or Undefined are not part of any group. Groups are
/// returned in order of their first matrix element.
pub fn decode_vector_groups(
    layout: &TensorLayout,
    sources: &[ElementSource],
    v: u32,
) -> Result<Vec<DecodeVectorGroup>, TensorError> {
    let flat = decode_vector_calls(layout, sources, v)?;
    let mut groups: Vec<DecodeVectorGroup> = flat
        .calls
        .into_iter()
        .map(|call| DecodeVectorGroup {
            call,
            members: vec![Vec::new(); v as usize],
        })
        .collect();
    for m in flat.members {
        groups[m.group].members[m.component as usize].push(m.element);
    }
    Ok(groups)
}

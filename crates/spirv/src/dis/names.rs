//! Friendly names for ids, as spirv-dis derives them.
//!
//! Rules (observed from SPIRV-Tools' `spirv-dis` output): the first name given to an id wins;
//! `OpName` strings come first (they precede everything they name), then `BuiltIn`
//! decorations, then names derived from type and constant definitions (`%v4half`,
//! `%_ptr_Workgroup_uint`, `%uint_2`, `%_struct_12`), and every other result id is named by its
//! number. Names are sanitized (every byte outside `[A-Za-z0-9_]` becomes `_`) and made unique
//! by appending `_0`, `_1`, ... to the sanitized suggestion. A reference to an id that has no
//! name yet (a forward reference) uses its number without reserving it.

use super::number;
use crate::binary::{Instruction, ParsedBinary};
use crate::grammar::{self, OperandKind, built_in, decoration, fp_encoding, op};
use std::collections::HashMap;

/// Ids below this bound are kept in a dense table; others are hashed.
const DENSE_LIMIT: u32 = 1 << 22;

/// The name of one id.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// Not named (yet): printed as its number.
    Unset,
    /// Named by its own number (reserved, so an `OpName "12"` elsewhere becomes `12_0`).
    Numeric,
    /// Named by `arena[start..start + len]`.
    Named { start: u32, len: u32 },
}

/// The friendly name of every id of a module.
pub struct FriendlyNames {
    dense: Vec<Slot>,
    sparse: HashMap<u32, Slot>,
    arena: Vec<u8>,
    used: UsedSet,
    /// `(type id, FPEncoding)` of floating-point types that carry an encoding.
    float_encodings: Vec<(u32, u32)>,
}

impl FriendlyNames {
    /// Computes the names of a module's ids (one pass over the instructions).
    pub fn new(bin: &ParsedBinary) -> Self {
        Self::from_instructions(bin.header.bound, &bin.instructions)
    }

    /// Computes the names of the ids of `instructions` (a module's, in order; `bound` its id
    /// bound): the names `spirv-dis` prints, which the validator's and the engine's messages
    /// use too.
    pub fn from_instructions(bound: u32, instructions: &[crate::Instruction]) -> Self {
        let dense_len = bound.min(DENSE_LIMIT) as usize;
        let mut names = FriendlyNames {
            dense: vec![Slot::Unset; dense_len],
            sparse: HashMap::new(),
            arena: Vec::with_capacity(instructions.len() * 8),
            used: UsedSet::with_capacity(64),
            float_encodings: Vec::new(),
        };
        for inst in instructions {
            names.instruction(inst);
        }
        names
    }

    /// The name of `id` (without the `%`).
    pub fn name(&self, id: u32) -> String {
        let mut out = Vec::new();
        self.write(&mut out, id);
        String::from_utf8(out).unwrap_or_default()
    }

    /// Appends the name of `id` (without the `%`).
    #[inline]
    pub fn write(&self, out: &mut Vec<u8>, id: u32) {
        match self.slot(id) {
            Slot::Named { start, len } => {
                out.extend_from_slice(&self.arena[start as usize..(start + len) as usize])
            }
            _ => number::write_u64(out, id as u64),
        }
    }

    /// Length of the name of `id`.
    #[inline]
    pub fn len(&self, id: u32) -> usize {
        match self.slot(id) {
            Slot::Named { len, .. } => len as usize,
            _ => super::decimal_len(id),
        }
    }

    /// Whether no id is named (never true for a module with results).
    pub fn is_empty(&self) -> bool {
        self.arena.is_empty()
    }

    #[inline]
    fn slot(&self, id: u32) -> Slot {
        if id < DENSE_LIMIT {
            self.dense.get(id as usize).copied().unwrap_or(Slot::Unset)
        } else {
            self.sparse.get(&id).copied().unwrap_or(Slot::Unset)
        }
    }

    fn set_slot(&mut self, id: u32, slot: Slot) {
        if id < DENSE_LIMIT {
            if self.dense.len() <= id as usize {
                self.dense.resize(id as usize + 1, Slot::Unset);
            }
            self.dense[id as usize] = slot;
        } else {
            self.sparse.insert(id, slot);
        }
    }

    /// Appends the current name of `id` to the arena (for building derived names).
    fn push_name_of(&mut self, id: u32) {
        match self.slot(id) {
            Slot::Named { start, len } => {
                self.arena
                    .extend_from_within(start as usize..(start + len) as usize);
            }
            _ => number::write_u64(&mut self.arena, id as u64),
        }
    }

    fn float_encoding_of(&self, ty: u32) -> Option<u32> {
        self.float_encodings.iter().find(|e| e.0 == ty).map(|e| e.1)
    }

    /// Whether `name` is taken, counting ids named by their numbers.
    fn is_used(&self, name: &[u8]) -> bool {
        if self.used.contains(&self.arena, name) {
            return true;
        }
        match canonical_decimal(name) {
            Some(n) => self.slot(n) == Slot::Numeric,
            None => false,
        }
    }

    /// Saves the suggestion that occupies `arena[start..]` as the name of `id` (sanitized,
    /// deduplicated), unless `id` already has a name.
    fn save_from(&mut self, id: u32, start: usize) {
        if self.slot(id) != Slot::Unset {
            self.arena.truncate(start);
            return;
        }
        if self.arena.len() == start {
            self.arena.push(b'_');
        }
        for b in &mut self.arena[start..] {
            if !(b.is_ascii_alphanumeric() || *b == b'_') {
                *b = b'_';
            }
        }
        if self.is_used(&self.arena[start..]) {
            self.arena.push(b'_');
            let suffix_start = self.arena.len();
            let mut index = 0u64;
            loop {
                self.arena.truncate(suffix_start);
                number::write_u64(&mut self.arena, index);
                if !self.is_used(&self.arena[start..]) {
                    break;
                }
                index += 1;
            }
        }
        let len = self.arena.len() - start;
        self.used.insert(&self.arena, start as u32, len as u32);
        self.set_slot(
            id,
            Slot::Named {
                start: start as u32,
                len: len as u32,
            },
        );
    }

    /// Names `id` by its number unless it has a name.
    fn save_numeric(&mut self, id: u32) {
        if self.slot(id) != Slot::Unset {
            return;
        }
        if self.used.has_digit_names {
            let start = self.arena.len();
            number::write_u64(&mut self.arena, id as u64);
            if self.used.contains(&self.arena, &self.arena[start..]) {
                self.save_from(id, start);
                return;
            }
            self.arena.truncate(start);
        }
        self.set_slot(id, Slot::Numeric);
    }

    fn save_str(&mut self, id: u32, s: &[u8]) {
        let start = self.arena.len();
        self.arena.extend_from_slice(s);
        self.save_from(id, start);
    }

    fn instruction(&mut self, inst: &Instruction) {
        let w = &inst.words;
        let start = self.arena.len();
        match inst.opcode {
            op::Name if w.len() >= 2 => {
                let id = w[1];
                if self.slot(id) == Slot::Unset {
                    push_string(&mut self.arena, &w[2..]);
                    self.save_from(id, start);
                }
            }
            op::Decorate if w.len() > 3 && w[2] == decoration::BuiltIn => {
                if let Some(name) = builtin_name(w[3]) {
                    self.save_str(w[1], name.as_bytes());
                }
            }
            op::TypeVoid => self.save_str(w[1], b"void"),
            op::TypeBool => self.save_str(w[1], b"bool"),
            op::TypeInt if w.len() >= 4 => {
                let unsigned = w[3] == 0;
                let (root, sign) = match w[2] {
                    8 => ("char", ""),
                    16 => ("short", ""),
                    32 => ("int", ""),
                    64 => ("long", ""),
                    _ => ("", "i"),
                };
                self.arena
                    .extend_from_slice(if unsigned { b"u" } else { sign.as_bytes() });
                if root.is_empty() {
                    number::write_u64(&mut self.arena, w[2] as u64);
                } else {
                    self.arena.extend_from_slice(root.as_bytes());
                }
                self.save_from(w[1], start);
            }
            op::TypeFloat if w.len() >= 3 => {
                let name: &[u8] = match (w[2], w.get(3).copied()) {
                    (_, Some(fp_encoding::BFloat16KHR)) => b"bfloat16",
                    (_, Some(fp_encoding::Float8E4M3EXT)) => b"fp8e4m3",
                    (_, Some(fp_encoding::Float8E5M2EXT)) => b"fp8e5m2",
                    (_, Some(fp_encoding::Float6E2M3EXT)) => b"fp6e2m3",
                    (_, Some(fp_encoding::Float6E3M2EXT)) => b"fp6e3m2",
                    (_, Some(fp_encoding::Float4E2M1EXT)) => b"fp4e2m1",
                    (_, Some(fp_encoding::Float8UnsignedE8M0EXT)) => b"fp8e8m0",
                    (_, Some(fp_encoding::MXInt8EXT)) => b"mxint8",
                    (16, None) => b"half",
                    (32, None) => b"float",
                    (64, None) => b"double",
                    _ => b"",
                };
                if name.is_empty() {
                    self.arena.extend_from_slice(b"fp");
                    number::write_u64(&mut self.arena, w[2] as u64);
                } else {
                    self.arena.extend_from_slice(name);
                }
                self.save_from(w[1], start);
            }
            op::TypeVector if w.len() >= 4 => {
                self.arena.push(b'v');
                number::write_u64(&mut self.arena, w[3] as u64);
                self.push_name_of(w[2]);
                self.save_from(w[1], start);
            }
            op::TypeMatrix if w.len() >= 4 => {
                self.arena.extend_from_slice(b"mat");
                number::write_u64(&mut self.arena, w[3] as u64);
                self.push_name_of(w[2]);
                self.save_from(w[1], start);
            }
            op::TypeArray if w.len() >= 4 => {
                self.arena.extend_from_slice(b"_arr_");
                self.push_name_of(w[2]);
                self.arena.push(b'_');
                self.push_name_of(w[3]);
                self.save_from(w[1], start);
            }
            op::TypeRuntimeArray if w.len() >= 3 => {
                self.arena.extend_from_slice(b"_runtimearr_");
                self.push_name_of(w[2]);
                self.save_from(w[1], start);
            }
            op::TypePointer if w.len() >= 4 => {
                self.arena.extend_from_slice(b"_ptr_");
                push_storage_class(&mut self.arena, w[2]);
                self.arena.push(b'_');
                self.push_name_of(w[3]);
                self.save_from(w[1], start);
            }
            op::TypeUntypedPointerKHR if w.len() >= 3 => {
                self.arena.extend_from_slice(b"_ptr_");
                push_storage_class(&mut self.arena, w[2]);
                self.save_from(w[1], start);
            }
            op::TypePipe if w.len() >= 3 => {
                self.arena.extend_from_slice(b"Pipe");
                match grammar::enumerant(OperandKind::AccessQualifier, w[2]) {
                    Some(e) => self.arena.extend_from_slice(e.name.as_bytes()),
                    None => {
                        self.arena.extend_from_slice(b"AccessQualifier");
                        number::write_u64(&mut self.arena, w[2] as u64);
                    }
                }
                self.save_from(w[1], start);
            }
            op::TypeEvent => self.save_str(w[1], b"Event"),
            op::TypeDeviceEvent => self.save_str(w[1], b"DeviceEvent"),
            op::TypeReserveId => self.save_str(w[1], b"ReserveId"),
            op::TypeQueue => self.save_str(w[1], b"Queue"),
            op::TypePipeStorage => self.save_str(w[1], b"PipeStorage"),
            op::TypeNamedBarrier => self.save_str(w[1], b"NamedBarrier"),
            op::TypeOpaque if w.len() >= 2 => {
                self.arena.extend_from_slice(b"Opaque_");
                push_string(&mut self.arena, &w[2..]);
                self.save_from(w[1], start);
            }
            op::TypeStruct if w.len() >= 2 => {
                self.arena.extend_from_slice(b"_struct_");
                number::write_u64(&mut self.arena, w[1] as u64);
                self.save_from(w[1], start);
            }
            op::ConstantTrue if w.len() >= 3 => self.save_str(w[2], b"true"),
            op::ConstantFalse if w.len() >= 3 => self.save_str(w[2], b"false"),
            op::Constant if inst.operands.len() >= 3 => {
                let (ty, id) = (w[1], w[2]);
                self.push_name_of(ty);
                self.arena.push(b'_');
                let value_start = self.arena.len();
                let o = inst.operands[2];
                let words = &w[o.offset as usize..(o.offset + o.num_words) as usize];
                let float_encoding = self.float_encoding_of(ty);
                number::write_literal(&mut self.arena, words, o.number, float_encoding);
                for b in &mut self.arena[value_start..] {
                    if *b == b'-' {
                        *b = b'n';
                    }
                }
                self.save_from(id, start);
            }
            _ => {
                if let Some(id) = inst.result_id {
                    self.save_numeric(id);
                }
            }
        }
        if let (Some(id), op::TypeFloat, Some(&enc)) = (inst.result_id, inst.opcode, w.get(3)) {
            self.float_encodings.push((id, enc));
        }
    }
}

/// Writes a literal string's bytes (up to its nul) to `out`.
fn push_string(out: &mut Vec<u8>, words: &[u32]) {
    for w in words {
        for b in w.to_le_bytes() {
            if b == 0 {
                return;
            }
            out.push(b);
        }
    }
}

fn push_storage_class(out: &mut Vec<u8>, value: u32) {
    match grammar::enumerant(OperandKind::StorageClass, value) {
        Some(e) => out.extend_from_slice(e.name.as_bytes()),
        None => {
            out.extend_from_slice(b"StorageClass");
            number::write_u64(out, value as u64);
        }
    }
}

/// `Some(n)` when `s` is the decimal spelling of `n` (no sign, no leading zeros).
fn canonical_decimal(s: &[u8]) -> Option<u32> {
    if s.is_empty()
        || s.len() > 10
        || (s[0] == b'0' && s.len() > 1)
        || !s.iter().all(u8::is_ascii_digit)
    {
        return None;
    }
    let mut n = 0u64;
    for &b in s {
        n = n * 10 + (b - b'0') as u64;
    }
    u32::try_from(n).ok()
}

/// The names spirv-dis gives to variables decorated with these built-ins.
fn builtin_name(b: u32) -> Option<&'static str> {
    Some(match b {
        built_in::Position => "gl_Position",
        built_in::PointSize => "gl_PointSize",
        built_in::ClipDistance => "gl_ClipDistance",
        built_in::CullDistance => "gl_CullDistance",
        built_in::VertexId => "gl_VertexID",
        built_in::InstanceId => "gl_InstanceID",
        built_in::PrimitiveId => "gl_PrimitiveID",
        built_in::InvocationId => "gl_InvocationID",
        built_in::Layer => "gl_Layer",
        built_in::ViewportIndex => "gl_ViewportIndex",
        built_in::TessLevelOuter => "gl_TessLevelOuter",
        built_in::TessLevelInner => "gl_TessLevelInner",
        built_in::TessCoord => "gl_TessCoord",
        built_in::PatchVertices => "gl_PatchVertices",
        built_in::FragCoord => "gl_FragCoord",
        built_in::PointCoord => "gl_PointCoord",
        built_in::FrontFacing => "gl_FrontFacing",
        built_in::SampleId => "gl_SampleID",
        built_in::SamplePosition => "gl_SamplePosition",
        built_in::SampleMask => "gl_SampleMask",
        built_in::FragDepth => "gl_FragDepth",
        built_in::HelperInvocation => "gl_HelperInvocation",
        built_in::NumWorkgroups => "gl_NumWorkGroups",
        built_in::WorkgroupSize => "gl_WorkGroupSize",
        built_in::WorkgroupId => "gl_WorkGroupID",
        built_in::LocalInvocationId => "gl_LocalInvocationID",
        built_in::GlobalInvocationId => "gl_GlobalInvocationID",
        built_in::LocalInvocationIndex => "gl_LocalInvocationIndex",
        built_in::WorkDim => "WorkDim",
        built_in::GlobalSize => "GlobalSize",
        built_in::EnqueuedWorkgroupSize => "EnqueuedWorkgroupSize",
        built_in::GlobalOffset => "GlobalOffset",
        built_in::GlobalLinearId => "GlobalLinearId",
        built_in::SubgroupSize => "SubgroupSize",
        built_in::SubgroupMaxSize => "SubgroupMaxSize",
        built_in::NumSubgroups => "NumSubgroups",
        built_in::NumEnqueuedSubgroups => "NumEnqueuedSubgroups",
        built_in::SubgroupId => "SubgroupId",
        built_in::SubgroupLocalInvocationId => "SubgroupLocalInvocationId",
        built_in::VertexIndex => "gl_VertexIndex",
        built_in::InstanceIndex => "gl_InstanceIndex",
        built_in::BaseInstance => "gl_BaseInstance",
        built_in::SubgroupEqMask => "SubgroupEqMaskKHR",
        built_in::SubgroupGeMask => "SubgroupGeMaskKHR",
        built_in::SubgroupGtMask => "SubgroupGtMaskKHR",
        built_in::SubgroupLeMask => "SubgroupLeMaskKHR",
        built_in::SubgroupLtMask => "SubgroupLtMaskKHR",
        _ => return None,
    })
}

/// A set of names stored as spans of the arena (open addressing, no per-name allocation).
struct UsedSet {
    /// `(hash, start, len)`; `len == u32::MAX` marks an empty slot.
    table: Vec<(u64, u32, u32)>,
    count: usize,
    /// Whether some name consists of digits only (rare; lets numeric names skip the lookup).
    has_digit_names: bool,
}

const EMPTY: u32 = u32::MAX;

impl UsedSet {
    fn with_capacity(n: usize) -> Self {
        let cap = (n * 2).next_power_of_two().max(16);
        UsedSet {
            table: vec![(0, 0, EMPTY); cap],
            count: 0,
            has_digit_names: false,
        }
    }

    fn contains(&self, arena: &[u8], name: &[u8]) -> bool {
        let h = hash(name);
        let mask = self.table.len() - 1;
        let mut i = h as usize & mask;
        loop {
            let (eh, start, len) = self.table[i];
            if len == EMPTY {
                return false;
            }
            if eh == h && &arena[start as usize..(start + len) as usize] == name {
                return true;
            }
            i = (i + 1) & mask;
        }
    }

    fn insert(&mut self, arena: &[u8], start: u32, len: u32) {
        if (self.count + 1) * 2 > self.table.len() {
            let new_len = self.table.len() * 2;
            let old = std::mem::replace(&mut self.table, vec![(0, 0, EMPTY); new_len]);
            let mask = self.table.len() - 1;
            for e in old.into_iter().filter(|e| e.2 != EMPTY) {
                let mut i = e.0 as usize & mask;
                while self.table[i].2 != EMPTY {
                    i = (i + 1) & mask;
                }
                self.table[i] = e;
            }
        }
        let name = &arena[start as usize..(start + len) as usize];
        if name.iter().all(u8::is_ascii_digit) {
            self.has_digit_names = true;
        }
        let h = hash(name);
        let mask = self.table.len() - 1;
        let mut i = h as usize & mask;
        while self.table[i].2 != EMPTY {
            i = (i + 1) & mask;
        }
        self.table[i] = (h, start, len);
        self.count += 1;
    }
}

/// rustc's Fx hash of a name.
fn hash(bytes: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = rustc_hash::FxHasher::default();
    h.write(bytes);
    h.finish()
}

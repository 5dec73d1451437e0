//! The type table: SPIR-V types by id, register shapes and memory layouts.
//!
//! Register shape: a value occupies `cols` lane columns (one per scalar component, each
//! column holding one raw 64-bit value per lane) and `mats` cooperative-matrix slots (one
//! dense tile per scope instance). Memory layout: explicit decorations (Offset, ArrayStride,
//! MatrixStride, RowMajor) where present, otherwise a natural scalar layout.

use crate::error::fail;
use crate::program::{CmType, MemLeaf, Num};
use crate::{ErrorKind, ExecError, err};
use coopmat_spirv::Module;
use coopmat_spirv::grammar::{decoration, op, scope};
use std::collections::HashMap;

/// A SPIR-V type.
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    /// OpTypeVoid.
    Void,
    /// OpTypeBool.
    Bool,
    /// OpTypeInt.
    Int { w: u8, signed: bool },
    /// OpTypeFloat (with its encoding).
    Float(Num),
    /// OpTypeVector.
    Vector { elem: u32, n: u32 },
    /// OpTypeMatrix (columns of vectors).
    Matrix { col: u32, n: u32 },
    /// OpTypeArray.
    Array { elem: u32, len: u32 },
    /// OpTypeRuntimeArray.
    RuntimeArray { elem: u32 },
    /// OpTypeStruct.
    Struct(Vec<u32>),
    /// OpTypePointer.
    Pointer { sc: u32, pointee: u32 },
    /// OpTypeFunction.
    Function,
    /// OpTypeCooperativeMatrixKHR / NV.
    CoopMat(CmType),
    /// Anything else (images, samplers, …): cannot be executed.
    Other(u16),
}

/// Layout decorations a struct member carries.
#[derive(Clone, Copy, Debug, Default)]
struct MemberDec {
    offset: Option<u32>,
    matrix_stride: Option<u32>,
    row_major: bool,
}

/// All types of a module.
pub struct Types {
    map: HashMap<u32, Ty>,
    array_stride: HashMap<u32, u32>,
    members: HashMap<(u32, u32), MemberDec>,
    shapes: std::cell::RefCell<HashMap<u32, (u32, u32)>>,
    /// Subgroup size (scope size of Subgroup-scope matrices).
    pub sg_size: u32,
    /// Workgroup invocations (scope size of Workgroup-scope matrices).
    pub wg_size: u32,
}

impl Types {
    /// An empty table reading decorations from `m`.
    pub fn new(m: &Module) -> Types {
        let mut array_stride = HashMap::new();
        let mut members: HashMap<(u32, u32), MemberDec> = HashMap::new();
        for inst in &m.instructions {
            match inst.opcode {
                op::Decorate => {
                    if inst.word(1) == Some(decoration::ArrayStride)
                        && let (Some(t), Some(s)) = (inst.word(0), inst.word(2))
                    {
                        array_stride.insert(t, s);
                    }
                }
                op::MemberDecorate => {
                    if let (Some(t), Some(mem), Some(d)) =
                        (inst.word(0), inst.word(1), inst.word(2))
                    {
                        let e = members.entry((t, mem)).or_default();
                        match d {
                            decoration::Offset => e.offset = inst.word(3),
                            decoration::MatrixStride => e.matrix_stride = inst.word(3),
                            decoration::RowMajor => e.row_major = true,
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        Types {
            map: HashMap::new(),
            array_stride,
            members,
            shapes: Default::default(),
            sg_size: 32,
            wg_size: 1,
        }
    }

    /// Records type `id`.
    pub fn insert(&mut self, id: u32, t: Ty) {
        self.map.insert(id, t);
    }

    /// The type `id`.
    pub fn get(&self, id: u32) -> Result<&Ty, ExecError> {
        self.map
            .get(&id)
            .ok_or_else(|| ExecError::invalid(format!("%{id} is not a known type")))
    }

    /// Whether `id` is a type.
    pub fn contains(&self, id: u32) -> bool {
        self.map.contains_key(&id)
    }

    /// The scalar kind of a scalar type.
    pub fn num(&self, id: u32) -> Result<Num, ExecError> {
        match self.get(id)? {
            Ty::Bool => Ok(Num::Bool),
            Ty::Int { w, .. } => Ok(Num::Int(*w)),
            Ty::Float(n) => Ok(*n),
            Ty::Pointer { .. } => Ok(Num::Int(64)),
            t => err(format!("%{id} ({t:?}) is not a scalar type")),
        }
    }

    /// Whether an integer type is signed.
    pub fn signed(&self, id: u32) -> bool {
        matches!(self.map.get(&id), Some(Ty::Int { signed: true, .. }))
    }

    /// (component kind, component count) of a scalar or vector type.
    pub fn comps(&self, id: u32) -> Result<(Num, u32), ExecError> {
        match self.get(id)? {
            Ty::Vector { elem, n } => Ok((self.num(*elem)?, *n)),
            _ => Ok((self.num(id)?, 1)),
        }
    }

    /// The cooperative matrix type `id`, if it is one.
    pub fn coopmat(&self, id: u32) -> Option<CmType> {
        match self.map.get(&id) {
            Some(Ty::CoopMat(c)) => Some(*c),
            _ => None,
        }
    }

    /// Lane columns and matrix slots a value of type `id` occupies in registers.
    pub fn shape(&self, id: u32) -> Result<(u32, u32), ExecError> {
        if let Some(&s) = self.shapes.borrow().get(&id) {
            return Ok(s);
        }
        let s = match self.get(id)?.clone() {
            Ty::Void | Ty::Function | Ty::Other(_) => (0, 0),
            Ty::Bool | Ty::Int { .. } | Ty::Float(_) | Ty::Pointer { .. } => (1, 0),
            Ty::Vector { n, .. } => (n, 0),
            Ty::Matrix { col, n } => {
                let (c, _) = self.shape(col)?;
                (c * n, 0)
            }
            Ty::Array { elem, len } => {
                let (c, m) = self.shape(elem)?;
                (c.saturating_mul(len), m.saturating_mul(len))
            }
            Ty::RuntimeArray { .. } => (0, 0),
            Ty::Struct(ms) => {
                let mut s = (0u32, 0u32);
                for t in ms {
                    let (c, m) = self.shape(t)?;
                    s = (s.0 + c, s.1 + m);
                }
                s
            }
            Ty::CoopMat(_) => (0, 1),
        };
        if s.0 > 1 << 20 {
            return err(format!(
                "type %{id} has {} scalar components: too large for registers",
                s.0
            ));
        }
        self.shapes.borrow_mut().insert(id, s);
        Ok(s)
    }

    /// Member `i` of composite `id`: (column offset, matrix offset, member type).
    pub fn member(&self, id: u32, i: u32) -> Result<(u32, u32, u32), ExecError> {
        match self.get(id)?.clone() {
            Ty::Vector { elem, n } | Ty::Matrix { col: elem, n } | Ty::Array { elem, len: n } => {
                if i >= n {
                    return err(format!("index {i} out of range for %{id}"));
                }
                let (c, m) = self.shape(elem)?;
                Ok((c * i, m * i, elem))
            }
            Ty::Struct(ms) => {
                let mut off = (0, 0);
                for (k, &t) in ms.iter().enumerate() {
                    if k as u32 == i {
                        return Ok((off.0, off.1, t));
                    }
                    let (c, m) = self.shape(t)?;
                    off = (off.0 + c, off.1 + m);
                }
                err(format!("member {i} out of range for struct %{id}"))
            }
            t => err(format!("%{id} ({t:?}) is not a composite")),
        }
    }

    /// The matrix types of the matrix slots of a value of type `id`, in order.
    pub fn mat_leaves(&self, id: u32, out: &mut Vec<CmType>) -> Result<(), ExecError> {
        match self.get(id)?.clone() {
            Ty::CoopMat(c) => out.push(c),
            Ty::Array { elem, len } if self.shape(elem)?.1 > 0 => {
                for _ in 0..len {
                    self.mat_leaves(elem, out)?;
                }
            }
            Ty::Struct(ms) => {
                for t in ms {
                    self.mat_leaves(t, out)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The scope size of a matrix type (lanes sharing one tile).
    pub fn scope_size(&self, cm: &CmType) -> u32 {
        if cm.scope == scope::Workgroup {
            self.wg_size
        } else {
            self.sg_size
        }
    }

    /// Components each lane holds of a matrix (OpCooperativeMatrixLengthKHR).
    pub fn mat_length(&self, cm: &CmType) -> u32 {
        let s = self.scope_size(cm) as usize;
        cm.elems().div_ceil(s) as u32
    }

    /// The array stride of an array or runtime array type.
    pub fn stride(&self, id: u32) -> Result<u32, ExecError> {
        if let Some(&s) = self.array_stride.get(&id) {
            return Ok(s);
        }
        match self.get(id)? {
            Ty::Array { elem, .. } | Ty::RuntimeArray { elem } => {
                let (sz, al) = self.size_align(*elem)?;
                sz.checked_next_multiple_of(al.max(1)).map_or_else(
                    || {
                        fail(
                            ErrorKind::ResourceLimit,
                            format!("the stride of array %{id} is 4 GiB or more"),
                        )
                    },
                    Ok,
                )
            }
            _ => err(format!("%{id} is not an array")),
        }
    }

    /// Size and alignment in memory (runtime arrays count 0 elements). A type of 4 GiB or more
    /// is a [`ErrorKind::ResourceLimit`] error naming it (sizes are 32-bit in the engine).
    pub fn size_align(&self, id: u32) -> Result<(u32, u32), ExecError> {
        let fits = |bytes: Option<u32>| {
            bytes.map_or_else(
                || {
                    fail(
                        ErrorKind::ResourceLimit,
                        format!(
                            "type %{id} is 4 GiB or more: more than the engine's limit for one type"
                        ),
                    )
                },
                Ok,
            )
        };
        Ok(match self.get(id)?.clone() {
            Ty::Bool => (4, 4),
            Ty::Int { w, .. } => (w as u32 / 8, w as u32 / 8),
            Ty::Float(n) => (n.bytes(), n.bytes()),
            Ty::Pointer { .. } => (8, 8),
            Ty::Vector { elem, n } => {
                let (s, a) = self.size_align(elem)?;
                (fits(s.checked_mul(n))?, a)
            }
            Ty::Matrix { col, n } => {
                let (s, a) = self.size_align(col)?;
                (
                    fits(
                        s.checked_next_multiple_of(a.max(1))
                            .and_then(|s| s.checked_mul(n)),
                    )?,
                    a,
                )
            }
            Ty::Array { elem, len } => {
                let (_, a) = self.size_align(elem)?;
                (fits(self.stride(id)?.checked_mul(len))?, a)
            }
            Ty::RuntimeArray { elem } => (0, self.size_align(elem)?.1),
            Ty::Struct(ms) => {
                let mut end = 0u32;
                let mut align = 1u32;
                let mut off = 0u32;
                for (k, &t) in ms.iter().enumerate() {
                    let (s, a) = self.size_align(t)?;
                    let md = self
                        .members
                        .get(&(id, k as u32))
                        .copied()
                        .unwrap_or_default();
                    off = match md.offset {
                        Some(o) => o,
                        None => fits(off.checked_next_multiple_of(a.max(1)))?,
                    };
                    let s = match (self.get(t)?, md.matrix_stride) {
                        (Ty::Matrix { col, n }, Some(ms_)) => {
                            let (cs, _) = self.size_align(*col)?;
                            if md.row_major {
                                fits(ms_.checked_mul(cs / self.comps(*col)?.0.bytes().max(1)))?
                            } else {
                                fits(ms_.checked_mul(*n))?
                            }
                        }
                        _ => s,
                    };
                    align = align.max(a);
                    off = fits(off.checked_add(s))?;
                    end = end.max(off);
                }
                (end, align)
            }
            Ty::CoopMat(c) => {
                let b = c.num.bytes();
                (fits(self.mat_length(&c).checked_mul(b))?, b)
            }
            Ty::Void | Ty::Function | Ty::Other(_) => (0, 1),
        })
    }

    /// Byte offset of member `i` in memory, and the member type.
    pub fn mem_member(&self, id: u32, i: u32) -> Result<(u32, u32), ExecError> {
        // Offsets fit when the whole type does (size_align checks it).
        self.size_align(id)?;
        match self.get(id)?.clone() {
            Ty::Struct(ms) => {
                let mut off = 0u32;
                for (k, &t) in ms.iter().enumerate() {
                    let (s, a) = self.size_align(t)?;
                    let md = self
                        .members
                        .get(&(id, k as u32))
                        .copied()
                        .unwrap_or_default();
                    off = md.offset.unwrap_or_else(|| off.next_multiple_of(a.max(1)));
                    if k as u32 == i {
                        return Ok((off, t));
                    }
                    off += s;
                }
                err(format!("member {i} out of range for struct %{id}"))
            }
            Ty::Vector { elem, n } if i < n => Ok((self.size_align(elem)?.0 * i, elem)),
            Ty::Matrix { col, n } if i < n => {
                let (s, a) = self.size_align(col)?;
                Ok((s.next_multiple_of(a.max(1)) * i, col))
            }
            Ty::Vector { n, .. } | Ty::Matrix { n, .. } => err(format!(
                "component {i} out of range for %{id} of {n} components"
            )),
            Ty::Array { elem, .. } | Ty::RuntimeArray { elem } => Ok((self.stride(id)? * i, elem)),
            Ty::CoopMat(c) => Ok((c.num.bytes() * i, 0)),
            t => err(format!("%{id} ({t:?}) has no members")),
        }
    }

    /// The scalar and matrix leaves of a value of type `id` in memory.
    pub fn mem_leaves(&self, id: u32, out: &mut Vec<MemLeaf>) -> Result<(), ExecError> {
        self.leaves_at(id, 0, 0, 0, None, out)
    }

    /// `MatrixStride` and `RowMajor` of member `k` of struct `id`, when it has a MatrixStride.
    pub fn member_matrix_layout(&self, id: u32, k: u32) -> Option<(u32, bool)> {
        let md = self.members.get(&(id, k))?;
        Some((md.matrix_stride?, md.row_major))
    }

    /// Like [`Types::mem_leaves`] for a matrix (or array of matrices) that a pointer reached
    /// through a struct member with this `MatrixStride` / `RowMajor` (the layout travels with
    /// the access chain, SPIR-V 2.18.2).
    pub fn mem_leaves_matrix(
        &self,
        id: u32,
        stride: u32,
        row_major: bool,
        out: &mut Vec<MemLeaf>,
    ) -> Result<(), ExecError> {
        let md = MemberDec {
            offset: None,
            matrix_stride: Some(stride),
            row_major,
        };
        self.leaves_at(id, 0, 0, 0, Some(md), out)
    }

    fn leaves_at(
        &self,
        id: u32,
        off: u32,
        col: u32,
        mat: u32,
        mdec: Option<MemberDec>,
        out: &mut Vec<MemLeaf>,
    ) -> Result<(), ExecError> {
        if out.len() > 1 << 20 {
            return err("value too large to load or store at once");
        }
        match self.get(id)?.clone() {
            Ty::Bool | Ty::Int { .. } | Ty::Float(_) | Ty::Pointer { .. } => {
                let num = match self.get(id)? {
                    Ty::Bool => Num::Bool,
                    _ => self.num(id)?,
                };
                out.push(MemLeaf::Scalar { off, num, col });
            }
            Ty::Vector { elem, n } => {
                let num = self.num(elem)?;
                for i in 0..n {
                    let num2 = if num == Num::Bool { Num::Bool } else { num };
                    out.push(MemLeaf::Scalar {
                        off: off + i * num.bytes(),
                        num: num2,
                        col: col + i,
                    });
                }
            }
            Ty::Matrix { col: ct, n } => {
                let (cnum, rows) = self.comps(ct)?;
                let md = mdec.unwrap_or_default();
                let (cs, ca) = self.size_align(ct)?;
                let mstride = md.matrix_stride.unwrap_or(cs.next_multiple_of(ca));
                for c in 0..n {
                    for r in 0..rows {
                        let o = if md.row_major && md.matrix_stride.is_some() {
                            r * mstride + c * cnum.bytes()
                        } else {
                            c * mstride + r * cnum.bytes()
                        };
                        out.push(MemLeaf::Scalar {
                            off: off + o,
                            num: cnum,
                            col: col + c * rows + r,
                        });
                    }
                }
            }
            Ty::Array { elem, len } => {
                let stride = self.stride(id)?;
                let (c, m) = self.shape(elem)?;
                for i in 0..len {
                    self.leaves_at(elem, off + i * stride, col + i * c, mat + i * m, mdec, out)?;
                }
            }
            Ty::Struct(ms) => {
                let (mut c, mut m) = (col, mat);
                for (k, &t) in ms.iter().enumerate() {
                    let (o, _) = self.mem_member(id, k as u32)?;
                    let md = self.members.get(&(id, k as u32)).copied();
                    self.leaves_at(t, off + o, c, m, md, out)?;
                    let (sc, sm) = self.shape(t)?;
                    c += sc;
                    m += sm;
                }
            }
            Ty::CoopMat(cm) => out.push(MemLeaf::Mat { off, mat, cm }),
            t => {
                return err(format!(
                    "cannot load or store a value of type %{id} ({t:?})"
                ));
            }
        }
        Ok(())
    }
}

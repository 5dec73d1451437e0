//! Memory instructions: loads, stores, copies, access chains, OpArrayLength.

use super::*;

impl<'m> Cx<'m> {
    /// Compiles `opcode` if it is of this family (see [`Family`]).
    pub(super) fn memory_inst(&mut self, inst: &Inst, out: &mut Vec<Op>) -> Compiled {
        let (opcode, rt, rid, d, a) = (inst.opcode, inst.rt, inst.rid, inst.d, inst.a);
        let arg = |i: usize| operand(a, i);
        match opcode {
            op::Store | op::AccessChain | op::InBoundsAccessChain
                if self.write_only.contains(&arg(0)?) => {}
            op::Load if self.promoted_elems.contains_key(&arg(0)?) => {
                let (m, i) = self.promoted_elems[&arg(0)?];
                out.push(Op::CmExtract(CmExtractArgs {
                    d: d.col,
                    m,
                    idx: ElemIndex::Dynamic(self.col(i)?),
                }));
            }
            op::Store if self.promoted_elems.contains_key(&arg(0)?) => {
                let (m, i) = self.promoted_elems[&arg(0)?];
                out.push(Op::CmInsert(CmInsertArgs {
                    d: m,
                    m,
                    v: self.col(arg(1)?)?,
                    idx: ElemIndex::Dynamic(self.col(i)?),
                }));
            }
            op::Load if self.promoted_indexed.contains_key(&arg(0)?) => {
                out.push(Op::IndexedGet(self.indexed_access(arg(0)?, d)?));
            }
            op::Store if self.promoted_indexed.contains_key(&arg(0)?) => {
                let v = self.val(arg(1)?)?;
                out.push(Op::IndexedSet(self.indexed_access(arg(0)?, v)?));
            }
            op::Load if self.promoted_ptr(arg(0)?).is_some() => {
                let a = self.promoted_ptr(arg(0)?).unwrap_or(d);
                // A load that reads the variable's final value has its registers (no copy).
                if a != d {
                    let copy = CopyArgs { d, a };
                    out.push(if self.moving_loads.contains(&rid) {
                        Op::Move(copy)
                    } else {
                        Op::Copy(copy)
                    });
                }
            }
            op::Store if self.promoted_ptr(arg(0)?).is_some() => {
                let v = self.val(arg(1)?)?;
                let copy = CopyArgs {
                    d: self.promoted_ptr(arg(0)?).unwrap_or(v),
                    a: v,
                };
                out.push(if self.moving_stores.contains(&arg(1)?) {
                    Op::Move(copy)
                } else {
                    Op::Copy(copy)
                });
            }
            // One index into a promoted matrix variable (`Cx::matrix_loaded_and_stored`): an
            // element of the lane's share, accessed by the loads and stores through it.
            op::AccessChain | op::InBoundsAccessChain
                if self
                    .promoted
                    .get(&arg(0)?)
                    .is_some_and(|v| v.ncols == 0 && v.nmats == 1)
                    && a.len() == 2 =>
            {
                let m = self.promoted[&arg(0)?].mat;
                self.promoted_elems.insert(inst.rid, (m, arg(1)?));
                // No op reads the pointer itself.
                self.pointer_val(inst.rid);
            }
            // A constant-index chain into a promoted variable (`Cx::promotable` admitted it):
            // the registers of the part it selects. One with computed indices: each lane's
            // offset of the part, which its loads and stores read.
            op::AccessChain | op::InBoundsAccessChain if self.promoted_ptr(arg(0)?).is_some() => {
                let base = self.promoted_ptr(arg(0)?).unwrap_or(d);
                let Ty::Pointer { pointee, .. } = self.t.get(self.ty_of(arg(0)?)?)?.clone() else {
                    return bad("an access chain into a promoted variable has no pointer base");
                };
                let Some(path) = self.access_path(pointee, &a[1..]) else {
                    return bad("an access chain into a promoted variable selects no part of it");
                };
                if !path.steps.is_empty() {
                    let steps = path
                        .steps
                        .into_iter()
                        .map(|(i, stride, count)| {
                            let (num, _) = self.comps_of(i)?;
                            Ok(IndexStep {
                                idx: self.col(i)?,
                                bits: num.bits(),
                                stride,
                                count,
                            })
                        })
                        .collect::<Result<Box<[_]>, ExecError>>()?;
                    self.promoted_indexed.insert(inst.rid, base);
                    out.push(Op::IndexChain(Box::new(IndexChainArgs {
                        d: d.col,
                        off: path.off,
                        steps,
                    })));
                    return Ok(true);
                }
                let (ncols, nmats) = self.t.shape(path.part)?;
                self.promoted_parts.insert(
                    inst.rid,
                    Val {
                        col: base.col + path.off,
                        mat: base.mat,
                        ncols,
                        nmats,
                    },
                );
            }
            op::Load => {
                let mut leaves = Vec::new();
                self.leaves_through(arg(0)?, rt, &mut leaves)?;
                out.push(Op::Load(LoadArgs {
                    d,
                    ptr: self.col(arg(0)?)?,
                    leaves: leaves.into(),
                }));
            }
            op::Store => {
                let v = self.val(arg(1)?)?;
                let ty = self.ty_of(arg(1)?)?;
                let mut leaves = Vec::new();
                self.leaves_through(arg(0)?, ty, &mut leaves)?;
                out.push(Op::Store(StoreArgs {
                    ptr: self.col(arg(0)?)?,
                    v,
                    leaves: leaves.into(),
                }));
            }
            op::CopyMemory | op::CopyMemorySized => {
                let pty = self.ty_of(arg(1)?)?;
                let bytes = if opcode == op::CopyMemorySized {
                    self.const_u64(arg(2)?)? as u32
                } else {
                    match self.t.get(pty)? {
                        Ty::Pointer { pointee, .. } => self.t.size_align(*pointee)?.0,
                        _ => 0,
                    }
                };
                out.push(Op::CopyMem(CopyMemArgs {
                    dst: self.col(arg(0)?)?,
                    src: self.col(arg(1)?)?,
                    bytes,
                }));
            }
            // SPIR-V 3.49.8 OpPtrDiff: (Operand 1 - Operand 2) in elements of the pointee type
            // (its ArrayStride in explicitly laid-out memory, its size elsewhere). Both point into
            // one object, so their address difference is a byte distance.
            op::PtrDiff => {
                let pty = self.ty_of(arg(0)?)?;
                let Ty::Pointer { pointee, sc } = self.t.get(pty)?.clone() else {
                    return bad("OpPtrDiff operands must be pointers");
                };
                let stride = self.pointer_stride(pty, pointee, sc)?;
                if stride == 0 {
                    return bad("OpPtrDiff on pointers to a type of no size");
                }
                let (to, n) = self.t.comps(rt)?;
                if n != 1 || !matches!(to, Num::Int(_)) {
                    return bad("OpPtrDiff's result type must be an integer scalar");
                }
                let bytes = self.alloc_cols(1);
                out.push(Op::Bin(BinArgs {
                    op: BinOp::ISub,
                    num: Num::Int(64),
                    d: bytes,
                    a: self.col(arg(0)?)?,
                    b: self.col(arg(1)?)?,
                    n: 1,
                    bs: false,
                    a_scalar: false,
                }));
                let elems = self.alloc_cols(1);
                let k = self.konst(stride);
                out.push(Op::Bin(BinArgs {
                    op: BinOp::SDiv,
                    num: Num::Int(64),
                    d: elems,
                    a: bytes,
                    b: k,
                    n: 1,
                    bs: false,
                    a_scalar: false,
                }));
                out.push(Op::Cvt(CvtArgs {
                    kind: CvtKind::SConv,
                    from: Num::Int(64),
                    to,
                    d: d.col,
                    a: elems,
                    n: 1,
                }));
            }
            op::AccessChain
            | op::InBoundsAccessChain
            | op::PtrAccessChain
            | op::InBoundsPtrAccessChain => {
                let base = arg(0)?;
                let bty = self.ty_of(base)?;
                let Ty::Pointer { pointee, sc } = self.t.get(bty)?.clone() else {
                    return bad("access chain base is not a pointer");
                };
                let mut steps: Vec<Step> = Vec::new();
                let mut cur = pointee;
                let mut idx = &a[1..];
                let mut lay = self.ptr_lay.get(&base).copied();
                // An array of blocks is an array of descriptors: its first index picks a buffer
                // (another object), not an offset.
                let mut base_col = self.col(base)?;
                if let Some(&(set, binding)) = self.descriptor_arrays.get(&base)
                    && let Some(&first) = idx.first()
                {
                    let (num, _) = self.t.comps(self.ty_of(first)?)?;
                    let elem = match self.t.get(pointee)? {
                        Ty::Array { elem, .. } | Ty::RuntimeArray { elem } => *elem,
                        t => return bad(format!("descriptor array of {t:?}")),
                    };
                    let tmp = self.alloc_cols(1);
                    out.push(Op::Descriptor(DescriptorArgs {
                        d: tmp,
                        base: base_col,
                        idx: self.col(first)?,
                        bits: num.bits() as u8,
                        set,
                        binding,
                    }));
                    base_col = tmp;
                    cur = elem;
                    idx = &idx[1..];
                }
                let push_step = |cx: &Self,
                                 steps: &mut Vec<Step>,
                                 id: u32,
                                 stride: i64|
                 -> Result<(), ExecError> {
                    if cx.const_ids.contains(&id) {
                        let (num, _) = cx.t.comps(cx.ty_of(id)?)?;
                        let v = floats::sext(cx.const_u64(id)?, num.bits());
                        steps.push(Step::Const(v * stride));
                    } else {
                        let (num, _) = cx.t.comps(cx.ty_of(id)?)?;
                        steps.push(Step::Dyn {
                            idx: cx.col(id)?,
                            bits: num.bits() as u8,
                            stride,
                        });
                    }
                    Ok(())
                };
                if matches!(opcode, op::PtrAccessChain | op::InBoundsPtrAccessChain) {
                    let stride = self.pointer_stride(bty, pointee, sc)? as i64;
                    push_step(self, &mut steps, idx[0], stride)?;
                    idx = &idx[1..];
                }
                for &i in idx {
                    match self.t.get(cur)?.clone() {
                        Ty::Struct(_) => {
                            let k = self.const_u64(i)? as u32;
                            let (off, mt) = self.t.mem_member(cur, k)?;
                            steps.push(Step::Const(off as i64));
                            lay = self
                                .t
                                .member_matrix_layout(cur, k)
                                .map(|(stride, row_major)| glsl::PtrLay::Mat { stride, row_major });
                            cur = mt;
                        }
                        Ty::Array { elem, .. } | Ty::RuntimeArray { elem } => {
                            let s = self.t.stride(cur)? as i64;
                            push_step(self, &mut steps, i, s)?;
                            cur = elem;
                        }
                        Ty::Vector { elem, .. } => {
                            let s = match lay.take() {
                                Some(glsl::PtrLay::Col { elem_stride }) => elem_stride as i64,
                                _ => self.t.size_align(elem)?.0 as i64,
                            };
                            push_step(self, &mut steps, i, s)?;
                            cur = elem;
                        }
                        Ty::Matrix { col, .. } => {
                            let (s, al) = self.t.size_align(col)?;
                            // A column of a member with MatrixStride: column-major columns
                            // are `stride` apart; row-major ones are one component apart,
                            // their components `stride` apart.
                            let (s, next) = match lay.take() {
                                Some(glsl::PtrLay::Mat {
                                    stride,
                                    row_major: false,
                                }) => (stride as i64, None),
                                Some(glsl::PtrLay::Mat {
                                    stride,
                                    row_major: true,
                                }) => (
                                    self.t.comps(col)?.0.bytes() as i64,
                                    Some(glsl::PtrLay::Col {
                                        elem_stride: stride,
                                    }),
                                ),
                                _ => (s.next_multiple_of(al) as i64, None),
                            };
                            push_step(self, &mut steps, i, s)?;
                            lay = next;
                            cur = col;
                        }
                        Ty::CoopMat(cm) => {
                            push_step(self, &mut steps, i, cm.num.bytes() as i64)?;
                            cur = 0;
                        }
                        t => return bad(format!("cannot index into {t:?}")),
                    }
                }
                // Merge constant steps.
                let mut merged: Vec<Step> = Vec::new();
                for s in steps {
                    match (merged.last_mut(), s) {
                        (Some(Step::Const(x)), Step::Const(y)) => *x += y,
                        (_, s) => merged.push(s),
                    }
                }
                if let Some(l) = lay {
                    self.ptr_lay.insert(rid, l);
                }
                out.push(Op::AccessChain(AccessChainArgs {
                    d: d.col,
                    base: base_col,
                    steps: merged.into(),
                }));
            }
            op::ArrayLength => {
                let pty = self.ty_of(arg(0)?)?;
                let Ty::Pointer { pointee, .. } = self.t.get(pty)?.clone() else {
                    return bad("OpArrayLength of a non-pointer");
                };
                let (off, mt) = self.t.mem_member(pointee, arg(1)?)?;
                out.push(Op::ArrayLength(ArrayLengthArgs {
                    d: d.col,
                    ptr: self.col(arg(0)?)?,
                    off,
                    stride: self.t.stride(mt)?,
                }));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Bytes between the elements a pointer of type `pty` (to `pointee`, in storage class `sc`)
    /// steps over (OpPtrAccessChain's Element, OpPtrDiff's unit). SPIR-V 3.49.8: the pointer
    /// type's ArrayStride counts for objects in Uniform, StorageBuffer and PushConstant (and
    /// physical storage buffer) memory; elsewhere the implementation places elements, here at
    /// their natural size (CTS ptr_access_chain/workgroup_bad_stride).
    fn pointer_stride(&self, pty: u32, pointee: u32, sc: u32) -> Result<u64, ExecError> {
        let explicit = matches!(
            sc,
            storage_class::Uniform
                | storage_class::StorageBuffer
                | storage_class::PushConstant
                | storage_class::PhysicalStorageBuffer
        );
        match self.m.decoration_param(pty, decoration::ArrayStride) {
            Some(Some(s)) if explicit => Ok(u64::from(s)),
            _ => {
                let (s, al) = self.t.size_align(pointee)?;
                Ok(u64::from(s.next_multiple_of(al.max(1))))
            }
        }
    }
}

impl Cx<'_> {
    /// The operands of a load or store of value `v` through `chain`, an access chain with
    /// computed indices into a promoted variable (`Cx::promoted_indexed`).
    fn indexed_access(&self, chain: u32, v: Val) -> Result<IndexedArgs, ExecError> {
        let Some(&part) = self.promoted_indexed.get(&chain) else {
            return bad("a load or store through a chain that is not into a promoted variable");
        };
        if v.nmats != 0 {
            return bad(
                "a load or store through an indexed chain into a promoted variable has a matrix",
            );
        }
        Ok(IndexedArgs {
            v: v.col,
            n: v.ncols,
            base: part.col,
            len: part.ncols,
            at: self.col(chain)?,
        })
    }
}

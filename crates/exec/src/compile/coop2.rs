//! Compiling SPV_NV_tensor_addressing / SPV_NV_cooperative_matrix2 instructions into
//! [`C2`] ops (see `crate::program::C2`).

use super::*;
use grammar::tensor_addressing_operands as tao;

/// Whether `opcode` is compiled by [`Cx::coop2_inst`].
pub(super) fn handles(opcode: u16) -> bool {
    matches!(
        opcode,
        op::CreateTensorLayoutNV
            | op::TensorLayoutSetDimensionNV
            | op::TensorLayoutSetStrideNV
            | op::TensorLayoutSliceNV
            | op::TensorLayoutSetClampValueNV
            | op::TensorLayoutSetBlockSizeNV
            | op::CreateTensorViewNV
            | op::TensorViewSetDimensionNV
            | op::TensorViewSetStrideNV
            | op::TensorViewSetClipNV
            | op::CooperativeMatrixLoadTensorNV
            | op::CooperativeMatrixStoreTensorNV
            | op::CooperativeMatrixReduceNV
            | op::CooperativeMatrixPerElementOpNV
            | op::CooperativeMatrixTransposeNV
            | op::BitCastArrayQCOM
            | op::ExtractSubArrayQCOM
            | op::CompositeConstructCoopMatQCOM
            | op::CompositeExtractCoopMatQCOM
            | op::CooperativeMatrixGetCoordinateEXT
    )
}

/// Words taken by the parameters of a Memory Operands mask (Aligned, MakePointerAvailable,
/// MakePointerVisible take one each).
fn memory_operand_words(mask: u32) -> usize {
    use grammar::memory_access as ma;
    [
        ma::Aligned,
        ma::MakePointerAvailable,
        ma::MakePointerVisible,
    ]
    .iter()
    .filter(|&&b| mask & b != 0)
    .count()
}

impl Cx<'_> {
    /// OpTypeTensorLayoutNV / OpTypeTensorViewNV: values are handles, one `uint` (see
    /// `eval::tensor`).
    pub(super) fn coop2_type(&mut self, inst: &coopmat_spirv::Instruction) {
        self.t.insert(
            inst.result_id.unwrap_or(0),
            Ty::Int {
                w: 32,
                signed: false,
            },
        );
    }

    fn type_inst(&self, ty: u32) -> Option<&coopmat_spirv::Instruction> {
        self.m
            .instructions
            .iter()
            .find(|i| i.result_id == Some(ty) && i.opcode != op::Name)
    }

    /// Compiles one tensor-addressing instruction; `d` is the result register.
    pub(super) fn coop2_inst(
        &mut self,
        opcode: u16,
        rt: u32,
        d: Val,
        a: &[u32],
        out: &mut Vec<Op>,
    ) -> Result<(), ExecError> {
        let arg = |i: usize| operand(a, i);
        let cols = |cx: &Self, ids: &[u32]| -> Result<Box<[Col]>, ExecError> {
            ids.iter().map(|&i| cx.col(i)).collect()
        };
        let c2 = match opcode {
            op::CreateTensorLayoutNV => {
                let t = self
                    .type_inst(rt)
                    .ok_or_else(|| ExecError::invalid("OpCreateTensorLayoutNV: unknown type"))?;
                let (dims, mode) = (
                    self.const_u64(t.word(1).unwrap_or(0))? as u32,
                    self.const_u64(t.word(2).unwrap_or(0))? as u32,
                );
                coopmat_tensor::TensorLayout::create(
                    dims,
                    coopmat_tensor::ClampMode::from_raw(mode)
                        .map_err(|e| ExecError::invalid(e.to_string()))?,
                )
                .map_err(|e| ExecError::invalid(e.to_string()))?;
                C2::CreateLayout {
                    d: d.col,
                    dims,
                    mode,
                }
            }
            op::TensorLayoutSetDimensionNV
            | op::TensorLayoutSetStrideNV
            | op::TensorLayoutSliceNV
            | op::TensorLayoutSetClampValueNV
            | op::TensorLayoutSetBlockSizeNV => {
                let kind = match opcode {
                    op::TensorLayoutSetDimensionNV => LayoutSet::Dimension,
                    op::TensorLayoutSetStrideNV => LayoutSet::Stride,
                    op::TensorLayoutSliceNV => LayoutSet::Slice,
                    op::TensorLayoutSetClampValueNV => LayoutSet::ClampValue,
                    _ => LayoutSet::BlockSize,
                };
                C2::SetLayout {
                    kind,
                    d: d.col,
                    src: self.col(arg(0)?)?,
                    args: cols(self, &a[1..])?,
                }
            }
            op::CreateTensorViewNV => {
                let t = self
                    .type_inst(rt)
                    .ok_or_else(|| ExecError::invalid("OpCreateTensorViewNV: unknown type"))?;
                let dims = self.const_u64(t.word(1).unwrap_or(0))? as u32;
                let has_dim = self.const_u64(t.word(2).unwrap_or(0))? != 0;
                let mut perm = [0u32; coopmat_tensor::MAX_DIM];
                let mut pv = Vec::new();
                for k in 0..dims as usize {
                    let p = self.const_u64(t.word(3 + k).unwrap_or(0))? as u32;
                    pv.push(p);
                    if k < perm.len() {
                        perm[k] = p;
                    }
                }
                coopmat_tensor::TensorView::create(dims, has_dim, &pv)
                    .map_err(|e| ExecError::invalid(e.to_string()))?;
                C2::CreateView {
                    d: d.col,
                    dims,
                    has_dim,
                    perm,
                }
            }
            op::TensorViewSetDimensionNV | op::TensorViewSetStrideNV | op::TensorViewSetClipNV => {
                let kind = match opcode {
                    op::TensorViewSetDimensionNV => ViewSet::Dimension,
                    op::TensorViewSetStrideNV => ViewSet::Stride,
                    _ => ViewSet::Clip,
                };
                C2::SetView {
                    kind,
                    d: d.col,
                    src: self.col(arg(0)?)?,
                    args: cols(self, &a[1..])?,
                }
            }
            op::CooperativeMatrixLoadTensorNV | op::CooperativeMatrixStoreTensorNV => {
                use grammar::operands::CooperativeMatrixLoadTensorNV as lt;
                use grammar::operands::CooperativeMatrixStoreTensorNV as st;
                let load = opcode == op::CooperativeMatrixLoadTensorNV;
                let (ptr, obj, layout, mem) = if load {
                    (
                        lt::POINTER,
                        lt::OBJECT,
                        lt::TENSOR_LAYOUT,
                        lt::MEMORY_OPERAND,
                    )
                } else {
                    (
                        st::POINTER,
                        st::OBJECT,
                        st::TENSOR_LAYOUT,
                        st::MEMORY_OPERAND,
                    )
                };
                let (ptr, obj, layout, mem_at) = (arg(ptr)?, arg(obj)?, arg(layout)?, mem);
                let mem = arg(mem_at)?;
                // The tensor-addressing operands follow the memory operand and its parameters.
                let mut k = mem_at + 1 + memory_operand_words(mem);
                let tmask = arg(k)?;
                k += 1;
                let mut view = None;
                let mut decode = None;
                if tmask & tao::TensorView != 0 {
                    view = Some(self.col(arg(k)?)?);
                    k += 1;
                }
                if tmask & tao::DecodeFunc != 0 {
                    let func = arg(k)?;
                    k += 1;
                    let vector = if tmask & tao::DecodeVectorFunc != 0 {
                        let vf = arg(k)?;
                        Some((vf, self.decode_vector_size(vf)?))
                    } else {
                        None
                    };
                    decode = Some(Decode {
                        func,
                        vector,
                        block_bytes: self.decode_block_bytes(func)?,
                    });
                } else if tmask & tao::DecodeVectorFunc != 0 {
                    return bad("DecodeVectorFunc without DecodeFunc");
                }
                let ov = self.val(obj)?;
                if ov.nmats != 1 {
                    return bad("tensor load/store of a non-matrix object");
                }
                if load {
                    C2::Load {
                        d: d.mat,
                        ptr: self.col(ptr)?,
                        obj: ov.mat,
                        layout: self.col(layout)?,
                        view,
                        decode,
                        salt: self.descs.len() as u32,
                    }
                } else {
                    if decode.is_some() {
                        return bad("OpCooperativeMatrixStoreTensorNV with a decode function");
                    }
                    C2::Store {
                        ptr: self.col(ptr)?,
                        m: ov.mat,
                        layout: self.col(layout)?,
                        view,
                    }
                }
            }
            op::CooperativeMatrixReduceNV => {
                use grammar::operands::CooperativeMatrixReduceNV as r;
                let src = self.val(arg(r::MATRIX)?)?;
                let mode = coopmat_tensor::ops::ReduceMode::from_mask(arg(r::REDUCE)?)
                    .map_err(|e| ExecError::invalid(e.to_string()))?;
                let (sm, dm) = (self.mats[src.mat.ix()], self.mats[d.mat.ix()]);
                coopmat_tensor::ops::reduce_sources(mode, sm.rows, sm.cols, dm.rows, dm.cols)
                    .map_err(|e| ExecError::invalid(e.to_string()))?;
                C2::Reduce {
                    d: d.mat,
                    m: src.mat,
                    mode,
                    func: arg(r::COMBINE_FUNC)?,
                }
            }
            op::CooperativeMatrixPerElementOpNV => {
                use grammar::operands::CooperativeMatrixPerElementOpNV as pe;
                let src = self.val(arg(pe::MATRIX)?)?;
                let mut extras = Vec::new();
                for &x in a.get(pe::OPERANDS..).unwrap_or(&[]) {
                    let v = self.val(x)?;
                    let is_mat = self.t.coopmat(self.ty_of(x)?).is_some();
                    if is_mat && v.nmats != 1 {
                        return bad("PerElementOp: matrix operand is not a single matrix");
                    }
                    // SPV_NV_cooperative_matrix2 defines matrix operands as "the corresponding
                    // element passed"; a composite holding matrices has no such element, and the
                    // function may not run matrix (tangled) instructions on a whole matrix.
                    if !is_mat && v.nmats != 0 {
                        return bad(
                            "PerElementOp: an extra operand is a composite containing cooperative matrices; only a matrix (passed element by element) or a value without matrices can be passed to the function",
                        );
                    }
                    extras.push((v, is_mat));
                }
                C2::PerElement {
                    d: d.mat,
                    m: src.mat,
                    func: arg(pe::FUNC)?,
                    extras: extras.into(),
                }
            }
            op::CooperativeMatrixTransposeNV => C2::Transpose {
                d: d.mat,
                m: self.val(arg(0)?)?.mat,
            },
            op::BitCastArrayQCOM => {
                let (sn, sl) = self.qcom_array(self.ty_of(arg(0)?)?)?;
                let (dn, dl) = self.qcom_array(rt)?;
                C2::QcomArray(QcomArray::Bitcast {
                    d: d.col,
                    a: self.col(arg(0)?)?,
                    sbits: sn.bits(),
                    slen: sl,
                    dbits: dn.bits(),
                    dlen: dl,
                })
            }
            op::ExtractSubArrayQCOM => {
                let (_, sl) = self.qcom_array(self.ty_of(arg(0)?)?)?;
                let (_, dl) = self.qcom_array(rt)?;
                C2::QcomArray(QcomArray::SubArray {
                    d: d.col,
                    a: self.col(arg(0)?)?,
                    slen: sl,
                    dlen: dl,
                    start: self.col(arg(1)?)?,
                })
            }
            op::CompositeConstructCoopMatQCOM => {
                let cm = self.t.coopmat(rt).ok_or_else(|| {
                    ExecError::invalid("OpCompositeConstructCoopMatQCOM: result is not a matrix")
                })?;
                let (an, al) = self.qcom_array(self.ty_of(arg(0)?)?)?;
                C2::QcomMatrix(QcomMatrix::Construct {
                    d: d.mat,
                    a: self.col(arg(0)?)?,
                    alen: al,
                    packed: self.qcom_packed(&cm, an, al)?,
                })
            }
            op::CompositeExtractCoopMatQCOM => {
                let src = arg(0)?;
                let cm = self.t.coopmat(self.ty_of(src)?).ok_or_else(|| {
                    ExecError::invalid("OpCompositeExtractCoopMatQCOM: operand is not a matrix")
                })?;
                let (an, al) = self.qcom_array(rt)?;
                C2::QcomMatrix(QcomMatrix::Extract {
                    d: d.col,
                    m: self.val(src)?.mat,
                    dlen: al,
                    packed: self.qcom_packed(&cm, an, al)?,
                })
            }
            op::CooperativeMatrixConvertUseEXT => {
                // With the CooperativeMatrixTransposeEXT decoration (maintenance1): the
                // Accumulator's element (r, c) becomes element (c, r); rules checked by
                // coopmat_tensor::ops::check_convert_use.
                let src = self.val(arg(0)?)?;
                let (sm, dm) = (self.mats[src.mat.ix()], self.mats[d.mat.ix()]);
                let u = |x: u32| {
                    coopmat_tensor::ops::MatrixUse::from_raw(x).ok_or_else(|| {
                        ExecError::invalid("ConvertUseEXT of a matrix without a Use")
                    })
                };
                let from = u(sm.use_)?;
                coopmat_tensor::ops::check_convert_use(
                    coopmat_tensor::ops::ConvertRules::Ext,
                    from,
                    u(dm.use_)?,
                )
                .map_err(|e| ExecError::invalid(e.to_string()))?;
                if from != coopmat_tensor::ops::MatrixUse::Accumulator {
                    return bad("CooperativeMatrixTransposeEXT needs an Accumulator operand");
                }
                if sm.num != dm.num || sm.rows != dm.cols || sm.cols != dm.rows {
                    return bad("transposing ConvertUseEXT: component type or shape mismatch");
                }
                C2::Transpose {
                    d: d.mat,
                    m: src.mat,
                }
            }
            op::CooperativeMatrixGetCoordinateEXT => {
                let mv = self.val(arg(0)?)?;
                C2::GetCoord {
                    d: d.col,
                    m: mv.mat,
                    idx: self.col(arg(1)?)?,
                }
            }
            _ => return bad("not a tensor-addressing instruction"),
        };
        out.push(Op::Coop2(Box::new(c2)));
        Ok(())
    }

    /// Element kind and length of a one-dimensional array type (QCOM operands).
    fn qcom_array(&self, ty: u32) -> Result<(Num, u32), ExecError> {
        match self.t.get(ty)? {
            Ty::Array { elem, len } => Ok((self.t.num(*elem)?, *len)),
            _ => bad(format!("%{ty} is not a one-dimensional array type")),
        }
    }

    /// Whether a QCOM array holds the matrix's components packed in uint32 words (array of
    /// 32-bit integers, components narrower than 32 bits); checks the length
    /// (`coopmat_tensor::qcom::source_len`).
    fn qcom_packed(&self, cm: &CmType, an: Num, al: u32) -> Result<Option<u32>, ExecError> {
        let bits = cm.num.bits();
        let packed = an.bits() == 32 && !an.is_float() && bits < 32;
        let use_ = coopmat_tensor::ops::MatrixUse::from_raw(cm.use_)
            .ok_or_else(|| ExecError::invalid("QCOM conversion of an NV matrix without a Use"))?;
        let want = coopmat_tensor::qcom::source_len(use_, cm.rows, cm.cols, bits, packed)
            .map_err(|e| ExecError::invalid(e.to_string()))?;
        if want != al {
            return bad(format!(
                "QCOM conversion: array length {al}, the matrix needs {want}{}",
                if packed { " packed words" } else { "" }
            ));
        }
        Ok(packed.then_some(bits))
    }

    /// sizeof(pointee) of a decode function's first parameter.
    fn decode_block_bytes(&self, func: u32) -> Result<u64, ExecError> {
        let f = self
            .m
            .function(func)
            .ok_or_else(|| ExecError::invalid(format!("decode function %{func} not found")))?;
        let &pi = f.params.first().ok_or_else(|| {
            ExecError::invalid(format!("decode function %{func} has no parameters"))
        })?;
        let pty = self.m.instructions[pi].result_type.unwrap_or(0);
        match self.t.get(pty)? {
            Ty::Pointer { pointee, .. } => Ok(self.t.size_align(*pointee)?.0 as u64),
            _ => bad(format!(
                "decode function %{func}: first parameter is not a pointer"
            )),
        }
    }

    /// V of a DecodeVectorFunc: the component count of its vector result.
    fn decode_vector_size(&self, func: u32) -> Result<u32, ExecError> {
        let f = self
            .m
            .function(func)
            .ok_or_else(|| ExecError::invalid(format!("decode function %{func} not found")))?;
        let fi = self
            .m
            .instructions
            .iter()
            .find(|i| i.opcode == op::Function && i.result_id == Some(f.id))
            .ok_or_else(|| ExecError::invalid("decode function without OpFunction"))?;
        match self.t.get(fi.result_type.unwrap_or(0))? {
            Ty::Vector { n, .. } => Ok(*n),
            _ => bad(format!("DecodeVectorFunc %{func} does not return a vector")),
        }
    }
}

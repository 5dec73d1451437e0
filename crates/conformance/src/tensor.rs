//! The tensor-addressing family (SPV_NV_cooperative_matrix2 with SPV_NV_tensor_addressing):
//! `OpCooperativeMatrixLoadTensorNV` and `StoreTensorNV` through two-dimensional layouts with
//! every clamp mode, placed inside the tensor, past its end and before its start; views that
//! transpose (with and without view dimensions) and clip; block sizes without a decode
//! function (every element of a block reads the block's address) and with one. Expected values
//! come from `reference::tensor_element`, the spec's pseudo-code written out in the suite.

use crate::families::{float_accumulators, pack, with_function};
use crate::reference::{ClampMode, Layout2, TensorElement, View2, bytes, encode, tensor_element};
use crate::spv::{ModuleText, Use};
use crate::{Case, Comp, Compare, Target};
use std::fmt::Write;

/// What one case does.
#[derive(Clone, Copy)]
struct Setup {
    layout: Layout2,
    view: Option<View2>,
    store: bool,
    decode: bool,
    /// Components of a DecodeVectorFunc beside the DecodeFunc (0: none).
    vector: u32,
    /// Strides set by OpTensorLayoutSetStrideNV (otherwise SetDimension's packed strides).
    explicit_stride: bool,
}

impl Setup {
    /// A case without blocks or decode functions, its strides set by OpTensorLayoutSetStrideNV.
    fn explicit(layout: Layout2, view: Option<View2>, store: bool) -> Setup {
        Setup {
            layout,
            view,
            store,
            decode: false,
            vector: 0,
            explicit_stride: true,
        }
    }
}

/// The value the Constant clamp mode returns: -7.0, as a raw 32-bit pattern.
const CLAMP_VALUE: f64 = -7.0;
/// Object's elements, which clipped elements of a load keep.
const FILL: f64 = -9.5;

/// A tensor input value: distinct small multiples of 1/4, exact in float16.
fn tensor_value(i: usize) -> f64 {
    ((i * 37) % 199) as f64 * 0.25 - 24.0
}

/// Every case of the family for the target's float accumulator shapes.
pub fn tensor(target: &Target) -> Vec<Case> {
    let sg = target.subgroup_size;
    let mut out = Vec::new();
    for (t, rows, cols) in float_accumulators(target) {
        // The clip region leaves 5 rows and 3 columns out.
        if rows < 8 || cols < 8 {
            continue;
        }
        let big = rows.max(cols);
        let dim = [big + 5, big + 6];
        let stride = [dim[1] + 3, 1];
        let plain = |mode: ClampMode, offset: [i32; 2]| Layout2 {
            dim,
            stride,
            offset,
            span: [rows, cols],
            block: [1, 1],
            mode,
        };
        let placements = [
            ("inside", [2, 3]),
            (
                "past-end",
                [(dim[0] - rows / 2) as i32, (dim[1] - cols / 2) as i32],
            ),
            ("before-start", [-3, -5]),
        ];
        let mut setups: Vec<(String, Setup)> = Vec::new();
        for store in [false, true] {
            let access = if store { "store" } else { "load" };
            for mode in ClampMode::ALL {
                for (place, offset) in placements {
                    if mode == ClampMode::Undefined && place != "inside" {
                        continue;
                    }
                    setups.push((
                        format!("{access}/{}/{place}", mode.name()),
                        Setup::explicit(plain(mode, offset), None, store),
                    ));
                }
            }
        }
        let no_clip = [0, u32::MAX, 0, u32::MAX];
        let clip = [2, rows - 5, 1, cols - 3];
        // A transposed load: the matrix's (r, c) is the tensor's (c, r) in a cols x rows span.
        let mut transposed = plain(ClampMode::Undefined, [1, 2]);
        transposed.span = [cols, rows];
        setups.push((
            "load/view-transpose".into(),
            Setup::explicit(
                transposed,
                Some(View2 {
                    dims_strides: None,
                    perm: [1, 0],
                    clip: no_clip,
                }),
                false,
            ),
        ));
        setups.push((
            "load/view-dimensions-transpose".into(),
            Setup::explicit(
                transposed,
                Some(View2 {
                    dims_strides: Some(([cols, rows], [rows, 1])),
                    perm: [1, 0],
                    clip: no_clip,
                }),
                false,
            ),
        ));
        for store in [false, true] {
            setups.push((
                format!("{}/view-clip", if store { "store" } else { "load" }),
                Setup::explicit(
                    plain(ClampMode::Undefined, [2, 3]),
                    Some(View2 {
                        dims_strides: None,
                        perm: [0, 1],
                        clip,
                    }),
                    store,
                ),
            ));
        }
        // Blocks: SetDimension's strides count blocks, stride[0] = ceil(dim[1] / block[1]).
        // Decode vectors of 2 and 4 components beside the DecodeFunc (blockSize[1] = 4 is a
        // multiple of both: VUID-RuntimeSpirv-OpCooperativeMatrixLoadTensorNV-12429).
        // The explicit-stride variants set the same strides with OpTensorLayoutSetStrideNV: they
        // tell a device that computes SetDimension's strides differently (NVIDIA 580 divides
        // rounding down; CONFORMANCE.md) from one that addresses blocks differently.
        for (name, block, decode, vector, explicit_stride) in [
            ("load/block-2x4", [2, 4], false, 0, false),
            ("load/block-2x4/explicit-stride", [2, 4], false, 0, true),
            ("load/decode-1x4", [1, 4], true, 0, false),
            ("load/decode-1x4/explicit-stride", [1, 4], true, 0, true),
            ("load/decode-vector2-1x4", [1, 4], true, 2, false),
            ("load/decode-vector4-1x4", [1, 4], true, 4, false),
        ] {
            let mut l = plain(ClampMode::Undefined, [2, 3]);
            l.block = block;
            l.stride = [dim[1].div_ceil(block[1]), 1];
            setups.push((
                name.into(),
                Setup {
                    layout: l,
                    view: None,
                    store: false,
                    decode,
                    vector,
                    explicit_stride,
                },
            ));
        }
        for (name, s) in setups {
            if let Some(c) = case(sg, t, rows, cols, &name, &s) {
                out.push(c);
            }
        }
    }
    out
}

/// One case, or None when an element would be undefined (a generator mistake).
fn case(sg: u32, t: Comp, rows: u32, cols: u32, name: &str, s: &Setup) -> Option<Case> {
    let l = &s.layout;
    let tensor_len = (l.dim[0] * (l.dim[1] + 3)) as usize;
    let matrix_len = (rows * cols) as usize;
    let clamp_bits = encode(t, CLAMP_VALUE);
    // Expected output, and the inputs.
    let (inputs, expected) = if s.store {
        let values: Vec<f64> = (0..matrix_len).map(|i| tensor_value(i * 3 + 1)).collect();
        let mut expected = vec![0u64; tensor_len];
        for r in 0..rows {
            for c in 0..cols {
                match tensor_element(l, s.view.as_ref(), r, c, cols, true) {
                    TensorElement::At { index, .. } => {
                        let slot = expected.get_mut(index as usize)?;
                        *slot = encode(t, values[(r * cols + c) as usize]);
                    }
                    TensorElement::Discarded | TensorElement::Clipped => {}
                    TensorElement::ClampValue | TensorElement::Undefined => return None,
                }
            }
        }
        (pack(t, &values), expected)
    } else {
        let data: Vec<f64> = (0..tensor_len).map(tensor_value).collect();
        let mut expected = Vec::with_capacity(matrix_len);
        for r in 0..rows {
            for c in 0..cols {
                let v = match tensor_element(l, s.view.as_ref(), r, c, cols, false) {
                    TensorElement::At {
                        index,
                        block,
                        in_block,
                    } => {
                        if s.decode {
                            let at = index as usize * 4 + in_block[1] as usize;
                            encode(t, data.get(at)? + f64::from(block[0]) * 0.5)
                        } else {
                            encode(t, *data.get(index as usize)?)
                        }
                    }
                    TensorElement::ClampValue => clamp_bits,
                    TensorElement::Clipped => encode(t, FILL),
                    TensorElement::Discarded | TensorElement::Undefined => return None,
                };
                expected.push(v);
            }
        }
        (pack(t, &data), expected)
    };

    let mut m = ModuleText::new(sg);
    m.cap("CooperativeMatrixTensorAddressingNV");
    m.cap("TensorAddressingNV");
    m.ext("SPV_NV_cooperative_matrix2");
    m.ext("SPV_NV_tensor_addressing");
    if l.block != [1, 1] || s.decode {
        m.cap("CooperativeMatrixBlockLoadsNV");
    }
    let ty = m.comp(t);
    let (inb, pin) = m.buffer(0, t);
    let (outb, pout) = m.buffer(1, t);
    let mt = m.mat(t, rows, cols, Use::Acc);
    let (u0, two, ccols) = (m.u32(0), m.u32(2), m.u32(cols));
    let mode = m.u32(l.mode.value());
    let tl = format!("%tl{}", l.mode.value());
    m.raw_decl(&tl, &format!("{tl} = OpTypeTensorLayoutNV {two} {mode}"));
    let c = |m: &mut ModuleText, v: u32| m.u32(v);
    let mut body = String::new();
    writeln!(body, "%l0 = OpCreateTensorLayoutNV {tl}").unwrap();
    let (mut layout, mut steps) = ("%l0".to_string(), 0);
    let mut step = |body: &mut String, text: String| {
        steps += 1;
        let next = format!("%l{steps}");
        writeln!(body, "{next} = {}", text.replace("{prev}", &layout)).unwrap();
        layout = next;
    };
    if l.block != [1, 1] {
        let (b0, b1) = (c(&mut m, l.block[0]), c(&mut m, l.block[1]));
        step(
            &mut body,
            format!("OpTensorLayoutSetBlockSizeNV {tl} {{prev}} {b0} {b1}"),
        );
    }
    let (d0, d1) = (c(&mut m, l.dim[0]), c(&mut m, l.dim[1]));
    step(
        &mut body,
        format!("OpTensorLayoutSetDimensionNV {tl} {{prev}} {d0} {d1}"),
    );
    if s.explicit_stride {
        let (s0, s1) = (c(&mut m, l.stride[0]), c(&mut m, l.stride[1]));
        step(
            &mut body,
            format!("OpTensorLayoutSetStrideNV {tl} {{prev}} {s0} {s1}"),
        );
    }
    let (o0, o1) = (c(&mut m, l.offset[0] as u32), c(&mut m, l.offset[1] as u32));
    let (p0, p1) = (c(&mut m, l.span[0]), c(&mut m, l.span[1]));
    step(
        &mut body,
        format!("OpTensorLayoutSliceNV {tl} {{prev}} {o0} {p0} {o1} {p1}"),
    );
    if l.mode == ClampMode::Constant {
        let cv = c(&mut m, clamp_bits as u32);
        step(
            &mut body,
            format!("OpTensorLayoutSetClampValueNV {tl} {{prev}} {cv}"),
        );
    }
    let mut addressing = "None".to_string();
    if let Some(v) = &s.view {
        let has_dims = v.dims_strides.is_some();
        let flag = if has_dims { "%true" } else { "%false" };
        m.raw_decl(
            flag,
            &format!(
                "{flag} = OpConstant{} %bool",
                if has_dims { "True" } else { "False" }
            ),
        );
        let (q0, q1) = (c(&mut m, v.perm[0] as u32), c(&mut m, v.perm[1] as u32));
        let tv = format!("%tv{}{}{}", u8::from(has_dims), v.perm[0], v.perm[1]);
        m.raw_decl(
            &tv,
            &format!("{tv} = OpTypeTensorViewNV {two} {flag} {q0} {q1}"),
        );
        writeln!(body, "%v0 = OpCreateTensorViewNV {tv}").unwrap();
        let mut view = "%v0";
        if let Some((d, _)) = v.dims_strides {
            let (e0, e1) = (c(&mut m, d[0]), c(&mut m, d[1]));
            writeln!(body, "%v1 = OpTensorViewSetDimensionNV {tv} %v0 {e0} {e1}").unwrap();
            view = "%v1";
        }
        if v.clip != [0, u32::MAX, 0, u32::MAX] {
            let k: Vec<String> = v.clip.iter().map(|&x| c(&mut m, x)).collect();
            writeln!(
                body,
                "%v2 = OpTensorViewSetClipNV {tv} {view} {} {} {} {}",
                k[0], k[1], k[2], k[3]
            )
            .unwrap();
            view = "%v2";
        }
        addressing = format!("TensorView {view}");
    }
    let mut function = String::new();
    if s.decode {
        m.physical_addressing();
        let (four, bytes_of) = (m.u32(4), t.bytes());
        let name = t.name();
        m.raw_decoration(
            &format!("q4_{name}"),
            &format!(
                "OpDecorate %arr4_{name} ArrayStride {bytes_of}\nOpMemberDecorate %q4_{name} 0 Offset 0\nOpDecorate %q4_{name} Block"
            ),
        );
        m.raw_decl(
            &format!("%q4_{name}"),
            &format!(
                "%arr4_{name} = OpTypeArray {ty} {four}\n%q4_{name} = OpTypeStruct %arr4_{name}\n\
                 %pq4_{name} = OpTypePointer PhysicalStorageBuffer %q4_{name}\n\
                 %pqe_{name} = OpTypePointer PhysicalStorageBuffer {ty}\n\
                 %arr2u = OpTypeArray %uint {two}\n\
                 %fn_dec_{name} = OpTypeFunction {ty} %pq4_{name} %arr2u %arr2u\n\
                 %half_{name} = OpConstant {ty} 0.5"
            ),
        );
        function = format!(
            "%dec = OpFunction {ty} None %fn_dec_{name}\n%dp = OpFunctionParameter %pq4_{name}\n\
             %dbc = OpFunctionParameter %arr2u\n%dcib = OpFunctionParameter %arr2u\n%dl = OpLabel\n\
             %cib1 = OpCompositeExtract %uint %dcib 1\n%bc0 = OpCompositeExtract %uint %dbc 0\n\
             %de = OpAccessChain %pqe_{name} %dp {u0} %cib1\n%dv = OpLoad {ty} %de Aligned {bytes_of}\n\
             %dbf = OpConvertUToF {ty} %bc0\n%dh = OpFMul {ty} %dbf %half_{name}\n\
             %dr = OpFAdd {ty} %dv %dh\nOpReturnValue %dr\nOpFunctionEnd\n"
        );
        addressing = "DecodeFunc %dec".into();
        if s.vector != 0 {
            let v = s.vector;
            m.cap("CooperativeMatrixDecodeVectorNV");
            m.ext("SPV_NV_cooperative_matrix_decode_vector");
            m.raw_decl(
                &format!("%vec{v}_{name}"),
                &format!(
                    "%vec{v}_{name} = OpTypeVector {ty} {v}\n\
                     %fn_decv{v}_{name} = OpTypeFunction %vec{v}_{name} %pq4_{name} %arr2u %arr2u"
                ),
            );
            // Component i is the element at coordInBlock[1] + i of the same block.
            let mut parts = String::new();
            let mut components = Vec::new();
            for i in 0..v {
                let ci = m.u32(i);
                write!(
                    parts,
                    "%vk{i} = OpIAdd %uint %vcib1 {ci}\n%ve{i} = OpAccessChain %pqe_{name} %vp {u0} %vk{i}\n\
                     %vv{i} = OpLoad {ty} %ve{i} Aligned {bytes_of}\n%vr{i} = OpFAdd {ty} %vv{i} %vh\n"
                )
                .unwrap();
                components.push(format!("%vr{i}"));
            }
            write!(
                function,
                "%decv = OpFunction %vec{v}_{name} None %fn_decv{v}_{name}\n%vp = OpFunctionParameter %pq4_{name}\n\
                 %vbc = OpFunctionParameter %arr2u\n%vcib = OpFunctionParameter %arr2u\n%vl = OpLabel\n\
                 %vcib1 = OpCompositeExtract %uint %vcib 1\n%vbc0 = OpCompositeExtract %uint %vbc 0\n\
                 %vbf = OpConvertUToF {ty} %vbc0\n%vh = OpFMul {ty} %vbf %half_{name}\n{parts}\
                 %vres = OpCompositeConstruct %vec{v}_{name} {}\nOpReturnValue %vres\nOpFunctionEnd\n",
                components.join(" ")
            )
            .unwrap();
            addressing = "DecodeFunc|DecodeVectorFunc %dec %decv".into();
        }
    }
    if s.store {
        writeln!(
            body,
            "%p = OpAccessChain {pin} {inb} {u0} {u0}\n%x = OpCooperativeMatrixLoadKHR {mt} %p {u0} {ccols}\n\
             %q = OpAccessChain {pout} {outb} {u0} {u0}\n\
             OpCooperativeMatrixStoreTensorNV %q %x {layout} None {addressing}"
        )
        .unwrap();
    } else {
        m.raw_decl("%fill", &format!("%fill = OpConstant {ty} {FILL}"));
        m.raw_decl(
            &format!("%fillm_{rows}x{cols}"),
            &format!("%fillm_{rows}x{cols} = OpConstantComposite {mt} %fill"),
        );
        writeln!(
            body,
            "%p = OpAccessChain {pin} {inb} {u0} {u0}\n\
             %x = OpCooperativeMatrixLoadTensorNV {mt} %p %fillm_{rows}x{cols} {layout} None {addressing}\n\
             %q = OpAccessChain {pout} {outb} {u0} {u0}\nOpCooperativeMatrixStoreKHR %q %x {u0} {ccols}"
        )
        .unwrap();
    }
    let text = if function.is_empty() {
        m.finish(&body)
    } else {
        with_function(m.finish(&body), &function)
    };
    Some(Case::single(
        format!("tensor/{}/{rows}x{cols}/{name}", t.name()),
        "tensor",
        text,
        inputs,
        t,
        expected.iter().flat_map(|&v| bytes(t, v)).collect(),
        Compare::Float { ulps: 0 },
        if s.store { l.dim[1] + 3 } else { cols },
    ))
}

//! SPV_NV_cooperative_vector on the engine: GLSL (GL_NV_cooperative_vector, compiled by
//! glslang at test time; skipped with a notice when it is absent) and `.spvasm` shaders for
//! every instruction, against references computed here in f64 / i64 from the spec's formulas
//! (GLSL_NV_cooperative_vector, "Cooperative Vector Functions"). Integer products are compared
//! exactly; float results within the bound each case states.
//!
//! Matrices in row- and column-major layouts are written by this file; the optimal layouts are
//! the engine's own (documented in `coopmat_exec::coopvec`), filled through its converter from
//! a row-major copy, as an application fills them through vkConvertCooperativeVectorMatrixNV.

mod common;

use common::*;
use coopmat_exec::coopvec::{
    ComponentType as Ct, MatrixLayout as Layout, MatrixSide, convert_matrix, converted_size,
};
use coopmat_exec::{EngineOptions, ErrorKind, Pipeline, Resources};
use half::f16;

const LANES: usize = 64;

/// Dispatches with uniformity observation on and checks the divergence analysis against what
/// the engine saw (the lint's soundness on cooperative-vector shaders).
fn run_observed(
    m: &coopmat_spirv::Module,
    res: &mut Resources,
    groups: [u32; 3],
    opts: EngineOptions,
) {
    let opts = EngineOptions {
        observe_uniformity: true,
        ..opts
    };
    let p = Pipeline::compile(m, "main", &Default::default(), &opts)
        .unwrap_or_else(|e| panic!("compile: {e}"));
    p.dispatch(res, groups)
        .unwrap_or_else(|e| panic!("dispatch: {e}"));
    let c = coopmat_analysis::Analysis::run(m).check_observed(&p.observed_uniformity());
    assert!(c.values > 0, "nothing observed");
    assert!(
        c.violations.is_empty(),
        "divergence analysis unsound for {:?}",
        c.violations
    );
}

fn matmul_src() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/coopvec/matmul.comp"
    ))
    .unwrap()
}

/// A matrix the case stores in an optimal layout, which a GPU fills with its own converter:
/// `rows × cols` elements, row-major and tightly packed in `src`, of component type `ty`,
/// at `offset` of buffer `binding` in `layout`.
#[derive(Clone, Debug)]
struct Segment {
    binding: (u32, u32),
    offset: usize,
    rows: u32,
    cols: u32,
    ty: Ct,
    layout: Layout,
    src: Vec<u8>,
    /// Bytes reserved for it from `offset` (what a GPU's layout may use).
    room: usize,
}

impl Segment {
    fn json(&self, dir: &std::path::Path, n: usize) -> serde_json::Value {
        let file = format!("segment{n}.bin");
        std::fs::write(dir.join(&file), &self.src).unwrap();
        serde_json::json!({
            "binding": [self.binding.0, self.binding.1], "offset": self.offset,
            "rows": self.rows, "cols": self.cols, "type": self.ty.raw(),
            "layout": layout_raw(self.layout), "src": file, "room": self.room,
        })
    }
}

fn layout_raw(l: Layout) -> u32 {
    match l {
        Layout::RowMajor => 0,
        Layout::ColumnMajor => 1,
        Layout::InferencingOptimal => 2,
        Layout::TrainingOptimal => 3,
    }
}

/// One checked value: byte offset in the output (or in its row-major f32 copy when the output
/// is a matrix), result type, the exact value, Σ|terms| and the engine's bound.
type Check = (usize, Ct, f64, f64, f64);

/// A checked buffer of a case: binding, the matrix it holds in an optimal layout, the checks,
/// the engine's bytes.
type Output = ((u32, u32), Option<Segment>, Vec<Check>, Vec<u8>);

/// A case as `crates/gpu/examples/coopvec_cases.rs` replays it on a GPU: written to
/// `$COOPMAT_COOPVEC_CASES/<name>/` when that variable is set (the GPU comparison in
/// BENCHMARKS.md); nothing otherwise.
struct Export<'a> {
    name: String,
    module: &'a coopmat_spirv::Module,
    groups: [u32; 3],
    /// The buffers before the dispatch.
    buffers: std::collections::BTreeMap<(u32, u32), Vec<u8>>,
    segments: Vec<Segment>,
    /// The checked buffers: binding, the matrix it holds in an optimal layout (compared after
    /// conversion to row-major f32), the checks, the engine's bytes.
    outputs: Vec<Output>,
    /// For products: input type, input, matrix and bias interpretations (u32::MAX: none),
    /// result type, transpose — run only where the device lists the combination.
    combination: Option<[u32; 6]>,
    /// For the training ops: the accumulation type they need.
    training: Option<Ct>,
}

impl Export<'_> {
    fn write(&self) {
        let Some(root) = std::env::var_os("COOPMAT_COOPVEC_CASES") else {
            return;
        };
        let dir = std::path::Path::new(&root).join(&self.name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("shader.spv"),
            self.module.to_bytes(self.module.endian),
        )
        .unwrap();
        let mut buffers = serde_json::Map::new();
        for ((set, b), data) in &self.buffers {
            let file = format!("buffer{set}_{b}.bin");
            std::fs::write(dir.join(&file), data).unwrap();
            buffers.insert(format!("{set}:{b}"), file.into());
        }
        let outputs: Vec<serde_json::Value> = self
            .outputs
            .iter()
            .enumerate()
            .map(|(n, (binding, matrix, checks, engine))| {
                let file = format!("engine{n}.bin");
                std::fs::write(dir.join(&file), engine).unwrap();
                let checks: Vec<serde_json::Value> = checks
                    .iter()
                    .map(|c| serde_json::json!([c.0, c.1.raw(), c.2, c.3, c.4]))
                    .collect();
                serde_json::json!({
                    "binding": [binding.0, binding.1],
                    "matrix": matrix.as_ref().map(|g| g.json(&dir, 100 + n)),
                    "checks": checks,
                    "engine": file,
                })
            })
            .collect();
        let case = serde_json::json!({
            "groups": self.groups,
            "buffers": buffers,
            "segments": self.segments.iter().enumerate().map(|(n, g)| g.json(&dir, n)).collect::<Vec<_>>(),
            "outputs": outputs,
            "combination": self.combination,
            "training_accumulation": self.training.map(|t| t.raw()),
        });
        std::fs::write(dir.join("case.json"), serde_json::to_string(&case).unwrap()).unwrap();
    }
}

/// Decodes an OFP8 byte (`m` mantissa bits, bias `bias`; E5M2 has infinities, E4M3 does not).
fn fp8(b: u8, m: u32, bias: i32) -> f64 {
    let s = if b & 0x80 != 0 { -1.0 } else { 1.0 };
    let e = ((b & 0x7f) >> m) as i32;
    let f = (b as u32 & ((1 << m) - 1)) as f64;
    if e == 0 {
        s * f * 2f64.powi(1 - bias - m as i32)
    } else {
        s * (1.0 + f / (1u32 << m) as f64) * 2f64.powi(e - bias)
    }
}

/// The value of raw bits of a component type (integers by their signedness).
fn value(t: Ct, raw: u64) -> f64 {
    match t {
        Ct::F16 => f16::from_bits(raw as u16).to_f64(),
        Ct::F32 => f32::from_bits(raw as u32) as f64,
        Ct::E4M3 => fp8(raw as u8, 3, 7),
        Ct::E5M2 => fp8(raw as u8, 2, 15),
        Ct::S8 | Ct::S8Packed => raw as u8 as i8 as f64,
        Ct::U8 | Ct::U8Packed => raw as u8 as f64,
        Ct::S32 => raw as u32 as i32 as f64,
        Ct::U32 => raw as u32 as f64,
        t => panic!("no test values of {t:?}"),
    }
}

/// A random raw element of type `t` for a matrix or bias: small enough that no f16 sum of
/// up to 64 products overflows.
fn random_elem(t: Ct, r: &mut Rng) -> u64 {
    let unit = |r: &mut Rng| (r.below(2001) as f64 - 1000.0) / 1000.0;
    match t {
        Ct::F16 => f16::from_f64(unit(r)).to_bits() as u64,
        Ct::F32 => (unit(r) as f32).to_bits() as u64,
        // Sign, an exponent field in 4..=9 (values up to 7.5 / 3.5), any mantissa.
        Ct::E4M3 => (r.below(2) << 7) | ((4 + r.below(6)) << 3) | r.below(8),
        Ct::E5M2 => (r.below(2) << 7) | ((12 + r.below(4)) << 2) | r.below(4),
        Ct::S8 | Ct::U8 => r.below(256),
        Ct::S32 | Ct::U32 => r.next() & 0xffff_ffff,
        t => panic!("no test values of {t:?}"),
    }
}

/// One matrix-vector product configuration.
#[derive(Clone, Copy, Debug)]
struct MatMul {
    /// GLSL type of the input vector and its component type.
    input: (&'static str, Ct),
    input_interp: Ct,
    matrix: Ct,
    bias: Option<Ct>,
    result: (&'static str, Ct),
    m: u32,
    k: u32,
    layout: Layout,
    transpose: bool,
    /// Lanes with index % skip == 1 do nothing (0: all run).
    skip: u32,
}

fn glsl_ct(t: Ct) -> &'static str {
    match t {
        Ct::F16 => "gl_ComponentTypeFloat16NV",
        Ct::F32 => "gl_ComponentTypeFloat32NV",
        Ct::S8 => "gl_ComponentTypeSignedInt8NV",
        Ct::U8 => "gl_ComponentTypeUnsignedInt8NV",
        Ct::S32 => "gl_ComponentTypeSignedInt32NV",
        Ct::U32 => "gl_ComponentTypeUnsignedInt32NV",
        Ct::S8Packed => "gl_ComponentTypeSignedInt8PackedNV",
        Ct::U8Packed => "gl_ComponentTypeUnsignedInt8PackedNV",
        Ct::E4M3 => "gl_ComponentTypeFloatE4M3NV",
        Ct::E5M2 => "gl_ComponentTypeFloatE5M2NV",
        t => panic!("{t:?}"),
    }
}

fn glsl_layout(l: Layout) -> &'static str {
    match l {
        Layout::RowMajor => "gl_CooperativeVectorMatrixLayoutRowMajorNV",
        Layout::ColumnMajor => "gl_CooperativeVectorMatrixLayoutColumnMajorNV",
        Layout::InferencingOptimal => "gl_CooperativeVectorMatrixLayoutInferencingOptimalNV",
        Layout::TrainingOptimal => "gl_CooperativeVectorMatrixLayoutTrainingOptimalNV",
    }
}

impl MatMul {
    fn input_n(&self) -> u32 {
        if self.input_interp.packed() {
            self.k.div_ceil(4)
        } else {
            self.k
        }
    }

    /// Stored rows × columns (a transposed product reads a K×M matrix).
    fn stored(&self) -> (u32, u32) {
        if self.transpose {
            (self.k, self.m)
        } else {
            (self.m, self.k)
        }
    }

    fn stride(&self) -> u64 {
        let (rows, cols) = self.stored();
        let e = self.matrix.bytes() as u64;
        // Padded by 16 bytes past the tight row/column, so a wrong stride shows.
        match self.layout {
            Layout::RowMajor => (cols as u64 * e).next_multiple_of(16) + 16,
            Layout::ColumnMajor => (rows as u64 * e).next_multiple_of(16) + 16,
            _ => 0,
        }
    }

    fn side(&self) -> MatrixSide {
        MatrixSide {
            ty: self.matrix,
            layout: self.layout,
            stride: self.stride(),
        }
    }

    /// Bytes from one matrix to the next: room for a GPU's optimal layout too (four times the
    /// dense size plus 4 KiB; the GPU replay checks that its layout fits).
    fn mat_bytes(&self) -> u64 {
        let (rows, cols) = self.stored();
        let dense = rows as u64 * cols as u64 * self.matrix.bytes() as u64;
        converted_size(rows, cols, self.side())
            .unwrap()
            .max(4 * dense + 4096)
            .next_multiple_of(64)
    }

    fn name(&self) -> String {
        format!(
            "matmul-{}-{}-{}-{}-{}-{}{}{}",
            self.input.1.name(),
            self.input_interp.name(),
            self.matrix.name(),
            self.bias
                .map_or("nobias".to_string(), |b| b.name().to_string()),
            self.result.1.name(),
            self.layout.name(),
            if self.transpose { "-t" } else { "" },
            format_args!("-m{}k{}", self.m, self.k)
        )
    }

    fn in_stride(&self) -> usize {
        (self.input_n() as usize * 8).next_multiple_of(16)
    }

    fn out_stride(&self) -> usize {
        (self.m as usize * 4).next_multiple_of(16)
    }

    fn defines(&self) -> String {
        let d = [
            ("IN_T", self.input.0.to_string()),
            ("IN_N", self.input_n().to_string()),
            ("IN_INTERP", glsl_ct(self.input_interp).into()),
            ("MAT_INTERP", glsl_ct(self.matrix).into()),
            ("BIAS_INTERP", glsl_ct(self.bias.unwrap_or(Ct::F16)).into()),
            ("RES_T", self.result.0.into()),
            ("M", self.m.to_string()),
            ("K", self.k.to_string()),
            ("LAYOUT", glsl_layout(self.layout).into()),
            ("TRANSPOSE", self.transpose.to_string()),
            ("STRIDE", self.stride().to_string()),
            ("MAT_BYTES", self.mat_bytes().to_string()),
            ("BIAS", (self.bias.is_some() as u32).to_string()),
            ("SKIP", self.skip.to_string()),
        ];
        d.iter()
            .map(|(k, v)| format!("#define {k} {v}\n"))
            .collect()
    }

    /// Writes the stored matrix `s` (rows × cols raw elements, row-major) in the case's layout.
    fn write_matrix(&self, s: &[u64], out: &mut [u8]) {
        let (rows, cols) = self.stored();
        let e = self.matrix.bytes() as usize;
        match self.layout {
            Layout::RowMajor | Layout::ColumnMajor => {
                let st = self.stride() as usize;
                for r in 0..rows as usize {
                    for c in 0..cols as usize {
                        let o = if self.layout == Layout::RowMajor {
                            r * st + c * e
                        } else {
                            c * st + r * e
                        };
                        out[o..o + e].copy_from_slice(&s[r * cols as usize + c].to_le_bytes()[..e]);
                    }
                }
            }
            Layout::InferencingOptimal | Layout::TrainingOptimal => {
                let src: Vec<u8> = s
                    .iter()
                    .flat_map(|v| v.to_le_bytes()[..e].to_vec())
                    .collect();
                let rm = MatrixSide {
                    ty: self.matrix,
                    layout: Layout::RowMajor,
                    stride: 0,
                };
                convert_matrix(rows, cols, rm, &src, self.side(), out).unwrap();
            }
        }
    }

    /// A raw input component for lane data.
    fn random_input(&self, r: &mut Rng) -> u64 {
        match (self.input.1, self.input_interp) {
            // Exactly representable in the 8-bit float interpretations: multiples of 1/8 (E4M3)
            // or 1/4 (E5M2) in [-2, 2].
            (Ct::F16, Ct::E4M3) => {
                f16::from_f64((r.below(33) as f64 - 16.0) / 8.0).to_bits() as u64
            }
            (Ct::F16, Ct::E5M2) => f16::from_f64((r.below(17) as f64 - 8.0) / 4.0).to_bits() as u64,
            // Halves in [-200, 200]: ties and saturation of the float-to-int8 conversion.
            (Ct::F32, Ct::S8) => ((r.below(1601) as f32 - 800.0) / 4.0).to_bits() as u64,
            (Ct::U32, _) => r.next() & 0xffff_ffff,
            // Around the int8 range: saturation on both sides.
            (Ct::S32, _) => (r.below(601) as i64 - 300) as u32 as u64,
            (t, _) => random_elem(t, r),
        }
    }

    /// Input value k of a lane after the conversion to InputInterpretation (spec rules).
    fn converted(&self, words: &[u64], k: usize) -> f64 {
        let it = self.input_interp;
        if it.packed() {
            let b = (words[k / 4] >> (8 * (k % 4))) & 0xff;
            return value(it, b);
        }
        let v = value(self.input.1, words[k]);
        match it {
            // Float to integer: round to nearest even, saturate.
            Ct::S8 => v.round_ties_even().clamp(-128.0, 127.0),
            Ct::U8 => v.round_ties_even().clamp(0.0, 255.0),
            // The test inputs are exact in every float interpretation.
            _ => v,
        }
    }

    fn run(&self, seed: u64) {
        let Some(module) = glsl(&matmul_src().replacen(
            "#version 460\n",
            &format!("#version 460\n{}", self.defines()),
            1,
        )) else {
            return;
        };
        let mut r = Rng(seed);
        let (m, k) = (self.m as usize, self.k as usize);
        let n_in = self.input_n() as usize;
        let in_bytes = self.input.1.bytes() as usize;
        // Inputs.
        let inputs: Vec<Vec<u64>> = (0..LANES)
            .map(|_| (0..n_in).map(|_| self.random_input(&mut r)).collect())
            .collect();
        let mut in_buf = vec![0u8; LANES * self.in_stride()];
        for (l, v) in inputs.iter().enumerate() {
            for (i, x) in v.iter().enumerate() {
                let o = l * self.in_stride() + i * in_bytes;
                in_buf[o..o + in_bytes].copy_from_slice(&x.to_le_bytes()[..in_bytes]);
            }
        }
        // Two matrices (W[j][k] raw) and two biases; lanes alternate between them.
        let ws: Vec<Vec<u64>> = (0..2)
            .map(|_| {
                (0..m * k)
                    .map(|_| random_elem(self.matrix, &mut r))
                    .collect()
            })
            .collect();
        let mb = self.mat_bytes() as usize;
        let mut mat_buf = vec![0u8; 2 * mb];
        let mut segments = Vec::new();
        for (i, w) in ws.iter().enumerate() {
            let (rows, cols) = self.stored();
            let s: Vec<u64> = (0..rows as usize * cols as usize)
                .map(|x| {
                    let (row, col) = (x / cols as usize, x % cols as usize);
                    if self.transpose {
                        w[col * k + row]
                    } else {
                        w[row * k + col]
                    }
                })
                .collect();
            self.write_matrix(&s, &mut mat_buf[i * mb..(i + 1) * mb]);
            if self.layout.is_optimal() {
                let e = self.matrix.bytes() as usize;
                segments.push(Segment {
                    binding: (0, 1),
                    offset: i * mb,
                    rows,
                    cols,
                    ty: self.matrix,
                    layout: self.layout,
                    src: s
                        .iter()
                        .flat_map(|v| v.to_le_bytes()[..e].to_vec())
                        .collect(),
                    room: mb,
                });
            }
        }
        let bias_ty = self.bias.unwrap_or(Ct::F16);
        let bias_stride = (m * 4).next_multiple_of(16);
        let biases: Vec<Vec<u64>> = (0..2)
            .map(|_| (0..m).map(|_| random_elem(bias_ty, &mut r)).collect())
            .collect();
        let mut bias_buf = vec![0u8; 2 * bias_stride];
        let be = bias_ty.bytes() as usize;
        for (i, b) in biases.iter().enumerate() {
            for (j, x) in b.iter().enumerate() {
                let o = i * bias_stride + j * be;
                bias_buf[o..o + be].copy_from_slice(&x.to_le_bytes()[..be]);
            }
        }
        let mut res = Resources::default();
        res.buffers.insert((0, 0), in_buf);
        res.buffers.insert((0, 1), mat_buf);
        res.buffers.insert((0, 2), bias_buf);
        res.buffers
            .insert((0, 3), vec![0xee; LANES * self.out_stride()]);
        let before = res.buffers.clone();
        run_observed(&module, &mut res, [1, 1, 1], EngineOptions::default());
        let mut checks: Vec<Check> = Vec::new();
        let out = &res.buffers[&(0, 3)];
        let rb = self.result.1.bytes() as usize;
        for l in 0..LANES {
            let raw_at = |j: usize| {
                let o = l * self.out_stride() + j * rb;
                let mut b = [0u8; 8];
                b[..rb].copy_from_slice(&out[o..o + rb]);
                u64::from_le_bytes(b)
            };
            if self.skip != 0 && l as u32 % self.skip == 1 {
                assert!(
                    (0..m).all(|j| raw_at(j) == 0xeeee_eeee_eeee_eeee & ((1u64 << (8 * rb)) - 1)),
                    "{self:?}: inactive lane {l} wrote its result"
                );
                continue;
            }
            let w = &ws[l % 2];
            let x: Vec<f64> = (0..k).map(|kk| self.converted(&inputs[l], kk)).collect();
            for j in 0..m {
                let terms: Vec<f64> = (0..k)
                    .map(|kk| value(self.matrix, w[j * k + kk]) * x[kk])
                    .collect();
                let b = self.bias.map_or(0.0, |t| value(t, biases[l % 2][j]));
                let got = raw_at(j);
                if self.matrix.is_float() {
                    let exact: f64 = terms.iter().sum::<f64>() + b;
                    let mag: f64 = terms.iter().map(|t| t.abs()).sum::<f64>() + b.abs();
                    let got = value(self.result.1, got);
                    // f32 accumulation (products exact): (K + 2) · 2^-24 · Σ|terms|; then one
                    // rounding to the result type: half an ulp there.
                    let e = (k as f64 + 2.0) * 2f64.powi(-24) * mag;
                    let ulp = match self.result.1 {
                        Ct::F16 => {
                            let a = exact.abs() + e;
                            if a < 2f64.powi(-14) {
                                2f64.powi(-24)
                            } else {
                                2f64.powi(a.log2().floor() as i32 - 10)
                            }
                        }
                        _ => f32::EPSILON as f64 * (exact.abs() + e),
                    };
                    let tol = e + 0.5 * ulp;
                    assert!(
                        (got - exact).abs() <= tol,
                        "{self:?} lane {l} row {j}: got {got}, exact {exact}, bound {tol}"
                    );
                    checks.push((
                        l * self.out_stride() + j * rb,
                        self.result.1,
                        exact,
                        mag,
                        tol,
                    ));
                } else {
                    // Integer products: exact, wrapping at 32 bits.
                    let sum: i64 = terms.iter().map(|&t| t as i64).sum::<i64>() + b as i64;
                    assert_eq!(got as u32, sum as i32 as u32, "{self:?} lane {l} row {j}");
                    let wrapped = sum as i32;
                    let v = if self.result.1 == Ct::U32 {
                        wrapped as u32 as f64
                    } else {
                        wrapped as f64
                    };
                    checks.push((l * self.out_stride() + j * rb, self.result.1, v, 0.0, 0.0));
                }
            }
        }
        Export {
            name: self.name(),
            module: &module,
            groups: [1, 1, 1],
            buffers: before,
            segments,
            outputs: vec![((0, 3), None, checks, res.buffers[&(0, 3)].clone())],
            combination: Some([
                self.input.1.raw(),
                self.input_interp.raw(),
                self.matrix.raw(),
                self.bias.map_or(u32::MAX, |b| b.raw()),
                self.result.1.raw(),
                self.transpose as u32,
            ]),
            training: None,
        }
        .write();
    }
}

const F16: (&str, Ct) = ("float16_t", Ct::F16);
const F32: (&str, Ct) = ("float", Ct::F32);
const S32: (&str, Ct) = ("int32_t", Ct::S32);

fn f16_case(layout: Layout, transpose: bool, bias: bool) -> MatMul {
    MatMul {
        input: F16,
        input_interp: Ct::F16,
        matrix: Ct::F16,
        bias: bias.then_some(Ct::F16),
        result: F16,
        m: 24,
        k: 40,
        layout,
        transpose,
        skip: 3,
    }
}

#[test]
fn f16_products_in_every_layout_with_and_without_bias() {
    for layout in [
        Layout::RowMajor,
        Layout::ColumnMajor,
        Layout::InferencingOptimal,
        Layout::TrainingOptimal,
    ] {
        for bias in [false, true] {
            f16_case(layout, false, bias).run(1);
        }
    }
}

#[test]
fn f16_products_transposed_in_the_optimal_layouts() {
    for layout in [Layout::InferencingOptimal, Layout::TrainingOptimal] {
        for bias in [false, true] {
            f16_case(layout, true, bias).run(2);
        }
    }
}

#[test]
fn f16_products_with_an_f32_result_and_bias() {
    let mut c = f16_case(Layout::RowMajor, false, true);
    c.bias = Some(Ct::F32);
    c.result = F32;
    c.run(3);
}

fn int8_case(input: (&'static str, Ct), interp: Ct, layout: Layout) -> MatMul {
    MatMul {
        input,
        input_interp: interp,
        matrix: Ct::S8,
        bias: Some(Ct::S32),
        result: S32,
        m: 16,
        k: 36,
        layout,
        transpose: false,
        skip: 0,
    }
}

#[test]
fn int8_products_packed_int8_and_float_inputs() {
    for layout in [
        Layout::RowMajor,
        Layout::ColumnMajor,
        Layout::InferencingOptimal,
    ] {
        // UINT32 input words holding SINT8_PACKED values.
        int8_case(("uint32_t", Ct::U32), Ct::S8Packed, layout).run(4);
        // SINT8 input.
        int8_case(("int8_t", Ct::S8), Ct::S8, layout).run(5);
        // FLOAT32 input converted to SINT8 (round to nearest even, saturating).
        int8_case(F32, Ct::S8, layout).run(6);
    }
    // Without bias, and K not a multiple of 4 for the packed input.
    let mut c = int8_case(("uint32_t", Ct::U32), Ct::S8Packed, Layout::RowMajor);
    c.bias = None;
    c.k = 30;
    c.run(7);
}

#[test]
fn fp8_products_in_the_optimal_layouts() {
    for fp8 in [Ct::E4M3, Ct::E5M2] {
        for layout in [Layout::InferencingOptimal, Layout::TrainingOptimal] {
            for transpose in [false, true] {
                MatMul {
                    input: F16,
                    input_interp: fp8,
                    matrix: fp8,
                    bias: Some(Ct::F16),
                    result: F16,
                    m: 20,
                    k: 48,
                    layout,
                    transpose,
                    skip: 0,
                }
                .run(8);
            }
        }
    }
}

#[test]
fn loads_stores_arithmetic_conversions_and_glsl_functions() {
    let Some(module) = glsl(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/coopvec/elementwise.comp"
        ))
        .unwrap(),
    ) else {
        return;
    };
    const N: usize = 12;
    const L: usize = 32;
    let mut r = Rng(11);
    let unit = |r: &mut Rng| (r.below(4001) as f32 - 2000.0) / 1000.0;
    // Per lane: x (in [-2, 2]) then y (|y| in [0.5, 2], so x / y stays finite).
    let mut a = Vec::new();
    for _ in 0..L {
        a.extend((0..N).map(|_| unit(&mut r)));
        a.extend((0..N).map(|_| {
            let v = 0.5 + unit(&mut r).abs() * 0.75;
            if r.below(2) == 0 { v } else { -v }
        }));
    }
    let mut res = Resources::default();
    res.buffers.insert((0, 0), bytes_f32(&a));
    res.buffers.insert((0, 1), vec![0; L * 16 * N * 4]);
    res.buffers.insert((0, 2), vec![0; L * 2 * N * 4]);
    run_observed(&module, &mut res, [1, 1, 1], EngineOptions::default());
    let out = f32s(&res.buffers[&(0, 1)]);
    let outi = u32s(&res.buffers[&(0, 2)]);
    for l in 0..L {
        let x = &a[l * 2 * N..l * 2 * N + N];
        let y = &a[l * 2 * N + N..(l + 1) * 2 * N];
        let xn = &a[((l + 1) % L) * 2 * N..((l + 1) % L) * 2 * N + N];
        for k in 0..N {
            let (xv, yv) = (x[k], y[k]);
            let got = |slot: usize| out[(l * 16 + slot) * N + k];
            // Correctly rounded f32 operations: exact.
            let exact = [
                (0, xv + yv),
                (1, xv - yv),
                (2, xv * yv),
                (3, xv / yv),
                (4, -xv),
                (5, xv * 3.0),
                (6, xv.max(yv)),
                (7, xv.min(0.25)),
                (8, xv.clamp(-0.5, 0.5)),
                (9, if xv < yv { 0.0 } else { 1.0 }),
                (13, k as f32 * x[N - 1 - k]),
                (14, xn[k]),
                (15, f16::from_f32(xv).to_f32()),
            ];
            for (slot, want) in exact {
                assert_eq!(got(slot), want, "lane {l} component {k} slot {slot}");
            }
            // Transcendentals: the engine's are f64 functions rounded to f32, well inside
            // Vulkan's bounds (3 + 2|x| ulp for exp, 2^-21 absolute for log near 1).
            let (xd, yd) = (xv as f64, yv as f64);
            let yy = yv * yv + 1.0;
            let approx = [
                (10, xd.exp() + (yy as f64).ln()),
                (11, xd.tanh() + yd.atan()),
                (12, xd.mul_add(yd, xd)),
            ];
            for (slot, want) in approx {
                assert!(
                    (got(slot) as f64 - want).abs() <= 4e-7 * (1.0 + want.abs()),
                    "lane {l} component {k} slot {slot}: {} vs {want}",
                    got(slot)
                );
            }
            let xi = (xv * 1000.0) as i32;
            let u = xi as u32;
            let u = ((u << 3) ^ (u >> 2)) | (u & 0xf0);
            let u = (!u).wrapping_add(l as u32);
            assert_eq!(outi[l * 2 * N + k], u, "lane {l} component {k} uint ops");
            let s = (xi >> 3) / 7 - xi * 2;
            assert_eq!(
                outi[(l * 2 + 1) * N + k] as i32,
                s,
                "lane {l} component {k} int ops"
            );
        }
    }
}

/// OuterProductAccumulate and ReduceSumAccumulate from `groups` workgroups × 64 invocations
/// (run on several threads) into one matrix and two sums. The vector components are multiples
/// of 1/4 in [-1, 1], so products are multiples of 1/16 and every partial sum in any order is
/// exact: in f32 always, in f16 while |sum| < 128 for the products (one workgroup: |sum| <= 64)
/// and < 512 for the components. Any rounding, lost update or misplaced element shows.
fn training(acc: Ct, groups: u32) {
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/coopvec/training.comp"
    ))
    .unwrap()
    .replacen(
        "#version 460\n",
        &format!(
            "#version 460\n#define ACC_INTERP {}\n#define ACC_F16 {}\n",
            glsl_ct(acc),
            (acc == Ct::F16) as u32
        ),
        1,
    );
    let Some(module) = glsl(&src) else {
        return;
    };
    const M: usize = 10;
    const N: usize = 7;
    let inv = groups as usize * LANES;
    let mut r = Rng(21);
    let mut data = vec![0u16; inv * 32];
    let mut a = vec![[0f64; M]; inv];
    let mut b = vec![[0f64; N]; inv];
    for i in 0..inv {
        for k in 0..M {
            a[i][k] = (r.below(9) as f64 - 4.0) / 4.0;
            data[i * 32 + k] = f16::from_f64(a[i][k]).to_bits();
        }
        for k in 0..N {
            b[i][k] = (r.below(9) as f64 - 4.0) / 4.0;
            data[i * 32 + 16 + k] = f16::from_f64(b[i][k]).to_bits();
        }
    }
    let opt = MatrixSide {
        ty: acc,
        layout: Layout::TrainingOptimal,
        stride: 0,
    };
    // Room for a GPU's training-optimal layout too.
    let grad_bytes =
        (converted_size(M as u32, N as u32, opt).unwrap() as usize).max(2 * M * N * 4 + 2048);
    let mut res = Resources::default();
    res.buffers
        .insert((0, 0), data.iter().flat_map(|h| h.to_le_bytes()).collect());
    res.buffers.insert((0, 1), vec![0; grad_bytes]);
    res.buffers.insert((0, 2), vec![0; 16 + M * 4]);
    res.buffers.insert((0, 3), vec![0; 32 + N * 2 + 2]);
    let before = res.buffers.clone();
    run_observed(
        &module,
        &mut res,
        [groups, 1, 1],
        EngineOptions {
            threads: 4,
            ..Default::default()
        },
    );
    let rm = MatrixSide {
        ty: Ct::F32,
        layout: Layout::RowMajor,
        stride: 0,
    };
    let mut g = vec![0u8; M * N * 4];
    convert_matrix(M as u32, N as u32, opt, &res.buffers[&(0, 1)], rm, &mut g).unwrap();
    let g = f32s(&g);
    let sum = f32s(&res.buffers[&(0, 2)][16..]);
    let sumh: Vec<f64> = res.buffers[&(0, 3)][32..32 + 2 * N]
        .chunks(2)
        .map(|c| f16::from_le_bytes([c[0], c[1]]).to_f64())
        .collect();
    let (mut gc, mut sc, mut hc) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..M {
        for j in 0..N {
            let exact: f64 = (0..inv).map(|l| a[l][i] * b[l][j]).sum();
            assert_eq!(g[i * N + j] as f64, exact, "grad[{i}][{j}]");
            let mag: f64 = (0..inv).map(|l| (a[l][i] * b[l][j]).abs()).sum();
            gc.push(((i * N + j) * 4, Ct::F32, exact, mag, 0.0));
        }
        let exact: f64 = (0..inv).map(|l| a[l][i]).sum();
        assert_eq!(sum[i] as f64, exact, "sum[{i}]");
        sc.push((
            16 + i * 4,
            Ct::F32,
            exact,
            (0..inv).map(|l| a[l][i].abs()).sum(),
            0.0,
        ));
    }
    for j in 0..N {
        let exact: f64 = if acc == Ct::F16 {
            (0..inv).map(|l| b[l][j]).sum()
        } else {
            0.0
        };
        assert_eq!(sumh[j], exact, "sumh[{j}]");
        hc.push((
            32 + j * 2,
            Ct::F16,
            exact,
            (0..inv).map(|l| b[l][j].abs()).sum(),
            0.0,
        ));
    }
    let grad = Segment {
        binding: (0, 1),
        offset: 0,
        rows: M as u32,
        cols: N as u32,
        ty: acc,
        layout: Layout::TrainingOptimal,
        src: Vec::new(),
        room: grad_bytes,
    };
    Export {
        name: format!("training-{}-groups{groups}", acc.name()),
        module: &module,
        groups: [groups, 1, 1],
        buffers: before,
        segments: Vec::new(),
        outputs: vec![
            ((0, 1), Some(grad), gc, res.buffers[&(0, 1)].clone()),
            ((0, 2), None, sc, res.buffers[&(0, 2)].clone()),
            ((0, 3), None, hc, res.buffers[&(0, 3)].clone()),
        ],
        combination: None,
        training: Some(acc),
    }
    .write();
}

#[test]
fn outer_product_and_reduce_sum_accumulate_atomically_in_f32() {
    training(Ct::F32, 4);
}

#[test]
fn outer_product_accumulates_in_f16() {
    training(Ct::F16, 1);
}

/// The MLP of `tests/coopvec/mlp.comp`: weights (row-major f32 → f16), biases, the module, and
/// the buffer of weights and biases in the layout the shader reads.
pub struct Mlp {
    /// Layer weights W (rows × cols, row-major, f16-exact values) and biases.
    pub layers: Vec<(usize, usize, Vec<f64>, Vec<f64>)>,
    /// The weights buffer.
    pub buffer: Vec<u8>,
    /// The GLSL source with its offsets defined.
    pub src: String,
    /// The weight matrices as a GPU fills them (its own optimal layout).
    segments: Vec<Segment>,
}

pub fn mlp(seed: u64) -> Mlp {
    let dims = [(32usize, 16usize), (32, 32), (8, 32)];
    let mut r = Rng(seed);
    let mut buffer = Vec::new();
    let mut defines = String::new();
    let mut layers = Vec::new();
    let mut segments = Vec::new();
    let opt = MatrixSide {
        ty: Ct::F16,
        layout: Layout::InferencingOptimal,
        stride: 0,
    };
    let rm = MatrixSide {
        ty: Ct::F16,
        layout: Layout::RowMajor,
        stride: 0,
    };
    for (n, &(rows, cols)) in dims.iter().enumerate() {
        // He-like scale keeps activations of order 1 through the layers.
        let scale = (2.0 / cols as f64).sqrt();
        let w: Vec<f64> = (0..rows * cols)
            .map(|_| f16::from_f64((r.below(2001) as f64 - 1000.0) / 1000.0 * scale).to_f64())
            .collect();
        let b: Vec<f64> = (0..rows)
            .map(|_| f16::from_f64((r.below(2001) as f64 - 1000.0) / 10000.0).to_f64())
            .collect();
        let src: Vec<u8> = w
            .iter()
            .flat_map(|v| f16::from_f64(*v).to_le_bytes())
            .collect();
        // Room for a GPU's optimal layout too: four times the dense size plus 4 KiB.
        let size = (converted_size(rows as u32, cols as u32, opt).unwrap() as usize)
            .max(8 * rows * cols + 4096)
            .next_multiple_of(64);
        let at = buffer.len();
        buffer.resize(at + size, 0);
        convert_matrix(rows as u32, cols as u32, rm, &src, opt, &mut buffer[at..]).unwrap();
        segments.push(Segment {
            binding: (0, 1),
            offset: at,
            rows: rows as u32,
            cols: cols as u32,
            ty: Ct::F16,
            layout: Layout::InferencingOptimal,
            src: src.clone(),
            room: size,
        });
        defines += &format!("#define W{} {at}\n", n + 1);
        let at = buffer.len();
        buffer.extend(b.iter().flat_map(|v| f16::from_f64(*v).to_le_bytes()));
        buffer.resize((buffer.len()).next_multiple_of(64), 0);
        defines += &format!("#define B{} {at}\n", n + 1);
        layers.push((rows, cols, w, b));
    }
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/coopvec/mlp.comp"
    ))
    .unwrap()
    .replacen("#version 460\n", &format!("#version 460\n{defines}"), 1);
    Mlp {
        layers,
        buffer,
        src,
        segments,
    }
}

#[test]
fn three_layer_f16_mlp_with_relu() {
    let net = mlp(31);
    let Some(module) = glsl(&net.src) else {
        return;
    };
    let groups = 4;
    let inv = groups * LANES;
    let mut r = Rng(32);
    let x: Vec<f64> = (0..inv * 16)
        .map(|_| f16::from_f64((r.below(2001) as f64 - 1000.0) / 1000.0).to_f64())
        .collect();
    let mut res = Resources::default();
    res.buffers.insert(
        (0, 0),
        x.iter()
            .flat_map(|v| f16::from_f64(*v).to_le_bytes())
            .collect(),
    );
    res.buffers.insert((0, 1), net.buffer.clone());
    res.buffers.insert((0, 2), vec![0; inv * 16]);
    let before = res.buffers.clone();
    run_observed(
        &module,
        &mut res,
        [groups as u32, 1, 1],
        EngineOptions::default(),
    );
    let mut checks = Vec::new();
    let out: Vec<f64> = res.buffers[&(0, 2)]
        .chunks(2)
        .map(|c| f16::from_le_bytes([c[0], c[1]]).to_f64())
        .collect();
    for i in 0..inv {
        // Exact f64 forward pass, and the same pass over absolute values: every layer's f16
        // rounding (and f32 accumulation) errs by at most 2^-11 (+ 2^-24·K) of that layer's
        // absolute-value sum, and W·, + b, ReLU pass errors on with the same absolute weights,
        // so 3 layers stay within 3 · (2^-11 + 32·2^-24) of the absolute pass (plus f16
        // subnormal spacing).
        let mut v: Vec<f64> = x[i * 16..(i + 1) * 16].to_vec();
        let mut va: Vec<f64> = v.iter().map(|t| t.abs()).collect();
        for (n, (rows, cols, w, b)) in net.layers.iter().enumerate() {
            let mut nv = vec![0.0; *rows];
            let mut na = vec![0.0; *rows];
            for j in 0..*rows {
                nv[j] = (0..*cols).map(|k| w[j * cols + k] * v[k]).sum::<f64>() + b[j];
                na[j] = (0..*cols)
                    .map(|k| (w[j * cols + k] * va[k]).abs())
                    .sum::<f64>()
                    + b[j].abs();
                if n < 2 {
                    nv[j] = nv[j].max(0.0);
                }
            }
            v = nv;
            va = na;
        }
        for j in 0..8 {
            let got = out[i * 8 + j];
            let tol = 3.0 * (2f64.powi(-11) + 32.0 * 2f64.powi(-24)) * va[j] + 3.0 * 2f64.powi(-24);
            assert!(
                (got - v[j]).abs() <= tol,
                "invocation {i} output {j}: {got} vs {} (bound {tol})",
                v[j]
            );
            checks.push(((i * 8 + j) * 2, Ct::F16, v[j], va[j], tol));
        }
    }
    Export {
        name: "mlp-16-32-32-8-f16-relu".into(),
        module: &module,
        groups: [groups as u32, 1, 1],
        buffers: before,
        segments: net.segments.clone(),
        outputs: vec![((0, 2), None, checks, res.buffers[&(0, 2)].clone())],
        combination: Some(
            [Ct::F16.raw(); 5]
                .into_iter()
                .chain([0])
                .collect::<Vec<_>>()
                .try_into()
                .unwrap(),
        ),
        training: None,
    }
    .write();
}

/// `tests/coopvec/saturate.spvasm` with K from spec constant 0, on a buffer whose words 100..104
/// hold each invocation's offset for a second load.
fn saturate_run(
    k: u32,
    offsets: [u32; 4],
    robust: bool,
) -> Result<Vec<i32>, coopmat_exec::ExecError> {
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/coopvec/saturate.spvasm"
    ))
    .unwrap();
    let m = spvasm(&src).unwrap();
    let mut words = vec![0u32; 256];
    let inputs: [[i32; 4]; 4] = [
        [300, -300, 5, -5],
        [127, -128, 128, -129],
        [1, 2, 3, 4],
        [-1000, 1000, 0, 77],
    ];
    for (l, v) in inputs.iter().enumerate() {
        for (c, x) in v.iter().enumerate() {
            words[l * 4 + c] = *x as u32;
        }
    }
    // Matrix at byte 512: 2 rows of UINT8, stride 16.
    let w: [[u8; 4]; 2] = [[1, 2, 3, 200], [255, 0, 1, 7]];
    let mut bytes = bytes_u32(&words);
    for (j, row) in w.iter().enumerate() {
        bytes[512 + j * 16..512 + j * 16 + 4].copy_from_slice(row);
    }
    for (l, o) in offsets.iter().enumerate() {
        bytes[(100 + l) * 4..(101 + l) * 4].copy_from_slice(&o.to_le_bytes());
    }
    let mut spec = coopmat_exec::SpecConstants::new();
    spec.insert(0, k as u64);
    let opts = EngineOptions {
        robust,
        ..Default::default()
    };
    let p = Pipeline::compile(&m, "main", &spec, &opts)?;
    let mut res = Resources::default();
    res.buffers.insert((0, 0), bytes);
    p.dispatch(&mut res, [1, 1, 1])?;
    let out = i32s(&res.buffers[&(0, 0)]);
    // Per invocation: r[0], r[1] at 576 + 32·l, the second load's two words 16 bytes later.
    Ok((0..4)
        .flat_map(|l| {
            [
                out[144 + 8 * l],
                out[145 + 8 * l],
                out[148 + 8 * l],
                out[149 + 8 * l],
            ]
        })
        .collect())
}

#[test]
fn signed_int_inputs_saturate_to_int8_and_spec_constant_lengths_work() {
    let inputs: [[i64; 4]; 4] = [
        [300, -300, 5, -5],
        [127, -128, 128, -129],
        [1, 2, 3, 4],
        [-1000, 1000, 0, 77],
    ];
    let w: [[i64; 4]; 2] = [[1, 2, 3, 200], [255, 0, 1, 7]];
    for k in [4usize, 3] {
        let got = saturate_run(k as u32, [0, 16, 32, 48], false).unwrap();
        for l in 0..4 {
            for j in 0..2 {
                let want: i64 = (0..k)
                    .map(|c| inputs[l][c].clamp(-128, 127) * w[j][c])
                    .sum();
                assert_eq!(
                    got[l * 4 + j] as i64,
                    want,
                    "K = {k}, invocation {l}, row {j}"
                );
            }
            // The second load read words 4·l, 4·l + 1 (offset 16·l).
            assert_eq!(
                &got[l * 4 + 2..l * 4 + 4],
                &[inputs[l][0] as i32, inputs[l][1] as i32]
            );
        }
    }
}

#[test]
fn misaligned_and_out_of_bounds_vector_loads_name_the_invocation() {
    let e = saturate_run(4, [0, 8, 32, 48], false).unwrap_err();
    assert_eq!(e.kind, ErrorKind::UndefinedBehavior, "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("VUID-RuntimeSpirv-OpCooperativeVectorLoadNV-10099"),
        "{msg}"
    );
    assert!(msg.contains("local invocation (1, 0, 0)"), "{msg}");
    assert!(msg.contains("OpCooperativeVectorLoadNV"), "{msg}");
    let e = saturate_run(4, [0, 16, 4096, 48], false).unwrap_err();
    assert_eq!(e.kind, ErrorKind::OutOfBounds, "{e}");
    assert!(e.to_string().contains("local invocation (2, 0, 0)"), "{e}");
    // robustBufferAccess: a vector past the end reads as zero.
    let got = saturate_run(4, [0, 16, 1024, 48], true).unwrap();
    assert_eq!(&got[10..12], &[0, 0]);
}

#[test]
fn f16_products_with_short_and_long_k() {
    // K from one to eight 16-wide steps: how rounding grows with K (the GPU comparison in
    // BENCHMARKS.md reads these too).
    for k in [16, 32, 128] {
        let mut c = f16_case(Layout::RowMajor, false, false);
        c.m = 16;
        c.k = k;
        c.skip = 0;
        c.run(40 + k as u64);
    }
}

/// The GLSL type and component type of a profile's short type name.
fn glsl_type(name: &str) -> (&'static str, Ct) {
    match name {
        "float16" => ("float16_t", Ct::F16),
        "float32" => ("float", Ct::F32),
        "sint32" => ("int32_t", Ct::S32),
        "uint32" => ("uint32_t", Ct::U32),
        "sint8" => ("int8_t", Ct::S8),
        "uint8" => ("uint8_t", Ct::U8),
        n => panic!("no GLSL type for {n}"),
    }
}

#[test]
fn every_combination_the_h100_profile_lists() {
    // The combinations vkGetPhysicalDeviceCooperativeVectorPropertiesNV returned on the H100
    // (crates/val/profiles/nvidia-h100-580.json), each in a row-major and an optimal layout
    // (fp8: optimal only), with bias, transposed where the device allows it.
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../val/profiles/nvidia-h100-580.json"
    ))
    .unwrap();
    let profile: serde_json::Value = serde_json::from_str(&text).unwrap();
    let combos = profile["cooperative_vector"]["combinations"]
        .as_array()
        .unwrap();
    assert_eq!(combos.len(), 16);
    let ct = |v: &serde_json::Value| Ct::from_name(v.as_str().unwrap()).unwrap();
    for (n, c) in combos.iter().enumerate() {
        let matrix = ct(&c["matrix_interpretation"]);
        let fp8 = matches!(matrix, Ct::E4M3 | Ct::E5M2);
        let float = matrix.is_float();
        let mut layouts = vec![(Layout::InferencingOptimal, false)];
        if !fp8 {
            layouts.push((Layout::RowMajor, false));
        }
        if c["transpose"].as_bool().unwrap() {
            layouts.push((Layout::TrainingOptimal, true));
        }
        for (layout, transpose) in layouts {
            MatMul {
                input: glsl_type(c["input_type"].as_str().unwrap()),
                input_interp: ct(&c["input_interpretation"]),
                matrix,
                bias: Some(ct(&c["bias_interpretation"])),
                result: glsl_type(c["result_type"].as_str().unwrap()),
                m: if float { 24 } else { 16 },
                k: if float { 40 } else { 36 },
                layout,
                transpose,
                skip: 3,
            }
            .run(100 + n as u64);
        }
    }
}

#[test]
fn a_hostile_matrix_size_is_an_error_not_an_allocation() {
    // saturate.spvasm with M = K = spec constant 0: 8192 x 8192 = 2^26 elements > 2^24.
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/coopvec/saturate.spvasm"
    ))
    .unwrap()
    .replace(
        "%v2 = OpTypeCooperativeVectorNV %int %uint2",
        "%v2 = OpTypeCooperativeVectorNV %int %k",
    )
    .replace("%uint2 %k %rowmajor", "%k %k %rowmajor");
    let m = spvasm(&src).unwrap();
    let mut spec = coopmat_exec::SpecConstants::new();
    spec.insert(0, 8192);
    let opts = EngineOptions {
        robust: true,
        ..Default::default()
    };
    let p = Pipeline::compile(&m, "main", &spec, &opts).unwrap();
    let mut res = Resources::default();
    res.buffers.insert((0, 0), vec![0; 1024]);
    let e = p.dispatch(&mut res, [1, 1, 1]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unsupported, "{e}");
    assert!(
        e.to_string()
            .contains("8192x8192 matrix is larger than the engine's limit"),
        "{e}"
    );
}

#[test]
fn mutated_cooperative_vector_modules_never_panic() {
    // saturate.spvasm with single words replaced: whatever parses must compile and dispatch to
    // a result or an error, never a panic (hostile input, issue "no panic, abort, hang").
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/coopvec/saturate.spvasm"
    ))
    .unwrap();
    let words = coopmat_spirv::asm::assemble(&src, &Default::default()).unwrap();
    let mut next = coopmat_testkit::xorshift64(0x2545_F491_4F6C_DD1D);
    let rounds: usize = std::env::var("COOPMAT_FUZZ_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400);
    let opts = EngineOptions {
        instruction_budget: 100_000,
        threads: 1,
        ..Default::default()
    };
    let mut ran = 0;
    for round in 0..rounds {
        let mut w = words.clone();
        let pos = 5 + (next() as usize) % (w.len() - 5);
        let r = next();
        w[pos] = match r % 4 {
            0 => (r >> 8) as u32,
            1 => w[pos].wrapping_add(1),
            2 => (r >> 8) as u32 % 64,
            _ => w[pos] ^ (1 << ((r >> 8) % 32)),
        };
        let Ok(m) = coopmat_spirv::Module::from_words(&w) else {
            continue;
        };
        if std::env::var_os("COOPMAT_FUZZ_TRACE").is_some() {
            // A stack overflow aborts without unwinding: name the round first.
            let path = std::env::temp_dir().join("coopvec-mutant-last.spv");
            let bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
            std::fs::write(&path, bytes).unwrap();
        }
        let result = std::panic::catch_unwind(|| {
            let p = Pipeline::compile(&m, "main", &Default::default(), &opts)?;
            let mut res = Resources::default();
            res.buffers.insert((0, 0), vec![0; 1024]);
            p.dispatch(&mut res, [1, 1, 1]).map(|_| ())
        });
        if result.is_err() {
            // Keep the module for reproduction: `coopmat dis` it.
            let path = std::env::temp_dir().join(format!("coopvec-mutant-{round}.spv"));
            let bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
            std::fs::write(&path, bytes).unwrap();
            panic!(
                "round {round}: word {pos} set to {:#x} panicked ({})",
                w[pos],
                path.display()
            );
        }
        ran += 1;
    }
    assert!(ran > rounds / 4, "only {ran} mutated modules parsed");
}

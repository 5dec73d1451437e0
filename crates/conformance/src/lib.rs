//! A generated conformance suite for the cooperative-matrix family, in the spirit of the Vulkan
//! CTS's cooperative-matrix tests and written here: families of cases (loads and stores over
//! types, uses, layouts, strides and storage classes; multiply-add over every type combination a
//! device lists, with signedness and saturation; conversions; element-wise arithmetic;
//! reductions and per-element operations; tensor layouts, views, clamp modes, block sizes and
//! decode functions; flexible dimensions at Subgroup and Workgroup scope; QCOM conversions;
//! cooperative-vector matrix-vector products), each with its inputs and the results a reference of
//! its own computes (`reference.rs`: no engine code), run on the engine or on a Vulkan device and
//! compared per component type.
//!
//! Cases are generated for a device's cooperative-matrix property list (a `coopmat-val` profile,
//! or what the device reports), so that a device runs the shapes and types it claims.

pub mod coopvec;
pub mod families;
pub mod qcom;
pub mod reference;
pub mod spv;
pub mod tensor;

use std::collections::BTreeMap;

/// A component type of the cases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Comp {
    /// float16
    F16,
    /// bfloat16
    BF16,
    /// float32
    F32,
    /// sint8
    S8,
    /// uint8
    U8,
    /// sint32
    S32,
    /// uint32
    U32,
}

impl Comp {
    /// The name profiles and case names use.
    pub fn name(self) -> &'static str {
        match self {
            Comp::F16 => "float16",
            Comp::BF16 => "bfloat16",
            Comp::F32 => "float32",
            Comp::S8 => "sint8",
            Comp::U8 => "uint8",
            Comp::S32 => "sint32",
            Comp::U32 => "uint32",
        }
    }

    /// From a profile's name.
    pub fn parse(s: &str) -> Option<Comp> {
        [
            Comp::F16,
            Comp::BF16,
            Comp::F32,
            Comp::S8,
            Comp::U8,
            Comp::S32,
            Comp::U32,
        ]
        .into_iter()
        .find(|c| c.name() == s)
    }

    /// Bits.
    pub fn bits(self) -> u32 {
        match self {
            Comp::S8 | Comp::U8 => 8,
            Comp::F16 | Comp::BF16 => 16,
            Comp::F32 | Comp::S32 | Comp::U32 => 32,
        }
    }

    /// Bytes.
    pub fn bytes(self) -> u32 {
        self.bits() / 8
    }

    /// Floating point.
    pub fn is_float(self) -> bool {
        matches!(self, Comp::F16 | Comp::BF16 | Comp::F32)
    }

    /// Signed integer.
    pub fn is_signed_int(self) -> bool {
        matches!(self, Comp::S8 | Comp::S32)
    }
}

/// How an output is compared with its expected bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compare {
    /// Every bit (integers; floats whose results are exact).
    Exact,
    /// Floats: any NaN matches any NaN, otherwise within `ulps` units in the last place.
    Float {
        /// Allowed distance in ulps.
        ulps: u32,
    },
}

/// One output buffer of a case.
#[derive(Clone, Debug)]
pub struct Output {
    /// (set, binding).
    pub binding: (u32, u32),
    /// Component type of its elements.
    pub comp: Comp,
    /// The reference's result.
    pub expected: Vec<u8>,
    /// How it is compared.
    pub compare: Compare,
    /// Per element, the other result the spec allows where it leaves a choice (a narrowing
    /// float conversion may round an inexact value to either neighbour): an element matching
    /// this instead of `expected` passes too.
    pub alternative: Option<Vec<u8>>,
    /// Row length, to report coordinates (elements per row of the output matrix).
    pub row_len: u32,
}

/// One case.
#[derive(Clone, Debug)]
pub struct Case {
    /// `family/parameters`.
    pub name: String,
    /// Family name.
    pub family: &'static str,
    /// The module (SPIR-V text assembled by coopmat).
    pub text: String,
    /// Workgroup counts.
    pub groups: [u32; 3],
    /// Input buffers by (set, binding) (outputs are given zeroed at their expected length).
    pub inputs: BTreeMap<(u32, u32), Vec<u8>>,
    /// Outputs.
    pub outputs: Vec<Output>,
}

impl Case {
    /// A one-workgroup case with one input at (0, 0) and one output at (0, 1).
    #[allow(clippy::too_many_arguments)]
    pub fn single(
        name: String,
        family: &'static str,
        text: String,
        input: Vec<u8>,
        comp: Comp,
        expected: Vec<u8>,
        compare: Compare,
        row_len: u32,
    ) -> Case {
        Case {
            name,
            family,
            text,
            groups: [1, 1, 1],
            inputs: BTreeMap::from([((0, 0), input)]),
            outputs: vec![Output {
                binding: (0, 1),
                comp,
                expected,
                compare,
                row_len,
                alternative: None,
            }],
        }
    }
}

/// What a device offers the suite: its subgroup size and cooperative-matrix property list.
#[derive(Clone, Debug)]
pub struct Target {
    /// A name for reports.
    pub name: String,
    /// Subgroup size (every case is one subgroup).
    pub subgroup_size: u32,
    /// (M, N, K, A, B, C, Result, saturating).
    pub muladd: Vec<MulAddShape>,
    /// VK_NV_cooperative_matrix2 reductions, conversions and per-element operations.
    pub coop2_functions: bool,
    /// VK_NV_cooperative_matrix2 tensor addressing and block loads.
    pub tensor_addressing: bool,
    /// VkCooperativeVectorPropertiesNV combinations (empty without VK_NV_cooperative_vector).
    pub coopvec: Vec<coopvec::Combination>,
    /// VkCooperativeMatrixFlexibleDimensionsPropertiesNV entries (where the device has
    /// cooperativeMatrixFlexibleDimensions; Workgroup scope where it has that feature too).
    pub flexible: Vec<FlexShape>,
    /// The profile the target comes from: each case is validated against it, and one that
    /// uses what the device does not list (a matrix type outside its lists) does not apply.
    pub profile: Option<coopmat_val::Profile>,
}

/// One entry of a cooperative-matrix property list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct MulAddShape {
    /// MSize, NSize, KSize.
    pub mnk: [u32; 3],
    /// AType, BType, CType, ResultType.
    pub types: [Comp; 4],
    /// saturatingAccumulation.
    pub saturating: bool,
}

/// One entry of a flexible-dimensions property list: a multiply-add of any M, N, K that are
/// multiples of the granularities, at a scope (and, at Workgroup scope, a workgroup size).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct FlexShape {
    /// MGranularity, NGranularity, KGranularity.
    pub granularity: [u32; 3],
    /// AType, BType, CType, ResultType.
    pub types: [Comp; 4],
    /// The matrices' scope.
    pub scope: spv::Scope,
    /// workgroupInvocations (Workgroup scope).
    pub workgroup_invocations: u32,
}

impl Target {
    /// From a coopmat-val device profile (subgroup-scope entries of known types).
    pub fn from_profile(p: &coopmat_val::Profile) -> Target {
        let muladd = p
            .cooperative_matrix
            .iter()
            .filter(|e| e.scope == "subgroup")
            .filter_map(|e| {
                Some(MulAddShape {
                    mnk: [e.m, e.n, e.k],
                    types: [
                        Comp::parse(&e.a)?,
                        Comp::parse(&e.b)?,
                        Comp::parse(&e.c)?,
                        Comp::parse(&e.result)?,
                    ],
                    saturating: e.saturating,
                })
            })
            .collect();
        let workgroup_scope = p.features.workgroup_scope != 0;
        let flexible = if p.features.flexible_dimensions == 0 {
            Vec::new()
        } else {
            p.flexible_dimensions
                .iter()
                .filter(|e| !e.saturating)
                .filter_map(|e| {
                    let scope = match e.scope.as_str() {
                        "subgroup" => spv::Scope::Subgroup,
                        "workgroup" if workgroup_scope && e.workgroup_invocations > 0 => {
                            spv::Scope::Workgroup
                        }
                        _ => return None,
                    };
                    Some(FlexShape {
                        granularity: [e.m, e.n, e.k],
                        types: [
                            Comp::parse(&e.a)?,
                            Comp::parse(&e.b)?,
                            Comp::parse(&e.c)?,
                            Comp::parse(&e.result)?,
                        ],
                        scope,
                        workgroup_invocations: e.workgroup_invocations,
                    })
                })
                .collect()
        };
        let coopvec = p
            .cooperative_vector
            .iter()
            .flat_map(|cv| &cv.combinations)
            .filter_map(|e| {
                let t = coopmat_spirv::coopvec::ComponentType::from_name;
                Some([
                    t(&e.input_type)?,
                    t(&e.input_interpretation)?,
                    t(&e.matrix_interpretation)?,
                    t(&e.bias_interpretation)?,
                    t(&e.result_type)?,
                ])
            })
            .collect();
        Target {
            name: p.name.clone(),
            subgroup_size: p.subgroup_size.max(1),
            muladd,
            coopvec,
            flexible,
            coop2_functions: p.features.reductions != 0
                && p.features.per_element_operations != 0
                && p.features.conversions != 0,
            tensor_addressing: p.features.tensor_addressing != 0 && p.features.block_loads != 0,
            profile: Some(p.clone()),
        }
    }

    /// The target with SaturatingAccumulation on every integer multiply-add tuple as well (the
    /// engine has it for all; its device profile, which the coopmat driver reports, lists none).
    pub fn with_saturating_everywhere(mut self) -> Target {
        for s in self.muladd.clone() {
            if !s.types[3].is_float() && !s.saturating {
                self.muladd.push(MulAddShape {
                    saturating: true,
                    ..s
                });
            }
        }
        if let Some(p) = &mut self.profile {
            for e in p.cooperative_matrix.clone() {
                if !e.saturating && !Comp::parse(&e.result).is_some_and(Comp::is_float) {
                    p.cooperative_matrix
                        .push(coopmat_val::profile::MatrixEntry {
                            saturating: true,
                            ..e
                        });
                }
            }
        }
        self
    }

    /// Whether `case` is for this target: None when it validates against the profile (or there
    /// is none); `Some(Err)` for a module invalid whatever the device (a fault of the generator),
    /// `Some(Ok(reason))` when only the device profile's rules refuse it.
    pub fn refuses(&self, case: &Case) -> Option<Result<String, String>> {
        let words = match assemble(case) {
            Ok(w) => w,
            Err(e) => return Some(Err(format!("assembling: {e}"))),
        };
        let m = match coopmat_spirv::Module::from_words(&words) {
            Ok(m) => m,
            Err(e) => return Some(Err(e.to_string())),
        };
        let opts = coopmat_val::ValidateOptions {
            target_env: coopmat_val::TargetEnv::Vulkan(3),
            profile: self.profile.clone(),
        };
        let errors: Vec<_> = coopmat_val::validate(&m, &opts)
            .into_iter()
            .filter(|d| d.severity == coopmat_val::Severity::Error)
            .collect();
        if let Some(d) = errors.iter().find(|d| !d.rule.id.starts_with("VK-Profile")) {
            return Some(Err(format!("{}: {}", d.rule.id, d.message)));
        }
        errors
            .first()
            .map(|d| Ok(format!("{}: {}", d.rule.id, d.message)))
    }
}

/// One case's outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every output matched.
    Pass,
    /// An output differed: the first differences, described.
    Fail(String),
    /// The case could not run (the runner's error).
    Error(String),
}

/// Compares `got` with an output's expectation; None when they agree, else the first
/// differences with their (row, column).
pub fn compare(o: &Output, got: &[u8]) -> Option<String> {
    let size = o.comp.bytes() as usize;
    if got.len() < o.expected.len() {
        return Some(format!(
            "binding {:?}: {} bytes, expected {}",
            o.binding,
            got.len(),
            o.expected.len()
        ));
    }
    let mut bad = Vec::new();
    let mut count = 0;
    for (i, (w, g)) in o.expected.chunks(size).zip(got.chunks(size)).enumerate() {
        let (we, ge) = (reference::bits(w), reference::bits(g));
        let close = |w: u64| match o.compare {
            Compare::Exact => w == ge,
            Compare::Float { ulps } => reference::float_close(o.comp, w, ge, ulps),
        };
        let other = o
            .alternative
            .as_ref()
            .and_then(|a| a.get(i * size..(i + 1) * size))
            .map(reference::bits);
        let ok = close(we) || other.is_some_and(close);
        if !ok {
            count += 1;
            if bad.len() < 4 {
                let (r, c) = (i as u32 / o.row_len.max(1), i as u32 % o.row_len.max(1));
                bad.push(format!(
                    "({r},{c}): expected {}, got {}",
                    reference::show(o.comp, we),
                    reference::show(o.comp, ge)
                ));
            }
        }
    }
    (count > 0).then(|| {
        format!(
            "binding {:?}: {count} element(s) differ; {}",
            o.binding,
            bad.join("; ")
        )
    })
}

/// The buffers a case is dispatched with: inputs, and each output zeroed at its length.
pub fn buffers_of(case: &Case) -> BTreeMap<(u32, u32), Vec<u8>> {
    let mut b = case.inputs.clone();
    for o in &case.outputs {
        b.insert(o.binding, vec![0; o.expected.len()]);
    }
    b
}

/// Checks the buffers after a dispatch.
pub fn verdict_of(case: &Case, buffers: &BTreeMap<(u32, u32), Vec<u8>>) -> Verdict {
    let mut fails = Vec::new();
    for o in &case.outputs {
        match buffers.get(&o.binding) {
            None => fails.push(format!("binding {:?} missing", o.binding)),
            Some(got) => fails.extend(compare(o, got)),
        }
    }
    if fails.is_empty() {
        Verdict::Pass
    } else {
        Verdict::Fail(fails.join("; "))
    }
}

/// The module's words.
pub fn assemble(case: &Case) -> Result<Vec<u32>, String> {
    let opts = coopmat_spirv::asm::AsmOptions {
        target_env: coopmat_spirv::asm::TargetEnv::from_name("vulkan1.3"),
        ..Default::default()
    };
    coopmat_spirv::asm::assemble(&case.text, &opts).map_err(|e| e.render(&case.name, &case.text))
}

/// Runs a case on the engine with `subgroup_size` (a module with a DecodeVectorFunc under the
/// vector decode policy, both decode forms checked against each other).
pub fn run_engine(case: &Case, subgroup_size: u32) -> Verdict {
    let words = match assemble(case) {
        Ok(w) => w,
        Err(e) => return Verdict::Error(format!("assembling: {e}")),
    };
    let m = match coopmat_spirv::Module::from_words(&words) {
        Ok(m) => m,
        Err(e) => return Verdict::Error(e.to_string()),
    };
    // With a DecodeVectorFunc, the engine calls it wherever the spec allows and checks it
    // against DecodeFunc on every group: the vector path is what such a case is about.
    let decode_vector = m
        .capabilities()
        .any(|c| c == coopmat_spirv::grammar::capability::CooperativeMatrixDecodeVectorNV);
    let opts = coopmat_exec::EngineOptions {
        subgroup_size,
        threads: 1,
        decode_policy: if decode_vector {
            coopmat_exec::DecodePolicy::Vector
        } else {
            coopmat_exec::DecodePolicy::Scalar
        },
        check_decode: decode_vector,
        ..Default::default()
    };
    let p = match coopmat_exec::Pipeline::compile(&m, "main", &Default::default(), &opts) {
        Ok(p) => p,
        Err(e) => return Verdict::Error(e.to_string()),
    };
    let mut res = coopmat_exec::Resources {
        buffers: buffers_of(case),
        ..Default::default()
    };
    match p.dispatch(&mut res, case.groups) {
        Ok(_) => verdict_of(case, &res.buffers),
        Err(e) => Verdict::Error(e.to_string()),
    }
}

/// The module a device runs for a case: the case's own, or, where the device lacks
/// SPV_QCOM_cooperative_matrix_conversion or SPV_NV_cooperative_matrix_decode_vector, the module
/// rewritten by `qcom-to-khr` / `strip-decode-vector` (the lowerings the suite checks this way),
/// with the passes applied.
pub fn for_device(
    gpu: &coopmat_gpu::Gpu,
    words: &[u32],
) -> Result<(Vec<u8>, Vec<&'static str>), String> {
    let mut m = coopmat_spirv::Module::from_words(words).map_err(|e| e.to_string())?;
    let mut passes = Vec::new();
    let lacks = |m: &coopmat_spirv::Module, name: &str| {
        let line = format!("capability {name} ");
        gpu.missing_for(m).iter().any(|l| l.starts_with(&line))
    };
    if lacks(&m, "CooperativeMatrixConversionQCOM") {
        coopmat_lower::qcom_to_khr(&mut m).map_err(|e| format!("qcom-to-khr: {e}"))?;
        passes.push("qcom-to-khr");
    }
    if lacks(&m, "CooperativeMatrixDecodeVectorNV") {
        coopmat_lower::strip_decode_vector(&mut m)
            .map_err(|e| format!("strip-decode-vector: {e}"))?;
        passes.push("strip-decode-vector");
    }
    Ok((m.to_bytes(m.endian), passes))
}

/// Runs a case on a Vulkan device (through [`for_device`]'s lowerings where it needs them):
/// the verdict and the lowerings applied.
pub fn run_gpu(
    gpu: &coopmat_gpu::Gpu,
    case: &Case,
    subgroup_size: Option<u32>,
) -> (Verdict, Vec<&'static str>) {
    let words = match assemble(case) {
        Ok(w) => w,
        Err(e) => return (Verdict::Error(format!("assembling: {e}")), Vec::new()),
    };
    let (bytes, passes) = match for_device(gpu, &words) {
        Ok(lowered) => lowered,
        Err(e) => return (Verdict::Error(e), Vec::new()),
    };
    let spec = BTreeMap::new();
    let d = coopmat_gpu::Dispatch {
        module: &bytes,
        entry: "main",
        spec: &spec,
        push: &[],
        groups: case.groups,
        repeat: 1,
        subgroup_size,
        addresses: &[],
    };
    let mut buffers = buffers_of(case);
    let verdict = match gpu.dispatch(&d, &mut buffers) {
        Ok(_) => verdict_of(case, &buffers),
        Err(e) => Verdict::Error(e.to_string()),
    };
    (verdict, passes)
}

/// Every case of every family for `target`.
pub fn cases(target: &Target) -> Vec<Case> {
    let mut out = Vec::new();
    out.extend(families::load_store(target));
    out.extend(families::muladd(target));
    out.extend(families::flexible(target));
    out.extend(families::convert(target));
    out.extend(families::elementwise(target));
    if target.coop2_functions {
        out.extend(families::reduce(target));
        out.extend(families::per_element(target));
    }
    if target.tensor_addressing {
        out.extend(tensor::tensor(target));
    }
    out.extend(coopvec::coopvec(target));
    // Every device: through qcom-to-khr where it lacks the extension.
    out.extend(qcom::qcom(target));
    out
}

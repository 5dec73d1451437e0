//! `info::module_info` against an independent reference: the text spirv-dis (SPIRV-Tools)
//! prints for the same corpus modules, read back with a tiny line parser here.

use coopmat_spirv::info::{self, MatrixFlavor, ModuleInfo, Value};
use std::collections::{BTreeMap, HashMap};
use std::process::Command;

/// What the test reads out of `spirv-dis --raw-id` text.
#[derive(Default)]
struct Dis {
    version: String,
    generator: String,
    bound: u32,
    capabilities: Vec<String>,
    extensions: Vec<String>,
    imports: Vec<String>,
    memory_model: Vec<String>,
    /// (model, function id, name)
    entry_points: Vec<(String, String, String)>,
    /// function id -> (mode, operands)
    modes: HashMap<String, (String, Vec<String>)>,
    spec_ids: HashMap<String, u32>,
    workgroup_size: Option<String>,
    /// id -> (opcode, operands after the result)
    defs: HashMap<String, (String, Vec<String>)>,
    /// opcode name -> count
    opcodes: BTreeMap<String, usize>,
    coop_types: Vec<(String, String, Vec<String>)>,
}

fn unquote(s: &str) -> String {
    s.trim_matches('"').to_string()
}

fn read_dis(text: &str) -> Dis {
    let mut d = Dis::default();
    for line in text.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("; ") {
            if let Some(v) = rest.strip_prefix("Version: ") {
                d.version = v.to_string();
            } else if let Some(v) = rest.strip_prefix("Generator: ") {
                d.generator = v.to_string();
            } else if let Some(v) = rest.strip_prefix("Bound: ") {
                d.bound = v.parse().unwrap();
            }
            continue;
        }
        let toks: Vec<&str> = line.split_whitespace().collect();
        let (result, opcode, ops) = match toks.as_slice() {
            [r, "=", opc, ops @ ..] => (Some(r.to_string()), *opc, ops),
            [opc, ops @ ..] => (None, *opc, ops),
            [] => continue,
        };
        *d.opcodes.entry(opcode.to_string()).or_default() += 1;
        let ops: Vec<String> = ops.iter().map(|s| s.to_string()).collect();
        match opcode {
            "OpCapability" => d.capabilities.push(ops[0].clone()),
            "OpExtension" => d.extensions.push(unquote(&ops[0])),
            "OpExtInstImport" => d.imports.push(unquote(&ops[0])),
            "OpMemoryModel" => d.memory_model = ops.clone(),
            "OpEntryPoint" => {
                d.entry_points
                    .push((ops[0].clone(), ops[1].clone(), unquote(&ops[2])))
            }
            "OpExecutionMode" | "OpExecutionModeId" if ops[1].starts_with("LocalSize") => {
                d.modes
                    .insert(ops[0].clone(), (ops[1].clone(), ops[2..].to_vec()));
            }
            "OpDecorate" if ops[1] == "SpecId" => {
                d.spec_ids.insert(ops[0].clone(), ops[2].parse().unwrap());
            }
            "OpDecorate" if ops[1] == "BuiltIn" && ops[2] == "WorkgroupSize" => {
                d.workgroup_size = Some(ops[0].clone())
            }
            "OpTypeCooperativeMatrixKHR" | "OpTypeCooperativeMatrixNV" => {
                d.coop_types
                    .push((result.clone().unwrap(), opcode.to_string(), ops.clone()))
            }
            _ => {}
        }
        if let Some(r) = result {
            d.defs.insert(r, (opcode.to_string(), ops));
        }
    }
    d
}

/// The dis text's view of an id operand, rendered like `Value`'s default: the literal of a
/// constant, or `spec S default D`, or `op` for anything else.
fn dis_value(d: &Dis, id: &str) -> String {
    match d.defs.get(id) {
        Some((opc, ops)) if opc == "OpConstant" => ops[1].clone(),
        Some((opc, ops)) if opc == "OpSpecConstant" => {
            format!("spec {:?} default {}", d.spec_ids.get(id), ops[1])
        }
        Some((opc, _)) if opc == "OpSpecConstantOp" => "op".into(),
        _ => "other".into(),
    }
}

fn our_value(v: &Value) -> String {
    match v {
        Value::Literal(x) => x.to_string(),
        Value::Constant { value, .. } => value.to_string(),
        Value::SpecConstant {
            spec_id, default, ..
        } => format!("spec {spec_id:?} default {default}"),
        Value::SpecConstantOp { .. } => "op".into(),
        Value::Other { .. } => "other".into(),
    }
}

fn compare(name: &str, m: &ModuleInfo, d: &Dis) {
    assert_eq!(
        format!("{}.{}", m.version.0, m.version.1),
        d.version,
        "{name}: version"
    );
    assert_eq!(
        format!("{}; {}", m.generator, m.generator_version),
        d.generator,
        "{name}: generator"
    );
    assert_eq!(m.bound, d.bound, "{name}: bound");
    assert_eq!(m.capabilities, d.capabilities, "{name}: capabilities");
    assert_eq!(m.extensions, d.extensions, "{name}: extensions");
    assert_eq!(m.ext_inst_imports, d.imports, "{name}: imports");
    let mm: Vec<String> = [&m.addressing_model, &m.memory_model]
        .iter()
        .filter_map(|s| (*s).clone())
        .collect();
    assert_eq!(mm, d.memory_model, "{name}: memory model");
    assert_eq!(
        m.entry_points.len(),
        d.entry_points.len(),
        "{name}: entry points"
    );
    for (ep, (model, func, ep_name)) in m.entry_points.iter().zip(&d.entry_points) {
        assert_eq!(
            (&ep.execution_model, &ep.name, format!("%{}", ep.function)),
            (model, ep_name, func.clone())
        );
        let expected: Option<Vec<String>> = if let Some(wg) = &d.workgroup_size {
            let (_, ops) = &d.defs[wg];
            Some(ops[1..4].iter().map(|id| dis_value(d, id)).collect())
        } else {
            d.modes.get(func).map(|(mode, ops)| {
                if mode == "LocalSizeId" {
                    ops.iter().map(|id| dis_value(d, id)).collect()
                } else {
                    ops.clone()
                }
            })
        };
        let ours = ep
            .local_size
            .as_ref()
            .map(|s| s.iter().map(our_value).collect::<Vec<_>>());
        assert_eq!(ours, expected, "{name}: local size of {}", ep.name);
    }
    assert_eq!(
        m.coop_matrix_types.len(),
        d.coop_types.len(),
        "{name}: cooperative matrix types"
    );
    for (t, (id, opc, ops)) in m.coop_matrix_types.iter().zip(&d.coop_types) {
        assert_eq!(format!("%{}", t.id), *id);
        assert_eq!(
            t.flavor == MatrixFlavor::Khr,
            opc == "OpTypeCooperativeMatrixKHR"
        );
        assert_eq!(
            our_value(&t.rows),
            dis_value(d, &ops[2]),
            "{name}: rows of {id}"
        );
        assert_eq!(
            our_value(&t.columns),
            dis_value(d, &ops[3]),
            "{name}: columns of {id}"
        );
        assert_eq!(
            our_value(&t.scope),
            dis_value(d, &ops[1]),
            "{name}: scope of {id}"
        );
        if let Some(u) = &t.matrix_use {
            assert_eq!(our_value(u), dis_value(d, &ops[4]), "{name}: use of {id}");
        }
        // The component type: its declaration in the dis text.
        let (c_op, c_ops) = &d.defs[&ops[0]];
        let expected = match (c_op.as_str(), c_ops.as_slice()) {
            ("OpTypeFloat", [w]) => format!("f{w}"),
            ("OpTypeFloat", [_, enc]) if enc == "BFloat16KHR" => "bf16".into(),
            ("OpTypeInt", [w, s]) => format!("{}{w}", if s == "1" { "i" } else { "u" }),
            other => format!("{other:?}"),
        };
        assert_eq!(t.component, expected, "{name}: component of {id}");
    }
    for (op, n) in &m.coop_instructions {
        assert_eq!(d.opcodes.get(op), Some(n), "{name}: count of {op}");
    }
    // Every instruction named after the family must have been counted.
    for (op, n) in &d.opcodes {
        let family = [
            "CooperativeMatrix",
            "CooperativeVector",
            "TensorLayout",
            "TensorView",
        ];
        if family.iter().any(|f| op.contains(f)) {
            assert_eq!(
                m.coop_instructions.get(op),
                Some(n),
                "{name}: {op} not counted"
            );
        }
    }
    assert_eq!(
        m.tensor_layout_types.len(),
        d.opcodes.get("OpTypeTensorLayoutNV").copied().unwrap_or(0)
    );
    assert_eq!(
        m.tensor_view_types.len(),
        d.opcodes.get("OpTypeTensorViewNV").copied().unwrap_or(0)
    );
}

fn spirv_dis(tool: &std::path::Path, bytes: &[u8]) -> String {
    // Tests run in parallel threads of one process: one directory per call.
    let dir = coopmat_testkit::scratch_dir("info-ref");
    let path = dir.path().join("m.spv");
    std::fs::write(&path, bytes).unwrap();
    let out = Command::new(tool)
        .arg("--raw-id")
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "spirv-dis failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn corpus_info_matches_spirv_dis() {
    let Some(tool) = coopmat_testkit::peer_tool("spirv-dis") else {
        eprintln!("corpus_info_matches_spirv_dis: skipping, spirv-dis not found");
        return;
    };
    let mods = coopmat_testkit::corpus_or_notice("corpus_info_matches_spirv_dis");
    let mut checked = 0;
    let mut coop = 0;
    for (i, (name, bytes)) in mods.iter().enumerate() {
        let m = info::module_info_from_bytes(bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        // Every cooperative module, and a tenth of the rest.
        let is_coop = !m.coop_instructions.is_empty();
        if !is_coop && i % 10 != 0 {
            continue;
        }
        compare(name, &m, &read_dis(&spirv_dis(&tool, bytes)));
        checked += 1;
        coop += is_coop as usize;
    }
    eprintln!(
        "info vs spirv-dis: {checked} modules checked ({coop} with cooperative instructions)"
    );
}

#[test]
fn generator_names_match_spirv_dis() {
    let Some(tool) = coopmat_testkit::peer_tool("spirv-dis") else {
        eprintln!("generator_names_match_spirv_dis: skipping, spirv-dis not found");
        return;
    };
    for id in 0u16..64 {
        let words = [0x0723_0203u32, 0x0001_0000, (id as u32) << 16 | 7, 1, 0];
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let d = read_dis(&spirv_dis(&tool, &bytes));
        assert_eq!(
            format!("{}; 7", info::generator_name(id)),
            d.generator,
            "tool id {id}"
        );
    }
}

/// A module with what the corpus lacks: NV matrices, a spec-constant scope, a
/// cooperative-vector type, a tensor view with a permutation, a `WorkgroupSize` built-in
/// overriding `LocalSize`, two entry points.
const SYNTHETIC: &str = r#"
OpCapability Shader
OpCapability Float16
OpCapability Int8
OpCapability CooperativeMatrixNV
OpCapability CooperativeVectorNV
OpCapability TensorAddressingNV
OpCapability CooperativeMatrixKHR
OpExtension "SPV_NV_cooperative_matrix"
OpExtension "SPV_NV_cooperative_vector"
OpExtension "SPV_NV_tensor_addressing"
OpExtension "SPV_KHR_cooperative_matrix"
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpEntryPoint GLCompute %other "other"
OpExecutionMode %main LocalSize 32 1 1
OpExecutionMode %other LocalSize 8 8 1
OpDecorate %sx SpecId 0
OpDecorate %wg BuiltIn WorkgroupSize
OpDecorate %scope SpecId 4
%void = OpTypeVoid
%fn = OpTypeFunction %void
%f16 = OpTypeFloat 16
%f32 = OpTypeFloat 32
%i8 = OpTypeInt 8 1
%u32 = OpTypeInt 32 0
%bool = OpTypeBool
%v3 = OpTypeVector %u32 3
%sx = OpSpecConstant %u32 128
%c1 = OpConstant %u32 1
%c2 = OpConstant %u32 2
%c0 = OpConstant %u32 0
%c16 = OpConstant %u32 16
%c8 = OpConstant %u32 8
%true = OpConstantTrue %bool
%wg = OpSpecConstantComposite %v3 %sx %c1 %c1
%scope = OpSpecConstant %u32 3
%prod = OpSpecConstantOp %u32 IMul %sx %c2
%nv = OpTypeCooperativeMatrixNV %f16 %c2 %c16 %c8
%nv2 = OpTypeCooperativeMatrixNV %i8 %scope %prod %c16
%khr = OpTypeCooperativeMatrixKHR %f32 %scope %c16 %c16 %c2
%vec = OpTypeCooperativeVectorNV %f16 %c16
%layout = OpTypeTensorLayoutNV %c2 %c1
%view = OpTypeTensorViewNV %c2 %true %c1 %c0
%main = OpFunction %void None %fn
%e1 = OpLabel
OpReturn
OpFunctionEnd
%other = OpFunction %void None %fn
%e2 = OpLabel
OpReturn
OpFunctionEnd
"#;

#[test]
fn synthetic_module_matches_spirv_dis() {
    let (Some(dis), Some(asm)) = (
        coopmat_testkit::peer_tool("spirv-dis"),
        coopmat_testkit::peer_tool("spirv-as"),
    ) else {
        eprintln!("synthetic_module_matches_spirv_dis: skipping, spirv-as/spirv-dis not found");
        return;
    };
    let dir = coopmat_testkit::scratch_dir("info-synth");
    let (src, out) = (dir.path().join("s.spvasm"), dir.path().join("s.spv"));
    std::fs::write(&src, SYNTHETIC).unwrap();
    let st = Command::new(asm)
        .args(["--target-env", "spv1.6", "-o"])
        .arg(&out)
        .arg(&src)
        .status()
        .unwrap();
    assert!(st.success());
    let bytes = std::fs::read(&out).unwrap();
    let m = info::module_info_from_bytes(&bytes).unwrap();
    let d = read_dis(&spirv_dis(&dis, &bytes));
    compare("synthetic", &m, &d);
    // What the line parser above does not cover.
    assert_eq!(
        m.coop_matrix_types
            .iter()
            .filter(|t| t.flavor == MatrixFlavor::Nv)
            .count(),
        2
    );
    assert_eq!(m.coop_matrix_types[1].component, "i8");
    assert!(
        matches!(m.coop_matrix_types[1].rows, Value::SpecConstantOp { ref operation, .. } if operation == "OpIMul")
    );
    assert_eq!(
        m.coop_matrix_types[2].scope_name.as_deref(),
        Some("Subgroup"),
        "spec-constant scope, default 3"
    );
    assert_eq!(m.coop_vector_types.len(), 1);
    assert_eq!(
        (
            m.coop_vector_types[0].component.as_str(),
            m.coop_vector_types[0].count.default_u64()
        ),
        ("f16", Some(16))
    );
    let view = &m.tensor_view_types[0];
    assert_eq!(
        view.permutation
            .iter()
            .map(|v| v.default_u64())
            .collect::<Vec<_>>(),
        [Some(1), Some(0)]
    );
    assert_eq!(
        m.tensor_layout_types[0].clamp_mode_name.as_deref(),
        Some("Constant")
    );
    for ep in &m.entry_points {
        assert_eq!(ep.local_size_source, Some("WorkgroupSize"), "{}", ep.name);
    }
}

//! Each rule fires on its bad cases and stays silent on its good ones: GLSL compiled by glslang
//! (`-g`, and `spirv-opt -O` of that) and hand-written `.spvasm`; the seed page's examples; the
//! JSON and SARIF forms.

use coopmat_lint::{Config, Finding, lint_module, render};
use coopmat_spirv::Module;
use coopmat_spirv::asm::{AsmOptions, assemble};
use std::path::{Path, PathBuf};

fn dir(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(sub)
}

/// The two compiled forms of a GLSL fixture: (`-g`, `-g` then `spirv-opt -O`); None without
/// glslang.
fn compile(name: &str) -> Option<[Vec<u8>; 2]> {
    let glslang = coopmat_testkit::peer_tool("glslangValidator")?;
    let opt = coopmat_testkit::peer_tool("spirv-opt")?;
    let src = dir("glsl").join(name);
    let tmp = std::env::temp_dir().join(format!("coopmat-lint-{}-{name}.spv", std::process::id()));
    let out = std::process::Command::new(&glslang)
        .args(["-V", "--target-env", "vulkan1.3", "-g", "-o"])
        .arg(&tmp)
        .arg(&src)
        .output()
        .expect("running glslang");
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let debug = std::fs::read(&tmp).expect("glslang output");
    let _ = std::fs::remove_file(&tmp);
    let optimized = coopmat_testkit::run_tool(&opt, &["-O", "-", "-o", "-"], &debug);
    Some([debug, optimized])
}

fn lint_bytes(label: &str, bytes: &[u8]) -> Vec<Finding> {
    let m = Module::from_bytes(bytes).expect("module parses");
    lint_module(&m, label, &Config::default())
}

fn rules_of(findings: &[Finding]) -> Vec<&'static str> {
    let mut r: Vec<&str> = findings.iter().map(|f| f.rule).collect();
    r.sort_unstable();
    r.dedup();
    r
}

/// (fixture, the rules it must fire, none other).
const GLSL_CASES: &[(&str, &[&str])] = &[
    ("cm_nonuniform_offset.comp", &["coopmat-nonuniform-operand"]),
    ("cm_nonuniform_stride.comp", &["coopmat-nonuniform-operand"]),
    ("cm_uniform.comp", &[]),
    ("cm_uniform_branch.comp", &[]),
    ("cm_divergent_if.comp", &["coopmat-divergent-control-flow"]),
    ("cm_early_return.comp", &["coopmat-divergent-control-flow"]),
    (
        "coopvec_bad_offset.comp",
        &["coopvec-nonuniform-matrix-operand"],
    ),
    ("coopvec_good_offset.comp", &[]),
    (
        "coopvec_bias_per_lane.comp",
        &["coopvec-nonuniform-matrix-operand"],
    ),
    ("coopvec_workgroup_offset.comp", &[]),
    (
        "tangled_subgroup_in_decode.comp",
        &["coopmat-tangled-in-callback"],
    ),
    (
        "tangled_matrix_in_perelement.comp",
        &["coopmat-tangled-in-callback"],
    ),
    ("callback_plain.comp", &[]),
    ("coopvec_misaligned.comp", &["coopvec-layout-and-alignment"]),
    (
        "coopvec_layout_misuse.comp",
        &["coopvec-layout-and-alignment"],
    ),
    ("coopvec_aligned.comp", &[]),
    ("cm_store_overlap.comp", &["coopmat-store-stride-overlap"]),
    ("cm_store_strides_ok.comp", &[]),
    (
        "wg_partial_48.comp",
        &["coopmat-workgroup-size-vs-subgroup"],
    ),
    (
        "wg_partial_10x10.comp",
        &["coopmat-workgroup-size-vs-subgroup"],
    ),
    ("wg_no_matrix_48.comp", &[]),
    (
        "dv_block_default.comp",
        &["coopmat-decode-vector-block-size"],
    ),
    (
        "dv_block_not_multiple.comp",
        &["coopmat-decode-vector-block-size"],
    ),
    ("dv_block_multiple.comp", &[]),
    ("dv_block_spec.comp", &[]),
    (
        "dq_scalar_block32.comp",
        &["coopmat-decode-vector-opportunity"],
    ),
    (
        "dq_scalar_paths.comp",
        &["coopmat-decode-vector-opportunity"],
    ),
    ("dq_scalar_block1.comp", &[]),
    ("dq_scalar_runtime.comp", &[]),
    (
        "tensor_store_blocked.comp",
        &["coopmat-store-stride-overlap"],
    ),
    ("tensor_store_unblocked.comp", &[]),
    ("vote_skip.comp", &[]),
    (
        "vote_skip_one_barrier.comp",
        &[
            "coopmat-divergent-control-flow",
            "coopmat-nonuniform-operand",
        ],
    ),
    (
        "vote_skip_partial.comp",
        &[
            "coopmat-divergent-control-flow",
            "coopmat-nonuniform-operand",
        ],
    ),
    (
        "vote_skip_swapped.comp",
        &[
            "coopmat-divergent-control-flow",
            "coopmat-nonuniform-operand",
        ],
    ),
    (
        "vote_skip_race.comp",
        &[
            "coopmat-divergent-control-flow",
            "coopmat-nonuniform-operand",
        ],
    ),
    (
        "vote_skip_some_subgroups.comp",
        &[
            "coopmat-divergent-control-flow",
            "coopmat-nonuniform-operand",
        ],
    ),
    (
        "qcom_rows_exceed_workgroup.comp",
        &[
            "coopmat-qcom-subgroup-requirements",
            "coopmat-workgroup-size-vs-subgroup",
        ],
    ),
    (
        "qcom_extract_exceeds.comp",
        &[
            "coopmat-qcom-subgroup-requirements",
            "coopmat-workgroup-size-vs-subgroup",
        ],
    ),
    ("qcom_rows_fit.comp", &[]),
    ("qcom_columns_fit.comp", &[]),
    ("qcom_profile_limits.comp", &[]),
    ("map_index_value.comp", &["coopmat-mapping-dependence"]),
    ("map_constant_index.comp", &["coopmat-mapping-dependence"]),
    ("map_identity.comp", &["coopmat-mapping-dependence"]),
    ("map_store_by_index.comp", &["coopmat-mapping-dependence"]),
    ("map_mixed_types.comp", &["coopmat-mapping-dependence"]),
    ("map_elementwise.comp", &[]),
    ("map_splat_index.comp", &[]),
    // coopmat-layout-for-use needs --profile: silent here, see its own test.
    ("lfu_a_column_f16.comp", &[]),
    ("lfu_a_column_s8.comp", &[]),
    ("lfu_preferred.comp", &[]),
    ("lfu_s8_rows.comp", &[]),
];

#[test]
fn glsl_cases_fire_and_stay_silent_in_debug_and_optimized_form() {
    for (name, expected) in GLSL_CASES {
        let Some(forms) = compile(name) else {
            eprintln!("skipping: glslangValidator or spirv-opt not found");
            return;
        };
        for (form, bytes) in ["-g", "-O"].iter().zip(forms) {
            let f = lint_bytes(name, &bytes);
            assert_eq!(
                rules_of(&f),
                expected.to_vec(),
                "{name} ({form}):\n{}",
                render::human(&f)
            );
        }
    }
}

#[test]
fn spvasm_cases_fire_and_stay_silent() {
    let cases: &[(&str, &[&str])] = &[
        (
            "divergent_muladd.spvasm",
            &["coopmat-divergent-control-flow"],
        ),
        ("uniform_muladd.spvasm", &[]),
        ("nonuniform_stride.spvasm", &["coopmat-nonuniform-operand"]),
        ("uniform_stride.spvasm", &[]),
        (
            "partial_subgroup.spvasm",
            &["coopmat-workgroup-size-vs-subgroup"],
        ),
        (
            "reduce_sum_misaligned.spvasm",
            &["coopvec-layout-and-alignment"],
        ),
        ("reduce_sum_aligned.spvasm", &[]),
        (
            "dv_block_not_multiple.spvasm",
            &["coopmat-decode-vector-block-size"],
        ),
        ("dv_block_multiple.spvasm", &[]),
        (
            "dq_scalar_block32.spvasm",
            &["coopmat-decode-vector-opportunity"],
        ),
        ("dq_scalar_block1.spvasm", &[]),
        (
            "qcom_rows_exceed_workgroup.spvasm",
            &[
                "coopmat-qcom-subgroup-requirements",
                "coopmat-workgroup-size-vs-subgroup",
            ],
        ),
        ("qcom_rows_fit.spvasm", &[]),
        ("map_index_value.spvasm", &["coopmat-mapping-dependence"]),
        ("map_elementwise.spvasm", &[]),
        (
            "coopvec_bias_per_lane.spvasm",
            &["coopvec-nonuniform-matrix-operand"],
        ),
        ("coopvec_workgroup_offset.spvasm", &[]),
        ("cm_store_overlap.spvasm", &["coopmat-store-stride-overlap"]),
        ("cm_store_strides_ok.spvasm", &[]),
        (
            "tangled_subgroup_in_decode.spvasm",
            &["coopmat-tangled-in-callback"],
        ),
        ("callback_plain.spvasm", &[]),
        (
            "barrier_in_combine.spvasm",
            &["coopmat-tangled-in-callback"],
        ),
        ("matrix_in_combine.spvasm", &["coopmat-tangled-in-callback"]),
        ("plain_combine.spvasm", &[]),
    ];
    for (name, expected) in cases {
        let text = std::fs::read_to_string(dir("spvasm").join(name)).expect("fixture");
        let words = assemble(&text, &AsmOptions::default()).expect("assembles");
        let m = Module::from_words(&words).expect("parses");
        let f = lint_module(&m, name, &Config::default());
        assert_eq!(
            rules_of(&f),
            expected.to_vec(),
            "{name}:\n{}",
            render::human(&f)
        );
    }
}

#[test]
fn seed_example_reports_the_chain_from_global_invocation_id_to_the_matrix_offset() {
    let Some([debug, optimized]) = compile("coopvec_bad_offset.comp") else {
        eprintln!("skipping: glslangValidator or spirv-opt not found");
        return;
    };
    for bytes in [debug, optimized] {
        let f = lint_bytes("coopvec_bad_offset.spv", &bytes);
        assert_eq!(f.len(), 1, "{}", render::human(&f));
        let f = &f[0];
        assert!(f.message.contains("operand MatrixOffset"), "{}", f.message);
        assert!(f.message.contains("GlobalInvocationId"), "{}", f.message);
        let src = f.source.as_ref().expect("a source line");
        assert!(src.file.ends_with("coopvec_bad_offset.comp"), "{src:?}");
        // The chain: the multiply `tid * 64`, back to the built-in.
        assert!(
            f.chain.iter().any(|s| s.instruction.contains("OpIMul")),
            "{:#?}",
            f.chain
        );
        let last = f.chain.last().expect("a chain");
        assert!(last.note.contains("GlobalInvocationId"), "{last:?}");
        assert_eq!(last.source.as_ref().map(|s| s.line), Some(11));
    }
}

#[test]
fn json_findings_carry_the_documented_fields() {
    let text = std::fs::read_to_string(dir("spvasm").join("divergent_muladd.spvasm")).unwrap();
    let m = Module::from_words(&assemble(&text, &AsmOptions::default()).unwrap()).unwrap();
    let f = lint_module(&m, "divergent_muladd.spvasm", &Config::default());
    let v: serde_json::Value = serde_json::from_str(&render::json(&f)).expect("valid JSON");
    let first = &v.as_array().expect("an array")[0];
    for key in [
        "rule",
        "level",
        "message",
        "file",
        "function",
        "instruction",
        "source",
        "chain",
    ] {
        assert!(first.get(key).is_some(), "missing {key}: {first}");
    }
    assert_eq!(first["level"], "deny");
    assert!(
        first["instruction"]
            .as_str()
            .unwrap()
            .contains("OpCooperativeMatrixMulAddKHR")
    );
    assert!(!first["chain"].as_array().unwrap().is_empty());
}

/// The SARIF 2.1.0 JSON schema (OASIS) as the serde-sarif package ships it (`src/schema.json`,
/// the schema its types are generated from), found through `cargo metadata` so that no copy is
/// committed here.
fn sarif_schema() -> serde_json::Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    // Only the host's dependencies: on a fresh machine the other platforms' crates (Windows
    // console crates of clap) were never downloaded, and `--offline` cannot resolve them.
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = std::process::Command::new(rustc)
        .arg("-vV")
        .output()
        .expect("running rustc -vV");
    let host = String::from_utf8_lossy(&version.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_owned))
        .expect("rustc -vV names the host");
    let out = std::process::Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--offline"])
        .args(["--filter-platform", &host])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("running cargo metadata");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata JSON");
    let manifest = meta["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .find(|p| p["name"] == "serde-sarif")
        .and_then(|p| p["manifest_path"].as_str())
        .expect("serde-sarif among the dependencies");
    let path = Path::new(manifest)
        .with_file_name("src")
        .join("schema.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let schema: serde_json::Value = serde_json::from_str(&text).expect("schema JSON");
    assert_eq!(
        schema["title"],
        "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    );
    schema
}

#[test]
fn sarif_output_validates_against_the_sarif_2_1_0_json_schema() {
    let validator = jsonschema::validator_for(&sarif_schema()).expect("the schema compiles");
    let config = Config::default();
    // Findings with and without source lines, with chains, and an empty run.
    let mut checked = 0;
    for name in [
        "nonuniform_stride.spvasm",
        "coopvec_bias_per_lane.spvasm",
        "uniform_muladd.spvasm",
    ] {
        let text = std::fs::read_to_string(dir("spvasm").join(name)).unwrap();
        let m = Module::from_words(&assemble(&text, &AsmOptions::default()).unwrap()).unwrap();
        let f = lint_module(&m, name, &config);
        let log: serde_json::Value = serde_json::from_str(&render::sarif(&f, &config)).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&log)
            .map(|e| format!("{} at {}", e, e.instance_path))
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:#?}");
        checked += f.len();
    }
    if let Some([debug, _]) = compile("coopvec_bad_offset.comp") {
        let f = lint_bytes("coopvec_bad_offset.spv", &debug);
        assert!(
            f.iter().any(|f| f.source.is_some()),
            "a finding with a source line"
        );
        let log: serde_json::Value = serde_json::from_str(&render::sarif(&f, &config)).unwrap();
        let errors: Vec<String> = validator.iter_errors(&log).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{errors:#?}");
    }
    assert!(checked >= 3, "findings were checked");
    // The validator is not vacuous: a log without its required `version` is refused.
    let mut broken: serde_json::Value = serde_json::from_str(&render::sarif(&[], &config)).unwrap();
    broken.as_object_mut().unwrap().remove("version");
    assert!(!validator.is_valid(&broken));
}

#[test]
fn sarif_reads_back_as_sarif_2_1_0_with_rules_and_code_flows() {
    let text = std::fs::read_to_string(dir("spvasm").join("nonuniform_stride.spvasm")).unwrap();
    let m = Module::from_words(&assemble(&text, &AsmOptions::default()).unwrap()).unwrap();
    let config = Config::default();
    let f = lint_module(&m, "nonuniform_stride.spvasm", &config);
    let log = render::sarif(&f, &config);
    // The typed model serde-sarif generates from the SARIF 2.1.0 schema reads it back.
    let parsed: serde_sarif::sarif::Sarif = serde_json::from_str(&log).expect("SARIF 2.1.0");
    assert_eq!(parsed.version, serde_json::json!("2.1.0"));
    let run = &parsed.runs[0];
    let rules = run.tool.driver.rules.as_ref().expect("rule metadata");
    assert_eq!(rules.len(), coopmat_lint::RULES.len());
    let results = run.results.as_ref().expect("results");
    assert_eq!(results.len(), 1);
    let flows = results[0]
        .code_flows
        .as_ref()
        .expect("the chain as a code flow");
    assert!(!flows[0].thread_flows[0].locations.is_empty());
}

#[test]
fn configured_levels_change_and_silence_findings() {
    let text = std::fs::read_to_string(dir("spvasm").join("divergent_muladd.spvasm")).unwrap();
    let m = Module::from_words(&assemble(&text, &AsmOptions::default()).unwrap()).unwrap();
    let mut config = Config::default();
    config.levels.insert(
        "coopmat-divergent-control-flow".into(),
        coopmat_lint::Level::Warn,
    );
    let f = lint_module(&m, "x", &config);
    assert_eq!(f[0].level, coopmat_lint::Level::Warn);
    config.levels.insert(
        "coopmat-divergent-control-flow".into(),
        coopmat_lint::Level::Allow,
    );
    assert!(lint_module(&m, "x", &config).is_empty());
}

/// The whole llama.cpp corpus: no panic, no deny finding (the cm1 flash attention's `max_mask`
/// skip, 66 findings before, is proven workgroup-uniform: the analysis README's workgroup
/// vote), and there the skip comparison is the vote; the only warning is the documented mapping
/// dependence of the cm2 flash attention's sink path.
#[test]
fn corpus_has_no_deny_finding() {
    let mods = coopmat_testkit::corpus_or_notice("lint corpus");
    let mut votes = 0;
    for (name, bytes) in &mods {
        let Ok(m) = Module::from_bytes(bytes) else {
            continue;
        };
        let f = lint_module(&m, name, &Config::default());
        if let Some(finding) = f.iter().find(|f| f.level == coopmat_lint::Level::Deny) {
            panic!("{name}:\n{}", render::human(std::slice::from_ref(finding)));
        }
        for finding in f.iter().filter(|f| f.level == coopmat_lint::Level::Warn) {
            assert!(
                finding.rule == "coopmat-mapping-dependence"
                    && name.contains("flash_attn_f32_f16_cm2"),
                "{name}:\n{}",
                render::human(std::slice::from_ref(finding))
            );
        }
        if name.contains("flash_attn") && name.contains("cm1") {
            let a = coopmat_analysis::Analysis::run(&m);
            let workgroup_compares = m
                .instructions
                .iter()
                .filter(|i| i.opcode == coopmat_spirv::grammar::op::FOrdLessThanEqual)
                .filter_map(|i| i.result_id)
                .filter(|&id| a.value(id) == coopmat_analysis::Level::Workgroup)
                .count();
            assert_eq!(workgroup_compares, 1, "{name}: the skip comparison");
            votes += 1;
        }
    }
    assert!(
        mods.is_empty() || votes == 3,
        "{votes} cm1 flash attentions"
    );
}

#[test]
fn decode_vector_rules_name_the_block_size_and_the_width() {
    // (fixture, text every finding of the rule carries)
    for (name, rule, want) in [
        (
            "dv_block_default.comp",
            "coopmat-decode-vector-block-size",
            "can be 1, not a multiple of 4",
        ),
        (
            "dv_block_not_multiple.comp",
            "coopmat-decode-vector-block-size",
            "can be 6, not a multiple of 4",
        ),
        (
            "dq_scalar_block32.comp",
            "coopmat-decode-vector-opportunity",
            "returning 8 components",
        ),
        (
            "dq_scalar_paths.comp",
            "coopmat-decode-vector-opportunity",
            "(4, 12) is a multiple of 4",
        ),
    ] {
        let Some(forms) = compile(name) else {
            eprintln!("skipping: glslangValidator or spirv-opt not found");
            return;
        };
        for bytes in forms {
            let f = lint_bytes(name, &bytes);
            let ours: Vec<&Finding> = f.iter().filter(|f| f.rule == rule).collect();
            assert_eq!(ours.len(), 1, "{name}:\n{}", render::human(&f));
            assert!(ours[0].message.contains(want), "{}", ours[0].message);
            // The chain points at where the block size is set (or the layout created).
            assert!(
                ours[0]
                    .chain
                    .iter()
                    .all(|s| s.instruction.contains("TensorLayout")),
                "{:#?}",
                ours[0].chain
            );
        }
    }
}

/// llama.cpp's cm2 matmuls pass DecodeVectorFunc with block size 32: silent as shipped, and
/// reported once the block sizes are mutated to 1 (the rule sees through the real modules'
/// layout code).
#[test]
fn corpus_decode_vector_loads_fire_only_when_the_block_size_is_broken() {
    let mods = coopmat_testkit::corpus_or_notice("lint decode-vector mutation");
    let Some((_, bytes)) = mods
        .iter()
        .find(|(n, _)| n.ends_with("matmul_iq4_nl_f16_cm2.spv"))
    else {
        return;
    };
    let m = Module::from_bytes(bytes).unwrap();
    let rule = "coopmat-decode-vector-block-size";
    let count = |m: &Module| {
        lint_module(m, "iq4_nl", &Config::default())
            .iter()
            .filter(|f| f.rule == rule)
            .count()
    };
    assert_eq!(count(&m), 0);
    let mut mutated = m.clone();
    let one = mutated
        .instructions
        .iter()
        .find(|i| {
            i.opcode == coopmat_spirv::grammar::op::Constant
                && i.word(2) == Some(1)
                && mutated.type_of(i.result_id.unwrap()).is_some_and(|t| {
                    matches!(
                        mutated.type_view(t),
                        coopmat_spirv::types::Type::Int { width: 32, .. }
                    )
                })
        })
        .and_then(|i| i.result_id)
        .expect("a 32-bit constant 1");
    let mut changed = 0;
    for inst in &mut mutated.instructions {
        if inst.opcode == coopmat_spirv::grammar::op::TensorLayoutSetBlockSizeNV {
            let last = inst.operands.last().unwrap().offset as usize;
            inst.words[last] = one;
            changed += 1;
        }
    }
    assert!(changed > 0);
    mutated.reindex().unwrap();
    assert!(count(&mutated) > 0);
}

#[test]
fn coopvec_layout_and_alignment_reports_every_broken_operand() {
    // (fixture, findings): the misaligned load, matrix offset, bias offset and stride; the fp8
    // row-major matrix, the transposed row-major matrix and the column-major outer product.
    for (name, n) in [
        ("coopvec_misaligned.comp", 4),
        ("coopvec_layout_misuse.comp", 3),
    ] {
        let Some(forms) = compile(name) else {
            eprintln!("skipping: glslangValidator or spirv-opt not found");
            return;
        };
        for bytes in forms {
            let f = lint_bytes(name, &bytes);
            let ours: Vec<&Finding> = f
                .iter()
                .filter(|f| {
                    f.rule == "coopvec-layout-and-alignment"
                        || f.rule == "coopmat-store-stride-overlap"
                })
                .collect();
            assert_eq!(ours.len(), n, "{name}:\n{}", render::human(&f));
        }
    }
    let text = std::fs::read_to_string(dir("spvasm").join("reduce_sum_misaligned.spvasm")).unwrap();
    let m = Module::from_words(&assemble(&text, &AsmOptions::default()).unwrap()).unwrap();
    let f = lint_module(&m, "reduce_sum_misaligned.spvasm", &Config::default());
    let text = render::human(&f);
    assert!(
        text.contains("VUID-RuntimeSpirv-OpCooperativeVectorReduceSumAccumulateNV-10100"),
        "{text}"
    );
    assert!(
        text.contains("VUID-RuntimeSpirv-OpCooperativeVectorOuterProductAccumulateNV-10101"),
        "{text}"
    );
}

#[test]
fn qcom_subgroup_requirements_check_the_profile_subgroup_size() {
    let Some(forms) = compile("qcom_profile_limits.comp") else {
        eprintln!("skipping: glslangValidator or spirv-opt not found");
        return;
    };
    let config = Config {
        profile: coopmat_val::Profile::builtin("nvidia-h100-580"),
        ..Config::default()
    };
    for bytes in forms {
        let m = Module::from_bytes(&bytes).unwrap();
        let f = lint_module(&m, "qcom_profile_limits", &config);
        let ours: Vec<&str> = f
            .iter()
            .filter(|f| f.rule == "coopmat-qcom-subgroup-requirements")
            .map(|f| f.message.as_str())
            .collect();
        assert_eq!(ours.len(), 2, "{}", render::human(&f));
        assert!(
            ours.iter()
                .any(|m| m.contains("subgroup size of nvidia-h100-580 is 32"))
        );
        assert!(ours.iter().any(|m| m.contains("not 4")));
    }
}

#[test]
fn layout_for_use_reports_the_measured_slow_loads_with_a_profile() {
    let config = Config {
        profile: coopmat_val::Profile::builtin("nvidia-h100-580"),
        ..Config::default()
    };
    let ours = |m: &Module, name: &str| -> Vec<String> {
        lint_module(m, name, &config)
            .into_iter()
            .filter(|f| f.rule == "coopmat-layout-for-use")
            .map(|f| f.message)
            .collect()
    };
    for (name, want) in [
        (
            "lfu_a_column_f16.comp",
            Some("Use A float16 matrix ColumnMajor"),
        ),
        (
            "lfu_a_column_s8.comp",
            Some("Use A sint8 matrix ColumnMajor"),
        ),
        ("lfu_preferred.comp", None),
        ("lfu_s8_rows.comp", None),
    ] {
        let Some(forms) = compile(name) else {
            eprintln!("skipping: glslangValidator or spirv-opt not found");
            return;
        };
        for bytes in forms {
            let m = Module::from_bytes(&bytes).unwrap();
            let found = ours(&m, name);
            match want {
                Some(w) => {
                    assert_eq!(found.len(), 1, "{name}: {found:?}");
                    assert!(found[0].contains(w), "{}", found[0]);
                    assert!(found[0].contains("141%") || found[0].contains("163%"));
                }
                None => assert!(found.is_empty(), "{name}: {found:?}"),
            }
        }
    }
    let text = std::fs::read_to_string(dir("spvasm").join("arm_blocked_layout.spvasm")).unwrap();
    let m = Module::from_words(&assemble(&text, &AsmOptions::default()).unwrap()).unwrap();
    let found = ours(&m, "arm_blocked_layout.spvasm");
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found
            .iter()
            .all(|f| f.contains("VK_ARM_cooperative_matrix_layouts"))
    );
    assert!(
        lint_module(&m, "arm", &Config::default()).is_empty(),
        "silent without a profile"
    );
}

#[test]
fn mapping_dependence_names_what_singles_a_component_out() {
    for (name, want) in [
        ("map_index_value.comp", "computed from that index"),
        ("map_constant_index.comp", "reads component 0"),
        ("map_identity.comp", "depends on which invocation stores it"),
        (
            "map_store_by_index.comp",
            "address computed from the component's index",
        ),
        ("map_mixed_types.comp", "a matrix of another type"),
    ] {
        let Some(forms) = compile(name) else {
            eprintln!("skipping: glslangValidator or spirv-opt not found");
            return;
        };
        for bytes in forms {
            let f = lint_bytes(name, &bytes);
            assert_eq!(f.len(), 1, "{name}:\n{}", render::human(&f));
            assert!(f[0].message.contains(want), "{name}: {}", f[0].message);
        }
    }
}

#[test]
fn unsupported_configuration_reports_the_profile_rules_only_with_a_profile() {
    // The validator's own negative cases: an f32 training accumulation (the H100 has f16 only)
    // and a 24-row matrix the H100 does not list.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/val/negative");
    for (file, want) in [
        (
            "vk-coopvec-training-f32.spvasm",
            "VK-Profile-CoopVecTraining (nvidia-h100-580)",
        ),
        (
            "vk-type-unsupported-rows.spvasm",
            "VK-Profile-Type (nvidia-h100-580)",
        ),
    ] {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        let opts = AsmOptions {
            target_env: coopmat_spirv::asm::TargetEnv::from_name("vulkan1.3"),
            ..AsmOptions::default()
        };
        let m = Module::from_words(&assemble(&text, &opts).unwrap()).unwrap();
        let ours = |f: &[Finding]| {
            f.iter()
                .filter(|f| f.rule == "coopmat-unsupported-configuration")
                .map(|f| f.message.clone())
                .collect::<Vec<_>>()
        };
        assert!(ours(&lint_module(&m, file, &Config::default())).is_empty());
        let config = Config {
            profile: coopmat_val::Profile::builtin("nvidia-h100-580"),
            ..Config::default()
        };
        let found = ours(&lint_module(&m, file, &config));
        assert!(
            found.iter().any(|msg| msg.contains(want)),
            "{file}: {found:?}"
        );
    }
    // Configurations the H100 lists stay silent with its profile: a 16x16x16 f16 multiply-add
    // and f16 cooperative-vector training accumulations (a reduction and an outer product).
    for file in ["uniform_muladd.spvasm", "reduce_sum_aligned.spvasm"] {
        let text = std::fs::read_to_string(dir("spvasm").join(file)).unwrap();
        let m = Module::from_words(&assemble(&text, &AsmOptions::default()).unwrap()).unwrap();
        let config = Config {
            profile: coopmat_val::Profile::builtin("nvidia-h100-580"),
            ..Config::default()
        };
        let found = lint_module(&m, file, &config);
        let profile_findings: Vec<_> = found
            .iter()
            .filter(|f| f.rule == "coopmat-unsupported-configuration")
            .collect();
        assert!(profile_findings.is_empty(), "{file}: {profile_findings:?}");
    }
}

#[test]
fn workgroup_size_is_checked_against_the_profile_subgroup_size() {
    let rule = "coopmat-workgroup-size-vs-subgroup";
    let with_profile = |name: &str, profile: coopmat_val::Profile| {
        let forms = compile(name)?;
        let config = Config {
            profile: Some(profile),
            ..Config::default()
        };
        let m = Module::from_bytes(&forms[0]).unwrap();
        Some(lint_module(&m, name, &config))
    };
    let lavapipe = coopmat_val::Profile::builtin("lavapipe-26").unwrap();
    assert_eq!(lavapipe.subgroup_size, 8);
    // 48 invocations: a partial subgroup of 32 (no profile), six whole subgroups of 8 (lavapipe).
    let Some(f) = with_profile("wg_partial_48.comp", lavapipe) else {
        eprintln!("skipping: glslangValidator or spirv-opt not found");
        return;
    };
    assert!(f.iter().all(|f| f.rule != rule), "{}", render::human(&f));
    // 64 invocations: whole subgroups of 32, half a subgroup of a 128-wide device.
    let mut wide = coopmat_val::Profile::builtin("nvidia-h100-580").unwrap();
    wide.subgroup_size = 128;
    wide.name = "wide-128".into();
    let f = with_profile("cm_uniform.comp", wide).unwrap();
    let hits: Vec<_> = f.iter().filter(|f| f.rule == rule).collect();
    assert_eq!(hits.len(), 1, "{}", render::human(&f));
    assert!(
        hits[0].message.contains("subgroup size 128 of wide-128"),
        "{}",
        hits[0].message
    );
}

/// Hostile input for the workgroup-vote recognizer, which walks stores, loops and barrier
/// intervals: the vote fixture (both compiled forms) with one word changed, 4000 ways
/// (deterministic), never panics or hangs the lint.
#[test]
fn mutated_workgroup_votes_do_not_panic() {
    let Some(forms) = compile("vote_skip.comp") else {
        return;
    };
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut parsed = 0;
    for bytes in &forms {
        let words: Vec<u32> = bytes
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        for _ in 0..2000 {
            let mut w = words.clone();
            let at = 5 + (next() as usize) % (w.len() - 5);
            w[at] = match next() % 3 {
                0 => w[at] ^ (1 << (next() % 32)),
                1 => w[at].wrapping_add(1),
                _ => (next() % 200) as u32,
            };
            if let Ok(m) = Module::from_words(&w) {
                parsed += 1;
                let _ = lint_module(&m, "mutated", &Config::default());
            }
        }
    }
    assert!(parsed > 1000, "only {parsed} mutants parsed");
}

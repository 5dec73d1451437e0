//! Invalid modules the assembler cannot write (it refuses them as spirv-as does), made by
//! patching the words of a valid one; both were found by the engine's fuzz target.

use coopmat_spirv::Module;
use coopmat_spirv::asm::{AsmOptions, assemble};
use coopmat_spirv::grammar::op;
use coopmat_val::{TargetEnv, ValidateOptions, validate};

fn rules(m: &Module) -> Vec<&'static str> {
    let opts = ValidateOptions {
        target_env: TargetEnv::Vulkan(3),
        profile: None,
    };
    validate(m, &opts).iter().map(|d| d.rule_id()).collect()
}

fn module() -> Module {
    let path = coopmat_testkit::repo_root().join("tests/spvasm/patch/spec_constant_isub.spvasm");
    let src = std::fs::read_to_string(path).unwrap();
    Module::from_words(&assemble(&src, &AsmOptions::default()).unwrap()).unwrap()
}

#[test]
fn the_unpatched_module_is_valid() {
    assert!(rules(&module()).is_empty(), "{:?}", rules(&module()));
}

#[test]
fn a_spec_constant_operation_outside_the_allowed_list_is_rejected() {
    let mut m = module();
    let inst = m
        .instructions
        .iter_mut()
        .find(|i| i.opcode == op::SpecConstantOp)
        .unwrap();
    // Result type, result id, then the operation's opcode.
    inst.words[3] = u32::from(op::ISubBorrow);
    let m = Module::from_words(&m.to_words()).unwrap();
    let found = rules(&m);
    assert!(found.contains(&"Core-Constant"), "{found:?}");
    assert!(found.contains(&"Core-ExtendedArith-Result"), "{found:?}");
}

#[test]
fn an_unknown_extended_instruction_set_is_rejected_for_vulkan() {
    let mut m = module();
    let inst = m
        .instructions
        .iter_mut()
        .find(|i| i.opcode == op::ExtInstImport)
        .unwrap();
    // "GLSL.std.450" is 12 bytes and a NUL word: make its last character 0x01.
    let w = &mut inst.words[2 + 2];
    *w = (*w & 0xFF00_FFFF) | (0x01 << 16);
    let m = Module::from_words(&m.to_words()).unwrap();
    let found = rules(&m);
    assert_eq!(found, vec!["Core-ExtInstImport-Vulkan"], "{found:?}");
}

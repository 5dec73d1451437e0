//! `nv_to_khr`: NV cooperative-matrix shaders (GLSL through glslang, skipped with a notice when
//! it is absent) become KHR modules that coopmat's validator accepts and the engine runs to the
//! same bits; what cannot be expressed is refused with the reason.

use coopmat_exec::{EngineOptions, Pipeline, Resources};
use coopmat_lower::{LowerError, nv_to_khr};
use coopmat_spirv::Module;
use coopmat_spirv::grammar::op;

mod common;
use common::{glsl, valid};

fn run(m: &Module, input: &[u8], out_bytes: usize) -> Vec<u8> {
    let p = Pipeline::compile(m, "main", &Default::default(), &EngineOptions::default()).unwrap();
    let mut r = Resources::default();
    r.buffers.insert((0, 0), input.to_vec());
    r.buffers.insert((0, 1), vec![0; out_bytes]);
    p.dispatch(&mut r, [1, 1, 1]).unwrap();
    r.buffers[&(0, 1)].clone()
}

const GEMM: &str = r#"#version 450
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer A { float16_t a[]; };
layout(std430, binding = 1) buffer C { float c[]; };
void main() {
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> ma;
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 8> mb;
    fcoopmatNV<32, gl_ScopeSubgroup, 16, 8> mc = fcoopmatNV<32, gl_ScopeSubgroup, 16, 8>(0.0);
    coopMatLoadNV(ma, a, 0, 16, false);
    coopMatLoadNV(mb, a, 256, 16, true);
    for (int i = 0; i < 3; i++) {
        mc = coopMatMulAddNV(ma, mb, mc);
        mc = mc * 0.5;
    }
    // Length and element access of the accumulator.
    for (int i = 0; i < mc.length(); i++) mc[i] = mc[i] + 1.0;
    coopMatStoreNV(mc, c, 0, 8, false);
}"#;

const INT8: &str = r#"#version 450
#extension GL_NV_cooperative_matrix : require
#extension GL_NV_integer_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer A { int8_t a[]; };
layout(std430, binding = 1) buffer C { int c[]; };
void main() {
    icoopmatNV<8, gl_ScopeSubgroup, 16, 32> ma;
    icoopmatNV<8, gl_ScopeSubgroup, 32, 8> mb;
    icoopmatNV<32, gl_ScopeSubgroup, 16, 8> mc = icoopmatNV<32, gl_ScopeSubgroup, 16, 8>(7);
    coopMatLoadNV(ma, a, 0, 32, false);
    coopMatLoadNV(mb, a, 512, 32, true);
    mc = coopMatMulAddNV(ma, mb, mc);
    coopMatStoreNV(mc, c, 0, 8, false);
}"#;

fn lowered_runs_the_same(src: &str, input: &[u8], out_bytes: usize) {
    let Some(nv) = glsl(src) else {
        eprintln!("notice: glslangValidator absent; skipping");
        return;
    };
    let mut khr = nv.clone();
    let report = nv_to_khr(&mut khr).unwrap();
    assert!(
        report.khr_types >= 3 && report.instructions >= 4,
        "{report:?}"
    );
    assert!(!khr.instructions.iter().any(|i| matches!(
        i.opcode,
        op::TypeCooperativeMatrixNV | op::CooperativeMatrixLoadNV | op::CooperativeMatrixMulAddNV
    )));
    valid(&khr);
    let (a, b) = (run(&nv, input, out_bytes), run(&khr, input, out_bytes));
    assert!(a.iter().any(|&x| x != 0), "the shader wrote nothing");
    assert_eq!(a, b, "the lowered module computes something else");
}

#[test]
fn float_gemm_with_a_loop_scaling_and_element_access_runs_the_same() {
    let input: Vec<u8> = (0..512u32)
        .flat_map(|i| half::f16::from_f32(((i * 37) % 19) as f32 / 8.0 - 1.0).to_le_bytes())
        .collect();
    lowered_runs_the_same(GEMM, &input, 512);
}

#[test]
fn signed_int8_products_keep_their_signedness() {
    let input: Vec<u8> = (0..1024u32).map(|i| (i * 89 % 256) as u8).collect();
    lowered_runs_the_same(INT8, &input, 512);
}

fn asm(text: &str) -> Module {
    let words = coopmat_spirv::asm::assemble(text, &Default::default()).unwrap();
    Module::from_words(&words).unwrap()
}

const TWO_ROLES: &str = r#"
OpCapability Shader
OpCapability Float16
OpCapability CooperativeMatrixNV
OpExtension "SPV_NV_cooperative_matrix"
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 32 1 1
%void = OpTypeVoid
%fn = OpTypeFunction %void
%half = OpTypeFloat 16
%uint = OpTypeInt 32 0
%u3 = OpConstant %uint 3
%u16 = OpConstant %uint 16
%h1 = OpConstant %half 1
%mat = OpTypeCooperativeMatrixNV %half %u3 %u16 %u16
%main = OpFunction %void None %fn
%l = OpLabel
%x = OpCompositeConstruct %mat %h1
%y = OpCooperativeMatrixMulAddNV %mat %x %x %x
OpReturn
OpFunctionEnd
"#;

#[test]
fn a_value_in_two_roles_and_matrix_parameters_are_refused() {
    let mut m = asm(TWO_ROLES);
    let e = nv_to_khr(&mut m).unwrap_err();
    assert!(matches!(e, LowerError::Refused(_)), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("MatrixA and a MatrixB and a MatrixAccumulator matrix at once"),
        "{msg}"
    );
    // A matrix parameter.
    let with_param = TWO_ROLES.replace(
        "%main = OpFunction",
        "%ft = OpTypeFunction %void %mat\n%f = OpFunction %void None %ft\n%p = OpFunctionParameter %mat\n%fl = OpLabel\nOpReturn\nOpFunctionEnd\n%main = OpFunction",
    );
    let mut m = asm(&with_param);
    let msg = nv_to_khr(&mut m).unwrap_err().to_string();
    assert!(msg.contains("function parameter or result"), "{msg}");
    // A module without NV matrices is left alone.
    let mut plain = asm("OpCapability Shader\nOpMemoryModel Logical GLSL450\n");
    let before = plain.to_words();
    assert_eq!(nv_to_khr(&mut plain).unwrap().types, 0);
    assert_eq!(plain.to_words(), before);
}

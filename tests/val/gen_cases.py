#!/usr/bin/env python3
"""Writes the validator's test modules: tests/val/negative/*.spvasm (each must be rejected
naming the rule in its `; expect:` header) and tests/val/positive/*.spvasm (each must validate
clean with coopmat and spirv-val). Every case is one base module from templates.py plus a small
change. Optional headers: `; assemble-env:` (spirv-as --target-env, default vulkan1.3),
`; validate-env:` (default vulkan1.3), `; profile:` (a device profile for coopmat only).

Run: python3 tests/val/gen_cases.py   (rewrites both folders)"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from templates import render  # noqa: E402

NEG = []
POS = []


def neg(name, rule, tpl, parts=None, subs=(), aenv=None, venv=None, profile=None, note=""):
    NEG.append((name, rule, tpl, parts or {}, subs, aenv, venv, profile, note))


def pos(name, tpl, parts=None, subs=(), note="", profile=None):
    POS.append((name, tpl, parts or {}, subs, note, profile))


T, B, F, V = "TYPES", "BODY", "FUNCS", "VARS"

# ----------------------------------------------------------------------------------------
# Core structure
# ----------------------------------------------------------------------------------------
neg("core-header-env-too-old", "Core-Header", "core", aenv="spv1.6", venv="vulkan1.1", note="a SPIR-V 1.6 module under Vulkan 1.1")
neg("core-layout-capability-late", "Core-Layout-Order", "core", {"DECOR": "OpCapability Int64"})
neg("core-layout-type-in-function", "Core-Layout-Order", "core", {B: "%vx = OpTypeVector %uint 2"})
neg("core-layout-variable-not-first", "Core-Layout-Order", "core", {T: "%pfu = OpTypePointer Function %uint", B: "%x = OpIAdd %uint %u0 %u1\n%v = OpVariable %pfu Function"})
neg("core-layout-global-function-var", "Core-Layout-Order", "core", {T: "%pfu = OpTypePointer Function %uint\n%gv = OpVariable %pfu Function"})
neg("core-memory-model-missing", "Core-MemoryModel", "core", subs=[("OpMemoryModel Logical GLSL450\n", "")])
neg("core-vulkan-addressing", "Core-Vulkan-Env", "core", {"CAPS": "OpCapability Addresses"}, subs=[("OpMemoryModel Logical GLSL450", "OpMemoryModel Physical64 GLSL450")])
neg("core-vulkan-no-shader", "Core-Vulkan-Env", "core", {"CAPS": "OpCapability Kernel"}, subs=[("OpCapability Shader\n", "")])
neg("core-id-undefined", "Core-Id-Defined", "core", {B: "%x = OpIAdd %uint %u0 %nope"})
neg("core-id-forward-global", "Core-Id-ForwardRef", "core", {T: "%arr = OpTypeArray %uint %late\n%late = OpConstant %uint 4"})
neg("core-id-forward-same-block", "Core-Id-ForwardRef", "core", {B: "%y = OpIAdd %uint %z %u1\n%z = OpIAdd %uint %u0 %u1"})
BRANCH = "OpSelectionMerge %m None\nOpBranchConditional %true %t %f\n%t = OpLabel\n%x = OpIAdd %uint %u0 %u1\nOpBranch %m\n%f = OpLabel\nOpBranch %m\n%m = OpLabel\n"
neg("core-id-forward-pointee", "Core-Id-ForwardRef", "core", {T: "%pst = OpTypePointer Private %later\n%later = OpTypeStruct %uint"})
neg("core-ssa-dominance", "Core-SSA-Dominance", "core", {B: BRANCH + "%y = OpIAdd %uint %x %u1"})
neg("core-ssa-phi-parent", "Core-SSA-Dominance", "core", {B: BRANCH + "%ph = OpPhi %uint %x %f %u0 %t"})
neg("core-type-int-width", "Core-Type", "core", {T: "%i7 = OpTypeInt 7 0"})
neg("core-type-vector-count", "Core-Type", "core", {T: "%v5 = OpTypeVector %uint 5"})
neg("core-type-vector-component", "Core-Type", "core", {T: "%vs = OpTypeStruct %uint\n%vv = OpTypeVector %vs 2"})
neg("core-type-array-length-zero", "Core-Type", "core", {T: "%a0 = OpTypeArray %uint %u0"})
neg("core-type-array-length-not-constant", "Core-Type", "core", {T: "%a0 = OpTypeArray %uint %float"})
neg("core-type-array-length-float", "Core-Type", "core", {T: "%f2 = OpConstant %float 2\n%a0 = OpTypeArray %uint %f2"})
neg("core-type-float-width", "Core-Type", "core", {T: "%f24 = OpTypeFloat 24"})
neg("core-type-struct-member", "Core-Type", "core", {T: "%s = OpTypeStruct %u0"})
neg("core-type-function-void-param", "Core-Type", "core", {T: "%fv = OpTypeFunction %void %void"})
neg("core-type-duplicate-int", "Core-Type", "core", {T: "%uint2 = OpTypeInt 32 0"})
neg("core-type-duplicate-function", "Core-Type", "core", {T: "%fn2 = OpTypeFunction %void"})
neg("core-type-int64-capability", "Core-Capability", "core", {T: "%i64 = OpTypeInt 64 0"})
neg("core-type-float64-capability", "Core-Capability", "core", {T: "%f64 = OpTypeFloat 64"})
neg("core-constant-false-float", "Core-Constant", "core", {T: "%c = OpConstantFalse %float"})
neg("core-constant-true-int", "Core-Constant", "core", {T: "%c = OpConstantTrue %uint"})
neg("core-constant-composite-count", "Core-Constant", "core", {T: "%v2 = OpTypeVector %uint 2\n%c = OpConstantComposite %v2 %u0"})
neg("core-constant-composite-type", "Core-Constant", "core", {T: "%v2 = OpTypeVector %uint 2\n%c = OpConstantComposite %v2 %u0 %true"})
neg("core-constant-composite-nonconst", "Core-Constant", "core", {T: "%v2 = OpTypeVector %uint 2\n%pu = OpTypePointer Private %uint\n%gv = OpVariable %pu Private\n%c = OpConstantComposite %v2 %u0 %gv"})
neg("core-result-type-not-type", "Core-Operand-Type", "core", {B: "%x = OpIAdd %u0 %u0 %u1"})
neg("core-capability-instruction", "Core-Capability", "core", {T: "%u3 = OpConstant %uint 3", B: "%x = OpGroupNonUniformElect %bool %u3"})
neg("core-capability-storage-class", "Core-Capability", "core", {T: "%pg = OpTypePointer Generic %uint"})
neg("core-extension-missing", "Core-Extension", "core", {"CAPS": "OpCapability SubgroupBallotKHR"})
neg("core-version-too-old", "Core-Version", "core", {"CAPS": "OpCapability GroupNonUniform", T: "%u3 = OpConstant %uint 3", B: "%x = OpGroupNonUniformElect %bool %u3"}, aenv="vulkan1.0")
neg("core-member-decorate-non-struct", "Core-Decoration-Target", "core", {"DECOR": "OpMemberDecorate %uint 0 Offset 0"})
neg("core-member-decorate-index", "Core-Decoration-Target", "core", {"DECOR": "OpMemberDecorate %st 3 Offset 0", T: "%st = OpTypeStruct %uint"})
neg("core-array-stride-on-int", "Core-Decoration-Target", "core", {"DECOR": "OpDecorate %uint ArrayStride 4"})
neg("core-block-on-int", "Core-Decoration-Target", "core", {"DECOR": "OpDecorate %uint Block"})
neg("core-binding-on-type", "Core-Decoration-Target", "core", {"DECOR": "OpDecorate %uint Binding 0"})
neg("core-spec-id-on-constant", "Core-Decoration-Target", "core", {"DECOR": "OpDecorate %u1 SpecId 3"})
neg("core-variable-not-pointer", "Core-Operand-Type", "core", {T: "%gv = OpVariable %uint Private"})
neg("core-operand-is-type", "Core-Operand-Type", "core", {B: "%x = OpIAdd %uint %u0 %uint"})
neg("core-composite-operand-is-type", "Core-Operand-Type", "core", {T: "%v2 = OpTypeVector %uint 2", B: "%x = OpCompositeConstruct %v2 %u0 %uint"})
neg("core-buffer-block-removed", "Core-Version", "core", {"DECOR": "OpDecorate %st BufferBlock", T: "%st = OpTypeStruct %uint"})
neg("core-vulkan-memory-model-capability", "Core-MemoryModel", "core", {"CAPS": "OpCapability VulkanMemoryModel"})
neg("core-variable-storage-mismatch", "Core-Operand-Type", "core", {T: "%ppu = OpTypePointer Private %uint\n%gv = OpVariable %ppu Workgroup"})
neg("core-store-value-is-type", "Core-Operand-Type", "core", {T: "%pfu = OpTypePointer Function %uint", V: "%lv = OpVariable %pfu Function", B: "OpStore %lv %uint"})
neg("core-return-value-type", "Core-Function-Type", "core", {T: "%fnr = OpTypeFunction %uint", F: "%g = OpFunction %uint None %fnr\n%gl = OpLabel\nOpReturnValue %true\nOpFunctionEnd"})
neg("core-return-without-value", "Core-Function-Type", "core", {T: "%fnr = OpTypeFunction %uint", F: "%g = OpFunction %uint None %fnr\n%gl = OpLabel\nOpReturn\nOpFunctionEnd"})
FNU = "%fnu = OpTypeFunction %void %uint"
G = "%g = OpFunction %void None %fnu\n%gp = OpFunctionParameter %uint\n%gl = OpLabel\nOpReturn\nOpFunctionEnd"
neg("core-function-id-as-value", "Core-Function-Use", "core", {B: "%x = OpCopyObject %uint %main"})
neg("core-function-call-arg-count", "Core-Function-Use", "core", {T: FNU, B: "%x = OpFunctionCall %void %g", F: G})
neg("core-function-call-result-type", "Core-Function-Use", "core", {T: FNU, B: "%x = OpFunctionCall %uint %g %u0", F: G})
neg("core-function-call-arg-type", "Core-Function-Use", "core", {T: FNU, B: "%x = OpFunctionCall %void %g %true", F: G})
neg("core-function-call-not-function", "Core-Function-Use", "core", {B: "%x = OpFunctionCall %void %u0"})
neg("core-function-return-type", "Core-Function-Type", "core", {F: "%g = OpFunction %uint None %fn\n%gl = OpLabel\nOpReturnValue %u0\nOpFunctionEnd"})
neg("core-function-type-not-function", "Core-Function-Type", "core", {F: "%g = OpFunction %void None %uint\n%gl = OpLabel\nOpReturn\nOpFunctionEnd"})
neg("core-function-param-count", "Core-Function-Type", "core", {T: FNU, F: "%g = OpFunction %void None %fnu\n%gl = OpLabel\nOpReturn\nOpFunctionEnd"})
neg("core-function-param-type", "Core-Function-Type", "core", {T: FNU, F: "%g = OpFunction %void None %fnu\n%gp = OpFunctionParameter %float\n%gl = OpLabel\nOpReturn\nOpFunctionEnd"})
neg("core-branch-target-not-label", "Core-CFG-Target", "core", {B: "OpBranch %u0\n%next = OpLabel"})
neg("core-branch-target-other-function", "Core-CFG-Target", "core", {B: "OpBranch %gl\n%next = OpLabel", F: "%g = OpFunction %void None %fn\n%gl = OpLabel\nOpReturn\nOpFunctionEnd"})
neg("core-merge-not-before-branch", "Core-CFG-Merge", "core", {B: "OpSelectionMerge %m None\n%x = OpIAdd %uint %u0 %u1\nOpBranchConditional %true %m %m\n%m = OpLabel"})
neg("core-selection-merge-then-branch", "Core-CFG-Merge", "core", {B: "OpSelectionMerge %m None\nOpBranch %m\n%m = OpLabel"})
neg("core-merge-block-shared", "Core-CFG-Merge", "core", {B: "OpSelectionMerge %m None\nOpBranchConditional %true %t %m\n%t = OpLabel\nOpSelectionMerge %m None\nOpBranchConditional %true %m %m\n%m = OpLabel"})
neg("core-merge-target-not-label", "Core-CFG-Target", "core", {B: "OpSelectionMerge %u0 None\nOpBranchConditional %true %m %m\n%m = OpLabel"})
neg("core-loop-merge-then-switch", "Core-CFG-Merge", "core", {B: "OpBranch %h\n%h = OpLabel\nOpLoopMerge %m %c None\nOpSwitch %u0 %m\n%c = OpLabel\nOpBranch %h\n%m = OpLabel"})
neg("core-phi-not-first", "Core-CFG-Merge", "core", {B: BRANCH + "%y = OpIAdd %uint %u0 %u1\n%ph = OpPhi %uint %u0 %t %u1 %f"})
neg("core-entry-point-not-function", "Core-EntryPoint", "core", subs=[('OpEntryPoint GLCompute %main "main"', 'OpEntryPoint GLCompute %u1 "main"')])
neg("core-entry-interface-not-variable", "Core-EntryPoint", "core", subs=[('OpEntryPoint GLCompute %main "main"', 'OpEntryPoint GLCompute %main "main" %u0')])
neg("core-execution-mode-target", "Core-EntryPoint", "core", {F: "%g = OpFunction %void None %fn\n%gl = OpLabel\nOpReturn\nOpFunctionEnd"}, subs=[("OpExecutionMode %main LocalSize 32 1 1", "OpExecutionMode %main LocalSize 32 1 1\nOpExecutionMode %g LocalSize 32 1 1")])
neg("core-local-size-zero", "Core-EntryPoint", "core", subs=[("LocalSize 32 1 1", "LocalSize 32 1 0")])
neg("core-block-after-function-end", "Core-Structure", "core", subs=[("               OpReturn\n               OpFunctionEnd\n", "               OpReturn\n")])

# ----------------------------------------------------------------------------------------
# SPV_KHR_cooperative_matrix
# ----------------------------------------------------------------------------------------
K = "coop2"
neg("khr-type-component-bool", "KHR-Type-Component", K, {T: "%mx = OpTypeCooperativeMatrixKHR %bool %u3 %u16 %u16 %u0"})
neg("khr-type-component-vector", "KHR-Type-Component", K, {T: "%mx = OpTypeCooperativeMatrixKHR %v2half %u3 %u16 %u16 %u0"})
neg("khr-type-rows-half-constant", "KHR-Type-Operands", K, {T: "%mx = OpTypeCooperativeMatrixKHR %half %u3 %h1 %u16 %u0"})
neg("khr-type-use-bool-constant", "KHR-Type-Operands", K, {T: "%mx = OpTypeCooperativeMatrixKHR %half %u3 %u16 %u16 %true"})
neg("khr-type-cols-undef", "KHR-Type-Operands", K, {T: "%und = OpUndef %uint\n%mx = OpTypeCooperativeMatrixKHR %half %u3 %u16 %und %u0"})
neg("khr-type-use-3", "KHR-Type-Use", K, {T: "%mx = OpTypeCooperativeMatrixKHR %half %u3 %u16 %u16 %u3"})
neg("khr-type-use-8", "KHR-Type-Use", K, {T: "%mx = OpTypeCooperativeMatrixKHR %half %u3 %u16 %u16 %u8"})
neg("khr-type-scope-9", "KHR-Type-Scope", K, {T: "%u9 = OpConstant %uint 9\n%mx = OpTypeCooperativeMatrixKHR %half %u9 %u16 %u16 %u0"})
neg("khr-type-scope-device", "KHR-Type-Scope", K, {T: "%mx = OpTypeCooperativeMatrixKHR %half %u1 %u16 %u16 %u0"})
neg("khr-type-scope-invocation", "KHR-Type-Scope", K, {T: "%mx = OpTypeCooperativeMatrixKHR %half %u4 %u16 %u16 %u0"})
neg("khr-storage-workgroup", "KHR-Storage", K, {T: "%pmw = OpTypePointer Workgroup %matA\n%gw = OpVariable %pmw Workgroup"})
neg("khr-storage-array-workgroup", "KHR-Storage", K, {T: "%am = OpTypeArray %matA %u2\n%pam = OpTypePointer Workgroup %am\n%gw = OpVariable %pam Workgroup"})
neg("khr-storage-struct-workgroup", "KHR-Storage", K, {T: "%sm = OpTypeStruct %uint %matC\n%psm = OpTypePointer Workgroup %sm\n%gw = OpVariable %psm Workgroup"})
neg("khr-load-result-not-matrix", "KHR-LoadStore-Type", K, {B: "%x = OpCooperativeMatrixLoadKHR %half %p %u0 %u16"})
neg("khr-store-object-not-matrix", "KHR-LoadStore-Type", K, {B: "OpCooperativeMatrixStoreKHR %p %h1 %u0 %u16"})
neg("khr-load-pointer-not-pointer", "KHR-LoadStore-Pointer", K, {B: "%x = OpCooperativeMatrixLoadKHR %matA %h1 %u0 %u16"})
neg("khr-load-pointee-struct", "KHR-LoadStore-Pointer", K, {B: "%x = OpCooperativeMatrixLoadKHR %matA %buf %u0 %u16"})
neg("khr-load-storage-private", "KHR-LoadStore-StorageClass", K, {T: "%ahp = OpTypeArray %half %u16\n%pah = OpTypePointer Private %ahp\n%pph = OpTypePointer Private %half\n%pv = OpVariable %pah Private", B: "%pe0 = OpAccessChain %pph %pv %u0\n%x = OpCooperativeMatrixLoadKHR %matA %pe0 %u0 %u16"}, subs=[('"main" %buf', '"main" %buf %pv')])
neg("khr-load-storage-function", "KHR-LoadStore-StorageClass", K, {T: "%ahf = OpTypeArray %half %u16\n%pfa = OpTypePointer Function %ahf\n%pfh = OpTypePointer Function %half", V: "%fv = OpVariable %pfa Function", B: "%pe0 = OpAccessChain %pfh %fv %u0\n%x = OpCooperativeMatrixLoadKHR %matA %pe0 %u0 %u16"})
neg("khr-store-storage-function", "KHR-LoadStore-StorageClass", K, {T: "%ahf = OpTypeArray %half %u16\n%pfa = OpTypePointer Function %ahf\n%pfh = OpTypePointer Function %half", V: "%fv = OpVariable %pfa Function", B: "%pe0 = OpAccessChain %pfh %fv %u0\nOpCooperativeMatrixStoreKHR %pe0 %d %u0 %u16"})
neg("khr-load-layout-not-constant", "KHR-LoadStore-Layout", K, {T: "%pfu = OpTypePointer Function %uint", V: "%lv = OpVariable %pfu Function", B: "%lay = OpLoad %uint %lv\n%x = OpCooperativeMatrixLoadKHR %matA %p %lay %u16"})
neg("khr-load-layout-value-5", "KHR-LoadStore-Layout", K, {T: "%u5 = OpConstant %uint 5", B: "%x = OpCooperativeMatrixLoadKHR %matA %p %u5 %u16"})
neg("khr-load-layout-half", "KHR-LoadStore-Layout", K, {B: "%x = OpCooperativeMatrixLoadKHR %matA %p %h1 %u16"})
neg("khr-store-layout-value-3", "KHR-LoadStore-Layout", K, {B: "OpCooperativeMatrixStoreKHR %p %d %u3 %u16"})
neg("khr-load-stride-half", "KHR-LoadStore-Stride", K, {B: "%x = OpCooperativeMatrixLoadKHR %matA %p %u0 %h1"})
neg("khr-load-stride-missing", "KHR-LoadStore-Stride", K, {B: "%x = OpCooperativeMatrixLoadKHR %matA %p %u0"})
neg("khr-store-stride-zero", "KHR-LoadStore-Stride", K, {B: "OpCooperativeMatrixStoreKHR %p %d %u0 %u0"})
neg("khr-load-make-available", "KHR-LoadStore-MemoryOperand", K, {B: "%x = OpCooperativeMatrixLoadKHR %matA %p %u0 %u16 MakePointerAvailable|NonPrivatePointer %u3"})
neg("khr-store-make-visible", "KHR-LoadStore-MemoryOperand", K, {B: "OpCooperativeMatrixStoreKHR %p %d %u0 %u16 MakePointerVisible|NonPrivatePointer %u3"})
neg("khr-muladd-a-not-matrix", "KHR-MulAdd-Types", K, {B: "%x = OpCooperativeMatrixMulAddKHR %matC %h1 %b %c"})
neg("khr-muladd-result-not-matrix", "KHR-MulAdd-Types", K, {B: "%x = OpCooperativeMatrixMulAddKHR %half %a %b %c"})
A8 = "%matA8 = OpTypeCooperativeMatrixKHR %half %u3 %u16 %u8 %u0"
neg("khr-muladd-shape-k", "KHR-MulAdd-Shape", K, {T: A8, B: "%a8 = OpCooperativeMatrixLoadKHR %matA8 %p %u0 %u16\n%x = OpCooperativeMatrixMulAddKHR %matC %a8 %b %c"})
neg("khr-muladd-shape-c", "KHR-MulAdd-Shape", K, {T: "%matC8 = OpTypeCooperativeMatrixKHR %half %u3 %u8 %u16 %u2", B: "%c8 = OpCooperativeMatrixLoadKHR %matC8 %p %u0 %u16\n%x = OpCooperativeMatrixMulAddKHR %matC %a %b %c8"})
neg("khr-muladd-shape-result", "KHR-MulAdd-Shape", K, {T: "%matR8 = OpTypeCooperativeMatrixKHR %half %u3 %u16 %u8 %u2", B: "%x = OpCooperativeMatrixMulAddKHR %matR8 %a %b %c"})
neg("khr-muladd-shape-b-cols", "KHR-MulAdd-Shape", K, {T: "%matB8 = OpTypeCooperativeMatrixKHR %half %u3 %u16 %u8 %u1", B: "%b8 = OpCooperativeMatrixLoadKHR %matB8 %p %u0 %u16\n%x = OpCooperativeMatrixMulAddKHR %matC %a %b8 %c"})
neg("khr-muladd-use-a", "KHR-MulAdd-Use", K, {B: "%x = OpCooperativeMatrixMulAddKHR %matC %b %b %c"})
neg("khr-muladd-use-b", "KHR-MulAdd-Use", K, {B: "%x = OpCooperativeMatrixMulAddKHR %matC %a %a %c"})
neg("khr-muladd-use-c", "KHR-MulAdd-Use", K, {B: "%x = OpCooperativeMatrixMulAddKHR %matC %a %b %a"})
neg("khr-muladd-result-use-a", "KHR-MulAdd-ResultUse", K, {B: "%x = OpCooperativeMatrixMulAddKHR %matA %a %b %c"})
neg("khr-muladd-result-use-b", "KHR-MulAdd-ResultUse", K, {B: "%x = OpCooperativeMatrixMulAddKHR %matB %a %b %c"})
neg("khr-muladd-scope", "KHR-MulAdd-Scope", K, {T: "%matAw = OpTypeCooperativeMatrixKHR %half %u2 %u16 %u16 %u0", B: "%aw = OpCooperativeMatrixLoadKHR %matAw %p %u0 %u16\n%x = OpCooperativeMatrixMulAddKHR %matC %aw %b %c"})
neg("khr-muladd-signed-a-float", "KHR-MulAdd-SignedOperand", K, {B: "%x = OpCooperativeMatrixMulAddKHR %matC %a %b %c MatrixASignedComponentsKHR"})
neg("khr-muladd-signed-b-float", "KHR-MulAdd-SignedOperand", K, {B: "%x = OpCooperativeMatrixMulAddKHR %matC %a %b %c MatrixBSignedComponentsKHR"})
neg("khr-muladd-signed-c-float", "KHR-MulAdd-SignedOperand", K, {B: "%x = OpCooperativeMatrixMulAddKHR %matC %a %b %c MatrixCSignedComponentsKHR"})
neg("khr-muladd-signed-result-float", "KHR-MulAdd-SignedOperand", K, {B: "%x = OpCooperativeMatrixMulAddKHR %matC %a %b %c MatrixResultSignedComponentsKHR"})
neg("khr-length-result-float", "KHR-Length", K, {B: "%x = OpCooperativeMatrixLengthKHR %float %matA"})
neg("khr-length-result-signed", "KHR-Length", K, {B: "%x = OpCooperativeMatrixLengthKHR %int %matA"})
neg("khr-length-type-not-matrix", "KHR-Length", K, {B: "%x = OpCooperativeMatrixLengthKHR %uint %half"})
neg("khr-arith-bitwise-and", "KHR-Arith", K, {T: "%matCu = OpTypeCooperativeMatrixKHR %uint %u3 %u16 %u16 %u2", B: "%cu0 = OpCompositeConstruct %matCu %u1\n%x = OpBitwiseAnd %matCu %cu0 %cu0"})
neg("khr-arith-operand-type", "KHR-Arith", K, {B: "%x = OpFAdd %matC %d %a"})
neg("khr-arith-iadd-float", "KHR-Arith", K, {B: "%x = OpIAdd %matC %d %d"})
neg("khr-arith-scalar-result", "KHR-Arith", K, {B: "%x = OpFAdd %half %d %d"})
neg("khr-arith-compare", "KHR-Arith", K, {B: "%x = OpFOrdEqual %bool %d %d"})
neg("khr-arith-fmod", "KHR-Arith", K, {B: "%x = OpFMod %matC %d %d"})
neg("khr-matrix-times-scalar-type", "KHR-MatrixTimesScalar", K, {T: "%f1 = OpConstant %float 1", B: "%x = OpMatrixTimesScalar %matC %d %f1"})
neg("khr-matrix-times-scalar-result", "KHR-MatrixTimesScalar", K, {B: "%x = OpMatrixTimesScalar %matA %d %h1"})
neg("khr-convert-shape", "KHR-Convert", K, {T: "%matCf8 = OpTypeCooperativeMatrixKHR %float %u3 %u16 %u8 %u2", B: "%x = OpFConvert %matCf8 %d"})
neg("khr-convert-use-a-to-b", "KHR-Convert", K, {T: "%matBf = OpTypeCooperativeMatrixKHR %float %u3 %u16 %u16 %u1", B: "%x = OpFConvert %matBf %a"})
neg("khr-convert-scope", "KHR-Convert", K, {T: "%matCfw = OpTypeCooperativeMatrixKHR %float %u2 %u16 %u16 %u2", B: "%x = OpFConvert %matCfw %d"})
neg("khr-bitcast-width", "KHR-Convert", K, {T: "%matCu = OpTypeCooperativeMatrixKHR %uint %u3 %u16 %u16 %u2", B: "%x = OpBitcast %matCu %d"})
neg("khr-bitcast-float", "KHR-Convert", K, {T: "%ushort = OpTypeInt 16 0\n%matCs = OpTypeCooperativeMatrixKHR %ushort %u3 %u16 %u16 %u2", "CAPS": "OpCapability Int16", B: "%x = OpBitcast %matCs %d"})
neg("khr-convert-to-scalar", "KHR-Convert", K, {B: "%x = OpFConvert %float %d"})
neg("khr-composite-two-constituents", "KHR-Composite", K, {B: "%x = OpCompositeConstruct %matC %h1 %h1"})
neg("khr-composite-constituent-type", "KHR-Composite", K, {B: "%x = OpCompositeConstruct %matC %u1"})
neg("khr-constant-composite-type", "KHR-Composite", K, {T: "%cc = OpConstantComposite %matC %u1"})
neg("khr-extract-two-indices", "KHR-Composite-Access", K, {B: "%x = OpCompositeExtract %half %d 0 1"})
neg("khr-extract-type", "KHR-Composite-Access", K, {B: "%x = OpCompositeExtract %float %d 0"})
neg("khr-insert-type", "KHR-Composite-Access", K, {B: "%x = OpCompositeInsert %matC %u1 %d 0"})
neg("khr-vulkan-memory-model-missing", "KHR-VulkanMemoryModel", "core", {"CAPS": "OpCapability CooperativeMatrixKHR\nOpCapability Float16", "EXTS": 'OpExtension "SPV_KHR_cooperative_matrix"', T: "%half = OpTypeFloat 16\n%u3 = OpConstant %uint 3\n%u16 = OpConstant %uint 16\n%mx = OpTypeCooperativeMatrixKHR %half %u3 %u16 %u16 %u0"}, aenv="vulkan1.1", venv="vulkan1.1")

# ----------------------------------------------------------------------------------------
# SPV_NV_cooperative_matrix
# ----------------------------------------------------------------------------------------
N = "nv1"
neg("nv-type-component-bool", "NV-Type", N, {T: "%nx = OpTypeCooperativeMatrixNV %bool %u3 %u16 %u16"})
neg("nv-type-rows-half", "NV-Type", N, {T: "%hh = OpConstant %half 1\n%nx = OpTypeCooperativeMatrixNV %half %u3 %hh %u16"})
neg("nv-type-scope-undef", "NV-Type", N, {T: "%und = OpUndef %uint\n%nx = OpTypeCooperativeMatrixNV %half %und %u16 %u16"})
neg("nv-type-scope-device", "NV-Type", N, {T: "%u1 = OpConstant %uint 1\n%nx = OpTypeCooperativeMatrixNV %half %u1 %u16 %u16"})
neg("nv-type-scope-invalid", "NV-Type", N, {T: "%nx = OpTypeCooperativeMatrixNV %half %u8 %u16 %u16"})
neg("nv-storage-workgroup", "NV-Storage", N, {T: "%pnw = OpTypePointer Workgroup %nvm\n%gw = OpVariable %pnw Workgroup"})
neg("nv-load-column-major-not-constant", "NV-LoadStore", N, {T: "%pfb = OpTypePointer Function %bool", V: "%bv = OpVariable %pfb Function", B: "%cm = OpLoad %bool %bv\n%x = OpCooperativeMatrixLoadNV %nvm %p %u16 %cm"})
neg("nv-load-column-major-int", "NV-LoadStore", N, {B: "%x = OpCooperativeMatrixLoadNV %nvm %p %u16 %u0"})
neg("nv-load-stride-half", "NV-LoadStore", N, {T: "%hh = OpConstant %half 1", B: "%x = OpCooperativeMatrixLoadNV %nvm %p %hh %false"})
neg("nv-load-result-not-matrix", "NV-LoadStore", N, {B: "%x = OpCooperativeMatrixLoadNV %half %p %u16 %false"})
neg("nv-store-object-not-matrix", "NV-LoadStore", N, {T: "%hh = OpConstant %half 1", B: "OpCooperativeMatrixStoreNV %p %hh %u16 %false"})
neg("nv-load-storage-private", "NV-LoadStore", N, {T: "%ahp = OpTypeArray %half %u16\n%pah = OpTypePointer Private %ahp\n%pph = OpTypePointer Private %half\n%pv = OpVariable %pah Private", B: "%pe0 = OpAccessChain %pph %pv %u0\n%x = OpCooperativeMatrixLoadNV %nvm %pe0 %u16 %false"}, subs=[('"main" %buf', '"main" %buf %pv')])
neg("nv-muladd-shape", "NV-MulAdd-Shape", N, {T: "%nv8 = OpTypeCooperativeMatrixNV %half %u3 %u16 %u8", B: "%a8 = OpCooperativeMatrixLoadNV %nv8 %p %u16 %false\n%x = OpCooperativeMatrixMulAddNV %nvm %a8 %a %a"})
neg("nv-muladd-scope", "NV-MulAdd-Shape", N, {T: "%u2 = OpConstant %uint 2\n%nvw = OpTypeCooperativeMatrixNV %half %u2 %u16 %u16", B: "%aw = OpCooperativeMatrixLoadNV %nvw %p %u16 %false\n%x = OpCooperativeMatrixMulAddNV %nvm %aw %a %a"})
neg("nv-muladd-not-matrix", "NV-MulAdd-Shape", N, {T: "%hh = OpConstant %half 1", B: "%x = OpCooperativeMatrixMulAddNV %nvm %hh %a %a"})
neg("nv-length-result-half", "NV-Length", N, {B: "%x = OpCooperativeMatrixLengthNV %half %nvm"})
neg("nv-length-type-not-matrix", "NV-Length", N, {B: "%x = OpCooperativeMatrixLengthNV %uint %half"})
neg("nv-fmul-not-allowed", "KHR-Arith", N, {B: "%x = OpFMul %nvm %a %a"})

# ----------------------------------------------------------------------------------------
# SPV_NV_cooperative_matrix2
# ----------------------------------------------------------------------------------------
def dec_fn(name, ret, params, body="OpReturnValue %h1"):
    ty = f"%{name}_t = OpTypeFunction {ret} " + " ".join(params)
    fn = f"%{name} = OpFunction {ret} None %{name}_t\n" + "".join(f"%{name}_p{i} = OpFunctionParameter {p}\n" for i, p in enumerate(params)) + f"%{name}_l = OpLabel\n{body}\nOpFunctionEnd"
    return ty, fn


def with_decode(name, rule, ret, params, extra_types="", body="OpReturnValue %h1", vector=False):
    ty, fn = dec_fn("dx", ret, params, body)
    load = "%x = OpCooperativeMatrixLoadTensorNV %matA %p %a %l1 None DecodeFunc %dx" if not vector else "%x = OpCooperativeMatrixLoadTensorNV %matA %p %a %l1 None DecodeFunc|DecodeVectorFunc %dec %dx"
    neg(name, rule, K, {T: (extra_types + "\n" + ty).strip(), B: load, F: fn})


neg("nv2-loadtensor-result-not-matrix", "NV2-LoadTensor", K, {B: "%x = OpCooperativeMatrixLoadTensorNV %half %p %h1 %l1 None None"})
neg("nv2-loadtensor-object-type", "NV2-LoadTensor", K, {B: "%x = OpCooperativeMatrixLoadTensorNV %matA %p %b %l1 None None"})
neg("nv2-loadtensor-layout-is-view", "NV2-LoadTensor", K, {B: "%x = OpCooperativeMatrixLoadTensorNV %matA %p %a %v1 None None"})
neg("nv2-loadtensor-pointer-not-pointer", "NV2-LoadTensor", K, {B: "%x = OpCooperativeMatrixLoadTensorNV %matA %h1 %a %l1 None None"})
neg("nv2-storetensor-object-not-matrix", "NV2-StoreTensor", K, {B: "OpCooperativeMatrixStoreTensorNV %p %h1 %l1 None None"})
neg("nv2-storetensor-decode", "NV2-StoreTensor", K, {B: "OpCooperativeMatrixStoreTensorNV %p %d %l1 None DecodeFunc %dec"})
neg("nv2-storetensor-layout-is-view", "NV2-StoreTensor", K, {B: "OpCooperativeMatrixStoreTensorNV %p %d %v1 None None"})
neg("nv2-view-operand-is-layout", "NV2-TensorView-Operand", K, {B: "%x = OpCooperativeMatrixLoadTensorNV %matA %p %a %l1 None TensorView %l1"})
neg("nv2-view-operand-is-uint", "NV2-TensorView-Operand", K, {B: "%x = OpCooperativeMatrixLoadTensorNV %matA %p %a %l1 None TensorView %u0"})
neg("nv2-decode-not-function", "NV2-Decode-Func", K, {B: "%x = OpCooperativeMatrixLoadTensorNV %matA %p %a %l1 None DecodeFunc %h1"})
with_decode("nv2-decode-return-type", "NV2-Decode-Func", "%float", ["%ppsb", "%arr2", "%arr2"], "%f1 = OpConstant %float 1", "OpReturnValue %f1")
with_decode("nv2-decode-pointer-storage-buffer", "NV2-Decode-Func", "%half", ["%ph", "%arr2", "%arr2"])
with_decode("nv2-decode-pointer-not-pointer", "NV2-Decode-Func", "%half", ["%uint", "%arr2", "%arr2"])
with_decode("nv2-decode-two-params", "NV2-Decode-Params", "%half", ["%ppsb", "%arr2"])
with_decode("nv2-decode-four-params", "NV2-Decode-Params", "%half", ["%ppsb", "%arr2", "%arr2", "%uint"])
with_decode("nv2-decode-one-param", "NV2-Decode-Params", "%half", ["%ppsb"])
with_decode("nv2-decode-array-of-half", "NV2-Decode-Params", "%half", ["%ppsb", "%arrh2", "%arrh2"], "%arrh2 = OpTypeArray %half %u2")
with_decode("nv2-decode-array-length", "NV2-Decode-Params", "%half", ["%ppsb", "%arr3", "%arr3"], "%arr3 = OpTypeArray %uint %u3")
with_decode("nv2-decode-param-scalar", "NV2-Decode-Params", "%half", ["%ppsb", "%uint", "%uint"])
with_decode("nv2-decode-array-of-uchar", "NV2-Decode-Params", "%half", ["%ppsb", "%arrc2", "%arr2"], "%arrc2 = OpTypeArray %uchar %u2")
WG = "%wgarr = OpTypeArray %half %u16\n%pwarr = OpTypePointer Workgroup %wgarr\n%wv = OpVariable %pwarr Workgroup\n%pwh = OpTypePointer Workgroup %half"
neg("nv2-decode-pointer-workgroup", "NV2-Decode-StorageClass", K, {T: WG, B: "%wp = OpAccessChain %pwh %wv %u0\n%x = OpCooperativeMatrixLoadTensorNV %matA %wp %a %l1 None DecodeFunc %dec"}, subs=[('"main" %buf', '"main" %buf %wv')])
neg("nv2-decode-vector-pointer-workgroup", "NV2-Decode-StorageClass", K, {T: WG, B: "%wp = OpAccessChain %pwh %wv %u0\n%x = OpCooperativeMatrixLoadTensorNV %matA %wp %a %l2 None DecodeFunc|DecodeVectorFunc %dec %decv"}, subs=[('"main" %buf', '"main" %buf %wv')])
neg("nv2-decode-pointer-private", "NV2-Decode-StorageClass", K, {T: "%prarr = OpTypeArray %half %u16\n%pparr = OpTypePointer Private %prarr\n%pv = OpVariable %pparr Private\n%pph = OpTypePointer Private %half", B: "%pp = OpAccessChain %pph %pv %u0\n%x = OpCooperativeMatrixLoadTensorNV %matA %pp %a %l1 None DecodeFunc %dec"}, subs=[('"main" %buf', '"main" %buf %pv')])
BARRIER = "OpControlBarrier %u2 %u2 %u0"
neg("nv2-decode-tangled-barrier", "NV2-Callback-NoTangled", K, {"DECBODY": BARRIER})
neg("nv2-decode-tangled-subgroup", "NV2-Callback-NoTangled", K, {"CAPS": "OpCapability GroupNonUniform", "DECBODY": "%e = OpGroupNonUniformElect %bool %u3"})
neg("nv2-decode-tangled-ballot", "NV2-Callback-NoTangled", K, {"CAPS": "OpCapability GroupNonUniformBallot", T: "%v4uint = OpTypeVector %uint 4", "DECBODY": "%e = OpGroupNonUniformBallot %v4uint %u3 %true"})
neg("nv2-decode-tangled-coopmat-load", "NV2-Callback-NoTangled", K, {"DECBODY": "%dp = OpAccessChain %ph %buf %u0 %u0\n%dm = OpCooperativeMatrixLoadKHR %matA %dp %u0 %u16"})
neg("nv2-decode-tangled-coopmat-arith", "NV2-Callback-NoTangled", K, {"DECBODY": "%dm = OpCompositeConstruct %matC %h1\n%dn = OpFAdd %matC %dm %dm"})
HELP = "%helper = OpFunction %void None %fn\n%hl = OpLabel\n" + BARRIER + "\nOpReturn\nOpFunctionEnd"
neg("nv2-decode-tangled-transitive", "NV2-Callback-NoTangled", K, {"DECBODY": "%hc = OpFunctionCall %void %helper", F: HELP})
neg("nv2-decode-tangled-two-levels", "NV2-Callback-NoTangled", K, {"DECBODY": "%hc = OpFunctionCall %void %outer", F: "%outer = OpFunction %void None %fn\n%ol = OpLabel\n%oc = OpFunctionCall %void %helper\nOpReturn\nOpFunctionEnd\n" + HELP})
neg("nv2-decode-vector-tangled", "NV2-Callback-NoTangled", K, subs=[("%vl = OpLabel", "%vl = OpLabel\n" + BARRIER)])
neg("nv2-combine-tangled", "NV2-Callback-NoTangled", K, subs=[("%cl = OpLabel", "%cl = OpLabel\n" + BARRIER)])
neg("nv2-combine-tangled-transitive", "NV2-Callback-NoTangled", K, {F: HELP}, subs=[("%cl = OpLabel", "%cl = OpLabel\n%hc = OpFunctionCall %void %helper")])
neg("nv2-perelement-tangled", "NV2-Callback-NoTangled", K, {"CAPS": "OpCapability GroupNonUniform"}, subs=[("%pl = OpLabel", "%pl = OpLabel\n%e = OpGroupNonUniformElect %bool %u3")])
neg("nv2-perelement-tangled-transitive", "NV2-Callback-NoTangled", K, {F: HELP}, subs=[("%pl = OpLabel", "%pl = OpLabel\n%hc = OpFunctionCall %void %helper")])
neg("nv2-perelement-tangled-reduce", "NV2-Callback-NoTangled", K, subs=[("%pl = OpLabel", "%pl = OpLabel\n%pm = OpCompositeConstruct %matC %h1\n%pr = OpCooperativeMatrixReduceNV %matC %pm Row %comb")])
neg("nv2-storetensor-block-size", "NV2-StoreTensor-BlockSize", K, {B: "OpCooperativeMatrixStoreTensorNV %p %d %l2 None None"})
neg("nv2-storetensor-block-size-after-slice", "NV2-StoreTensor-BlockSize", K, {B: "%s = OpTensorLayoutSliceNV %layout2 %l2 %u0 %u16 %u0 %u16\nOpCooperativeMatrixStoreTensorNV %p %d %s None None"})
neg("nv2-storetensor-block-size-outer", "NV2-StoreTensor-BlockSize", K, {B: "%lb = OpTensorLayoutSetBlockSizeNV %layout2 %l1 %u2 %u1\n%ls = OpTensorLayoutSetStrideNV %layout2 %lb %u16 %u1\nOpCooperativeMatrixStoreTensorNV %p %d %ls None None"})
neg("nv2-reduce-not-accumulator", "NV2-Reduce", K, {B: "%x = OpCooperativeMatrixReduceNV %matA %a Row %comb"})
neg("nv2-reduce-2x2-shape", "NV2-Reduce", K, {B: "%x = OpCooperativeMatrixReduceNV %matC %d 2x2 %comb"})
neg("nv2-reduce-2x2-with-row", "NV2-Reduce", K, {T: "%matC8 = OpTypeCooperativeMatrixKHR %half %u3 %u8 %u8 %u2", B: "%x = OpCooperativeMatrixReduceNV %matC8 %d Row|2x2 %comb"})
neg("nv2-reduce-row-rows", "NV2-Reduce", K, {T: "%matC816 = OpTypeCooperativeMatrixKHR %half %u3 %u8 %u16 %u2", B: "%x = OpCooperativeMatrixReduceNV %matC816 %d Row %comb"})
neg("nv2-reduce-column-cols", "NV2-Reduce", K, {T: "%matC168 = OpTypeCooperativeMatrixKHR %half %u3 %u16 %u8 %u2", B: "%x = OpCooperativeMatrixReduceNV %matC168 %d Column %comb"})
neg("nv2-reduce-component", "NV2-Reduce", K, {T: "%matCf = OpTypeCooperativeMatrixKHR %float %u3 %u16 %u16 %u2", B: "%x = OpCooperativeMatrixReduceNV %matCf %d Row %comb"})
neg("nv2-reduce-scope", "NV2-Reduce", K, {T: "%matCw = OpTypeCooperativeMatrixKHR %half %u2 %u16 %u16 %u2", B: "%x = OpCooperativeMatrixReduceNV %matCw %d Row %comb"})
neg("nv2-reduce-combine-one-param", "NV2-Reduce-CombineFunc", K, {T: "%cf1 = OpTypeFunction %half %half", B: "%x = OpCooperativeMatrixReduceNV %matC %d Row %c1", F: "%c1 = OpFunction %half None %cf1\n%c1p = OpFunctionParameter %half\n%c1l = OpLabel\nOpReturnValue %c1p\nOpFunctionEnd"})
neg("nv2-reduce-combine-return", "NV2-Reduce-CombineFunc", K, {T: "%cf2 = OpTypeFunction %float %half %half\n%f1 = OpConstant %float 1", B: "%x = OpCooperativeMatrixReduceNV %matC %d Row %c2", F: "%c2 = OpFunction %float None %cf2\n%c2p = OpFunctionParameter %half\n%c2q = OpFunctionParameter %half\n%c2l = OpLabel\nOpReturnValue %f1\nOpFunctionEnd"})
neg("nv2-reduce-combine-param-type", "NV2-Reduce-CombineFunc", K, {T: "%cf3 = OpTypeFunction %half %float %float", B: "%x = OpCooperativeMatrixReduceNV %matC %d Row %c3", F: "%c3 = OpFunction %half None %cf3\n%c3p = OpFunctionParameter %float\n%c3q = OpFunctionParameter %float\n%c3l = OpLabel\nOpReturnValue %h1\nOpFunctionEnd"})
neg("nv2-reduce-combine-not-function", "NV2-Reduce-CombineFunc", K, {B: "%x = OpCooperativeMatrixReduceNV %matC %d Row %h1"})
neg("nv2-perelement-result-type", "NV2-PerElementOp", K, {B: "%x = OpCooperativeMatrixPerElementOpNV %matA %d %pef"})
neg("nv2-perelement-func-return", "NV2-PerElementOp", K, {T: "%pf2 = OpTypeFunction %float %uint %uint %half\n%f1 = OpConstant %float 1", B: "%x = OpCooperativeMatrixPerElementOpNV %matC %d %pe2", F: "%pe2 = OpFunction %float None %pf2\n%q0 = OpFunctionParameter %uint\n%q1 = OpFunctionParameter %uint\n%q2 = OpFunctionParameter %half\n%ql = OpLabel\nOpReturnValue %f1\nOpFunctionEnd"})
neg("nv2-perelement-func-row-param", "NV2-PerElementOp", K, {T: "%pf3 = OpTypeFunction %half %half %uint %half", B: "%x = OpCooperativeMatrixPerElementOpNV %matC %d %pe3", F: "%pe3 = OpFunction %half None %pf3\n%q0 = OpFunctionParameter %half\n%q1 = OpFunctionParameter %uint\n%q2 = OpFunctionParameter %half\n%ql = OpLabel\nOpReturnValue %q2\nOpFunctionEnd"})
neg("nv2-perelement-missing-param", "NV2-PerElementOp", K, {B: "%x = OpCooperativeMatrixPerElementOpNV %matC %d %pef %h1"})
PE4 = "%pf4 = OpTypeFunction %half %uint %uint %half {}"
PEF4 = "%pe4 = OpFunction %half None %pf4\n%q0 = OpFunctionParameter %uint\n%q1 = OpFunctionParameter %uint\n%q2 = OpFunctionParameter %half\n%q3 = OpFunctionParameter {}\n%ql = OpLabel\nOpReturnValue %q2\nOpFunctionEnd"
neg("nv2-perelement-operand-type", "NV2-PerElementOp", K, {T: PE4.format("%float"), B: "%x = OpCooperativeMatrixPerElementOpNV %matC %d %pe4 %h1", F: PEF4.format("%float")})
neg("nv2-perelement-matrix-operand-type", "NV2-PerElementOp", K, {T: PE4.format("%half"), B: "%x = OpCooperativeMatrixPerElementOpNV %matC %d %pe4 %a", F: PEF4.format("%half")})
neg("nv2-perelement-not-function", "NV2-PerElementOp", K, {B: "%x = OpCooperativeMatrixPerElementOpNV %matC %d %h1"})
neg("nv2-convertuse-from-a", "NV2-ConvertUse", K, {B: "%x = OpCooperativeMatrixConvertNV %matB %a"})
neg("nv2-convertuse-to-accumulator", "NV2-ConvertUse", K, {B: "%x = OpCooperativeMatrixConvertNV %matC %d"})
neg("nv2-convertuse-shape", "NV2-ConvertUse", K, {T: A8, B: "%x = OpCooperativeMatrixConvertNV %matA8 %d"})
neg("nv2-convertuse-component", "NV2-ConvertUse", K, {T: "%matAf = OpTypeCooperativeMatrixKHR %float %u3 %u16 %u16 %u0", B: "%x = OpCooperativeMatrixConvertNV %matAf %d"})
neg("nv2-transpose-to-a", "NV2-Transpose", K, {B: "%x = OpCooperativeMatrixTransposeNV %matA %d"})
neg("nv2-transpose-from-b", "NV2-Transpose", K, {B: "%x = OpCooperativeMatrixTransposeNV %matB %b"})
neg("nv2-transpose-shape", "NV2-Transpose", K, {T: "%matC168 = OpTypeCooperativeMatrixKHR %half %u3 %u16 %u8 %u2\n%matB168 = OpTypeCooperativeMatrixKHR %half %u3 %u16 %u8 %u1", B: "%c168 = OpCooperativeMatrixLoadKHR %matC168 %p %u0 %u16\n%x = OpCooperativeMatrixTransposeNV %matB168 %c168"})
neg("nv2-transpose-component", "NV2-Transpose-Component", K, {T: "%matBf = OpTypeCooperativeMatrixKHR %float %u3 %u16 %u16 %u1", B: "%x = OpCooperativeMatrixTransposeNV %matBf %d"})
neg("nv2-transpose-component-int", "NV2-Transpose-Component", K, {T: "%matBu = OpTypeCooperativeMatrixKHR %uint %u3 %u16 %u16 %u1", B: "%x = OpCooperativeMatrixTransposeNV %matBu %d"})
neg("nv2-workgroup-scope-no-size", "NV2-WorkgroupScope-Size", K, {T: "%matAw = OpTypeCooperativeMatrixKHR %half %u2 %u16 %u16 %u0"}, subs=[("OpExecutionMode %main LocalSize 32 1 1\n", "")])

# ----------------------------------------------------------------------------------------
# SPV_NV_tensor_addressing
# ----------------------------------------------------------------------------------------
neg("ta-layout-dim-0", "TA-LayoutType", K, {T: "%lt = OpTypeTensorLayoutNV %u0 %u0"})
neg("ta-layout-dim-6", "TA-LayoutType", K, {T: "%u6 = OpConstant %uint 6\n%lt = OpTypeTensorLayoutNV %u6 %u0"})
neg("ta-layout-clamp-9", "TA-LayoutType", K, {T: "%u9 = OpConstant %uint 9\n%lt = OpTypeTensorLayoutNV %u2 %u9"})
neg("ta-layout-dim-half", "TA-LayoutType", K, {T: "%lt = OpTypeTensorLayoutNV %h1 %u0"})
neg("ta-layout-dim-undef", "TA-Type-Constant", K, {T: "%und = OpUndef %uint\n%lt = OpTypeTensorLayoutNV %und %u0"})
neg("ta-layout-clamp-undef", "TA-Type-Constant", K, {T: "%und = OpUndef %uint\n%lt = OpTypeTensorLayoutNV %u2 %und"})
neg("ta-layout-dim-variable", "TA-Type-Constant", K, {T: "%pu = OpTypePointer Private %uint\n%gv = OpVariable %pu Private\n%lt = OpTypeTensorLayoutNV %gv %u0"})
neg("ta-view-dim-0", "TA-ViewType", K, {T: "%vt = OpTypeTensorViewNV %u0 %false"})
neg("ta-view-dim-6", "TA-ViewType", K, {T: "%u5 = OpConstant %uint 5\n%u6 = OpConstant %uint 6\n%vt = OpTypeTensorViewNV %u6 %false %u0 %u1 %u2 %u3 %u4 %u5"})
neg("ta-view-hasdim-int", "TA-ViewType", K, {T: "%vt = OpTypeTensorViewNV %u2 %u0 %u0 %u1"})
neg("ta-view-hasdim-undef", "TA-Type-Constant", K, {T: "%undb = OpUndef %bool\n%vt = OpTypeTensorViewNV %u2 %undb %u0 %u1"})
neg("ta-view-perm-count", "TA-ViewType", K, {T: "%vt = OpTypeTensorViewNV %u2 %false %u0"})
neg("ta-view-perm-duplicate", "TA-ViewType", K, {T: "%vt = OpTypeTensorViewNV %u2 %false %u0 %u0"})
neg("ta-view-perm-range", "TA-ViewType", K, {T: "%vt = OpTypeTensorViewNV %u2 %false %u0 %u2"})
neg("ta-view-perm-undef", "TA-Type-Constant", K, {T: "%und = OpUndef %uint\n%vt = OpTypeTensorViewNV %u2 %false %u0 %und"})
neg("ta-create-layout-view-type", "TA-Create", K, {B: "%x = OpCreateTensorLayoutNV %view2"})
neg("ta-create-view-layout-type", "TA-Create", K, {B: "%x = OpCreateTensorViewNV %layout2"})
neg("ta-create-layout-uint", "TA-Create", K, {B: "%x = OpCreateTensorLayoutNV %uint"})
neg("ta-set-dimension-count", "TA-Operand-Count", K, {B: "%x = OpTensorLayoutSetDimensionNV %layout2 %l0 %u16"})
neg("ta-set-stride-count", "TA-Operand-Count", K, {B: "%x = OpTensorLayoutSetStrideNV %layout2 %l0 %u16 %u1 %u1"})
neg("ta-slice-count", "TA-Operand-Count", K, {B: "%x = OpTensorLayoutSliceNV %layout2 %l0 %u0 %u16"})
neg("ta-set-block-size-count", "TA-Operand-Count", K, {B: "%x = OpTensorLayoutSetBlockSizeNV %layout2 %l0 %u1"})
neg("ta-slice-count-odd", "TA-Operand-Count", K, {B: "%x = OpTensorLayoutSliceNV %layout2 %l0 %u0 %u16 %u0"})
neg("ta-view-set-dimension-count", "TA-Operand-Count", K, {B: "%x = OpTensorViewSetDimensionNV %view2 %v0 %u16 %u16 %u16"})
neg("ta-view-set-stride-count", "TA-Operand-Count", K, {B: "%x = OpTensorViewSetStrideNV %view2 %v0 %u16"})
neg("ta-view-set-dimension-count-short", "TA-Operand-Count", K, {B: "%x = OpTensorViewSetDimensionNV %view2 %v0 %u16"})
neg("ta-set-dimension-half", "TA-Operand-Type", K, {B: "%x = OpTensorLayoutSetDimensionNV %layout2 %l0 %u16 %h1"})
neg("ta-slice-operand-bool", "TA-Operand-Type", K, {B: "%x = OpTensorLayoutSliceNV %layout2 %l0 %u0 %u16 %u0 %true"})
neg("ta-view-clip-operand-half", "TA-Operand-Type", K, {B: "%x = OpTensorViewSetClipNV %view2 %v0 %u0 %u16 %u0 %h1"})
neg("ta-set-input-type", "TA-Operand-Type", K, {T: "%layout3 = OpTypeTensorLayoutNV %u3 %u0", B: "%m0 = OpCreateTensorLayoutNV %layout3\n%x = OpTensorLayoutSetDimensionNV %layout2 %m0 %u16 %u16"})
neg("ta-set-result-is-view", "TA-Operand-Type", K, {B: "%x = OpTensorLayoutSetDimensionNV %view2 %l0 %u16 %u16"})
neg("ta-view-set-input-is-layout", "TA-Operand-Type", K, {B: "%x = OpTensorViewSetDimensionNV %view2 %l0 %u16 %u16"})

# ----------------------------------------------------------------------------------------
# SPV_NV_cooperative_matrix_decode_vector
# ----------------------------------------------------------------------------------------
neg("dv-requires-decode-func", "DV-RequiresDecodeFunc", K, {B: "%x = OpCooperativeMatrixLoadTensorNV %matA %p %a %l2 None DecodeVectorFunc %decv"})
neg("dv-return-scalar", "DV-ReturnType", K, {B: "%x = OpCooperativeMatrixLoadTensorNV %matA %p %a %l2 None DecodeFunc|DecodeVectorFunc %dec %dec"})
with_decode("dv-return-v3", "DV-ReturnType", "%v3half", ["%ppsb", "%arr2", "%arr2"], "%v3half = OpTypeVector %half 3\n%v3h1 = OpConstantComposite %v3half %h1 %h1 %h1", "OpReturnValue %v3h1", vector=True)
with_decode("dv-return-wrong-component", "DV-ReturnType", "%v4float", ["%ppsb", "%arr2", "%arr2"], "%v4float = OpTypeVector %float 4\n%f1 = OpConstant %float 1\n%v4f1 = OpConstantComposite %v4float %f1 %f1 %f1 %f1", "OpReturnValue %v4f1", vector=True)
with_decode("dv-params-count", "DV-Params", "%v4half", ["%ppsb", "%arr2"], "", "OpReturnValue %v4h1", vector=True)
with_decode("dv-params-array-of-half", "DV-Params", "%v4half", ["%ppsb", "%arrh2", "%arrh2"], "%arrh2 = OpTypeArray %half %u2", "OpReturnValue %v4h1", vector=True)
with_decode("dv-params-first-not-psb", "DV-Params", "%v4half", ["%ph", "%arr2", "%arr2"], "", "OpReturnValue %v4h1", vector=True)
with_decode("dv-params-array-length", "DV-Params", "%v4half", ["%ppsb", "%arr3", "%arr3"], "%arr3 = OpTypeArray %uint %u3", "OpReturnValue %v4h1", vector=True)
neg("dv-block-size-not-multiple", "DV-BlockSize-Multiple", K, {B: "%lb = OpTensorLayoutSetBlockSizeNV %layout2 %l1 %u1 %u2\n%x = OpCooperativeMatrixLoadTensorNV %matA %p %a %lb None DecodeFunc|DecodeVectorFunc %dec %decv"})
neg("dv-block-size-through-slice", "DV-BlockSize-Multiple", K, {B: "%lb = OpTensorLayoutSetBlockSizeNV %layout2 %l1 %u1 %u3\n%ls = OpTensorLayoutSliceNV %layout2 %lb %u0 %u16 %u0 %u16\n%x = OpCooperativeMatrixLoadTensorNV %matA %p %a %ls None DecodeFunc|DecodeVectorFunc %dec %decv"})
with_decode("dv-block-size-v2-odd", "DV-BlockSize-Multiple", "%v2half", ["%ppsb", "%arr2", "%arr2"], "%v2h1 = OpConstantComposite %v2half %h1 %h1", "OpReturnValue %v2h1", vector=True)
NEG[-1] = (NEG[-1][0], NEG[-1][1], NEG[-1][2], dict(NEG[-1][3], BODY="%lb = OpTensorLayoutSetBlockSizeNV %layout2 %l1 %u1 %u1\n%x = OpCooperativeMatrixLoadTensorNV %matA %p %a %lb None DecodeFunc|DecodeVectorFunc %dec %dx"), *NEG[-1][4:])
neg("dv-block-size-8-with-v8", "DV-BlockSize-Multiple", K, {"CAPS": "OpCapability LongVectorEXT", "EXTS": 'OpExtension "SPV_EXT_long_vector"', T: "%v8half = OpTypeVector %half 8\n%v8h1 = OpConstantComposite %v8half %h1 %h1 %h1 %h1 %h1 %h1 %h1 %h1\n%d8t = OpTypeFunction %v8half %ppsb %arr2 %arr2", B: "%x = OpCooperativeMatrixLoadTensorNV %matA %p %a %l2 None DecodeFunc|DecodeVectorFunc %dec %d8", F: "%d8 = OpFunction %v8half None %d8t\n%d8p0 = OpFunctionParameter %ppsb\n%d8p1 = OpFunctionParameter %arr2\n%d8p2 = OpFunctionParameter %arr2\n%d8l = OpLabel\nOpReturnValue %v8h1\nOpFunctionEnd"})

# ----------------------------------------------------------------------------------------
# SPV_QCOM_cooperative_matrix_conversion
# ----------------------------------------------------------------------------------------
Q = "qcom"
neg("qcom-construct-workgroup-scope", "QCOM-Construct", Q, {T: "%matAw = OpTypeCooperativeMatrixKHR %half %u2 %u16 %u16 %u0", B: "%x = OpCompositeConstructCoopMatQCOM %matAw %arr"})
neg("qcom-construct-a-columns", "QCOM-Construct", Q, {T: "%matA8 = OpTypeCooperativeMatrixKHR %half %u3 %u16 %u8 %u0", B: "%x = OpCompositeConstructCoopMatQCOM %matA8 %arr"})
neg("qcom-construct-b-rows", "QCOM-Construct", Q, {T: "%matB8 = OpTypeCooperativeMatrixKHR %half %u3 %u8 %u16 %u1", B: "%x = OpCompositeConstructCoopMatQCOM %matB8 %arr"})
neg("qcom-construct-array-length", "QCOM-Construct", Q, {B: "%s8 = OpExtractSubArrayQCOM %arrh8 %arr %u0\n%x = OpCompositeConstructCoopMatQCOM %matA %s8"})
neg("qcom-construct-array-element", "QCOM-Construct", Q, {T: "%arrf16 = OpTypeArray %float %u16\n%pf16 = OpTypePointer Function %arrf16", V: "%fv = OpVariable %pf16 Function", B: "%fa = OpLoad %arrf16 %fv\n%x = OpCompositeConstructCoopMatQCOM %matA %fa"})
neg("qcom-construct-not-array", "QCOM-Construct", Q, {T: "%h1 = OpConstant %half 1", B: "%x = OpCompositeConstructCoopMatQCOM %matA %h1"})
neg("qcom-construct-accumulator-int8", "QCOM-Construct", Q, {T: "%arrc16 = OpTypeArray %uchar %u16\n%pc16 = OpTypePointer Function %arrc16\n%matCc = OpTypeCooperativeMatrixKHR %uchar %u3 %u16 %u16 %u2", V: "%cv = OpVariable %pc16 Function", B: "%ca = OpLoad %arrc16 %cv\n%x = OpCompositeConstructCoopMatQCOM %matCc %ca"})
neg("qcom-construct-packed-length", "QCOM-Construct", Q, {T: "%arru16 = OpTypeArray %uint %u16\n%pu16 = OpTypePointer Function %arru16", V: "%uv = OpVariable %pu16 Function", B: "%ua = OpLoad %arru16 %uv\n%x = OpCompositeConstructCoopMatQCOM %matA %ua"})
neg("qcom-construct-result-not-matrix", "QCOM-Construct", Q, {B: "%x = OpCompositeConstructCoopMatQCOM %arrh16 %arr"})
neg("qcom-extract-length", "QCOM-Extract", Q, {B: "%x = OpCompositeExtractCoopMatQCOM %arrh8 %ma"})
neg("qcom-extract-not-matrix", "QCOM-Extract", Q, {B: "%x = OpCompositeExtractCoopMatQCOM %arrh16 %arr"})
neg("qcom-extract-element", "QCOM-Extract", Q, {T: "%arrf16 = OpTypeArray %float %u16", B: "%x = OpCompositeExtractCoopMatQCOM %arrf16 %ma"})
neg("qcom-extract-b-rows", "QCOM-Extract", Q, {T: "%matB8 = OpTypeCooperativeMatrixKHR %half %u3 %u8 %u16 %u1\n%pb8 = OpTypePointer Function %matB8", V: "%bv = OpVariable %pb8 Function", B: "%bm = OpLoad %matB8 %bv\n%x = OpCompositeExtractCoopMatQCOM %arrh16 %bm"})
neg("qcom-sub-array-element", "QCOM-ExtractSubArray", Q, {B: "%x = OpExtractSubArrayQCOM %arru8 %arr %u0"})
neg("qcom-sub-array-index-half", "QCOM-ExtractSubArray", Q, {T: "%h0 = OpConstant %half 0", B: "%x = OpExtractSubArrayQCOM %arrh8 %arr %h0"})
neg("qcom-sub-array-too-long", "QCOM-ExtractSubArray", Q, {T: "%u12 = OpConstant %uint 12", B: "%x = OpExtractSubArrayQCOM %arrh8 %arr %u12"})
neg("qcom-sub-array-longer-than-source", "QCOM-ExtractSubArray", Q, {T: "%arrh32 = OpTypeArray %half %u32", B: "%x = OpExtractSubArrayQCOM %arrh32 %arr %u0"})
neg("qcom-sub-array-not-array", "QCOM-ExtractSubArray", Q, {B: "%x = OpExtractSubArrayQCOM %half %arr %u0"})
neg("qcom-bitcast-size", "QCOM-BitCastArray", Q, {T: "%arru4 = OpTypeArray %uint %u3", B: "%x = OpBitCastArrayQCOM %arru4 %arr"})
neg("qcom-bitcast-int8", "QCOM-BitCastArray", Q, {T: "%arrc32 = OpTypeArray %uchar %u32", B: "%x = OpBitCastArrayQCOM %arrc32 %arr"})
neg("qcom-bitcast-not-array", "QCOM-BitCastArray", Q, {B: "%x = OpBitCastArrayQCOM %uint %arr"})

# ----------------------------------------------------------------------------------------
# SPV_NV_cooperative_vector
# ----------------------------------------------------------------------------------------
C = "coopvec"
neg("cv-type-component-bool", "CV-Type", C, {T: "%cb = OpTypeCooperativeVectorNV %bool %u4"})
neg("cv-type-count-undef", "CV-Type", C, {T: "%und = OpUndef %uint\n%cb = OpTypeCooperativeVectorNV %half %und"})
neg("cv-type-count-half", "CV-Type", C, {T: "%hh = OpConstant %half 4\n%cb = OpTypeCooperativeVectorNV %half %hh"})
neg("cv-load-result-not-vector", "CV-LoadStore", C, {B: "%z = OpCooperativeVectorLoadNV %half %pa %u0"})
neg("cv-load-storage-private", "CV-LoadStore", C, {T: "%ahp = OpTypeArray %half %u8\n%pah = OpTypePointer Private %ahp\n%pv = OpVariable %pah Private", B: "%z = OpCooperativeVectorLoadNV %cv %pv %u0"}, subs=[('"main" %buf', '"main" %buf %pv')])
neg("cv-load-offset-half", "CV-LoadStore", C, {T: "%hh = OpConstant %half 0", B: "%z = OpCooperativeVectorLoadNV %cv %pa %hh"})
neg("cv-store-object-not-vector", "CV-LoadStore", C, {T: "%hh = OpConstant %half 0", B: "OpCooperativeVectorStoreNV %pa %u0 %hh"})
neg("cv-matmul-result-not-vector", "CV-MatrixMul", C, {B: "%z = OpCooperativeVectorMatrixMulNV %half %x %u0 %pa %u0 %u0 %u4 %u4 %u0 %false %u8"})
neg("cv-matmul-input-not-vector", "CV-MatrixMul", C, {T: "%hh = OpConstant %half 0", B: "%z = OpCooperativeVectorMatrixMulNV %cv %hh %u0 %pa %u0 %u0 %u4 %u4 %u0 %false %u8"})
neg("cv-matmul-k-not-constant", "CV-MatrixMul", C, {T: "%pfu = OpTypePointer Function %uint", V: "%kv = OpVariable %pfu Function", B: "%kk = OpLoad %uint %kv\n%z = OpCooperativeVectorMatrixMulNV %cv %x %u0 %pa %u0 %u0 %u4 %kk %u0 %false %u8"})
neg("cv-matmul-transpose-not-bool", "CV-MatrixMul", C, {B: "%z = OpCooperativeVectorMatrixMulNV %cv %x %u0 %pa %u0 %u0 %u4 %u4 %u0 %u0 %u8"})
neg("cv-matmul-m-mismatch", "CV-MatrixMul", C, {B: "%z = OpCooperativeVectorMatrixMulNV %cv %x %u0 %pa %u0 %u0 %u8 %u4 %u0 %false %u8"})
neg("cv-matmul-k-mismatch", "CV-MatrixMul", C, {B: "%z = OpCooperativeVectorMatrixMulNV %cv %x %u0 %pa %u0 %u0 %u4 %u8 %u0 %false %u8"})
neg("cv-outer-product-types", "CV-Accumulate", C, {T: "%cvf = OpTypeCooperativeVectorNV %uint %u4", B: "%xu = OpCooperativeVectorLoadNV %cvf %pa %u0\nOpCooperativeVectorOuterProductAccumulateNV %pa %u0 %x %xu %u0 %u0 %u8"})
neg("cv-reduce-sum-not-vector", "CV-Accumulate", C, {T: "%hh = OpConstant %half 0", B: "OpCooperativeVectorReduceSumAccumulateNV %pa %u0 %hh"})

# ----------------------------------------------------------------------------------------
# Vulkan device profiles (coopmat only: spirv-val has no device limits)
# ----------------------------------------------------------------------------------------
H, L = "nvidia-h100-580", "lavapipe-26"
neg("vk-type-unsupported-float-a", "VK-Profile-Type", K, {T: "%matAf = OpTypeCooperativeMatrixKHR %float %u3 %u16 %u16 %u0"}, profile=H)
neg("vk-type-unsupported-rows", "VK-Profile-Type", K, {T: "%u24 = OpConstant %uint 24\n%matA24 = OpTypeCooperativeMatrixKHR %half %u3 %u24 %u16 %u0"}, profile=H)
neg("vk-muladd-unsupported-k", "VK-Profile-MulAdd", K, {T: A8 + "\n%matB816 = OpTypeCooperativeMatrixKHR %half %u3 %u8 %u16 %u1", B: "%a8 = OpCooperativeMatrixLoadKHR %matA8 %p %u0 %u16\n%b8 = OpCooperativeMatrixLoadKHR %matB816 %p %u0 %u16\n%x = OpCooperativeMatrixMulAddKHR %matC %a8 %b8 %c"}, profile=H)
neg("vk-muladd-unsupported-result", "VK-Profile-MulAdd", K, {T: "%matCf = OpTypeCooperativeMatrixKHR %float %u3 %u16 %u16 %u2", B: "%x = OpCooperativeMatrixMulAddKHR %matCf %a %b %c"}, profile=H)
INT8 = "%matAc = OpTypeCooperativeMatrixKHR %uchar %u3 %u16 %u32 %u0\n%matBc = OpTypeCooperativeMatrixKHR %uchar %u3 %u32 %u16 %u1\n%matCi = OpTypeCooperativeMatrixKHR %uint %u3 %u16 %u16 %u2\n%ci0 = OpConstantComposite %matCi %u0\n%uc1 = OpConstant %uchar 1\n%ac1 = OpConstantComposite %matAc %uc1\n%bc1 = OpConstantComposite %matBc %uc1"
neg("vk-signedness-a-only", "VK-Profile-Signedness", K, {T: INT8, B: "%x = OpCooperativeMatrixMulAddKHR %matCi %ac1 %bc1 %ci0 MatrixASignedComponentsKHR"}, profile=H)
neg("vk-signedness-result-only", "VK-Profile-Signedness", K, {T: INT8, B: "%x = OpCooperativeMatrixMulAddKHR %matCi %ac1 %bc1 %ci0 MatrixResultSignedComponentsKHR"}, profile=H)
neg("vk-saturating-float", "VK-Profile-Saturating", K, {B: "%x = OpCooperativeMatrixMulAddKHR %matC %a %b %c SaturatingAccumulationKHR"}, profile=H)
neg("vk-saturating-int", "VK-Profile-Saturating", K, {T: INT8, B: "%x = OpCooperativeMatrixMulAddKHR %matCi %ac1 %bc1 %ci0 SaturatingAccumulationKHR"}, profile=H)
neg("vk-scope-workgroup-lavapipe", "VK-Profile-Scope", K, {T: "%matAw = OpTypeCooperativeMatrixKHR %half %u2 %u16 %u16 %u0"}, profile=L)
neg("vk-local-size-not-multiple", "VK-Profile-LocalSize", K, subs=[("LocalSize 32 1 1", "LocalSize 16 1 1")], profile=H)
neg("vk-local-size-lavapipe", "VK-Profile-LocalSize", K, subs=[("LocalSize 32 1 1", "LocalSize 4 2 1")], profile=L)
neg("vk-workgroup-scope-size-pow2", "VK-Profile-LocalSize", K, {T: "%matAw = OpTypeCooperativeMatrixKHR %half %u2 %u16 %u16 %u0"}, subs=[("LocalSize 32 1 1", "LocalSize 96 1 1")], profile=H)
neg("vk-workgroup-scope-size-max", "VK-Profile-LocalSize", K, {T: "%matAw = OpTypeCooperativeMatrixKHR %half %u2 %u16 %u16 %u0"}, subs=[("LocalSize 32 1 1", "LocalSize 512 1 1")], profile=H)
neg("vk-stage-fragment", "VK-Profile-Stage", "core", {"CAPS": "OpCapability CooperativeMatrixKHR\nOpCapability Float16\nOpCapability VulkanMemoryModel", "EXTS": 'OpExtension "SPV_KHR_cooperative_matrix"', T: "%half = OpTypeFloat 16\n%u3 = OpConstant %uint 3\n%u16 = OpConstant %uint 16\n%mx = OpTypeCooperativeMatrixKHR %half %u3 %u16 %u16 %u0"}, subs=[("OpMemoryModel Logical GLSL450", "OpMemoryModel Logical Vulkan"), ('OpEntryPoint GLCompute %main "main"', 'OpEntryPoint Fragment %main "main"'), ("OpExecutionMode %main LocalSize 32 1 1", "OpExecutionMode %main OriginUpperLeft")], profile=H)
neg("vk-stride-alignment", "VK-Profile-Alignment", K, {B: "%x = OpCooperativeMatrixLoadKHR %matA %p %u0 %u4"}, profile=H)
neg("vk-stride-alignment-column", "VK-Profile-Alignment", K, {B: "OpCooperativeMatrixStoreKHR %p %d %u1 %u3"}, profile=L)
neg("vk-pointer-alignment", "VK-Profile-Alignment", K, {B: "%p4 = OpAccessChain %ph %buf %u0 %u4\n%x = OpCooperativeMatrixLoadKHR %matA %p4 %u0 %u16"}, profile=H)
neg("vk-pointer-alignment-store", "VK-Profile-Alignment", K, {T: "%u5 = OpConstant %uint 5", B: "%p5 = OpAccessChain %ph %buf %u0 %u5\nOpCooperativeMatrixStoreKHR %p5 %d %u0 %u16"}, profile=L)
neg("vk-flexible-max-dimension", "VK-Profile-FlexMaxDimension", K, {T: "%u2048 = OpConstant %uint 2048\n%matAbig = OpTypeCooperativeMatrixKHR %half %u3 %u2048 %u16 %u0"}, profile=L)
neg("vk-coopvec-lavapipe", "VK-Profile-CoopVecType", C, profile=L, note="lavapipe has no VK_NV_cooperative_vector")
neg("vk-coopvec-components", "VK-Profile-CoopVecType", C, {T: "%u1024 = OpConstant %uint 1024\n%cvbig = OpTypeCooperativeVectorNV %half %u1024"}, profile=H, note="1024 > maxCooperativeVectorComponents 512")
neg("vk-coopvec-type-unlisted", "VK-Profile-CoopVecType", C, {"CAPS": "OpCapability Int16", T: "%ushort = OpTypeInt 16 0\n%cvu16 = OpTypeCooperativeVectorNV %ushort %u4"}, profile=H, note="no H100 combination has uint16 input or result")
neg("vk-coopvec-combination-result", "VK-Profile-CoopVecCombination", C, {T: "%float = OpTypeFloat 32\n%cvf32 = OpTypeCooperativeVectorNV %float %u4", B: "%yf = OpCooperativeVectorMatrixMulNV %cvf32 %x %u0 %pa %u0 %u0 %u4 %u4 %u0 %false %u8"}, profile=H, note="float16 products with a float32 result are not listed")
neg("vk-coopvec-transpose-fp8", "VK-Profile-CoopVecCombination", C, {T: "%true = OpConstantTrue %bool\n%u2 = OpConstant %uint 2\n%e4 = OpConstant %uint 1000491002", B: "%yt = OpCooperativeVectorMatrixMulNV %cv %x %e4 %pa %u0 %e4 %u4 %u4 %u2 %true"}, profile=H, note="e4m3 is listed without transpose")
neg("vk-coopvec-training-f32", "VK-Profile-CoopVecTraining", C, {T: "%u1 = OpConstant %uint 1", B: "OpCooperativeVectorOuterProductAccumulateNV %pa %u0 %x %x %u0 %u1 %u8"}, profile=H, note="the H100 accumulates in f16 only")

# ----------------------------------------------------------------------------------------
# Positive cases named by SPIRV-Tools' own tests, as our own modules
# ----------------------------------------------------------------------------------------
pos("coopvec-h100-profile", C, note="the cooperative-vector base module against the H100 profile: float16 product, f16 training accumulations", profile=H)
pos("coop2-base", K, note="KHR load/store/muladd, tensor layout and view, decode with DecodeFunc|DecodeVectorFunc (V=4), reduce, per-element op, convert, transpose")
for v in (2, 4, 8):
    extra = {"CAPS": "OpCapability LongVectorEXT", "EXTS": 'OpExtension "SPV_EXT_long_vector"'} if v == 8 else {}
    comps = " ".join(["%h1"] * v)
    blk = {2: "%u2", 4: "%u4", 8: "%u8"}[v]
    vt = {2: "%v2half", 4: "%v4half", 8: "%v8half"}[v]
    types = (f"%v8half = OpTypeVector %half 8\n" if v == 8 else "") + (f"%v{v}c = OpConstantComposite {vt} {comps}\n%dv{v}t = OpTypeFunction {vt} %ppsb %arr2 %arr2" if v != 4 else "")
    fn = "%decv" if v == 4 else f"%dv{v}"
    parts = dict(extra, **{B: f"%lb = OpTensorLayoutSetBlockSizeNV %layout2 %l1 %u1 {blk}\n%x = OpCooperativeMatrixLoadTensorNV %matA %p %a %lb None DecodeFunc|DecodeVectorFunc %dec {fn}"})
    if v != 4:
        parts[T] = types
        parts[F] = f"%dv{v} = OpFunction {vt} None %dv{v}t\n%dv{v}p0 = OpFunctionParameter %ppsb\n%dv{v}p1 = OpFunctionParameter %arr2\n%dv{v}p2 = OpFunctionParameter %arr2\n%dv{v}l = OpLabel\nOpReturnValue %v{v}c\nOpFunctionEnd"
    pos(f"decode-vector-v{v}", K, parts, note=f"vector decode, V={v}")
pos("decode-scalar", K, {B: "%x = OpCooperativeMatrixLoadTensorNV %matA %p %a %l2 None DecodeFunc %dec"}, note="scalar DecodeFunc")
pos("decode-matrix-b", K, {B: "%x = OpCooperativeMatrixLoadTensorNV %matB %p %b %l2 None DecodeFunc|DecodeVectorFunc %dec %decv"}, note="decode into a MatrixB")
pos("decode-with-tensor-view", K, {B: "%x = OpCooperativeMatrixLoadTensorNV %matA %p %a %l2 None TensorView|DecodeFunc|DecodeVectorFunc %v1 %dec %decv"}, note="decode with a tensor view")
pos("decode-vector-spec-constant-length", K, {"CAPS": "OpCapability LongVectorEXT", "EXTS": 'OpExtension "SPV_EXT_long_vector"', "DECOR": "OpDecorate %vlen SpecId 0", T: "%vlen = OpSpecConstant %uint 4\n%vsc = OpTypeVectorIdEXT %half %vlen\n%vsct = OpTypeFunction %vsc %ppsb %arr2 %arr2\n%vscu = OpUndef %vsc", B: "%x = OpCooperativeMatrixLoadTensorNV %matA %p %a %l2 None DecodeFunc|DecodeVectorFunc %dec %dvs", F: "%dvs = OpFunction %vsc None %vsct\n%dvsp0 = OpFunctionParameter %ppsb\n%dvsp1 = OpFunctionParameter %arr2\n%dvsp2 = OpFunctionParameter %arr2\n%dvsl = OpLabel\nOpReturnValue %vscu\nOpFunctionEnd"}, note="DecodeVectorFunc returning OpTypeVectorIdEXT whose length is a spec constant (LongVectorEXT)")
pos("reduce-row-column-2x2", K, {T: "%matC8 = OpTypeCooperativeMatrixKHR %half %u3 %u8 %u8 %u2\n%matC1 = OpTypeCooperativeMatrixKHR %half %u3 %u16 %u1 %u2\n%matR1 = OpTypeCooperativeMatrixKHR %half %u3 %u1 %u16 %u2", B: "%r1 = OpCooperativeMatrixReduceNV %matC1 %d Row %comb\n%r2 = OpCooperativeMatrixReduceNV %matR1 %d Column %comb\n%r3 = OpCooperativeMatrixReduceNV %matC8 %d 2x2 %comb"}, note="reductions: Row, Column, Row|Column, 2x2")
pos("per-element-optional-operands", K, {T: "%pf5 = OpTypeFunction %half %uint %uint %half %half %uint", B: "%x = OpCooperativeMatrixPerElementOpNV %matC %d %pe5 %d %u1", F: "%pe5 = OpFunction %half None %pf5\n%q0 = OpFunctionParameter %uint\n%q1 = OpFunctionParameter %uint\n%q2 = OpFunctionParameter %half\n%q3 = OpFunctionParameter %half\n%q4 = OpFunctionParameter %uint\n%ql = OpLabel\n%qs = OpFAdd %half %q2 %q3\nOpReturnValue %qs\nOpFunctionEnd"}, note="per-element op with a matrix and a scalar optional operand")
pos("qcom-construct-extract-each-use", Q, note="QCOM construct/extract for Use A, B and Accumulator, sub-array, bitcast-array")
pos("qcom-construct-packed-uint", Q, {T: "%pu8 = OpTypePointer Function %arru8", V: "%uv = OpVariable %pu8 Function", B: "%ua = OpLoad %arru8 %uv\n%pa = OpCompositeConstructCoopMatQCOM %matA %ua\n%pb = OpCompositeConstructCoopMatQCOM %matB %ua\n%pc = OpCompositeConstructCoopMatQCOM %matC %ua"}, note="QCOM construct from packed uint32 arrays (A, B, Accumulator)")
pos("spec-constant-op-length", K, {T: "%lenA = OpSpecConstantOp %uint CooperativeMatrixLengthKHR %matA"}, note="OpCooperativeMatrixLengthKHR inside OpSpecConstantOp takes a type operand")
pos("nv1-base", N, note="SPV_NV_cooperative_matrix load/muladd/length/store")
pos("coopvec-base", C, note="SPV_NV_cooperative_vector load/matmul/store/outer product/reduce-sum")
pos("profile-h100-supported", K, note="the base module under the H100 profile", profile=H)
pos("profile-h100-aligned-pointer", K, {B: "%p8 = OpAccessChain %ph %buf %u0 %u8\n%x = OpCooperativeMatrixLoadKHR %matA %p8 %u0 %u16"}, note="a pointer 16 bytes into the buffer under the H100 profile", profile=H)


def write(folder, name, text, header):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name + ".spvasm"), "w") as f:
        f.write(header + text)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    for d in ("negative", "positive"):
        folder = os.path.join(here, d)
        if os.path.isdir(folder):
            for f in os.listdir(folder):
                if f.endswith(".spvasm"):
                    os.remove(os.path.join(folder, f))
    names = set()
    for name, rule, tpl, parts, subs, aenv, venv, profile, note in NEG:
        assert name not in names, name
        names.add(name)
        h = f"; expect: {rule}\n"
        if note:
            h += f"; {note}\n"
        if aenv:
            h += f"; assemble-env: {aenv}\n"
        if venv:
            h += f"; validate-env: {venv}\n"
        if profile:
            h += f"; profile: {profile}\n"
        write(os.path.join(here, "negative"), name, render(tpl, parts, subs), h)
    for name, tpl, parts, subs, note, profile in POS:
        h = "; expect: valid\n" + (f"; {note}\n" if note else "") + (f"; profile: {profile}\n" if profile else "")
        write(os.path.join(here, "positive"), name, render(tpl, parts, subs), h)
    print(f"{len(NEG)} negative, {len(POS)} positive cases")


if __name__ == "__main__":
    main()

//! SPIR-V text for the cases: a module builder that declares each component type, buffer and
//! cooperative matrix type once with the capabilities it needs, for `coopmat_spirv::asm`. Modules
//! are SPIR-V 1.6 for Vulkan 1.3 (every global variable in the entry point's interface) with the
//! Vulkan memory model.

use crate::Comp;
use std::collections::BTreeSet;
use std::fmt::Write;

/// A module being written: declarations collected as they are asked for, a body of one function.
pub struct ModuleText {
    caps: BTreeSet<&'static str>,
    exts: BTreeSet<&'static str>,
    decorations: String,
    types: String,
    globals: String,
    interface: Vec<String>,
    declared: BTreeSet<String>,
    local_size: u32,
    physical_addressing: bool,
}

/// The cooperative-matrix use enumerant (SPV_KHR_cooperative_matrix).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Use {
    /// MatrixAKHR
    A,
    /// MatrixBKHR
    B,
    /// MatrixAccumulatorKHR
    Acc,
}

impl Use {
    /// The enumerant's value.
    pub fn value(self) -> u32 {
        match self {
            Use::A => 0,
            Use::B => 1,
            Use::Acc => 2,
        }
    }

    /// Short name for case names.
    pub fn name(self) -> &'static str {
        match self {
            Use::A => "A",
            Use::B => "B",
            Use::Acc => "Acc",
        }
    }
}

/// The scope of a cooperative matrix type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    /// Subgroup (3).
    Subgroup,
    /// Workgroup (2).
    Workgroup,
}

impl Scope {
    /// The Scope enumerant's value.
    pub fn value(self) -> u32 {
        match self {
            Scope::Workgroup => 2,
            Scope::Subgroup => 3,
        }
    }

    /// The name profiles and case names use.
    pub fn name(self) -> &'static str {
        match self {
            Scope::Workgroup => "workgroup",
            Scope::Subgroup => "subgroup",
        }
    }
}

impl ModuleText {
    /// A module whose entry point `main` runs `local_size` invocations.
    pub fn new(local_size: u32) -> ModuleText {
        let mut m = ModuleText {
            caps: BTreeSet::new(),
            exts: BTreeSet::new(),
            decorations: String::new(),
            types: String::new(),
            globals: String::new(),
            interface: Vec::new(),
            declared: BTreeSet::new(),
            local_size,
            physical_addressing: false,
        };
        for c in ["Shader", "VulkanMemoryModel", "CooperativeMatrixKHR"] {
            m.caps.insert(c);
        }
        m.exts.insert("SPV_KHR_cooperative_matrix");
        m.decl("void", "%void = OpTypeVoid");
        m.decl("fn", "%fn = OpTypeFunction %void");
        m.decl("uint", "%uint = OpTypeInt 32 0");
        m.decl("bool", "%bool = OpTypeBool");
        m
    }

    /// Declares `text` once under `key`.
    fn decl(&mut self, key: &str, text: &str) {
        if self.declared.insert(key.to_string()) {
            self.types.push_str(text);
            self.types.push('\n');
        }
    }

    /// Adds a capability.
    pub fn cap(&mut self, c: &'static str) {
        self.caps.insert(c);
    }

    /// Adds an extension.
    pub fn ext(&mut self, e: &'static str) {
        self.exts.insert(e);
    }

    /// The id of a 32-bit unsigned constant.
    pub fn u32(&mut self, v: u32) -> String {
        let id = format!("%c{v}");
        self.decl(&id, &format!("{id} = OpConstant %uint {v}"));
        id
    }

    /// The id of component type `t` (declared with its capabilities).
    pub fn comp(&mut self, t: Comp) -> String {
        let id = format!("%{}", t.name());
        let decl = match t {
            Comp::F16 => {
                self.cap("Float16");
                "OpTypeFloat 16".to_string()
            }
            Comp::BF16 => {
                self.cap("BFloat16TypeKHR");
                self.cap("BFloat16CooperativeMatrixKHR");
                self.ext("SPV_KHR_bfloat16");
                "OpTypeFloat 16 BFloat16KHR".to_string()
            }
            Comp::F32 => "OpTypeFloat 32".to_string(),
            Comp::S8 => {
                self.cap("Int8");
                "OpTypeInt 8 1".to_string()
            }
            Comp::U8 => {
                self.cap("Int8");
                "OpTypeInt 8 0".to_string()
            }
            Comp::S32 => "OpTypeInt 32 1".to_string(),
            Comp::U32 => "OpTypeInt 32 0".to_string(),
        };
        if t == Comp::U32 {
            return "%uint".to_string();
        }
        self.decl(&id, &format!("{id} = {decl}"));
        id
    }

    /// A storage buffer of `t` at (set 0, `binding`): returns (variable, pointer-to-element type).
    pub fn buffer(&mut self, binding: u32, t: Comp) -> (String, String) {
        let ty = self.comp(t);
        let name = t.name();
        match t.bits() {
            8 => self.cap("StorageBuffer8BitAccess"),
            16 => self.cap("StorageBuffer16BitAccess"),
            _ => {}
        }
        let rt = format!("%rt_{name}");
        if self.declared.insert(rt.clone()) {
            writeln!(
                self.decorations,
                "OpDecorate {rt} ArrayStride {}",
                t.bytes()
            )
            .unwrap();
            writeln!(self.types, "{rt} = OpTypeRuntimeArray {ty}").unwrap();
        }
        let blk = format!("%blk_{name}");
        if self.declared.insert(blk.clone()) {
            writeln!(self.decorations, "OpDecorate {blk} Block").unwrap();
            writeln!(self.decorations, "OpMemberDecorate {blk} 0 Offset 0").unwrap();
            writeln!(self.types, "{blk} = OpTypeStruct {rt}").unwrap();
            writeln!(
                self.types,
                "%pblk_{name} = OpTypePointer StorageBuffer {blk}"
            )
            .unwrap();
            writeln!(self.types, "%psb_{name} = OpTypePointer StorageBuffer {ty}").unwrap();
        }
        let var = format!("%buf{binding}");
        writeln!(self.decorations, "OpDecorate {var} DescriptorSet 0").unwrap();
        writeln!(self.decorations, "OpDecorate {var} Binding {binding}").unwrap();
        writeln!(
            self.globals,
            "{var} = OpVariable %pblk_{name} StorageBuffer"
        )
        .unwrap();
        self.interface.push(var.clone());
        (var, format!("%psb_{name}"))
    }

    /// A Workgroup array of `len` elements of `t`: returns (variable, pointer-to-element type).
    pub fn shared(&mut self, t: Comp, len: u32) -> (String, String) {
        let ty = self.comp(t);
        let name = t.name();
        let n = self.u32(len);
        let arr = format!("%warr_{name}_{len}");
        if self.declared.insert(arr.clone()) {
            writeln!(self.types, "{arr} = OpTypeArray {ty} {n}").unwrap();
            writeln!(
                self.types,
                "%pwarr_{name}_{len} = OpTypePointer Workgroup {arr}"
            )
            .unwrap();
        }
        let elem = format!("%pw_{name}");
        self.decl(&elem, &format!("{elem} = OpTypePointer Workgroup {ty}"));
        let var = format!("%sh_{name}_{len}");
        writeln!(
            self.globals,
            "{var} = OpVariable %pwarr_{name}_{len} Workgroup"
        )
        .unwrap();
        self.interface.push(var.clone());
        (var, elem)
    }

    /// The LocalInvocationIndex input variable.
    pub fn local_index(&mut self) -> String {
        let var = "%lindex".to_string();
        if self.declared.insert(var.clone()) {
            writeln!(
                self.decorations,
                "OpDecorate {var} BuiltIn LocalInvocationIndex"
            )
            .unwrap();
            writeln!(self.types, "%pin_uint = OpTypePointer Input %uint").unwrap();
            writeln!(self.globals, "{var} = OpVariable %pin_uint Input").unwrap();
            self.interface.push(var.clone());
        }
        var
    }

    /// A Subgroup-scope cooperative matrix type.
    pub fn mat(&mut self, t: Comp, rows: u32, cols: u32, u: Use) -> String {
        self.mat_in(t, rows, cols, u, Scope::Subgroup)
    }

    /// A cooperative matrix type of `scope` (Workgroup scope comes with
    /// SPV_NV_cooperative_matrix2, declared here).
    pub fn mat_in(&mut self, t: Comp, rows: u32, cols: u32, u: Use, scope: Scope) -> String {
        let ty = self.comp(t);
        if scope == Scope::Workgroup {
            self.ext("SPV_NV_cooperative_matrix2");
        }
        let scope_id = self.u32(scope.value());
        let (r, c, uv) = (self.u32(rows), self.u32(cols), self.u32(u.value()));
        let id = format!(
            "%m_{}_{rows}x{cols}_{}_{}",
            t.name(),
            u.name(),
            scope.name()
        );
        self.decl(
            &id,
            &format!("{id} = OpTypeCooperativeMatrixKHR {ty} {scope_id} {r} {c} {uv}"),
        );
        id
    }

    /// Switches the addressing model to PhysicalStorageBuffer64 (with its capability).
    pub fn physical_addressing(&mut self) {
        self.physical_addressing = true;
        self.cap("PhysicalStorageBufferAddresses");
    }

    /// Adds an annotation line once under `key`.
    pub fn raw_decoration(&mut self, key: &str, text: &str) {
        if self.declared.insert(format!("decoration {key}")) {
            self.decorations.push_str(text);
            self.decorations.push('\n');
        }
    }

    /// Declares a line among the types and constants (after what it uses).
    pub fn raw_decl(&mut self, key: &str, text: &str) {
        self.decl(key, text);
    }

    /// The module text with `body` (the instructions of `main` after its first label).
    pub fn finish(self, body: &str) -> String {
        let mut s = String::new();
        for c in &self.caps {
            writeln!(s, "OpCapability {c}").unwrap();
        }
        for e in &self.exts {
            writeln!(s, "OpExtension \"{e}\"").unwrap();
        }
        if self.physical_addressing {
            s.push_str("OpMemoryModel PhysicalStorageBuffer64 Vulkan\n");
        } else {
            s.push_str("OpMemoryModel Logical Vulkan\n");
        }
        writeln!(
            s,
            "OpEntryPoint GLCompute %main \"main\" {}",
            self.interface.join(" ")
        )
        .unwrap();
        writeln!(s, "OpExecutionMode %main LocalSize {} 1 1", self.local_size).unwrap();
        s.push_str(&self.decorations);
        s.push_str(&self.types);
        s.push_str(&self.globals);
        s.push_str("%main = OpFunction %void None %fn\n%entry = OpLabel\n");
        s.push_str(body);
        s.push_str("OpReturn\nOpFunctionEnd\n");
        s
    }
}

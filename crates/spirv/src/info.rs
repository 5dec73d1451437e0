//! A summary of a module for `coopmat info`: header, capabilities, entry points with their
//! local sizes, every cooperative-matrix / tensor / cooperative-vector type with its
//! parameters resolved, and how often each instruction of the cooperative family occurs.
//!
//! Works on the parsed instruction stream only (no IR), so it summarizes modules that the
//! stricter layers would reject.

use crate::binary::{Instruction, NumberKind, ParseError, ParsedBinary, parse_bytes};
use crate::grammar::{self, OperandKind, op};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::OnceLock;

/// A generator from the Khronos registry of SPIR-V tool ids (`spir-v.xml`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegisteredTool {
    /// The registered vendor.
    pub vendor: &'static str,
    /// The tool, when the registration names one.
    pub tool: Option<&'static str>,
}

/// Khronos-registered generator ids, index = tool id (the header word's high 16 bits).
const GENERATORS: &[(&str, Option<&str>)] = &[
    ("Khronos", None),
    ("LunarG", None),
    ("Valve", None),
    ("Codeplay", None),
    ("NVIDIA", None),
    ("ARM", None),
    ("Khronos", Some("LLVM/SPIR-V Translator")),
    ("Khronos", Some("SPIR-V Tools Assembler")),
    ("Khronos", Some("Glslang Reference Front End")),
    ("Qualcomm", None),
    ("AMD", None),
    ("Intel", None),
    ("Imagination", None),
    ("Google", Some("Shaderc over Glslang")),
    ("Google", Some("spiregg")),
    ("Google", Some("rspirv")),
    ("X-LEGEND", Some("Mesa3D GLSL-IR/SPIR-V Translator")),
    ("Khronos", Some("SPIR-V Tools Linker")),
    ("Wine", Some("VKD3D Shader Compiler")),
    ("Tellusim", Some("Clay Shader Compiler")),
    ("W3C WebGPU Group", Some("WHLSL Shader Translator")),
    ("Google", Some("Clspv")),
    ("LLVM", Some("MLIR SPIR-V Serializer")),
    ("Google", Some("Tint Compiler")),
    ("Google", Some("ANGLE Shader Compiler")),
    ("Netease Games", Some("Messiah Shader Compiler")),
    ("Xenia", Some("Xenia Emulator Microcode Translator")),
    ("Embark Studios", Some("Rust GPU Compiler Backend")),
    ("gfx-rs community", Some("Naga")),
    ("Mikkosoft Productions", Some("MSP Shader Compiler")),
    ("SpvGenTwo community", Some("SpvGenTwo SPIR-V IR Tools")),
    ("Google", Some("Skia SkSL")),
    ("TornadoVM", Some("Beehive SPIRV Toolkit")),
    ("DragonJoker", Some("ShaderWriter")),
    ("Rayan Hatout", Some("SPIRVSmith")),
    ("Saarland University", Some("Shady")),
    ("Taichi Graphics", Some("Taichi")),
    ("heroseh", Some("Hero C Compiler")),
    ("Meta", Some("SparkSL")),
    ("SirLynix", Some("Nazara ShaderLang Compiler")),
    ("Khronos", Some("Slang Compiler")),
    ("Zig Software Foundation", Some("Zig Compiler")),
    ("Rendong Liang", Some("spq")),
    ("LLVM", Some("LLVM SPIR-V Backend")),
    ("Robert Konrad", Some("Kongruent")),
    (
        "Kitsunebi Games",
        Some("Nuvk SPIR-V Emitter and DLSL compiler"),
    ),
    ("Nintendo", None),
    ("ARM", None),
    ("Goopax", None),
    ("Icyllis Milica", Some("Arc3D Shader Compiler")),
    ("Isochron", Some("Pred")),
    ("apilatosba", Some("Apila Jai Compiler")),
];

/// Looks up a registered tool id.
pub fn registered_tool(tool_id: u16) -> Option<RegisteredTool> {
    GENERATORS
        .get(tool_id as usize)
        .map(|&(vendor, tool)| RegisteredTool { vendor, tool })
}

/// The generator as spirv-dis names it: `"<vendor>[ <tool>]"`, or `"Unknown(<id>)"`.
pub fn generator_name(tool_id: u16) -> String {
    match registered_tool(tool_id) {
        Some(RegisteredTool {
            vendor,
            tool: Some(tool),
        }) => format!("{vendor} {tool}"),
        Some(RegisteredTool { vendor, tool: None }) => vendor.to_string(),
        None => format!("Unknown({tool_id})"),
    }
}

/// A literal scalar value of a constant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    UInt(u64),
    /// A float (widened to f64).
    Float(f64),
    /// A boolean.
    Bool(bool),
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Int(v) => write!(f, "{v}"),
            Scalar::UInt(v) => write!(f, "{v}"),
            Scalar::Float(v) => write!(f, "{v}"),
            Scalar::Bool(v) => write!(f, "{v}"),
        }
    }
}

impl Scalar {
    /// The value as an unsigned integer, if it is a non-negative integer.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Scalar::UInt(v) => Some(v),
            Scalar::Int(v) => u64::try_from(v).ok(),
            _ => None,
        }
    }
}

/// What an id operand (a dimension, scope, use, ...) resolves to.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A literal (for local sizes given by `LocalSize`).
    Literal(u32),
    /// An `OpConstant*`.
    Constant {
        /// The id.
        id: u32,
        /// Its value.
        value: Scalar,
    },
    /// An `OpSpecConstant*`: specialization may change it.
    SpecConstant {
        /// The id.
        id: u32,
        /// Its `SpecId` decoration, if any.
        spec_id: Option<u32>,
        /// The default value.
        default: Scalar,
    },
    /// An `OpSpecConstantOp` (computed from other spec constants at specialization time).
    SpecConstantOp {
        /// The id.
        id: u32,
        /// The operation's instruction name, e.g. `OpIMul`.
        operation: String,
    },
    /// Anything else (not a scalar constant, or undefined).
    Other {
        /// The id.
        id: u32,
    },
}

impl Value {
    /// The value as far as it is known without specialization (the default for spec constants).
    pub fn default_u64(&self) -> Option<u64> {
        match self {
            Value::Literal(v) => Some(*v as u64),
            Value::Constant { value, .. } | Value::SpecConstant { default: value, .. } => {
                value.as_u64()
            }
            _ => None,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Literal(v) => write!(f, "{v}"),
            Value::Constant { value, .. } => write!(f, "{value}"),
            Value::SpecConstant {
                spec_id: Some(s),
                default,
                ..
            } => write!(f, "spec constant {s} (default {default})"),
            Value::SpecConstant {
                id,
                spec_id: None,
                default,
            } => {
                write!(f, "spec constant %{id} without SpecId (default {default})")
            }
            Value::SpecConstantOp { id, operation } => write!(f, "%{id} = spec op {operation}"),
            Value::Other { id } => write!(f, "%{id}"),
        }
    }
}

/// An `OpEntryPoint` with its workgroup size.
#[derive(Clone, Debug, PartialEq)]
pub struct EntryPoint {
    /// Execution model name, e.g. `GLCompute`.
    pub execution_model: String,
    /// The entry point's name.
    pub name: String,
    /// The function id.
    pub function: u32,
    /// Workgroup size (x, y, z), from a `WorkgroupSize` built-in (which takes precedence, see
    /// SPIR-V spec 3.21 BuiltIn), `LocalSizeId` or `LocalSize`.
    pub local_size: Option<[Value; 3]>,
    /// Which of those gave the size: `"WorkgroupSize"`, `"LocalSizeId"` or `"LocalSize"`.
    pub local_size_source: Option<&'static str>,
}

/// Which cooperative-matrix instruction set a type comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatrixFlavor {
    /// `OpTypeCooperativeMatrixKHR` (SPV_KHR_cooperative_matrix).
    Khr,
    /// `OpTypeCooperativeMatrixNV` (SPV_NV_cooperative_matrix).
    Nv,
}

/// A cooperative-matrix type.
#[derive(Clone, Debug, PartialEq)]
pub struct CoopMatrixType {
    /// The type id.
    pub id: u32,
    /// Its debug name, if any.
    pub name: Option<String>,
    /// KHR or NV.
    pub flavor: MatrixFlavor,
    /// Component type, e.g. `f16`, `bf16`, `i8`, `u32`.
    pub component: String,
    /// The scope (`Subgroup`, `Workgroup`, ...), resolved.
    pub scope: Value,
    /// Scope name when the scope is a known constant.
    pub scope_name: Option<String>,
    /// Rows.
    pub rows: Value,
    /// Columns.
    pub columns: Value,
    /// Use (`MatrixA`, `MatrixB`, `MatrixAccumulator`); KHR only.
    pub matrix_use: Option<Value>,
    /// Use name when known.
    pub use_name: Option<String>,
}

/// An `OpTypeTensorLayoutNV`.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorLayoutType {
    /// The type id.
    pub id: u32,
    /// Number of dimensions.
    pub dim: Value,
    /// Clamp mode.
    pub clamp_mode: Value,
    /// Clamp mode name when known.
    pub clamp_mode_name: Option<String>,
}

/// An `OpTypeTensorViewNV`.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorViewType {
    /// The type id.
    pub id: u32,
    /// Number of dimensions.
    pub dim: Value,
    /// Whether the view has its own dimensions.
    pub has_dimensions: Value,
    /// The dimension permutation.
    pub permutation: Vec<Value>,
}

/// An `OpTypeCooperativeVectorNV`.
#[derive(Clone, Debug, PartialEq)]
pub struct CoopVectorType {
    /// The type id.
    pub id: u32,
    /// Component type.
    pub component: String,
    /// Number of components.
    pub count: Value,
}

/// Everything `coopmat info` reports about one module.
#[derive(Clone, Debug, PartialEq)]
pub struct ModuleInfo {
    /// (major, minor) SPIR-V version.
    pub version: (u8, u8),
    /// Raw generator word.
    pub generator_word: u32,
    /// Generator tool id (high 16 bits).
    pub generator_id: u16,
    /// Generator name as spirv-dis prints it.
    pub generator: String,
    /// Tool-specific version (low 16 bits).
    pub generator_version: u16,
    /// Id bound.
    pub bound: u32,
    /// Declared capabilities, by name, in module order.
    pub capabilities: Vec<String>,
    /// Declared extensions, in module order.
    pub extensions: Vec<String>,
    /// Extended instruction set imports, in module order.
    pub ext_inst_imports: Vec<String>,
    /// Addressing model name.
    pub addressing_model: Option<String>,
    /// Memory model name.
    pub memory_model: Option<String>,
    /// Entry points.
    pub entry_points: Vec<EntryPoint>,
    /// Cooperative-matrix types (KHR and NV) in module order.
    pub coop_matrix_types: Vec<CoopMatrixType>,
    /// Tensor-layout types.
    pub tensor_layout_types: Vec<TensorLayoutType>,
    /// Tensor-view types.
    pub tensor_view_types: Vec<TensorViewType>,
    /// Cooperative-vector types.
    pub coop_vector_types: Vec<CoopVectorType>,
    /// Occurrences of each instruction of the cooperative family, by name (sorted).
    pub coop_instructions: BTreeMap<String, usize>,
    /// Number of instructions.
    pub instruction_count: usize,
}

/// Why a module could not be summarized.
pub type InfoError = ParseError;

/// Whether an extension belongs to the cooperative family (matrix, vector, tensor addressing).
pub fn is_cooperative_extension(name: &str) -> bool {
    [
        "cooperative_matrix",
        "cooperative_vector",
        "tensor_addressing",
    ]
    .iter()
    .any(|k| name.contains(k))
}

/// Whether a capability belongs to the cooperative family: its name says so, or an extension
/// of the family enables it (e.g. `TensorAddressingNV`).
pub fn is_cooperative_capability(e: &grammar::EnumerantDesc) -> bool {
    e.name.contains("Cooperative") || e.extensions.iter().any(|x| is_cooperative_extension(x))
}

/// Whether an instruction belongs to the cooperative family: the grammar makes it depend on a
/// capability or an extension of the family.
/// The cooperative-matrix instructions that are tangled whatever their operand types
/// (SPV_KHR_cooperative_matrix, SPV_NV_cooperative_matrix, SPV_NV_cooperative_matrix2's tangled
/// list, SPV_QCOM_cooperative_matrix_conversion). Arithmetic, conversions and construction are
/// tangled too when a cooperative matrix is their result or operand.
pub fn is_tangled_matrix_instruction(opcode: u16) -> bool {
    matches!(
        opcode,
        op::CooperativeMatrixLoadKHR
            | op::CooperativeMatrixStoreKHR
            | op::CooperativeMatrixMulAddKHR
            | op::CooperativeMatrixLoadNV
            | op::CooperativeMatrixStoreNV
            | op::CooperativeMatrixMulAddNV
            | op::CooperativeMatrixLoadTensorNV
            | op::CooperativeMatrixStoreTensorNV
            | op::CooperativeMatrixReduceNV
            | op::CooperativeMatrixConvertNV
            | op::CooperativeMatrixTransposeNV
            | op::CooperativeMatrixPerElementOpNV
            | op::CompositeConstructCoopMatQCOM
            | op::CompositeExtractCoopMatQCOM
    )
}

pub fn is_cooperative_instruction(opcode: u16) -> bool {
    static SET: OnceLock<Vec<u16>> = OnceLock::new();
    SET.get_or_init(|| {
        grammar::INSTRUCTIONS
            .iter()
            .filter(|inst| {
                inst.capabilities.iter().any(|c| {
                    grammar::enumerant_by_name(OperandKind::Capability, c)
                        .is_some_and(is_cooperative_capability)
                }) || inst.extensions.iter().any(|x| is_cooperative_extension(x))
            })
            .map(|inst| inst.opcode)
            .collect()
    })
    .binary_search(&opcode)
    .is_ok()
}

/// Summarizes a module given as bytes.
pub fn module_info_from_bytes(bytes: &[u8]) -> Result<ModuleInfo, InfoError> {
    Ok(module_info(&parse_bytes(bytes)?))
}

fn enum_name(kind: OperandKind, value: u32) -> String {
    grammar::enumerant(kind, value)
        .map(|e| e.name.to_string())
        .unwrap_or_else(|| value.to_string())
}

/// What the summary needs to know about ids.
#[derive(Default)]
struct Ids<'a> {
    defs: HashMap<u32, &'a Instruction>,
    spec_ids: HashMap<u32, u32>,
    names: HashMap<u32, String>,
    /// Ids decorated `BuiltIn WorkgroupSize`.
    workgroup_size: Vec<u32>,
}

impl Ids<'_> {
    /// Describes a type id as a short component name (`f16`, `bf16`, `u32`, ...).
    fn type_name(&self, id: u32) -> String {
        let Some(inst) = self.defs.get(&id) else {
            return format!("%{id}");
        };
        match inst.opcode {
            op::TypeInt => {
                let (w, s) = (inst.word(1).unwrap_or(0), inst.word(2).unwrap_or(0));
                format!("{}{w}", if s != 0 { "i" } else { "u" })
            }
            op::TypeFloat => {
                let w = inst.word(1).unwrap_or(0);
                match inst.word(2) {
                    Some(grammar::fp_encoding::BFloat16KHR) => "bf16".into(),
                    Some(grammar::fp_encoding::Float8E4M3EXT) => "fp8e4m3".into(),
                    Some(grammar::fp_encoding::Float8E5M2EXT) => "fp8e5m2".into(),
                    Some(enc) => format!("f{w}:{}", enum_name(OperandKind::FPEncoding, enc)),
                    None => format!("f{w}"),
                }
            }
            op::TypeBool => "bool".into(),
            _ => format!("%{id}"),
        }
    }

    /// Resolves an id operand to a constant, spec constant or spec-constant op.
    fn value(&self, id: u32) -> Value {
        let Some(inst) = self.defs.get(&id) else {
            return Value::Other { id };
        };
        let spec = |default: Scalar| Value::SpecConstant {
            id,
            spec_id: self.spec_ids.get(&id).copied(),
            default,
        };
        match inst.opcode {
            op::Constant => scalar(inst)
                .map(|value| Value::Constant { id, value })
                .unwrap_or(Value::Other { id }),
            op::ConstantTrue => Value::Constant {
                id,
                value: Scalar::Bool(true),
            },
            op::ConstantFalse => Value::Constant {
                id,
                value: Scalar::Bool(false),
            },
            op::ConstantNull => Value::Constant {
                id,
                value: Scalar::UInt(0),
            },
            op::SpecConstant => scalar(inst).map(spec).unwrap_or(Value::Other { id }),
            op::SpecConstantTrue => spec(Scalar::Bool(true)),
            op::SpecConstantFalse => spec(Scalar::Bool(false)),
            op::SpecConstantOp => {
                let operation = inst
                    .word(2)
                    .and_then(|w| grammar::instruction(w as u16))
                    .map(|d| d.name.to_string())
                    .unwrap_or_else(|| "?".into());
                Value::SpecConstantOp { id, operation }
            }
            _ => Value::Other { id },
        }
    }
}

/// Reads the literal of an `OpConstant`/`OpSpecConstant` (operand 2) as a scalar.
fn scalar(inst: &Instruction) -> Option<Scalar> {
    let o = inst.operands.get(2)?;
    let words = inst.operand_words(2);
    let bits = match words {
        [lo] => *lo as u64,
        [lo, hi] => *lo as u64 | (*hi as u64) << 32,
        _ => return None,
    };
    Some(match o.number {
        NumberKind::Signed(w) if (1..=64).contains(&w) => {
            let shift = 64 - w;
            Scalar::Int(((bits << shift) as i64) >> shift)
        }
        NumberKind::Float(16) => Scalar::Float(f16_to_f64(bits as u16)),
        NumberKind::Float(32) => Scalar::Float(f32::from_bits(bits as u32) as f64),
        NumberKind::Float(64) => Scalar::Float(f64::from_bits(bits)),
        _ => Scalar::UInt(bits),
    })
}

/// IEEE binary16 to f64.
fn f16_to_f64(h: u16) -> f64 {
    let sign = if h >> 15 != 0 { -1.0 } else { 1.0 };
    let exp = ((h >> 10) & 0x1f) as i32;
    let frac = (h & 0x3ff) as f64;
    sign * match exp {
        0 => frac * 2f64.powi(-24),
        31 if frac == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        _ => (1.0 + frac / 1024.0) * 2f64.powi(exp - 15),
    }
}

/// Summarizes a parsed module.
pub fn module_info(parsed: &ParsedBinary) -> ModuleInfo {
    let h = &parsed.header;
    let generator_id = (h.generator >> 16) as u16;
    let mut info = ModuleInfo {
        version: h.version(),
        generator_word: h.generator,
        generator_id,
        generator: generator_name(generator_id),
        generator_version: h.generator as u16,
        bound: h.bound,
        capabilities: Vec::new(),
        extensions: Vec::new(),
        ext_inst_imports: Vec::new(),
        addressing_model: None,
        memory_model: None,
        entry_points: Vec::new(),
        coop_matrix_types: Vec::new(),
        tensor_layout_types: Vec::new(),
        tensor_view_types: Vec::new(),
        coop_vector_types: Vec::new(),
        coop_instructions: BTreeMap::new(),
        instruction_count: parsed.instructions.len(),
    };
    // First pass: definitions and decorations, which may come after their uses in
    // execution modes.
    let mut ids = Ids::default();
    for inst in &parsed.instructions {
        if let Some(id) = inst.result_id {
            ids.defs.insert(id, inst);
        }
        if inst.opcode == op::Decorate {
            let (Some(target), Some(dec)) = (inst.word(0), inst.word(1)) else {
                continue;
            };
            if dec == grammar::decoration::SpecId {
                if let Some(s) = inst.word(2) {
                    ids.spec_ids.insert(target, s);
                }
            } else if dec == grammar::decoration::BuiltIn
                && inst.word(2) == Some(grammar::built_in::WorkgroupSize)
            {
                ids.workgroup_size.push(target);
            }
        } else if inst.opcode == op::Name
            && let (Some(target), Some(name)) = (inst.word(0), inst.string(1))
        {
            ids.names.insert(target, name);
        }
    }
    let mut modes: HashMap<u32, ([Value; 3], &'static str)> = HashMap::new();
    for inst in &parsed.instructions {
        if is_cooperative_instruction(inst.opcode)
            && let Some(d) = inst.desc()
        {
            *info
                .coop_instructions
                .entry(d.name.to_string())
                .or_default() += 1;
        }
        let a = inst.first_arg();
        match inst.opcode {
            op::Capability => {
                if let Some(c) = inst.word(0) {
                    info.capabilities
                        .push(enum_name(OperandKind::Capability, c));
                }
            }
            op::Extension => info.extensions.extend(inst.string(0)),
            op::ExtInstImport => info.ext_inst_imports.extend(inst.string(1)),
            op::MemoryModel => {
                info.addressing_model = inst
                    .word(0)
                    .map(|v| enum_name(OperandKind::AddressingModel, v));
                info.memory_model = inst.word(1).map(|v| enum_name(OperandKind::MemoryModel, v));
            }
            op::EntryPoint => {
                let (Some(model), Some(function), Some(name)) =
                    (inst.word(0), inst.word(1), inst.string(2))
                else {
                    continue;
                };
                info.entry_points.push(EntryPoint {
                    execution_model: enum_name(OperandKind::ExecutionModel, model),
                    name,
                    function,
                    local_size: None,
                    local_size_source: None,
                });
            }
            op::ExecutionMode | op::ExecutionModeId => {
                let (Some(ep), Some(mode)) = (inst.word(0), inst.word(1)) else {
                    continue;
                };
                let dims = [inst.word(2), inst.word(3), inst.word(4)];
                let [Some(x), Some(y), Some(z)] = dims else {
                    continue;
                };
                if inst.opcode == op::ExecutionMode && mode == grammar::execution_mode::LocalSize {
                    modes.entry(ep).or_insert((
                        [Value::Literal(x), Value::Literal(y), Value::Literal(z)],
                        "LocalSize",
                    ));
                } else if inst.opcode == op::ExecutionModeId
                    && mode == grammar::execution_mode::LocalSizeId
                {
                    modes.insert(
                        ep,
                        ([ids.value(x), ids.value(y), ids.value(z)], "LocalSizeId"),
                    );
                }
            }
            op::TypeCooperativeMatrixKHR | op::TypeCooperativeMatrixNV => {
                let Some(id) = inst.result_id else { continue };
                let Some(t) = crate::types::Type::decode(inst).coop_matrix() else {
                    continue;
                };
                let scope = ids.value(t.scope);
                let matrix_use = t.usage.map(|u| ids.value(u));
                info.coop_matrix_types.push(CoopMatrixType {
                    id,
                    name: ids.names.get(&id).cloned(),
                    flavor: if t.usage.is_some() {
                        MatrixFlavor::Khr
                    } else {
                        MatrixFlavor::Nv
                    },
                    component: ids.type_name(t.comp),
                    scope_name: scope
                        .default_u64()
                        .map(|v| enum_name(OperandKind::Scope, v as u32)),
                    scope,
                    rows: ids.value(t.rows),
                    columns: ids.value(t.cols),
                    use_name: matrix_use
                        .as_ref()
                        .and_then(Value::default_u64)
                        .map(|v| enum_name(OperandKind::CooperativeMatrixUse, v as u32)),
                    matrix_use,
                });
            }
            op::TypeTensorLayoutNV | op::TypeTensorViewNV | op::TypeCooperativeVectorNV => {
                let Some(id) = inst.result_id else { continue };
                match crate::types::Type::decode(inst) {
                    crate::types::Type::Layout { dim, clamp } => {
                        let clamp_mode = ids.value(clamp);
                        info.tensor_layout_types.push(TensorLayoutType {
                            id,
                            dim: ids.value(dim),
                            clamp_mode_name: clamp_mode
                                .default_u64()
                                .map(|v| enum_name(OperandKind::TensorClampMode, v as u32)),
                            clamp_mode,
                        });
                    }
                    crate::types::Type::View { dim, has_dim } => {
                        info.tensor_view_types.push(TensorViewType {
                            id,
                            dim: ids.value(dim),
                            has_dimensions: ids.value(has_dim),
                            // The permutation is the operand list's tail (the type view
                            // keeps only the fixed operands).
                            permutation: (a + 2..inst.operands.len())
                                .filter_map(|i| inst.word(i))
                                .map(|p| ids.value(p))
                                .collect(),
                        });
                    }
                    crate::types::Type::CoopVec { comp, count } => {
                        info.coop_vector_types.push(CoopVectorType {
                            id,
                            component: ids.type_name(comp),
                            count: ids.value(count),
                        });
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    // A `WorkgroupSize` built-in overrides the execution modes of every entry point.
    let builtin = ids.workgroup_size.iter().find_map(|&id| {
        let inst = ids.defs.get(&id)?;
        if !matches!(
            inst.opcode,
            op::ConstantComposite | op::SpecConstantComposite
        ) {
            return None;
        }
        let a = inst.first_arg();
        let c = |i| ids.value(inst.word(a + i).unwrap_or(0));
        Some([c(0), c(1), c(2)])
    });
    for ep in &mut info.entry_points {
        if let Some(size) = &builtin {
            ep.local_size = Some(size.clone());
            ep.local_size_source = Some("WorkgroupSize");
        } else if let Some((size, source)) = modes.get(&ep.function) {
            ep.local_size = Some(size.clone());
            ep.local_size_source = Some(source);
        }
    }
    info
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cooperative_family_comes_from_the_grammar() {
        for o in [
            op::TypeCooperativeMatrixKHR,
            op::CooperativeMatrixMulAddKHR,
            op::CooperativeMatrixLoadTensorNV,
            op::CreateTensorLayoutNV,
            op::TensorViewSetClipNV,
            op::CooperativeVectorMatrixMulNV,
            op::CooperativeMatrixReduceNV,
            op::CooperativeMatrixLengthNV,
        ] {
            assert!(is_cooperative_instruction(o), "{o}");
        }
        for o in [
            op::IAdd,
            op::TypeTensorARM,
            op::Load,
            op::GroupNonUniformBroadcast,
        ] {
            assert!(!is_cooperative_instruction(o), "{o}");
        }
    }

    #[test]
    fn half_floats_decode() {
        assert_eq!(f16_to_f64(0x3c00), 1.0);
        assert_eq!(f16_to_f64(0xc000), -2.0);
        assert_eq!(f16_to_f64(0x0001), 2f64.powi(-24));
    }
}

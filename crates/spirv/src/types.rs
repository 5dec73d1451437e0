//! The type view every layer shares: the shape of any type declaration as its operand ids, read
//! in one place (`Type::decode`), and the value of a dimension operand (`Module::dim`): a
//! constant, a specialization constant with its default, or something computed.
//!
//! The validator keeps one `Type` per id; the engine and `info` decode type declarations through
//! it before resolving sizes their own way (the engine with specialization applied).

use crate::Module;
use crate::binary::Instruction;
use crate::grammar::{self, op};

/// The shape of a type id: operand ids as the declaration gives them (members, parameters and
/// the like stay in the instruction).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    /// Not a type declaration.
    None,
    /// OpTypeVoid.
    Void,
    /// OpTypeBool.
    Bool,
    /// OpTypeInt.
    Int {
        /// Width in bits.
        width: u32,
        /// Signedness operand.
        signed: bool,
    },
    /// OpTypeFloat.
    Float {
        /// Width in bits.
        width: u32,
        /// FP Encoding operand (bfloat16, float8), if any.
        encoding: Option<u32>,
    },
    /// OpTypeVector.
    Vector {
        /// Component type id.
        comp: u32,
        /// Component count (a literal).
        count: u32,
    },
    /// OpTypeMatrix.
    Matrix {
        /// Column type id.
        column: u32,
        /// Column count (a literal).
        count: u32,
    },
    /// OpTypeArray.
    Array {
        /// Element type id.
        elem: u32,
        /// The length's id (see [`Module::dim`]).
        len: u32,
    },
    /// OpTypeRuntimeArray.
    RuntimeArray {
        /// Element type id.
        elem: u32,
    },
    /// OpTypeStruct (members in the instruction).
    Struct,
    /// OpTypePointer.
    Pointer {
        /// Storage class.
        storage: u32,
        /// Pointee type id.
        pointee: u32,
    },
    /// OpTypeUntypedPointerKHR or a forward-declared pointer.
    OpaquePointer {
        /// Storage class.
        storage: u32,
    },
    /// OpTypeFunction (parameters in the instruction).
    Function {
        /// Return type id.
        ret: u32,
    },
    /// OpTypeCooperativeMatrixKHR: component type and the ids of scope, rows, cols and use.
    CoopKhr {
        /// Component type id.
        comp: u32,
        /// Scope id.
        scope: u32,
        /// Rows id.
        rows: u32,
        /// Columns id.
        cols: u32,
        /// Use id.
        usage: u32,
    },
    /// OpTypeCooperativeMatrixNV: component type and the ids of scope, rows and cols.
    CoopNv {
        /// Component type id.
        comp: u32,
        /// Scope id.
        scope: u32,
        /// Rows id.
        rows: u32,
        /// Columns id.
        cols: u32,
    },
    /// OpTypeTensorLayoutNV: ids of Dim and ClampMode.
    Layout {
        /// Dim id.
        dim: u32,
        /// ClampMode id.
        clamp: u32,
    },
    /// OpTypeTensorViewNV: ids of Dim and HasDimensions (the permutation stays in the
    /// instruction).
    View {
        /// Dim id.
        dim: u32,
        /// HasDimensions id.
        has_dim: u32,
    },
    /// OpTypeCooperativeVectorNV: component type and the count's id.
    CoopVec {
        /// Component type id.
        comp: u32,
        /// Component count id.
        count: u32,
    },
    /// Any other type declaration (images, samplers, ...).
    Other,
}

impl Type {
    /// The shape an instruction declares; [`Type::None`] when it is not a type declaration.
    pub fn decode(inst: &Instruction) -> Type {
        let w = |k: usize| inst.word(k).unwrap_or(0);
        match inst.opcode {
            op::TypeVoid => Type::Void,
            op::TypeBool => Type::Bool,
            op::TypeInt => Type::Int {
                width: w(1),
                signed: w(2) != 0,
            },
            op::TypeFloat => Type::Float {
                width: w(1),
                encoding: inst.word(2),
            },
            op::TypeVector => Type::Vector {
                comp: w(1),
                count: w(2),
            },
            op::TypeMatrix => Type::Matrix {
                column: w(1),
                count: w(2),
            },
            op::TypeArray => Type::Array {
                elem: w(1),
                len: w(2),
            },
            op::TypeRuntimeArray => Type::RuntimeArray { elem: w(1) },
            op::TypeStruct => Type::Struct,
            op::TypePointer => Type::Pointer {
                storage: w(1),
                pointee: w(2),
            },
            op::TypeUntypedPointerKHR => Type::OpaquePointer { storage: w(1) },
            op::TypeFunction => Type::Function { ret: w(1) },
            op::TypeCooperativeMatrixKHR => Type::CoopKhr {
                comp: w(1),
                scope: w(2),
                rows: w(3),
                cols: w(4),
                usage: w(5),
            },
            op::TypeCooperativeMatrixNV => Type::CoopNv {
                comp: w(1),
                scope: w(2),
                rows: w(3),
                cols: w(4),
            },
            op::TypeTensorLayoutNV => Type::Layout {
                dim: w(1),
                clamp: w(2),
            },
            op::TypeTensorViewNV => Type::View {
                dim: w(1),
                has_dim: w(2),
            },
            op::TypeCooperativeVectorNV => Type::CoopVec {
                comp: w(1),
                count: w(2),
            },
            o if grammar::instruction(o).is_some_and(|d| d.class == "Type-Declaration") => {
                Type::Other
            }
            _ => Type::None,
        }
    }

    /// The component type and the (scope, rows, cols) ids of a cooperative matrix type, KHR or
    /// NV, and the Use id for KHR.
    pub fn coop_matrix(self) -> Option<CoopMatrixIds> {
        match self {
            Type::CoopKhr {
                comp,
                scope,
                rows,
                cols,
                usage,
            } => Some(CoopMatrixIds {
                comp,
                scope,
                rows,
                cols,
                usage: Some(usage),
            }),
            Type::CoopNv {
                comp,
                scope,
                rows,
                cols,
            } => Some(CoopMatrixIds {
                comp,
                scope,
                rows,
                cols,
                usage: None,
            }),
            _ => None,
        }
    }
}

/// The operands of a cooperative matrix type (either flavour).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoopMatrixIds {
    /// Component type id.
    pub comp: u32,
    /// Scope id.
    pub scope: u32,
    /// Rows id.
    pub rows: u32,
    /// Columns id.
    pub cols: u32,
    /// Use id (KHR only; NV matrices are accumulator-like and have none).
    pub usage: Option<u32>,
}

/// What a dimension (length, rows, scope, ...) operand is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dim {
    /// An OpConstant (or OpConstantTrue/False/Null) value.
    Const(u64),
    /// An OpSpecConstant: its default and SpecId, if decorated.
    Spec {
        /// The default value.
        default: u64,
        /// The SpecId decoration.
        spec_id: Option<u32>,
    },
    /// An OpSpecConstantOp or anything else whose value is computed.
    Computed,
    /// Not a constant at all.
    Unknown,
}

impl Dim {
    /// The value when there is no specialization: the constant or the default.
    pub fn default_value(self) -> Option<u64> {
        match self {
            Dim::Const(v) | Dim::Spec { default: v, .. } => Some(v),
            Dim::Computed | Dim::Unknown => None,
        }
    }
}

impl Module {
    /// The type view of `id` ([`Type::None`] when `id` is not a type).
    pub fn type_view(&self, id: u32) -> Type {
        self.def(id).map(Type::decode).unwrap_or(Type::None)
    }

    /// What the dimension operand `id` is (its value decoded by [`Module::constant_u64`], its
    /// SpecId by [`Module::spec_id`]).
    pub fn dim(&self, id: u32) -> Dim {
        let Some(inst) = self.def(id) else {
            return Dim::Unknown;
        };
        match inst.opcode {
            op::Constant | op::ConstantTrue | op::ConstantFalse | op::ConstantNull => {
                self.constant_u64(id).map_or(Dim::Computed, Dim::Const)
            }
            op::SpecConstant | op::SpecConstantTrue | op::SpecConstantFalse => {
                match self.constant_u64(id) {
                    Some(default) => Dim::Spec {
                        default,
                        spec_id: self.spec_id(id),
                    },
                    None => Dim::Computed,
                }
            }
            op::SpecConstantOp
            | op::SpecConstantComposite
            | op::ConstantComposite
            | op::SpecConstantCompositeReplicateEXT
            | op::ConstantCompositeReplicateEXT => Dim::Computed,
            _ => Dim::Unknown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asm::{AsmOptions, assemble};

    #[test]
    fn cooperative_types_and_their_dimensions() {
        let text = r#"
OpCapability Shader
OpCapability CooperativeMatrixKHR
OpCapability VulkanMemoryModel
OpExtension "SPV_KHR_cooperative_matrix"
OpMemoryModel Logical Vulkan
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 32 1 1
OpDecorate %rows SpecId 7
%void = OpTypeVoid
%fn = OpTypeFunction %void
%u32 = OpTypeInt 32 0
%f16 = OpTypeFloat 16
%sub = OpConstant %u32 3
%rows = OpSpecConstant %u32 16
%cols = OpSpecConstantOp %u32 IAdd %rows %sub
%use = OpConstant %u32 0
%mat = OpTypeCooperativeMatrixKHR %f16 %sub %rows %cols %use
%main = OpFunction %void None %fn
%l = OpLabel
OpReturn
OpFunctionEnd
"#;
        let m = Module::from_words(&assemble(text, &AsmOptions::default()).unwrap()).unwrap();
        let mat = m
            .instructions
            .iter()
            .find(|i| i.opcode == op::TypeCooperativeMatrixKHR)
            .unwrap();
        let t = m.type_view(mat.result_id.unwrap());
        let ids = t.coop_matrix().unwrap();
        assert!(matches!(
            m.type_view(ids.comp),
            Type::Float {
                width: 16,
                encoding: None
            }
        ));
        assert_eq!(m.dim(ids.scope), Dim::Const(3));
        assert_eq!(
            m.dim(ids.rows),
            Dim::Spec {
                default: 16,
                spec_id: Some(7)
            }
        );
        assert_eq!(m.dim(ids.cols), Dim::Computed);
        assert_eq!(m.dim(ids.usage.unwrap()).default_value(), Some(0));
        assert_eq!(m.type_view(ids.scope), Type::None);
    }
}

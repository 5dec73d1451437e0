//! SPV_NV_cooperative_vector facts every layer shares: component types and interpretations
//! (the grammar's `ComponentType`, equal to `VkComponentTypeKHR`) and matrix layouts (the
//! grammar's `CooperativeVectorMatrixLayout`), with the short names the command line and the
//! device profiles use.

/// A cooperative-vector component type or interpretation (`VkComponentTypeKHR` values, which
/// are also the SPIR-V `InputInterpretation` / `MatrixInterpretation` / `BiasInterpretation`
/// operand values).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ComponentType {
    /// IEEE binary16.
    F16,
    /// IEEE binary32.
    F32,
    /// IEEE binary64.
    F64,
    /// Signed 8-bit integer.
    S8,
    /// Signed 16-bit integer.
    S16,
    /// Signed 32-bit integer.
    S32,
    /// Signed 64-bit integer.
    S64,
    /// Unsigned 8-bit integer.
    U8,
    /// Unsigned 16-bit integer.
    U16,
    /// Unsigned 32-bit integer.
    U32,
    /// Unsigned 64-bit integer.
    U64,
    /// Four signed 8-bit integers in one 32-bit word (input interpretation only).
    S8Packed,
    /// Four unsigned 8-bit integers in one 32-bit word (input interpretation only).
    U8Packed,
    /// OFP8 E4M3: sign, four exponent bits, three mantissa bits.
    E4M3,
    /// OFP8 E5M2: sign, five exponent bits, two mantissa bits.
    E5M2,
}

/// Every component type, in `VkComponentTypeKHR` order.
pub const COMPONENT_TYPES: [ComponentType; 15] = [
    ComponentType::F16,
    ComponentType::F32,
    ComponentType::F64,
    ComponentType::S8,
    ComponentType::S16,
    ComponentType::S32,
    ComponentType::S64,
    ComponentType::U8,
    ComponentType::U16,
    ComponentType::U32,
    ComponentType::U64,
    ComponentType::S8Packed,
    ComponentType::U8Packed,
    ComponentType::E4M3,
    ComponentType::E5M2,
];

impl ComponentType {
    /// The type with this `VkComponentTypeKHR` value.
    pub fn from_raw(v: u32) -> Option<ComponentType> {
        COMPONENT_TYPES.into_iter().find(|t| t.raw() == v)
    }

    /// Its `VkComponentTypeKHR` value (the grammar's `ComponentType` enumerant).
    pub fn raw(self) -> u32 {
        use crate::grammar::component_type as ct;
        match self {
            ComponentType::F16 => ct::Float16NV,
            ComponentType::F32 => ct::Float32NV,
            ComponentType::F64 => ct::Float64NV,
            ComponentType::S8 => ct::SignedInt8NV,
            ComponentType::S16 => ct::SignedInt16NV,
            ComponentType::S32 => ct::SignedInt32NV,
            ComponentType::S64 => ct::SignedInt64NV,
            ComponentType::U8 => ct::UnsignedInt8NV,
            ComponentType::U16 => ct::UnsignedInt16NV,
            ComponentType::U32 => ct::UnsignedInt32NV,
            ComponentType::U64 => ct::UnsignedInt64NV,
            ComponentType::S8Packed => ct::SignedInt8PackedNV,
            ComponentType::U8Packed => ct::UnsignedInt8PackedNV,
            ComponentType::E4M3 => ct::FloatE4M3NV,
            ComponentType::E5M2 => ct::FloatE5M2NV,
        }
    }

    /// Its short name (`float16`, `sint8-packed`, `e4m3`, ...), as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            ComponentType::F16 => "float16",
            ComponentType::F32 => "float32",
            ComponentType::F64 => "float64",
            ComponentType::S8 => "sint8",
            ComponentType::S16 => "sint16",
            ComponentType::S32 => "sint32",
            ComponentType::S64 => "sint64",
            ComponentType::U8 => "uint8",
            ComponentType::U16 => "uint16",
            ComponentType::U32 => "uint32",
            ComponentType::U64 => "uint64",
            ComponentType::S8Packed => "sint8-packed",
            ComponentType::U8Packed => "uint8-packed",
            ComponentType::E4M3 => "e4m3",
            ComponentType::E5M2 => "e5m2",
        }
    }

    /// The type with this short name.
    pub fn from_name(s: &str) -> Option<ComponentType> {
        COMPONENT_TYPES.into_iter().find(|t| t.name() == s)
    }

    /// Bytes of one value in memory (a packed type: one 8-bit value).
    pub fn bytes(self) -> u32 {
        match self {
            ComponentType::S8
            | ComponentType::U8
            | ComponentType::S8Packed
            | ComponentType::U8Packed
            | ComponentType::E4M3
            | ComponentType::E5M2 => 1,
            ComponentType::F16 | ComponentType::S16 | ComponentType::U16 => 2,
            ComponentType::F32 | ComponentType::S32 | ComponentType::U32 => 4,
            ComponentType::F64 | ComponentType::S64 | ComponentType::U64 => 8,
        }
    }

    /// Whether it is a signed integer type (packed or not).
    pub fn signed(self) -> bool {
        matches!(
            self,
            ComponentType::S8
                | ComponentType::S16
                | ComponentType::S32
                | ComponentType::S64
                | ComponentType::S8Packed
        )
    }

    /// Whether it is one of the two packed types.
    pub fn packed(self) -> bool {
        matches!(self, ComponentType::S8Packed | ComponentType::U8Packed)
    }

    /// Whether it is a floating-point type.
    pub fn is_float(self) -> bool {
        matches!(
            self,
            ComponentType::F16
                | ComponentType::F32
                | ComponentType::F64
                | ComponentType::E4M3
                | ComponentType::E5M2
        )
    }
}

/// A cooperative-vector matrix layout (`Cooperative Vector Matrix Layout`, SPV_NV_cooperative_vector
/// 3.X; the same values as `VkCooperativeVectorMatrixLayoutNV`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MatrixLayout {
    /// Contiguous elements form rows; `stride` bytes from one row to the next.
    RowMajor,
    /// Contiguous elements form columns; `stride` bytes from one column to the next.
    ColumnMajor,
    /// The engine's inference layout (defined by each implementation; the CPU engine's in `coopmat_exec::coopvec`).
    InferencingOptimal,
    /// The engine's training layout (defined by each implementation; the CPU engine's in `coopmat_exec::coopvec`).
    TrainingOptimal,
}

impl MatrixLayout {
    /// The layout with this SPIR-V / Vulkan value (the grammar's enumerant).
    pub fn from_raw(v: u32) -> Option<MatrixLayout> {
        use crate::grammar::cooperative_vector_matrix_layout as l;
        Some(match v {
            l::RowMajorNV => MatrixLayout::RowMajor,
            l::ColumnMajorNV => MatrixLayout::ColumnMajor,
            l::InferencingOptimalNV => MatrixLayout::InferencingOptimal,
            l::TrainingOptimalNV => MatrixLayout::TrainingOptimal,
            _ => return None,
        })
    }

    /// Its SPIR-V / Vulkan value.
    pub fn raw(self) -> u32 {
        use crate::grammar::cooperative_vector_matrix_layout as l;
        match self {
            MatrixLayout::RowMajor => l::RowMajorNV,
            MatrixLayout::ColumnMajor => l::ColumnMajorNV,
            MatrixLayout::InferencingOptimal => l::InferencingOptimalNV,
            MatrixLayout::TrainingOptimal => l::TrainingOptimalNV,
        }
    }

    /// Its short name, as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            MatrixLayout::RowMajor => "row-major",
            MatrixLayout::ColumnMajor => "column-major",
            MatrixLayout::InferencingOptimal => "inferencing-optimal",
            MatrixLayout::TrainingOptimal => "training-optimal",
        }
    }

    /// The layout with this short name.
    pub fn from_name(s: &str) -> Option<MatrixLayout> {
        [
            MatrixLayout::RowMajor,
            MatrixLayout::ColumnMajor,
            MatrixLayout::InferencingOptimal,
            MatrixLayout::TrainingOptimal,
        ]
        .into_iter()
        .find(|l| l.name() == s)
    }

    /// Whether it is one of the opaque (optimal) layouts.
    pub fn is_optimal(self) -> bool {
        matches!(
            self,
            MatrixLayout::InferencingOptimal | MatrixLayout::TrainingOptimal
        )
    }
}

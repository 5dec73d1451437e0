//! The scalar operation table: every per-component unary, binary, ternary and conversion
//! operation of the family, defined once.
//!
//! Each row names the operation, its class (what its operands are), the SPIR-V opcodes and
//! GLSL.std.450 instructions that denote it, and whether it may be applied element-wise to
//! cooperative matrices. The engine's compiler maps instructions through this table, the
//! engine's evaluator gives each variant its semantics in one exhaustive `match` (a new row is
//! a compile error there until it has them), and the validator's cooperative-matrix arithmetic
//! rule reads the matrix column. Rows without opcodes are operations the engine's compiler
//! emits while expanding a compound instruction (Frexp, UMulExtended, ...).

use crate::grammar::{glsl_std_450 as glsl, op};
use std::sync::LazyLock;

/// What the operands of an operation are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpClass {
    /// Floating-point operands.
    Float,
    /// Integer operands, signedness irrelevant or taken from the operation.
    Int,
    /// Boolean operands.
    Logical,
    /// A conversion between numeric types.
    Conversion,
}

/// Whether an operation applies element-wise to cooperative matrices.
///
/// SPV_KHR_cooperative_matrix ("Arithmetic instructions"): OpSNegate, OpFNegate, OpIAdd, OpFAdd,
/// OpISub, OpFSub, OpFMul, OpIMul, OpFDiv, OpSDiv, OpUDiv and the numeric conversions take
/// cooperative matrices. SPV_NV_cooperative_matrix allows the same except OpFMul and OpIMul
/// (it scales with OpMatrixTimesScalar instead).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnMatrix {
    /// Not defined on cooperative matrices.
    No,
    /// Defined on KHR cooperative matrices only.
    Khr,
    /// Defined on KHR and NV cooperative matrices.
    KhrAndNv,
}

/// One operation of any arity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarOp {
    /// A unary operation.
    Un(UnOp),
    /// A binary operation.
    Bin(BinOp),
    /// A ternary operation.
    Tern(TernOp),
    /// A conversion.
    Cvt(CvtKind),
}

/// One row of the table.
#[derive(Clone, Copy, Debug)]
pub struct ScalarOpRow {
    /// The operation.
    pub op: ScalarOp,
    /// Its class.
    pub class: OpClass,
    /// SPIR-V opcodes that denote it (with the operation's own operand order).
    pub opcodes: &'static [u16],
    /// GLSL.std.450 instructions that denote it.
    pub glsl: &'static [u32],
    /// Whether it applies element-wise to cooperative matrices.
    pub on_matrix: OnMatrix,
}

macro_rules! scalar_op_table {
    ($(
        $(#[$emeta:meta])* $enum:ident / $wrap:ident {
            $( $(#[$vmeta:meta])* $name:ident: $class:ident, [$($opc:ident),*], [$($g:ident),*], $mat:ident; )*
        }
    )*) => {
        $(
            $(#[$emeta])*
            #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
            pub enum $enum {
                $( $(#[$vmeta])* $name, )*
            }

            impl $enum {
                /// Every variant, in table order.
                pub const ALL: &'static [$enum] = &[$($enum::$name),*];
            }
        )*

        /// The table: one row per operation, grouped by arity.
        pub static SCALAR_OPS: &[ScalarOpRow] = &[
            $($(
                ScalarOpRow {
                    op: ScalarOp::$wrap($enum::$name),
                    class: OpClass::$class,
                    opcodes: &[$(op::$opc),*],
                    glsl: &[$(glsl::$g),*],
                    on_matrix: OnMatrix::$mat,
                },
            )*)*
        ];
    };
}

scalar_op_table! {
    /// Unary per-component operations.
    UnOp / Un {
        FNeg: Float, [FNegate], [], KhrAndNv;
        SNeg: Int, [SNegate], [], KhrAndNv;
        Not: Int, [Not], [], No;
        LNot: Logical, [LogicalNot], [], No;
        IsNan: Float, [IsNan], [], No;
        IsInf: Float, [IsInf], [], No;
        BitCount: Int, [BitCount], [], No;
        BitReverse: Int, [BitReverse], [], No;
        Round: Float, [], [Round], No;
        RoundEven: Float, [], [RoundEven], No;
        Trunc: Float, [], [Trunc], No;
        FAbs: Float, [], [FAbs], No;
        SAbs: Int, [], [SAbs], No;
        FSign: Float, [], [FSign], No;
        SSign: Int, [], [SSign], No;
        Floor: Float, [], [Floor], No;
        Ceil: Float, [], [Ceil], No;
        Fract: Float, [], [Fract], No;
        Radians: Float, [], [Radians], No;
        Degrees: Float, [], [Degrees], No;
        Sin: Float, [], [Sin], No;
        Cos: Float, [], [Cos], No;
        Tan: Float, [], [Tan], No;
        Asin: Float, [], [Asin], No;
        Acos: Float, [], [Acos], No;
        Atan: Float, [], [Atan], No;
        Sinh: Float, [], [Sinh], No;
        Cosh: Float, [], [Cosh], No;
        Tanh: Float, [], [Tanh], No;
        Asinh: Float, [], [Asinh], No;
        Acosh: Float, [], [Acosh], No;
        Atanh: Float, [], [Atanh], No;
        Exp: Float, [], [Exp], No;
        Log: Float, [], [Log], No;
        Exp2: Float, [], [Exp2], No;
        Log2: Float, [], [Log2], No;
        Sqrt: Float, [], [Sqrt], No;
        InverseSqrt: Float, [], [InverseSqrt], No;
        FindILsb: Int, [], [FindILsb], No;
        FindSMsb: Int, [], [FindSMsb], No;
        FindUMsb: Int, [], [FindUMsb], No;
        /// Frexp's significand (in [0.5, 1) in magnitude; zero, inf and NaN unchanged).
        FrexpMant: Float, [], [], No;
        /// Frexp's exponent, as 32-bit integer bits.
        FrexpExp: Float, [], [], No;
        /// Modf's fractional part (sign of the operand; ±0 for infinities).
        ModfFract: Float, [], [], No;
    }

    /// Binary per-component operations.
    BinOp / Bin {
        IAdd: Int, [IAdd], [], KhrAndNv;
        ISub: Int, [ISub], [], KhrAndNv;
        IMul: Int, [IMul], [], Khr;
        UDiv: Int, [UDiv], [], KhrAndNv;
        SDiv: Int, [SDiv], [], KhrAndNv;
        UMod: Int, [UMod], [], No;
        SRem: Int, [SRem], [], No;
        SMod: Int, [SMod], [], No;
        FAdd: Float, [FAdd], [], KhrAndNv;
        FSub: Float, [FSub], [], KhrAndNv;
        FMul: Float, [FMul], [], Khr;
        FDiv: Float, [FDiv], [], KhrAndNv;
        FRem: Float, [FRem], [], No;
        FMod: Float, [FMod], [], No;
        Shl: Int, [ShiftLeftLogical], [], No;
        ShrL: Int, [ShiftRightLogical], [], No;
        ShrA: Int, [ShiftRightArithmetic], [], No;
        And: Int, [BitwiseAnd], [], No;
        Or: Int, [BitwiseOr], [], No;
        Xor: Int, [BitwiseXor], [], No;
        /// Integer (and pointer: OpPtrEqual) equality.
        IEq: Int, [IEqual, PtrEqual], [], No;
        INe: Int, [INotEqual, PtrNotEqual], [], No;
        UGt: Int, [UGreaterThan], [], No;
        UGe: Int, [UGreaterThanEqual], [], No;
        ULt: Int, [ULessThan], [], No;
        ULe: Int, [ULessThanEqual], [], No;
        SGt: Int, [SGreaterThan], [], No;
        SGe: Int, [SGreaterThanEqual], [], No;
        SLt: Int, [SLessThan], [], No;
        SLe: Int, [SLessThanEqual], [], No;
        FOEq: Float, [FOrdEqual], [], No;
        FUEq: Float, [FUnordEqual], [], No;
        FONe: Float, [FOrdNotEqual], [], No;
        FUNe: Float, [FUnordNotEqual], [], No;
        FOLt: Float, [FOrdLessThan], [], No;
        FULt: Float, [FUnordLessThan], [], No;
        FOGt: Float, [FOrdGreaterThan], [], No;
        FUGt: Float, [FUnordGreaterThan], [], No;
        FOLe: Float, [FOrdLessThanEqual], [], No;
        FULe: Float, [FUnordLessThanEqual], [], No;
        FOGe: Float, [FOrdGreaterThanEqual], [], No;
        FUGe: Float, [FUnordGreaterThanEqual], [], No;
        Ordered: Float, [Ordered], [], No;
        Unordered: Float, [Unordered], [], No;
        LEq: Logical, [LogicalEqual], [], No;
        LNe: Logical, [LogicalNotEqual], [], No;
        LAnd: Logical, [LogicalAnd], [], No;
        LOr: Logical, [LogicalOr], [], No;
        FMin: Float, [], [FMin], No;
        FMax: Float, [], [FMax], No;
        UMin: Int, [], [UMin], No;
        UMax: Int, [], [UMax], No;
        SMin: Int, [], [SMin], No;
        SMax: Int, [], [SMax], No;
        NMin: Float, [], [NMin], No;
        NMax: Float, [], [NMax], No;
        Pow: Float, [], [Pow], No;
        Atan2: Float, [], [Atan2], No;
        Step: Float, [], [Step], No;
        /// The second operand is a 32-bit signed exponent.
        Ldexp: Float, [], [Ldexp], No;
        /// High half of the unsigned product (UMulExtended's second member).
        UMulHi: Int, [], [], No;
        /// High half of the signed product.
        SMulHi: Int, [], [], No;
        /// Carry of an unsigned add (IAddCarry's second member).
        AddCarry: Int, [], [], No;
        /// Borrow of an unsigned subtract.
        SubBorrow: Int, [], [], No;
    }

    /// Ternary per-component operations.
    TernOp / Tern {
        FMix: Float, [], [FMix], No;
        FClamp: Float, [], [FClamp], No;
        UClamp: Int, [], [UClamp], No;
        SClamp: Int, [], [SClamp], No;
        NClamp: Float, [], [NClamp], No;
        Fma: Float, [], [Fma], No;
        SmoothStep: Float, [], [SmoothStep], No;
        /// OpBitFieldUExtract (base, offset, count).
        UExtract: Int, [BitFieldUExtract], [], No;
        /// OpBitFieldSExtract (base, offset, count).
        SExtract: Int, [BitFieldSExtract], [], No;
    }

    /// Numeric conversions.
    CvtKind / Cvt {
        FToU: Conversion, [ConvertFToU], [], KhrAndNv;
        FToS: Conversion, [ConvertFToS], [], KhrAndNv;
        SToF: Conversion, [ConvertSToF], [], KhrAndNv;
        UToF: Conversion, [ConvertUToF], [], KhrAndNv;
        UConv: Conversion, [UConvert], [], KhrAndNv;
        SConv: Conversion, [SConvert], [], KhrAndNv;
        FConv: Conversion, [FConvert], [], KhrAndNv;
        /// FConvert decorated SaturatedToLargestFloat8NormalConversionEXT.
        FConvSat: Conversion, [], [], No;
    }
}

/// Row index by opcode and by GLSL.std.450 number, built once.
struct Index {
    by_opcode: Vec<(u16, u16)>,
    by_glsl: Vec<(u32, u16)>,
}

static INDEX: LazyLock<Index> = LazyLock::new(|| {
    let mut by_opcode = Vec::new();
    let mut by_glsl = Vec::new();
    for (i, row) in SCALAR_OPS.iter().enumerate() {
        by_opcode.extend(row.opcodes.iter().map(|&o| (o, i as u16)));
        by_glsl.extend(row.glsl.iter().map(|&g| (g, i as u16)));
    }
    by_opcode.sort_unstable();
    by_glsl.sort_unstable();
    Index { by_opcode, by_glsl }
});

fn find<K: Ord + Copy>(v: &[(K, u16)], k: K) -> Option<&'static ScalarOpRow> {
    let i = v.binary_search_by_key(&k, |e| e.0).ok()?;
    Some(&SCALAR_OPS[v[i].1 as usize])
}

impl ScalarOpRow {
    /// The row of the operation a SPIR-V opcode denotes.
    pub fn for_opcode(opcode: u16) -> Option<&'static ScalarOpRow> {
        find(&INDEX.by_opcode, opcode)
    }

    /// The row of the operation a GLSL.std.450 instruction denotes.
    pub fn for_glsl(inst: u32) -> Option<&'static ScalarOpRow> {
        find(&INDEX.by_glsl, inst)
    }

    /// The row of an operation.
    pub fn of(op: ScalarOp) -> &'static ScalarOpRow {
        SCALAR_OPS
            .iter()
            .find(|r| r.op == op)
            .expect("every operation has a row: the table and the enums come from one macro")
    }

    /// Whether the operation applies element-wise to cooperative matrices of this flavour.
    pub fn allowed_on_matrix(&self, khr: bool) -> bool {
        match self.on_matrix {
            OnMatrix::No => false,
            OnMatrix::Khr => khr,
            OnMatrix::KhrAndNv => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_opcode_and_glsl_number_denotes_one_operation() {
        let mut seen = std::collections::HashSet::new();
        for row in SCALAR_OPS {
            for &o in row.opcodes {
                assert!(seen.insert(("op", o as u32)), "opcode {o} in two rows");
                assert!(
                    crate::grammar::instruction(o).is_some(),
                    "opcode {o} unknown"
                );
            }
            for &g in row.glsl {
                assert!(seen.insert(("glsl", g)), "GLSL.std.450 {g} in two rows");
            }
        }
    }

    #[test]
    fn lookups_find_their_rows() {
        let fadd = ScalarOpRow::for_opcode(op::FAdd).unwrap();
        assert_eq!(fadd.op, ScalarOp::Bin(BinOp::FAdd));
        assert_eq!(fadd.class, OpClass::Float);
        assert_eq!(
            ScalarOpRow::for_opcode(op::PtrEqual).unwrap().op,
            ScalarOp::Bin(BinOp::IEq)
        );
        assert_eq!(
            ScalarOpRow::for_glsl(glsl::Fma).unwrap().op,
            ScalarOp::Tern(TernOp::Fma)
        );
        assert!(ScalarOpRow::for_opcode(op::Load).is_none());
        for &u in UnOp::ALL {
            assert_eq!(ScalarOpRow::of(ScalarOp::Un(u)).op, ScalarOp::Un(u));
        }
        assert_eq!(
            SCALAR_OPS.len(),
            UnOp::ALL.len() + BinOp::ALL.len() + TernOp::ALL.len() + CvtKind::ALL.len()
        );
    }

    #[test]
    fn matrix_arithmetic_is_the_specs_list() {
        // SPV_KHR_cooperative_matrix, "Arithmetic instructions", plus the numeric conversions.
        let khr: Vec<u16> = SCALAR_OPS
            .iter()
            .filter(|r| r.allowed_on_matrix(true) && r.class != OpClass::Conversion)
            .flat_map(|r| r.opcodes.iter().copied())
            .collect();
        let mut want = vec![
            op::SNegate,
            op::FNegate,
            op::IAdd,
            op::FAdd,
            op::ISub,
            op::FSub,
            op::FMul,
            op::IMul,
            op::FDiv,
            op::SDiv,
            op::UDiv,
        ];
        let mut got = khr.clone();
        got.sort_unstable();
        want.sort_unstable();
        assert_eq!(got, want);
        let nv_only_missing: Vec<u16> = SCALAR_OPS
            .iter()
            .filter(|r| r.allowed_on_matrix(true) && !r.allowed_on_matrix(false))
            .flat_map(|r| r.opcodes.iter().copied())
            .collect();
        assert_eq!(nv_only_missing, vec![op::IMul, op::FMul]);
    }
}

//! The pre-decoded program: ops with operand slot indices, blocks in structured order.

use crate::floats::Num;
use crate::types::{CmType, MemLeaf};

/// A register value: its first lane column and first matrix slot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Val {
    /// First lane column.
    pub col: u32,
    /// First matrix slot.
    pub mat: u32,
    /// Number of lane columns.
    pub ncols: u32,
    /// Number of matrix slots.
    pub nmats: u32,
}

/// Unary per-component operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum UnOp {
    FNeg,
    SNeg,
    Not,
    LNot,
    IsNan,
    IsInf,
    BitCount,
    BitReverse,
    Round,
    RoundEven,
    Trunc,
    FAbs,
    SAbs,
    FSign,
    SSign,
    Floor,
    Ceil,
    Fract,
    Radians,
    Degrees,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh,
    Exp,
    Log,
    Exp2,
    Log2,
    Sqrt,
    InverseSqrt,
    FindILsb,
    FindSMsb,
    FindUMsb,
    /// Frexp's significand (in [0.5, 1) in magnitude; zero, inf and NaN unchanged).
    FrexpMant,
    /// Frexp's exponent, as 32-bit integer bits.
    FrexpExp,
    /// Modf's fractional part (sign of the operand; ±0 for infinities).
    ModfFract,
}

/// Binary per-component operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum BinOp {
    IAdd,
    ISub,
    IMul,
    UDiv,
    SDiv,
    UMod,
    SRem,
    SMod,
    FAdd,
    FSub,
    FMul,
    FDiv,
    FRem,
    FMod,
    Shl,
    ShrL,
    ShrA,
    And,
    Or,
    Xor,
    IEq,
    INe,
    UGt,
    UGe,
    ULt,
    ULe,
    SGt,
    SGe,
    SLt,
    SLe,
    FOEq,
    FUEq,
    FONe,
    FUNe,
    FOLt,
    FULt,
    FOGt,
    FUGt,
    FOLe,
    FULe,
    FOGe,
    FUGe,
    Ordered,
    Unordered,
    LEq,
    LNe,
    LAnd,
    LOr,
    FMin,
    FMax,
    UMin,
    UMax,
    SMin,
    SMax,
    NMin,
    NMax,
    Pow,
    Atan2,
    Step,
    Ldexp,
    /// High half of the unsigned product (UMulExtended's second member).
    UMulHi,
    /// High half of the signed product.
    SMulHi,
    /// Carry of an unsigned add (IAddCarry's second member).
    AddCarry,
    /// Borrow of an unsigned subtract.
    SubBorrow,
}

/// Ternary per-component operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum TernOp {
    FMix,
    FClamp,
    UClamp,
    SClamp,
    NClamp,
    Fma,
    SmoothStep,
    UExtract,
    SExtract,
}

/// Conversion kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum CvtKind {
    FToU,
    FToS,
    SToF,
    UToF,
    UConv,
    SConv,
    FConv,
    FConvSat,
}

/// Atomic operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum AtomicOp {
    Load,
    Store,
    Exchange,
    CmpXchg,
    IInc,
    IDec,
    IAdd,
    ISub,
    SMin,
    UMin,
    SMax,
    UMax,
    And,
    Or,
    Xor,
    FAdd,
    FMin,
    FMax,
}

/// Subgroup (GroupNonUniform) operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum SgOp {
    Elect,
    All,
    Any,
    AllEqual,
    Broadcast,
    BroadcastFirst,
    Ballot,
    InverseBallot,
    BallotBitExtract,
    BallotBitCount,
    BallotFindLsb,
    BallotFindMsb,
    Shuffle,
    ShuffleXor,
    ShuffleUp,
    ShuffleDown,
    QuadBroadcast,
    QuadSwap,
    Rotate,
    Reduce(BinOp),
}

/// An access-chain step.
#[derive(Clone, Copy, Debug)]
pub enum Step {
    /// Add a constant byte offset.
    Const(i64),
    /// Add `index × stride` with the index read from a column (`bits` wide, signed).
    Dyn { idx: u32, bits: u8, stride: i64 },
}

/// An edge to a block, with the phi copies it performs (SPIR-V 2.2.5: phis read their
/// operands as of the end of the predecessor, so the copies are parallel).
#[derive(Clone, Debug, Default)]
pub struct Edge {
    /// Target block index.
    pub target: u32,
    /// (phi value, incoming value).
    pub phis: Vec<(Val, Val)>,
}

/// Block terminators.
#[derive(Clone, Debug)]
pub enum Term {
    /// OpBranch.
    Branch(Edge),
    /// OpBranchConditional.
    Cond { c: u32, t: Edge, f: Edge },
    /// OpSwitch.
    Switch {
        sel: u32,
        bits: u8,
        default: Edge,
        cases: Vec<(u64, Edge)>,
    },
    /// OpReturn / OpReturnValue.
    Return(Option<Val>),
    /// OpKill / OpTerminateInvocation.
    Kill,
    /// OpUnreachable.
    Unreachable,
}

/// One pre-decoded instruction. Column operands (`u32`) index lane columns; `*_mat` fields
/// index matrix slots.
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub enum Op {
    Un {
        op: UnOp,
        num: Num,
        d: u32,
        a: u32,
        n: u32,
    },
    Bin {
        op: BinOp,
        num: Num,
        d: u32,
        a: u32,
        b: u32,
        n: u32,
        bs: bool,
    },
    Tern {
        op: TernOp,
        num: Num,
        d: u32,
        a: u32,
        b: u32,
        c: u32,
        n: u32,
        bs: bool,
        cs: bool,
    },
    BfInsert {
        d: u32,
        base: u32,
        ins: u32,
        off: u32,
        cnt: u32,
        n: u32,
        bits: u8,
    },
    Cvt {
        kind: CvtKind,
        from: Num,
        to: Num,
        d: u32,
        a: u32,
        n: u32,
    },
    /// Reinterpret `na` components of `from` as `nd` components of `to` (same total bits).
    Bitcast {
        d: u32,
        a: u32,
        from: Num,
        na: u32,
        to: Num,
        nd: u32,
    },
    Select {
        d: u32,
        c: u32,
        a: u32,
        b: u32,
        n: u32,
        cs: bool,
        nmats: u32,
        dm: u32,
        am: u32,
        bm: u32,
    },
    /// Copy a whole value (columns and matrix slots).
    Copy {
        d: Val,
        a: Val,
    },
    /// OpVectorExtractDynamic over `n` components (index `w` bits wide).
    ExtractDyn {
        d: u32,
        a: u32,
        idx: u32,
        n: u32,
        w: u32,
    },
    InsertDyn {
        d: u32,
        a: u32,
        v: u32,
        idx: u32,
        n: u32,
        w: u32,
    },
    Load {
        d: Val,
        ptr: u32,
        leaves: Box<[MemLeaf]>,
    },
    Store {
        ptr: u32,
        v: Val,
        leaves: Box<[MemLeaf]>,
    },
    CopyMem {
        dst: u32,
        src: u32,
        bytes: u32,
    },
    AccessChain {
        d: u32,
        base: u32,
        steps: Box<[Step]>,
    },
    /// OpArrayLength: `(bytes of the object from the pointer on − off) / stride`.
    ArrayLength {
        d: u32,
        ptr: u32,
        off: u32,
        stride: u32,
    },
    /// Truncate a pointer/integer column to `bits` (OpConvertPtrToU).
    Trunc {
        d: u32,
        a: u32,
        bits: u8,
    },
    Atomic {
        op: AtomicOp,
        num: Num,
        d: u32,
        ptr: u32,
        v: u32,
        cmp: u32,
    },
    Barrier,
    Call {
        f: u32,
        args: Box<[(Val, Val)]>,
        ret: Option<(Val, Val)>,
    },
    Sg {
        op: SgOp,
        num: Num,
        d: u32,
        a: u32,
        b: u32,
        n: u32,
        scan: u8,
        cluster: u32,
    },
    /// Cooperative-matrix load (`stride` is `u32::MAX` when absent).
    CmLoad {
        d: u32,
        ptr: u32,
        stride: u32,
        col_major: bool,
        pbytes: u32,
    },
    CmStore {
        ptr: u32,
        m: u32,
        stride: u32,
        col_major: bool,
        pbytes: u32,
    },
    CmMulAdd {
        d: u32,
        a: u32,
        b: u32,
        c: u32,
        flags: u32,
    },
    CmExtract {
        d: u32,
        m: u32,
        idx: u32,
    },
    CmInsert {
        d: u32,
        m: u32,
        v: u32,
        idx: u32,
    },
    CmSplat {
        d: u32,
        v: u32,
    },
    CmUn {
        op: UnOp,
        d: u32,
        a: u32,
    },
    CmBin {
        op: BinOp,
        d: u32,
        a: u32,
        b: u32,
    },
    CmScale {
        d: u32,
        a: u32,
        s: u32,
    },
    CmCvt {
        kind: CvtKind,
        d: u32,
        a: u32,
    },
    Printf {
        fmt: String,
        args: Box<[(u32, Num, u32)]>,
    },
    /// SPV_NV_cooperative_matrix2 / tensor addressing (crate::coop2).
    Coop2(Box<crate::coop2::C2>),
    /// An instruction the engine cannot run: an error if reached.
    Unsupported(String),
}

/// A block in structured order.
#[derive(Clone, Debug)]
pub struct Block {
    /// Its ops and, per op, the index of its source description.
    pub ops: Vec<(Op, u32)>,
    /// The terminator and its description index.
    pub term: (Term, u32),
}

/// A compiled function.
#[derive(Clone, Debug)]
pub struct Func {
    /// Result id.
    pub id: u32,
    /// Name for messages.
    pub name: String,
    /// Blocks; index 0 is the entry, the order is the reconvergence priority.
    pub blocks: Vec<Block>,
    /// Where ReturnValue puts its value.
    pub ret: Option<Val>,
    /// Parameter registers.
    pub params: Vec<Val>,
}

/// Where a matrix slot lives.
#[derive(Clone, Copy, Debug)]
pub struct MatSlot {
    /// Its type.
    pub cm: CmType,
    /// Offset in the f32 arena (f32-backed kinds) or the u64 arena (f64 as bits, integers).
    pub off: usize,
    /// Scope instances in a batch (subgroups or 1).
    pub inst: u32,
    /// Lanes per scope instance.
    pub scope: u32,
}

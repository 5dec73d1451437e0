//! Native code for the functions the engine calls itself (decode functions, per-element and
//! combine functions), through Cranelift (feature `jit`, on by default; `EngineOptions::jit`).
//!
//! The interpreter runs such a function as a sub-batch of up to 1024 lanes, one pass over
//! 8 KiB register columns per op; a decode function of ggml's quantized matmuls is 15-40 ops
//! over data that does not stay in L1. Here a function of one block whose ops are all in the
//! subset below is compiled into a loop over lanes that keeps every value in CPU registers and
//! writes only the result columns. The interpreter stays the reference: each op is translated
//! to the same bits its definition in `eval` gives (`bin1`, `cvt1`, the chain and bitcast
//! loops, `memory::read_bytes`), and anything the code does not handle exactly as that
//! definition does (a NaN result of a float op, a NaN converted between widths, a load that is
//! not an aligned in-bounds read of one object, a per-invocation object) makes the code stop
//! and report the lane: the caller then runs the whole call through the interpreter, which
//! gives the value or the error. Only functions that write no memory are compiled (the
//! subset has no store), so running a call again is unobservable.
//!
//! Subset: `Copy` and `Select` of plain values, `Bin` on 8-64-bit integers and bools and f32
//! + − × ÷, `IntChain` (with its fused address), `Cvt` between integer widths, from integers
//! of up to 32 bits to f32 and between f32 and f16, `Bitcast` of up to 64 bits, `Load` of
//! scalar leaves. One block ending in `Return` of a value.

use crate::memory::{FIRST_ADDRESSABLE_OBJECT, OBJ_SHIFT, OFF_MASK, POISON};
use crate::program::{
    BinArgs, BinOp, BitcastArgs, ChainOp, Col, CvtArgs, CvtKind, Func, IntChainArgs, LoadArgs,
    MemLeaf, Num, Op, Program, SelectArgs, Term,
};
use cranelift_codegen::ir::{
    AbiParam, Block, BlockArg, InstBuilder, MemFlagsData, UserFuncName, Value,
    condcodes::{FloatCC, IntCC},
    types::{F32, I8, I32, I64},
};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{Linkage, Module, default_libcall_names};
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::atomic::AtomicU32;

/// What compiled code reads, by field offset (see `Translator::entry`).
#[repr(C)]
struct JitCall {
    ins: *const *const u64,
    outs: *const *mut u64,
    lanes: u64,
    objs: *const JitObj<'static>,
    nobjs: u64,
    addressable: *const JitObj<'static>,
    naddressable: u64,
    seen: *mut u8,
    globals: *const u64,
}

/// A memory object as compiled code reads it: its words and usable bytes, or no words for an
/// object the code must not read itself (per-invocation storage).
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct JitObj<'a> {
    words: *const u32,
    size: u64,
    _words: std::marker::PhantomData<&'a [AtomicU32]>,
}

impl<'a> JitObj<'a> {
    /// An object the code reads: at most `words.len() · 4` of `size` bytes.
    pub(crate) fn of(words: &'a [AtomicU32], size: u64) -> Self {
        JitObj {
            words: words.as_ptr() as *const u32,
            size: size.min(words.len() as u64 * 4),
            _words: std::marker::PhantomData,
        }
    }

    /// An object whose reads send the call back to the interpreter.
    pub(crate) fn declined() -> Self {
        JitObj {
            words: std::ptr::null(),
            size: 0,
            _words: std::marker::PhantomData,
        }
    }
}

/// One compiled function.
pub(crate) struct CompiledFunc {
    code: *const u8,
    /// Components of all parameters, in order: the columns the call passes.
    pub params: usize,
    /// Components of the result.
    pub results: usize,
    /// Columns the function reads that hold a variable's pointer: the caller passes the
    /// calling lane's values, in this order.
    pub globals: Vec<Col>,
    /// Lane-instructions per call, as the interpreter counts them (ops and the terminator).
    pub lane_instr: u64,
}

impl CompiledFunc {
    /// Runs the function for `lanes` calls: parameter component `k` of call `l` at
    /// `ins[k][l]`, result component `k` into `outs[k][l]`; `seen[i]` set for each object the
    /// loads read (`objs` then `addressable`). Err(lane) when the code declined a call
    /// (the outputs are then partly written: run the calls through the interpreter).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run(
        &self,
        ins: &[&[u64]],
        outs: &mut [&mut [u64]],
        lanes: usize,
        objs: &[JitObj],
        addressable: &[JitObj],
        seen: &mut [u8],
        globals: &[u64],
    ) -> Result<(), usize> {
        assert!(ins.len() == self.params && ins.iter().all(|c| c.len() >= lanes));
        assert!(outs.len() == self.results && outs.iter().all(|c| c.len() >= lanes));
        assert!(seen.len() >= objs.len() + addressable.len());
        assert_eq!(globals.len(), self.globals.len());
        let ins: Vec<*const u64> = ins.iter().map(|c| c.as_ptr()).collect();
        let outs: Vec<*mut u64> = outs.iter_mut().map(|c| c.as_mut_ptr()).collect();
        let call = JitCall {
            ins: ins.as_ptr(),
            outs: outs.as_ptr(),
            lanes: lanes as u64,
            objs: objs.as_ptr() as *const JitObj<'static>,
            nobjs: objs.len() as u64,
            addressable: addressable.as_ptr() as *const JitObj<'static>,
            naddressable: addressable.len() as u64,
            seen: seen.as_mut_ptr(),
            globals: globals.as_ptr(),
        };
        // SAFETY: FFI into code `compile` generated for this signature. It reads `lanes` words
        // of each input column and writes as many of each output column (lengths asserted
        // above), reads objects only inside `size` bytes of `words` (`JitObj::of` bounds
        // them by the slice), writes `seen` only below `nobjs + naddressable` (asserted) and
        // reads `globals` below its asserted length. The module owning the code lives as long
        // as `self` (both belong to the program's `Jit`).
        let code = unsafe {
            std::mem::transmute::<*const u8, extern "C" fn(*const JitCall) -> u64>(self.code)
        };
        match code(&call) {
            0 => Ok(()),
            l => Err(l as usize - 1),
        }
    }
}

/// The compiled functions of a program, by function index, and the module that owns their
/// code.
#[derive(Default)]
pub(crate) struct Jit {
    module: Option<JITModule>,
    funcs: FxHashMap<usize, CompiledFunc>,
}

// SAFETY: after `compile` the module is never used again but to free its memory on drop, and
// the code it holds is immutable; the raw pointers of `CompiledFunc` point into that code.
unsafe impl Send for Jit {}
// SAFETY: as for Send: nothing is mutated through a shared reference.
unsafe impl Sync for Jit {}

impl Drop for Jit {
    fn drop(&mut self) {
        self.funcs.clear();
        if let Some(m) = self.module.take() {
            // SAFETY: the code pointers went with `funcs`; no call can be running (we own the
            // only reference).
            unsafe { m.free_memory() };
        }
    }
}

impl std::fmt::Debug for Jit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Jit({} functions)", self.funcs.len())
    }
}

impl Jit {
    /// The compiled code of function `fi`, if it was compiled.
    pub(crate) fn func(&self, fi: usize) -> Option<&CompiledFunc> {
        self.funcs.get(&fi)
    }

    /// Compiles every function of `p` but the entry point that the subset covers; none when
    /// the host has no Cranelift backend.
    pub(crate) fn compile(p: &Program) -> Jit {
        let mut jit = Jit::default();
        let consts: FxHashMap<Col, u64> = p.const_cols.iter().copied().collect();
        let vars: FxHashSet<Col> = p.var_cols.iter().map(|&(c, _)| c).collect();
        let plans: Vec<(usize, Plan)> = (0..p.funcs.len())
            .filter(|&fi| fi != p.entry as usize)
            .filter_map(|fi| Some((fi, Plan::of(&p.funcs[fi], &consts, &vars)?)))
            .collect();
        if plans.is_empty() {
            return jit;
        }
        let Some(mut module) = new_module() else {
            return jit;
        };
        let mut ids = Vec::new();
        let mut fctx = FunctionBuilderContext::new();
        for (fi, plan) in plans {
            let mut ctx = module.make_context();
            let ptr = module.target_config().pointer_type();
            ctx.func.signature.params.push(AbiParam::new(ptr));
            ctx.func.signature.returns.push(AbiParam::new(I64));
            let Ok(id) =
                module.declare_function(&format!("f{fi}"), Linkage::Local, &ctx.func.signature)
            else {
                continue;
            };
            ctx.func.name = UserFuncName::user(0, id.as_u32());
            let cfg = module.target_config();
            Translator::build(&mut ctx.func, &mut fctx, &p.funcs[fi], &plan, cfg);
            let debug = std::env::var("COOPMAT_EXEC_DEBUG").is_ok_and(|v| v.contains("jit"));
            if debug {
                ctx.set_disasm(true);
                eprintln!("{}", ctx.func.display());
            }
            let defined = module.define_function(id, &mut ctx);
            if debug && let Some(code) = ctx.compiled_code() {
                eprintln!("{}", code.vcode.as_deref().unwrap_or(""));
            }
            if defined.is_ok() {
                ids.push((fi, id, plan));
            }
            module.clear_context(&mut ctx);
        }
        if module.finalize_definitions().is_err() {
            // SAFETY: no code pointer was taken.
            unsafe { module.free_memory() };
            return jit;
        }
        for (fi, id, plan) in ids {
            jit.funcs.insert(
                fi,
                CompiledFunc {
                    code: module.get_finalized_function(id),
                    params: plan.params.len(),
                    results: plan.results.len(),
                    globals: plan.globals,
                    lane_instr: plan.lane_instr,
                },
            );
        }
        jit.module = Some(module);
        jit
    }
}

fn new_module() -> Option<JITModule> {
    let mut flags = settings::builder();
    flags.set("opt_level", "speed").ok()?;
    flags.set("use_colocated_libcalls", "false").ok()?;
    flags.set("is_pic", "false").ok()?;
    let isa = cranelift_native::builder()
        .ok()?
        .finish(settings::Flags::new(flags))
        .ok()?;
    Some(JITModule::new(JITBuilder::with_isa(
        isa,
        default_libcall_names(),
    )))
}

/// What a function reads from outside itself, found before any code is built: a function
/// with anything outside the subset has no plan.
struct Plan {
    /// Parameter component columns, in call order.
    params: Vec<Col>,
    results: Vec<Col>,
    globals: Vec<Col>,
    consts: Vec<(Col, u64)>,
    lane_instr: u64,
}

impl Plan {
    fn of(f: &Func, consts: &FxHashMap<Col, u64>, vars: &FxHashSet<Col>) -> Option<Plan> {
        let [block] = f.blocks.as_slice() else {
            return None;
        };
        let (Term::Return(Some(ret)), _) = &block.term else {
            return None;
        };
        if ret.nmats != 0 || ret.ncols == 0 || f.touches_private {
            return None;
        }
        if f.params.iter().any(|v| v.nmats != 0) {
            return None;
        }
        let params: Vec<Col> = f.params.iter().flat_map(|v| v.cols()).collect();
        let mut defined: FxHashSet<Col> = params.iter().copied().collect();
        let (mut globals, mut used_consts) = (Vec::new(), Vec::new());
        let mut read = |c: Col, defined: &FxHashSet<Col>| -> Option<()> {
            if defined.contains(&c) {
                return Some(());
            }
            if let Some(&v) = consts.get(&c) {
                if !used_consts.iter().any(|&(k, _)| k == c) {
                    used_consts.push((c, v));
                }
                return Some(());
            }
            if vars.contains(&c) {
                if !globals.contains(&c) {
                    globals.push(c);
                }
                return Some(());
            }
            None
        };
        for (op, _) in &block.ops {
            let (reads, writes) = op_columns(op)?;
            for c in reads {
                read(c, &defined)?;
            }
            defined.extend(writes);
        }
        let results: Vec<Col> = ret.cols().collect();
        for &c in &results {
            read(c, &defined)?;
        }
        Some(Plan {
            params,
            results,
            globals,
            consts: used_consts,
            lane_instr: block.ops.len() as u64 + 1,
        })
    }
}

/// The columns an op of the subset reads and writes; None for an op outside the subset.
fn op_columns(op: &Op) -> Option<(Vec<Col>, Vec<Col>)> {
    let span = |c: Col, n: u32| (0..n).map(move |k| c.at(k));
    Some(match op {
        Op::Copy(c) if c.a.nmats == 0 && c.d.nmats == 0 && c.a.ncols == c.d.ncols => {
            (c.a.cols().collect(), c.d.cols().collect())
        }
        Op::Select(s) if s.nmats == 0 => {
            let mut r: Vec<Col> = span(s.c, if s.cs { 1 } else { s.n }).collect();
            r.extend(span(s.a, s.n).chain(span(s.b, s.n)));
            (r, span(s.d, s.n).collect())
        }
        Op::Bin(b) if bin_supported(b.op, b.num) => {
            let mut r: Vec<Col> = span(b.a, if b.a_scalar { 1 } else { b.n }).collect();
            r.extend(span(b.b, if b.bs { 1 } else { b.n }));
            (r, span(b.d, b.n).collect())
        }
        Op::IntChain(x) => {
            let mut r = vec![x.first];
            r.extend(x.steps.iter().map(|s| s.other));
            r.extend(x.address.map(|a| a.base));
            (r, vec![x.d])
        }
        Op::Cvt(c) if cvt_supported(c.kind, c.from, c.to) => {
            (span(c.a, c.n).collect(), span(c.d, c.n).collect())
        }
        Op::Bitcast(b)
            if b.na * b.from.bits() == b.nd * b.to.bits()
                && b.na * b.from.bits() <= 64
                && !matches!(b.from, Num::Bool)
                && !matches!(b.to, Num::Bool) =>
        {
            (span(b.a, b.na).collect(), span(b.d, b.nd).collect())
        }
        Op::Load(l) if l.d.nmats == 0 => {
            let mut w = Vec::new();
            for leaf in l.leaves.iter() {
                match *leaf {
                    MemLeaf::Scalar { num, col, .. } if matches!(num.bytes(), 1 | 2 | 4 | 8) => {
                        w.push(l.d.col.at(col))
                    }
                    _ => return None,
                }
            }
            (vec![l.ptr], w)
        }
        _ => return None,
    })
}

fn int_bits(num: Num) -> Option<u32> {
    match num {
        Num::Int(w @ (8 | 16 | 32 | 64)) => Some(w as u32),
        _ => None,
    }
}

fn bin_supported(op: BinOp, num: Num) -> bool {
    use BinOp::*;
    match num {
        Num::F32 => matches!(op, FAdd | FSub | FMul | FDiv),
        Num::Bool => matches!(op, LAnd | LOr | LEq | LNe),
        _ if int_bits(num).is_some() => matches!(
            op,
            IAdd | ISub
                | IMul
                | UDiv
                | UMod
                | Shl
                | ShrL
                | ShrA
                | And
                | Or
                | Xor
                | IEq
                | INe
                | UGt
                | UGe
                | ULt
                | ULe
                | SGt
                | SGe
                | SLt
                | SLe
                | UMin
                | UMax
                | SMin
                | SMax
        ),
        _ => false,
    }
}

fn cvt_supported(kind: CvtKind, from: Num, to: Num) -> bool {
    match kind {
        CvtKind::UConv | CvtKind::SConv => int_bits(from).is_some() && int_bits(to).is_some(),
        CvtKind::UToF | CvtKind::SToF => int_bits(from).is_some_and(|w| w <= 32) && to == Num::F32,
        CvtKind::FConv => matches!((from, to), (Num::F32, Num::F16) | (Num::F16, Num::F32)),
        _ => false,
    }
}

/// Builds one function's code: `fn(&JitCall) -> u64`, 0 when every call ran, else 1 + the
/// first call it declined.
struct Translator<'a, 'b> {
    b: &'a mut FunctionBuilder<'b>,
    vals: FxHashMap<Col, Value>,
    /// The call index + 1 (what a declined call returns).
    next: Value,
    bail: Block,
    objs: (Value, Value),
    addressable: (Value, Value),
    seen: Value,
}

const TRUSTED: MemFlagsData = MemFlagsData::trusted();

impl<'a, 'b> Translator<'a, 'b> {
    fn build(
        func: &'b mut cranelift_codegen::ir::Function,
        fctx: &'b mut FunctionBuilderContext,
        f: &Func,
        plan: &Plan,
        cfg: cranelift_codegen::isa::TargetFrontendConfig,
    ) {
        let mut b = FunctionBuilder::new(func, fctx);
        let entry = b.create_block();
        let header = b.create_block();
        let body = b.create_block();
        let done = b.create_block();
        let bail = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.append_block_param(header, I64);
        b.append_block_param(bail, I64);
        b.switch_to_block(entry);
        let call = b.block_params(entry)[0];
        let field = |b: &mut FunctionBuilder, k: i32| b.ins().load(I64, TRUSTED, call, 8 * k);
        let ins = field(&mut b, 0);
        let outs = field(&mut b, 1);
        let lanes = field(&mut b, 2);
        let objs = (field(&mut b, 3), field(&mut b, 4));
        let addressable = (field(&mut b, 5), field(&mut b, 6));
        let seen = field(&mut b, 7);
        let globals = field(&mut b, 8);
        let in_cols: Vec<Value> = (0..plan.params.len())
            .map(|k| b.ins().load(I64, TRUSTED, ins, 8 * k as i32))
            .collect();
        let out_cols: Vec<Value> = (0..plan.results.len())
            .map(|k| b.ins().load(I64, TRUSTED, outs, 8 * k as i32))
            .collect();
        let mut fixed: FxHashMap<Col, Value> = FxHashMap::default();
        for (k, &c) in plan.globals.iter().enumerate() {
            let v = b.ins().load(I64, TRUSTED, globals, 8 * k as i32);
            fixed.insert(c, v);
        }
        for &(c, v) in &plan.consts {
            let v = b.ins().iconst(I64, v as i64);
            fixed.insert(c, v);
        }
        let zero = b.ins().iconst(I64, 0);
        b.ins().jump(header, &[BlockArg::Value(zero)]);

        b.switch_to_block(header);
        let lane = b.block_params(header)[0];
        let more = b.ins().icmp(IntCC::UnsignedLessThan, lane, lanes);
        b.ins().brif(more, body, &[], done, &[]);

        b.switch_to_block(body);
        let at = b.ins().ishl_imm_s(lane, 3);
        let next = b.ins().iadd_imm_s(lane, 1);
        let mut vals = fixed;
        for (k, &c) in plan.params.iter().enumerate() {
            let p = b.ins().iadd(in_cols[k], at);
            let v = b.ins().load(I64, TRUSTED, p, 0);
            vals.insert(c, v);
        }
        let mut t = Translator {
            b: &mut b,
            vals,
            next,
            bail,
            objs,
            addressable,
            seen,
        };
        for (op, _) in &f.blocks[0].ops {
            t.op(op);
        }
        let results: Vec<Value> = plan.results.iter().map(|&c| t.get(c)).collect();
        drop(t);
        for (k, v) in results.into_iter().enumerate() {
            let p = b.ins().iadd(out_cols[k], at);
            b.ins().store(TRUSTED, v, p, 0);
        }
        b.ins().jump(header, &[BlockArg::Value(next)]);

        b.switch_to_block(done);
        let z = b.ins().iconst(I64, 0);
        b.ins().return_(&[z]);
        b.switch_to_block(bail);
        let code = b.block_params(bail)[0];
        b.ins().return_(&[code]);
        b.seal_all_blocks();
        b.finalize(cfg);
    }

    fn i(&mut self) -> cranelift_frontend::FuncInstBuilder<'_, 'b> {
        self.b.ins()
    }

    /// A column's current value (the plan checked that every read column has one).
    fn get(&self, c: Col) -> Value {
        self.vals[&c]
    }

    /// Leaves the function with the current call's index + 1 where `bad` is non-zero.
    fn decline_if(&mut self, bad: Value) {
        let ok = self.b.create_block();
        self.b
            .ins()
            .brif(bad, self.bail, &[BlockArg::Value(self.next)], ok, &[]);
        self.b.switch_to_block(ok);
    }

    fn iconst(&mut self, v: u64) -> Value {
        self.b.ins().iconst(I64, v as i64)
    }

    /// The low `bits` bits, zero-extended (`eval::trunc`).
    fn trunc(&mut self, v: Value, bits: u32) -> Value {
        if bits >= 64 {
            v
        } else {
            self.b.ins().band_imm_s(v, ((1u64 << bits) - 1) as i64)
        }
    }

    /// The low `bits` bits, sign-extended (`eval::sext`).
    fn sext(&mut self, v: Value, bits: u32) -> Value {
        if bits >= 64 {
            v
        } else {
            let s = self.b.ins().ishl_imm_s(v, (64 - bits) as i64);
            self.b.ins().sshr_imm_s(s, (64 - bits) as i64)
        }
    }

    fn bool64(&mut self, c: Value) -> Value {
        self.b.ins().uextend(I64, c)
    }

    fn f32_of(&mut self, v: Value) -> Value {
        let x = self.b.ins().ireduce(I32, v);
        self.b.ins().bitcast(F32, MemFlagsData::new(), x)
    }

    fn bits_of_f32(&mut self, f: Value) -> Value {
        let x = self.b.ins().bitcast(I32, MemFlagsData::new(), f);
        self.b.ins().uextend(I64, x)
    }

    fn op(&mut self, op: &Op) {
        match op {
            Op::Copy(c) => {
                let v: Vec<Value> = c.a.cols().map(|k| self.get(k)).collect();
                for (k, v) in c.d.cols().zip(v) {
                    self.vals.insert(k, v);
                }
            }
            Op::Select(s) => self.select(s),
            Op::Bin(b) => self.bin(b),
            Op::IntChain(x) => self.int_chain(x),
            Op::Cvt(c) => self.cvt(c),
            Op::Bitcast(b) => self.bitcast(b),
            Op::Load(l) => self.load(l),
            // The plan admits nothing else.
            _ => unreachable!("op outside the compiled subset"),
        }
    }

    fn select(&mut self, s: &SelectArgs) {
        let mut out = Vec::new();
        for k in 0..s.n {
            let c = self.get(if s.cs { s.c } else { s.c.at(k) });
            let (a, b) = (self.get(s.a.at(k)), self.get(s.b.at(k)));
            out.push(self.b.ins().select(c, a, b));
        }
        for (k, v) in out.into_iter().enumerate() {
            self.vals.insert(s.d.at(k as u32), v);
        }
    }

    fn bin(&mut self, x: &BinArgs) {
        let mut out = Vec::new();
        for k in 0..x.n {
            let a = self.get(if x.a_scalar { x.a } else { x.a.at(k) });
            let b = self.get(if x.bs { x.b } else { x.b.at(k) });
            let r = self.bin1(x.op, x.num, a, b);
            out.push(r);
        }
        for (k, v) in out.into_iter().enumerate() {
            self.vals.insert(x.d.at(k as u32), v);
        }
    }

    /// `eval::bin1` for the ops `bin_supported` admits.
    fn bin1(&mut self, op: BinOp, num: Num, x: Value, y: Value) -> Value {
        use BinOp::*;
        if num == Num::F32 {
            let (a, b) = (self.f32_of(x), self.f32_of(y));
            let r = match op {
                FAdd => self.b.ins().fadd(a, b),
                FSub => self.b.ins().fsub(a, b),
                FMul => self.b.ins().fmul(a, b),
                _ => self.b.ins().fdiv(a, b),
            };
            // bin1 fixes a NaN result's bits; the interpreter redoes such calls.
            let nan = self.b.ins().fcmp(FloatCC::Unordered, r, r);
            self.decline_if(nan);
            return self.bits_of_f32(r);
        }
        if num == Num::Bool {
            let (a, b) = (
                self.b.ins().icmp_imm_s(IntCC::NotEqual, x, 0),
                self.b.ins().icmp_imm_s(IntCC::NotEqual, y, 0),
            );
            let r = match op {
                LAnd => self.b.ins().band(a, b),
                LOr => self.b.ins().bor(a, b),
                LEq => self.b.ins().icmp(IntCC::Equal, a, b),
                _ => self.b.ins().icmp(IntCC::NotEqual, a, b),
            };
            return self.bool64(r);
        }
        let bits = int_bits(num).unwrap_or(64);
        let (ua, ub) = (self.trunc(x, bits), self.trunc(y, bits));
        let (sa, sb) = (self.sext(x, bits), self.sext(y, bits));
        let cmp = |t: &mut Self, cc: IntCC, a: Value, b: Value| {
            let c = t.b.ins().icmp(cc, a, b);
            t.bool64(c)
        };
        let wide = |t: &mut Self, v: Value| t.trunc(v, bits);
        match op {
            IAdd => {
                let r = self.b.ins().iadd(ua, ub);
                wide(self, r)
            }
            ISub => {
                let r = self.b.ins().isub(ua, ub);
                wide(self, r)
            }
            IMul => {
                let r = self.b.ins().imul(ua, ub);
                wide(self, r)
            }
            UDiv | UMod => {
                // Division by zero gives 0.
                let zero = self.b.ins().icmp_imm_s(IntCC::Equal, ub, 0);
                let one = self.iconst(1);
                let d = self.b.ins().select(zero, one, ub);
                let q = if op == UDiv {
                    self.b.ins().udiv(ua, d)
                } else {
                    self.b.ins().urem(ua, d)
                };
                let z = self.iconst(0);
                self.b.ins().select(zero, z, q)
            }
            Shl | ShrL => {
                let big =
                    self.b
                        .ins()
                        .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, ub, bits as i64);
                let s = if op == Shl {
                    self.b.ins().ishl(ua, ub)
                } else {
                    self.b.ins().ushr(ua, ub)
                };
                let s = wide(self, s);
                let z = self.iconst(0);
                self.b.ins().select(big, z, s)
            }
            ShrA => {
                let c63 = self.iconst(63);
                let n = self.b.ins().umin(ub, c63);
                let r = self.b.ins().sshr(sa, n);
                wide(self, r)
            }
            And => self.b.ins().band(ua, ub),
            Or => self.b.ins().bor(ua, ub),
            Xor => self.b.ins().bxor(ua, ub),
            IEq => cmp(self, IntCC::Equal, ua, ub),
            INe => cmp(self, IntCC::NotEqual, ua, ub),
            UGt => cmp(self, IntCC::UnsignedGreaterThan, ua, ub),
            UGe => cmp(self, IntCC::UnsignedGreaterThanOrEqual, ua, ub),
            ULt => cmp(self, IntCC::UnsignedLessThan, ua, ub),
            ULe => cmp(self, IntCC::UnsignedLessThanOrEqual, ua, ub),
            SGt => cmp(self, IntCC::SignedGreaterThan, sa, sb),
            SGe => cmp(self, IntCC::SignedGreaterThanOrEqual, sa, sb),
            SLt => cmp(self, IntCC::SignedLessThan, sa, sb),
            SLe => cmp(self, IntCC::SignedLessThanOrEqual, sa, sb),
            UMin => self.b.ins().umin(ua, ub),
            UMax => self.b.ins().umax(ua, ub),
            SMin => {
                let r = self.b.ins().smin(sa, sb);
                wide(self, r)
            }
            SMax => {
                let r = self.b.ins().smax(sa, sb);
                wide(self, r)
            }
            _ => unreachable!("bin op outside the compiled subset"),
        }
    }

    /// `Columns::int_chain`: 32-bit steps, then the value or the access chain's address.
    fn int_chain(&mut self, x: &IntChainArgs) {
        let first = self.get(x.first);
        let mut acc = self.b.ins().ireduce(I32, first);
        for s in &x.steps {
            let o = self.get(s.other);
            let o = self.b.ins().ireduce(I32, o);
            let (a, b) = if s.acc_left { (acc, o) } else { (o, acc) };
            acc = match s.op {
                ChainOp::IAdd => self.b.ins().iadd(a, b),
                ChainOp::ISub => self.b.ins().isub(a, b),
                ChainOp::IMul => self.b.ins().imul(a, b),
                ChainOp::And => self.b.ins().band(a, b),
                ChainOp::Or => self.b.ins().bor(a, b),
                ChainOp::Xor => self.b.ins().bxor(a, b),
                ChainOp::Shl | ChainOp::ShrL => {
                    let big = self
                        .b
                        .ins()
                        .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, b, 32);
                    let r = if s.op == ChainOp::Shl {
                        self.b.ins().ishl(a, b)
                    } else {
                        self.b.ins().ushr(a, b)
                    };
                    let z = self.b.ins().iconst(I32, 0);
                    self.b.ins().select(big, z, r)
                }
                ChainOp::ShrA => {
                    let c31 = self.b.ins().iconst(I32, 31);
                    let n = self.b.ins().umin(b, c31);
                    self.b.ins().sshr(a, n)
                }
            };
        }
        let v = match x.address {
            None => self.b.ins().uextend(I64, acc),
            Some(a) => {
                // base + offset + sext(acc)·stride, or POISON where that leaves base's object
                // (`eval::outside`).
                let base = self.get(a.base);
                let i = self.b.ins().sextend(I64, acc);
                let moved = self.b.ins().imul_imm_s(i, a.stride);
                let p = self.b.ins().iadd_imm_s(base, a.offset);
                let p = self.b.ins().iadd(p, moved);
                let obj = self.b.ins().band_imm_s(base, !OFF_MASK as i64);
                let diff = self.b.ins().bxor(p, obj);
                let out = self.b.ins().ushr_imm_s(diff, (OBJ_SHIFT - 1) as i64);
                let poison = self.iconst(POISON);
                self.b.ins().select(out, poison, p)
            }
        };
        self.vals.insert(x.d, v);
    }

    fn cvt(&mut self, c: &CvtArgs) {
        let mut out = Vec::new();
        for k in 0..c.n {
            let x = self.get(c.a.at(k));
            let r = match c.kind {
                CvtKind::UConv => {
                    let (fw, tw) = (c.from.bits(), c.to.bits());
                    let t = self.trunc(x, fw);
                    self.trunc(t, tw)
                }
                CvtKind::SConv => {
                    let s = self.sext(x, c.from.bits());
                    self.trunc(s, c.to.bits())
                }
                CvtKind::UToF | CvtKind::SToF => {
                    // Exact in i64, rounded once to f32 (as cvt1's exact f64, then f32).
                    let w = c.from.bits();
                    let v = if c.kind == CvtKind::UToF {
                        self.trunc(x, w)
                    } else {
                        self.sext(x, w)
                    };
                    let f = self.b.ins().fcvt_from_sint(F32, v);
                    self.bits_of_f32(f)
                }
                _ if c.from == Num::F32 => self.f32_to_f16(x),
                _ => self.f16_to_f32(x),
            };
            out.push(r);
        }
        for (k, v) in out.into_iter().enumerate() {
            self.vals.insert(c.d.at(k as u32), v);
        }
    }

    /// f32 bits to f16 bits, rounded to nearest even (`half::f16::from_f64` of the exact f64,
    /// as `cvt1` does); NaNs are declined.
    fn f32_to_f16(&mut self, x: Value) -> Value {
        let a = self.i().band_imm_s(x, 0x7fff_ffff);
        let nan = self
            .i()
            .icmp_imm_s(IntCC::UnsignedGreaterThan, a, 0x7f80_0000);
        self.decline_if(nan);
        let sign = self.i().ushr_imm_s(x, 16);
        let sign = self.i().band_imm_s(sign, 0x8000);
        // Normal results: rebias, round to nearest even at bit 13.
        let odd = self.i().ushr_imm_s(a, 13);
        let odd = self.i().band_imm_s(odd, 1);
        let n = self.i().iadd_imm_s(a, 0xfff - 0x3800_0000);
        let n = self.i().iadd(n, odd);
        let normal = self.i().ushr_imm_s(n, 13);
        // Subnormal results: the 24-bit significand shifted right by 126 − exponent (14..=24),
        // rounded to nearest even.
        let e = self.i().ushr_imm_s(a, 23);
        let m = self.i().band_imm_s(a, 0x7f_ffff);
        let m = self.i().bor_imm_s(m, 0x80_0000);
        let c126 = self.iconst(126);
        let sh = self.i().isub(c126, e);
        let sh = self.i().band_imm_s(sh, 63);
        let q = self.i().ushr(m, sh);
        let one = self.iconst(1);
        let unit = self.i().ishl(one, sh);
        let rem_mask = self.i().iadd_imm_s(unit, -1);
        let rem = self.i().band(m, rem_mask);
        let half = self.i().ushr_imm_s(unit, 1);
        let above = self.i().icmp(IntCC::UnsignedGreaterThan, rem, half);
        let tie = self.i().icmp(IntCC::Equal, rem, half);
        let qodd = self.i().band_imm_s(q, 1);
        let qodd = self.i().icmp_imm_s(IntCC::NotEqual, qodd, 0);
        let tie_up = self.i().band(tie, qodd);
        let up = self.i().bor(above, tie_up);
        let up = self.bool64(up);
        let sub = self.i().iadd(q, up);
        // 65520 and above (infinity included) become infinity; below 2^-25 zero.
        let is_inf = self
            .i()
            .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, a, 0x477f_f000);
        let is_normal = self
            .i()
            .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, a, 0x3880_0000);
        let is_sub = self
            .i()
            .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, a, 0x3300_0000);
        let z = self.iconst(0);
        let inf = self.iconst(0x7c00);
        let r = self.i().select(is_sub, sub, z);
        let r = self.i().select(is_normal, normal, r);
        let r = self.i().select(is_inf, inf, r);
        self.i().bor(r, sign)
    }

    /// f16 bits to f32 bits (exact); NaNs are declined (`cvt1` quiets them through f64).
    fn f16_to_f32(&mut self, x: Value) -> Value {
        let h = self.i().band_imm_s(x, 0xffff);
        let em = self.i().band_imm_s(h, 0x7fff);
        let nan = self.i().icmp_imm_s(IntCC::UnsignedGreaterThan, em, 0x7c00);
        self.decline_if(nan);
        let sign = self.i().band_imm_s(h, 0x8000);
        let sign = self.i().ishl_imm_s(sign, 16);
        let e = self.i().ushr_imm_s(em, 10);
        let m = self.i().band_imm_s(em, 0x3ff);
        // Normal: rebias the exponent; infinity: all ones.
        let normal = self.i().ishl_imm_s(em, 13);
        let normal = self.i().iadd_imm_s(normal, (127 - 15) << 23);
        let inf = self.iconst(0x7f80_0000);
        // Subnormal (or zero): m · 2^-24, exact in f32.
        let mf = self.i().fcvt_from_sint(F32, m);
        let scale = self.i().f32const(f32::from_bits(0x3380_0000));
        let sub = self.i().fmul(mf, scale);
        let sub = self.bits_of_f32(sub);
        let is_sub = self.i().icmp_imm_s(IntCC::Equal, e, 0);
        let is_inf = self.i().icmp_imm_s(IntCC::Equal, e, 31);
        let r = self.i().select(is_sub, sub, normal);
        let r = self.i().select(is_inf, inf, r);
        self.i().bor(r, sign)
    }

    /// `Columns::bitcast`: the components' bits joined (component 0 lowest), then split.
    fn bitcast(&mut self, x: &BitcastArgs) {
        let (fb, tb) = (x.from.bits(), x.to.bits());
        let mut v = self.iconst(0);
        for k in 0..x.na {
            let a = self.get(x.a.at(k));
            let a = self.trunc(a, fb);
            let a = if k == 0 {
                a
            } else {
                self.b.ins().ishl_imm_s(a, (k * fb) as i64)
            };
            v = self.b.ins().bor(v, a);
        }
        let mut out = Vec::new();
        for k in 0..x.nd {
            let s = if k == 0 {
                v
            } else {
                self.b.ins().ushr_imm_s(v, (k * tb) as i64)
            };
            out.push(self.trunc(s, tb));
        }
        for (k, r) in out.into_iter().enumerate() {
            self.vals.insert(x.d.at(k as u32), r);
        }
    }

    /// `Batch::load` for scalar leaves: each an aligned read inside one object
    /// (`memory::read_bytes`'s fast cases), else the call is declined.
    fn load(&mut self, l: &LoadArgs) {
        let ptr = self.get(l.ptr);
        let mut out = Vec::new();
        for leaf in l.leaves.iter() {
            let MemLeaf::Scalar { off, num, col } = *leaf else {
                unreachable!("matrix leaf outside the compiled subset")
            };
            let addr = self.b.ins().iadd_imm_s(ptr, off as i64);
            let v = self.read(addr, num.bytes());
            let v = if num == Num::Bool {
                let c = self.b.ins().icmp_imm_s(IntCC::NotEqual, v, 0);
                self.bool64(c)
            } else {
                v
            };
            out.push((l.d.col.at(col), v));
        }
        for (c, v) in out {
            self.vals.insert(c, v);
        }
    }

    /// `n` bytes at `addr`, zero-extended.
    fn read(&mut self, addr: Value, n: u32) -> Value {
        let obj = self.i().ushr_imm_s(addr, OBJ_SHIFT as i64);
        let off = self.i().band_imm_s(addr, OFF_MASK as i64);
        // The object's entry: dispatch objects below `nobjs`, device-addressable ones from
        // FIRST_ADDRESSABLE_OBJECT; `seen` numbers them in that order.
        let (objs, nobjs) = self.objs;
        let (aobjs, naobjs) = self.addressable;
        let low = self.i().icmp(IntCC::UnsignedLessThan, obj, nobjs);
        let k = self.i().iadd_imm_s(obj, -(FIRST_ADDRESSABLE_OBJECT as i64));
        let high = self.i().icmp(IntCC::UnsignedLessThan, k, naobjs);
        let known = self.i().bor(low, high);
        let unknown = self.i().bxor_imm_s(known, 1);
        self.decline_if(unknown);
        let table = self.i().select(low, objs, aobjs);
        let idx = self.i().select(low, obj, k);
        let seen_idx = self.i().iadd(k, nobjs);
        let seen_idx = self.i().select(low, obj, seen_idx);
        let entry = self.i().imul_imm_s(idx, 16);
        let entry = self.i().iadd(table, entry);
        let words = self.i().load(I64, TRUSTED, entry, 0);
        let size = self.i().load(I64, TRUSTED, entry, 8);
        let none = self.i().icmp_imm_s(IntCC::Equal, words, 0);
        let end = self.i().iadd_imm_s(off, n as i64);
        let past = self.i().icmp(IntCC::UnsignedGreaterThan, end, size);
        let sh = self.i().band_imm_s(off, 3);
        // Whole words for 4 and 8 bytes, halves inside a word for 2.
        let misaligned = match n {
            1 => self.i().iconst(I8, 0),
            2 => self.i().icmp_imm_s(IntCC::UnsignedGreaterThan, sh, 2),
            _ => self.i().icmp_imm_s(IntCC::NotEqual, sh, 0),
        };
        let bad = self.i().bor(none, past);
        let bad = self.i().bor(bad, misaligned);
        self.decline_if(bad);
        let seen = self.seen;
        let seen_at = self.i().iadd(seen, seen_idx);
        let one = self.i().iconst(I8, 1);
        self.i().store(TRUSTED, one, seen_at, 0);
        let word_off = self.i().band_imm_s(off, !3);
        let at = self.i().iadd(words, word_off);
        let w = self.i().load(I32, TRUSTED, at, 0);
        let w = self.i().uextend(I64, w);
        match n {
            8 => {
                let hi = self.i().load(I32, TRUSTED, at, 4);
                let hi = self.i().uextend(I64, hi);
                let hi = self.i().ishl_imm_s(hi, 32);
                self.i().bor(w, hi)
            }
            4 => w,
            _ => {
                let bits = self.i().ishl_imm_s(sh, 3);
                let s = self.i().ushr(w, bits);
                self.trunc(s, 8 * n)
            }
        }
    }
}

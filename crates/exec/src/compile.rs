//! Compiling a module into a [`Pipeline`]: ids to register slots, types to layouts, constants
//! materialized (spec constants included, OpSpecConstantOp evaluated by running the op on a
//! one-lane register image), blocks in structured order.

use crate::floats::{self, Num};
use crate::ops::*;
use crate::types::{CmType, Ty, Types};
use crate::{BindingInfo, BindingKind, EngineOptions, ExecError, SpecConstants, err};
use coopmat_spirv::Module;
use coopmat_spirv::grammar::{self, built_in, decoration, execution_mode, op, storage_class};
use std::collections::{HashMap, HashSet};

mod coop2;
mod ext;

/// Slot-sharing classes (see the value pre-pass in `compile`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum PoolKey {
    Cols(u32),
    Mat(CmType),
}

/// Where a variable's pointer points.
#[derive(Clone, Copy, Debug)]
pub(crate) enum VarAddr {
    /// A descriptor binding (set, binding).
    Binding(u32, u32),
    /// The push-constant block.
    Push,
    /// An engine-owned object (index into `locals`).
    Local(u32),
}

/// An engine-owned memory object.
#[derive(Clone, Debug)]
pub(crate) struct LocalDef {
    /// Bytes (per lane when `per_lane`).
    pub bytes: u64,
    /// One copy per lane (Function, Private, Input) or per batch (Workgroup).
    pub per_lane: bool,
}

/// A built-in input to fill at the start of each workgroup.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BuiltinFill {
    /// The local object.
    pub local: u32,
    /// Byte offset in it.
    pub off: u32,
    /// Which built-in.
    pub builtin: u32,
    /// Bytes per component (4 or 8).
    pub comp_bytes: u32,
}

/// The compiled program.
pub(crate) struct Program {
    pub funcs: Vec<Func>,
    pub entry: u32,
    pub ncols: usize,
    pub mats: Vec<MatSlot>,
    pub mf_len: usize,
    pub mw_len: usize,
    pub const_cols: Vec<(u32, u64)>,
    pub const_mats: Vec<(u32, u64)>,
    pub var_cols: Vec<(u32, VarAddr)>,
    pub locals: Vec<LocalDef>,
    pub builtins: Vec<BuiltinFill>,
    pub private_init: Vec<(Op, u32)>,
    pub descs: Vec<String>,
    pub bindings: Vec<BindingInfo>,
    pub push_size: usize,
    pub local_size: [u32; 3],
    pub sg: u32,
    pub lanes: u32,
    pub options: EngineOptions,
}

/// A compiled, immutable pipeline: one entry point of one module with its specialization.
pub struct Pipeline {
    pub(crate) p: Program,
    /// Word vectors of earlier dispatches, reused for the buffers of the next ones: a fresh
    /// allocation per dispatch costs a page fault per 4 KiB (0.15–0.3 s for 64 MiB).
    pub(crate) scratch: std::sync::Mutex<Vec<Vec<std::sync::atomic::AtomicU32>>>,
}

/// Operand word `i` of an instruction's operands after result type and id, or an error naming it.
pub(super) fn operand(a: &[u32], i: usize) -> Result<u32, ExecError> {
    a.get(i)
        .copied()
        .ok_or_else(|| ExecError::new(format!("missing operand {i}")))
}

impl Pipeline {
    /// Compiles `entry_point` ("" = the first GLCompute entry point) of `module`.
    pub fn compile(
        module: &Module,
        entry_point: &str,
        spec: &SpecConstants,
        options: &EngineOptions,
    ) -> Result<Pipeline, ExecError> {
        let sg = options.subgroup_size;
        if !(8..=128).contains(&sg) || !sg.is_power_of_two() {
            return err(format!(
                "subgroup size {sg} is not a power of two in 8..=128"
            ));
        }
        let p = Cx::new(module, spec, options)?.compile(entry_point)?;
        if std::env::var_os("COOPMAT_EXEC_DEBUG").is_some() {
            eprintln!(
                "coopmat-exec: {} lane columns x {} lanes ({} KiB), matrix arenas {} f32 + {} u64 ({} KiB), {} functions, {} ops",
                p.ncols,
                p.lanes,
                p.ncols * p.lanes as usize * 8 / 1024,
                p.mf_len,
                p.mw_len,
                (p.mf_len * 4 + p.mw_len * 8) / 1024,
                p.funcs.len(),
                p.funcs
                    .iter()
                    .flat_map(|f| &f.blocks)
                    .map(|b| b.ops.len())
                    .sum::<usize>()
            );
        }
        Ok(Pipeline {
            p,
            scratch: Default::default(),
        })
    }

    /// The workgroup size.
    pub fn local_size(&self) -> [u32; 3] {
        self.p.local_size
    }

    /// Every descriptor the entry point uses.
    pub fn bindings(&self) -> &[BindingInfo] {
        &self.p.bindings
    }

    /// Bytes of push constants the entry point reads.
    pub fn push_constant_size(&self) -> usize {
        self.p.push_size
    }
}

struct Cx<'m> {
    m: &'m Module,
    spec: &'m SpecConstants,
    options: EngineOptions,
    t: Types,
    vals: HashMap<u32, Val>,
    ncols: u32,
    mats: Vec<CmType>,
    img: Vec<u64>,
    const_ids: HashSet<u32>,
    const_mats: Vec<(u32, u64)>,
    var_cols: Vec<(u32, VarAddr)>,
    locals: Vec<LocalDef>,
    builtins: Vec<BuiltinFill>,
    private_init: Vec<(Op, u32)>,
    descs: Vec<String>,
    glsl_set: HashSet<u32>,
    printf_set: HashSet<u32>,
    other_sets: HashSet<u32>,
    strings: HashMap<u32, String>,
    func_index: HashMap<u32, u32>,
    /// Constant columns that belong to no id (lengths, literals of expansions).
    const_len: Vec<(u32, u64)>,
    /// Matrix layouts that pointers carry from the struct member they were reached through.
    ptr_lay: HashMap<u32, ext::PtrLay>,
    /// The local object all Block-decorated Workgroup variables share (they alias from
    /// offset 0, SPV_KHR_workgroup_memory_explicit_layout).
    wg_block: Option<u32>,
}

fn bad<T>(what: impl Into<String>) -> Result<T, ExecError> {
    err(what)
}

impl<'m> Cx<'m> {
    fn new(
        m: &'m Module,
        spec: &'m SpecConstants,
        options: &EngineOptions,
    ) -> Result<Self, ExecError> {
        Ok(Cx {
            m,
            spec,
            options: options.clone(),
            t: Types::new(m),
            vals: HashMap::new(),
            ncols: 0,
            mats: Vec::new(),
            img: Vec::new(),
            const_ids: HashSet::new(),
            const_mats: Vec::new(),
            var_cols: Vec::new(),
            locals: Vec::new(),
            builtins: Vec::new(),
            private_init: Vec::new(),
            descs: Vec::new(),
            glsl_set: HashSet::new(),
            printf_set: HashSet::new(),
            other_sets: HashSet::new(),
            strings: HashMap::new(),
            func_index: HashMap::new(),
            const_len: Vec::new(),
            ptr_lay: HashMap::new(),
            wg_block: None,
        })
    }

    fn alloc_cols(&mut self, n: u32) -> u32 {
        let c = self.ncols;
        self.ncols += n;
        self.img.resize(self.ncols as usize, 0);
        c
    }

    fn alloc(&mut self, ty: u32) -> Result<Val, ExecError> {
        let (nc, nm) = self.t.shape(ty)?;
        let col = self.alloc_cols(nc);
        let mat = self.mats.len() as u32;
        let mut leaves = Vec::new();
        self.t.mat_leaves(ty, &mut leaves)?;
        self.mats.extend(leaves);
        Ok(Val {
            col,
            mat,
            ncols: nc,
            nmats: nm,
        })
    }

    /// The slot-sharing class of a type: plain columns by count, or one matrix by type.
    fn pool_key(&self, ty: u32) -> Result<Option<PoolKey>, ExecError> {
        let (nc, nm) = self.t.shape(ty)?;
        Ok(match (nc, nm, self.t.coopmat(ty)) {
            (n, 0, _) if n > 0 => Some(PoolKey::Cols(n)),
            (0, 1, Some(cm)) => Some(PoolKey::Mat(cm)),
            _ => None,
        })
    }

    fn val(&self, id: u32) -> Result<Val, ExecError> {
        self.vals
            .get(&id)
            .copied()
            .ok_or_else(|| ExecError::new(format!("%{id} has no value (undefined or unsupported)")))
    }

    fn col(&self, id: u32) -> Result<u32, ExecError> {
        Ok(self.val(id)?.col)
    }

    fn ty_of(&self, id: u32) -> Result<u32, ExecError> {
        self.m
            .type_of(id)
            .ok_or_else(|| ExecError::new(format!("%{id} has no type")))
    }

    /// The value of a constant scalar as compiled so far.
    fn const_u64(&self, id: u32) -> Result<u64, ExecError> {
        if !self.const_ids.contains(&id) {
            return bad(format!("%{id} is not a constant"));
        }
        Ok(self.img[self.col(id)? as usize])
    }

    fn desc(&mut self, opcode: u16, rid: u32) -> u32 {
        let name = grammar::instruction(opcode)
            .map(|d| d.name)
            .unwrap_or("Op?");
        let s = if rid != 0 {
            let n = self
                .m
                .name(rid)
                .map(|n| format!(" ({n})"))
                .unwrap_or_default();
            format!("%{rid}{n} = {name}")
        } else {
            name.to_string()
        };
        self.descs.push(s);
        self.descs.len() as u32 - 1
    }

    fn compile(mut self, entry_name: &str) -> Result<Program, ExecError> {
        let m = self.m;
        let ep = m
            .entry_points()
            .find(|e| {
                e.word(0) == Some(grammar::execution_model::GLCompute)
                    && (entry_name.is_empty() || e.string(2).as_deref() == Some(entry_name))
            })
            .ok_or_else(|| {
                ExecError::new(format!("no GLCompute entry point named {entry_name:?}"))
            })?;
        let entry_fn = ep.word(1).unwrap_or(0);
        // LocalSize literals first (LocalSizeId / WorkgroupSize constants are read later).
        let mut local_size = [1u32, 1, 1];
        let mut local_size_id = None;
        for e in &m.instructions {
            if (e.opcode == op::ExecutionMode || e.opcode == op::ExecutionModeId)
                && e.word(0) == Some(entry_fn)
            {
                let w = |i| e.word(i).unwrap_or(1);
                match e.word(1) {
                    Some(execution_mode::LocalSize) => local_size = [w(2), w(3), w(4)],
                    Some(execution_mode::LocalSizeId) => local_size_id = Some([w(2), w(3), w(4)]),
                    _ => {}
                }
            }
        }
        self.t.sg_size = self.options.subgroup_size;
        self.t.wg_size = local_size.iter().product();
        let mut wg_builtin = None;
        // Globals in order.
        for (i, inst) in m.instructions.iter().enumerate() {
            if m.section(i) == coopmat_spirv::module::Section::Function {
                break;
            }
            self.global(inst, &mut wg_builtin)?;
        }
        if let Some(ids) = local_size_id {
            for k in 0..3 {
                local_size[k] = self.const_u64(ids[k])? as u32;
            }
        }
        if let Some(id) = wg_builtin {
            let v = self.val(id)?;
            for (k, ls) in local_size.iter_mut().enumerate() {
                *ls = self.img[(v.col + k as u32) as usize] as u32;
            }
        }
        let lanes: u32 = local_size.iter().product();
        if lanes == 0 || lanes > crate::exec::MAX_LANES as u32 {
            return bad(format!(
                "workgroup size {local_size:?} is not in 1..={} invocations",
                crate::exec::MAX_LANES
            ));
        }
        self.t.wg_size = lanes;
        // Bindings used by functions.
        let mut used = HashSet::new();
        for (i, inst) in m.instructions.iter().enumerate() {
            if m.section(i) == coopmat_spirv::module::Section::Function {
                used.extend(inst.id_refs());
            }
        }
        let mut bindings = Vec::new();
        let mut push_size = 0usize;
        for inst in &m.instructions {
            if inst.opcode != op::Variable {
                continue;
            }
            let (Some(pty), Some(id)) = (inst.result_type, inst.result_id) else {
                continue;
            };
            if !used.contains(&id) {
                continue;
            }
            let Ok(Ty::Pointer { sc, pointee }) = self.t.get(pty).cloned() else {
                continue;
            };
            match sc {
                storage_class::StorageBuffer | storage_class::Uniform => {
                    let set = m
                        .decoration_param(id, decoration::DescriptorSet)
                        .flatten()
                        .unwrap_or(0);
                    let binding = m
                        .decoration_param(id, decoration::Binding)
                        .flatten()
                        .unwrap_or(0);
                    let kind = if sc == storage_class::Uniform
                        && !m.has_decoration(pointee, decoration::BufferBlock)
                    {
                        BindingKind::Uniform
                    } else {
                        BindingKind::StorageBuffer
                    };
                    let min_size = self.t.size_align(pointee)?.0 as usize;
                    let name = m
                        .name(id)
                        .filter(|s| !s.is_empty())
                        .or_else(|| m.name(pointee));
                    bindings.push(BindingInfo {
                        set,
                        binding,
                        kind,
                        min_size,
                        name,
                    });
                }
                storage_class::PushConstant => {
                    push_size = push_size.max(self.t.size_align(pointee)?.0 as usize)
                }
                _ => {}
            }
        }
        bindings.sort_by_key(|b| (b.set, b.binding));
        bindings.dedup_by_key(|b| (b.set, b.binding));
        // Functions reachable from the entry point.
        let mut order = vec![entry_fn];
        let mut seen: HashSet<u32> = order.iter().copied().collect();
        let mut k = 0;
        while k < order.len() {
            let f = m
                .function(order[k])
                .ok_or_else(|| ExecError::new(format!("function %{} not defined", order[k])))?;
            for b in &f.blocks {
                for i in b.body.clone() {
                    let inst = &m.instructions[i];
                    if inst.opcode == op::FunctionCall
                        && let Some(callee) = inst.word(2)
                        && seen.insert(callee)
                    {
                        order.push(callee);
                    }
                }
            }
            k += 1;
        }
        // Functions the engine may call itself (call_function) are compiled too.
        for f in m.functions() {
            if !f.blocks.is_empty() && seen.insert(f.id) {
                order.push(f.id);
            }
        }
        for (i, &f) in order.iter().enumerate() {
            self.func_index.insert(f, i as u32);
        }
        // Values of every function first (calls and phis refer forward).
        let du = m.def_use();
        let mut rets = Vec::new();
        let mut params = Vec::new();
        for &fid in &order {
            let f = m.function(fid).unwrap();
            let fdef = &m.instructions[f.def];
            let rty = fdef.result_type.unwrap_or(0);
            let ret = if matches!(self.t.get(rty), Ok(Ty::Void)) {
                None
            } else {
                Some(self.alloc(rty)?)
            };
            rets.push(ret);
            let mut ps = Vec::new();
            for &pi in &f.params {
                let p = &m.instructions[pi];
                let v = self.alloc(p.result_type.unwrap_or(0))?;
                self.vals.insert(p.result_id.unwrap_or(0), v);
                ps.push(v);
            }
            params.push(ps);
            // Values used only later in their own block share slots (a per-function pool):
            // they are dead when the block ends, and a result never takes the slot of a value
            // that dies at its own instruction, so no op's result aliases its operands.
            let mut pool: HashMap<PoolKey, Vec<Val>> = HashMap::new();
            for b in &f.blocks {
                let mut dying: Vec<(usize, PoolKey, Val)> = Vec::new();
                for i in b.body.clone() {
                    let inst = &m.instructions[i];
                    if let (Some(rt), Some(rid)) = (inst.result_type, inst.result_id) {
                        if inst.opcode == op::Variable {
                            self.variable(inst)?;
                        } else if self.t.contains(rt) {
                            let uses = du.uses(rid);
                            let local = inst.opcode != op::Phi
                                && uses.iter().all(|&(u, _)| {
                                    u > i
                                        && b.body.contains(&u)
                                        && m.instructions[u].opcode != op::Phi
                                });
                            let key = self.pool_key(rt)?;
                            let v = match (local, key) {
                                (true, Some(k)) => {
                                    let v = match pool.get_mut(&k).and_then(Vec::pop) {
                                        Some(v) => v,
                                        None => self.alloc(rt)?,
                                    };
                                    let last = uses.iter().map(|u| u.0).max().unwrap_or(i);
                                    dying.push((last, k, v));
                                    v
                                }
                                _ => self.alloc(rt)?,
                            };
                            self.vals.insert(rid, v);
                        }
                    }
                    // Values whose last use is this instruction are free from the next one on.
                    dying.retain(|&(last, k, v)| {
                        if last <= i {
                            pool.entry(k).or_default().push(v);
                            false
                        } else {
                            true
                        }
                    });
                }
            }
        }
        for &fid in &order {
            self.coalesce_phis(fid, &du)?;
        }
        let mut funcs = Vec::new();
        for (fi, &fid) in order.iter().enumerate() {
            let blocks = self.function(fid)?;
            funcs.push(Func {
                id: fid,
                name: m.name(fid).unwrap_or_else(|| format!("%{fid}")),
                blocks,
                ret: rets[fi],
                params: params[fi].clone(),
            });
        }
        // Matrix slot placement.
        let inst_sg = lanes.div_ceil(self.options.subgroup_size);
        let (mut mf_len, mut mw_len) = (0usize, 0usize);
        let mut mats = Vec::new();
        for cm in &self.mats {
            let (inst, scope) = if cm.scope == grammar::scope::Workgroup {
                (1, lanes)
            } else {
                (inst_sg, self.options.subgroup_size)
            };
            let len = inst as usize * cm.elems();
            let off = if cm.is_f32_arena() {
                mf_len += len;
                mf_len - len
            } else {
                mw_len += len;
                mw_len - len
            };
            mats.push(MatSlot {
                cm: *cm,
                off,
                inst,
                scope,
            });
        }
        let const_cols = self.const_ids.iter().flat_map(|&id| {
            let v = self.vals[&id];
            (v.col..v.col + v.ncols)
                .map(|c| (c, self.img[c as usize]))
                .collect::<Vec<_>>()
        });
        let mut const_cols: Vec<(u32, u64)> = const_cols.collect();
        const_cols.extend(self.const_len.iter().copied());
        const_cols.sort_unstable();
        const_cols.dedup();
        Ok(Program {
            funcs,
            entry: 0,
            ncols: self.ncols as usize,
            mats,
            mf_len,
            mw_len,
            const_cols,
            const_mats: self.const_mats,
            var_cols: self.var_cols,
            locals: self.locals,
            builtins: self.builtins,
            private_init: self.private_init,
            descs: self.descs,
            bindings,
            push_size,
            local_size,
            sg: self.options.subgroup_size,
            lanes,
            options: self.options,
        })
    }

    fn set_const(
        &mut self,
        id: u32,
        ty: u32,
        cols: &[u64],
        mat_splat: &[u64],
    ) -> Result<(), ExecError> {
        let v = self.alloc(ty)?;
        for (k, &c) in cols.iter().enumerate().take(v.ncols as usize) {
            self.img[(v.col + k as u32) as usize] = c;
        }
        for (k, &s) in mat_splat.iter().enumerate().take(v.nmats as usize) {
            self.const_mats.push((v.mat + k as u32, s));
        }
        self.vals.insert(id, v);
        self.const_ids.insert(id);
        Ok(())
    }

    fn const_parts(&self, id: u32) -> Result<(Vec<u64>, Vec<u64>), ExecError> {
        let v = self.val(id)?;
        let cols = self.img[v.col as usize..(v.col + v.ncols) as usize].to_vec();
        let mats = (v.mat..v.mat + v.nmats)
            .map(|mi| {
                self.const_mats
                    .iter()
                    .rev()
                    .find(|(m, _)| *m == mi)
                    .map(|x| x.1)
                    .unwrap_or(0)
            })
            .collect();
        Ok((cols, mats))
    }

    fn global(
        &mut self,
        inst: &coopmat_spirv::Instruction,
        wg_builtin: &mut Option<u32>,
    ) -> Result<(), ExecError> {
        let m = self.m;
        let w = |i: usize| inst.word(i).unwrap_or(0);
        let rid = inst.result_id.unwrap_or(0);
        match inst.opcode {
            op::ExtInstImport => {
                let name = inst.string(1).unwrap_or_default();
                if name == "GLSL.std.450" {
                    self.glsl_set.insert(rid);
                } else if name.starts_with("NonSemantic.DebugPrintf") {
                    self.printf_set.insert(rid);
                } else {
                    self.other_sets.insert(rid);
                }
            }
            op::String => {
                self.strings.insert(rid, inst.string(1).unwrap_or_default());
            }
            op::TypeVoid => self.t.insert(rid, Ty::Void),
            op::TypeBool => self.t.insert(rid, Ty::Bool),
            op::TypeInt => self.t.insert(
                rid,
                Ty::Int {
                    w: w(1) as u8,
                    signed: w(2) != 0,
                },
            ),
            op::TypeFloat => {
                let n = match (w(1), inst.word(2)) {
                    (16, Some(grammar::fp_encoding::BFloat16KHR)) => Num::BF16,
                    (8, Some(grammar::fp_encoding::Float8E4M3EXT)) => Num::E4M3,
                    (8, Some(grammar::fp_encoding::Float8E5M2EXT)) => Num::E5M2,
                    (16, None) => Num::F16,
                    (32, None) => Num::F32,
                    (64, None) => Num::F64,
                    (bits, enc) => {
                        self.t.insert(rid, Ty::Other(inst.opcode));
                        let _ = (bits, enc);
                        return Ok(());
                    }
                };
                self.t.insert(rid, Ty::Float(n))
            }
            op::TypeVector => self.t.insert(
                rid,
                Ty::Vector {
                    elem: w(1),
                    n: w(2),
                },
            ),
            op::TypeMatrix => self.t.insert(rid, Ty::Matrix { col: w(1), n: w(2) }),
            op::TypeArray => {
                let len = self.const_u64(w(2))? as u32;
                self.t.insert(rid, Ty::Array { elem: w(1), len })
            }
            op::TypeRuntimeArray => self.t.insert(rid, Ty::RuntimeArray { elem: w(1) }),
            op::TypeStruct => {
                let ms = (1..inst.operands.len()).map(w).collect();
                self.t.insert(rid, Ty::Struct(ms))
            }
            op::TypePointer | op::TypeUntypedPointerKHR => self.t.insert(
                rid,
                Ty::Pointer {
                    sc: w(1),
                    pointee: inst.word(2).unwrap_or(0),
                },
            ),
            op::TypeForwardPointer => {}
            op::TypeFunction => self.t.insert(rid, Ty::Function),
            op::TypeCooperativeMatrixKHR | op::TypeCooperativeMatrixNV => {
                let comp = w(1);
                let num = self.t.num(comp)?;
                let nv = inst.opcode == op::TypeCooperativeMatrixNV;
                let cm = CmType {
                    num,
                    signed: self.t.signed(comp),
                    scope: self.const_u64(w(2))? as u32,
                    rows: self.const_u64(w(3))? as u32,
                    cols: self.const_u64(w(4))? as u32,
                    use_: if nv { 2 } else { self.const_u64(w(5))? as u32 },
                    nv,
                };
                if cm.elems() == 0 || cm.elems() > 1 << 20 {
                    return bad(format!(
                        "cooperative matrix %{rid} has unsupported size {}x{}",
                        cm.rows, cm.cols
                    ));
                }
                self.t.insert(rid, Ty::CoopMat(cm))
            }
            op::TypeTensorLayoutNV | op::TypeTensorViewNV => self.coop2_type(inst),
            o if grammar::instruction(o).is_some_and(|d| d.name.starts_with("OpType")) => {
                self.t.insert(rid, Ty::Other(o))
            }
            op::Constant | op::SpecConstant => {
                let ty = w(0);
                let words = inst.operand_words(2);
                let mut v = words.iter().rev().fold(0u64, |a, &x| (a << 32) | x as u64);
                if inst.opcode == op::SpecConstant
                    && let Some(&s) = m.spec_id(rid).and_then(|sid| self.spec.get(&sid))
                {
                    v = s;
                }
                let num = self.t.num(ty)?;
                self.set_const(rid, ty, &[floats::trunc(v, num.bits())], &[])?;
            }
            op::ConstantTrue | op::ConstantFalse | op::SpecConstantTrue | op::SpecConstantFalse => {
                let mut v = matches!(inst.opcode, op::ConstantTrue | op::SpecConstantTrue) as u64;
                if matches!(inst.opcode, op::SpecConstantTrue | op::SpecConstantFalse)
                    && let Some(&s) = m.spec_id(rid).and_then(|sid| self.spec.get(&sid))
                {
                    v = (s != 0) as u64;
                }
                self.set_const(rid, w(0), &[v], &[])?;
            }
            op::ConstantNull | op::Undef => {
                let ty = w(0);
                if !self.t.contains(ty) {
                    return Ok(());
                }
                let (nc, nm) = self.t.shape(ty)?;
                self.set_const(rid, ty, &vec![0; nc as usize], &vec![0; nm as usize])?;
            }
            op::ConstantComposite
            | op::SpecConstantComposite
            | op::ConstantCompositeReplicateEXT
            | op::SpecConstantCompositeReplicateEXT => {
                let ty = w(0);
                let (mut cols, mut mats) = (Vec::new(), Vec::new());
                if let Some(cm) = self.t.coopmat(ty) {
                    let _ = cm;
                    let (c, _) = self.const_parts(w(2))?;
                    mats.push(c.first().copied().unwrap_or(0));
                } else if matches!(
                    inst.opcode,
                    op::ConstantCompositeReplicateEXT | op::SpecConstantCompositeReplicateEXT
                ) {
                    let n = match self.t.get(ty)? {
                        Ty::Vector { n, .. } | Ty::Array { len: n, .. } | Ty::Matrix { n, .. } => {
                            *n
                        }
                        _ => 1,
                    };
                    let (c, mm) = self.const_parts(w(2))?;
                    for _ in 0..n {
                        cols.extend(&c);
                        mats.extend(&mm);
                    }
                } else {
                    for k in 2..inst.operands.len() {
                        let (c, mm) = self.const_parts(w(k))?;
                        cols.extend(c);
                        mats.extend(mm);
                    }
                }
                self.set_const(rid, ty, &cols, &mats)?;
                if m.decoration_param(rid, decoration::BuiltIn)
                    == Some(Some(built_in::WorkgroupSize))
                {
                    *wg_builtin = Some(rid);
                    let v = self.val(rid)?;
                    self.t.wg_size = (0..3)
                        .map(|k| self.img[(v.col + k) as usize] as u32)
                        .product();
                }
            }
            op::SpecConstantOp => {
                let ty = w(0);
                let opc = w(2) as u16;
                let args: Vec<u32> = inst.words[4..].to_vec();
                let v = self.alloc(ty)?;
                self.vals.insert(rid, v);
                let mut ops = Vec::new();
                self.inst(opc, ty, rid, &args, &mut ops)?;
                crate::exec::eval_const(&ops, &mut self.img)?;
                self.const_ids.insert(rid);
            }
            op::Variable => self.variable(inst)?,
            _ => {}
        }
        Ok(())
    }

    fn variable(&mut self, inst: &coopmat_spirv::Instruction) -> Result<(), ExecError> {
        let m = self.m;
        let (pty, id) = (inst.result_type.unwrap_or(0), inst.result_id.unwrap_or(0));
        let Ty::Pointer { sc, pointee } = self.t.get(pty)?.clone() else {
            return bad(format!("variable %{id} does not have a pointer type"));
        };
        let col = self.alloc_cols(1);
        self.vals.insert(
            id,
            Val {
                col,
                mat: 0,
                ncols: 1,
                nmats: 0,
            },
        );
        let addr = match sc {
            storage_class::StorageBuffer | storage_class::Uniform => {
                let set = m
                    .decoration_param(id, decoration::DescriptorSet)
                    .flatten()
                    .unwrap_or(0);
                let binding = m
                    .decoration_param(id, decoration::Binding)
                    .flatten()
                    .unwrap_or(0);
                VarAddr::Binding(set, binding)
            }
            storage_class::PushConstant => VarAddr::Push,
            storage_class::Workgroup
            | storage_class::Function
            | storage_class::Private
            | storage_class::Input
            | storage_class::Output => {
                let bytes = if matches!(self.t.get(pointee), Ok(Ty::Other(_))) {
                    0
                } else {
                    self.t.size_align(pointee)?.0 as u64
                };
                if sc == storage_class::Workgroup
                    && self.m.has_decoration(pointee, decoration::Block)
                    && let Some(li) = self.wg_block
                {
                    let l = &mut self.locals[li as usize];
                    l.bytes = l.bytes.max(bytes);
                    self.var_cols.push((col, VarAddr::Local(li)));
                    return Ok(());
                }
                let li = self.locals.len() as u32;
                self.locals.push(LocalDef {
                    bytes,
                    per_lane: sc != storage_class::Workgroup,
                });
                if sc == storage_class::Workgroup
                    && self.m.has_decoration(pointee, decoration::Block)
                {
                    self.wg_block = Some(li);
                }
                if sc == storage_class::Input {
                    self.input_builtins(id, pointee, li)?;
                }
                // Function-class initializers are stores where the OpVariable stands.
                if let (Some(init), false) = (inst.word(3), sc == storage_class::Function) {
                    let mut leaves = Vec::new();
                    self.t.mem_leaves(pointee, &mut leaves)?;
                    let store = Op::Store {
                        ptr: col,
                        v: self.val(init)?,
                        leaves: leaves.into(),
                    };
                    let d = self.desc(op::Variable, id);
                    self.private_init.push((store, d));
                }
                VarAddr::Local(li)
            }
            _ => return Ok(()),
        };
        self.var_cols.push((col, addr));
        Ok(())
    }

    fn input_builtins(&mut self, id: u32, pointee: u32, li: u32) -> Result<(), ExecError> {
        let m = self.m;
        let add = |cx: &mut Self, b: u32, off: u32, ty: u32| -> Result<(), ExecError> {
            let (num, _) = cx.t.comps(ty)?;
            cx.builtins.push(BuiltinFill {
                local: li,
                off,
                builtin: b,
                comp_bytes: num.bytes(),
            });
            Ok(())
        };
        if let Some(Some(b)) = m.decoration_param(id, decoration::BuiltIn) {
            add(self, b, 0, pointee)?;
        } else if let Ok(Ty::Struct(ms)) = self.t.get(pointee).cloned() {
            for (k, &mt) in ms.iter().enumerate() {
                if let Some(d) = m
                    .decorations(pointee)
                    .iter()
                    .find(|d| d.member == Some(k as u32) && d.decoration == decoration::BuiltIn)
                {
                    let b = m.instructions[d.inst].word(d.first_param).unwrap_or(0);
                    let (off, _) = self.t.mem_member(pointee, k as u32)?;
                    add(self, b, off, mt)?;
                }
            }
        }
        Ok(())
    }
}

/// Successors and merge targets of a block, for the structured order.
fn block_succs(m: &Module, b: &coopmat_spirv::module::Block) -> Vec<u32> {
    let mut out = Vec::new();
    let body: Vec<usize> = b.body.clone().collect();
    let term = &m.instructions[*body.last().unwrap()];
    if body.len() >= 2 {
        let mi = &m.instructions[body[body.len() - 2]];
        match mi.opcode {
            op::LoopMerge => {
                out.push(mi.word(0).unwrap_or(0));
                out.push(mi.word(1).unwrap_or(0));
            }
            op::SelectionMerge => out.push(mi.word(0).unwrap_or(0)),
            _ => {}
        }
    }
    match term.opcode {
        op::Branch => out.push(term.word(0).unwrap_or(0)),
        op::BranchConditional => {
            // Visit the false side first so that the true side comes first in the order.
            out.push(term.word(2).unwrap_or(0));
            out.push(term.word(1).unwrap_or(0));
        }
        op::Switch => {
            let mut cases: Vec<u32> = Vec::new();
            cases.push(term.word(1).unwrap_or(0));
            let mut k = 2;
            while k + 1 < term.operands.len() {
                cases.push(term.word(k + 1).unwrap_or(0));
                k += 2;
            }
            out.extend(cases.into_iter().rev());
        }
        _ => {}
    }
    out
}

impl<'m> Cx<'m> {
    /// Compiles a function's blocks in structured order: a depth-first search that visits a
    /// header's merge block (and continue target) before its body, reversed, so that every
    /// construct's blocks come before its merge block and a loop's body before its continue
    /// target. Executing the lowest pending block first then reconverges lanes at merges.
    fn function(&mut self, fid: u32) -> Result<Vec<Block>, ExecError> {
        let m = self.m;
        let f = m.function(fid).unwrap();
        let by_id: HashMap<u32, usize> = f
            .blocks
            .iter()
            .enumerate()
            .map(|(i, b)| (b.id, i))
            .collect();
        let mut post = Vec::new();
        let mut visited = vec![false; f.blocks.len()];
        let mut stack: Vec<(usize, Vec<u32>, usize)> = Vec::new();
        if !f.blocks.is_empty() {
            visited[0] = true;
            stack.push((0, block_succs(m, &f.blocks[0]), 0));
        }
        while let Some(top) = stack.last_mut() {
            if top.2 < top.1.len() {
                let s = top.1[top.2];
                top.2 += 1;
                if let Some(&si) = by_id.get(&s)
                    && !visited[si]
                {
                    visited[si] = true;
                    stack.push((si, block_succs(m, &f.blocks[si]), 0));
                }
            } else {
                post.push(top.0);
                stack.pop();
            }
        }
        let mut order: Vec<usize> = post.into_iter().rev().collect();
        for (i, v) in visited.iter().enumerate() {
            if !v {
                order.push(i);
            }
        }
        let pos: HashMap<u32, u32> = order
            .iter()
            .enumerate()
            .map(|(p, &bi)| (f.blocks[bi].id, p as u32))
            .collect();
        let mut blocks = Vec::new();
        for &bi in &order {
            let b = &f.blocks[bi];
            let mut ops = Vec::new();
            let body: Vec<usize> = b.body.clone().collect();
            let (last, rest) = body.split_last().unwrap();
            for &i in rest {
                let inst = &m.instructions[i];
                if inst.opcode == op::Phi {
                    continue;
                }
                let rid = inst.result_id.unwrap_or(0);
                let d = self.desc(inst.opcode, rid);
                let mut out = Vec::new();
                let args = &inst.words
                    [1 + inst.result_type.is_some() as usize + inst.result_id.is_some() as usize..];
                let r = if inst.opcode == op::Variable {
                    self.fn_variable(inst, &mut out)
                } else {
                    self.inst(
                        inst.opcode,
                        inst.result_type.unwrap_or(0),
                        rid,
                        args,
                        &mut out,
                    )
                };
                if let Err(e) = r {
                    out = vec![Op::Unsupported(e.what)];
                }
                ops.extend(out.into_iter().map(|o| (o, d)));
            }
            let term_inst = &m.instructions[*last];
            let d = self.desc(term_inst.opcode, 0);
            let term = self.term(f, b.id, term_inst, &pos)?;
            blocks.push(Block {
                ops,
                term: (term, d),
            });
        }
        Ok(blocks)
    }

    fn fn_variable(
        &mut self,
        inst: &coopmat_spirv::Instruction,
        out: &mut Vec<Op>,
    ) -> Result<(), ExecError> {
        if let Some(init) = inst.word(3) {
            let pty = inst.result_type.unwrap_or(0);
            let Ty::Pointer { pointee, .. } = self.t.get(pty)?.clone() else {
                return Ok(());
            };
            let mut leaves = Vec::new();
            self.t.mem_leaves(pointee, &mut leaves)?;
            out.push(Op::Store {
                ptr: self.col(inst.result_id.unwrap_or(0))?,
                v: self.val(init)?,
                leaves: leaves.into(),
            });
        }
        Ok(())
    }

    fn edge(
        &self,
        f: &coopmat_spirv::module::Function,
        from: u32,
        to: u32,
        pos: &HashMap<u32, u32>,
    ) -> Result<Edge, ExecError> {
        let m = self.m;
        let target = *pos
            .get(&to)
            .ok_or_else(|| ExecError::new(format!("branch to unknown block %{to}")))?;
        let mut phis = Vec::new();
        if let Some(b) = f.blocks.iter().find(|b| b.id == to) {
            for i in b.body.clone() {
                let inst = &m.instructions[i];
                if inst.opcode != op::Phi {
                    continue;
                }
                let dst = self.val(inst.result_id.unwrap_or(0))?;
                let mut k = 2;
                while k + 1 < inst.operands.len() {
                    if inst.word(k + 1) == Some(from) {
                        let src = inst.word(k).unwrap_or(0);
                        // A value coalesced with the phi (`coalesce_phis`) needs no copy.
                        if let Ok(v) = self.val(src)
                            && v != dst
                        {
                            phis.push((dst, v));
                        }
                    }
                    k += 2;
                }
            }
        }
        Ok(Edge { target, phis })
    }

    fn term(
        &mut self,
        f: &coopmat_spirv::module::Function,
        from: u32,
        t: &coopmat_spirv::Instruction,
        pos: &HashMap<u32, u32>,
    ) -> Result<Term, ExecError> {
        let w = |i: usize| t.word(i).unwrap_or(0);
        Ok(match t.opcode {
            op::Branch => Term::Branch(self.edge(f, from, w(0), pos)?),
            op::BranchConditional => Term::Cond {
                c: self.col(w(0))?,
                t: self.edge(f, from, w(1), pos)?,
                f: self.edge(f, from, w(2), pos)?,
            },
            op::Switch => {
                let sel = w(0);
                let (num, _) = self.t.comps(self.ty_of(sel)?)?;
                let mut cases = Vec::new();
                let mut k = 2;
                while k + 1 < t.operands.len() {
                    let lit = t
                        .operand_words(k)
                        .iter()
                        .rev()
                        .fold(0u64, |a, &x| (a << 32) | x as u64);
                    cases.push((lit, self.edge(f, from, w(k + 1), pos)?));
                    k += 2;
                }
                Term::Switch {
                    sel: self.col(sel)?,
                    bits: num.bits() as u8,
                    default: self.edge(f, from, w(1), pos)?,
                    cases,
                }
            }
            op::Return => Term::Return(None),
            op::ReturnValue => Term::Return(Some(self.val(w(0))?)),
            op::Kill | op::TerminateInvocation => Term::Kill,
            _ => Term::Unreachable,
        })
    }

    fn cm_of(&self, id: u32) -> Option<CmType> {
        self.t.coopmat(id)
    }

    /// Compiles one instruction (in a function or inside OpSpecConstantOp) into ops.
    /// `a` holds the operand words after the result type and result id.
    fn inst(
        &mut self,
        opcode: u16,
        rt: u32,
        rid: u32,
        a: &[u32],
        out: &mut Vec<Op>,
    ) -> Result<(), ExecError> {
        let arg = |i: usize| operand(a, i);
        let name = || grammar::instruction(opcode).map(|d| d.name).unwrap_or("?");
        let d = if rid != 0 {
            self.vals.get(&rid).copied().unwrap_or_default()
        } else {
            Val::default()
        };
        // Element-wise ops on cooperative matrices.
        if let Some(cm) = self.cm_of(rt) {
            let _ = cm;
            let dm = d.mat;
            let un = |o| -> Option<UnOp> {
                Some(match o {
                    op::FNegate => UnOp::FNeg,
                    op::SNegate => UnOp::SNeg,
                    _ => return None,
                })
            };
            let bin = |o| -> Option<BinOp> {
                Some(match o {
                    op::FAdd => BinOp::FAdd,
                    op::FSub => BinOp::FSub,
                    op::FMul => BinOp::FMul,
                    op::FDiv => BinOp::FDiv,
                    op::IAdd => BinOp::IAdd,
                    op::ISub => BinOp::ISub,
                    op::IMul => BinOp::IMul,
                    op::SDiv => BinOp::SDiv,
                    op::UDiv => BinOp::UDiv,
                    _ => return None,
                })
            };
            let cvt = |o| -> Option<CvtKind> {
                Some(match o {
                    op::ConvertFToU => CvtKind::FToU,
                    op::ConvertFToS => CvtKind::FToS,
                    op::ConvertSToF => CvtKind::SToF,
                    op::ConvertUToF => CvtKind::UToF,
                    op::UConvert => CvtKind::UConv,
                    op::SConvert => CvtKind::SConv,
                    op::FConvert => CvtKind::FConv,
                    op::Bitcast => CvtKind::UConv,
                    op::CooperativeMatrixConvertUseEXT => CvtKind::FConv,
                    _ => return None,
                })
            };
            if let Some(u) = un(opcode) {
                out.push(Op::CmUn {
                    op: u,
                    d: dm,
                    a: self.val(arg(0)?)?.mat,
                });
                return Ok(());
            }
            if let Some(b) = bin(opcode) {
                out.push(Op::CmBin {
                    op: b,
                    d: dm,
                    a: self.val(arg(0)?)?.mat,
                    b: self.val(arg(1)?)?.mat,
                });
                return Ok(());
            }
            if opcode == op::CooperativeMatrixConvertUseEXT
                && self
                    .m
                    .decoration_param(rid, decoration::CooperativeMatrixTransposeEXT)
                    .is_some()
            {
                return self.coop2_inst(opcode, rt, d, a, out);
            }
            if let Some(k) = cvt(opcode) {
                let src = self.val(arg(0)?)?;
                let k = if opcode == op::CooperativeMatrixConvertUseEXT || (opcode == op::Bitcast) {
                    // Same component kind or same-width integers: a plain element copy.
                    let scm = self.mats[src.mat as usize];
                    if scm.num.is_float() {
                        CvtKind::FConv
                    } else {
                        CvtKind::UConv
                    }
                } else {
                    k
                };
                out.push(Op::CmCvt {
                    kind: k,
                    d: dm,
                    a: src.mat,
                });
                return Ok(());
            }
            match opcode {
                op::MatrixTimesScalar => {
                    out.push(Op::CmScale {
                        d: dm,
                        a: self.val(arg(0)?)?.mat,
                        s: self.col(arg(1)?)?,
                    });
                    return Ok(());
                }
                op::CompositeConstruct | op::CompositeConstructReplicateEXT => {
                    out.push(Op::CmSplat {
                        d: dm,
                        v: self.col(arg(0)?)?,
                    });
                    return Ok(());
                }
                _ => {}
            }
        }
        let comps = |cx: &Self, id: u32| cx.t.comps(cx.ty_of(id)?);
        // Plain per-component unary and binary ops.
        let bin_op = match opcode {
            op::IAdd => Some(BinOp::IAdd),
            op::ISub => Some(BinOp::ISub),
            op::IMul => Some(BinOp::IMul),
            op::UDiv => Some(BinOp::UDiv),
            op::SDiv => Some(BinOp::SDiv),
            op::UMod => Some(BinOp::UMod),
            op::SRem => Some(BinOp::SRem),
            op::SMod => Some(BinOp::SMod),
            op::FAdd => Some(BinOp::FAdd),
            op::FSub => Some(BinOp::FSub),
            op::FMul => Some(BinOp::FMul),
            op::FDiv => Some(BinOp::FDiv),
            op::FRem => Some(BinOp::FRem),
            op::FMod => Some(BinOp::FMod),
            op::ShiftLeftLogical => Some(BinOp::Shl),
            op::ShiftRightLogical => Some(BinOp::ShrL),
            op::ShiftRightArithmetic => Some(BinOp::ShrA),
            op::BitwiseAnd => Some(BinOp::And),
            op::BitwiseOr => Some(BinOp::Or),
            op::BitwiseXor => Some(BinOp::Xor),
            op::IEqual => Some(BinOp::IEq),
            op::INotEqual => Some(BinOp::INe),
            op::UGreaterThan => Some(BinOp::UGt),
            op::UGreaterThanEqual => Some(BinOp::UGe),
            op::ULessThan => Some(BinOp::ULt),
            op::ULessThanEqual => Some(BinOp::ULe),
            op::SGreaterThan => Some(BinOp::SGt),
            op::SGreaterThanEqual => Some(BinOp::SGe),
            op::SLessThan => Some(BinOp::SLt),
            op::SLessThanEqual => Some(BinOp::SLe),
            op::FOrdEqual => Some(BinOp::FOEq),
            op::FUnordEqual => Some(BinOp::FUEq),
            op::FOrdNotEqual => Some(BinOp::FONe),
            op::FUnordNotEqual => Some(BinOp::FUNe),
            op::FOrdLessThan => Some(BinOp::FOLt),
            op::FUnordLessThan => Some(BinOp::FULt),
            op::FOrdGreaterThan => Some(BinOp::FOGt),
            op::FUnordGreaterThan => Some(BinOp::FUGt),
            op::FOrdLessThanEqual => Some(BinOp::FOLe),
            op::FUnordLessThanEqual => Some(BinOp::FULe),
            op::FOrdGreaterThanEqual => Some(BinOp::FOGe),
            op::FUnordGreaterThanEqual => Some(BinOp::FUGe),
            op::Ordered => Some(BinOp::Ordered),
            op::Unordered => Some(BinOp::Unordered),
            op::LogicalEqual => Some(BinOp::LEq),
            op::LogicalNotEqual => Some(BinOp::LNe),
            op::LogicalAnd => Some(BinOp::LAnd),
            op::LogicalOr => Some(BinOp::LOr),
            op::PtrEqual => Some(BinOp::IEq),
            op::PtrNotEqual => Some(BinOp::INe),
            _ => None,
        };
        if let Some(b) = bin_op {
            let (num, n) = comps(self, arg(0)?)?;
            // Unsigned division or remainder by a constant power of two: a shift or a mask.
            if matches!(b, BinOp::UDiv | BinOp::UMod)
                && n == 1
                && !num.is_float()
                && let Ok(v) = self.const_u64(arg(1)?)
                && v.is_power_of_two()
            {
                let (op2, k) = if b == BinOp::UDiv {
                    (BinOp::ShrL, v.trailing_zeros() as u64)
                } else {
                    (BinOp::And, v - 1)
                };
                let kc = self.alloc_cols(1);
                self.img[kc as usize] = k;
                self.const_len.push((kc, k));
                out.push(Op::Bin {
                    op: op2,
                    num,
                    d: d.col,
                    a: self.col(arg(0)?)?,
                    b: kc,
                    n,
                    bs: false,
                });
                return Ok(());
            }
            let num = if matches!(opcode, op::PtrEqual | op::PtrNotEqual) {
                Num::Int(64)
            } else {
                num
            };
            out.push(Op::Bin {
                op: b,
                num,
                d: d.col,
                a: self.col(arg(0)?)?,
                b: self.col(arg(1)?)?,
                n,
                bs: false,
            });
            return Ok(());
        }
        let un_op = match opcode {
            op::FNegate => Some(UnOp::FNeg),
            op::SNegate => Some(UnOp::SNeg),
            op::Not => Some(UnOp::Not),
            op::LogicalNot => Some(UnOp::LNot),
            op::IsNan => Some(UnOp::IsNan),
            op::IsInf => Some(UnOp::IsInf),
            op::BitCount => Some(UnOp::BitCount),
            op::BitReverse => Some(UnOp::BitReverse),
            _ => None,
        };
        if let Some(u) = un_op {
            let (num, n) = comps(self, arg(0)?)?;
            out.push(Op::Un {
                op: u,
                num,
                d: d.col,
                a: self.col(arg(0)?)?,
                n,
            });
            return Ok(());
        }
        let cvt = match opcode {
            op::ConvertFToU => Some(CvtKind::FToU),
            op::ConvertFToS => Some(CvtKind::FToS),
            op::ConvertSToF => Some(CvtKind::SToF),
            op::ConvertUToF => Some(CvtKind::UToF),
            op::UConvert => Some(CvtKind::UConv),
            op::SConvert => Some(CvtKind::SConv),
            op::FConvert => Some(CvtKind::FConv),
            _ => None,
        };
        if let Some(k) = cvt {
            let (from, n) = comps(self, arg(0)?)?;
            let (to, _) = self.t.comps(rt)?;
            let k = if k == CvtKind::FConv
                && self
                    .m
                    .has_decoration(rid, decoration::SaturatedToLargestFloat8NormalConversionEXT)
            {
                CvtKind::FConvSat
            } else {
                k
            };
            out.push(Op::Cvt {
                kind: k,
                from,
                to,
                d: d.col,
                a: self.col(arg(0)?)?,
                n,
            });
            return Ok(());
        }
        match opcode {
            op::Nop
            | op::Line
            | op::NoLine
            | op::LoopMerge
            | op::SelectionMerge
            | op::MemoryBarrier
            | op::Undef
            | op::Phi
            | op::Label => {}
            op::CopyObject | op::CopyLogical => out.push(Op::Copy {
                d,
                a: self.val(arg(0)?)?,
            }),
            op::Load => {
                let mut leaves = Vec::new();
                self.leaves_through(arg(0)?, rt, &mut leaves)?;
                out.push(Op::Load {
                    d,
                    ptr: self.col(arg(0)?)?,
                    leaves: leaves.into(),
                });
            }
            op::Store => {
                let v = self.val(arg(1)?)?;
                let ty = self.ty_of(arg(1)?)?;
                let mut leaves = Vec::new();
                self.leaves_through(arg(0)?, ty, &mut leaves)?;
                out.push(Op::Store {
                    ptr: self.col(arg(0)?)?,
                    v,
                    leaves: leaves.into(),
                });
            }
            op::CopyMemory | op::CopyMemorySized => {
                let pty = self.ty_of(arg(1)?)?;
                let bytes = if opcode == op::CopyMemorySized {
                    self.const_u64(arg(2)?)? as u32
                } else {
                    match self.t.get(pty)? {
                        Ty::Pointer { pointee, .. } => self.t.size_align(*pointee)?.0,
                        _ => 0,
                    }
                };
                out.push(Op::CopyMem {
                    dst: self.col(arg(0)?)?,
                    src: self.col(arg(1)?)?,
                    bytes,
                });
            }
            op::AccessChain
            | op::InBoundsAccessChain
            | op::PtrAccessChain
            | op::InBoundsPtrAccessChain => {
                let base = arg(0)?;
                let bty = self.ty_of(base)?;
                let Ty::Pointer { pointee, .. } = self.t.get(bty)?.clone() else {
                    return bad("access chain base is not a pointer");
                };
                let mut steps: Vec<Step> = Vec::new();
                let mut cur = pointee;
                let mut idx = &a[1..];
                let mut lay = self.ptr_lay.get(&base).copied();
                let push_step = |cx: &Self,
                                 steps: &mut Vec<Step>,
                                 id: u32,
                                 stride: i64|
                 -> Result<(), ExecError> {
                    if cx.const_ids.contains(&id) {
                        let (num, _) = cx.t.comps(cx.ty_of(id)?)?;
                        let v = floats::sext(cx.const_u64(id)?, num.bits());
                        steps.push(Step::Const(v * stride));
                    } else {
                        let (num, _) = cx.t.comps(cx.ty_of(id)?)?;
                        steps.push(Step::Dyn {
                            idx: cx.col(id)?,
                            bits: num.bits() as u8,
                            stride,
                        });
                    }
                    Ok(())
                };
                if matches!(opcode, op::PtrAccessChain | op::InBoundsPtrAccessChain) {
                    let stride = match self.m.decoration_param(bty, decoration::ArrayStride) {
                        Some(Some(s)) => s as i64,
                        _ => {
                            let (s, al) = self.t.size_align(pointee)?;
                            s.next_multiple_of(al.max(1)) as i64
                        }
                    };
                    push_step(self, &mut steps, idx[0], stride)?;
                    idx = &idx[1..];
                }
                for &i in idx {
                    match self.t.get(cur)?.clone() {
                        Ty::Struct(_) => {
                            let k = self.const_u64(i)? as u32;
                            let (off, mt) = self.t.mem_member(cur, k)?;
                            steps.push(Step::Const(off as i64));
                            lay = self
                                .t
                                .member_matrix_layout(cur, k)
                                .map(|(stride, row_major)| ext::PtrLay::Mat { stride, row_major });
                            cur = mt;
                        }
                        Ty::Array { elem, .. } | Ty::RuntimeArray { elem } => {
                            let s = self.t.stride(cur)? as i64;
                            push_step(self, &mut steps, i, s)?;
                            cur = elem;
                        }
                        Ty::Vector { elem, .. } => {
                            let s = match lay.take() {
                                Some(ext::PtrLay::Col { elem_stride }) => elem_stride as i64,
                                _ => self.t.size_align(elem)?.0 as i64,
                            };
                            push_step(self, &mut steps, i, s)?;
                            cur = elem;
                        }
                        Ty::Matrix { col, .. } => {
                            let (s, al) = self.t.size_align(col)?;
                            // A column of a member with MatrixStride: column-major columns
                            // are `stride` apart; row-major ones are one component apart,
                            // their components `stride` apart.
                            let (s, next) = match lay.take() {
                                Some(ext::PtrLay::Mat {
                                    stride,
                                    row_major: false,
                                }) => (stride as i64, None),
                                Some(ext::PtrLay::Mat {
                                    stride,
                                    row_major: true,
                                }) => (
                                    self.t.comps(col)?.0.bytes() as i64,
                                    Some(ext::PtrLay::Col {
                                        elem_stride: stride,
                                    }),
                                ),
                                _ => (s.next_multiple_of(al) as i64, None),
                            };
                            push_step(self, &mut steps, i, s)?;
                            lay = next;
                            cur = col;
                        }
                        Ty::CoopMat(cm) => {
                            push_step(self, &mut steps, i, cm.num.bytes() as i64)?;
                            cur = 0;
                        }
                        t => return bad(format!("cannot index into {t:?}")),
                    }
                }
                // Merge constant steps.
                let mut merged: Vec<Step> = Vec::new();
                for s in steps {
                    match (merged.last_mut(), s) {
                        (Some(Step::Const(x)), Step::Const(y)) => *x += y,
                        (_, s) => merged.push(s),
                    }
                }
                if let Some(l) = lay {
                    self.ptr_lay.insert(rid, l);
                }
                out.push(Op::AccessChain {
                    d: d.col,
                    base: self.col(base)?,
                    steps: merged.into(),
                });
            }
            op::CompositeExtract => {
                let src = self.val(arg(0)?)?;
                let mut cur = self.ty_of(arg(0)?)?;
                let (mut c, mut mm) = (src.col, src.mat);
                for &i in &a[1..] {
                    if self.t.coopmat(cur).is_some() {
                        out.push(Op::CmExtract {
                            d: d.col,
                            m: mm,
                            idx: i,
                        });
                        return Ok(());
                    }
                    let (co, mo, t) = self.t.member(cur, i)?;
                    c += co;
                    mm += mo;
                    cur = t;
                }
                let (nc, nm) = self.t.shape(cur)?;
                out.push(Op::Copy {
                    d,
                    a: Val {
                        col: c,
                        mat: mm,
                        ncols: nc,
                        nmats: nm,
                    },
                });
            }
            op::CompositeInsert => {
                let obj = self.val(arg(0)?)?;
                let src = self.val(arg(1)?)?;
                out.push(Op::Copy { d, a: src });
                let mut cur = self.ty_of(arg(1)?)?;
                let (mut c, mut mm) = (d.col, d.mat);
                for &i in &a[2..] {
                    if self.t.coopmat(cur).is_some() {
                        out.push(Op::CmInsert {
                            d: mm,
                            m: mm,
                            v: obj.col,
                            idx: i,
                        });
                        return Ok(());
                    }
                    let (co, mo, t) = self.t.member(cur, i)?;
                    c += co;
                    mm += mo;
                    cur = t;
                }
                out.push(Op::Copy {
                    d: Val {
                        col: c,
                        mat: mm,
                        ..obj
                    },
                    a: obj,
                });
            }
            op::CompositeConstruct | op::CompositeConstructReplicateEXT => {
                let (mut c, mut mm) = (d.col, d.mat);
                let parts: Vec<u32> = if opcode == op::CompositeConstructReplicateEXT {
                    let n = match self.t.get(rt)? {
                        Ty::Vector { n, .. } | Ty::Array { len: n, .. } | Ty::Matrix { n, .. } => {
                            *n
                        }
                        _ => 1,
                    };
                    vec![arg(0)?; n as usize]
                } else {
                    a.to_vec()
                };
                for p in parts {
                    let v = self.val(p)?;
                    out.push(Op::Copy {
                        d: Val {
                            col: c,
                            mat: mm,
                            ..v
                        },
                        a: v,
                    });
                    c += v.ncols;
                    mm += v.nmats;
                }
            }
            op::VectorShuffle => {
                let va = self.val(arg(0)?)?;
                let vb = self.val(arg(1)?)?;
                for (k, &s) in a[2..].iter().enumerate() {
                    if s == u32::MAX {
                        continue;
                    }
                    let src = if s < va.ncols {
                        va.col + s
                    } else {
                        vb.col + s - va.ncols
                    };
                    out.push(Op::Copy {
                        d: Val {
                            col: d.col + k as u32,
                            mat: 0,
                            ncols: 1,
                            nmats: 0,
                        },
                        a: Val {
                            col: src,
                            mat: 0,
                            ncols: 1,
                            nmats: 0,
                        },
                    });
                }
            }
            op::VectorExtractDynamic => {
                let v = self.val(arg(0)?)?;
                let (num, _) = comps(self, arg(1)?)?;
                out.push(Op::ExtractDyn {
                    d: d.col,
                    a: v.col,
                    idx: self.col(arg(1)?)?,
                    n: v.ncols,
                    w: num.bits(),
                });
            }
            op::VectorInsertDynamic => {
                let v = self.val(arg(0)?)?;
                let (num, _) = comps(self, arg(2)?)?;
                out.push(Op::InsertDyn {
                    d: d.col,
                    a: v.col,
                    v: self.col(arg(1)?)?,
                    idx: self.col(arg(2)?)?,
                    n: v.ncols,
                    w: num.bits(),
                });
            }
            op::Select => {
                let c = arg(0)?;
                let (_, cn) = comps(self, c)?;
                let va = self.val(arg(1)?)?;
                let vb = self.val(arg(2)?)?;
                out.push(Op::Select {
                    d: d.col,
                    c: self.col(c)?,
                    a: va.col,
                    b: vb.col,
                    n: d.ncols,
                    cs: cn == 1 && d.ncols > 1,
                    nmats: d.nmats,
                    dm: d.mat,
                    am: va.mat,
                    bm: vb.mat,
                });
            }
            op::Bitcast | op::ConvertUToPtr | op::ConvertPtrToU => {
                let src = arg(0)?;
                let sty = self.ty_of(src)?;
                let s_ptr = matches!(self.t.get(sty)?, Ty::Pointer { .. });
                let d_ptr = matches!(self.t.get(rt)?, Ty::Pointer { .. });
                let (from, na) = if s_ptr {
                    (Num::Int(64), 1)
                } else {
                    self.t.comps(sty)?
                };
                let (to, nd) = if d_ptr {
                    (Num::Int(64), 1)
                } else {
                    self.t.comps(rt)?
                };
                if from.bits() * na == to.bits() * nd && !(s_ptr || d_ptr)
                    || (from == to && na == nd)
                {
                    out.push(Op::Bitcast {
                        d: d.col,
                        a: self.col(src)?,
                        from,
                        na,
                        to,
                        nd,
                    });
                } else if s_ptr || d_ptr {
                    // Pointer <-> integer or uvec2: an address is 64 bits.
                    if nd == 2 && to.bits() == 32 {
                        out.push(Op::Bitcast {
                            d: d.col,
                            a: self.col(src)?,
                            from: Num::Int(64),
                            na: 1,
                            to,
                            nd,
                        });
                    } else if na == 2 && from.bits() == 32 {
                        out.push(Op::Bitcast {
                            d: d.col,
                            a: self.col(src)?,
                            from,
                            na,
                            to: Num::Int(64),
                            nd: 1,
                        });
                    } else {
                        out.push(Op::Trunc {
                            d: d.col,
                            a: self.col(src)?,
                            bits: to.bits().min(from.bits()) as u8,
                        });
                    }
                } else {
                    return bad("OpBitcast between types of different sizes");
                }
            }
            op::QuantizeToF16 => {
                let (num, n) = comps(self, arg(0)?)?;
                out.push(Op::Cvt {
                    kind: CvtKind::FConv,
                    from: num,
                    to: Num::F16,
                    d: d.col,
                    a: self.col(arg(0)?)?,
                    n,
                });
                out.push(Op::Cvt {
                    kind: CvtKind::FConv,
                    from: Num::F16,
                    to: num,
                    d: d.col,
                    a: d.col,
                    n,
                });
            }
            op::Any | op::All => {
                let v = self.val(arg(0)?)?;
                let b = if opcode == op::Any {
                    BinOp::LOr
                } else {
                    BinOp::LAnd
                };
                out.push(Op::Copy {
                    d,
                    a: Val { ncols: 1, ..v },
                });
                for k in 1..v.ncols {
                    out.push(Op::Bin {
                        op: b,
                        num: Num::Bool,
                        d: d.col,
                        a: d.col,
                        b: v.col + k,
                        n: 1,
                        bs: false,
                    });
                }
            }
            op::VectorTimesScalar | op::MatrixTimesScalar => {
                let (num, _) = comps(self, arg(1)?)?;
                out.push(Op::Bin {
                    op: BinOp::FMul,
                    num,
                    d: d.col,
                    a: self.col(arg(0)?)?,
                    b: self.col(arg(1)?)?,
                    n: d.ncols,
                    bs: true,
                });
            }
            op::Dot => {
                let (num, n) = comps(self, arg(0)?)?;
                self.dot(
                    num,
                    d.col,
                    self.col(arg(0)?)?,
                    1,
                    self.col(arg(1)?)?,
                    1,
                    n,
                    out,
                );
            }
            op::MatrixTimesVector => {
                // M: C columns of R rows; v: C components.
                let mt = self.ty_of(arg(0)?)?;
                let Ty::Matrix { col, n: ncol } = self.t.get(mt)?.clone() else {
                    return bad("not a matrix");
                };
                let (num, rows) = self.t.comps(col)?;
                let (mc, vc) = (self.col(arg(0)?)?, self.col(arg(1)?)?);
                for r in 0..rows {
                    self.dot(num, d.col + r, mc + r, rows, vc, 1, ncol, out);
                }
            }
            op::VectorTimesMatrix => {
                let mt = self.ty_of(arg(1)?)?;
                let Ty::Matrix { col, n: ncol } = self.t.get(mt)?.clone() else {
                    return bad("not a matrix");
                };
                let (num, rows) = self.t.comps(col)?;
                let (vc, mc) = (self.col(arg(0)?)?, self.col(arg(1)?)?);
                for c in 0..ncol {
                    self.dot(num, d.col + c, vc, 1, mc + c * rows, 1, rows, out);
                }
            }
            op::MatrixTimesMatrix => {
                let at = self.ty_of(arg(0)?)?;
                let bt = self.ty_of(arg(1)?)?;
                let Ty::Matrix { col, n: k } = self.t.get(at)?.clone() else {
                    return bad("not a matrix");
                };
                let Ty::Matrix { n: nc, .. } = self.t.get(bt)?.clone() else {
                    return bad("not a matrix");
                };
                let (num, rows) = self.t.comps(col)?;
                let (ac, bc) = (self.col(arg(0)?)?, self.col(arg(1)?)?);
                for j in 0..nc {
                    for r in 0..rows {
                        self.dot(
                            num,
                            d.col + j * rows + r,
                            ac + r,
                            rows,
                            bc + j * k,
                            1,
                            k,
                            out,
                        );
                    }
                }
            }
            op::OuterProduct => {
                let va = self.val(arg(0)?)?;
                let vb = self.val(arg(1)?)?;
                let (num, _) = comps(self, arg(0)?)?;
                for j in 0..vb.ncols {
                    out.push(Op::Bin {
                        op: BinOp::FMul,
                        num,
                        d: d.col + j * va.ncols,
                        a: va.col,
                        b: vb.col + j,
                        n: va.ncols,
                        bs: true,
                    });
                }
            }
            op::Transpose => {
                let st = self.ty_of(arg(0)?)?;
                let Ty::Matrix { col, n: ncol } = self.t.get(st)?.clone() else {
                    return bad("not a matrix");
                };
                let (_, rows) = self.t.comps(col)?;
                let s = self.col(arg(0)?)?;
                for c in 0..ncol {
                    for r in 0..rows {
                        out.push(Op::Copy {
                            d: Val {
                                col: d.col + r * ncol + c,
                                mat: 0,
                                ncols: 1,
                                nmats: 0,
                            },
                            a: Val {
                                col: s + c * rows + r,
                                mat: 0,
                                ncols: 1,
                                nmats: 0,
                            },
                        });
                    }
                }
            }
            op::IAddCarry | op::ISubBorrow | op::UMulExtended | op::SMulExtended => {
                let (num, n) = comps(self, arg(0)?)?;
                let (x, y) = (self.col(arg(0)?)?, self.col(arg(1)?)?);
                let (lo, hi) = match opcode {
                    op::IAddCarry => (BinOp::IAdd, BinOp::AddCarry),
                    op::ISubBorrow => (BinOp::ISub, BinOp::SubBorrow),
                    op::UMulExtended => (BinOp::IMul, BinOp::UMulHi),
                    _ => (BinOp::IMul, BinOp::SMulHi),
                };
                out.push(Op::Bin {
                    op: lo,
                    num,
                    d: d.col,
                    a: x,
                    b: y,
                    n,
                    bs: false,
                });
                out.push(Op::Bin {
                    op: hi,
                    num,
                    d: d.col + n,
                    a: x,
                    b: y,
                    n,
                    bs: false,
                });
            }
            op::BitFieldInsert => {
                let (num, n) = comps(self, arg(0)?)?;
                out.push(Op::BfInsert {
                    d: d.col,
                    base: self.col(arg(0)?)?,
                    ins: self.col(arg(1)?)?,
                    off: self.col(arg(2)?)?,
                    cnt: self.col(arg(3)?)?,
                    n,
                    bits: num.bits() as u8,
                });
            }
            op::BitFieldSExtract | op::BitFieldUExtract => {
                let (num, n) = comps(self, arg(0)?)?;
                let k = if opcode == op::BitFieldSExtract {
                    TernOp::SExtract
                } else {
                    TernOp::UExtract
                };
                out.push(Op::Tern {
                    op: k,
                    num,
                    d: d.col,
                    a: self.col(arg(0)?)?,
                    b: self.col(arg(1)?)?,
                    c: self.col(arg(2)?)?,
                    n,
                    bs: true,
                    cs: true,
                });
            }
            op::ExtInst => self.ext_inst(rt, d, a, out)?,
            op::ArrayLength => {
                let pty = self.ty_of(arg(0)?)?;
                let Ty::Pointer { pointee, .. } = self.t.get(pty)?.clone() else {
                    return bad("OpArrayLength of a non-pointer");
                };
                let (off, mt) = self.t.mem_member(pointee, arg(1)?)?;
                out.push(Op::ArrayLength {
                    d: d.col,
                    ptr: self.col(arg(0)?)?,
                    off,
                    stride: self.t.stride(mt)?,
                });
            }
            op::FunctionCall => {
                let callee = arg(0)?;
                let fi = *self
                    .func_index
                    .get(&callee)
                    .ok_or_else(|| ExecError::new("call to unknown function"))?;
                let f = self.m.function(callee).unwrap();
                let mut args = Vec::new();
                for (k, &pi) in f.params.iter().enumerate() {
                    let pid = self.m.instructions[pi].result_id.unwrap_or(0);
                    args.push((self.val(pid)?, self.val(arg(k + 1)?)?));
                }
                let ret = if d.ncols + d.nmats > 0 {
                    let fdef = &self.m.instructions[f.def];
                    let rty = fdef.result_type.unwrap_or(0);
                    let _ = rty;
                    Some((d, Val::default()))
                } else {
                    None
                };
                out.push(Op::Call {
                    f: fi,
                    args: args.into(),
                    ret,
                });
            }
            op::ControlBarrier => out.push(Op::Barrier),
            op::AtomicLoad
            | op::AtomicStore
            | op::AtomicExchange
            | op::AtomicCompareExchange
            | op::AtomicCompareExchangeWeak
            | op::AtomicIIncrement
            | op::AtomicIDecrement
            | op::AtomicIAdd
            | op::AtomicISub
            | op::AtomicSMin
            | op::AtomicUMin
            | op::AtomicSMax
            | op::AtomicUMax
            | op::AtomicAnd
            | op::AtomicOr
            | op::AtomicXor
            | op::AtomicFAddEXT
            | op::AtomicFMinEXT
            | op::AtomicFMaxEXT => {
                let kind = match opcode {
                    op::AtomicLoad => AtomicOp::Load,
                    op::AtomicStore => AtomicOp::Store,
                    op::AtomicExchange => AtomicOp::Exchange,
                    op::AtomicCompareExchange | op::AtomicCompareExchangeWeak => AtomicOp::CmpXchg,
                    op::AtomicIIncrement => AtomicOp::IInc,
                    op::AtomicIDecrement => AtomicOp::IDec,
                    op::AtomicIAdd => AtomicOp::IAdd,
                    op::AtomicISub => AtomicOp::ISub,
                    op::AtomicSMin => AtomicOp::SMin,
                    op::AtomicUMin => AtomicOp::UMin,
                    op::AtomicSMax => AtomicOp::SMax,
                    op::AtomicUMax => AtomicOp::UMax,
                    op::AtomicAnd => AtomicOp::And,
                    op::AtomicOr => AtomicOp::Or,
                    op::AtomicXor => AtomicOp::Xor,
                    op::AtomicFAddEXT => AtomicOp::FAdd,
                    op::AtomicFMinEXT => AtomicOp::FMin,
                    _ => AtomicOp::FMax,
                };
                let ptr = arg(0)?;
                let pty = self.ty_of(ptr)?;
                let Ty::Pointer { pointee, .. } = self.t.get(pty)?.clone() else {
                    return bad("atomic on non-pointer");
                };
                let num = self.t.num(pointee)?;
                let (v, cmp) = match kind {
                    AtomicOp::Store => (self.col(arg(3)?)?, 0),
                    AtomicOp::Load | AtomicOp::IInc | AtomicOp::IDec => (0, 0),
                    AtomicOp::CmpXchg => (self.col(arg(4)?)?, self.col(arg(5)?)?),
                    _ => (self.col(arg(3)?)?, 0),
                };
                out.push(Op::Atomic {
                    op: kind,
                    num,
                    d: d.col,
                    ptr: self.col(ptr)?,
                    v,
                    cmp,
                });
            }
            o if ext::group_as_non_uniform(o).is_some() => {
                let nu = ext::group_as_non_uniform(o).unwrap_or(o);
                self.subgroup(nu, rt, d, a, out)?;
            }
            o if (op::GroupNonUniformElect..=op::GroupNonUniformQuadSwap).contains(&o)
                || o == op::GroupNonUniformRotateKHR =>
            {
                self.subgroup(o, rt, d, a, out)?;
            }
            op::CooperativeMatrixLoadKHR | op::CooperativeMatrixLoadNV => {
                let (ptr, stride, col_major, pbytes) =
                    self.cm_access(opcode == op::CooperativeMatrixLoadKHR, a, 1)?;
                out.push(Op::CmLoad {
                    d: d.mat,
                    ptr,
                    stride,
                    col_major,
                    pbytes,
                });
            }
            op::CooperativeMatrixStoreKHR | op::CooperativeMatrixStoreNV => {
                let obj = self.val(arg(1)?)?;
                let (ptr, stride, col_major, pbytes) =
                    self.cm_access(opcode == op::CooperativeMatrixStoreKHR, a, 2)?;
                out.push(Op::CmStore {
                    ptr,
                    m: obj.mat,
                    stride,
                    col_major,
                    pbytes,
                });
            }
            op::CooperativeMatrixMulAddKHR | op::CooperativeMatrixMulAddNV => {
                let (va, vb, vc) = (self.val(arg(0)?)?, self.val(arg(1)?)?, self.val(arg(2)?)?);
                let mut flags = if opcode == op::CooperativeMatrixMulAddKHR {
                    a.get(3).copied().unwrap_or(0)
                } else {
                    0
                };
                if opcode == op::CooperativeMatrixMulAddNV {
                    // NV: signedness from the component types (SPV_NV_cooperative_matrix).
                    let s = |cx: &Self, m: u32| cx.mats[m as usize].signed;
                    use grammar::cooperative_matrix_operands as f;
                    if s(self, va.mat) {
                        flags |= f::MatrixASignedComponentsKHR
                    }
                    if s(self, vb.mat) {
                        flags |= f::MatrixBSignedComponentsKHR
                    }
                    if s(self, vc.mat) {
                        flags |= f::MatrixCSignedComponentsKHR
                    }
                    if s(self, d.mat) {
                        flags |= f::MatrixResultSignedComponentsKHR
                    }
                }
                let (ma, mb, mc, md) = (
                    self.mats[va.mat as usize],
                    self.mats[vb.mat as usize],
                    self.mats[vc.mat as usize],
                    self.mats[d.mat as usize],
                );
                if ma.rows != md.rows
                    || mb.cols != md.cols
                    || ma.cols != mb.rows
                    || mc.rows != md.rows
                    || mc.cols != md.cols
                {
                    return bad(format!(
                        "MulAdd shapes do not match: A {}x{}, B {}x{}, C {}x{}, result {}x{}",
                        ma.rows, ma.cols, mb.rows, mb.cols, mc.rows, mc.cols, md.rows, md.cols
                    ));
                }
                out.push(Op::CmMulAdd {
                    d: d.mat,
                    a: va.mat,
                    b: vb.mat,
                    c: vc.mat,
                    flags,
                });
            }
            op::CooperativeMatrixLengthKHR | op::CooperativeMatrixLengthNV => {
                let cm = self
                    .t
                    .coopmat(arg(0)?)
                    .ok_or_else(|| ExecError::new("Length of a non-matrix type"))?;
                let len = self.t.mat_length(&cm) as u64;
                let c = self.alloc_cols(1);
                self.img[c as usize] = len;
                // The length is a constant: copy it from a constant column.
                self.const_len.push((c, len));
                out.push(Op::Copy {
                    d,
                    a: Val {
                        col: c,
                        mat: 0,
                        ncols: 1,
                        nmats: 0,
                    },
                });
            }
            o if coop2::handles(o) => self.coop2_inst(o, rt, d, a, out)?,
            _ => return bad(format!("{} is not supported by the engine", name())),
        }
        Ok(())
    }

    /// Pointer column, stride column (`u32::MAX` when absent), column-major flag and pointee size
    /// of a KHR or NV cooperative-matrix load (layout operands from `a[1]`) or store (from `a[2]`).
    fn cm_access(
        &self,
        khr: bool,
        a: &[u32],
        first: usize,
    ) -> Result<(u32, u32, bool, u32), ExecError> {
        let arg = |i: usize| operand(a, i);
        let ptr = arg(0)?;
        let (stride, col_major) = if khr {
            let layout = self.const_u64(arg(first)?)? as u32;
            (a.get(first + 1).copied(), self.layout(layout)?)
        } else {
            (Some(arg(first)?), self.const_u64(arg(first + 1)?)? != 0)
        };
        let pbytes = self.pointee_bytes(ptr)?;
        let stride = match stride {
            Some(s) => self.col(s)?,
            None => u32::MAX,
        };
        Ok((self.col(ptr)?, stride, col_major, pbytes))
    }

    fn layout(&self, layout: u32) -> Result<bool, ExecError> {
        use grammar::cooperative_matrix_layout as l;
        match layout {
            l::RowMajorKHR => Ok(false),
            l::ColumnMajorKHR => Ok(true),
            l::RowBlockedInterleavedARM | l::ColumnBlockedInterleavedARM => {
                bad("unsupported: SPV_ARM_cooperative_matrix_layouts blocked interleaved layouts")
            }
            x => bad(format!("unknown cooperative matrix layout {x}")),
        }
    }

    fn pointee_bytes(&self, ptr: u32) -> Result<u32, ExecError> {
        let pty = self.ty_of(ptr)?;
        match self.t.get(pty)? {
            Ty::Pointer { pointee, .. } => Ok(self.t.size_align(*pointee)?.0),
            _ => bad("cooperative matrix load/store through a non-pointer"),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn dot(
        &mut self,
        num: Num,
        d: u32,
        a: u32,
        sa: u32,
        b: u32,
        sb: u32,
        n: u32,
        out: &mut Vec<Op>,
    ) {
        let tmp = self.alloc_cols(1);
        out.push(Op::Bin {
            op: BinOp::FMul,
            num,
            d,
            a,
            b,
            n: 1,
            bs: false,
        });
        for k in 1..n {
            out.push(Op::Bin {
                op: BinOp::FMul,
                num,
                d: tmp,
                a: a + k * sa,
                b: b + k * sb,
                n: 1,
                bs: false,
            });
            out.push(Op::Bin {
                op: BinOp::FAdd,
                num,
                d,
                a: d,
                b: tmp,
                n: 1,
                bs: false,
            });
        }
    }

    fn subgroup(
        &mut self,
        o: u16,
        rt: u32,
        d: Val,
        a: &[u32],
        out: &mut Vec<Op>,
    ) -> Result<(), ExecError> {
        use grammar::group_operation as g;
        let arg = |i: usize| operand(a, i);
        let scope = self.const_u64(arg(0)?)? as u32;
        if scope != grammar::scope::Subgroup {
            return bad("GroupNonUniform operations are supported with Subgroup scope only");
        }
        let sgop = match o {
            op::GroupNonUniformElect => SgOp::Elect,
            op::GroupNonUniformAll => SgOp::All,
            op::GroupNonUniformAny => SgOp::Any,
            op::GroupNonUniformAllEqual => SgOp::AllEqual,
            op::GroupNonUniformBroadcast => SgOp::Broadcast,
            op::GroupNonUniformBroadcastFirst => SgOp::BroadcastFirst,
            op::GroupNonUniformBallot => SgOp::Ballot,
            op::GroupNonUniformInverseBallot => SgOp::InverseBallot,
            op::GroupNonUniformBallotBitExtract => SgOp::BallotBitExtract,
            op::GroupNonUniformBallotBitCount => SgOp::BallotBitCount,
            op::GroupNonUniformBallotFindLSB => SgOp::BallotFindLsb,
            op::GroupNonUniformBallotFindMSB => SgOp::BallotFindMsb,
            op::GroupNonUniformShuffle => SgOp::Shuffle,
            op::GroupNonUniformShuffleXor => SgOp::ShuffleXor,
            op::GroupNonUniformShuffleUp => SgOp::ShuffleUp,
            op::GroupNonUniformShuffleDown => SgOp::ShuffleDown,
            op::GroupNonUniformQuadBroadcast => SgOp::QuadBroadcast,
            op::GroupNonUniformQuadSwap => SgOp::QuadSwap,
            op::GroupNonUniformRotateKHR => SgOp::Rotate,
            op::GroupNonUniformIAdd => SgOp::Reduce(BinOp::IAdd),
            op::GroupNonUniformFAdd => SgOp::Reduce(BinOp::FAdd),
            op::GroupNonUniformIMul => SgOp::Reduce(BinOp::IMul),
            op::GroupNonUniformFMul => SgOp::Reduce(BinOp::FMul),
            op::GroupNonUniformSMin => SgOp::Reduce(BinOp::SMin),
            op::GroupNonUniformUMin => SgOp::Reduce(BinOp::UMin),
            op::GroupNonUniformFMin => SgOp::Reduce(BinOp::NMin),
            op::GroupNonUniformSMax => SgOp::Reduce(BinOp::SMax),
            op::GroupNonUniformUMax => SgOp::Reduce(BinOp::UMax),
            op::GroupNonUniformFMax => SgOp::Reduce(BinOp::NMax),
            op::GroupNonUniformBitwiseAnd => SgOp::Reduce(BinOp::And),
            op::GroupNonUniformBitwiseOr => SgOp::Reduce(BinOp::Or),
            op::GroupNonUniformBitwiseXor => SgOp::Reduce(BinOp::Xor),
            op::GroupNonUniformLogicalAnd => SgOp::Reduce(BinOp::LAnd),
            op::GroupNonUniformLogicalOr => SgOp::Reduce(BinOp::LOr),
            op::GroupNonUniformLogicalXor => SgOp::Reduce(BinOp::LNe),
            _ => return bad("unsupported GroupNonUniform operation"),
        };
        let (mut scan, mut cluster, vi) = (
            0u8,
            0u32,
            if matches!(sgop, SgOp::Reduce(_) | SgOp::BallotBitCount) {
                2
            } else {
                1
            },
        );
        if matches!(sgop, SgOp::Reduce(_) | SgOp::BallotBitCount) {
            match arg(1)? {
                g::Reduce => {}
                g::InclusiveScan => scan = 1,
                g::ExclusiveScan => scan = 2,
                g::ClusteredReduce => cluster = self.const_u64(arg(3)?)? as u32,
                x => return bad(format!("group operation {x} is not supported")),
            }
        }
        let (num, n) = if matches!(sgop, SgOp::Elect) {
            (Num::Bool, 1)
        } else {
            let v = arg(vi)?;
            self.t.comps(self.ty_of(v)?)?
        };
        let _ = rt;
        let av = if matches!(sgop, SgOp::Elect) {
            0
        } else {
            self.col(arg(vi)?)?
        };
        let b = match sgop {
            SgOp::Broadcast
            | SgOp::BallotBitExtract
            | SgOp::Shuffle
            | SgOp::ShuffleXor
            | SgOp::ShuffleUp
            | SgOp::ShuffleDown
            | SgOp::QuadBroadcast
            | SgOp::QuadSwap
            | SgOp::Rotate => self.col(arg(vi + 1)?)?,
            _ => 0,
        };
        if matches!(sgop, SgOp::QuadSwap) {
            // The direction is a constant: keep it in `cluster`.
            cluster = self.const_u64(arg(vi + 1)?)? as u32;
        }
        if sgop == SgOp::Rotate
            && let Some(&c) = a.get(vi + 2)
        {
            cluster = self.const_u64(c)? as u32;
        }
        out.push(Op::Sg {
            op: sgop,
            num,
            d: d.col,
            a: av,
            b,
            n,
            scan,
            cluster,
        });
        Ok(())
    }

    fn ext_inst(&mut self, rt: u32, d: Val, a: &[u32], out: &mut Vec<Op>) -> Result<(), ExecError> {
        use grammar::glsl_std_450 as g;
        let set = a.first().copied().unwrap_or(0);
        let inst = a.get(1).copied().unwrap_or(0);
        let args = &a[2.min(a.len())..];
        if self.printf_set.contains(&set) {
            let fmt = self
                .strings
                .get(&args.first().copied().unwrap_or(0))
                .cloned()
                .unwrap_or_default();
            let mut pa = Vec::new();
            for &x in &args[1..] {
                let (num, n) = self.t.comps(self.ty_of(x)?)?;
                pa.push((self.col(x)?, num, n));
            }
            out.push(Op::Printf {
                fmt,
                args: pa.into(),
            });
            return Ok(());
        }
        if self.other_sets.contains(&set) {
            return Ok(());
        }
        if !self.glsl_set.contains(&set) {
            return bad("unknown extended instruction set");
        }
        let arg_cols: Vec<u32> = args
            .iter()
            .map(|&id| self.col(id))
            .collect::<Result<_, _>>()?;
        let c = |i: usize| -> Result<u32, ExecError> {
            arg_cols
                .get(i)
                .copied()
                .ok_or_else(|| ExecError::new("missing operand"))
        };
        if self.ext_more(inst, rt, d, args, out)? {
            return Ok(());
        }
        let (num, n) = match args.first() {
            Some(&x) => self.t.comps(self.ty_of(x)?)?,
            None => return bad("GLSL.std.450 instruction without operands"),
        };
        let un = |u| Op::Un {
            op: u,
            num,
            d: d.col,
            a: 0,
            n,
        };
        let un_op = match inst {
            g::Round => Some(UnOp::Round),
            g::RoundEven => Some(UnOp::RoundEven),
            g::Trunc => Some(UnOp::Trunc),
            g::FAbs => Some(UnOp::FAbs),
            g::SAbs => Some(UnOp::SAbs),
            g::FSign => Some(UnOp::FSign),
            g::SSign => Some(UnOp::SSign),
            g::Floor => Some(UnOp::Floor),
            g::Ceil => Some(UnOp::Ceil),
            g::Fract => Some(UnOp::Fract),
            g::Radians => Some(UnOp::Radians),
            g::Degrees => Some(UnOp::Degrees),
            g::Sin => Some(UnOp::Sin),
            g::Cos => Some(UnOp::Cos),
            g::Tan => Some(UnOp::Tan),
            g::Asin => Some(UnOp::Asin),
            g::Acos => Some(UnOp::Acos),
            g::Atan => Some(UnOp::Atan),
            g::Sinh => Some(UnOp::Sinh),
            g::Cosh => Some(UnOp::Cosh),
            g::Tanh => Some(UnOp::Tanh),
            g::Asinh => Some(UnOp::Asinh),
            g::Acosh => Some(UnOp::Acosh),
            g::Atanh => Some(UnOp::Atanh),
            g::Exp => Some(UnOp::Exp),
            g::Log => Some(UnOp::Log),
            g::Exp2 => Some(UnOp::Exp2),
            g::Log2 => Some(UnOp::Log2),
            g::Sqrt => Some(UnOp::Sqrt),
            g::InverseSqrt => Some(UnOp::InverseSqrt),
            g::FindILsb => Some(UnOp::FindILsb),
            g::FindSMsb => Some(UnOp::FindSMsb),
            g::FindUMsb => Some(UnOp::FindUMsb),
            _ => None,
        };
        if let Some(u) = un_op {
            let mut o = un(u);
            if let Op::Un { a, .. } = &mut o {
                *a = c(0)?;
            }
            out.push(o);
            return Ok(());
        }
        let bin_op = match inst {
            g::FMin => Some(BinOp::FMin),
            g::FMax => Some(BinOp::FMax),
            g::UMin => Some(BinOp::UMin),
            g::UMax => Some(BinOp::UMax),
            g::SMin => Some(BinOp::SMin),
            g::SMax => Some(BinOp::SMax),
            g::NMin => Some(BinOp::NMin),
            g::NMax => Some(BinOp::NMax),
            g::Pow => Some(BinOp::Pow),
            g::Atan2 => Some(BinOp::Atan2),
            g::Step => Some(BinOp::Step),
            g::Ldexp => Some(BinOp::Ldexp),
            _ => None,
        };
        if let Some(b) = bin_op {
            out.push(Op::Bin {
                op: b,
                num,
                d: d.col,
                a: c(0)?,
                b: c(1)?,
                n,
                bs: false,
            });
            return Ok(());
        }
        let tern = match inst {
            g::FMix => Some(TernOp::FMix),
            g::FClamp => Some(TernOp::FClamp),
            g::UClamp => Some(TernOp::UClamp),
            g::SClamp => Some(TernOp::SClamp),
            g::NClamp => Some(TernOp::NClamp),
            g::Fma => Some(TernOp::Fma),
            g::SmoothStep => Some(TernOp::SmoothStep),
            _ => None,
        };
        if let Some(t) = tern {
            out.push(Op::Tern {
                op: t,
                num,
                d: d.col,
                a: c(0)?,
                b: c(1)?,
                c: c(2)?,
                n,
                bs: false,
                cs: false,
            });
            return Ok(());
        }
        match inst {
            g::Length | g::Normalize | g::Distance => {
                let x = if inst == g::Distance {
                    let t = self.alloc_cols(n);
                    out.push(Op::Bin {
                        op: BinOp::FSub,
                        num,
                        d: t,
                        a: c(0)?,
                        b: c(1)?,
                        n,
                        bs: false,
                    });
                    t
                } else {
                    c(0)?
                };
                let len = self.alloc_cols(1);
                self.dot(num, len, x, 1, x, 1, n, out);
                out.push(Op::Un {
                    op: UnOp::Sqrt,
                    num,
                    d: len,
                    a: len,
                    n: 1,
                });
                if inst == g::Normalize {
                    let one = self.alloc_cols(1);
                    self.img[one as usize] = floats::from_f64(num, 1.0);
                    self.const_len.push((one, self.img[one as usize]));
                    out.push(Op::Bin {
                        op: BinOp::FDiv,
                        num,
                        d: len,
                        a: one,
                        b: len,
                        n: 1,
                        bs: false,
                    });
                    out.push(Op::Bin {
                        op: BinOp::FMul,
                        num,
                        d: d.col,
                        a: x,
                        b: len,
                        n,
                        bs: true,
                    });
                } else {
                    out.push(Op::Copy {
                        d,
                        a: Val {
                            col: len,
                            mat: 0,
                            ncols: 1,
                            nmats: 0,
                        },
                    });
                }
            }
            g::Cross => {
                let (x, y) = (c(0)?, c(1)?);
                let t = self.alloc_cols(1);
                for i in 0..3u32 {
                    let (j, k) = ((i + 1) % 3, (i + 2) % 3);
                    out.push(Op::Bin {
                        op: BinOp::FMul,
                        num,
                        d: d.col + i,
                        a: x + j,
                        b: y + k,
                        n: 1,
                        bs: false,
                    });
                    out.push(Op::Bin {
                        op: BinOp::FMul,
                        num,
                        d: t,
                        a: x + k,
                        b: y + j,
                        n: 1,
                        bs: false,
                    });
                    out.push(Op::Bin {
                        op: BinOp::FSub,
                        num,
                        d: d.col + i,
                        a: d.col + i,
                        b: t,
                        n: 1,
                        bs: false,
                    });
                }
            }
            g::PackHalf2x16 => {
                let t = self.alloc_cols(2);
                out.push(Op::Cvt {
                    kind: CvtKind::FConv,
                    from: Num::F32,
                    to: Num::F16,
                    d: t,
                    a: c(0)?,
                    n: 2,
                });
                out.push(Op::Bitcast {
                    d: d.col,
                    a: t,
                    from: Num::F16,
                    na: 2,
                    to: Num::Int(32),
                    nd: 1,
                });
            }
            g::UnpackHalf2x16 => {
                let t = self.alloc_cols(2);
                out.push(Op::Bitcast {
                    d: t,
                    a: c(0)?,
                    from: Num::Int(32),
                    na: 1,
                    to: Num::F16,
                    nd: 2,
                });
                out.push(Op::Cvt {
                    kind: CvtKind::FConv,
                    from: Num::F16,
                    to: Num::F32,
                    d: d.col,
                    a: t,
                    n: 2,
                });
            }
            g::PackDouble2x32 => out.push(Op::Bitcast {
                d: d.col,
                a: c(0)?,
                from: Num::Int(32),
                na: 2,
                to: Num::F64,
                nd: 1,
            }),
            g::UnpackDouble2x32 => out.push(Op::Bitcast {
                d: d.col,
                a: c(0)?,
                from: Num::F64,
                na: 1,
                to: Num::Int(32),
                nd: 2,
            }),
            g::IMix => return bad("GLSL.std.450 IMix is not supported"),
            _ => {
                let _ = rt;
                return bad(format!("GLSL.std.450 instruction {inst} is not supported"));
            }
        }
        Ok(())
    }
}

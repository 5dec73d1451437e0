//! Core structure: header, logical layout, ids and SSA dominance, types and constants,
//! capabilities/extensions/versions, memory model, decorations, functions, structured control flow.

use crate::ctx::Words;
use crate::ctx::{Ctx, FxMap, FxSet, Konst, MAX_BOUND, Ty};
use crate::rules::*;
use coopmat_spirv::binary::Instruction;
use coopmat_spirv::grammar::{
    self, EnumerantDesc, OperandCategory, OperandKind, addressing_model, capability, decoration,
    memory_model, op, storage_class,
};
use coopmat_spirv::module::{Section, is_terminator, section_of};
use std::collections::HashMap;
use std::sync::OnceLock;

/// Per-block facts of one module, blocks numbered globally across functions.
pub(crate) struct Cfg {
    /// Block number of each instruction inside a block (`u32::MAX` elsewhere).
    pub block_of: Vec<u32>,
    /// Label instruction index of each block.
    pub label: Vec<usize>,
    /// Function number of each block.
    pub func: Vec<u32>,
    /// Whether a block is reachable from its function's entry.
    pub reachable: Vec<bool>,
    /// Dominator-tree preorder interval of each reachable block.
    pub dom_in: Vec<u32>,
    pub dom_out: Vec<u32>,
    /// Block number of each label id.
    pub by_label: FxMap<u32, u32>,
}

impl Cfg {
    /// Whether block `a` dominates block `b` (both reachable).
    pub fn dominates(&self, a: u32, b: u32) -> bool {
        let (a, b) = (a as usize, b as usize);
        self.dom_in[a] <= self.dom_in[b] && self.dom_out[b] <= self.dom_out[a]
    }
}

pub(crate) fn check(cx: &mut Ctx) {
    header(cx);
    if cx.fatal {
        return;
    }
    layout(cx);
    memory_model_check(cx);
    let cfg = build_cfg(cx);
    ids(cx, &cfg);
    types_and_constants(cx);
    requirements(cx);
    functions(cx);
    control_flow(cx, &cfg);
    entry_points(cx);
    extended_arithmetic_and_imports(cx);
    spec_constant_op_types(cx);
}

/// `Core-SpecConstantOp-Types`: the operation of an OpSpecConstantOp type-checks as its own
/// instruction would (SPIR-V 3.32.7: "the same semantic as the instruction named by Opcode").
/// The engine folds these constants; operands of another shape than the result are what made it
/// index past a value before this rule.
fn spec_constant_op_types(cx: &mut Ctx) {
    let m = cx.m;
    // (scalar type id, component count) of a scalar or vector type.
    let shape = |ty: u32| match cx.ty(ty) {
        Ty::Vector { comp, count } => Some((comp, count)),
        Ty::Int { .. } | Ty::Float { .. } | Ty::Bool => Some((ty, 1)),
        _ => None,
    };
    let is_bool = |ty: u32| matches!(cx.ty(ty), Ty::Bool);
    let is_int = |ty: u32| matches!(cx.ty(ty), Ty::Int { .. });
    let is_float = |ty: u32| matches!(cx.ty(ty), Ty::Float { .. });
    for (i, inst) in m.instructions.iter().enumerate() {
        if inst.opcode != op::SpecConstantOp {
            continue;
        }
        let (Some(rt), Some(code)) = (inst.w(0), inst.w(2)) else {
            continue;
        };
        let Ok(code) = u16::try_from(code) else {
            continue;
        };
        let operands: Vec<u32> = inst.words.get(4..).unwrap_or(&[]).to_vec();
        let name = crate::ctx::desc(code).map_or("?", |d| d.name);
        let problem: Option<String> = match code {
            op::SNegate
            | op::Not
            | op::IAdd
            | op::ISub
            | op::IMul
            | op::UDiv
            | op::SDiv
            | op::UMod
            | op::SRem
            | op::SMod
            | op::BitwiseOr
            | op::BitwiseXor
            | op::BitwiseAnd
            | op::ShiftRightLogical
            | op::ShiftRightArithmetic
            | op::ShiftLeftLogical => {
                let shifts = matches!(
                    code,
                    op::ShiftRightLogical | op::ShiftRightArithmetic | op::ShiftLeftLogical
                );
                let want = shape(rt).filter(|&(s, _)| is_int(s));
                match want {
                    None => Some("the result type must be an integer scalar or vector".into()),
                    Some((scalar, n)) => operands.iter().find_map(|&a| {
                        let got = shape(cx.vty(a));
                        let ok = got.is_some_and(|(s, k)| {
                            k == n && is_int(s) && (shifts || cx.width(s) == cx.width(scalar))
                        });
                        (!ok).then(|| {
                            format!("operand {} must be an integer of the result's component count and width", cx.name(a))
                        })
                    }),
                }
            }
            op::LogicalOr
            | op::LogicalAnd
            | op::LogicalNot
            | op::LogicalEqual
            | op::LogicalNotEqual => match shape(rt).filter(|&(s, _)| is_bool(s)) {
                None => Some("the result type must be a boolean scalar or vector".into()),
                Some((_, n)) => operands.iter().find_map(|&a| {
                    let ok = shape(cx.vty(a)).is_some_and(|(s, k)| k == n && is_bool(s));
                    (!ok).then(|| {
                        format!(
                            "operand {} must be a boolean of the result's component count",
                            cx.name(a)
                        )
                    })
                }),
            },
            op::IEqual
            | op::INotEqual
            | op::ULessThan
            | op::SLessThan
            | op::UGreaterThan
            | op::SGreaterThan
            | op::ULessThanEqual
            | op::SLessThanEqual
            | op::UGreaterThanEqual
            | op::SGreaterThanEqual => match shape(rt).filter(|&(s, _)| is_bool(s)) {
                None => Some("the result type must be a boolean scalar or vector".into()),
                Some((_, n)) => operands.iter().find_map(|&a| {
                    let ok = shape(cx.vty(a)).is_some_and(|(s, k)| k == n && is_int(s));
                    (!ok).then(|| {
                        format!(
                            "operand {} must be an integer of the result's component count",
                            cx.name(a)
                        )
                    })
                }),
            },
            op::Select => match (shape(rt), operands.as_slice()) {
                (Some((_, n)), &[c, a, b]) => {
                    let cond_ok =
                        shape(cx.vty(c)).is_some_and(|(s, k)| is_bool(s) && (k == 1 || k == n));
                    if !cond_ok {
                        Some(format!(
                            "the condition {} must be a boolean scalar or one of the result's component count",
                            cx.name(c)
                        ))
                    } else if cx.vty(a) != rt || cx.vty(b) != rt {
                        Some("both objects must have the result type".into())
                    } else {
                        None
                    }
                }
                _ => Some(
                    "Select takes a condition and two objects of a scalar or vector result type"
                        .into(),
                ),
            },
            op::SConvert | op::UConvert | op::FConvert => {
                let float = code == op::FConvert;
                let kind_ok = |s: u32| if float { is_float(s) } else { is_int(s) };
                match (shape(rt), operands.first()) {
                    (Some((s, n)), Some(&a)) if kind_ok(s) => {
                        let ok = shape(cx.vty(a)).is_some_and(|(t, k)| k == n && kind_ok(t));
                        (!ok).then(|| format!("operand {} must have the result's component count and kind", cx.name(a)))
                    }
                    _ => Some("the result type must be a numerical scalar or vector of the conversion's kind".into()),
                }
            }
            op::CompositeExtract => match operands.split_first() {
                Some((&c, path)) => match composite_member_type(cx, cx.vty(c), path) {
                    Some(t) if t == rt => None,
                    Some(t) => Some(format!(
                        "the result type {} is not the type of the member the indices reach ({})",
                        cx.name(rt),
                        cx.name(t)
                    )),
                    None => Some("the indices do not reach a member of the composite".into()),
                },
                None => Some("CompositeExtract needs a composite".into()),
            },
            op::CompositeInsert => match operands.as_slice() {
                [obj, c, path @ ..] => {
                    if cx.vty(*c) != rt {
                        Some("the composite must have the result type".into())
                    } else {
                        match composite_member_type(cx, rt, path) {
                            Some(t) if t == cx.vty(*obj) => None,
                            _ => Some(
                                "the object's type is not that of the member the indices reach"
                                    .into(),
                            ),
                        }
                    }
                }
                _ => Some("CompositeInsert needs an object and a composite".into()),
            },
            op::VectorShuffle => match (shape(rt), operands.as_slice()) {
                (Some((s, n)), [a, b, idx @ ..]) if matches!(cx.ty(rt), Ty::Vector { .. }) => {
                    let va = shape(cx.vty(*a));
                    let vb = shape(cx.vty(*b));
                    match (va, vb) {
                        (Some((sa, na)), Some((sb, nb)))
                            if sa == s && sb == s && idx.len() as u32 == n =>
                        {
                            idx.iter()
                                .find(|&&k| k != u32::MAX && k >= na + nb)
                                .map(|k| format!("component index {k} is past the {} components of the two vectors", na + nb))
                        }
                        _ => Some("the vectors must have the result's component type, and one index per result component".into()),
                    }
                }
                _ => Some("VectorShuffle needs a vector result type and two vectors".into()),
            },
            _ => None,
        };
        if let Some(p) = problem {
            cx.err(
                &CORE_SPEC_OP_TYPES,
                i,
                format!("OpSpecConstantOp {name}: {p}"),
            );
        }
    }
}

/// The type reached from composite type `ty` by literal indices `path`.
fn composite_member_type(cx: &Ctx, ty: u32, path: &[u32]) -> Option<u32> {
    let mut t = ty;
    for &k in path {
        t = match cx.ty(t) {
            Ty::Vector { comp, count } => (k < count).then_some(comp)?,
            Ty::Matrix { column, count } => (k < count).then_some(column)?,
            Ty::Array { elem, len } => match cx.const_or_default(len) {
                Some(n) if u64::from(k) < n => elem,
                _ => return None,
            },
            Ty::Struct => {
                let def = cx.m.instructions.get(cx.def(t)?)?;
                *def.words.get(2 + k as usize)?
            }
            _ => return None,
        };
    }
    Some(t)
}

/// `Core-ExtendedArith-Result` and `Core-ExtInstImport-Vulkan`.
fn extended_arithmetic_and_imports(cx: &mut Ctx) {
    let m = cx.m;
    let extended = |o: u32| {
        matches!(
            u16::try_from(o).unwrap_or(0),
            op::IAddCarry | op::ISubBorrow | op::UMulExtended | op::SMulExtended
        )
    };
    for (i, inst) in m.instructions.iter().enumerate() {
        // (the operation, index of its first value operand)
        let (opcode, first) = match inst.opcode {
            o if extended(o as u32) => (o, 2),
            op::SpecConstantOp => {
                let o = inst.w(2).unwrap_or(0);
                let allowed = u16::try_from(o)
                    .is_ok_and(|o| coopmat_spirv::asm::SPEC_CONSTANT_OPS.contains(&o));
                if !allowed {
                    let name = u16::try_from(o)
                        .ok()
                        .and_then(crate::ctx::desc)
                        .map_or_else(|| format!("opcode {o}"), |d| d.name.to_string());
                    cx.err(
                        &CORE_CONSTANT,
                        i,
                        format!("{name} is not an operation OpSpecConstantOp allows"),
                    );
                }
                if !extended(o) {
                    continue;
                }
                (o as u16, 3)
            }
            op::ExtInstImport => {
                let name = inst.s(1).unwrap_or_default();
                if cx.opts.target_env.is_vulkan()
                    && name != "GLSL.std.450"
                    && !name.starts_with("NonSemantic.")
                {
                    cx.err(
                        &CORE_EXT_IMPORT,
                        i,
                        format!("the extended instruction set {name:?} is not available in Vulkan (GLSL.std.450 or NonSemantic.* sets only)"),
                    );
                }
                continue;
            }
            _ => continue,
        };
        let (Some(rt), Some(a)) = (inst.w(0), inst.w(first)) else {
            continue;
        };
        let operand_ty = cx.vty(a);
        let members = match m.def(rt) {
            Some(d) if d.opcode == op::TypeStruct => d.words.get(2..).unwrap_or(&[]).to_vec(),
            _ => Vec::new(),
        };
        if members.len() != 2 || members.iter().any(|&t| t != operand_ty) {
            let name = crate::ctx::desc(opcode).map_or("?", |d| d.name);
            cx.err(
                &CORE_EXTENDED_ARITH,
                i,
                format!(
                    "{name}: the result type must be a struct of two members of the operands' type"
                ),
            );
        }
    }
}

fn header(cx: &mut Ctx) {
    let m = cx.m;
    let v = m.header.version();
    if v.0 != 1 || v.1 > 6 {
        cx.err_module(
            &CORE_HEADER,
            format!("invalid SPIR-V version {}.{}", v.0, v.1),
        );
    }
    let max = cx.opts.target_env.max_spirv();
    if v > max {
        cx.err_module(
            &CORE_HEADER,
            format!(
                "SPIR-V {}.{} is newer than {} accepts ({}.{})",
                v.0,
                v.1,
                cx.opts.target_env.name(),
                max.0,
                max.1
            ),
        );
    }
    if m.header.bound > MAX_BOUND + 1 {
        cx.err_module(
            &CORE_HEADER,
            format!(
                "id bound {} exceeds the limit {}",
                m.header.bound,
                MAX_BOUND + 1
            ),
        );
        cx.fatal = true;
    }
    for d in &m.diagnostics {
        let idx = m
            .instructions
            .binary_search_by_key(&d.offset, |i| i.offset)
            .unwrap_or(0);
        cx.err(&CORE_HEADER, idx, d.message.clone());
    }
    for (i, inst) in m.instructions.iter().enumerate() {
        if crate::ctx::desc(inst.opcode).is_none() {
            cx.err(&CORE_HEADER, i, format!("invalid opcode {}", inst.opcode));
        }
        if let Some(id) = inst.result_id
            && (id == 0 || id >= m.header.bound)
        {
            cx.err(
                &CORE_ID_DEFINED,
                i,
                format!("result id %{id} is outside the id bound {}", m.header.bound),
            );
            cx.fatal = true;
        }
    }
}

fn section_name(s: Section) -> &'static str {
    match s {
        Section::Capability => "OpCapability",
        Section::Extension => "OpExtension",
        Section::ExtInstImport => "OpExtInstImport",
        Section::MemoryModel => "OpMemoryModel",
        Section::EntryPoint => "OpEntryPoint",
        Section::ExecutionMode => "execution modes",
        Section::DebugSource => "debug source instructions",
        Section::DebugName => "OpName/OpMemberName",
        Section::DebugModuleProcessed => "OpModuleProcessed",
        Section::Annotation => "annotations",
        Section::Global => "types, constants and global variables",
        Section::Function => "functions",
    }
}

fn layout(cx: &mut Ctx) {
    let m = cx.m;
    let mut prev = Section::Capability;
    let mut in_functions = false;
    for (i, inst) in m.instructions.iter().enumerate() {
        if inst.opcode == op::Function {
            in_functions = true;
        }
        if !in_functions {
            let s = m.section(i);
            if s < prev {
                let name = crate::ctx::desc(inst.opcode).map(|d| d.name).unwrap_or("?");
                cx.err(
                    &CORE_LAYOUT,
                    i,
                    format!(
                        "{name} ({}) appears after {}",
                        section_name(s),
                        section_name(prev)
                    ),
                );
            } else {
                prev = s;
            }
            if inst.opcode == op::Variable && inst.w(2) == Some(storage_class::Function) {
                cx.err(
                    &CORE_LAYOUT,
                    i,
                    "a module-scope OpVariable cannot use the Function storage class",
                );
            }
            continue;
        }
        let s = section_of(inst.opcode);
        let class = crate::ctx::desc(inst.opcode).map(|d| d.class).unwrap_or("");
        if s < Section::Global || class == "Type-Declaration" || class == "Constant-Creation" {
            let name = crate::ctx::desc(inst.opcode).map(|d| d.name).unwrap_or("?");
            cx.err(
                &CORE_LAYOUT,
                i,
                format!("{name} cannot appear inside a function"),
            );
        }
    }
    // Function-local variables: Function storage, and at the start of the first block.
    for f in m.functions() {
        for (bn, b) in f.blocks.iter().enumerate() {
            let mut leading = bn == 0;
            for i in b.body.clone() {
                let inst = &m.instructions[i];
                if inst.opcode == op::Variable {
                    if inst.w(2) != Some(storage_class::Function) {
                        cx.err(
                            &CORE_LAYOUT,
                            i,
                            "a variable in a function must use the Function storage class",
                        );
                    } else if !leading {
                        cx.err(&CORE_LAYOUT, i, "all OpVariable instructions of a function must be the first instructions of its first block");
                    }
                } else if !matches!(inst.opcode, op::Line | op::NoLine | op::ExtInst) {
                    leading = false;
                }
            }
        }
    }
}

fn memory_model_check(cx: &mut Ctx) {
    let m = cx.m;
    let mms: Vec<usize> = m.find(op::MemoryModel).collect();
    if mms.len() != 1 {
        cx.err_module(
            &CORE_MEMORY_MODEL,
            format!(
                "a module needs exactly one OpMemoryModel, found {}",
                mms.len()
            ),
        );
    }
    if cx.opts.target_env.is_vulkan() {
        if !cx.has_cap(capability::Shader) {
            cx.err_module(&CORE_VK_SHADER, "Vulkan requires the Shader capability");
        }
        if let Some(&i) = mms.first() {
            let inst = &m.instructions[i];
            let am = inst.w(0).unwrap_or(0);
            let mm = inst.w(1).unwrap_or(0);
            if am != addressing_model::Logical && am != addressing_model::PhysicalStorageBuffer64 {
                cx.err(
                    &CORE_VK_SHADER,
                    i,
                    "Vulkan requires the Logical or PhysicalStorageBuffer64 addressing model",
                );
            }
            if cx.has_cap(capability::VulkanMemoryModel) && mm != memory_model::Vulkan {
                cx.err(&CORE_MEMORY_MODEL, i, "the VulkanMemoryModel capability is declared but the memory model is not Vulkan");
            }
            if mm != memory_model::GLSL450 && mm != memory_model::Vulkan {
                cx.err(
                    &CORE_VK_SHADER,
                    i,
                    "Vulkan requires the GLSL450 or Vulkan memory model",
                );
            }
        }
    }
}

/// Builds blocks, successors, reachability and dominator intervals for every function.
pub(crate) fn build_cfg(cx: &Ctx) -> Cfg {
    let m = cx.m;
    let mut cfg = Cfg {
        block_of: vec![u32::MAX; m.instructions.len()],
        label: Vec::new(),
        func: Vec::new(),
        reachable: Vec::new(),
        dom_in: Vec::new(),
        dom_out: Vec::new(),
        by_label: FxMap::default(),
    };
    let mut succ: Vec<Vec<u32>> = Vec::new();
    for (fnum, f) in m.functions().iter().enumerate() {
        let base = cfg.label.len() as u32;
        for (k, b) in f.blocks.iter().enumerate() {
            let n = base + k as u32;
            cfg.label.push(b.label);
            cfg.func.push(fnum as u32);
            cfg.by_label.insert(b.id, n);
            cfg.block_of[b.label] = n;
            for i in b.body.clone() {
                cfg.block_of[i] = n;
            }
        }
        for b in &f.blocks {
            let term = &m.instructions[b.body.end - 1];
            let mut s = Vec::new();
            for t in coopmat_spirv::cfg::successors(term) {
                if let Some(&tb) = cfg.by_label.get(&t)
                    && tb >= base
                {
                    s.push(tb);
                }
            }
            succ.push(s);
        }
    }
    let nb = cfg.label.len();
    cfg.reachable = vec![false; nb];
    cfg.dom_in = vec![0; nb];
    cfg.dom_out = vec![0; nb];
    // Per function: reverse postorder, iterative dominators (Cooper, Harvey, Kennedy), then a
    // preorder numbering of the dominator tree for O(1) dominance queries.
    let mut base = 0usize;
    let mut clock = 0u32;
    for f in m.functions() {
        let n = f.blocks.len();
        if n == 0 {
            continue;
        }
        let mut post = Vec::with_capacity(n);
        let mut seen = vec![false; n];
        let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
        seen[0] = true;
        while let Some(&mut (b, ref mut k)) = stack.last_mut() {
            let s = &succ[base + b];
            if *k < s.len() {
                let t = s[*k] as usize - base;
                *k += 1;
                if !seen[t] {
                    seen[t] = true;
                    stack.push((t, 0));
                }
            } else {
                post.push(b);
                stack.pop();
            }
        }
        let mut po_num = vec![usize::MAX; n];
        for (k, &b) in post.iter().enumerate() {
            po_num[b] = k;
        }
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
        for b in 0..n {
            if !seen[b] {
                continue;
            }
            for &t in &succ[base + b] {
                preds[t as usize - base].push(b);
            }
        }
        let mut idom = vec![usize::MAX; n];
        idom[0] = 0;
        let mut changed = true;
        while changed {
            changed = false;
            for &b in post.iter().rev() {
                if b == 0 {
                    continue;
                }
                let mut new = usize::MAX;
                for &p in &preds[b] {
                    if idom[p] == usize::MAX {
                        continue;
                    }
                    new = if new == usize::MAX {
                        p
                    } else {
                        let (mut x, mut y) = (p, new);
                        while x != y {
                            while po_num[x] < po_num[y] {
                                x = idom[x];
                            }
                            while po_num[y] < po_num[x] {
                                y = idom[y];
                            }
                        }
                        x
                    };
                }
                if new != usize::MAX && idom[b] != new {
                    idom[b] = new;
                    changed = true;
                }
            }
        }
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        for b in 1..n {
            if seen[b] && idom[b] != usize::MAX {
                children[idom[b]].push(b);
            }
        }
        let mut st: Vec<(usize, usize)> = vec![(0, 0)];
        cfg.dom_in[base] = clock;
        clock += 1;
        while let Some(&mut (b, ref mut k)) = st.last_mut() {
            if *k < children[b].len() {
                let c = children[b][*k];
                *k += 1;
                cfg.dom_in[base + c] = clock;
                clock += 1;
                st.push((c, 0));
            } else {
                cfg.dom_out[base + b] = clock;
                clock += 1;
                st.pop();
            }
        }
        cfg.reachable[base..base + n].copy_from_slice(&seen);
        base += n;
    }
    cfg
}

/// Whether operand `n` of `inst` may name an id defined later in the module.
fn forward_ok(inst: &Instruction, n: usize, target_op: u16) -> bool {
    if matches!(target_op, op::Function | op::Label) {
        return true;
    }
    match inst.opcode {
        op::Name
        | op::MemberName
        | op::Decorate
        | op::DecorateId
        | op::DecorateString
        | op::MemberDecorate
        | op::MemberDecorateString
        | op::GroupDecorate
        | op::GroupMemberDecorate
        | op::EntryPoint
        | op::ExecutionModeId
        | op::ExecutionMode
        | op::TypeForwardPointer => true,
        op::Phi => true,
        // A pointer type may name a struct declared after an OpTypeForwardPointer.
        _ => {
            let _ = n;
            false
        }
    }
}

fn is_id_kind(k: Option<OperandKind>) -> bool {
    matches!(
        k,
        Some(
            OperandKind::IdRef
                | OperandKind::IdResultType
                | OperandKind::IdScope
                | OperandKind::IdMemorySemantics
        )
    )
}

fn ids(cx: &mut Ctx, cfg: &Cfg) {
    let m = cx.m;
    let bound = m.header.bound;
    // Forward-declared pointer types may be used before their OpTypePointer.
    let mut forward_ptrs: FxSet<u32> = FxSet::default();
    for inst in &m.instructions {
        if inst.opcode == op::TypeForwardPointer
            && let Some(p) = inst.w(0)
        {
            forward_ptrs.insert(p);
        }
    }
    for (i, inst) in m.instructions.iter().enumerate() {
        let use_block = cfg.block_of[i];
        for (n, o) in inst.operands.iter().enumerate() {
            if !is_id_kind(o.kind) {
                continue;
            }
            let id = inst.at(o);
            if id == 0 || id >= bound {
                cx.err(
                    &CORE_ID_DEFINED,
                    i,
                    format!("id %{id} is outside the id bound {bound}"),
                );
                continue;
            }
            let Some(d) = cx.def(id) else {
                cx.err(
                    &CORE_ID_DEFINED,
                    i,
                    format!("id {} has not been defined", cx.name(id)),
                );
                continue;
            };
            let dop = m.instructions[d].opcode;
            if d >= i && !forward_ok(inst, n, dop) && !forward_ptrs.contains(&id) {
                cx.err(
                    &CORE_ID_FORWARD,
                    i,
                    format!("id {} is used before its definition", cx.name(id)),
                )
                .at(d, "defined here");
                continue;
            }
            // SSA dominance for ids defined inside a function body.
            let def_block = cfg.block_of[d];
            if def_block == u32::MAX || matches!(dop, op::Label | op::Function) {
                continue;
            }
            if use_block == u32::MAX {
                // Module-level uses of function-local ids (decorations, names) are fine.
                if m.section(i) == Section::Function
                    && inst.opcode != op::FunctionEnd
                    && let (Some(uf), Some(df)) = (m.owner(i), m.owner(d))
                    && uf != df
                {
                    cx.err(
                        &CORE_SSA_DOMINANCE,
                        i,
                        format!("id {} is defined in another function", cx.name(id)),
                    );
                }
                continue;
            }
            if cfg.func[def_block as usize] != cfg.func[use_block as usize] {
                cx.err(
                    &CORE_SSA_DOMINANCE,
                    i,
                    format!("id {} is defined in another function", cx.name(id)),
                )
                .at(d, "defined here");
                continue;
            }
            let ub = if inst.opcode == op::Phi {
                // The value must dominate the end of the matching parent block.
                match inst.w(n + 1).and_then(|l| cfg.by_label.get(&l)) {
                    Some(&b) if n % 2 == 0 => b,
                    _ => continue,
                }
            } else {
                use_block
            };
            if !cfg.reachable[ub as usize] {
                continue;
            }
            let ok = if ub == def_block {
                inst.opcode == op::Phi || d < i
            } else {
                cfg.reachable[def_block as usize] && cfg.dominates(def_block, ub)
            };
            if !ok {
                let dl = m.instructions[cfg.label[def_block as usize]]
                    .result_id
                    .unwrap_or(0);
                let ul = m.instructions[cfg.label[ub as usize]]
                    .result_id
                    .unwrap_or(0);
                cx.err(
                    &CORE_SSA_DOMINANCE,
                    i,
                    format!(
                        "id {} defined in block {} does not dominate its use in block {}",
                        cx.name(id),
                        cx.name(dl),
                        cx.name(ul)
                    ),
                )
                .at(d, "defined here");
            }
        }
        // Result types must be types.
        if let Some(t) = inst.result_type
            && cx.def(t).is_some()
            && cx.ty(t) == Ty::None
        {
            cx.err(
                &CORE_OPERAND_TYPE,
                i,
                format!("result type {} is not a type", cx.name(t)),
            );
        }
        if inst.opcode == op::Variable {
            match inst.result_type.map(|t| (t, cx.ty(t))) {
                Some((_, Ty::Pointer { storage, .. })) if inst.w(2) != Some(storage) => {
                    cx.err(
                        &CORE_OPERAND_TYPE,
                        i,
                        "OpVariable's Storage Class must match its pointer type's",
                    );
                }
                Some((_, Ty::Pointer { .. })) => {}
                Some((t, _)) if cx.def(t).is_some() => {
                    cx.err(
                        &CORE_OPERAND_TYPE,
                        i,
                        "OpVariable's Result Type must be a pointer type",
                    );
                }
                _ => {}
            }
        }
        // Value operands must be values, not types, except where an instruction takes a type.
        let class = crate::ctx::desc(inst.opcode).map(|d| d.class).unwrap_or("");
        let takes_type = matches!(
            inst.opcode,
            op::Function
                | op::CooperativeMatrixLengthKHR
                | op::CooperativeMatrixLengthNV
                | op::UntypedVariableKHR
                | op::UntypedAccessChainKHR
                | op::UntypedInBoundsAccessChainKHR
                | op::UntypedPtrAccessChainKHR
                | op::UntypedInBoundsPtrAccessChainKHR
                | op::UntypedArrayLengthKHR
                | op::UntypedPrefetchKHR
                | op::TypeForwardPointer
                | op::SizeOf
        ) || matches!(
            class,
            "Type-Declaration"
                | "Constant-Creation"
                | "Annotation"
                | "Debug"
                | "Extension"
                | "Mode-Setting"
                | "Reserved"
        );
        if !takes_type {
            for k in inst.first_arg()..inst.operands.len() {
                let o = &inst.operands[k];
                if o.kind == Some(OperandKind::IdRef) {
                    let id = inst.at(o);
                    if cx.ty(id) != Ty::None {
                        cx.err(
                            &CORE_OPERAND_TYPE,
                            i,
                            format!("operand {} is a type; a value is expected", cx.name(id)),
                        );
                    }
                }
            }
        }
    }
}

fn types_and_constants(cx: &mut Ctx) {
    let m = cx.m;
    let vulkan = cx.opts.target_env.is_vulkan();
    // SPIR-V 2.8: "It is invalid to declare multiple non-aggregate, non-pointer type <id>s
    // having the same opcode and operands."
    let mut dup: FxMap<Vec<u32>, usize> = FxMap::default();
    for (i, inst) in m.instructions.iter().enumerate() {
        let class = crate::ctx::desc(inst.opcode).map(|d| d.class).unwrap_or("");
        if class != "Type-Declaration"
            || inst.words.len() < 2
            || matches!(
                inst.opcode,
                op::TypeStruct
                    | op::TypeArray
                    | op::TypeRuntimeArray
                    | op::TypePointer
                    | op::TypeUntypedPointerKHR
                    | op::TypeForwardPointer
                    | op::TypeOpaque
            )
        {
            continue;
        }
        let mut key: Vec<u32> = Vec::with_capacity(inst.words.len() - 1);
        key.push(inst.words[0]);
        key.extend_from_slice(&inst.words[2..]);
        if let Some(&first) = dup.get(&key) {
            cx.err(
                &CORE_TYPE,
                i,
                "duplicate non-aggregate type declaration (same opcode and operands)",
            )
            .at(first, "first declaration");
        } else {
            dup.insert(key, i);
        }
    }
    for (i, inst) in m.instructions.iter().enumerate() {
        match inst.opcode {
            op::TypeInt => {
                let w = inst.w(1).unwrap_or(0);
                let s = inst.w(2).unwrap_or(0);
                let known = matches!(w, 8 | 16 | 32 | 64) || (w == 4 && !vulkan);
                if !known {
                    cx.err(&CORE_TYPE, i, format!("invalid integer width {w}"));
                }
                if s > 1 {
                    cx.err(&CORE_TYPE, i, "signedness must be 0 or 1");
                }
                let ok = match w {
                    8 => {
                        cx.has_cap(capability::Int8)
                            || cx.has_cap(capability::StorageBuffer8BitAccess)
                            || cx.has_cap(capability::UniformAndStorageBuffer8BitAccess)
                            || cx.has_cap(capability::StoragePushConstant8)
                    }
                    16 => {
                        cx.has_cap(capability::Int16)
                            || cx.has_cap(capability::StorageBuffer16BitAccess)
                            || cx.has_cap(capability::UniformAndStorageBuffer16BitAccess)
                            || cx.has_cap(capability::StoragePushConstant16)
                            || cx.has_cap(capability::StorageInputOutput16)
                    }
                    64 => cx.has_cap(capability::Int64),
                    _ => true,
                };
                if !ok {
                    cx.err(&CORE_CAPABILITY, i, format!("a {w}-bit integer type needs the Int{w} capability (or a storage capability enabling it)"));
                }
            }
            op::TypeFloat => {
                let w = inst.w(1).unwrap_or(0);
                let enc = inst.w(2);
                let known = matches!(w, 16 | 32 | 64) || (matches!(w, 4 | 8) && enc.is_some());
                if !known {
                    cx.err(&CORE_TYPE, i, format!("invalid floating-point width {w}"));
                }
                let ok = match (w, enc) {
                    (16, None) => {
                        cx.has_cap(capability::Float16)
                            || cx.has_cap(capability::Float16Buffer)
                            || cx.has_cap(capability::StorageBuffer16BitAccess)
                            || cx.has_cap(capability::UniformAndStorageBuffer16BitAccess)
                            || cx.has_cap(capability::StoragePushConstant16)
                            || cx.has_cap(capability::StorageInputOutput16)
                    }
                    (64, _) => cx.has_cap(capability::Float64),
                    _ => true,
                };
                if !ok {
                    cx.err(
                        &CORE_CAPABILITY,
                        i,
                        format!("a {w}-bit float type needs the Float{w} capability"),
                    );
                }
            }
            op::TypeVector => {
                let c = inst.w(1).unwrap_or(0);
                let n = inst.w(2).unwrap_or(0);
                if !matches!(cx.ty(c), Ty::Int { .. } | Ty::Float { .. } | Ty::Bool) {
                    cx.err(&CORE_TYPE, i, "a vector's component type must be a scalar");
                }
                let ok = match n {
                    2..=4 => true,
                    8 | 16 => {
                        cx.has_cap(capability::Vector16) || cx.has_cap(capability::LongVectorEXT)
                    }
                    _ => n >= 2 && cx.has_cap(capability::LongVectorEXT),
                };
                if !ok {
                    cx.err(&CORE_TYPE, i, format!("vector component count {n} needs a capability (Vector16 or LongVectorEXT) or is invalid"));
                }
            }
            op::TypeArray => {
                let e = inst.w(1).unwrap_or(0);
                let len = inst.w(2).unwrap_or(0);
                if matches!(cx.ty(e), Ty::None | Ty::Void) {
                    cx.err(
                        &CORE_TYPE,
                        i,
                        "an array's element type must be a non-void type",
                    );
                }
                match cx.konst(len) {
                    Konst::None => {
                        cx.err(
                            &CORE_TYPE,
                            i,
                            "an array length must be a constant instruction",
                        );
                    }
                    k => {
                        if !cx.is_int(cx.vty(len)) {
                            cx.err(
                                &CORE_TYPE,
                                i,
                                "an array length must be a scalar integer constant",
                            );
                        } else if k == Konst::Value(0) {
                            cx.err(&CORE_TYPE, i, "an array length must be at least 1");
                        }
                    }
                }
            }
            op::TypeRuntimeArray => {
                let e = inst.w(1).unwrap_or(0);
                if matches!(cx.ty(e), Ty::None | Ty::Void) {
                    cx.err(
                        &CORE_TYPE,
                        i,
                        "a runtime array's element type must be a non-void type",
                    );
                }
            }
            op::TypeStruct => {
                for n in 1..inst.operands.len() {
                    let t = inst.w(n).unwrap_or(0);
                    if matches!(cx.ty(t), Ty::None | Ty::Void)
                        && cx.def_op(t) != op::TypeForwardPointer
                    {
                        cx.err(
                            &CORE_TYPE,
                            i,
                            format!("struct member {} is not a non-void type", n - 1),
                        );
                    }
                }
            }
            op::TypeFunction => {
                let r = inst.w(1).unwrap_or(0);
                if cx.ty(r) == Ty::None {
                    cx.err(&CORE_TYPE, i, "a function's return type must be a type");
                }
                for n in 2..inst.operands.len() {
                    let t = inst.w(n).unwrap_or(0);
                    if matches!(cx.ty(t), Ty::None | Ty::Void) {
                        cx.err(
                            &CORE_TYPE,
                            i,
                            format!("function parameter {} is not a non-void type", n - 2),
                        );
                    }
                }
            }
            op::TypePointer => {
                let t = inst.w(2).unwrap_or(0);
                if cx.ty(t) == Ty::None && cx.def_op(t) != 0 {
                    cx.err(&CORE_TYPE, i, "a pointer's pointee must be a type");
                }
            }
            op::Constant | op::SpecConstant => {
                let t = inst.result_type.unwrap_or(0);
                match cx.ty(t) {
                    Ty::Int { width, .. } | Ty::Float { width, .. } => {
                        let want = width.div_ceil(32) as usize;
                        let got = if inst.operands.len() > 2 {
                            inst.ow(2).len()
                        } else {
                            0
                        };
                        if got != want {
                            cx.err(&CORE_CONSTANT, i, format!("a {width}-bit constant needs {want} literal word(s), found {got}"));
                        }
                    }
                    _ => {
                        cx.err(
                            &CORE_CONSTANT,
                            i,
                            "the result type of OpConstant must be a scalar integer or float type",
                        );
                    }
                }
            }
            op::ConstantTrue | op::ConstantFalse | op::SpecConstantTrue | op::SpecConstantFalse
                if cx.ty(inst.result_type.unwrap_or(0)) != Ty::Bool =>
            {
                cx.err(
                    &CORE_CONSTANT,
                    i,
                    "the result type of a boolean constant must be OpTypeBool",
                );
            }
            op::ConstantComposite | op::SpecConstantComposite | op::CompositeConstruct => {
                let t = inst.result_type.unwrap_or(0);
                let n = inst.operands.len().saturating_sub(2);
                // SPIR-V 3.52.7 / 3.52.12: "Result Type must be a composite type". (Types this
                // table does not model, such as cooperative vectors, decode as None: not judged.)
                if matches!(
                    cx.ty(t),
                    Ty::Void
                        | Ty::Bool
                        | Ty::Int { .. }
                        | Ty::Float { .. }
                        | Ty::Pointer { .. }
                        | Ty::OpaquePointer { .. }
                        | Ty::Function { .. }
                        | Ty::Layout { .. }
                        | Ty::View { .. }
                ) {
                    cx.err(
                        &CORE_CONSTANT,
                        i,
                        format!("the result type {} is not a composite type", cx.name(t)),
                    );
                }
                let elems: Option<(u32, usize)> = match cx.ty(t) {
                    Ty::Vector { comp, count } => Some((comp, count as usize)),
                    Ty::Array { elem, len } => cx.const_value(len).map(|l| (elem, l as usize)),
                    _ => None,
                };
                if let Some((elem, count)) = elems {
                    let is_vec = matches!(cx.ty(t), Ty::Vector { .. });
                    if inst.opcode != op::CompositeConstruct || !is_vec {
                        if n != count {
                            cx.err(
                                &CORE_CONSTANT,
                                i,
                                format!("{count} constituents expected, found {n}"),
                            );
                        }
                        for k in 2..inst.operands.len() {
                            let c = inst.w(k).unwrap_or(0);
                            if cx.vty(c) != elem {
                                cx.err(
                                    &CORE_CONSTANT,
                                    i,
                                    format!(
                                        "constituent {} does not have the element type",
                                        cx.name(c)
                                    ),
                                );
                                break;
                            }
                        }
                    }
                }
                if inst.opcode != op::CompositeConstruct {
                    for k in 2..inst.operands.len() {
                        let c = inst.w(k).unwrap_or(0);
                        if !cx.is_constant(c) && cx.def_op(c) != op::Undef {
                            cx.err(
                                &CORE_CONSTANT,
                                i,
                                format!("constituent {} is not a constant", cx.name(c)),
                            );
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

type EnumKey = (OperandKind, u32);

fn enum_table() -> &'static HashMap<EnumKey, &'static EnumerantDesc> {
    static T: OnceLock<HashMap<EnumKey, &'static EnumerantDesc>> = OnceLock::new();
    T.get_or_init(|| {
        let mut map = HashMap::new();
        for k in grammar::OPERAND_KINDS {
            if matches!(
                k.category,
                OperandCategory::ValueEnum | OperandCategory::BitEnum
            ) {
                for e in k.enumerants {
                    map.entry((k.kind, e.value)).or_insert(e);
                }
            }
        }
        map
    })
}

fn cap_table() -> &'static HashMap<&'static str, u32> {
    static T: OnceLock<HashMap<&'static str, u32>> = OnceLock::new();
    T.get_or_init(|| {
        let mut map = HashMap::new();
        for e in grammar::operand_kind(OperandKind::Capability).enumerants {
            map.insert(e.name, e.value);
            for a in e.aliases {
                map.insert(*a, e.value);
            }
        }
        map
    })
}

/// Checks one requirement set; returns the message when unmet.
fn unmet(
    cx: &Ctx,
    what: &str,
    caps: &[&str],
    exts: &[&str],
    version: Option<(u8, u8)>,
    check_caps: bool,
) -> Option<(bool, String)> {
    let mv = cx.m.header.version();
    let cap_ok = !check_caps
        || caps.is_empty()
        || caps
            .iter()
            .any(|c| cap_table().get(c).is_some_and(|v| cx.has_cap(*v)));
    if !cap_ok {
        return Some((
            true,
            format!(
                "{what} requires one of these capabilities: {}",
                caps.join(" ")
            ),
        ));
    }
    let avail = match version {
        Some(v) if mv >= v => true,
        _ if !exts.is_empty() => exts.iter().any(|e| cx.exts.contains(*e)),
        None => true,
        Some(_) => false,
    };
    if !avail {
        if exts.is_empty() {
            let v = version.unwrap_or((1, 0));
            return Some((false, format!("{what} requires SPIR-V {}.{}", v.0, v.1)));
        }
        return Some((
            false,
            format!(
                "{what} requires one of these extensions: {}",
                exts.join(" ")
            ),
        ));
    }
    None
}

fn requirements(cx: &mut Ctx) {
    let m = cx.m;
    let table = enum_table();
    let mut found: Vec<(usize, bool, String)> = Vec::new();
    // Requirements depend only on the opcode or enumerant (the module's capabilities are
    // fixed), so each is decided once; messages are built only for failures.
    let mut op_ok: FxMap<u16, bool> = FxMap::default();
    let mut enum_ok: FxMap<(OperandKind, u32, bool), bool> = FxMap::default();
    for (i, inst) in m.instructions.iter().enumerate() {
        let Some(d) = crate::ctx::desc(inst.opcode) else {
            continue;
        };
        if let Some(lv) = d.last_version
            && m.header.version() > lv
        {
            found.push((
                i,
                false,
                format!("{} was removed after SPIR-V {}.{}", d.name, lv.0, lv.1),
            ));
        }
        let ok = *op_ok.entry(inst.opcode).or_insert_with(|| {
            unmet(cx, d.name, d.capabilities, d.extensions, d.version, true).is_none()
        });
        if !ok
            && let Some((is_cap, msg)) =
                unmet(cx, d.name, d.capabilities, d.extensions, d.version, true)
        {
            found.push((i, is_cap, msg));
        }
        for (n, o) in inst.operands.iter().enumerate() {
            let Some(kind) = o.kind else { continue };
            let category = grammar::operand_kind(kind).category;
            if !matches!(
                category,
                OperandCategory::ValueEnum | OperandCategory::BitEnum
            ) {
                continue;
            }
            let v = inst.at(o);
            // OpCapability's own operand lists implicit declarations, not requirements.
            let check_caps = !(inst.opcode == op::Capability && n == 0);
            let mut one = |value: u32| {
                let Some(e) = table.get(&(kind, value)) else {
                    return;
                };
                if let Some(lv) = e.last_version
                    && m.header.version() > lv
                {
                    found.push((
                        i,
                        false,
                        format!(
                            "{} {} was removed after SPIR-V {}.{}",
                            grammar::operand_kind(kind).name,
                            e.name,
                            lv.0,
                            lv.1
                        ),
                    ));
                }
                let ok = *enum_ok.entry((kind, value, check_caps)).or_insert_with(|| {
                    unmet(
                        cx,
                        e.name,
                        e.capabilities,
                        e.extensions,
                        e.version,
                        check_caps,
                    )
                    .is_none()
                });
                if !ok {
                    let what = format!("{} {}", grammar::operand_kind(kind).name, e.name);
                    if let Some((c, msg)) = unmet(
                        cx,
                        &what,
                        e.capabilities,
                        e.extensions,
                        e.version,
                        check_caps,
                    ) {
                        found.push((i, c, msg));
                    }
                }
            };
            if category == OperandCategory::ValueEnum {
                one(v);
            } else {
                let mut bits = v;
                while bits != 0 {
                    let b = bits & bits.wrapping_neg();
                    bits &= bits - 1;
                    one(b);
                }
            }
        }
    }
    for (i, is_cap, msg) in found {
        let rule = if is_cap {
            &CORE_CAPABILITY
        } else if msg.contains("SPIR-V 1.") {
            &CORE_VERSION
        } else {
            &CORE_EXTENSION
        };
        cx.err(rule, i, msg);
    }
}

/// Operand positions (by opcode) that may legitimately name a function id.
fn function_operand_ok(inst: &Instruction, n: usize) -> bool {
    match inst.opcode {
        op::FunctionCall => n == 2,
        op::EntryPoint | op::ExecutionMode | op::ExecutionModeId => n == 1 || n == 0,
        op::Name | op::Decorate | op::DecorateId | op::DecorateString | op::GroupDecorate => true,
        // Callbacks of SPV_NV_cooperative_matrix2 (DecodeFunc, CombineFunc, Func).
        op::CooperativeMatrixLoadTensorNV | op::CooperativeMatrixStoreTensorNV => n >= 6,
        op::CooperativeMatrixReduceNV => n == 4,
        op::CooperativeMatrixPerElementOpNV => n == 3,
        op::ExtInst | op::ExtInstWithForwardRefsKHR => true,
        op::Function => false,
        _ => {
            let class = crate::ctx::desc(inst.opcode).map(|d| d.class).unwrap_or("");
            // Vendor function-pointer and enqueue instructions.
            class == "Reserved"
                && crate::ctx::desc(inst.opcode).is_some_and(|d| d.name.contains("FunctionPointer"))
                || inst.opcode == op::EnqueueKernel
        }
    }
}

fn functions(cx: &mut Ctx) {
    let m = cx.m;
    for (i, inst) in m.instructions.iter().enumerate() {
        for (n, o) in inst.operands.iter().enumerate() {
            if o.kind != Some(OperandKind::IdRef) {
                continue;
            }
            let id = inst.at(o);
            if cx.def_op(id) == op::Function && !function_operand_ok(inst, n) {
                cx.err(
                    &CORE_FUNCTION_USE,
                    i,
                    format!("function {} cannot be used as this operand", cx.name(id)),
                );
            }
        }
        if inst.opcode == op::FunctionCall {
            let callee = inst.w(2).unwrap_or(0);
            let Some(f) = m.function(callee) else {
                cx.err(
                    &CORE_FUNCTION_USE,
                    i,
                    format!("{} is not a function", cx.name(callee)),
                );
                continue;
            };
            let fdef = &m.instructions[f.def];
            if fdef.result_type != inst.result_type {
                cx.err(
                    &CORE_FUNCTION_USE,
                    i,
                    "OpFunctionCall's result type differs from the callee's return type",
                )
                .at(f.def, "callee");
            }
            let args = inst.operands.len().saturating_sub(3);
            if args != f.params.len() {
                cx.err(
                    &CORE_FUNCTION_USE,
                    i,
                    format!(
                        "{} arguments passed, the callee takes {}",
                        args,
                        f.params.len()
                    ),
                )
                .at(f.def, "callee");
            } else {
                for (k, &p) in f.params.iter().enumerate() {
                    let a = inst.w(3 + k).unwrap_or(0);
                    let pt = m.instructions[p].result_type.unwrap_or(0);
                    if cx.vty(a) != pt {
                        cx.err(
                            &CORE_FUNCTION_USE,
                            i,
                            format!("argument {k} does not have the parameter's type"),
                        )
                        .at(p, "parameter");
                    }
                }
            }
        }
    }
    for f in m.functions() {
        let fdef = &m.instructions[f.def];
        for b in &f.blocks {
            let t = b.body.end - 1;
            let term = &m.instructions[t];
            if term.opcode == op::ReturnValue {
                let v = term.w(0).unwrap_or(0);
                if fdef.result_type.is_some_and(|rt| cx.vty(v) != rt) {
                    cx.err(
                        &CORE_FUNCTION_TYPE,
                        t,
                        "OpReturnValue's value does not have the function's return type",
                    )
                    .at(f.def, "function");
                }
            } else if term.opcode == op::Return
                && fdef.result_type.is_some_and(|rt| cx.ty(rt) != Ty::Void)
            {
                cx.err(
                    &CORE_FUNCTION_TYPE,
                    t,
                    "OpReturn in a function that returns a value",
                )
                .at(f.def, "function");
            }
        }
        let ft = fdef.w(3).unwrap_or(0);
        let Some(tdef) = cx.def(ft) else { continue };
        let t = &m.instructions[tdef];
        if t.opcode != op::TypeFunction {
            cx.err(
                &CORE_FUNCTION_TYPE,
                f.def,
                "OpFunction's Function Type must be an OpTypeFunction",
            );
            continue;
        }
        if t.w(1) != fdef.result_type {
            cx.err(
                &CORE_FUNCTION_TYPE,
                f.def,
                "OpFunction's result type differs from its function type's return type",
            )
            .at(tdef, "function type");
        }
        let np = t.operands.len().saturating_sub(2);
        if np != f.params.len() {
            cx.err(
                &CORE_FUNCTION_TYPE,
                f.def,
                format!(
                    "the function type has {np} parameters, the function declares {}",
                    f.params.len()
                ),
            )
            .at(tdef, "function type");
        } else {
            for (k, &p) in f.params.iter().enumerate() {
                if m.instructions[p].result_type != t.w(2 + k) {
                    cx.err(
                        &CORE_FUNCTION_TYPE,
                        p,
                        format!("parameter {k} differs from the function type"),
                    )
                    .at(tdef, "function type");
                }
            }
        }
        if f.blocks.is_empty() && !cx.has_cap(capability::Linkage) {
            cx.err(
                &CORE_FUNCTION_TYPE,
                f.def,
                "a function declaration without a body needs the Linkage capability",
            );
        }
    }
}

fn control_flow(cx: &mut Ctx, cfg: &Cfg) {
    let m = cx.m;
    let mut merge_used: FxMap<u32, usize> = FxMap::default();
    for f in m.functions() {
        for b in &f.blocks {
            let bn = cfg.block_of[b.label];
            let term_i = b.body.end - 1;
            let term = &m.instructions[term_i];
            let same_fn = |cx: &Ctx, l: u32| -> bool {
                cx.def_op(l) == op::Label
                    && cfg
                        .by_label
                        .get(&l)
                        .is_some_and(|&x| cfg.func[x as usize] == cfg.func[bn as usize])
            };
            for t in coopmat_spirv::cfg::successors(term) {
                if !same_fn(cx, t) {
                    cx.err(
                        &CORE_CFG_TARGET,
                        term_i,
                        format!(
                            "branch target {} is not a block of this function",
                            cx.name(t)
                        ),
                    );
                }
            }
            for i in b.body.clone() {
                let inst = &m.instructions[i];
                if !matches!(inst.opcode, op::SelectionMerge | op::LoopMerge) {
                    continue;
                }
                let is_loop = inst.opcode == op::LoopMerge;
                if i + 1 != term_i {
                    cx.err(
                        &CORE_CFG_MERGE,
                        i,
                        "a merge instruction must immediately precede the block's terminator",
                    );
                } else if is_loop && !matches!(term.opcode, op::Branch | op::BranchConditional) {
                    cx.err(
                        &CORE_CFG_MERGE,
                        i,
                        "OpLoopMerge must be followed by OpBranch or OpBranchConditional",
                    );
                } else if !is_loop && !matches!(term.opcode, op::BranchConditional | op::Switch) {
                    cx.err(
                        &CORE_CFG_MERGE,
                        i,
                        "OpSelectionMerge must be followed by OpBranchConditional or OpSwitch",
                    );
                }
                let mut targets = vec![(inst.w(0).unwrap_or(0), "merge block")];
                if is_loop {
                    targets.push((inst.w(1).unwrap_or(0), "continue target"));
                }
                for (k, (t, what)) in targets.into_iter().enumerate() {
                    if !same_fn(cx, t) {
                        cx.err(
                            &CORE_CFG_TARGET,
                            i,
                            format!("{what} {} is not a block of this function", cx.name(t)),
                        );
                        continue;
                    }
                    let tb = cfg.by_label[&t];
                    if k == 0 {
                        if let Some(&prev) = merge_used.get(&t) {
                            cx.err(
                                &CORE_CFG_MERGE,
                                i,
                                format!(
                                    "block {} is already the merge block of another header",
                                    cx.name(t)
                                ),
                            )
                            .at(prev, "other header");
                        } else {
                            merge_used.insert(t, i);
                        }
                        if t == b.id {
                            cx.err(&CORE_CFG_MERGE, i, "a header cannot be its own merge block");
                        }
                    }
                    if cfg.reachable[bn as usize]
                        && cfg.reachable[tb as usize]
                        && !cfg.dominates(bn, tb)
                    {
                        cx.err(
                            &CORE_CFG_MERGE,
                            i,
                            format!(
                                "header {} does not dominate its {what} {}",
                                cx.name(b.id),
                                cx.name(t)
                            ),
                        );
                    }
                }
            }
            // OpPhi only at the start of a block.
            let mut leading = true;
            for i in b.body.clone() {
                let o = m.instructions[i].opcode;
                if o == op::Phi {
                    if !leading {
                        cx.err(
                            &CORE_CFG_MERGE,
                            i,
                            "OpPhi must appear before all non-OpPhi instructions of a block",
                        );
                    }
                } else if !matches!(o, op::Line | op::NoLine) {
                    leading = false;
                }
            }
            let _ = is_terminator(term.opcode);
        }
    }
}

fn entry_points(cx: &mut Ctx) {
    let m = cx.m;
    let mut eps: FxSet<u32> = FxSet::default();
    for (i, inst) in m.instructions.iter().enumerate() {
        match inst.opcode {
            op::EntryPoint => {
                let f = inst.w(1).unwrap_or(0);
                eps.insert(f);
                match m.function(f) {
                    Some(func) if !func.blocks.is_empty() => {}
                    _ => {
                        cx.err(
                            &CORE_ENTRY_POINT,
                            i,
                            format!(
                                "entry point {} is not a function defined in this module",
                                cx.name(f)
                            ),
                        );
                    }
                }
                for n in 3..inst.operands.len() {
                    let v = inst.w(n).unwrap_or(0);
                    if cx.def_op(v) != op::Variable && cx.def_op(v) != op::UntypedVariableKHR {
                        cx.err(
                            &CORE_ENTRY_POINT,
                            i,
                            format!("interface id {} is not a global variable", cx.name(v)),
                        );
                    }
                }
            }
            op::ExecutionMode | op::ExecutionModeId => {
                if inst.opcode == op::ExecutionMode
                    && inst.w(1) == Some(coopmat_spirv::grammar::execution_mode::LocalSize)
                    && (2..5).any(|k| inst.w(k) == Some(0))
                {
                    cx.err(
                        &CORE_ENTRY_POINT,
                        i,
                        "LocalSize must not have a zero dimension",
                    );
                }
                let f = inst.w(0).unwrap_or(0);
                if !eps.contains(&f) {
                    cx.err(
                        &CORE_ENTRY_POINT,
                        i,
                        format!("execution mode target {} is not an entry point", cx.name(f)),
                    );
                }
            }
            op::MemberDecorate | op::MemberDecorateString => {
                let t = inst.w(0).unwrap_or(0);
                if cx.def_op(t) != op::TypeStruct {
                    cx.err(
                        &CORE_DECORATION,
                        i,
                        format!(
                            "member decoration target {} is not a struct type",
                            cx.name(t)
                        ),
                    );
                } else if let Some(d) = cx.def(t) {
                    let members = m.instructions[d].operands.len().saturating_sub(1);
                    if inst.w(1).unwrap_or(0) as usize >= members {
                        cx.err(
                            &CORE_DECORATION,
                            i,
                            format!(
                                "member index {} is out of range ({members} members)",
                                inst.w(1).unwrap_or(0)
                            ),
                        );
                    }
                }
            }
            op::Decorate | op::DecorateId | op::DecorateString => {
                let t = inst.w(0).unwrap_or(0);
                let top = cx.def_op(t);
                if matches!(top, op::Decorate | op::MemberDecorate) {
                    cx.err(
                        &CORE_DECORATION,
                        i,
                        "a decoration cannot target a decoration instruction",
                    );
                }
                // Decorations whose target kind is fixed (SPIR-V 3.20 Decoration).
                let dec = inst.w(1).unwrap_or(u32::MAX);
                let want: Option<(&str, bool)> = match dec {
                    decoration::ArrayStride => Some((
                        "an array, runtime array or pointer type",
                        matches!(
                            top,
                            op::TypeArray
                                | op::TypeRuntimeArray
                                | op::TypePointer
                                | op::TypeUntypedPointerKHR
                        ),
                    )),
                    decoration::Block | decoration::BufferBlock => {
                        Some(("a structure type", top == op::TypeStruct))
                    }
                    decoration::Binding | decoration::DescriptorSet => Some((
                        "a variable",
                        matches!(top, op::Variable | op::UntypedVariableKHR),
                    )),
                    decoration::SpecId => Some((
                        "a scalar specialization constant",
                        matches!(
                            top,
                            op::SpecConstant | op::SpecConstantTrue | op::SpecConstantFalse
                        ),
                    )),
                    _ => None,
                };
                if let Some((what, false)) = want {
                    let name = grammar::enumerant(OperandKind::Decoration, dec)
                        .map(|e| e.name)
                        .unwrap_or("?");
                    cx.err(&CORE_DECORATION, i, format!("{name} must decorate {what}"))
                        .rel_id(t, "target");
                }
            }
            _ => {}
        }
    }
}

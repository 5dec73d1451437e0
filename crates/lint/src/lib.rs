//! `coopmat lint`: finds the uniformity bugs and performance traps of the cooperative-matrix and
//! cooperative-vector family in SPIR-V modules, with the divergence analysis of
//! `coopmat-analysis` explaining each finding as a chain of values back to its source.
//!
//! Entry points: [`lint_module`] (one module, findings) and the renderers in [`render`].

mod flow;
mod layout;
mod mapping;
mod qcom;
pub mod render;
pub mod rules;
mod source;
mod tensor;

use coopmat_analysis::{Analysis, Level as Uniformity, Step, arg_ids};
use coopmat_spirv::grammar::{self, op};
use coopmat_spirv::info::is_tangled_matrix_instruction as is_matrix_instruction;
use coopmat_spirv::types::Dim;
use coopmat_spirv::{Instruction, Module};
pub use rules::{Level, RULES, Rule};
use serde::Serialize;
pub use source::SourceLoc;
use std::collections::BTreeMap;

/// A finding of a rule at one instruction.
#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    /// The rule's stable name.
    pub rule: &'static str,
    /// Its level after configuration.
    pub level: Level,
    /// What is wrong, in one sentence.
    pub message: String,
    /// The module file.
    pub file: String,
    /// The function (its friendly name).
    pub function: Option<String>,
    /// The instruction, disassembled.
    pub instruction: String,
    /// Index of the instruction in the module.
    #[serde(skip)]
    pub inst: usize,
    /// The source line, when the module carries debug lines.
    pub source: Option<SourceLoc>,
    /// The explanation: from the instruction back to the source of the divergence.
    pub chain: Vec<ChainStep>,
}

/// One step of a finding's explanation.
#[derive(Clone, Debug, Serialize)]
pub struct ChainStep {
    /// The instruction of the step, disassembled.
    pub instruction: String,
    /// Its source line, if known.
    pub source: Option<SourceLoc>,
    /// How uniform the step's value is.
    pub uniformity: &'static str,
    /// What the step says.
    pub note: String,
}

/// Which rules report at which level.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// Levels set by the user, by rule name (`-D`, `-W`, `-A`, the config file).
    pub levels: BTreeMap<String, Level>,
    /// The device profile `coopmat-unsupported-configuration` checks against (`--profile`).
    pub profile: Option<coopmat_val::Profile>,
}

impl Config {
    /// The level of a rule: the user's, else its default.
    pub fn level(&self, rule: &Rule) -> Level {
        self.levels.get(rule.name).copied().unwrap_or(rule.default)
    }
}

/// Lints one module. `file` names it in the findings.
pub fn lint_module(m: &Module, file: &str, config: &Config) -> Vec<Finding> {
    let a = Analysis::run(m);
    let cx = Cx::new(m, file, &a, config);
    let mut out = Vec::new();
    for f in m.functions() {
        for b in &f.blocks {
            for i in b.body.clone() {
                cx.instruction(i, b.id, &mut out);
            }
        }
    }
    cx.workgroup_size(&mut out);
    cx.unsupported_configuration(&mut out);
    out.sort_by_key(|f| f.inst);
    out
}

/// The functions the implementation calls per element (DecodeFunc of a tensor load, CombineFunc
/// of a reduction, Func of a per-element op) and everything they call, each with the
/// instruction that names its callback.
fn callbacks(m: &Module) -> rustc_hash::FxHashMap<u32, usize> {
    let mut out = rustc_hash::FxHashMap::default();
    let mut work = Vec::new();
    for (i, inst) in m.instructions.iter().enumerate() {
        if matches!(
            inst.opcode,
            op::CooperativeMatrixLoadTensorNV
                | op::CooperativeMatrixReduceNV
                | op::CooperativeMatrixPerElementOpNV
        ) {
            for id in arg_ids(inst) {
                if m.function(id).is_some() && !out.contains_key(&id) {
                    out.insert(id, i);
                    work.push(id);
                }
            }
        }
    }
    while let Some(f) = work.pop() {
        let naming = out[&f];
        let Some(func) = m.function(f) else { continue };
        for b in &func.blocks {
            for i in b.body.clone() {
                let inst = &m.instructions[i];
                if inst.opcode == op::FunctionCall
                    && let Some(callee) = inst.word(inst.first_arg())
                    && !out.contains_key(&callee)
                {
                    out.insert(callee, naming);
                    work.push(callee);
                }
            }
        }
    }
    out
}

/// The subgroup size `coopmat-workgroup-size-vs-subgroup` checks against without a profile (that
/// of NVIDIA's GPUs, the devices the family runs on; a profile gives its own).
const DEFAULT_SUBGROUP_SIZE: u64 = 32;

/// What the rules share while linting one module.
struct Cx<'a> {
    m: &'a Module,
    a: &'a Analysis<'a>,
    file: &'a str,
    config: &'a Config,
    /// Made on the first finding: most modules have none.
    text: std::cell::OnceCell<Vec<String>>,
    lines: std::cell::OnceCell<source::Lines>,
    names: std::cell::OnceCell<coopmat_spirv::dis::FriendlyNames>,
    /// Whether the module declares any cooperative matrix type (most do not).
    has_matrices: bool,
    /// Functions the implementation calls per element, directly or through calls: function id ->
    /// the instruction that names the callback.
    callbacks: rustc_hash::FxHashMap<u32, usize>,
    /// Where values come from through variables and calls (the tensor-layout and element-access
    /// rules).
    flow: flow::Flow,
}

impl<'a> Cx<'a> {
    fn new(m: &'a Module, file: &'a str, a: &'a Analysis<'a>, config: &'a Config) -> Cx<'a> {
        Cx {
            m,
            a,
            file,
            config,
            text: std::cell::OnceCell::new(),
            lines: std::cell::OnceCell::new(),
            names: std::cell::OnceCell::new(),
            callbacks: callbacks(m),
            flow: flow::Flow::new(m),
            has_matrices: m.instructions.iter().any(|i| {
                matches!(
                    i.opcode,
                    op::TypeCooperativeMatrixKHR | op::TypeCooperativeMatrixNV
                )
            }),
        }
    }

    fn name(&self, id: u32) -> String {
        let names = self.names.get_or_init(|| {
            coopmat_spirv::dis::FriendlyNames::from_instructions(
                self.m.header.bound,
                &self.m.instructions,
            )
        });
        format!("%{}", names.name(id))
    }

    fn source(&self, i: usize) -> Option<SourceLoc> {
        self.lines.get_or_init(|| source::Lines::new(self.m)).at(i)
    }

    fn text(&self, i: usize) -> String {
        let text = self
            .text
            .get_or_init(|| coopmat_spirv::dis::instruction_texts(self.m));
        text.get(i).cloned().unwrap_or_else(|| {
            grammar::instruction(self.m.instructions[i].opcode)
                .map_or("Op?".into(), |d| d.name.to_string())
        })
    }

    fn finding(
        &self,
        rule: &'static Rule,
        i: usize,
        message: String,
        chain: Vec<Step>,
    ) -> Option<Finding> {
        let level = self.config.level(rule);
        if level == Level::Allow {
            return None;
        }
        Some(Finding {
            rule: rule.name,
            level,
            message,
            file: self.file.to_string(),
            function: self.a.function_of(i).map(|f| self.name(f)),
            instruction: self.text(i),
            inst: i,
            source: self.source(i),
            chain: chain
                .into_iter()
                .map(|s| ChainStep {
                    instruction: self.text(s.inst),
                    source: self.source(s.inst),
                    uniformity: s.level.as_str(),
                    note: self.rename(&s.note),
                })
                .collect(),
        })
    }

    /// Replaces `%123` in an analysis note by the friendly name.
    fn rename(&self, note: &str) -> String {
        let mut out = String::with_capacity(note.len());
        let mut rest = note;
        while let Some(p) = rest.find('%') {
            out.push_str(&rest[..p]);
            let digits: String = rest[p + 1..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            match digits.parse::<u32>() {
                Ok(id) => out.push_str(&self.name(id)),
                Err(_) => {
                    out.push('%');
                    out.push_str(&digits);
                }
            }
            rest = &rest[p + 1 + digits.len()..];
        }
        out.push_str(rest);
        out
    }

    /// The scope of a cooperative matrix instruction: of its result or first matrix operand.
    fn matrix_scope(&self, inst: &Instruction) -> Option<u32> {
        let tys = inst
            .result_type
            .into_iter()
            .chain(arg_ids(inst).filter_map(|id| self.m.type_of(id)));
        for t in tys {
            if let Some(cm) = self.m.type_view(t).coop_matrix() {
                return Some(match self.m.dim(cm.scope) {
                    Dim::Const(v) | Dim::Spec { default: v, .. } => v as u32,
                    Dim::Computed | Dim::Unknown => grammar::scope::Subgroup,
                });
            }
        }
        None
    }

    fn is_matrix(&self, id: u32) -> bool {
        self.m
            .type_of(id)
            .is_some_and(|t| self.m.type_view(t).coop_matrix().is_some())
    }

    fn instruction(&self, i: usize, block: u32, out: &mut Vec<Finding>) {
        let inst = &self.m.instructions[i];
        if let Some(&naming) = self.a.function_of(i).and_then(|f| self.callbacks.get(&f)) {
            // Inside a callback only this rule speaks: control and operands there are per
            // element by definition.
            if self.is_tangled(inst) {
                let op_name = grammar::instruction(inst.opcode).map_or("Op?", |d| d.name);
                let msg = format!(
                    "{op_name} is tangled, but its function runs as a per-element callback of the implementation"
                );
                let step = Step {
                    inst: naming,
                    level: Uniformity::Divergent,
                    note: "the function is used as a callback here (or called from one)".into(),
                };
                out.extend(self.finding(&rules::TANGLED_IN_CALLBACK, i, msg, vec![step]));
            }
            return;
        }
        if self.has_matrices
            && (is_matrix_instruction(inst.opcode)
                || (!not_tangled(inst.opcode) && self.matrix_scope(inst).is_some()))
        {
            self.cooperative_matrix(i, block, out);
        }
        if matches!(
            inst.opcode,
            op::CooperativeMatrixStoreKHR | op::CooperativeMatrixStoreNV
        ) {
            self.store_stride_overlap(i, out);
        }
        if matches!(
            inst.opcode,
            op::CooperativeMatrixLoadKHR | op::CooperativeMatrixStoreKHR
        ) {
            self.layout_for_use(i, out);
        }
        if matches!(
            inst.opcode,
            op::CooperativeMatrixLoadTensorNV | op::CooperativeMatrixStoreTensorNV
        ) {
            self.tensor_block_sizes(i, out);
        }
        if self.has_matrices
            && matches!(
                inst.opcode,
                op::CompositeExtract | op::CompositeInsert | op::Load | op::Store
            )
        {
            self.mapping_dependence(i, out);
        }
        if matches!(
            inst.opcode,
            op::CompositeConstructCoopMatQCOM | op::CompositeExtractCoopMatQCOM
        ) {
            self.qcom_subgroup_requirements(i, out);
        }
        if is_coopvec_matrix_op(inst.opcode)
            || matches!(
                inst.opcode,
                op::CooperativeVectorLoadNV | op::CooperativeVectorStoreNV
            )
        {
            self.coopvec_layout_and_alignment(i, out);
        }
        if is_coopvec_matrix_op(inst.opcode) {
            self.cooperative_vector(i, block, out);
        }
    }

    /// `coopmat-nonuniform-operand` and `coopmat-divergent-control-flow`.
    fn cooperative_matrix(&self, i: usize, block: u32, out: &mut Vec<Finding>) {
        let inst = &self.m.instructions[i];
        let scope = self.matrix_scope(inst).unwrap_or(grammar::scope::Subgroup);
        let limit = Uniformity::limit_for_scope(scope);
        let scope_name =
            grammar::enumerant(grammar::OperandKind::Scope, scope).map_or("?", |e| e.name);
        let op_name = grammar::instruction(inst.opcode).map_or("Op?", |d| d.name);
        let control = self.a.control(block);
        if control > limit {
            let msg = format!(
                "{op_name} runs in control flow that is {} at its {scope_name} scope: every invocation of the scope instance must execute it together",
                control.as_str()
            );
            out.extend(self.finding(
                &rules::DIVERGENT_CONTROL_FLOW,
                i,
                msg,
                self.a.explain_control(block),
            ));
        }
        let desc = grammar::instruction(inst.opcode);
        for (k, o) in inst.operands.iter().enumerate() {
            if !matches!(
                o.kind,
                Some(grammar::OperandKind::IdRef | grammar::OperandKind::IdScope)
            ) {
                continue;
            }
            let id = inst.words[o.offset as usize];
            // The QCOM construct's Source Array is each invocation's own row or column
            // (SPV_QCOM_cooperative_matrix_conversion): per invocation by definition.
            if self.m.function(id).is_some()
                || (inst.opcode == op::CompositeConstructCoopMatQCOM && k == inst.first_arg())
            {
                continue;
            }
            let level = self.a.value_at(id, block);
            if level <= limit {
                continue;
            }
            let chain = self.a.explain_value(id, block);
            // A matrix made non-uniform by another cooperative instruction's operands is
            // reported there, once.
            if self.is_matrix(id)
                && chain.iter().any(|s| {
                    let d = &self.m.instructions[s.inst];
                    is_matrix_instruction(d.opcode)
                        || (!not_tangled(d.opcode) && self.matrix_scope(d).is_some())
                })
            {
                continue;
            }
            let operand = desc
                .and_then(|d| d.operands.get(k))
                .map(|d| d.name)
                .filter(|n| !n.is_empty())
                .map_or_else(|| format!("operand {k}"), |n| format!("operand {n}"));
            let msg = format!(
                "{operand} ({}) of {op_name} is {}; it must be dynamically uniform within each {scope_name} instance",
                self.name(id),
                level.as_str()
            );
            out.extend(self.finding(&rules::NONUNIFORM_OPERAND, i, msg, chain));
        }
    }

    /// Tangled instructions (SPV_KHR_cooperative_matrix and SPV_NV_cooperative_matrix2's lists, and
    /// the group, subgroup and barrier instructions that need their scope to run together).
    fn is_tangled(&self, inst: &Instruction) -> bool {
        let class = grammar::instruction(inst.opcode).map_or("", |d| d.class);
        inst.opcode == op::ControlBarrier
            || matches!(class, "Group" | "Non-Uniform" | "Derivative")
            || is_matrix_instruction(inst.opcode)
            || (!not_tangled(inst.opcode) && self.matrix_scope(inst).is_some())
    }

    /// `coopmat-workgroup-size-vs-subgroup`.
    fn workgroup_size(&self, out: &mut Vec<Finding>) {
        let m = self.m;
        let subgroup_matrices = m.instructions.iter().any(|i| {
            matches!(
                i.opcode,
                op::TypeCooperativeMatrixKHR | op::TypeCooperativeMatrixNV
            ) && i
                .word(2)
                .is_some_and(|s| m.constant_u64(s) == Some(grammar::scope::Subgroup as u64))
        });
        let [Some(x), Some(y), Some(z)] = self.a.workgroup_size() else {
            return;
        };
        let total = x.saturating_mul(y).saturating_mul(z);
        let subgroup = match &self.config.profile {
            Some(p) if p.subgroup_size > 0 => u64::from(p.subgroup_size),
            _ => DEFAULT_SUBGROUP_SIZE,
        };
        if !subgroup_matrices || total % subgroup == 0 {
            return;
        }
        // Point at what states the size: the execution mode, else the entry point.
        let Some(i) = m
            .instructions
            .iter()
            .position(|i| {
                matches!(i.opcode, op::ExecutionMode | op::ExecutionModeId)
                    && matches!(
                        i.word(1),
                        Some(
                            grammar::execution_mode::LocalSize
                                | grammar::execution_mode::LocalSizeId
                        )
                    )
            })
            .or_else(|| {
                m.instructions
                    .iter()
                    .position(|i| i.opcode == op::EntryPoint)
            })
        else {
            return;
        };
        let msg = format!(
            "the workgroup has {total} invocations ({x}x{y}x{z}), not a multiple of the subgroup size {subgroup}{}: its last subgroup has {} inactive invocations, and the module's Subgroup-scope cooperative matrix instructions need every invocation of the subgroup",
            match &self.config.profile {
                Some(p) if p.subgroup_size > 0 => format!(" of {}", p.name),
                _ => String::new(),
            },
            subgroup - total % subgroup
        );
        out.extend(self.finding(&rules::WORKGROUP_SIZE_VS_SUBGROUP, i, msg, Vec::new()));
    }

    /// `coopmat-unsupported-configuration`: the validator's device-profile rules (matrix types,
    /// MulAdd tuples, scopes, cooperative-vector combinations, ...) against `--profile`.
    fn unsupported_configuration(&self, out: &mut Vec<Finding>) {
        let Some(profile) = &self.config.profile else {
            return;
        };
        let opts = coopmat_val::ValidateOptions {
            target_env: coopmat_val::TargetEnv::Vulkan(3),
            profile: Some(profile.clone()),
        };
        let entry = self
            .m
            .instructions
            .iter()
            .position(|i| i.opcode == op::EntryPoint)
            .unwrap_or(0);
        for d in coopmat_val::validate(self.m, &opts) {
            if !d.rule_id().starts_with("VK-Profile-") {
                continue;
            }
            let msg = format!("{} ({}): {}", d.rule_id(), profile.name, d.message);
            let at = d.inst.unwrap_or(entry);
            out.extend(self.finding(&rules::UNSUPPORTED_CONFIGURATION, at, msg, Vec::new()));
        }
    }

    /// `coopmat-store-stride-overlap`: a store whose constant stride is shorter than one row
    /// (column) of the matrix.
    fn store_stride_overlap(&self, i: usize, out: &mut Vec<Finding>) {
        use coopmat_spirv::types::Type;
        let m = self.m;
        let inst = &m.instructions[i];
        let word = |k: usize| inst.word(k).unwrap_or(0);
        // KHR: Pointer, Object, MemoryLayout, Stride; NV: Pointer, Object, Stride, ColumnMajor.
        let (ptr, obj) = (word(0), word(1));
        let (stride, row_major) = if inst.opcode == op::CooperativeMatrixStoreKHR {
            let layout = m.constant_u64(word(2));
            let row_major = match layout.map(|l| l as u32) {
                Some(grammar::cooperative_matrix_layout::RowMajorKHR) => true,
                Some(grammar::cooperative_matrix_layout::ColumnMajorKHR) => false,
                _ => return,
            };
            (inst.word(3), row_major)
        } else {
            let column_major = match m.def(word(3)).map(|d| d.opcode) {
                Some(op::ConstantTrue) => true,
                Some(op::ConstantFalse) => false,
                _ => return,
            };
            (inst.word(2), !column_major)
        };
        let Some(stride) = stride.and_then(|s| m.constant_u64(s)) else {
            return;
        };
        let scalar = |t: u32| -> Option<u64> {
            match m.type_view(t) {
                Type::Int { width, .. } | Type::Float { width, .. } => Some(width as u64 / 8),
                _ => None,
            }
        };
        let bytes = |t: u32| -> Option<u64> {
            match m.type_view(t) {
                Type::Vector { comp, count } => Some(count as u64 * scalar(comp)?),
                _ => scalar(t),
            }
        };
        let Some(ids) = m
            .type_of(obj)
            .map(|t| m.type_view(t))
            .and_then(|t| t.coop_matrix())
        else {
            return;
        };
        let (Some(rows), Some(cols), Some(comp)) = (
            m.constant_u64(ids.rows),
            m.constant_u64(ids.cols),
            bytes(ids.comp),
        ) else {
            return;
        };
        let pointee = match m.type_of(ptr).map(|t| m.type_view(t)) {
            Some(Type::Pointer { pointee, .. }) => bytes(pointee),
            _ => None,
        };
        let Some(pointee) = pointee else { return };
        let (lines, line_elems, what) = if row_major {
            (rows, cols, "row")
        } else {
            (cols, rows, "column")
        };
        let (line_bytes, step) = (line_elems * comp, stride * pointee);
        if lines > 1 && step < line_bytes {
            let msg = format!(
                "{}: the stride ({stride} x {pointee} bytes = {step} bytes) is shorter than one {what} of the {rows}x{cols} matrix ({line_bytes} bytes): the {lines} {what}s it stores overlap, and which value stays in the shared memory is undefined",
                grammar::instruction(inst.opcode).map_or("?", |d| d.name)
            );
            out.extend(self.finding(&rules::STORE_STRIDE_OVERLAP, i, msg, Vec::new()));
        }
    }

    /// `coopvec-layout-and-alignment`: the constant operands of a cooperative-vector instruction
    /// against the Vulkan environment's alignment and layout rules.
    fn coopvec_layout_and_alignment(&self, i: usize, out: &mut Vec<Finding>) {
        use coopmat_spirv::coopvec::{ComponentType, MatrixLayout};
        let m = self.m;
        let inst = &m.instructions[i];
        let Some(desc) = grammar::instruction(inst.opcode) else {
            return;
        };
        // The id operand the grammar names `name`, and its constant value.
        let operand = |name: &str| -> Option<(u32, Option<u64>)> {
            let k = desc.operands.iter().position(|o| o.name == name)?;
            let o = inst.operands.get(k)?;
            (o.kind == Some(grammar::OperandKind::IdRef)).then(|| {
                let id = inst.words[o.offset as usize];
                (id, m.constant_u64(id))
            })
        };
        let mut problems: Vec<String> = Vec::new();
        let mut aligned = |name: &str, align: u64, vuid: &str| {
            if let Some((id, Some(v))) = operand(name)
                && v % align != 0
            {
                problems.push(format!(
                    "{name} ({} = {v}) is not a multiple of {align} bytes ({vuid})",
                    self.name(id)
                ));
            }
        };
        let (offset_align, offset_vuid) = match inst.opcode {
            op::CooperativeVectorLoadNV | op::CooperativeVectorStoreNV => {
                (16, "VUID-RuntimeSpirv-OpCooperativeVectorLoadNV-10099")
            }
            op::CooperativeVectorReduceSumAccumulateNV => (
                16,
                "VUID-RuntimeSpirv-OpCooperativeVectorReduceSumAccumulateNV-10100",
            ),
            op::CooperativeVectorOuterProductAccumulateNV => (
                64,
                "VUID-RuntimeSpirv-OpCooperativeVectorOuterProductAccumulateNV-10101",
            ),
            _ => (0, ""),
        };
        if offset_align > 0 {
            aligned("Offset", offset_align, offset_vuid);
        }
        aligned(
            "MatrixOffset",
            64,
            "VUID-RuntimeSpirv-OpCooperativeVectorMatrixMulNV-10097",
        );
        aligned(
            "BiasOffset",
            16,
            "VUID-RuntimeSpirv-OpCooperativeVectorMatrixMulAddNV-10098",
        );
        let layout = operand("MemoryLayout")
            .and_then(|(_, v)| v)
            .and_then(|v| u32::try_from(v).ok())
            .and_then(MatrixLayout::from_raw);
        let is_matmul = matches!(
            inst.opcode,
            op::CooperativeVectorMatrixMulNV | op::CooperativeVectorMatrixMulAddNV
        );
        if let Some(layout) = layout.filter(|l| !l.is_optimal())
            && is_matmul
        {
            aligned(
                "MatrixStride",
                16,
                "VUID-RuntimeSpirv-OpCooperativeVectorMatrixMulNV-10096",
            );
            let fp8 = operand("MatrixInterpretation")
                .and_then(|(_, v)| v)
                .and_then(|v| u32::try_from(v).ok())
                .and_then(ComponentType::from_raw)
                .filter(|t| matches!(t, ComponentType::E4M3 | ComponentType::E5M2));
            if let Some(t) = fp8 {
                problems.push(format!(
                    "an {} matrix in the {} layout: 8-bit float matrices need an optimal layout (VUID-RuntimeSpirv-OpCooperativeVectorMatrixMulNV-10090)",
                    t.name(),
                    layout.name()
                ));
            }
            if operand("Transpose")
                .and_then(|(_, v)| v)
                .is_some_and(|v| v != 0)
            {
                problems.push(format!(
                    "Transpose with the {} layout (SPV_NV_cooperative_vector: transposing is not supported for the row- and column-major layouts)",
                    layout.name()
                ));
            }
        }
        if inst.opcode == op::CooperativeVectorOuterProductAccumulateNV
            && let Some(layout) = layout.filter(|l| *l != MatrixLayout::TrainingOptimal)
        {
            problems.push(format!(
                "the {} layout: Vulkan accumulates outer products only into training-optimal matrices (VUID-RuntimeSpirv-OpCooperativeVectorOuterProductAccumulateNV-10093)",
                layout.name()
            ));
        }
        for p in problems {
            let msg = format!("{}: {p}", desc.name);
            out.extend(self.finding(&rules::COOPVEC_LAYOUT_AND_ALIGNMENT, i, msg, Vec::new()));
        }
    }

    /// `coopvec-nonuniform-matrix-operand`.
    fn cooperative_vector(&self, i: usize, block: u32, out: &mut Vec<Finding>) {
        let inst = &self.m.instructions[i];
        let Some(desc) = grammar::instruction(inst.opcode) else {
            return;
        };
        for (k, o) in inst.operands.iter().enumerate() {
            let Some(name) = desc.operands.get(k).map(|d| d.name) else {
                continue;
            };
            if !COOPVEC_MATRIX_OPERANDS.contains(&name)
                || o.kind != Some(grammar::OperandKind::IdRef)
            {
                continue;
            }
            let id = inst.words[o.offset as usize];
            let level = self.a.value_at(id, block);
            if level <= Uniformity::Subgroup {
                continue;
            }
            let chain = self.a.explain_value(id, block);
            let source = chain
                .last()
                .map(|s| self.rename(&s.note))
                .unwrap_or_default();
            let msg = format!(
                "operand {name} ({}) of {} diverges within the subgroup ({source}); the invocations of a subgroup with different matrix operands are serialized, one matrix-vector product per distinct operand tuple (a performance finding: SPV_NV_cooperative_vector requires no uniformity)",
                self.name(id),
                desc.name
            );
            out.extend(self.finding(&rules::COOPVEC_NONUNIFORM_MATRIX_OPERAND, i, msg, chain));
        }
    }
}

/// The matrix-describing operands of the cooperative-vector matrix instructions (the grammar
/// calls the layout `MemoryLayout`, and the accumulate instructions' matrix `Pointer`/`Offset`).
const COOPVEC_MATRIX_OPERANDS: &[&str] = &[
    "Matrix",
    "MatrixOffset",
    "MatrixStride",
    "MatrixInterpretation",
    "MemoryLayout",
    "Transpose",
    "Bias",
    "BiasOffset",
    "BiasInterpretation",
    "Pointer",
    "Offset",
];

fn is_coopvec_matrix_op(opcode: u16) -> bool {
    matches!(
        opcode,
        op::CooperativeVectorMatrixMulNV
            | op::CooperativeVectorMatrixMulAddNV
            | op::CooperativeVectorOuterProductAccumulateNV
            | op::CooperativeVectorReduceSumAccumulateNV
    )
}

/// Instructions that take or make cooperative matrices without being tangled: element access
/// (SPV_KHR_cooperative_matrix issue 11), memory of the invocation, SSA plumbing, the length.
fn not_tangled(opcode: u16) -> bool {
    matches!(
        opcode,
        op::CompositeExtract
            | op::CompositeInsert
            | op::AccessChain
            | op::InBoundsAccessChain
            | op::Load
            | op::Store
            | op::Variable
            | op::Phi
            | op::Select
            | op::CopyObject
            | op::FunctionCall
            | op::ReturnValue
            | op::Undef
            | op::CooperativeMatrixLengthKHR
            | op::CooperativeMatrixLengthNV
            | op::FunctionParameter
            | op::Name
    ) || grammar::instruction(opcode).is_some_and(|d| d.class == "Debug" || d.class == "Annotation")
}

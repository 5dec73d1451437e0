//! Executes a parsed script against an [`Engine`]: buffers, pipelines, `RUN`, `EXPECT`, `COPY`, `REPEAT`.

use crate::parse::{
    self, BindKind, BufferDef, BufferInit, Cmp, ExpectKind, PipelineDef, Script, ShaderDef, Stmt,
    StmtKind, Tolerance,
};
use crate::shader::{self, ShaderError};
use crate::types::{DataType, ElementLayout, Layout, Scalar, Value};
use crate::{clspv, features};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::{Duration, Instant};

/// Raw spec-constant bits by SpecId (zero-extended), as `coopmat-exec` takes them.
pub type SpecMap = HashMap<u32, u64>;

/// What the runner needs from an execution engine.
pub trait Engine {
    /// A compiled pipeline.
    type Pipeline;
    /// Compiles `words` for `entry_point` with `spec`; `subgroup_size` is a `REQUIRED_SIZE`, if any;
    /// `robust` when the script asks for `DEVICE_FEATURE robustBufferAccess` (out-of-bounds accesses
    /// then have Vulkan's robust results instead of being errors).
    fn compile(
        &self,
        words: &[u32],
        entry_point: &str,
        spec: &SpecMap,
        subgroup_size: Option<u32>,
        robust: bool,
    ) -> Result<Self::Pipeline, String>;
    /// The pipeline's workgroup size.
    fn local_size(&self, pipeline: &Self::Pipeline) -> [u32; 3];
    /// The subgroup size the pipeline runs with.
    fn subgroup_size(&self, pipeline: &Self::Pipeline) -> u32;
    /// Runs `groups` workgroups over `buffers` (by (set, binding)), the descriptor arrays
    /// `arrays` (`BIND BUFFER_ARRAY`: one buffer per element) and `push_constants`; returns the
    /// lane-instructions executed (0 if the engine does not count them).
    fn dispatch(
        &self,
        pipeline: &Self::Pipeline,
        buffers: &mut BTreeMap<(u32, u32), Vec<u8>>,
        arrays: &mut BTreeMap<(u32, u32), Vec<Vec<u8>>>,
        push_constants: &mut Vec<u8>,
        groups: [u32; 3],
    ) -> Result<u64, String>;
}

/// Result of one script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Every `EXPECT` held.
    Pass,
    /// Something failed: the reason (line, expected vs got, or the engine's error).
    Fail(String),
    /// The script needs something not available: the reason.
    Skip(String),
}

/// A script's outcome with counters.
#[derive(Debug, Clone)]
pub struct Report {
    /// Pass / fail / skip.
    pub outcome: Outcome,
    /// `RUN`s executed (counting repeats).
    pub runs: u64,
    /// `EXPECT`s checked.
    pub expects: u64,
    /// Time spent in the engine's dispatches.
    pub dispatch_time: Duration,
    /// Lane-instructions the engine reported for all dispatches.
    pub lane_instructions: u64,
}

struct Buffer {
    ty: DataType,
    layout: Layout,
    bytes: Vec<u8>,
}

impl Buffer {
    fn element_layout(&self) -> ElementLayout {
        self.ty.element_layout(self.layout)
    }

    /// Writes `values` from byte `offset` on (the start of an element), by the buffer's element
    /// layout, growing the buffer to whole elements as needed.
    fn set_data(&mut self, offset: usize, values: &[Value]) -> Result<(), String> {
        let el = self.element_layout();
        let per = el.offsets.len();
        let elements = values.len().div_ceil(per);
        let end = elements
            .checked_mul(el.stride)
            .and_then(|n| n.checked_add(offset))
            .filter(|&n| n <= MAX_BUFFER_BYTES)
            .ok_or_else(|| {
                format!(
                    "{} values at byte {offset} exceed the 4 GiB limit",
                    values.len()
                )
            })?;
        if self.bytes.len() < end {
            self.bytes.resize(end, 0);
        }
        let size = el.scalar.size();
        for (v, off) in values.iter().zip(el.value_offsets(offset, end)) {
            el.scalar.encode(*v, &mut self.bytes[off..off + size]);
        }
        Ok(())
    }
}

/// A `DERIVE_PIPELINE`'s definition: the parent's, with the child's name, its shaders added, its
/// subgroup settings if it has any, and its bindings replacing the parent's at the same descriptor
/// set and binding (Amber copies the parent pipeline and applies the child's commands to the copy).
fn derive(parent: &PipelineDef, child: &PipelineDef) -> PipelineDef {
    let mut p = parent.clone();
    p.name = child.name.clone();
    p.derived_from = None;
    p.attach.extend(child.attach.iter().cloned());
    p.optimizations.extend(child.optimizations.iter().cloned());
    if child.subgroup != parse::SubgroupReq::default() {
        p.subgroup = child.subgroup.clone();
    }
    for b in &child.binds {
        p.binds
            .retain(|old| (old.set, old.binding, &old.kind) != (b.set, b.binding, &b.kind));
        p.binds.push(b.clone());
    }
    for v in &child.kernel_values {
        p.kernel_values.retain(|old| old.0 != v.0);
        p.kernel_values.push(v.clone());
    }
    p
}

/// A buffer plain-old-data kernel arguments go into: (set, binding, uniform); None for the push
/// constants.
type PodBuffer = (u32, u32, bool);

/// Whether the pipeline names OpenCL kernel arguments (`BIND ... KERNEL`, `SET KERNEL`).
fn has_kernel_args(p: &PipelineDef) -> bool {
    p.binds.iter().any(|b| b.kernel_arg.is_some()) || !p.kernel_values.is_empty()
}

/// Top-level placeholders such as `{device_features}` mark a template that a generator fills in.
fn template_placeholders(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for tok in text.split_whitespace() {
        if let Some(inner) = tok.strip_prefix('{').and_then(|t| t.strip_suffix('}'))
            && !inner.is_empty()
            && inner
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'_')
            && !out.iter().any(|o| o == tok)
        {
            out.push(tok.to_string());
        }
    }
    out
}

/// Parses and runs the script text `text` whose file lives in `dir`.
pub fn run_text<E: Engine>(engine: &E, text: &str, dir: &Path) -> Report {
    let mut report = Report {
        outcome: Outcome::Pass,
        runs: 0,
        expects: 0,
        dispatch_time: Duration::ZERO,
        lane_instructions: 0,
    };
    let script = match parse::parse(text) {
        Ok(s) => s,
        Err(e) => {
            let ph = template_placeholders(text);
            report.outcome = if ph.is_empty() {
                Outcome::Fail(format!("parse error: {e}"))
            } else {
                Outcome::Skip(format!(
                    "template with unfilled placeholders {}",
                    ph.join(" ")
                ))
            };
            return report;
        }
    };
    let reasons = skip_reasons(&script);
    if !reasons.is_empty() {
        report.outcome = Outcome::Skip(reasons.join("; "));
        return report;
    }
    let mut st = State {
        engine,
        dir,
        buffers: HashMap::new(),
        shaders: HashMap::new(),
        pipelines: HashMap::new(),
        virtual_files: HashMap::new(),
        derivable: HashMap::new(),
        robust: false,
    };
    if let Err(o) = st.exec_block(&script.statements, &mut report) {
        report.outcome = o;
    }
    report
}

/// Everything in the script that makes it unrunnable here, named.
pub fn skip_reasons(script: &Script) -> Vec<String> {
    let mut out = Vec::new();
    let mut push = |r: String| {
        if !out.contains(&r) {
            out.push(r);
        }
    };
    fn walk(stmts: &[Stmt], push: &mut dyn FnMut(String)) {
        for s in stmts {
            match &s.kind {
                StmtKind::DeviceFeature(f) if !features::feature_supported(f) => {
                    push(format!("needs DEVICE_FEATURE {f}"));
                }
                StmtKind::DeviceExtension(e) if !features::extension_supported(e) => {
                    push(format!("needs DEVICE_EXTENSION {e}"));
                }
                StmtKind::DeviceProperty(p) if !features::property_supported(p) => {
                    push(format!("needs DEVICE_PROPERTY {p}"));
                }
                StmtKind::Unsupported(r) => push(format!("uses {r}")),
                StmtKind::Shader(ShaderDef {
                    format: parse::ShaderFormat::Other(f),
                    ..
                }) if !(f == "OPENCL-C" && shader::find_tool("clspv").is_some()) => {
                    push(format!("uses {f} shaders (no compiler for them here)"));
                }
                StmtKind::Shader(ShaderDef { stage, .. }) if stage != "compute" => {
                    push(format!("uses {stage} shaders (graphics)"));
                }
                StmtKind::Expect(parse::Expect {
                    kind: ExpectKind::Rgba { text },
                    ..
                }) => {
                    push(format!("uses image probe `{text}`"));
                }
                StmtKind::Repeat { body, .. } => walk(body, push),
                _ => {}
            }
        }
    }
    walk(&script.statements, &mut push);
    out
}

/// Largest buffer a script may declare (a typo such as `SIZE 1000000000000` must not abort the process).
const MAX_BUFFER_BYTES: usize = 4 << 30;

/// Where a binding's bytes go back to after a dispatch.
struct WriteBack {
    /// (set, binding) in the engine's map.
    key: (u32, u32),
    /// Script buffer.
    buffer: String,
    /// Byte offset of the bound range in the buffer.
    start: usize,
    /// The range as it was before the dispatch, when copied (not moved) into the map.
    original: Option<Vec<u8>>,
    /// The element of a descriptor array (`BIND BUFFER_ARRAY`), None for a single buffer.
    element: Option<usize>,
}

struct State<'a, E: Engine> {
    engine: &'a E,
    dir: &'a Path,
    buffers: HashMap<String, Buffer>,
    /// Every shader, compiled where it is defined (as Amber compiles all of a script's shaders
    /// before running it): one that does not compile fails the script even if no pipeline uses it.
    shaders: HashMap<String, Vec<u32>>,
    pipelines: HashMap<String, (PipelineDef, Option<E::Pipeline>)>,
    /// `VIRTUAL_FILE`s by path.
    virtual_files: HashMap<String, String>,
    /// Every pipeline as a `DERIVE_PIPELINE` starts from it (kernel arguments resolved, their
    /// values not yet written into buffers).
    derivable: HashMap<String, PipelineDef>,
    /// `DEVICE_FEATURE robustBufferAccess` was asked for.
    robust: bool,
}

fn fail(line: usize, msg: impl std::fmt::Display) -> Outcome {
    Outcome::Fail(format!("line {line}: {msg}"))
}

impl<E: Engine> State<'_, E> {
    fn exec_block(&mut self, stmts: &[Stmt], report: &mut Report) -> Result<(), Outcome> {
        for s in stmts {
            self.exec(s, report)?;
        }
        Ok(())
    }

    fn exec(&mut self, s: &Stmt, report: &mut Report) -> Result<(), Outcome> {
        let line = s.line;
        match &s.kind {
            StmtKind::DeviceFeature(f) => self.robust |= f == "robustBufferAccess",
            StmtKind::DeviceExtension(_)
            | StmtKind::DeviceProperty(_)
            | StmtKind::InstanceExtension(_)
            | StmtKind::SetEngineData
            | StmtKind::Clear(_) => {}
            StmtKind::Unsupported(r) => return Err(Outcome::Skip(format!("uses {r}"))),
            StmtKind::VirtualFile { path, text } => {
                if self
                    .virtual_files
                    .insert(path.clone(), text.clone())
                    .is_some()
                {
                    return Err(fail(line, format!("virtual file {path} defined twice")));
                }
            }
            StmtKind::SetData {
                buffer,
                offset,
                values,
            } => {
                let buf = self
                    .buffers
                    .get_mut(buffer)
                    .ok_or_else(|| fail(line, format!("unknown buffer {buffer}")))?;
                buf.set_data(*offset, values).map_err(|m| fail(line, m))?;
            }
            StmtKind::Resize { buffer, elements } => {
                let buf = self
                    .buffers
                    .get_mut(buffer)
                    .ok_or_else(|| fail(line, format!("unknown buffer {buffer}")))?;
                let bytes = elements
                    .checked_mul(buf.element_layout().stride)
                    .filter(|&n| n <= MAX_BUFFER_BYTES)
                    .ok_or_else(|| {
                        fail(
                            line,
                            format!("buffer {buffer}: {elements} elements exceed the 4 GiB limit"),
                        )
                    })?;
                if buf.bytes.len() < bytes {
                    buf.bytes.resize(bytes, 0);
                }
            }
            StmtKind::Shader(sh) => {
                let from_virtual;
                let sh = match &sh.virtual_file {
                    Some(path) => {
                        let text = self.virtual_files.get(path).ok_or_else(|| {
                            fail(line, format!("shader {}: no VIRTUAL_FILE {path}", sh.name))
                        })?;
                        from_virtual = ShaderDef {
                            source: text.clone(),
                            virtual_file: None,
                            ..sh.clone()
                        };
                        &from_virtual
                    }
                    None => sh,
                };
                let words = shader::compile(sh, self.dir).map_err(|e| match e {
                    ShaderError::Unavailable(r) => Outcome::Skip(r),
                    ShaderError::Failed(r) => fail(line, format!("shader {}: {r}", sh.name)),
                })?;
                if self.shaders.insert(sh.name.clone(), words).is_some() {
                    return Err(fail(line, format!("shader {} defined twice", sh.name)));
                }
            }
            StmtKind::Buffer(b) => {
                let bytes = self.init_buffer(b).map_err(|m| fail(line, m))?;
                if self
                    .buffers
                    .insert(
                        b.name.clone(),
                        Buffer {
                            ty: b.ty,
                            layout: b.layout,
                            bytes,
                        },
                    )
                    .is_some()
                {
                    return Err(fail(line, format!("buffer {} defined twice", b.name)));
                }
            }
            StmtKind::Pipeline(p) => {
                // A derived pipeline's own KERNEL arguments are found in its parent's shader.
                let parent = match &p.derived_from {
                    Some(name) => Some(self.derivable.get(name).cloned().ok_or_else(|| {
                        fail(
                            line,
                            format!("DERIVE_PIPELINE {}: unknown pipeline {name}", p.name),
                        )
                    })?),
                    None => None,
                };
                let attach = p
                    .attach
                    .first()
                    .or(parent.as_ref().and_then(|b| b.attach.first()));
                let own = match attach {
                    Some(at) if has_kernel_args(p) => {
                        self.resolve_kernel_refs(p, at).map_err(|m| fail(line, m))?
                    }
                    _ => p.clone(),
                };
                let p = match &parent {
                    Some(base) => derive(base, &own),
                    None => own,
                };
                if p.attach.len() != 1 {
                    return Err(fail(
                        line,
                        format!("compute pipeline {} needs exactly one ATTACH", p.name),
                    ));
                }
                self.derivable.insert(p.name.clone(), p.clone());
                let p = &self
                    .materialize_kernel_values(&p)
                    .map_err(|m| fail(line, m))?;
                for b in &p.binds {
                    for name in &b.buffers {
                        if !self.buffers.contains_key(name) {
                            return Err(fail(b.line, format!("unknown buffer {name}")));
                        }
                    }
                }
                if !self.shaders.contains_key(&p.attach[0].shader) {
                    return Err(fail(line, format!("unknown shader {}", p.attach[0].shader)));
                }
                if self
                    .pipelines
                    .insert(p.name.clone(), (p.clone(), None))
                    .is_some()
                {
                    return Err(fail(line, format!("pipeline {} defined twice", p.name)));
                }
            }
            StmtKind::Run { pipeline, groups } => {
                self.run(line, pipeline, *groups, report)?;
                report.runs += 1;
            }
            StmtKind::Expect(e) => {
                self.expect(line, e)?;
                report.expects += 1;
            }
            StmtKind::Copy { from, to } => {
                let src = self
                    .buffers
                    .get(from)
                    .ok_or_else(|| fail(line, format!("unknown buffer {from}")))?;
                let (ty, layout, bytes) = (src.ty, src.layout, src.bytes.clone());
                let dst = self
                    .buffers
                    .get_mut(to)
                    .ok_or_else(|| fail(line, format!("unknown buffer {to}")))?;
                *dst = Buffer { ty, layout, bytes };
            }
            StmtKind::Repeat { count, body } => {
                for _ in 0..*count {
                    self.exec_block(body, report)?;
                }
            }
        }
        Ok(())
    }

    /// Resolves `BIND BUFFER ... KERNEL` and `SET KERNEL` by the clspv reflection of the module
    /// `at` attaches ([`crate::clspv`]): buffer arguments get their set and binding, and every
    /// value names its argument by number (so a derived pipeline's values replace its parent's).
    fn resolve_kernel_refs(
        &self,
        p: &PipelineDef,
        at: &parse::Attach,
    ) -> Result<PipelineDef, String> {
        let words = self
            .shaders
            .get(&at.shader)
            .ok_or_else(|| format!("unknown shader {}", at.shader))?;
        let module = coopmat_spirv::Module::from_words(words).map_err(|e| e.to_string())?;
        let args = clspv::kernel_args(&module, &at.entry_point).ok_or_else(|| {
            format!(
                "shader {} has no clspv reflection (NonSemantic.ClspvReflection) for kernel {}: \
                 its arguments cannot be bound by KERNEL ARG_NAME / ARG_NUMBER",
                at.shader, at.entry_point
            )
        })?;
        let find = |r: &parse::KernelArgRef| {
            args.iter()
                .find(|a| match r {
                    parse::KernelArgRef::Name(n) => a.name.as_deref() == Some(n.as_str()),
                    parse::KernelArgRef::Number(k) => a.ordinal == *k,
                })
                .ok_or_else(|| format!("kernel {} has no argument {r:?}", at.entry_point))
        };
        let mut out = p.clone();
        for b in &mut out.binds {
            let Some(r) = b.kernel_arg.take() else {
                continue;
            };
            let arg = find(&r)?;
            let clspv::ArgPlace::Buffer {
                set,
                binding,
                uniform,
            } = arg.place
            else {
                return Err(format!(
                    "kernel argument {r:?} is not a buffer argument ({:?})",
                    arg.place
                ));
            };
            (b.set, b.binding) = (set, binding);
            b.kind = if uniform {
                BindKind::Uniform
            } else {
                BindKind::Storage
            };
        }
        for (r, sc, _) in &mut out.kernel_values {
            let arg = find(r)?;
            let size = match arg.place {
                clspv::ArgPlace::PodPushConstant { size, .. }
                | clspv::ArgPlace::PodBuffer { size, .. } => size,
                ref other => {
                    return Err(format!(
                        "kernel argument {r:?} is not a value argument ({other:?})"
                    ));
                }
            };
            if size as usize != sc.size() {
                return Err(format!(
                    "kernel argument {r:?} has {size} bytes; SET gives a {}-byte value",
                    sc.size()
                ));
            }
            *r = parse::KernelArgRef::Number(arg.ordinal);
        }
        Ok(out)
    }

    /// The pipeline with its `SET KERNEL` values written into buffers of its own, bound with it:
    /// `PIPELINE/pod-push` for values in push constants, `PIPELINE/pod-SET-BINDING` for values in a
    /// buffer (where clspv's reflection puts each; the values name their arguments by number).
    fn materialize_kernel_values(&mut self, p: &PipelineDef) -> Result<PipelineDef, String> {
        let mut out = p.clone();
        out.kernel_values.clear();
        if p.kernel_values.is_empty() {
            return Ok(out);
        }
        let at = &p.attach[0];
        let words = self
            .shaders
            .get(&at.shader)
            .ok_or_else(|| format!("unknown shader {}", at.shader))?;
        let module = coopmat_spirv::Module::from_words(words).map_err(|e| e.to_string())?;
        let args = clspv::kernel_args(&module, &at.entry_point).unwrap_or_default();
        let mut pods: Vec<(Option<PodBuffer>, Vec<u8>)> = Vec::new();
        for (r, sc, v) in &p.kernel_values {
            let place = args
                .iter()
                .find(|a| *r == parse::KernelArgRef::Number(a.ordinal))
                .map(|a| a.place.clone())
                .ok_or_else(|| format!("kernel {} has no argument {r:?}", at.entry_point))?;
            let (key, offset) = match place {
                clspv::ArgPlace::PodPushConstant { offset, .. } => (None, offset),
                clspv::ArgPlace::PodBuffer {
                    set,
                    binding,
                    offset,
                    uniform,
                    ..
                } => (Some((set, binding, uniform)), offset),
                other => return Err(format!("kernel argument {r:?} is not a value ({other:?})")),
            };
            let i = match pods.iter().position(|(k, _)| *k == key) {
                Some(i) => i,
                None => {
                    pods.push((key, Vec::new()));
                    pods.len() - 1
                }
            };
            let bytes = &mut pods[i].1;
            let (start, end) = (offset as usize, offset as usize + sc.size());
            if bytes.len() < end {
                bytes.resize(end, 0);
            }
            sc.encode(*v, &mut bytes[start..end]);
        }
        for (key, bytes) in pods {
            let (name, set, binding, kind) = match key {
                None => (format!("{}/pod-push", p.name), 0, 0, BindKind::PushConstant),
                Some((s, b, uniform)) => (
                    format!("{}/pod-{s}-{b}", p.name),
                    s,
                    b,
                    if uniform {
                        BindKind::Uniform
                    } else {
                        BindKind::Storage
                    },
                ),
            };
            self.buffers.insert(
                name.clone(),
                Buffer {
                    ty: DataType::parse("uint8").expect("a type"),
                    layout: Layout::Std430,
                    bytes,
                },
            );
            out.binds.push(parse::Bind {
                buffers: vec![name],
                kind,
                set,
                binding,
                offsets: Vec::new(),
                descriptor_offsets: Vec::new(),
                descriptor_ranges: Vec::new(),
                line: 0,
                kernel_arg: None,
            });
        }
        Ok(out)
    }

    fn init_buffer(&self, b: &BufferDef) -> Result<Vec<u8>, String> {
        let el = b.ty.element_layout(b.layout);
        let per = b.ty.components();
        let elements = match &b.init {
            BufferInit::Data(v) => v.len() / per,
            BufferInit::Zero { elements }
            | BufferInit::Fill { elements, .. }
            | BufferInit::Series { elements, .. }
            | BufferInit::File { elements, .. } => *elements,
        };
        if elements
            .checked_mul(el.stride)
            .is_none_or(|n| n > MAX_BUFFER_BYTES)
        {
            return Err(format!(
                "buffer {}: {elements} elements of {} exceed the {} GiB limit",
                b.name,
                b.ty,
                MAX_BUFFER_BYTES >> 30
            ));
        }
        Ok(match &b.init {
            BufferInit::Data(v) => {
                if v.len() % per != 0 {
                    return Err(format!(
                        "buffer {}: {} values is not a whole number of {}",
                        b.name,
                        v.len(),
                        b.ty
                    ));
                }
                el.pack(v, 0)
            }
            BufferInit::Zero { elements } => vec![0; elements * el.stride],
            BufferInit::Fill { elements, value } => {
                el.pack(&vec![*value; elements * per], *elements)
            }
            BufferInit::Series {
                elements,
                from,
                inc,
            } => {
                let vals: Vec<Value> = (0..elements * per)
                    .map(|k| match (from, inc) {
                        (Value::Int(f), Value::Int(i)) => Value::Int(f + i * k as i128),
                        _ => Value::Float(from.as_f64() + inc.as_f64() * k as f64),
                    })
                    .collect();
                el.pack(&vals, *elements)
            }
            BufferInit::File {
                elements,
                kind,
                path,
            } => {
                let p = self.dir.join(path);
                match kind.as_deref() {
                    Some("BINARY") => {
                        let mut bytes =
                            std::fs::read(&p).map_err(|e| format!("{}: {e}", p.display()))?;
                        bytes.resize(elements * el.stride, 0);
                        bytes
                    }
                    Some("PNG") => return Err("PNG buffer files are not supported".into()),
                    _ => {
                        let text = std::fs::read_to_string(&p)
                            .map_err(|e| format!("{}: {e}", p.display()))?;
                        // `#` starts a comment to the end of the line, as in scripts.
                        let vals = text
                            .lines()
                            .map(|l| l.split('#').next().unwrap_or(""))
                            .flat_map(|l| l.split(|c: char| c.is_whitespace() || c == ','))
                            .filter(|t| !t.is_empty())
                            .map(|t| {
                                Value::parse(t)
                                    .ok_or_else(|| format!("{}: bad value {t}", p.display()))
                            })
                            .collect::<Result<Vec<_>, _>>()?;
                        el.pack(&vals, *elements)
                    }
                }
            }
        })
    }

    fn run(
        &mut self,
        line: usize,
        name: &str,
        groups: [u32; 3],
        report: &mut Report,
    ) -> Result<(), Outcome> {
        let (def, compiled) = self
            .pipelines
            .get(name)
            .ok_or_else(|| fail(line, format!("unknown pipeline {name}")))?;
        let def = def.clone();
        if compiled.is_none() {
            let p = self.compile(&def)?;
            self.pipelines.get_mut(name).expect("pipeline present").1 = Some(p);
        }
        let pipeline = self.pipelines[name].1.as_ref().expect("compiled");

        // Gather the bound ranges. A buffer bound at one binding with no offset moves into the engine's map;
        // otherwise its range is copied and only bytes the dispatch changed are written back, so that several
        // views of one buffer behave like aliases as long as their writes do not conflict.
        let mut uses: HashMap<&str, usize> = HashMap::new();
        for b in &def.binds {
            for name in &b.buffers {
                *uses.entry(name.as_str()).or_default() += 1;
            }
        }
        let mut map: BTreeMap<(u32, u32), Vec<u8>> = BTreeMap::new();
        let mut arrays: BTreeMap<(u32, u32), Vec<Vec<u8>>> = BTreeMap::new();
        let mut push = Vec::new();
        let mut back: Vec<WriteBack> = Vec::new();
        for b in &def.binds {
            let dynamic = matches!(b.kind, BindKind::StorageDynamic | BindKind::UniformDynamic);
            if !dynamic && !b.offsets.is_empty() {
                return Err(fail(b.line, "OFFSET needs a *_dynamic binding"));
            }
            if b.buffers.len() > 1 {
                // BIND BUFFER_ARRAY: each element its own (copied) range.
                let key = (b.set, b.binding);
                if map.contains_key(&key) || arrays.contains_key(&key) {
                    return Err(fail(
                        b.line,
                        format!("descriptor set {} binding {} bound twice", b.set, b.binding),
                    ));
                }
                let mut elems = Vec::new();
                for (e, bname) in b.buffers.iter().enumerate() {
                    let buf = self.buffers.get(bname).expect("checked at PIPELINE");
                    let start = b
                        .offsets
                        .get(e)
                        .copied()
                        .unwrap_or(0)
                        .saturating_add(b.descriptor_offsets.get(e).copied().unwrap_or(0));
                    let start = usize::try_from(start).unwrap_or(usize::MAX);
                    let end = match b.descriptor_ranges.get(e) {
                        Some(&r) => start.saturating_add(usize::try_from(r).unwrap_or(usize::MAX)),
                        None => buf.bytes.len(),
                    };
                    if start > buf.bytes.len() || end > buf.bytes.len() {
                        return Err(fail(
                            b.line,
                            format!(
                                "bound range {start}..{end} of buffer {bname} (array element {e}) exceeds its {} bytes",
                                buf.bytes.len()
                            ),
                        ));
                    }
                    let slice = buf.bytes[start..end].to_vec();
                    elems.push(slice.clone());
                    back.push(WriteBack {
                        key,
                        buffer: bname.clone(),
                        start,
                        original: Some(slice),
                        element: Some(e),
                    });
                }
                arrays.insert(key, elems);
                continue;
            }
            let bname = &b.buffers[0];
            let buf = self.buffers.get_mut(bname).expect("checked at PIPELINE");
            if b.kind == BindKind::PushConstant {
                push = buf.bytes.clone();
                continue;
            }
            let start = b
                .offsets
                .first()
                .copied()
                .unwrap_or(0)
                .saturating_add(b.descriptor_offsets.first().copied().unwrap_or(0));
            let start = usize::try_from(start).unwrap_or(usize::MAX);
            let end = match b.descriptor_ranges.first() {
                Some(&r) => start.saturating_add(usize::try_from(r).unwrap_or(usize::MAX)),
                None => buf.bytes.len(),
            };
            if start > buf.bytes.len() || end > buf.bytes.len() {
                return Err(fail(
                    b.line,
                    format!(
                        "bound range {start}..{end} of buffer {bname} exceeds its {} bytes",
                        buf.bytes.len()
                    ),
                ));
            }
            let key = (b.set, b.binding);
            if map.contains_key(&key) {
                return Err(fail(
                    b.line,
                    format!("descriptor set {} binding {} bound twice", b.set, b.binding),
                ));
            }
            if start == 0 && end == buf.bytes.len() && uses[bname.as_str()] == 1 {
                map.insert(key, std::mem::take(&mut buf.bytes));
                back.push(WriteBack {
                    key,
                    buffer: bname.clone(),
                    start: 0,
                    original: None,
                    element: None,
                });
            } else {
                let slice = buf.bytes[start..end].to_vec();
                map.insert(key, slice.clone());
                back.push(WriteBack {
                    key,
                    buffer: bname.clone(),
                    start,
                    original: Some(slice),
                    element: None,
                });
            }
        }
        let t0 = Instant::now();
        let result = self
            .engine
            .dispatch(pipeline, &mut map, &mut arrays, &mut push, groups);
        report.dispatch_time += t0.elapsed();
        for WriteBack {
            key,
            buffer: bname,
            start,
            original: orig,
            element,
        } in back
        {
            let data = match element {
                Some(e) => arrays
                    .get_mut(&key)
                    .and_then(|a| a.get_mut(e))
                    .map(std::mem::take)
                    .unwrap_or_default(),
                None => map.remove(&key).unwrap_or_default(),
            };
            let buf = self.buffers.get_mut(&bname).expect("bound buffer");
            match orig {
                None => buf.bytes = data,
                Some(orig) => {
                    for (i, (&new, &old)) in data.iter().zip(&orig).enumerate() {
                        if new != old {
                            buf.bytes[start + i] = new;
                        }
                    }
                }
            }
        }
        report.lane_instructions +=
            result.map_err(|e| fail(line, format!("RUN {name}: engine error: {e}")))?;
        Ok(())
    }

    fn compile(&self, def: &PipelineDef) -> Result<E::Pipeline, Outcome> {
        let at = &def.attach[0];
        let mut words = std::borrow::Cow::Borrowed(&self.shaders[&at.shader]);
        for (shader, passes) in &def.optimizations {
            if *shader == at.shader {
                words =
                    std::borrow::Cow::Owned(shader::optimize(&words, passes).map_err(
                        |e| match e {
                            ShaderError::Unavailable(r) => Outcome::Skip(r),
                            ShaderError::Failed(r) => Outcome::Fail(format!(
                                "pipeline {}: SHADER_OPTIMIZATION {shader}: {r}",
                                def.name
                            )),
                        },
                    )?);
            }
        }
        let spec: SpecMap = at
            .specialize
            .iter()
            .map(|&(id, sc, v)| (id, spec_bits(sc, v)))
            .collect();
        if let Some(w) = &def.subgroup.required_size_word {
            return Err(Outcome::Skip(format!("SUBGROUP REQUIRED_SIZE {w}")));
        }
        let p = self
            .engine
            .compile(
                &words,
                &at.entry_point,
                &spec,
                def.subgroup.required_size,
                self.robust,
            )
            .map_err(|e| {
                Outcome::Fail(format!(
                    "pipeline {}: engine rejected shader {}: {e}",
                    def.name, at.shader
                ))
            })?;
        if def.subgroup.fully_populated {
            // VUID-VkPipelineShaderStageCreateInfo-flags-02759: with full subgroups required, local_size_x must be
            // a multiple of the subgroup size; a device cannot create such a pipeline otherwise (the CTS reports
            // these cases as not supported).
            let (ls, sg) = (self.engine.local_size(&p), self.engine.subgroup_size(&p));
            if ls[0] % sg != 0 {
                return Err(Outcome::Skip(format!(
                    "needs full subgroups (FULLY_POPULATED) with local_size_x {}, not a multiple of the subgroup \
                     size {sg}",
                    ls[0]
                )));
            }
        }
        Ok(p)
    }

    fn expect(&self, line: usize, e: &parse::Expect) -> Result<(), Outcome> {
        let buf = self
            .buffers
            .get(&e.buffer)
            .ok_or_else(|| fail(line, format!("unknown buffer {}", e.buffer)))?;
        let el = buf.element_layout();
        let sc = el.scalar;
        match &e.kind {
            ExpectKind::Values {
                offset,
                cmp,
                tolerance,
                values,
            } => {
                let offs: Vec<usize> = el
                    .value_offsets(*offset, buf.bytes.len())
                    .take(values.len())
                    .collect();
                if offs.len() < values.len() {
                    return Err(fail(
                        line,
                        format!(
                            "EXPECT {} IDX {offset}: {} values of {} read past the buffer's {} bytes",
                            e.buffer,
                            values.len(),
                            buf.ty,
                            buf.bytes.len()
                        ),
                    ));
                }
                let mut bad = Vec::new();
                for (i, (&off, &want)) in offs.iter().zip(values).enumerate() {
                    let got = sc.decode(&buf.bytes[off..]);
                    let tol = (!tolerance.is_empty()).then(|| tolerance[i % tolerance.len()]);
                    if !compare(sc, got, want, *cmp, tol) {
                        bad.push(format!("byte {off}: expected {cmp} {want}, got {got}"));
                    }
                }
                if !bad.is_empty() {
                    let n = bad.len();
                    bad.truncate(4);
                    let tol = if tolerance.is_empty() {
                        String::new()
                    } else {
                        let t: Vec<String> = tolerance
                            .iter()
                            .map(|t| format!("{}{}", t.value, if t.percent { "%" } else { "" }))
                            .collect();
                        format!(" (tolerance {})", t.join(" "))
                    };
                    return Err(fail(
                        line,
                        format!(
                            "EXPECT {} ({}){tol}: {n} of {} values wrong: {}",
                            e.buffer,
                            buf.ty,
                            values.len(),
                            bad.join("; ")
                        ),
                    ));
                }
            }
            ExpectKind::EqBuffer(other) | ExpectKind::RmseBuffer { other, .. } => {
                let ob = self
                    .buffers
                    .get(other)
                    .ok_or_else(|| fail(line, format!("unknown buffer {other}")))?;
                let oel = ob.element_layout();
                if oel != el {
                    return Err(fail(
                        line,
                        format!(
                            "EXPECT {} vs {other}: formats differ ({} and {})",
                            e.buffer, buf.ty, ob.ty
                        ),
                    ));
                }
                if ob.bytes.len() != buf.bytes.len() {
                    return Err(fail(
                        line,
                        format!(
                            "EXPECT {} vs {other}: sizes differ ({} and {} bytes)",
                            e.buffer,
                            buf.bytes.len(),
                            ob.bytes.len()
                        ),
                    ));
                }
                let size = sc.size();
                let offs = el.value_offsets(0, buf.bytes.len());
                if let ExpectKind::RmseBuffer { tolerance, .. } = e.kind {
                    let (mut sum, mut n) = (0.0f64, 0usize);
                    for off in offs {
                        let d = sc.decode(&buf.bytes[off..]).as_f64()
                            - sc.decode(&ob.bytes[off..]).as_f64();
                        sum += d * d;
                        n += 1;
                    }
                    let rmse = if n == 0 { 0.0 } else { (sum / n as f64).sqrt() };
                    if rmse.is_nan() || rmse > tolerance {
                        return Err(fail(
                            line,
                            format!(
                                "EXPECT {} RMSE_BUFFER {other}: RMSE {rmse} > tolerance {tolerance}",
                                e.buffer
                            ),
                        ));
                    }
                } else {
                    let mut bad = Vec::new();
                    let mut n = 0usize;
                    for off in offs {
                        if buf.bytes[off..off + size] != ob.bytes[off..off + size] {
                            n += 1;
                            if bad.len() < 4 {
                                bad.push(format!(
                                    "byte {off}: {} has {}, {other} has {}",
                                    e.buffer,
                                    sc.decode(&buf.bytes[off..]),
                                    sc.decode(&ob.bytes[off..])
                                ));
                            }
                        }
                    }
                    if n > 0 {
                        return Err(fail(
                            line,
                            format!(
                                "EXPECT {} EQ_BUFFER {other}: {n} values differ: {}",
                                e.buffer,
                                bad.join("; ")
                            ),
                        ));
                    }
                }
            }
            ExpectKind::Rgba { text } => {
                return Err(Outcome::Skip(format!("uses image probe `{text}`")));
            }
        }
        Ok(())
    }
}

/// Spec-constant bits for `SPECIALIZE id AS type value` (zero-extended to 64 bits).
fn spec_bits(sc: Scalar, v: Value) -> u64 {
    let mut b = [0u8; 8];
    sc.encode(v, &mut b[..sc.size()]);
    u64::from_le_bytes(b)
}

/// One value check. Expected values are first rounded to the buffer's type (so `EQ 4.7` on a `float` buffer means
/// the float nearest 4.7, as in Amber, tolerance or not); with a tolerance the difference is measured in doubles,
/// absolute or as a percentage of the expected value. Float `EQ`/`NE` without a tolerance allow a relative
/// difference of 1e-8, as Amber's verifier does (its `kEpsilon` 0.000001 read as a percentage).
pub fn compare(sc: Scalar, got: Value, want: Value, cmp: Cmp, tol: Option<Tolerance>) -> bool {
    let want = sc.round(want);
    if let Some(t) = tol {
        let (g, w) = (got.as_f64(), want.as_f64());
        if g.is_nan() || w.is_nan() {
            return g.is_nan() && w.is_nan();
        }
        if g == w {
            return true; // also covers equal infinities
        }
        let limit = if t.percent {
            t.value / 100.0 * w.abs()
        } else {
            t.value
        };
        return (g - w).abs() <= limit;
    }
    if sc.is_float() {
        let (g, w) = (got.as_f64(), want.as_f64());
        let eq = g == w || (g.is_nan() && w.is_nan()) || (g - w).abs() <= 1e-8 * w.abs();
        match cmp {
            Cmp::Eq => eq,
            Cmp::Ne => !eq,
            Cmp::Lt => g < w,
            Cmp::Le => g <= w,
            Cmp::Gt => g > w,
            Cmp::Ge => g >= w,
        }
    } else {
        let (g, w) = (got.as_i128(), want.as_i128());
        match cmp {
            Cmp::Eq => g == w,
            Cmp::Ne => g != w,
            Cmp::Lt => g < w,
            Cmp::Le => g <= w,
            Cmp::Gt => g > w,
            Cmp::Ge => g >= w,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An engine that runs nothing: enough to exercise buffers and EXPECT logic without `coopmat-exec`.
    struct NullEngine;
    impl Engine for NullEngine {
        type Pipeline = ();
        fn compile(
            &self,
            _: &[u32],
            _: &str,
            _: &SpecMap,
            _: Option<u32>,
            _: bool,
        ) -> Result<(), String> {
            Ok(())
        }
        fn local_size(&self, _: &()) -> [u32; 3] {
            [1, 1, 1]
        }
        fn subgroup_size(&self, _: &()) -> u32 {
            1
        }
        fn dispatch(
            &self,
            _: &(),
            buffers: &mut BTreeMap<(u32, u32), Vec<u8>>,
            _: &mut BTreeMap<(u32, u32), Vec<Vec<u8>>>,
            _: &mut Vec<u8>,
            _: [u32; 3],
        ) -> Result<u64, String> {
            // Writes 7 into the first u32 of every bound buffer so tests see the data flow.
            for b in buffers.values_mut() {
                b[..4].copy_from_slice(&7u32.to_le_bytes());
            }
            Ok(1)
        }
    }

    fn run(src: &str) -> Outcome {
        run_text(&NullEngine, src, Path::new(".")).outcome
    }

    #[test]
    fn a_shader_that_does_not_assemble_fails_the_script_even_unused() {
        let script = "SHADER compute used SPIRV-ASM
OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main \"main\"
OpExecutionMode %main LocalSize 1 1 1
%void = OpTypeVoid
%fn = OpTypeFunction %void
%main = OpFunction %void None %fn
%l = OpLabel
OpReturn
OpFunctionEnd
END
SHADER compute unused SPIRV-ASM
OpNotAnInstruction
END
BUFFER b DATA_TYPE uint32 SIZE 1 FILL 0
PIPELINE compute p
  ATTACH used
  BIND BUFFER b AS storage DESCRIPTOR_SET 0 BINDING 0
END
RUN p 1 1 1
EXPECT b IDX 0 EQ 7
";
        let Outcome::Fail(m) = run(script) else {
            panic!("{:?}", run(script))
        };
        assert!(m.contains("line 13") && m.contains("shader unused"), "{m}");
        let without_unused = script.replace(
            "SHADER compute unused SPIRV-ASM\nOpNotAnInstruction\nEND\n",
            "",
        );
        assert_eq!(run(&without_unused), Outcome::Pass);
    }

    #[test]
    fn expects_on_initial_data() {
        assert_eq!(
            run("BUFFER b DATA_TYPE uint32 SIZE 4 SERIES_FROM 3 INC_BY 2\nEXPECT b IDX 4 EQ 5 7 9"),
            Outcome::Pass
        );
        let Outcome::Fail(m) =
            run("BUFFER b DATA_TYPE uint32 SIZE 4 FILL 1\nEXPECT b IDX 0 EQ 1 2")
        else {
            panic!()
        };
        assert!(
            m.contains("line 2") && m.contains("expected EQ 2, got 1"),
            "{m}"
        );
        assert!(matches!(
            run("BUFFER b DATA_TYPE uint32 SIZE 1 FILL 1\nEXPECT b IDX 18446744073709551615 EQ 1"),
            Outcome::Fail(_)
        ));
        assert!(matches!(
            run("BUFFER b DATA_TYPE vec4<double> SIZE 1000000000000000 FILL 1"),
            Outcome::Fail(m) if m.contains("GiB limit")
        ));
        assert!(matches!(
            run("BUFFER b DATA_TYPE uint32 SIZE 1 FILL 1\nEXPECT b IDX 0 EQ 1 1"),
            Outcome::Fail(_)
        ));
        // Float EQ compares in the buffer's precision; TOLERANCE absolute and percent.
        assert_eq!(
            run("BUFFER b DATA_TYPE float DATA 4.7 END\nEXPECT b IDX 0 EQ 4.7"),
            Outcome::Pass
        );
        assert_eq!(
            run("BUFFER b DATA_TYPE float16 DATA 2.4 END\nEXPECT b IDX 0 TOLERANCE 0.01 EQ 2.4"),
            Outcome::Pass
        );
        assert_eq!(
            run("BUFFER b DATA_TYPE float DATA 102 END\nEXPECT b IDX 0 TOLERANCE 2% EQ 100"),
            Outcome::Pass
        );
        assert!(matches!(
            run("BUFFER b DATA_TYPE float DATA 103 END\nEXPECT b IDX 0 TOLERANCE 2% EQ 100"),
            Outcome::Fail(_)
        ));
        assert_eq!(
            run("BUFFER b DATA_TYPE int8 DATA -3 END\nEXPECT b IDX 0 LT -2"),
            Outcome::Pass
        );
        assert_eq!(
            run("BUFFER b DATA_TYPE uint32 DATA -1 END\nEXPECT b IDX 0 EQ 4294967295"),
            Outcome::Pass
        );
        assert_eq!(
            run("BUFFER b DATA_TYPE float DATA nan END\nEXPECT b IDX 0 EQ nan"),
            Outcome::Pass
        );
        // vec3 elements skip their padding.
        assert_eq!(
            run("BUFFER b DATA_TYPE vec3<float> DATA 1 2 3 4 5 6 END\nEXPECT b IDX 16 EQ 4 5 6"),
            Outcome::Pass
        );
    }

    #[test]
    fn eq_buffer_copy_and_repeat() {
        let src = "BUFFER a DATA_TYPE int32 DATA 1 2 3 END\nBUFFER b DATA_TYPE int32 SIZE 3 FILL 0\n\
                   EXPECT a EQ_BUFFER a\nCOPY a TO b\nEXPECT b EQ_BUFFER a\nREPEAT 2\nEXPECT b IDX 8 EQ 3\nEND\n";
        let r = run_text(&NullEngine, src, Path::new("."));
        assert_eq!((r.outcome, r.expects), (Outcome::Pass, 4));
        let Outcome::Fail(m) = run(
            "BUFFER a DATA_TYPE int32 DATA 1 2 END\nBUFFER b DATA_TYPE int32 DATA 1 3 END\n\
                                    EXPECT a EQ_BUFFER b",
        ) else {
            panic!()
        };
        assert!(m.contains("1 values differ"), "{m}");
        assert_eq!(
            run(
                "BUFFER a DATA_TYPE float DATA 1 2 END\nBUFFER b DATA_TYPE float DATA 1 3 END\n\
                 EXPECT a RMSE_BUFFER b TOLERANCE 0.8"
            ),
            Outcome::Pass
        );
    }

    #[test]
    fn skips_name_the_reason() {
        let Outcome::Skip(r) =
            run("DEVICE_FEATURE shaderStorageImageMultisample\nIMAGE i FORMAT R8_UNORM")
        else {
            panic!()
        };
        assert!(
            r.contains("shaderStorageImageMultisample") && r.contains("IMAGE"),
            "{r}"
        );
        let Outcome::Skip(r) =
            run("BUFFER b DATA_TYPE {amber_float_type} DATA\n{significands}\nEND")
        else {
            panic!()
        };
        assert!(r.contains("{amber_float_type}"), "{r}");
    }

    #[test]
    fn dynamic_offsets_and_push_constants() {
        // Binding at OFFSET 16 (+ DESCRIPTOR_OFFSET 4) makes the engine's write land at byte 20; the unused
        // `SHADER` never compiles because NullEngine ignores words, but the shader must still be SPIR-V.
        let spv = "SHADER compute s SPIRV-HEX\n03 02 23 07 00 00 01 00 00 00 00 00 01 00 00 00 00 00 00 00\nEND\n";
        let src = format!(
            "{spv}BUFFER a DATA_TYPE uint32 SIZE 8 FILL 0\nBUFFER pc DATA_TYPE uint32 DATA 1 END\n\
             PIPELINE compute p\nATTACH s\nBIND BUFFER a AS storage_dynamic DESCRIPTOR_SET 0 BINDING 0 OFFSET 16 \
             DESCRIPTOR_OFFSET 4\nBIND BUFFER pc AS push_constant\nEND\nRUN p 1 1 1\n\
             EXPECT a IDX 0 EQ 0 0 0 0 0 7 0 0\n"
        );
        assert_eq!(run(&src), Outcome::Pass);
    }
}

//! AmberScript parser (the compute subset; everything else parses into [`StmtKind::Unsupported`] so a runner can
//! skip the script with the reason). Grammar: Amber's `docs/amber_script.md`.

use crate::types::{DataType, Layout, Scalar, TypeError, Value};
use std::fmt;

/// A parse error, with the 1-based line where it was found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {msg}")]
pub struct ParseError {
    /// 1-based line number.
    pub line: usize,
    /// What went wrong.
    pub msg: String,
}

/// A parsed script: top-level statements in order.
#[derive(Debug, Clone, Default)]
pub struct Script {
    /// Statements in source order.
    pub statements: Vec<Stmt>,
}

/// One statement with its 1-based line.
#[derive(Debug, Clone)]
pub struct Stmt {
    /// 1-based line of the statement's first token.
    pub line: usize,
    /// The statement.
    pub kind: StmtKind,
}

/// Statement kinds.
#[derive(Debug, Clone)]
pub enum StmtKind {
    /// `DEVICE_FEATURE name`
    DeviceFeature(String),
    /// `DEVICE_EXTENSION name`
    DeviceExtension(String),
    /// `INSTANCE_EXTENSION name` (no effect on a CPU engine).
    InstanceExtension(String),
    /// `SET ENGINE_DATA ...` (ignored).
    SetEngineData,
    /// `SHADER ...`
    Shader(ShaderDef),
    /// `BUFFER ...`
    Buffer(BufferDef),
    /// `PIPELINE ...`
    Pipeline(PipelineDef),
    /// `RUN [TIMED_EXECUTION] pipeline x y z`
    Run {
        /// Pipeline name.
        pipeline: String,
        /// Workgroup counts.
        groups: [u32; 3],
    },
    /// `EXPECT ...`
    Expect(Expect),
    /// `COPY from TO to`
    Copy {
        /// Source buffer.
        from: String,
        /// Destination buffer.
        to: String,
    },
    /// `CLEAR pipeline` (clears attachments of graphics pipelines: nothing to do for compute).
    Clear(String),
    /// `REPEAT n ... END`
    Repeat {
        /// Repetitions.
        count: u32,
        /// Body.
        body: Vec<Stmt>,
    },
    /// `DEVICE_PROPERTY name`: a device property the script needs (`FloatControlsProperties.shaderSignedZeroInfNanPreserveFloat32`).
    DeviceProperty(String),
    /// `VIRTUAL_FILE path ... END`: text a `SHADER ... VIRTUAL_FILE path` takes its source from.
    VirtualFile {
        /// The path shaders name.
        path: String,
        /// The file's text.
        text: String,
    },
    /// Values written into a buffer at a byte offset, laid out by the buffer's own type, growing it as needed
    /// (VkScript's `ssbo B subdata`, `uniform ubo B`, `uniform`).
    SetData {
        /// Buffer name.
        buffer: String,
        /// Byte offset of the first value's element.
        offset: usize,
        /// The values.
        values: Vec<Value>,
    },
    /// A buffer grown to at least `elements` elements of its type (VkScript's `ssbo B size`).
    Resize {
        /// Buffer name.
        buffer: String,
        /// Elements.
        elements: usize,
    },
    /// A construct outside the compute subset: the reason a runner skips.
    Unsupported(String),
}

/// Shader source formats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShaderFormat {
    /// `GLSL`
    Glsl,
    /// `SPIRV-ASM`
    SpirvAsm,
    /// `SPIRV-HEX`
    SpirvHex,
    /// `SPIRV-BIN` (only from `FILE`)
    SpirvBin,
    /// Anything else (`HLSL`, `OPENCL-C`, ...).
    Other(String),
}

/// `SHADER stage name format [TARGET_ENV env] ... END` (or `FILE path`).
#[derive(Debug, Clone)]
pub struct ShaderDef {
    /// Shader name.
    pub name: String,
    /// Stage (`compute`, `vertex`, ...).
    pub stage: String,
    /// Source format.
    pub format: ShaderFormat,
    /// `TARGET_ENV` value, if given.
    pub target_env: Option<String>,
    /// Inline source text.
    pub source: String,
    /// `FILE` path, if the source lives in a file.
    pub file: Option<String>,
    /// `VIRTUAL_FILE` path, if the source is a virtual file of the script.
    pub virtual_file: Option<String>,
}

/// How a buffer is initialised.
#[derive(Debug, Clone, PartialEq)]
pub enum BufferInit {
    /// `DATA v... END`
    Data(Vec<Value>),
    /// `SIZE n FILL v`
    Fill {
        /// Elements.
        elements: usize,
        /// Fill value.
        value: Value,
    },
    /// `SIZE n SERIES_FROM s INC_BY i`
    Series {
        /// Elements.
        elements: usize,
        /// First value.
        from: Value,
        /// Increment.
        inc: Value,
    },
    /// `SIZE n` alone (zeros).
    Zero {
        /// Elements.
        elements: usize,
    },
    /// `SIZE n FILE [TEXT|BINARY|PNG] path`
    File {
        /// Elements.
        elements: usize,
        /// Kind keyword (`TEXT`, `BINARY`, `PNG`), if given.
        kind: Option<String>,
        /// Path relative to the script.
        path: String,
    },
}

/// `BUFFER name DATA_TYPE type [STD140|STD430] ...` or `BUFFER name FORMAT fmt ...`.
#[derive(Debug, Clone)]
pub struct BufferDef {
    /// Buffer name.
    pub name: String,
    /// Element type.
    pub ty: DataType,
    /// Layout.
    pub layout: Layout,
    /// Initialiser.
    pub init: BufferInit,
}

/// `ATTACH shader [ENTRY_POINT e] [SPECIALIZE id AS type value]...`
#[derive(Debug, Clone)]
pub struct Attach {
    /// Shader name.
    pub shader: String,
    /// Entry point name (default `main`).
    pub entry_point: String,
    /// Specialization constants: SpecId, type, value.
    pub specialize: Vec<(u32, Scalar, Value)>,
}

/// Binding kinds of `BIND BUFFER ... AS kind`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BindKind {
    /// `storage`
    Storage,
    /// `uniform`
    Uniform,
    /// `storage_dynamic`
    StorageDynamic,
    /// `uniform_dynamic`
    UniformDynamic,
    /// `push_constant`
    PushConstant,
}

/// `BIND BUFFER[_ARRAY] names AS kind DESCRIPTOR_SET s BINDING b [OFFSET o...] [DESCRIPTOR_OFFSET d...]
/// [DESCRIPTOR_RANGE r...]`.
#[derive(Debug, Clone)]
pub struct Bind {
    /// Bound buffers (more than one for `BUFFER_ARRAY`).
    pub buffers: Vec<String>,
    /// Binding kind.
    pub kind: BindKind,
    /// Descriptor set (0 for push constants).
    pub set: u32,
    /// Binding number.
    pub binding: u32,
    /// Dynamic offsets (one per buffer).
    pub offsets: Vec<u64>,
    /// Descriptor offsets (one per buffer).
    pub descriptor_offsets: Vec<u64>,
    /// Descriptor ranges (one per buffer; absent = whole buffer).
    pub descriptor_ranges: Vec<u64>,
    /// 1-based line.
    pub line: usize,
    /// `BIND BUFFER b KERNEL ARG_NAME n | ARG_NUMBER k`: an OpenCL kernel argument, whose set and
    /// binding come from the module's clspv reflection when the pipeline is made.
    pub kernel_arg: Option<KernelArgRef>,
}

/// An OpenCL kernel argument named in a script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KernelArgRef {
    /// `ARG_NAME name`
    Name(String),
    /// `ARG_NUMBER ordinal`
    Number(u32),
}

/// `SUBGROUP shader ... END` settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubgroupReq {
    /// `FULLY_POPULATED on`
    pub fully_populated: bool,
    /// `VARYING_SIZE on`
    pub varying_size: bool,
    /// `REQUIRED_SIZE n` (`MIN`/`MAX` are kept as text in `required_size_word`).
    pub required_size: Option<u32>,
    /// `REQUIRED_SIZE MIN|MAX`
    pub required_size_word: Option<String>,
}

/// `PIPELINE compute name ... END`.
#[derive(Debug, Clone)]
pub struct PipelineDef {
    /// Pipeline name.
    pub name: String,
    /// Pipeline type (`compute`, `graphics`).
    pub kind: String,
    /// Attached shaders.
    pub attach: Vec<Attach>,
    /// Buffer bindings.
    pub binds: Vec<Bind>,
    /// Subgroup requirements.
    pub subgroup: SubgroupReq,
    /// `SET KERNEL ARG_NAME n | ARG_NUMBER k AS type value`: plain-old-data kernel arguments.
    pub kernel_values: Vec<(KernelArgRef, Scalar, Value)>,
    /// `SHADER_OPTIMIZATION shader ... END`: SPIRV-Tools optimizer passes (spirv-opt flags such
    /// as `--graphics-robust-access`) run over the shader before the pipeline is made.
    pub optimizations: Vec<(String, Vec<String>)>,
    /// `DERIVE_PIPELINE name FROM parent`: the parent, whose shaders, bindings and settings this pipeline
    /// starts from (its own bindings replace the parent's at the same descriptor set and binding).
    pub derived_from: Option<String>,
}

/// Comparison operators of `EXPECT buf IDX ...`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    /// `EQ`
    Eq,
    /// `NE`
    Ne,
    /// `LT`
    Lt,
    /// `LE`
    Le,
    /// `GT`
    Gt,
    /// `GE`
    Ge,
}

impl fmt::Display for Cmp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Cmp::Eq => "EQ",
            Cmp::Ne => "NE",
            Cmp::Lt => "LT",
            Cmp::Le => "LE",
            Cmp::Gt => "GT",
            Cmp::Ge => "GE",
        })
    }
}

/// One `TOLERANCE` value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// The amount.
    pub value: f64,
    /// True for `n%` (relative to the expected value).
    pub percent: bool,
}

/// `EXPECT` forms.
#[derive(Debug, Clone)]
pub struct Expect {
    /// Buffer probed.
    pub buffer: String,
    /// What is checked.
    pub kind: ExpectKind,
}

/// What an `EXPECT` checks.
#[derive(Debug, Clone)]
pub enum ExpectKind {
    /// `IDX off [TOLERANCE t...] cmp values...` (offset in bytes).
    Values {
        /// Byte offset.
        offset: usize,
        /// Operator.
        cmp: Cmp,
        /// Tolerances (only with `EQ`).
        tolerance: Vec<Tolerance>,
        /// Expected values.
        values: Vec<Value>,
    },
    /// `EQ_BUFFER other`
    EqBuffer(String),
    /// `RMSE_BUFFER other TOLERANCE t`
    RmseBuffer {
        /// Reference buffer.
        other: String,
        /// Largest accepted root-mean-square error.
        tolerance: f64,
    },
    /// `IDX x y [SIZE w h] EQ_RGB[A] r g b [a]` on a buffer holding an image (`WIDTH`/`HEIGHT`).
    Rgba {
        /// Text of the probe, for the skip reason.
        text: String,
    },
}

/// Splits a line into tokens: whitespace (and commas) separate, `#` starts a comment.
fn tokenize(line: &str) -> Vec<String> {
    let code = match line.find('#') {
        Some(i) => &line[..i],
        None => line,
    };
    code.split(|c: char| c.is_whitespace() || c == ',')
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

struct Lexer<'a> {
    lines: Vec<&'a str>,
    /// Index of the next unread line.
    pos: usize,
    /// Names of the `STRUCT` types defined so far.
    structs: Vec<String>,
}

impl<'a> Lexer<'a> {
    fn new(text: &'a str) -> Self {
        Lexer {
            lines: text.lines().collect(),
            pos: 0,
            structs: Vec::new(),
        }
    }

    /// Tokens of the next logical line (continuations `\` joined), skipping blank and comment lines.
    /// Returns the 1-based line of its start.
    fn next_logical(&mut self) -> Option<(usize, Vec<String>)> {
        while self.pos < self.lines.len() {
            let start = self.pos + 1;
            let mut toks = Vec::new();
            while self.pos < self.lines.len() {
                let mut t = tokenize(self.lines[self.pos]);
                self.pos += 1;
                // A trailing `\` (alone or glued to the last token) continues the command on the next line.
                let cont = match t.last_mut() {
                    Some(l) if l == "\\" => {
                        t.pop();
                        true
                    }
                    Some(l) if l.ends_with('\\') => {
                        l.pop();
                        true
                    }
                    _ => false,
                };
                toks.extend(t);
                if !cont {
                    break;
                }
            }
            if !toks.is_empty() {
                return Some((start, toks));
            }
        }
        None
    }

    /// Raw lines up to a line that is just `END`; returns the text and consumes the `END`.
    fn raw_until_end(&mut self, line: usize) -> Result<String, ParseError> {
        let mut out = String::new();
        while self.pos < self.lines.len() {
            let l = self.lines[self.pos];
            self.pos += 1;
            if l.trim() == "END" {
                return Ok(out);
            }
            out.push_str(l);
            out.push('\n');
        }
        Err(err(line, "missing END"))
    }
}

fn err(line: usize, msg: impl Into<String>) -> ParseError {
    ParseError {
        line,
        msg: msg.into(),
    }
}

/// A cursor over the tokens of one logical line.
struct Toks {
    line: usize,
    toks: Vec<String>,
    i: usize,
}

impl Toks {
    fn next(&mut self, what: &str) -> Result<String, ParseError> {
        let t = self
            .toks
            .get(self.i)
            .cloned()
            .ok_or_else(|| err(self.line, format!("expected {what}")))?;
        self.i += 1;
        Ok(t)
    }
    fn peek(&self) -> Option<&str> {
        self.toks.get(self.i).map(String::as_str)
    }
    fn eat(&mut self, kw: &str) -> bool {
        if self.peek() == Some(kw) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, kw: &str) -> Result<(), ParseError> {
        let t = self.next(kw)?;
        if t == kw {
            Ok(())
        } else {
            Err(err(self.line, format!("expected {kw}, found {t}")))
        }
    }
    fn uint<T: std::str::FromStr>(&mut self, what: &str) -> Result<T, ParseError> {
        let t = self.next(what)?;
        t.parse::<T>().map_err(|_| {
            err(
                self.line,
                format!("expected {what} (a non-negative integer), found {t}"),
            )
        })
    }
    fn value(&mut self, what: &str) -> Result<Value, ParseError> {
        let t = self.next(what)?;
        Value::parse(&t)
            .ok_or_else(|| err(self.line, format!("expected {what} (a number), found {t}")))
    }
    fn rest(&mut self) -> Vec<String> {
        let r = self.toks[self.i..].to_vec();
        self.i = self.toks.len();
        r
    }
    fn done(&self) -> Result<(), ParseError> {
        match self.peek() {
            None => Ok(()),
            Some(t) => Err(err(self.line, format!("unexpected {t}"))),
        }
    }
}

/// Parses a whole script.
pub fn parse(text: &str) -> Result<Script, ParseError> {
    if crate::vkscript::is_vkscript(text) {
        return crate::vkscript::parse(text);
    }
    let mut lx = Lexer::new(text);
    let statements = parse_block(&mut lx, None, 0)?;
    Ok(Script { statements })
}

/// How deeply `REPEAT` blocks may nest: the parser and the runner recurse once a level, so a
/// script of 10 000 nested blocks must be an error, not a stack overflow. Amber's own scripts
/// nest at most two.
pub const MAX_REPEAT_DEPTH: usize = 64;

/// Parses statements until EOF (top level) or a line `END` (inside `REPEAT`, whose line is
/// `open`, `depth` blocks deep).
fn parse_block(
    lx: &mut Lexer<'_>,
    open: Option<usize>,
    depth: usize,
) -> Result<Vec<Stmt>, ParseError> {
    let mut out = Vec::new();
    while let Some((line, toks)) = lx.next_logical() {
        let mut t = Toks { line, toks, i: 0 };
        let cmd = t.next("command")?;
        let kind = match cmd.as_str() {
            "END" if open.is_some() => return Ok(out),
            "DEVICE_FEATURE" => StmtKind::DeviceFeature(t.next("feature")?),
            "DEVICE_PROPERTY" => StmtKind::DeviceProperty(t.next("property")?),
            "DEVICE_EXTENSION" => StmtKind::DeviceExtension(t.next("extension")?),
            "INSTANCE_EXTENSION" => StmtKind::InstanceExtension(t.next("extension")?),
            "SET" => {
                t.expect("ENGINE_DATA")?;
                t.rest();
                StmtKind::SetEngineData
            }
            "SHADER" => parse_shader(lx, &mut t)?,
            "BUFFER" => parse_buffer(lx, &mut t)?,
            "PIPELINE" => parse_pipeline(lx, &mut t, None)?,
            "DERIVE_PIPELINE" => {
                let name = t.next("pipeline name")?;
                t.expect("FROM")?;
                let parent = t.next("parent pipeline")?;
                t.done()?;
                let mut head = Toks {
                    line,
                    toks: vec!["compute".into(), name],
                    i: 0,
                };
                parse_pipeline(lx, &mut head, Some(parent))?
            }
            "RUN" => {
                t.eat("TIMED_EXECUTION");
                let pipeline = t.next("pipeline name")?;
                match t.peek() {
                    Some("DRAW_RECT" | "DRAW_GRID" | "DRAW_ARRAY") => {
                        t.rest();
                        StmtKind::Unsupported(format!("graphics draw (RUN {pipeline} DRAW_...)"))
                    }
                    Some(form) if form.parse::<u64>().is_err() => {
                        let form = form.to_string();
                        t.rest();
                        StmtKind::Unsupported(format!("ray tracing (RUN {pipeline} {form} ...)"))
                    }
                    _ => {
                        let groups = [t.uint("x")?, t.uint("y")?, t.uint("z")?];
                        t.done()?;
                        StmtKind::Run { pipeline, groups }
                    }
                }
            }
            "EXPECT" => parse_expect(&mut t)?,
            "COPY" => {
                let from = t.next("source buffer")?;
                t.expect("TO")?;
                let to = t.next("destination buffer")?;
                StmtKind::Copy { from, to }
            }
            "CLEAR" => StmtKind::Clear(t.next("pipeline")?),
            "CLEAR_COLOR" | "CLEAR_DEPTH" | "CLEAR_STENCIL" => {
                t.rest();
                StmtKind::Unsupported(format!("graphics {cmd}"))
            }
            "REPEAT" => {
                let count = t.uint("repeat count")?;
                t.done()?;
                if depth >= MAX_REPEAT_DEPTH {
                    return Err(err(
                        line,
                        format!("REPEAT nested more than {MAX_REPEAT_DEPTH} deep"),
                    ));
                }
                let body = parse_block(lx, Some(line), depth + 1)?;
                StmtKind::Repeat { count, body }
            }
            "IMAGE" | "SAMPLER" => {
                skip_block_if_data(lx, &mut t)?;
                StmtKind::Unsupported(format!(
                    "{cmd} objects (images and samplers are not supported)"
                ))
            }
            "STRUCT" => {
                let name = t.next("struct name")?;
                t.rest();
                lx.raw_until_end(line)?;
                lx.structs.push(name);
                StmtKind::Unsupported("STRUCT data types".into())
            }
            "VIRTUAL_FILE" => {
                let path = t.next("virtual file path")?;
                t.done()?;
                let text = lx.raw_until_end(line)?;
                StmtKind::VirtualFile { path, text }
            }
            "ACCELERATION_STRUCTURE" => {
                skip_block(lx, line, ACCELERATION_STRUCTURE_BLOCKS)?;
                StmtKind::Unsupported("ray tracing (ACCELERATION_STRUCTURE)".into())
            }
            "DEBUG" => {
                lx.raw_until_end(line)?;
                StmtKind::Unsupported("DEBUG blocks".into())
            }
            other => return Err(err(line, format!("unknown command {other}"))),
        };
        out.push(Stmt { line, kind });
    }
    match open {
        Some(l) => Err(err(l, "REPEAT without END")),
        None => Ok(out),
    }
}

/// Commands that open a nested `... END` block inside a graphics or ray-tracing `PIPELINE`.
const PIPELINE_BLOCKS: &[&str] = &[
    "DEPTH",
    "STENCIL",
    "BLEND",
    "SHADER_BINDING_TABLE",
    "SHADER_OPTIMIZATION",
    "COMPILE_OPTIONS",
    "SUBGROUP",
    "FLAGS",
];

/// Commands that open a nested `... END` block inside `ACCELERATION_STRUCTURE`.
const ACCELERATION_STRUCTURE_BLOCKS: &[&str] =
    &["GEOMETRY", "BOTTOM_LEVEL_INSTANCE", "TRANSFORM", "FLAGS"];

/// Consumes the lines of a block opened at line `open` up to the `END` that closes it, counting the blocks
/// nested in it: a line opens one when its first token is in `nested`, unless it closes itself (its last
/// token is `END`, as a `TRANSFORM ... END` on continued lines does) or is `FLAGS` with its flags on the
/// same line.
fn skip_block(lx: &mut Lexer<'_>, open: usize, nested: &[&str]) -> Result<(), ParseError> {
    let mut depth = 1usize;
    while let Some((_, toks)) = lx.next_logical() {
        let first = toks[0].as_str();
        if first == "END" {
            depth -= 1;
            if depth == 0 {
                return Ok(());
            }
        } else if nested.contains(&first)
            && toks.last().is_some_and(|l| l != "END")
            && !(first == "FLAGS" && toks.len() > 1)
        {
            depth += 1;
        }
    }
    Err(err(open, "block without END"))
}

/// `IMAGE ... DATA ... END` carries a data block; skip it so parsing can go on.
fn skip_block_if_data(lx: &mut Lexer<'_>, t: &mut Toks) -> Result<(), ParseError> {
    let rest = t.rest();
    if let Some(i) = rest.iter().position(|x| x == "DATA")
        && !rest[i + 1..].iter().any(|x| x == "END")
    {
        while let Some((_, toks)) = lx.next_logical() {
            if toks.iter().any(|x| x == "END") {
                return Ok(());
            }
        }
        return Err(err(t.line, "DATA without END"));
    }
    Ok(())
}

fn parse_shader(lx: &mut Lexer<'_>, t: &mut Toks) -> Result<StmtKind, ParseError> {
    let stage = t.next("shader stage")?;
    let name = t.next("shader name")?;
    let fmt = t.next("shader format")?;
    if fmt == "PASSTHROUGH" {
        return Ok(StmtKind::Unsupported("graphics PASSTHROUGH shader".into()));
    }
    let format = match fmt.as_str() {
        "GLSL" => ShaderFormat::Glsl,
        "SPIRV-ASM" => ShaderFormat::SpirvAsm,
        "SPIRV-HEX" => ShaderFormat::SpirvHex,
        "SPIRV-BIN" => ShaderFormat::SpirvBin,
        _ => ShaderFormat::Other(fmt),
    };
    let mut target_env = None;
    let mut file = None;
    let mut virtual_file = None;
    while let Some(kw) = t.peek() {
        match kw {
            "TARGET_ENV" => {
                t.i += 1;
                target_env = Some(t.next("target env")?);
            }
            "VIRTUAL_FILE" => {
                t.i += 1;
                virtual_file = Some(t.next("virtual file path")?);
            }
            "FILE" => {
                t.i += 1;
                // `FILE [BINARY|TEXT] path`
                let mut p = t.next("file path")?;
                if p == "BINARY" || p == "TEXT" {
                    p = t.next("file path")?;
                }
                file = Some(p);
            }
            other => return Err(err(t.line, format!("unexpected {other} in SHADER"))),
        }
    }
    let source = if file.is_some() || virtual_file.is_some() {
        String::new()
    } else {
        lx.raw_until_end(t.line)?
    };
    Ok(StmtKind::Shader(ShaderDef {
        name,
        stage,
        format,
        target_env,
        source,
        file,
        virtual_file,
    }))
}

fn parse_buffer(lx: &mut Lexer<'_>, t: &mut Toks) -> Result<StmtKind, ParseError> {
    let name = t.next("buffer name")?;
    let mut ty = None;
    let mut layout = Layout::default();
    let mut init = None;
    while let Some(kw) = t.peek().map(str::to_string) {
        t.i += 1;
        match kw.as_str() {
            "DATA_TYPE" => {
                let s = t.next("data type")?;
                match DataType::parse_checked(&s) {
                    Ok(d) => ty = Some(d),
                    Err(TypeError::UnsupportedFormat) => {
                        t.i -= 2;
                        skip_block_if_data(lx, t)?;
                        return Ok(StmtKind::Unsupported(format!(
                            "BUFFER {name} DATA_TYPE {s} (a packed or mixed-width format)"
                        )));
                    }
                    Err(TypeError::Unknown) if lx.structs.contains(&s) => {
                        t.i -= 2;
                        skip_block_if_data(lx, t)?;
                        return Ok(StmtKind::Unsupported(format!(
                            "BUFFER {name} DATA_TYPE {s} (STRUCT data types)"
                        )));
                    }
                    Err(TypeError::Unknown) => {
                        return Err(err(t.line, format!("unknown DATA_TYPE {s}")));
                    }
                }
            }
            "STD140" => layout = Layout::Std140,
            "STD430" => layout = Layout::Std430,
            "FORMAT" => {
                let f = t.next("format")?;
                t.i -= 2;
                skip_block_if_data(lx, t)?;
                return Ok(StmtKind::Unsupported(format!(
                    "BUFFER {name} FORMAT {f} (image-format buffers)"
                )));
            }
            "WIDTH" | "HEIGHT" | "MIP_LEVELS" | "SAMPLES" => {
                t.rest();
                return Ok(StmtKind::Unsupported(format!(
                    "BUFFER {name} {kw} (image buffers)"
                )));
            }
            "DATA" => {
                // Values up to `END`, on this line or the following ones.
                let mut vals = Vec::new();
                let mut tokens = t.rest();
                let mut line = t.line;
                loop {
                    let mut ended = false;
                    for tok in tokens {
                        if tok == "END" {
                            ended = true;
                            break;
                        }
                        vals.push(
                            Value::parse(&tok)
                                .ok_or_else(|| err(line, format!("bad data value {tok}")))?,
                        );
                    }
                    if ended {
                        break;
                    }
                    let (l, toks) = lx
                        .next_logical()
                        .ok_or_else(|| err(t.line, "DATA without END"))?;
                    line = l;
                    tokens = toks;
                }
                init = Some(BufferInit::Data(vals));
            }
            "SIZE" => {
                let elements: usize = t.uint("size")?;
                init = Some(match t.peek() {
                    Some("FILL") => {
                        t.i += 1;
                        BufferInit::Fill {
                            elements,
                            value: t.value("fill value")?,
                        }
                    }
                    Some("SERIES_FROM") => {
                        t.i += 1;
                        let from = t.value("series start")?;
                        t.expect("INC_BY")?;
                        BufferInit::Series {
                            elements,
                            from,
                            inc: t.value("increment")?,
                        }
                    }
                    Some("FILE") => {
                        t.i += 1;
                        let mut kind = None;
                        let mut path = t.next("file path")?;
                        if matches!(path.as_str(), "TEXT" | "BINARY" | "PNG") {
                            kind = Some(path);
                            path = t.next("file path")?;
                        }
                        BufferInit::File {
                            elements,
                            kind,
                            path,
                        }
                    }
                    _ => BufferInit::Zero { elements },
                });
            }
            other => return Err(err(t.line, format!("unexpected {other} in BUFFER"))),
        }
    }
    let ty = ty.ok_or_else(|| err(t.line, format!("BUFFER {name} has no DATA_TYPE")))?;
    let init = init.ok_or_else(|| err(t.line, format!("BUFFER {name} has no SIZE or DATA")))?;
    Ok(StmtKind::Buffer(BufferDef {
        name,
        ty,
        layout,
        init,
    }))
}

fn parse_pipeline(
    lx: &mut Lexer<'_>,
    t: &mut Toks,
    derived_from: Option<String>,
) -> Result<StmtKind, ParseError> {
    let kind = t.next("pipeline type")?;
    let name = t.next("pipeline name")?;
    let open = t.line;
    if kind != "compute" {
        // Graphics and ray-tracing pipelines: their settings (nested DEPTH/STENCIL/BLEND/... blocks
        // included) are skipped whole.
        skip_block(lx, open, PIPELINE_BLOCKS)?;
        return Ok(StmtKind::Unsupported(format!("{kind} pipelines")));
    }
    let mut p = PipelineDef {
        name,
        kind: kind.clone(),
        attach: Vec::new(),
        binds: Vec::new(),
        subgroup: SubgroupReq::default(),
        kernel_values: Vec::new(),
        optimizations: Vec::new(),
        derived_from,
    };
    let mut unsupported: Option<String> = None;
    loop {
        let (line, toks) = lx
            .next_logical()
            .ok_or_else(|| err(open, "PIPELINE without END"))?;
        let mut t = Toks { line, toks, i: 0 };
        let cmd = t.next("pipeline command")?;
        match cmd.as_str() {
            "END" => break,
            "ATTACH" => {
                let shader = t.next("shader name")?;
                let mut a = Attach {
                    shader,
                    entry_point: "main".into(),
                    specialize: Vec::new(),
                };
                while let Some(kw) = t.peek().map(str::to_string) {
                    t.i += 1;
                    match kw.as_str() {
                        "ENTRY_POINT" => a.entry_point = t.next("entry point")?,
                        "SPECIALIZE" => {
                            let id = t.uint("spec id")?;
                            t.expect("AS")?;
                            let ty = t.next("type")?;
                            let sc = Scalar::parse(&ty).ok_or_else(|| {
                                err(line, format!("unknown SPECIALIZE type {ty}"))
                            })?;
                            a.specialize.push((id, sc, t.value("value")?));
                        }
                        "TYPE" => {
                            t.next("shader type")?;
                        }
                        other => return Err(err(line, format!("unexpected {other} in ATTACH"))),
                    }
                }
                p.attach.push(a);
            }
            "SHADER_OPTIMIZATION" => {
                let shader = t.next("shader name")?;
                let passes = lx
                    .raw_until_end(line)?
                    .split_whitespace()
                    .map(str::to_string)
                    .collect();
                p.optimizations.push((shader, passes));
            }
            "COMPILE_OPTIONS" => {
                // Options of the OpenCL C compiler (clspv): OPENCL-C shaders are skipped.
                lx.raw_until_end(line)?;
            }
            "SET" => {
                t.expect("KERNEL")?;
                let arg = kernel_arg_ref(&mut t)?;
                t.expect("AS")?;
                let ty = t.next("type")?;
                let sc = Scalar::parse(&ty)
                    .ok_or_else(|| err(line, format!("unknown SET KERNEL type {ty}")))?;
                let v = t.value("value")?;
                t.done()?;
                p.kernel_values.push((arg, sc, v));
            }
            "SUBGROUP" => {
                t.next("shader name")?;
                loop {
                    let (l, toks) = lx
                        .next_logical()
                        .ok_or_else(|| err(line, "SUBGROUP without END"))?;
                    let mut s = Toks {
                        line: l,
                        toks,
                        i: 0,
                    };
                    let kw = s.next("subgroup setting")?;
                    let on = |s: &mut Toks| -> Result<bool, ParseError> {
                        match s.next("on/off")?.as_str() {
                            "on" => Ok(true),
                            "off" => Ok(false),
                            o => Err(err(l, format!("expected on or off, found {o}"))),
                        }
                    };
                    match kw.as_str() {
                        "END" => break,
                        "FULLY_POPULATED" => p.subgroup.fully_populated = on(&mut s)?,
                        "VARYING_SIZE" => p.subgroup.varying_size = on(&mut s)?,
                        "REQUIRED_SIZE" => {
                            let v = s.next("size")?;
                            match v.parse() {
                                Ok(n) => p.subgroup.required_size = Some(n),
                                Err(_) => p.subgroup.required_size_word = Some(v),
                            }
                        }
                        other => return Err(err(l, format!("unexpected {other} in SUBGROUP"))),
                    }
                }
            }
            "BIND" => {
                let what = t.next("BUFFER or SAMPLER")?;
                match what.as_str() {
                    "BUFFER" | "BUFFER_ARRAY" => {
                        let mut buffers = vec![t.next("buffer name")?];
                        while let Some(x) = t.peek() {
                            if matches!(x, "AS" | "KERNEL") {
                                break;
                            }
                            buffers.push(t.next("buffer name")?);
                        }
                        if t.eat("KERNEL") {
                            let arg = kernel_arg_ref(&mut t)?;
                            t.done()?;
                            p.binds.push(Bind {
                                buffers,
                                kind: BindKind::Storage,
                                set: 0,
                                binding: 0,
                                offsets: Vec::new(),
                                descriptor_offsets: Vec::new(),
                                descriptor_ranges: Vec::new(),
                                line,
                                kernel_arg: Some(arg),
                            });
                            continue;
                        }
                        t.expect("AS")?;
                        let k = t.next("binding kind")?;
                        let kind = match k.as_str() {
                            "storage" => BindKind::Storage,
                            "uniform" => BindKind::Uniform,
                            "storage_dynamic" => BindKind::StorageDynamic,
                            "uniform_dynamic" => BindKind::UniformDynamic,
                            "push_constant" => BindKind::PushConstant,
                            other => {
                                t.rest();
                                unsupported.get_or_insert_with(|| format!("BIND ... AS {other}"));
                                continue;
                            }
                        };
                        let mut b = Bind {
                            buffers,
                            kind,
                            set: 0,
                            binding: 0,
                            offsets: Vec::new(),
                            descriptor_offsets: Vec::new(),
                            descriptor_ranges: Vec::new(),
                            line,
                            kernel_arg: None,
                        };
                        let nums = |t: &mut Toks| -> Vec<u64> {
                            let mut v = Vec::new();
                            while let Some(n) = t.peek().and_then(|x| x.parse().ok()) {
                                t.i += 1;
                                v.push(n);
                            }
                            v
                        };
                        while let Some(kw) = t.peek().map(str::to_string) {
                            t.i += 1;
                            match kw.as_str() {
                                "DESCRIPTOR_SET" => b.set = t.uint("descriptor set")?,
                                "BINDING" => b.binding = t.uint("binding")?,
                                "OFFSET" => b.offsets = nums(&mut t),
                                "DESCRIPTOR_OFFSET" => b.descriptor_offsets = nums(&mut t),
                                "DESCRIPTOR_RANGE" => b.descriptor_ranges = nums(&mut t),
                                other => {
                                    return Err(err(line, format!("unexpected {other} in BIND")));
                                }
                            }
                        }
                        p.binds.push(b);
                    }
                    other => {
                        t.rest();
                        unsupported
                            .get_or_insert_with(|| format!("BIND {other} (images and samplers)"));
                    }
                }
            }
            // Graphics-only pipeline settings (a derived pipeline does not say its type).
            "DEPTH" | "STENCIL" | "BLEND" => {
                skip_block(lx, line, PIPELINE_BLOCKS)?;
                unsupported.get_or_insert_with(|| format!("graphics pipeline setting {cmd}"));
            }
            "FRAMEBUFFER_SIZE"
            | "VERTEX_DATA"
            | "INDEX_DATA"
            | "POLYGON_MODE"
            | "VIEWPORT"
            | "PATCH_CONTROL_POINTS" => {
                t.rest();
                unsupported.get_or_insert_with(|| format!("graphics pipeline setting {cmd}"));
            }
            other => return Err(err(line, format!("unknown pipeline command {other}"))),
        }
    }
    Ok(match unsupported {
        Some(r) => StmtKind::Unsupported(r),
        None => StmtKind::Pipeline(p),
    })
}

/// `ARG_NAME name` or `ARG_NUMBER ordinal`.
fn kernel_arg_ref(t: &mut Toks) -> Result<KernelArgRef, ParseError> {
    match t.next("ARG_NAME or ARG_NUMBER")?.as_str() {
        "ARG_NAME" => Ok(KernelArgRef::Name(t.next("argument name")?)),
        "ARG_NUMBER" => Ok(KernelArgRef::Number(t.uint("argument number")?)),
        other => Err(err(
            t.line,
            format!("expected ARG_NAME or ARG_NUMBER, found {other}"),
        )),
    }
}

/// A tolerance must be a finite, non-negative number: every comparison with NaN is false, so a
/// NaN tolerance would make `EXPECT` pass or fail regardless of the data.
fn check_tolerance(line: usize, value: f64) -> Result<(), ParseError> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(err(
            line,
            format!("TOLERANCE {value} is not a finite, non-negative number"),
        ))
    }
}

fn parse_expect(t: &mut Toks) -> Result<StmtKind, ParseError> {
    let buffer = t.next("buffer name")?;
    let what = t.next("IDX, EQ_BUFFER or RMSE_BUFFER")?;
    let kind = match what.as_str() {
        "EQ_BUFFER" => ExpectKind::EqBuffer(t.next("buffer name")?),
        "RMSE_BUFFER" => {
            let other = t.next("buffer name")?;
            t.expect("TOLERANCE")?;
            let tolerance = t.value("tolerance")?.as_f64();
            check_tolerance(t.line, tolerance)?;
            ExpectKind::RmseBuffer { other, tolerance }
        }
        "EQ_HISTOGRAM_EMD_BUFFER" => {
            t.rest();
            return Ok(StmtKind::Unsupported(
                "EQ_HISTOGRAM_EMD_BUFFER (image comparison)".into(),
            ));
        }
        "IDX" => {
            let offset = t.uint("byte offset")?;
            if t.peek().is_some_and(|x| x.parse::<u64>().is_ok()) || t.peek() == Some("SIZE") {
                // `IDX x y [SIZE w h] EQ_RGBA ...`: an image probe.
                let text = format!("EXPECT {buffer} IDX {offset} {}", t.rest().join(" "));
                ExpectKind::Rgba { text }
            } else if matches!(t.peek(), Some("EQ_RGB" | "EQ_RGBA")) {
                let text = format!("EXPECT {buffer} IDX {offset} {}", t.rest().join(" "));
                ExpectKind::Rgba { text }
            } else {
                let mut tolerance = Vec::new();
                if t.eat("TOLERANCE") {
                    while let Some(x) = t.peek() {
                        let (num, percent) = match x.strip_suffix('%') {
                            Some(n) => (n, true),
                            None => (x, false),
                        };
                        let Some(v) = Value::parse(num) else { break };
                        t.i += 1;
                        let percent = percent || t.eat("%");
                        check_tolerance(t.line, v.as_f64())?;
                        tolerance.push(Tolerance {
                            value: v.as_f64(),
                            percent,
                        });
                    }
                    if tolerance.is_empty() {
                        return Err(err(t.line, "TOLERANCE without values"));
                    }
                }
                let c = t.next("comparison")?;
                let cmp = match c.as_str() {
                    "EQ" => Cmp::Eq,
                    "NE" => Cmp::Ne,
                    "LT" => Cmp::Lt,
                    "LE" => Cmp::Le,
                    "GT" => Cmp::Gt,
                    "GE" => Cmp::Ge,
                    other => return Err(err(t.line, format!("unknown comparison {other}"))),
                };
                if !tolerance.is_empty() && cmp != Cmp::Eq {
                    return Err(err(t.line, "TOLERANCE is only allowed with EQ"));
                }
                let mut values = Vec::new();
                while t.peek().is_some() {
                    values.push(t.value("expected value")?);
                }
                if values.is_empty() {
                    return Err(err(t.line, "EXPECT without values"));
                }
                ExpectKind::Values {
                    offset,
                    cmp,
                    tolerance,
                    values,
                }
            }
        }
        other => return Err(err(t.line, format!("unknown EXPECT form {other}"))),
    };
    t.done()?;
    Ok(StmtKind::Expect(Expect { buffer, kind }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(src: &str) -> StmtKind {
        let s = parse(src).unwrap();
        assert_eq!(s.statements.len(), 1, "{:?}", s.statements);
        s.statements.into_iter().next().unwrap().kind
    }

    #[test]
    fn shader_body_is_raw() {
        let src = "#!amber\nSHADER compute s GLSL TARGET_ENV spv1.3\n#version 450\nvoid main() {} # x\nEND\n";
        let StmtKind::Shader(s) = one(src) else {
            panic!()
        };
        assert_eq!(s.format, ShaderFormat::Glsl);
        assert_eq!(s.target_env.as_deref(), Some("spv1.3"));
        assert_eq!(s.source, "#version 450\nvoid main() {} # x\n");
    }

    #[test]
    fn buffers() {
        let StmtKind::Buffer(b) = one("BUFFER b DATA_TYPE vec3<float> DATA 21.0 22.0 23.0 END")
        else {
            panic!()
        };
        assert_eq!(
            b.init,
            BufferInit::Data(vec![
                Value::Float(21.0),
                Value::Float(22.0),
                Value::Float(23.0)
            ])
        );
        let StmtKind::Buffer(b) = one("BUFFER b DATA_TYPE int32 DATA\n 1 -2 # c\n\n 0x10\nEND\n")
        else {
            panic!()
        };
        assert_eq!(
            b.init,
            BufferInit::Data(vec![Value::Int(1), Value::Int(-2), Value::Int(16)])
        );
        let StmtKind::Buffer(b) = one("BUFFER b DATA_TYPE uint32 SIZE 8 SERIES_FROM 1 INC_BY 2")
        else {
            panic!()
        };
        assert_eq!(
            b.init,
            BufferInit::Series {
                elements: 8,
                from: Value::Int(1),
                inc: Value::Int(2)
            }
        );
        let StmtKind::Buffer(b) = one("BUFFER b DATA_TYPE float STD140 SIZE 2 FILL 0.5") else {
            panic!()
        };
        assert_eq!(b.layout, Layout::Std140);
        assert!(parse("BUFFER b DATA_TYPE vec9<float> SIZE 1 FILL 0").is_err());
        let e = parse("\n\nBUFFER b DATA_TYPE float DATA 1 x END").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(parse("BUFFER b DATA_TYPE float DATA 1 2").is_err());
    }

    #[test]
    fn pipeline_with_continuations() {
        let src = "PIPELINE compute p\n  ATTACH s ENTRY_POINT foo \\\n    SPECIALIZE 0 AS uint32 2 \\\n    \
                   SPECIALIZE 1 AS float 0.5\n  SHADER_OPTIMIZATION s\n    --inline\n  END\n  SUBGROUP s\n    \
                   FULLY_POPULATED on\n  END\n  BIND BUFFER a AS storage DESCRIPTOR_SET 1 BINDING 2\n  \
                   BIND BUFFER c AS storage_dynamic DESCRIPTOR_SET 0 BINDING 0 OFFSET 256 DESCRIPTOR_OFFSET 16\n  \
                   BIND BUFFER pc AS push_constant\nEND\n";
        let StmtKind::Pipeline(p) = one(src) else {
            panic!()
        };
        assert_eq!(p.attach[0].entry_point, "foo");
        assert_eq!(p.attach[0].specialize.len(), 2);
        assert_eq!(
            p.attach[0].specialize[1],
            (1, Scalar::F32, Value::Float(0.5))
        );
        assert!(p.subgroup.fully_populated);
        assert_eq!((p.binds[0].set, p.binds[0].binding), (1, 2));
        assert_eq!(p.binds[1].offsets, [256]);
        assert_eq!(p.binds[1].descriptor_offsets, [16]);
        assert_eq!(p.binds[2].kind, BindKind::PushConstant);
    }

    #[test]
    fn expects() {
        let StmtKind::Expect(e) = one("EXPECT b IDX 4 TOLERANCE 0.1 2% EQ 1.5 2") else {
            panic!()
        };
        let ExpectKind::Values {
            offset,
            cmp,
            tolerance,
            values,
        } = e.kind
        else {
            panic!()
        };
        assert_eq!((offset, cmp), (4, Cmp::Eq));
        assert_eq!(
            tolerance,
            [
                Tolerance {
                    value: 0.1,
                    percent: false
                },
                Tolerance {
                    value: 2.0,
                    percent: true
                }
            ]
        );
        assert_eq!(values, [Value::Float(1.5), Value::Int(2)]);
        let StmtKind::Expect(e) = one("EXPECT b IDX 0 GE 3 # note") else {
            panic!()
        };
        assert!(matches!(e.kind, ExpectKind::Values { cmp: Cmp::Ge, .. }));
        let StmtKind::Expect(e) = one("EXPECT a EQ_BUFFER b") else {
            panic!()
        };
        assert!(matches!(e.kind, ExpectKind::EqBuffer(ref b) if b == "b"));
        let StmtKind::Expect(e) = one("EXPECT a RMSE_BUFFER b TOLERANCE 0.5") else {
            panic!()
        };
        assert!(matches!(
            e.kind,
            ExpectKind::RmseBuffer { tolerance: 0.5, .. }
        ));
        let StmtKind::Expect(e) = one("EXPECT img IDX 0 0 SIZE 4 4 EQ_RGBA 1 2 3 4") else {
            panic!()
        };
        assert!(matches!(e.kind, ExpectKind::Rgba { .. }));
        assert!(parse("EXPECT b IDX 0 TOLERANCE 1 LT 3").is_err());
        assert!(parse("EXPECT b IDX 0 EQ").is_err());
    }

    #[test]
    fn nan_infinite_and_negative_tolerances_are_refused() {
        for line in [
            "EXPECT b IDX 0 TOLERANCE nan EQ 1",
            "EXPECT b IDX 0 TOLERANCE 0.1 -nan% EQ 1",
            "EXPECT b IDX 0 TOLERANCE inf EQ 1",
            "EXPECT b IDX 0 TOLERANCE -0.5 EQ 1",
            "EXPECT a RMSE_BUFFER b TOLERANCE nan",
            "EXPECT a RMSE_BUFFER b TOLERANCE -1",
        ] {
            let e = parse(line).expect_err(line);
            assert!(e.msg.contains("finite, non-negative"), "{line}: {e:?}");
        }
        assert!(parse("EXPECT b IDX 0 TOLERANCE 0 EQ 1").is_ok());
    }

    #[test]
    fn repeat_run_copy_and_unsupported() {
        let s = parse("REPEAT 3\nRUN TIMED_EXECUTION p 1 2 3\nEND\nCOPY a TO b\nCLEAR p\nIMAGE i FORMAT R8_UNORM\n")
            .unwrap();
        let StmtKind::Repeat { count, body } = &s.statements[0].kind else {
            panic!()
        };
        assert_eq!(*count, 3);
        assert!(matches!(
            &body[0].kind,
            StmtKind::Run {
                groups: [1, 2, 3],
                ..
            }
        ));
        assert!(matches!(&s.statements[1].kind, StmtKind::Copy { .. }));
        assert!(matches!(&s.statements[2].kind, StmtKind::Clear(_)));
        assert!(matches!(&s.statements[3].kind, StmtKind::Unsupported(_)));
        assert!(parse("REPEAT 2\nRUN p 1 1 1\n").is_err());
        assert!(parse("FROB x").is_err());
        let StmtKind::Unsupported(r) =
            one("PIPELINE graphics g\nATTACH v\nFRAMEBUFFER_SIZE 4 4\nEND")
        else {
            panic!()
        };
        assert!(r.contains("graphics"));
    }

    #[test]
    fn deeply_nested_repeats_are_an_error_not_a_stack_overflow() {
        let nest = |n: usize| {
            format!(
                "{}RUN p 1 1 1\n{}",
                "REPEAT 1\n".repeat(n),
                "END\n".repeat(n)
            )
        };
        assert!(parse(&nest(MAX_REPEAT_DEPTH)).is_ok());
        let e = parse(&nest(10_000)).unwrap_err();
        assert!(
            e.to_string().contains("REPEAT nested more than 64 deep"),
            "{e}"
        );
    }
}

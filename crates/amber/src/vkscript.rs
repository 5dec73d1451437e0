//! VkScript, Amber's other script format (a clone of VkRunner's; Amber's `docs/vk_script.md`), translated
//! into the statements of an AmberScript [`Script`] so that one runner executes both: `[require]` becomes
//! `DEVICE_FEATURE`/`DEVICE_EXTENSION`, `[compute shader]` a `SHADER`, and the `[test]` commands buffers
//! (one per descriptor binding, typed by the first command that names a type), writes, a pipeline per
//! `compute` binding every buffer seen so far, `RUN` and `EXPECT`. Graphics sections and commands make
//! the script [`StmtKind::Unsupported`], naming them.

use crate::parse::{
    Attach, Bind, BindKind, BufferDef, BufferInit, Cmp, Expect, ExpectKind, ParseError,
    PipelineDef, Script, ShaderDef, ShaderFormat, Stmt, StmtKind, SubgroupReq, Tolerance,
};
use crate::types::{DataType, Layout, Scalar, Value};

/// True when `text` is VkScript: its first line that is not blank or a comment opens a section.
pub fn is_vkscript(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .is_some_and(|l| l.starts_with('['))
}

fn err(line: usize, msg: impl Into<String>) -> ParseError {
    ParseError {
        line,
        msg: msg.into(),
    }
}

/// A VkScript datum type (`int`, `uvec3`, `dmat2x3`, `int16_t`, ...) as an Amber data type.
fn datum_type(name: &str) -> Option<DataType> {
    let plain = DataType::plain;
    let scalar = match name {
        "int" => Some(Scalar::I32),
        "uint" => Some(Scalar::U32),
        "int8_t" => Some(Scalar::I8),
        "uint8_t" => Some(Scalar::U8),
        "int16_t" => Some(Scalar::I16),
        "uint16_t" => Some(Scalar::U16),
        "int64_t" => Some(Scalar::I64),
        "uint64_t" => Some(Scalar::U64),
        "float16_t" => Some(Scalar::F16),
        "float" => Some(Scalar::F32),
        "double" => Some(Scalar::F64),
        _ => None,
    };
    if let Some(s) = scalar {
        return Some(plain(s, 1, 1));
    }
    let dim = |d: &str| match d {
        "" => Some(4),
        _ => d.parse::<u32>().ok().filter(|n| (2..=4).contains(n)),
    };
    for (prefix, s) in [
        ("dvec", Scalar::F64),
        ("ivec", Scalar::I32),
        ("uvec", Scalar::U32),
        ("i8vec", Scalar::I8),
        ("u8vec", Scalar::U8),
        ("i16vec", Scalar::I16),
        ("u16vec", Scalar::U16),
        ("i64vec", Scalar::I64),
        ("u64vec", Scalar::U64),
        ("vec", Scalar::F32),
    ] {
        if let Some(n) = name.strip_prefix(prefix) {
            return Some(plain(s, dim(n)?, 1));
        }
    }
    for (prefix, s) in [("dmat", Scalar::F64), ("mat", Scalar::F32)] {
        if let Some(d) = name.strip_prefix(prefix) {
            // GLSL's matCxR: C columns of R rows; matN is NxN.
            let (c, r) = match d.split_once('x') {
                Some((c, r)) => (dim(c)?, dim(r)?),
                None => (dim(d)?, dim(d)?),
            };
            return Some(plain(s, r, c));
        }
    }
    None
}

/// `set:binding` or `binding` (set 0).
fn binding(tok: &str, line: usize) -> Result<(u32, u32), ParseError> {
    let parse = |t: &str| {
        t.parse::<u32>()
            .map_err(|_| err(line, format!("bad binding {tok}")))
    };
    match tok.split_once(':') {
        Some((s, b)) => Ok((parse(s)?, parse(b)?)),
        None => Ok((0, parse(tok)?)),
    }
}

/// Splits a test line into tokens (whitespace; `#` starts a comment).
fn tokens(line: &str) -> Vec<&str> {
    let code = line.split('#').next().unwrap_or("");
    code.split_whitespace().collect()
}

/// The kind of a test-section buffer.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Ssbo,
    Ubo,
    Push,
}

struct Buf {
    name: String,
    kind: Kind,
    set: u32,
    binding: u32,
}

/// A test-section buffer: (kind, set, binding), its type, and the elements it needs.
type BufferType = ((Kind, u32, u32), DataType, usize);

/// Lines with their 1-based numbers.
type Lines = Vec<(usize, String)>;

/// A section: its header's line, the header, its body.
type Section = (usize, String, Lines);

/// Translates a VkScript into AmberScript statements.
pub fn parse(text: &str) -> Result<Script, ParseError> {
    let lines: Vec<&str> = text.lines().collect();
    // Sections: (header line number, header text, body lines (number, text)).
    let mut sections: Vec<Section> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let raw = lines[i];
        let t = raw.trim();
        if t.starts_with('[') {
            let header = t
                .strip_prefix('[')
                .and_then(|h| h.split(']').next())
                .ok_or_else(|| err(i + 1, "bad section header"))?;
            sections.push((i + 1, header.trim().to_string(), Vec::new()));
        } else if let Some(last) = sections.last_mut() {
            last.2.push((i + 1, raw.to_string()));
        } else if !t.is_empty() && !t.starts_with('#') {
            return Err(err(i + 1, "text before the first section"));
        }
        i += 1;
    }
    let mut out = Vec::new();
    let mut compute_shader = false;
    let mut test: Option<(usize, Vec<(usize, String)>)> = None;
    for (line, header, body) in sections {
        let words: Vec<&str> = header.split_whitespace().collect();
        let stmt = |kind| Stmt { line, kind };
        match words.as_slice() {
            ["require"] => {
                for (l, text) in &body {
                    let toks = tokens(text);
                    let Some(&first) = toks.first() else { continue };
                    let kind = match first {
                        "framebuffer" | "depthstencil" | "fbsize" => StmtKind::Unsupported(
                            format!("graphics requirement {first} ([require])"),
                        ),
                        "fence_timeout" => StmtKind::SetEngineData,
                        e if e.starts_with("VK_") => StmtKind::DeviceExtension(e.to_string()),
                        f => StmtKind::DeviceFeature(f.to_string()),
                    };
                    out.push(Stmt { line: *l, kind });
                }
            }
            ["compute", "shader", rest @ ..] => {
                let format = match rest {
                    [] | ["glsl"] => ShaderFormat::Glsl,
                    ["spirv"] => ShaderFormat::SpirvAsm,
                    ["spirv", "hex"] => ShaderFormat::SpirvHex,
                    other => ShaderFormat::Other(other.join(" ")),
                };
                if compute_shader {
                    return Err(err(line, "a second [compute shader] section"));
                }
                compute_shader = true;
                let source = body.iter().map(|(_, t)| format!("{t}\n")).collect();
                out.push(stmt(StmtKind::Shader(ShaderDef {
                    name: "compute_shader".into(),
                    stage: "compute".into(),
                    format,
                    target_env: None,
                    source,
                    file: None,
                    virtual_file: None,
                })));
            }
            ["vertex", "data"] | ["indices"] => {
                out.push(stmt(StmtKind::Unsupported(format!(
                    "graphics vertex input ([{header}])"
                ))));
            }
            ["vertex" | "fragment" | "geometry" | "tessellation", ..] => {
                out.push(stmt(StmtKind::Unsupported(format!(
                    "graphics shaders ([{header}])"
                ))));
            }
            ["test"] => {
                if test.replace((line, body)).is_some() {
                    return Err(err(line, "a second [test] section"));
                }
            }
            ["comment"] => {}
            _ => return Err(err(line, format!("unknown section [{header}]"))),
        }
    }
    if let Some((_, body)) = test {
        test_section(&body, compute_shader, &mut out)?;
    }
    Ok(Script { statements: out })
}

/// Joins `\` continuations: (first line, text).
fn logical_lines(body: &[(usize, String)]) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for (l, text) in body {
        let code = text.split('#').next().unwrap_or("").trim_end();
        let (code, cont) = match code.strip_suffix('\\') {
            Some(c) => (c, true),
            None => (code, false),
        };
        let entry = pending.get_or_insert_with(|| (*l, String::new()));
        entry.1.push(' ');
        entry.1.push_str(code);
        if !cont {
            out.extend(pending.take());
        }
    }
    out.extend(pending);
    out
}

/// The buffer of (kind, set, binding), declared (a `BUFFER` statement) on first use.
fn declare(
    bufs: &mut Vec<Buf>,
    types: &[BufferType],
    kind: Kind,
    set: u32,
    bind: u32,
    line: usize,
    out: &mut Vec<Stmt>,
) -> String {
    if let Some(b) = bufs
        .iter()
        .find(|b| b.kind == kind && b.set == set && b.binding == bind)
    {
        return b.name.clone();
    }
    let name = match kind {
        Kind::Ssbo => format!("ssbo_{set}_{bind}"),
        Kind::Ubo => format!("ubo_{set}_{bind}"),
        Kind::Push => "push_constants".to_string(),
    };
    // A buffer no command types holds bytes (Amber's default format, R8_SINT).
    let (ty, elements) = types
        .iter()
        .find(|(k, _, _)| *k == (kind, set, bind))
        .map_or(
            (DataType::parse("int8").expect("a type"), 0),
            |(_, t, n)| (*t, *n),
        );
    out.push(Stmt {
        line,
        kind: StmtKind::Buffer(BufferDef {
            name: name.clone(),
            ty,
            layout: if kind == Kind::Ubo {
                Layout::Std140
            } else {
                Layout::Std430
            },
            init: BufferInit::Zero { elements },
        }),
    });
    bufs.push(Buf {
        name: name.clone(),
        kind,
        set,
        binding: bind,
    });
    name
}

/// The `[test]` commands.
fn test_section(
    body: &[(usize, String)],
    compute_shader: bool,
    out: &mut Vec<Stmt>,
) -> Result<(), ParseError> {
    let lines = logical_lines(body);
    // Each binding's type: that of the first command naming one (Amber gives every buffer one format).
    let mut types: Vec<BufferType> = Vec::new();
    for (l, text) in &lines {
        let t = tokens(text);
        let found = match t.as_slice() {
            ["ssbo", b, "subdata", ty, ..] => Some((Kind::Ssbo, *b, *ty)),
            ["uniform", "ubo", b, ty, ..] => Some((Kind::Ubo, *b, *ty)),
            ["uniform", ty, ..] => Some((Kind::Push, "0", *ty)),
            ["probe", "ssbo", ty, b, ..] => Some((Kind::Ssbo, *b, *ty)),
            _ => None,
        };
        if let Some((kind, b, ty)) = found {
            let (set, bind) = if kind == Kind::Push {
                (0, 0)
            } else {
                binding(b, *l)?
            };
            let d = datum_type(ty).ok_or_else(|| err(*l, format!("unknown type {ty}")))?;
            if !types.iter().any(|(k, _, _)| *k == (kind, set, bind)) {
                types.push(((kind, set, bind), d, 0));
            }
        }
    }
    // Each buffer's size: the most any data command reaches over the whole script (Amber sizes
    // the buffer when it parses the script, so a dispatch before the command that grows it
    // already sees the full size), or `ssbo B N` elements.
    for (l, text) in &lines {
        let t = tokens(text);
        let reach = match t.as_slice() {
            ["ssbo", b, "subdata", _, off, vals @ ..] => {
                Some((Kind::Ssbo, binding(b, *l)?, Some((*off, vals.len())), None))
            }
            ["ssbo", b, size] => Some((Kind::Ssbo, binding(b, *l)?, None, size.parse().ok())),
            ["uniform", "ubo", b, _, off, vals @ ..] => {
                Some((Kind::Ubo, binding(b, *l)?, Some((*off, vals.len())), None))
            }
            ["uniform", _, off, vals @ ..] => {
                Some((Kind::Push, (0, 0), Some((*off, vals.len())), None))
            }
            _ => None,
        };
        let Some((kind, (set, bind), data, size)) = reach else {
            continue;
        };
        let entry = match types.iter_mut().find(|(k, _, _)| *k == (kind, set, bind)) {
            Some(e) => e,
            None => {
                types.push((
                    (kind, set, bind),
                    DataType::parse("int8").expect("a type"),
                    0,
                ));
                types.last_mut().expect("just pushed")
            }
        };
        let el = entry.1.element_layout(if kind == Kind::Ubo {
            Layout::Std140
        } else {
            Layout::Std430
        });
        let needed = match (data, size) {
            (Some((off, n)), _) => {
                let off: usize = off
                    .parse()
                    .map_err(|_| err(*l, format!("bad offset {off}")))?;
                off.div_ceil(el.stride) + n.div_ceil(el.offsets.len())
            }
            (None, Some(n)) => n,
            (None, None) => 0,
        };
        entry.2 = entry.2.max(needed);
    }
    let mut bufs: Vec<Buf> = Vec::new();
    let mut tolerance: Vec<Tolerance> = Vec::new();
    let mut entry_point = "main".to_string();
    let mut runs = 0;
    let values = |toks: &[&str], line: usize| -> Result<Vec<Value>, ParseError> {
        toks.iter()
            .map(|t| Value::parse(t).ok_or_else(|| err(line, format!("bad value {t}"))))
            .collect()
    };
    let offset = |tok: &str, line: usize| -> Result<usize, ParseError> {
        tok.parse()
            .map_err(|_| err(line, format!("bad offset {tok}")))
    };
    for (l, text) in &lines {
        let l = *l;
        let t = tokens(text);
        let kind = match t.as_slice() {
            [] => continue,
            ["ssbo", b, "subdata", _ty, off, vals @ ..] => {
                let (set, bind) = binding(b, l)?;
                StmtKind::SetData {
                    buffer: declare(&mut bufs, &types, Kind::Ssbo, set, bind, l, out),
                    offset: offset(off, l)?,
                    values: values(vals, l)?,
                }
            }
            ["ssbo", b, size] => {
                let (set, bind) = binding(b, l)?;
                StmtKind::Resize {
                    buffer: declare(&mut bufs, &types, Kind::Ssbo, set, bind, l, out),
                    elements: size
                        .parse()
                        .map_err(|_| err(l, format!("bad ssbo size {size}")))?,
                }
            }
            ["uniform", "ubo", b, _ty, off, vals @ ..] => {
                let (set, bind) = binding(b, l)?;
                StmtKind::SetData {
                    buffer: declare(&mut bufs, &types, Kind::Ubo, set, bind, l, out),
                    offset: offset(off, l)?,
                    values: values(vals, l)?,
                }
            }
            ["uniform", _ty, off, vals @ ..] => StmtKind::SetData {
                buffer: declare(&mut bufs, &types, Kind::Push, 0, 0, l, out),
                offset: offset(off, l)?,
                values: values(vals, l)?,
            },
            ["compute", "entrypoint", name] => {
                entry_point = name.to_string();
                continue;
            }
            ["compute", x, y, z] => {
                if !compute_shader {
                    return Err(err(l, "compute without a [compute shader] section"));
                }
                let group = |v: &str| {
                    v.parse::<u32>()
                        .map_err(|_| err(l, format!("bad workgroup count {v}")))
                };
                runs += 1;
                let name = format!("compute_{runs}");
                let binds = bufs
                    .iter()
                    .map(|b| Bind {
                        buffers: vec![b.name.clone()],
                        kind: match b.kind {
                            Kind::Ssbo => BindKind::Storage,
                            Kind::Ubo => BindKind::Uniform,
                            Kind::Push => BindKind::PushConstant,
                        },
                        set: b.set,
                        binding: b.binding,
                        offsets: Vec::new(),
                        descriptor_offsets: Vec::new(),
                        descriptor_ranges: Vec::new(),
                        line: l,
                        kernel_arg: None,
                    })
                    .collect();
                out.push(Stmt {
                    line: l,
                    kind: StmtKind::Pipeline(PipelineDef {
                        name: name.clone(),
                        kind: "compute".into(),
                        attach: vec![Attach {
                            shader: "compute_shader".into(),
                            entry_point: entry_point.clone(),
                            specialize: Vec::new(),
                        }],
                        binds,
                        subgroup: SubgroupReq::default(),
                        kernel_values: Vec::new(),
                        optimizations: Vec::new(),
                        derived_from: None,
                    }),
                });
                StmtKind::Run {
                    pipeline: name,
                    groups: [group(x)?, group(y)?, group(z)?],
                }
            }
            ["probe", "ssbo", _ty, b, off, cmp, vals @ ..] => {
                let (set, bind) = binding(b, l)?;
                let (cmp, tol) = match *cmp {
                    "==" => (Cmp::Eq, Vec::new()),
                    "!=" => (Cmp::Ne, Vec::new()),
                    "<" => (Cmp::Lt, Vec::new()),
                    "<=" => (Cmp::Le, Vec::new()),
                    ">" => (Cmp::Gt, Vec::new()),
                    ">=" => (Cmp::Ge, Vec::new()),
                    // Amber's fuzzy comparison uses the first tolerance for every value.
                    "~=" => (Cmp::Eq, tolerance.first().copied().into_iter().collect()),
                    other => return Err(err(l, format!("unknown comparison {other}"))),
                };
                StmtKind::Expect(Expect {
                    buffer: declare(&mut bufs, &types, Kind::Ssbo, set, bind, l, out),
                    kind: ExpectKind::Values {
                        offset: offset(off, l)?,
                        cmp,
                        tolerance: tol,
                        values: values(vals, l)?,
                    },
                })
            }
            ["tolerance", vals @ ..] => {
                tolerance.clear();
                for v in vals.iter() {
                    let (num, percent) = match v.strip_suffix('%') {
                        Some(n) => (n, true),
                        None => (*v, false),
                    };
                    let value = Value::parse(num)
                        .map(Value::as_f64)
                        .filter(|x| x.is_finite() && *x >= 0.0)
                        .ok_or_else(|| err(l, format!("bad tolerance {v}")))?;
                    tolerance.push(Tolerance { value, percent });
                }
                if !(1..=4).contains(&tolerance.len()) {
                    return Err(err(l, "tolerance takes 1 to 4 values"));
                }
                continue;
            }
            // Graphics: clears, draws, image probes and pipeline state.
            [first, ..] => StmtKind::Unsupported(format!("graphics command `{first}` ([test])")),
        };
        out.push(Stmt { line: l, kind });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_vkscript() {
        assert!(is_vkscript("# c\n\n[compute shader]\n"));
        assert!(!is_vkscript("#!amber\nSHADER compute s GLSL\n"));
    }

    #[test]
    fn datum_types() {
        let t = datum_type("mat2x3").unwrap();
        assert_eq!((t.cols, t.rows, t.scalar), (2, 3, Scalar::F32));
        assert_eq!(datum_type("dvec3").unwrap().rows, 3);
        assert_eq!(datum_type("u16vec2").unwrap().scalar, Scalar::U16);
        assert_eq!(datum_type("mat4").unwrap().cols, 4);
        assert!(datum_type("vec5").is_none());
    }

    #[test]
    fn translates_a_compute_test() {
        let s = parse(
            "[require]\nVK_KHR_16bit_storage\nshaderInt16\n[compute shader]\n#version 430\nvoid main() {}\n\
             [test]\nssbo 1:2 subdata vec3 0 1 2 3 \\\n  4 5 6\nuniform ubo 0 float 16 2.0\nuniform int 0 7\n\
             compute entrypoint main\ncompute 2 1 1\ntolerance 1% 2\nprobe ssbo vec3 1:2 0 ~= 1 2 3\nclear\n",
        )
        .unwrap();
        let kinds: Vec<String> = s
            .statements
            .iter()
            .map(|st| {
                format!("{:?}", st.kind)
                    .split(['(', ' ', '{'])
                    .next()
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "DeviceExtension",
                "DeviceFeature",
                "Shader",
                "Buffer",
                "SetData",
                "Buffer",
                "SetData",
                "Buffer",
                "SetData",
                "Pipeline",
                "Run",
                "Expect",
                "Unsupported"
            ]
        );
        let StmtKind::SetData { values, .. } = &s.statements[4].kind else {
            panic!()
        };
        assert_eq!(values.len(), 6, "a continued line");
        let StmtKind::Expect(Expect {
            kind: ExpectKind::Values { tolerance, .. },
            ..
        }) = &s.statements[11].kind
        else {
            panic!()
        };
        assert_eq!(tolerance.len(), 1, "the first tolerance only");
        assert!(tolerance[0].percent);
    }

    #[test]
    fn buffers_are_sized_by_every_data_command_of_the_script() {
        let s = parse(
            "[compute shader]\nvoid main() {}\n[test]\nssbo 0 subdata float 0 1 2\ncompute 1 1 1\n\
             ssbo 0 subdata float 40 1\nssbo 1:1 64\nuniform ubo 2 vec3 16 1 2 3 4 5 6\n",
        )
        .unwrap();
        let sizes: Vec<(String, usize)> = s
            .statements
            .iter()
            .filter_map(|st| match &st.kind {
                StmtKind::Buffer(b) => match b.init {
                    BufferInit::Zero { elements } => Some((b.name.clone(), elements)),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        assert_eq!(
            sizes,
            [
                ("ssbo_0_0".to_string(), 11),
                ("ssbo_1_1".to_string(), 64),
                ("ubo_0_2".to_string(), 3)
            ]
        );
    }
}

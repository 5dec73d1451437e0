//! Generates `crates/spirv/src/grammar/generated.rs` from the SPIR-V grammar JSON files.
//!
//! The output is a pure function of the JSON: `check` regenerates and compares, so a test
//! (and CI) notices when the committed tables drift from the grammar.

use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The extended-instruction grammars we embed, with the import name a module uses for each.
pub const EXT_INST_SETS: &[(&str, &str, &str)] = &[
    (
        "GLSL.std.450",
        "extinst.glsl.std.450.grammar.json",
        "glsl_std_450",
    ),
    (
        "NonSemantic.Shader.DebugInfo.100",
        "extinst.nonsemantic.shader.debuginfo.100.grammar.json",
        "nonsemantic_shader_debuginfo_100",
    ),
    (
        "NonSemantic.DebugPrintf",
        "extinst.nonsemantic.debugprintf.grammar.json",
        "nonsemantic_debugprintf",
    ),
    (
        "NonSemantic.ClspvReflection.6",
        "extinst.nonsemantic.clspvreflection.grammar.json",
        "nonsemantic_clspvreflection",
    ),
];

/// Default location of the grammar, relative to the repository root.
pub fn default_grammar_dir(repo: &Path) -> PathBuf {
    repo.join("../shared/spirv-grammar")
}

/// Path of the generated file, relative to the repository root.
pub fn output_path(repo: &Path) -> PathBuf {
    repo.join("crates/spirv/src/grammar/generated.rs")
}

fn load(dir: &Path, file: &str) -> Result<Value> {
    let path = dir.join(file);
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

fn arr<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn version(v: &Value, key: &str) -> String {
    match v.get(key).and_then(Value::as_str) {
        Some("None") | None => "None".into(),
        Some(text) => {
            let (major, minor) = text.split_once('.').unwrap_or((text, "0"));
            format!("Some(({major}, {minor}))")
        }
    }
}

fn str_list(v: &Value, key: &str) -> String {
    let items: Vec<String> = arr(v, key)
        .iter()
        .map(|x| format!("{:?}", x.as_str().unwrap_or("")))
        .collect();
    format!("&[{}]", items.join(", "))
}

fn enum_value(v: &Value) -> Result<u32> {
    match v.get("value") {
        Some(Value::Number(n)) => Ok(n.as_u64().context("enumerant value")? as u32),
        Some(Value::String(text)) => {
            let hex = text.trim_start_matches("0x");
            Ok(u32::from_str_radix(hex, 16)?)
        }
        _ => bail!("enumerant without value: {v}"),
    }
}

/// Turns a grammar name into a Rust identifier (`2x2` -> `_2x2`).
fn ident(name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if clean.chars().next().is_some_and(|c| c.is_ascii_digit()) {
        format!("_{clean}")
    } else {
        clean
    }
}

/// An operand name (`'Combine Func'`, `CombineFunc`, `Operand 1`) as a constant name
/// (`COMBINE_FUNC`, `OPERAND_1`).
fn screaming(name: &str) -> String {
    let words: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { ' ' })
        .collect();
    let parts: Vec<String> = words
        .split_whitespace()
        .map(|w| snake(w).to_ascii_uppercase())
        .collect();
    let out = parts.join("_");
    if out.chars().next().is_some_and(|c| c.is_ascii_digit()) {
        format!("_{out}")
    } else {
        out
    }
}

fn snake(name: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = name.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev_lower =
                i > 0 && (chars[i - 1].is_ascii_lowercase() || chars[i - 1].is_ascii_digit());
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            let prev_upper = i > 0 && chars[i - 1].is_ascii_uppercase();
            if i > 0 && (prev_lower || (prev_upper && next_lower)) {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

struct Ctx {
    kinds: Vec<String>,
}

impl Ctx {
    fn operands(&self, list: &[Value]) -> Result<String> {
        let mut out = String::from("&[");
        for op in list {
            let kind = s(op, "kind");
            if !self.kinds.iter().any(|k| k == kind) {
                bail!("unknown operand kind {kind}");
            }
            let q = match op.get("quantifier").and_then(Value::as_str) {
                None => "One",
                Some("?") => "Optional",
                Some("*") => "Variadic",
                Some(other) => bail!("unknown quantifier {other}"),
            };
            write!(
                out,
                "OperandDesc {{ kind: OperandKind::{kind}, quantifier: Quantifier::{q}, name: {:?} }}, ",
                s(op, "name")
            )?;
        }
        out.push(']');
        Ok(out)
    }
}

/// Generates the Rust source of the tables from the grammar directory.
pub fn generate(dir: &Path) -> Result<String> {
    let core = load(dir, "spirv.core.grammar.json")?;
    let mut ext = Vec::new();
    for (import, file, module) in EXT_INST_SETS {
        ext.push((*import, *module, load(dir, file)?));
    }

    // Every operand kind: core first, then those of the extended sets.
    let mut kind_defs: Vec<&Value> = arr(&core, "operand_kinds").iter().collect();
    for (_, _, g) in &ext {
        for k in arr(g, "operand_kinds") {
            if kind_defs.iter().any(|d| s(d, "kind") == s(k, "kind")) {
                bail!("operand kind {} defined twice", s(k, "kind"));
            }
            kind_defs.push(k);
        }
    }
    let ctx = Ctx {
        kinds: kind_defs.iter().map(|k| s(k, "kind").to_string()).collect(),
    };

    let mut o = String::new();
    let copyright: Vec<&str> = arr(&core, "copyright")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    writeln!(
        o,
        "// @generated by `cargo xtask grammar` from SPIRV-Headers' grammar JSON. Do not edit."
    )?;
    writeln!(o, "//")?;
    writeln!(
        o,
        "// The grammar this file is derived from carries this notice:"
    )?;
    for line in &copyright {
        writeln!(o, "// {line}")?;
    }
    writeln!(o)?;
    writeln!(o, "use super::*;")?;
    writeln!(o)?;
    writeln!(
        o,
        "/// Grammar version: SPIR-V {}.{} revision {}.",
        core["major_version"], core["minor_version"], core["revision"]
    )?;
    writeln!(
        o,
        "pub const GRAMMAR_VERSION: (u32, u32, u32) = ({}, {}, {});",
        core["major_version"], core["minor_version"], core["revision"]
    )?;
    writeln!(o, "/// The SPIR-V magic number.")?;
    writeln!(
        o,
        "pub const MAGIC_NUMBER: u32 = {};",
        core["magic_number"].as_str().unwrap_or("0x07230203")
    )?;
    writeln!(o)?;

    // OperandKind enum.
    writeln!(
        o,
        "/// Every operand kind of the core and embedded extended-instruction grammars."
    )?;
    writeln!(
        o,
        "#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]"
    )?;
    writeln!(o, "#[allow(missing_docs)]")?;
    writeln!(o, "pub enum OperandKind {{")?;
    for k in &kind_defs {
        writeln!(o, "    {},", s(k, "kind"))?;
    }
    writeln!(o, "}}")?;
    writeln!(o)?;

    // Enumerant tables.
    for k in &kind_defs {
        let list = arr(k, "enumerants");
        if list.is_empty() {
            continue;
        }
        writeln!(
            o,
            "static ENUMERANTS_{}: &[EnumerantDesc] = &[",
            ident(s(k, "kind")).to_uppercase()
        )?;
        for e in list {
            writeln!(
                o,
                "    EnumerantDesc {{ name: {:?}, aliases: {}, value: {:#x}, parameters: {}, capabilities: {}, extensions: {}, version: {}, last_version: {}, provisional: {} }},",
                s(e, "enumerant"),
                str_list(e, "aliases"),
                enum_value(e)?,
                ctx.operands(arr(e, "parameters"))?,
                str_list(e, "capabilities"),
                str_list(e, "extensions"),
                version(e, "version"),
                version(e, "lastVersion"),
                e.get("provisional")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            )?;
        }
        writeln!(o, "];")?;
    }
    writeln!(o)?;

    // Operand kind table, indexed by `OperandKind as usize`.
    writeln!(
        o,
        "/// Descriptions of every operand kind, indexed by `OperandKind as usize`."
    )?;
    writeln!(o, "pub static OPERAND_KINDS: &[OperandKindDesc] = &[")?;
    for k in &kind_defs {
        let name = s(k, "kind");
        let category = s(k, "category");
        let enumerants = if arr(k, "enumerants").is_empty() {
            "&[]".to_string()
        } else {
            format!("ENUMERANTS_{}", ident(name).to_uppercase())
        };
        let bases: Vec<String> = arr(k, "bases")
            .iter()
            .map(|b| format!("OperandKind::{}", b.as_str().unwrap_or("")))
            .collect();
        writeln!(
            o,
            "    OperandKindDesc {{ kind: OperandKind::{name}, name: {name:?}, category: OperandCategory::{category}, enumerants: {enumerants}, bases: &[{}] }},",
            bases.join(", ")
        )?;
    }
    writeln!(o, "];")?;
    writeln!(o)?;

    // Instructions sorted by opcode.
    let mut insts: Vec<&Value> = arr(&core, "instructions").iter().collect();
    insts.sort_by_key(|i| i["opcode"].as_u64().unwrap_or(0));
    writeln!(o, "/// Every core instruction, sorted by opcode.")?;
    writeln!(o, "pub static INSTRUCTIONS: &[InstructionDesc] = &[")?;
    for i in &insts {
        writeln!(
            o,
            "    InstructionDesc {{ name: {:?}, aliases: {}, opcode: {}, class: {:?}, operands: {}, capabilities: {}, extensions: {}, version: {}, last_version: {}, provisional: {} }},",
            s(i, "opname"),
            str_list(i, "aliases"),
            i["opcode"],
            s(i, "class"),
            ctx.operands(arr(i, "operands"))?,
            str_list(i, "capabilities"),
            str_list(i, "extensions"),
            version(i, "version"),
            version(i, "lastVersion"),
            i.get("provisional")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        )?;
    }
    writeln!(o, "];")?;
    writeln!(o)?;

    // Opcode constants (names without the `Op` prefix; aliases too).
    writeln!(
        o,
        "/// Opcode constants, named as in the grammar without the `Op` prefix (aliases included)."
    )?;
    writeln!(o, "#[allow(non_upper_case_globals, missing_docs)]")?;
    writeln!(o, "pub mod op {{")?;
    for i in &insts {
        let mut names = vec![s(i, "opname").to_string()];
        names.extend(
            arr(i, "aliases")
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string),
        );
        for n in names {
            writeln!(
                o,
                "    pub const {}: u16 = {};",
                ident(n.trim_start_matches("Op")),
                i["opcode"]
            )?;
        }
    }
    writeln!(o, "}}")?;
    writeln!(o)?;

    // Named argument positions: for each instruction, the index of each named operand among
    // its operand words after Result Type and Result, where that index is fixed (every operand
    // before it is one word: an id, a literal integer or an enum without parameters).
    writeln!(
        o,
        "/// Argument positions of named operands, per instruction (named as the opcode constants):"
    )?;
    writeln!(
        o,
        "/// the index among the operand words after Result Type and Result, for every named operand"
    )?;
    writeln!(
        o,
        "/// whose position is fixed (only one-word operands before it). `args[operands::X::NAME]`."
    )?;
    writeln!(
        o,
        "#[allow(non_upper_case_globals, non_snake_case, missing_docs)]"
    )?;
    writeln!(o, "pub mod operands {{")?;
    // Enum kinds that are always one word (no enumerant takes parameters).
    let one_word_enums: std::collections::BTreeSet<&str> = kind_defs
        .iter()
        .filter(|k| matches!(s(k, "category"), "ValueEnum" | "BitEnum"))
        .filter(|k| {
            arr(k, "enumerants")
                .iter()
                .all(|e| arr(e, "parameters").is_empty())
        })
        .map(|k| s(k, "kind"))
        .collect();
    for i in &insts {
        let mut consts: Vec<(String, usize)> = Vec::new();
        let mut dup = std::collections::BTreeSet::new();
        let mut pos = 0usize;
        for op in arr(i, "operands") {
            let kind = s(op, "kind");
            if kind == "IdResultType" || kind == "IdResult" {
                continue;
            }
            if let Some(name) = op.get("name").and_then(Value::as_str) {
                let c = screaming(name);
                if !c.is_empty() && !consts.iter().any(|(n, _)| *n == c) {
                    consts.push((c, pos));
                } else {
                    dup.insert(c);
                }
            }
            let single =
                kind.starts_with("Id") || kind == "LiteralInteger" || one_word_enums.contains(kind);
            if !single || op.get("quantifier").is_some() {
                break;
            }
            pos += 1;
        }
        consts.retain(|(n, _)| !dup.contains(n));
        if consts.is_empty() {
            continue;
        }
        let name = ident(s(i, "opname").trim_start_matches("Op"));
        writeln!(o, "    pub mod {name} {{")?;
        for (c, p) in &consts {
            writeln!(o, "        pub const {c}: usize = {p};")?;
        }
        writeln!(o, "    }}")?;
        for a in arr(i, "aliases").iter().filter_map(Value::as_str) {
            writeln!(
                o,
                "    pub use {name} as {};",
                ident(a.trim_start_matches("Op"))
            )?;
        }
    }
    writeln!(o, "}}")?;
    writeln!(o)?;

    // Enumerant constants per enum kind.
    for k in &kind_defs {
        let list = arr(k, "enumerants");
        if list.is_empty() {
            continue;
        }
        writeln!(
            o,
            "/// `{}` enumerant values (aliases included).",
            s(k, "kind")
        )?;
        writeln!(o, "#[allow(non_upper_case_globals, missing_docs)]")?;
        writeln!(o, "pub mod {} {{", snake(s(k, "kind")))?;
        let mut seen = std::collections::BTreeSet::new();
        for e in list {
            let mut names = vec![s(e, "enumerant").to_string()];
            names.extend(
                arr(e, "aliases")
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string),
            );
            for n in names {
                if seen.insert(ident(&n)) {
                    writeln!(
                        o,
                        "    pub const {}: u32 = {:#x};",
                        ident(&n),
                        enum_value(e)?
                    )?;
                }
            }
        }
        writeln!(o, "}}")?;
    }
    writeln!(o)?;

    // Extended instruction sets.
    for (import, module, g) in &ext {
        let mut list: Vec<&Value> = arr(g, "instructions").iter().collect();
        list.sort_by_key(|i| i["opcode"].as_u64().unwrap_or(0));
        let table = format!("EXT_{}", module.to_uppercase());
        writeln!(o, "static {table}: &[ExtInstDesc] = &[")?;
        for i in &list {
            writeln!(
                o,
                "    ExtInstDesc {{ name: {:?}, opcode: {}, operands: {}, capabilities: {} }},",
                s(i, "opname"),
                i["opcode"],
                ctx.operands(arr(i, "operands"))?,
                str_list(i, "capabilities"),
            )?;
        }
        writeln!(o, "];")?;
        writeln!(o, "/// `{import}` instruction numbers.")?;
        writeln!(o, "#[allow(non_upper_case_globals, missing_docs)]")?;
        writeln!(o, "pub mod {module} {{")?;
        for i in &list {
            writeln!(
                o,
                "    pub const {}: u32 = {};",
                ident(s(i, "opname")),
                i["opcode"]
            )?;
        }
        writeln!(o, "}}")?;
    }
    writeln!(
        o,
        "/// The embedded extended instruction sets, by import name."
    )?;
    writeln!(o, "pub static EXT_INST_SETS: &[ExtInstSetDesc] = &[")?;
    for (import, module, _) in &ext {
        writeln!(
            o,
            "    ExtInstSetDesc {{ name: {import:?}, instructions: EXT_{} }},",
            module.to_uppercase()
        )?;
    }
    writeln!(o, "];")?;
    Ok(o)
}

/// Writes the generated tables into the repository.
pub fn write(repo: &Path, dir: &Path) -> Result<()> {
    let out = output_path(repo);
    std::fs::write(&out, generate(dir)?).with_context(|| format!("writing {}", out.display()))
}

/// Fails when the committed tables differ from what the generator makes of the grammar.
pub fn check(repo: &Path, dir: &Path) -> Result<()> {
    let out = output_path(repo);
    let committed =
        std::fs::read_to_string(&out).with_context(|| format!("reading {}", out.display()))?;
    if committed != generate(dir)? {
        bail!("{} is stale: run `cargo xtask grammar`", out.display());
    }
    Ok(())
}

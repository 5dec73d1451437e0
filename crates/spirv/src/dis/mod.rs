//! The disassembler: SPIR-V binary to text, byte-identical to SPIRV-Tools' `spirv-dis`.
//!
//! The text format (header comments, the right-aligned `%id = ` column, friendly names, number
//! and string spelling, colours, comment alignment) follows what `spirv-dis` 2026.4 prints; the
//! tests compare against it. Output goes into one preallocated byte buffer; friendly names are
//! computed once per module ([`FriendlyNames`]).

mod cfg;
mod generators;
mod names;
pub mod number;

pub use generators::generator_name;
pub use names::FriendlyNames;

use crate::binary::{Instruction, ParsedBinary};
use crate::grammar::{self, ExtInstSetDesc, OperandCategory, OperandKind, op};
use std::collections::HashMap;

/// Disassembly options; the defaults match `spirv-dis` without flags (writing to a file).
#[derive(Clone, Debug)]
pub struct Options {
    /// Print the `; SPIR-V` header comment lines (`--no-header` turns this off).
    pub header: bool,
    /// Right-align result ids so opcodes line up in column 15 (`--no-indent` turns this off).
    pub indent: bool,
    /// Print ids as numbers instead of friendly names (`--raw-id`).
    pub raw_id: bool,
    /// Append each instruction's byte offset as a comment (`--offsets`).
    pub offsets: bool,
    /// Use ANSI colours (`--color`).
    pub color: bool,
    /// Add section and decoration comments (`--comment`).
    pub comment: bool,
    /// Indent blocks by their structured-control-flow nesting (`--nested-indent`).
    pub nested_indent: bool,
    /// Print blocks in structured order (`--reorder-blocks`).
    pub reorder_blocks: bool,
    /// Follow unknown opcodes (always printed as `OpUnknown(opcode, words)` and their words)
    /// with spirv-dis' re-assembly note (`--handle-unknown-opcodes`).
    pub handle_unknown_opcodes: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            header: true,
            indent: true,
            raw_id: false,
            offsets: false,
            color: false,
            comment: false,
            nested_indent: false,
            reorder_blocks: false,
            handle_unknown_opcodes: false,
        }
    }
}

impl Options {
    /// Sets the option that a `spirv-dis` command-line flag (e.g. `--raw-id`) stands for;
    /// returns false for a flag that selects no option here.
    pub fn set_spirv_dis_flag(&mut self, flag: &str) -> bool {
        match flag {
            "--no-header" => self.header = false,
            "--no-indent" => self.indent = false,
            "--raw-id" => self.raw_id = true,
            "--offsets" => self.offsets = true,
            "--color" => self.color = true,
            "--comment" => self.comment = true,
            "--nested-indent" => self.nested_indent = true,
            "--reorder-blocks" => self.reorder_blocks = true,
            "--handle-unknown-opcodes" => self.handle_unknown_opcodes = true,
            _ => return false,
        }
        true
    }
}

/// Column where opcodes start when indenting (`%id = ` is right-aligned before it).
const INDENT: usize = 15;
/// Comments start at or after this column.
const COMMENT_COLUMN: usize = 50;
/// A long line pushes later comments right, but by at most this column.
const MAX_CARRIED_ALIGN: usize = 256;

const BLUE: &[u8] = b"\x1b[34m";
const YELLOW: &[u8] = b"\x1b[33m";
const RED: &[u8] = b"\x1b[31m";
const GREEN: &[u8] = b"\x1b[32m";
const GREY: &[u8] = b"\x1b[1;30m";
const RESET: &[u8] = b"\x1b[0m";

/// Disassembles a parsed module to text.
pub fn disassemble(bin: &ParsedBinary, opts: &Options) -> String {
    let mut out = Vec::new();
    disassemble_into(bin, opts, &mut out);
    match String::from_utf8(out) {
        Ok(s) => s,
        // Literal strings are printed byte for byte; invalid UTF-8 in them is replaced here.
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// Disassembles a parsed module into a writer (the text is built in memory, then written once).
pub fn write_disassembly<W: std::io::Write>(
    bin: &ParsedBinary,
    opts: &Options,
    w: &mut W,
) -> std::io::Result<()> {
    let mut out = Vec::new();
    disassemble_into(bin, opts, &mut out);
    w.write_all(&out)
}

/// Disassembles a parsed module, appending the text (bytes exactly as `spirv-dis` writes them,
/// which is UTF-8 unless literal strings hold invalid UTF-8) to `out`.
pub fn disassemble_into(bin: &ParsedBinary, opts: &Options, out: &mut Vec<u8>) {
    let words: usize = bin.instructions.iter().map(|i| i.words.len()).sum();
    // About 11 bytes of text per word with friendly names (corpus average).
    out.reserve(words * 12 + 256);
    let mut d = Dis::new(bin.header.bound, &bin.instructions, opts);
    if opts.header {
        d.header(bin, out);
    }
    if opts.nested_indent || opts.reorder_blocks {
        cfg::emit_structured(&mut d, bin, out);
    } else {
        for inst in &bin.instructions {
            d.instruction(inst, out, None);
        }
    }
}

/// Each instruction of a module disassembled on its own, in order, as messages quote it (friendly
/// names, no header, no indentation; a string literal with line breaks stays one entry), printed
/// by the same code as a whole disassembly.
pub fn instruction_texts(m: &crate::Module) -> Vec<String> {
    let opts = Options {
        header: false,
        indent: false,
        ..Default::default()
    };
    let mut d = Dis::new(m.header.bound, &m.instructions, &opts);
    let mut buf = Vec::new();
    m.instructions
        .iter()
        .map(|inst| {
            buf.clear();
            d.instruction(inst, &mut buf, None);
            let text = String::from_utf8_lossy(&buf);
            text.trim_end_matches('\n')
                .trim_start_matches('\n')
                .to_string()
        })
        .collect()
}

impl<'a> Dis<'a> {
    fn new(bound: u32, instructions: &[Instruction], opts: &'a Options) -> Dis<'a> {
        Dis {
            opts,
            names: if opts.raw_id {
                None
            } else {
                Some(FriendlyNames::from_instructions(bound, instructions))
            },
            ext_sets: Vec::new(),
            float_encodings: Vec::new(),
            last_align: 0,
            id_comments: HashMap::new(),
            sections: [false; 3],
            indent: if opts.indent { INDENT } else { 0 },
        }
    }
}

/// The state of one disassembly.
pub(crate) struct Dis<'a> {
    opts: &'a Options,
    names: Option<FriendlyNames>,
    /// Extended instruction set imports: result id and grammar (None: unknown set).
    ext_sets: Vec<(u32, Option<&'static ExtInstSetDesc>)>,
    /// `(type id, FPEncoding)` of float types with an encoding operand.
    float_encodings: Vec<(u32, u32)>,
    /// Column of the previous line's comment (0: it had none).
    last_align: usize,
    /// `--comment`: the decorations of each id, printed where the id is defined.
    id_comments: HashMap<u32, Vec<u8>>,
    /// `--comment`: whether the Annotations / Debug Information / Types sections were announced.
    sections: [bool; 3],
    indent: usize,
}

impl Dis<'_> {
    fn header(&self, bin: &ParsedBinary, out: &mut Vec<u8>) {
        let h = &bin.header;
        let (major, minor) = h.version();
        out.extend_from_slice(b"; SPIR-V\n; Version: ");
        number::write_u64(out, major as u64);
        out.push(b'.');
        number::write_u64(out, minor as u64);
        out.extend_from_slice(b"\n; Generator: ");
        let tool = h.generator >> 16;
        match generator_name(tool) {
            Some(name) => out.extend_from_slice(name.as_bytes()),
            None => {
                out.extend_from_slice(b"Unknown(");
                number::write_u64(out, tool as u64);
                out.push(b')');
            }
        }
        out.extend_from_slice(b"; ");
        number::write_u64(out, (h.generator & 0xffff) as u64);
        out.extend_from_slice(b"\n; Bound: ");
        number::write_u64(out, h.bound as u64);
        out.extend_from_slice(b"\n; Schema: ");
        number::write_u64(out, h.schema as u64);
        out.push(b'\n');
    }

    #[inline]
    fn color(&self, out: &mut Vec<u8>, code: &[u8]) {
        if self.opts.color {
            out.extend_from_slice(code);
        }
    }

    #[inline]
    fn write_id(&self, out: &mut Vec<u8>, id: u32) {
        match &self.names {
            Some(n) => n.write(out, id),
            None => number::write_u64(out, id as u64),
        }
    }

    /// `--comment` section headings, printed before the first instruction of a section.
    fn section_comment(&mut self, inst: &Instruction, out: &mut Vec<u8>) {
        if !self.opts.comment {
            return;
        }
        let opcode = inst.opcode;
        if opcode == op::Function {
            out.push(b'\n');
            if self.opts.nested_indent {
                out.push(b'\n');
            }
            spaces(out, self.indent);
            out.extend_from_slice(b"; Function ");
            self.write_id(out, inst.result_id.unwrap_or(0));
            out.push(b'\n');
        }
        let announce = |d: &mut Self, out: &mut Vec<u8>, i: usize, title: &[u8]| {
            if !d.sections[i] {
                d.sections[i] = true;
                out.push(b'\n');
                spaces(out, d.indent);
                out.extend_from_slice(title);
                out.push(b'\n');
            }
        };
        if is_decoration(opcode) {
            announce(self, out, 0, b"; Annotations");
        }
        if is_debug(opcode) {
            announce(self, out, 1, b"; Debug Information");
        }
        if generates_type(opcode) {
            announce(self, out, 2, b"; Types, variables and constants");
        }
    }

    /// Emits one instruction line. `nest` is the block nesting level under `--nested-indent`
    /// (None outside blocks).
    pub(crate) fn instruction(&mut self, inst: &Instruction, out: &mut Vec<u8>, nest: Option<u32>) {
        self.section_comment(inst, out);
        self.record(inst);
        if self.opts.nested_indent && inst.opcode == op::Label {
            out.push(b'\n');
        }
        let line_start = out.len();
        if let Some(id) = inst.result_id {
            self.color(out, BLUE);
            if self.indent > 0 {
                let len = match &self.names {
                    Some(n) => n.len(id),
                    None => decimal_len(id),
                };
                spaces(out, (self.indent - 4).saturating_sub(len));
            }
            out.push(b'%');
            self.write_id(out, id);
            self.color(out, RESET);
            out.extend_from_slice(b" = ");
        } else {
            spaces(out, self.indent);
        }
        if let Some(level) = nest {
            let level = if inst.opcode == op::Label {
                level
            } else {
                level + 1
            };
            spaces(out, level as usize * 2);
        }
        let desc = instruction_desc(inst.opcode);
        match desc {
            Some(desc) => out.extend_from_slice(desc.name.as_bytes()),
            None => {
                out.extend_from_slice(b"OpUnknown(");
                number::write_u64(out, inst.opcode as u64);
                out.extend_from_slice(b", ");
                number::write_u64(out, inst.words.len() as u64);
                out.push(b')');
            }
        }
        for (i, o) in inst.operands.iter().enumerate() {
            if o.kind == Some(OperandKind::IdResult) {
                continue;
            }
            out.push(b' ');
            self.operand(inst, i, out);
        }
        if desc.is_none() && self.opts.handle_unknown_opcodes {
            out.extend_from_slice(b"  ; note: ID bound may be incorrect after reassembly");
        }
        if self.opts.comment && inst.opcode == op::Decorate {
            self.decoration_comment(inst);
        }
        if self.opts.offsets || self.opts.comment {
            self.comments(inst, line_start, out);
        }
        out.push(b'\n');
    }

    /// Remembers what later instructions' operands need.
    fn record(&mut self, inst: &Instruction) {
        match inst.opcode {
            op::ExtInstImport => {
                if let Some(id) = inst.result_id {
                    let name = inst.string(1).unwrap_or_default();
                    self.ext_sets.push((id, grammar::ext_inst_set(&name)));
                }
            }
            op::TypeFloat => {
                if let (Some(id), Some(&enc)) = (inst.result_id, inst.words.get(3)) {
                    self.float_encodings.push((id, enc));
                }
            }
            _ => {}
        }
    }

    /// Appends the trailing comment (offset, `--comment` notes), aligned with the previous one.
    fn comments(&mut self, inst: &Instruction, line_start: usize, out: &mut Vec<u8>) {
        let mut c = Vec::new();
        let mut sep: &[u8] = b"";
        if self.opts.offsets {
            self.color(&mut c, GREY);
            let off = inst.offset * 4;
            c.extend_from_slice(b"0x");
            let mut hex = [b'0'; 8];
            let mut v = off;
            for h in hex.iter_mut().rev() {
                *h = b"0123456789abcdef"[v & 0xf];
                v >>= 4;
            }
            c.extend_from_slice(&hex);
            if v != 0 {
                // Wider than 8 digits: print all of them.
                c.truncate(c.len() - 10);
                c.extend_from_slice(format!("0x{off:08x}").as_bytes());
            }
            self.color(&mut c, RESET);
            sep = b", ";
        }
        if self.opts.comment && inst.opcode == op::Name {
            c.extend_from_slice(sep);
            c.extend_from_slice(b"id %");
            number::write_u64(&mut c, inst.words.get(1).copied().unwrap_or(0) as u64);
            sep = b", ";
        }
        if self.opts.comment
            && let Some(text) = inst.result_id.and_then(|id| self.id_comments.get(&id))
        {
            c.extend_from_slice(sep);
            c.extend_from_slice(text);
        }
        if c.is_empty() {
            self.last_align = 0;
            return;
        }
        let line = &out[line_start..];
        let len = if self.opts.color {
            visible_len(line)
        } else {
            line.len()
        };
        let align = ((len + 2)
            .max(self.last_align.min(MAX_CARRIED_ALIGN))
            .max(COMMENT_COLUMN)
            + 3)
            & !3;
        self.last_align = align;
        spaces(out, align - len);
        out.extend_from_slice(b"; ");
        out.extend_from_slice(&c);
    }

    /// `--comment`: everything after `OpDecorate %id` becomes a note on `%id`.
    fn decoration_comment(&mut self, inst: &Instruction) {
        let Some(id) = inst.word(0) else { return };
        let mut partial = Vec::new();
        for i in 1..inst.operands.len() {
            if i > 1 {
                partial.push(b' ');
            }
            self.operand(inst, i, &mut partial);
        }
        let entry = self.id_comments.entry(id).or_default();
        if !entry.is_empty() {
            entry.extend_from_slice(b", ");
        }
        entry.extend_from_slice(&partial);
    }

    /// Emits operand `i` of `inst`.
    fn operand(&self, inst: &Instruction, i: usize, out: &mut Vec<u8>) {
        let o = inst.operands[i];
        let at = o.offset as usize;
        let words = inst.words.get(at..at + o.num_words as usize).unwrap_or(&[]);
        // A zero-width literal (e.g. a constant of a 0-bit type) prints nothing.
        let word = words.first().copied().unwrap_or(0);
        let Some(kind) = o.kind else {
            // Words the parser could not interpret (unknown opcode or enumerant): numbers.
            for (k, w) in words.iter().enumerate() {
                if k > 0 {
                    out.push(b' ');
                }
                number::write_u64(out, *w as u64);
            }
            return;
        };
        match kind {
            OperandKind::IdRef
            | OperandKind::IdResultType
            | OperandKind::IdScope
            | OperandKind::IdMemorySemantics => {
                self.color(out, YELLOW);
                out.push(b'%');
                self.write_id(out, word);
            }
            OperandKind::IdResult => {
                self.color(out, BLUE);
                out.push(b'%');
                self.write_id(out, word);
            }
            OperandKind::LiteralExtInstInteger => {
                self.color(out, RED);
                let set_id = if at > 0 { inst.words[at - 1] } else { 0 };
                let set = self
                    .ext_sets
                    .iter()
                    .find(|s| s.0 == set_id)
                    .and_then(|s| s.1);
                match set.and_then(|s| s.instruction(word)) {
                    Some(e) => out.extend_from_slice(e.name.as_bytes()),
                    None => number::write_u64(out, word as u64),
                }
            }
            OperandKind::LiteralSpecConstantOpInteger => {
                self.color(out, RED);
                match grammar::instruction(word as u16) {
                    Some(d) => out
                        .extend_from_slice(d.name.strip_prefix("Op").unwrap_or(d.name).as_bytes()),
                    None => number::write_u64(out, word as u64),
                }
            }
            OperandKind::LiteralInteger
            | OperandKind::LiteralContextDependentNumber
            | OperandKind::LiteralFloat => {
                self.color(out, RED);
                let enc = match (inst.opcode, inst.result_type) {
                    (op::Constant | op::SpecConstant, Some(t)) => {
                        self.float_encodings.iter().find(|e| e.0 == t).map(|e| e.1)
                    }
                    _ => None,
                };
                number::write_literal(out, words, o.number, enc);
                self.color(out, RESET);
            }
            OperandKind::LiteralString => {
                out.push(b'"');
                self.color(out, GREEN);
                'words: for w in words {
                    for b in w.to_le_bytes() {
                        if b == 0 {
                            break 'words;
                        }
                        if b == b'"' || b == b'\\' {
                            out.push(b'\\');
                        }
                        out.push(b);
                    }
                }
                self.color(out, RESET);
                out.push(b'"');
            }
            _ => {
                let desc = grammar::operand_kind(kind);
                match desc.category {
                    OperandCategory::BitEnum => write_mask(out, kind, word),
                    _ => match enumerant(kind, word) {
                        Some(e) => out.extend_from_slice(e.name.as_bytes()),
                        None => number::write_u64(out, word as u64),
                    },
                }
            }
        }
        self.color(out, RESET);
    }
}

/// The grammar entry of an opcode, from a table indexed by opcode (built once).
#[inline]
fn instruction_desc(opcode: u16) -> Option<&'static grammar::InstructionDesc> {
    static TABLE: std::sync::OnceLock<Vec<Option<&'static grammar::InstructionDesc>>> =
        std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let max = grammar::INSTRUCTIONS
            .iter()
            .map(|i| i.opcode as usize)
            .max()
            .unwrap_or(0);
        let mut t = vec![None; max + 1];
        for i in grammar::INSTRUCTIONS {
            t[i.opcode as usize] = Some(i);
        }
        t
    });
    table.get(opcode as usize).copied().flatten()
}

/// The enumerant of `kind` with value `value`: a binary search where the grammar lists the
/// values in order (checked once per kind), else a scan.
fn enumerant(kind: OperandKind, value: u32) -> Option<&'static grammar::EnumerantDesc> {
    static SORTED: std::sync::OnceLock<Vec<bool>> = std::sync::OnceLock::new();
    let sorted = SORTED.get_or_init(|| {
        grammar::OPERAND_KINDS
            .iter()
            .map(|k| k.enumerants.windows(2).all(|w| w[0].value < w[1].value))
            .collect()
    });
    let list = grammar::operand_kind(kind).enumerants;
    if sorted.get(kind as usize).copied().unwrap_or(false) {
        list.binary_search_by_key(&value, |e| e.value)
            .ok()
            .map(|i| &list[i])
    } else {
        list.iter().find(|e| e.value == value)
    }
}

/// Writes a bit mask as its flag names joined by `|` (lowest bit first), or the name of 0.
fn write_mask(out: &mut Vec<u8>, kind: OperandKind, word: u32) {
    if word == 0 {
        if let Some(e) = enumerant(kind, 0) {
            out.extend_from_slice(e.name.as_bytes());
        }
        return;
    }
    let mut first = true;
    for bit in 0..32 {
        let mask = 1u32 << bit;
        if word & mask == 0 {
            continue;
        }
        if !first {
            out.push(b'|');
        }
        first = false;
        match enumerant(kind, mask) {
            Some(e) => out.extend_from_slice(e.name.as_bytes()),
            None => number::write_u64(out, mask as u64),
        }
    }
}

/// Appends `n` spaces.
#[inline]
fn spaces(out: &mut Vec<u8>, n: usize) {
    const SPACES: [u8; 64] = [b' '; 64];
    let mut n = n;
    while n > SPACES.len() {
        out.extend_from_slice(&SPACES);
        n -= SPACES.len();
    }
    out.extend_from_slice(&SPACES[..n]);
}

fn decimal_len(mut v: u32) -> usize {
    let mut n = 1;
    while v >= 10 {
        v /= 10;
        n += 1;
    }
    n
}

/// Length of a line without its ANSI colour sequences (comment alignment ignores them).
fn visible_len(line: &[u8]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < line.len() {
        if line[i] == 0x1b {
            while i < line.len() && line[i] != b'm' {
                i += 1;
            }
        } else {
            n += 1;
        }
        i += 1;
    }
    n
}

/// Opcodes that start the `; Annotations` section.
fn is_decoration(opcode: u16) -> bool {
    matches!(
        opcode,
        op::Decorate
            | op::DecorateId
            | op::MemberDecorate
            | op::GroupDecorate
            | op::GroupMemberDecorate
            | op::DecorateString
            | op::MemberDecorateString
    )
}

/// Opcodes that start the `; Debug Information` section.
fn is_debug(opcode: u16) -> bool {
    matches!(
        opcode,
        op::Name
            | op::MemberName
            | op::Source
            | op::SourceContinued
            | op::SourceExtension
            | op::String
            | op::Line
            | op::NoLine
            | op::ModuleProcessed
    )
}

/// Opcodes that start the `; Types, variables and constants` section.
fn generates_type(opcode: u16) -> bool {
    grammar::instruction(opcode).is_some_and(|d| d.class == "Type-Declaration")
}

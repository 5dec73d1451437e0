//! The SPIR-V binary format: reading a word stream into parsed instructions and writing it back.
//!
//! Parsing keeps every instruction's original words, so writing is exact by construction; the
//! parse adds an operand table (kind, word range, number format) on top. Malformed input gives a
//! [`ParseError`] naming the word offset; unknown opcodes and enumerants are kept as raw words
//! and reported as [`Diagnostic`]s.

use crate::grammar::{self, OperandCategory, OperandDesc, OperandKind, Quantifier, op};
use std::collections::HashMap;

/// The SPIR-V magic number.
pub const MAGIC: u32 = grammar::MAGIC_NUMBER;
/// Number of header words.
pub const HEADER_WORDS: usize = 5;
/// The universal limit on the id bound beyond which id tables switch to hashing.
const DENSE_ID_LIMIT: u32 = 1 << 22;

/// Byte order of a binary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endian {
    /// Little-endian words.
    Little,
    /// Big-endian words.
    Big,
}

/// The five header words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Magic number as read (always [`MAGIC`] after byte-order correction).
    pub magic: u32,
    /// Version word: `0x00MMmm00`.
    pub version: u32,
    /// Generator magic: tool id in the high 16 bits, tool version in the low 16 bits.
    pub generator: u32,
    /// Id bound: every id is below it.
    pub bound: u32,
    /// Reserved schema word (0).
    pub schema: u32,
}

impl Header {
    /// The (major, minor) SPIR-V version.
    pub fn version(&self) -> (u8, u8) {
        ((self.version >> 16) as u8, (self.version >> 8) as u8)
    }

    /// The header as words.
    pub fn words(&self) -> [u32; HEADER_WORDS] {
        [
            self.magic,
            self.version,
            self.generator,
            self.bound,
            self.schema,
        ]
    }
}

/// How a literal number operand is to be interpreted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumberKind {
    /// Not a number (or an untyped 32-bit literal).
    None,
    /// An unsigned integer of this bit width.
    Unsigned(u32),
    /// A signed integer of this bit width.
    Signed(u32),
    /// A floating-point number of this bit width (IEEE, unless the type says otherwise).
    Float(u32),
}

/// One parsed operand: where it sits in the instruction and what it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParsedOperand {
    /// Index of its first word within the instruction's words.
    pub offset: u16,
    /// Number of words it spans.
    pub num_words: u16,
    /// Its kind, or `None` for raw words that could not be interpreted.
    pub kind: Option<OperandKind>,
    /// How a literal number is to be read.
    pub number: NumberKind,
}

/// A parsed instruction: its words and its operand table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instruction {
    /// The opcode (low half of the first word).
    pub opcode: u16,
    /// All words, the first word included.
    pub words: Vec<u32>,
    /// The operands in order.
    pub operands: Vec<ParsedOperand>,
    /// Result type id, if the instruction has one.
    pub result_type: Option<u32>,
    /// Result id, if the instruction defines one.
    pub result_id: Option<u32>,
    /// Word offset of the instruction within the module (0 for synthesized instructions).
    pub offset: usize,
}

impl Instruction {
    /// The grammar description, if the opcode is known.
    pub fn desc(&self) -> Option<&'static grammar::InstructionDesc> {
        grammar::instruction(self.opcode)
    }

    /// The words of operand `i` (empty when the instruction has no such operand).
    pub fn operand_words(&self, i: usize) -> &[u32] {
        self.operands
            .get(i)
            .and_then(|o| {
                self.words
                    .get(o.offset as usize..o.offset as usize + o.num_words as usize)
            })
            .unwrap_or(&[])
    }

    /// The first word of operand `i` (an id, enum value or 32-bit literal), if present. An
    /// operand of no words (a malformed instruction's empty tail) has none.
    pub fn word(&self, i: usize) -> Option<u32> {
        self.operands
            .get(i)
            .filter(|o| o.num_words > 0)
            .and_then(|o| self.words.get(o.offset as usize).copied())
    }

    /// Operand `i` decoded as a literal string.
    pub fn string(&self, i: usize) -> Option<String> {
        self.operands
            .get(i)
            .map(|_| decode_string(self.operand_words(i)).0)
    }

    /// Index of the first operand after the result type and result id.
    pub fn first_arg(&self) -> usize {
        self.result_type.is_some() as usize + self.result_id.is_some() as usize
    }

    /// Ids referenced by this instruction (not its result id), in operand order.
    pub fn id_refs(&self) -> impl Iterator<Item = u32> + '_ {
        self.operands.iter().filter_map(|o| match o.kind {
            Some(
                OperandKind::IdRef
                | OperandKind::IdResultType
                | OperandKind::IdScope
                | OperandKind::IdMemorySemantics,
            ) => Some(self.words[o.offset as usize]),
            _ => None,
        })
    }
}

/// Something unusual but recoverable found while parsing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Word offset of the instruction.
    pub offset: usize,
    /// What was found.
    pub message: String,
}

/// Why a binary could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("word {offset}: {message}")]
pub struct ParseError {
    /// Word offset where the problem was found.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
}

fn err<T>(offset: usize, message: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError {
        offset,
        message: message.into(),
    })
}

/// A parsed binary: header, instructions, byte order and recoverable diagnostics.
#[derive(Clone, Debug)]
pub struct ParsedBinary {
    /// The header.
    pub header: Header,
    /// The byte order the input had.
    pub endian: Endian,
    /// The instructions in order.
    pub instructions: Vec<Instruction>,
    /// Unknown opcodes and enumerants.
    pub diagnostics: Vec<Diagnostic>,
}

/// Converts bytes to words, detecting the byte order from the magic number.
pub fn words_from_bytes(bytes: &[u8]) -> Result<(Vec<u32>, Endian), ParseError> {
    if !bytes.len().is_multiple_of(4) {
        return err(
            bytes.len() / 4,
            format!("binary size {} is not a multiple of 4 bytes", bytes.len()),
        );
    }
    if bytes.len() < 4 {
        return err(0, "binary is shorter than the magic number");
    }
    let le = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    let endian = if le == MAGIC {
        Endian::Little
    } else if le.swap_bytes() == MAGIC {
        Endian::Big
    } else {
        return err(0, format!("invalid magic number {le:#010x}"));
    };
    let words = bytes
        .chunks_exact(4)
        .map(|c| {
            let w = [c[0], c[1], c[2], c[3]];
            if endian == Endian::Little {
                u32::from_le_bytes(w)
            } else {
                u32::from_be_bytes(w)
            }
        })
        .collect();
    Ok((words, endian))
}

/// Serializes words to bytes in the given byte order.
pub fn bytes_from_words(words: &[u32], endian: Endian) -> Vec<u8> {
    let mut out = Vec::with_capacity(words.len() * 4);
    for w in words {
        out.extend_from_slice(&match endian {
            Endian::Little => w.to_le_bytes(),
            Endian::Big => w.to_be_bytes(),
        });
    }
    out
}

/// Decodes a nul-terminated literal string; returns the string and the words it used
/// (`None` when unterminated).
pub fn decode_string(words: &[u32]) -> (String, Option<usize>) {
    let mut bytes = Vec::new();
    for (i, w) in words.iter().enumerate() {
        for b in w.to_le_bytes() {
            if b == 0 {
                return (String::from_utf8_lossy(&bytes).into_owned(), Some(i + 1));
            }
            bytes.push(b);
        }
    }
    (String::from_utf8_lossy(&bytes).into_owned(), None)
}

/// Encodes a literal string: UTF-8 bytes, a nul, zero padding to a word.
pub fn encode_string(s: &str, out: &mut Vec<u32>) {
    let bytes = s.as_bytes();
    for chunk in bytes.chunks(4) {
        let mut w = [0u8; 4];
        w[..chunk.len()].copy_from_slice(chunk);
        out.push(u32::from_le_bytes(w));
    }
    if bytes.len().is_multiple_of(4) {
        out.push(0);
    }
}

/// What the parser remembers about a numeric type.
#[derive(Clone, Copy)]
struct NumType {
    width: u32,
    float: bool,
    signed: bool,
}

/// An id-indexed table: dense for sane ids, hashed beyond (so a huge id in malformed input
/// costs no huge allocation). Shared by the reader and the assembler.
pub(crate) struct IdTable<T: Copy> {
    dense: Vec<Option<T>>,
    sparse: HashMap<u32, T>,
}

impl<T: Copy> Default for IdTable<T> {
    fn default() -> Self {
        Self {
            dense: Vec::new(),
            sparse: HashMap::new(),
        }
    }
}

impl<T: Copy> IdTable<T> {
    pub(crate) fn get(&self, id: u32) -> Option<T> {
        if id < DENSE_ID_LIMIT {
            self.dense.get(id as usize).copied().flatten()
        } else {
            self.sparse.get(&id).copied()
        }
    }
    pub(crate) fn set(&mut self, id: u32, v: T) {
        if id < DENSE_ID_LIMIT {
            if self.dense.len() <= id as usize {
                self.dense.resize(id as usize + 1, None);
            }
            self.dense[id as usize] = Some(v);
        } else {
            self.sparse.insert(id, v);
        }
    }
}

/// Context that operand parsing needs from earlier instructions.
#[derive(Default)]
struct Context {
    num_types: IdTable<NumType>,
    value_types: IdTable<u32>,
    ext_sets: HashMap<u32, ExtSet>,
}

#[derive(Clone, Copy)]
enum ExtSet {
    Known(&'static grammar::ExtInstSetDesc),
    /// A `NonSemantic.*` set we have no grammar for: operands are ids.
    NonSemantic,
    Unknown,
}

/// Parses a SPIR-V binary from bytes (either byte order).
pub fn parse_bytes(bytes: &[u8]) -> Result<ParsedBinary, ParseError> {
    let (words, endian) = words_from_bytes(bytes)?;
    let mut parsed = parse_words(&words)?;
    parsed.endian = endian;
    Ok(parsed)
}

/// Parses a SPIR-V binary from words in host order.
pub fn parse_words(words: &[u32]) -> Result<ParsedBinary, ParseError> {
    if words.len() < HEADER_WORDS {
        return err(
            words.len(),
            format!(
                "header needs {HEADER_WORDS} words, binary has {}",
                words.len()
            ),
        );
    }
    if words[0] != MAGIC {
        return err(0, format!("invalid magic number {:#010x}", words[0]));
    }
    let header = Header {
        magic: words[0],
        version: words[1],
        generator: words[2],
        bound: words[3],
        schema: words[4],
    };
    let mut parser = Parser {
        header,
        ctx: Context::default(),
        diagnostics: Vec::new(),
    };
    let mut instructions = Vec::new();
    let mut pos = HEADER_WORDS;
    while pos < words.len() {
        let first = words[pos];
        let count = (first >> 16) as usize;
        let opcode = (first & 0xffff) as u16;
        if count == 0 {
            return err(
                pos,
                format!("instruction word count is 0 (opcode {opcode})"),
            );
        }
        if pos + count > words.len() {
            return err(
                pos,
                format!(
                    "instruction needs {count} words but only {} remain (opcode {opcode})",
                    words.len() - pos
                ),
            );
        }
        instructions.push(parser.instruction(&words[pos..pos + count], pos)?);
        pos += count;
    }
    Ok(ParsedBinary {
        header,
        endian: Endian::Little,
        instructions,
        diagnostics: parser.diagnostics,
    })
}

/// Writes a header and instructions as words.
pub fn write_words(header: &Header, instructions: &[Instruction]) -> Vec<u32> {
    let mut out = Vec::with_capacity(
        HEADER_WORDS + instructions.iter().map(|i| i.words.len()).sum::<usize>(),
    );
    out.extend_from_slice(&header.words());
    for inst in instructions {
        out.extend_from_slice(&inst.words);
    }
    out
}

struct Parser {
    header: Header,
    ctx: Context,
    diagnostics: Vec<Diagnostic>,
}

/// One expected operand slot on the parse stack.
#[derive(Clone, Copy)]
struct Slot {
    kind: OperandKind,
    quantifier: Quantifier,
}

impl Parser {
    fn instruction(&mut self, words: &[u32], offset: usize) -> Result<Instruction, ParseError> {
        let opcode = (words[0] & 0xffff) as u16;
        let mut inst = Instruction {
            opcode,
            words: words.to_vec(),
            operands: Vec::new(),
            result_type: None,
            result_id: None,
            offset,
        };
        let Some(desc) = grammar::instruction(opcode) else {
            self.diagnostics.push(Diagnostic {
                offset,
                message: format!("unknown opcode {opcode}; kept as raw words"),
            });
            if words.len() > 1 {
                inst.operands.push(ParsedOperand {
                    offset: 1,
                    num_words: (words.len() - 1) as u16,
                    kind: None,
                    number: NumberKind::None,
                });
            }
            return Ok(inst);
        };
        // Expected operands are consumed from the end of `stack` (so it holds them reversed).
        let mut stack: Vec<Slot> = slots(desc.operands).rev().collect();
        let mut pos = 1usize;
        while let Some(slot) = stack.pop() {
            if pos >= words.len() {
                if slot.quantifier == Quantifier::One {
                    return err(
                        offset,
                        format!(
                            "{} is missing operand {:?} (instruction has {} words)",
                            desc.name,
                            slot.kind,
                            words.len()
                        ),
                    );
                }
                continue;
            }
            if slot.quantifier == Quantifier::Variadic {
                stack.push(slot);
            }
            if !self.operand(&mut inst, slot.kind, &mut pos, &mut stack, offset)? {
                // Not interpretable: the rest of the instruction stays raw.
                inst.operands.push(ParsedOperand {
                    offset: pos as u16,
                    num_words: (words.len() - pos) as u16,
                    kind: None,
                    number: NumberKind::None,
                });
                pos = words.len();
                break;
            }
        }
        if pos < words.len() {
            return err(
                offset,
                format!(
                    "{} has {} words beyond its operands",
                    desc.name,
                    words.len() - pos
                ),
            );
        }
        self.record(&inst, offset)?;
        Ok(inst)
    }

    /// Parses one operand of `kind` at `pos`; returns false when the rest must stay raw.
    fn operand(
        &mut self,
        inst: &mut Instruction,
        kind: OperandKind,
        pos: &mut usize,
        stack: &mut Vec<Slot>,
        offset: usize,
    ) -> Result<bool, ParseError> {
        let words = &inst.words;
        let word = words[*pos];
        let start = *pos;
        let mut number = NumberKind::None;
        let mut len = 1usize;
        let desc = grammar::operand_kind(kind);
        match kind {
            OperandKind::IdResult
            | OperandKind::IdResultType
            | OperandKind::IdRef
            | OperandKind::IdScope
            | OperandKind::IdMemorySemantics => {
                if word == 0 {
                    return err(offset, format!("operand {} is id 0", *pos));
                }
                if word >= self.header.bound {
                    return err(
                        offset,
                        format!("id {word} is not below the id bound {}", self.header.bound),
                    );
                }
                if kind == OperandKind::IdResult {
                    inst.result_id = Some(word);
                } else if kind == OperandKind::IdResultType {
                    inst.result_type = Some(word);
                }
            }
            OperandKind::LiteralString => {
                let (_, used) = decode_string(&words[start..]);
                match used {
                    Some(n) => len = n,
                    None => {
                        return err(
                            offset,
                            "literal string is not nul-terminated within its instruction",
                        );
                    }
                }
            }
            OperandKind::LiteralContextDependentNumber => {
                // OpConstant / OpSpecConstant: the width comes from the result type.
                let ty = inst.result_type.and_then(|t| self.ctx.num_types.get(t));
                match ty {
                    Some(t) => {
                        len = t.width.div_ceil(32) as usize;
                        number = num_kind(t);
                    }
                    None => {
                        return err(
                            offset,
                            "literal number whose type is not a numeric scalar type",
                        );
                    }
                }
            }
            OperandKind::LiteralInteger if inst.opcode == op::Switch => {
                // OpSwitch case literals take the selector's width.
                let selector = inst.word(0).unwrap_or(0);
                let t = self
                    .ctx
                    .value_types
                    .get(selector)
                    .and_then(|t| self.ctx.num_types.get(t));
                match t {
                    Some(t) if !t.float => {
                        len = t.width.div_ceil(32) as usize;
                        number = num_kind(t);
                    }
                    _ => return err(offset, "OpSwitch selector is not of a scalar integer type"),
                }
            }
            OperandKind::LiteralInteger | OperandKind::LiteralFloat => {
                number = if kind == OperandKind::LiteralFloat {
                    NumberKind::Float(32)
                } else {
                    NumberKind::Unsigned(32)
                };
            }
            OperandKind::LiteralExtInstInteger => {
                let set = inst
                    .word(2)
                    .and_then(|id| self.ctx.ext_sets.get(&id).copied());
                match set {
                    Some(ExtSet::Known(set)) => match set.instruction(word) {
                        Some(e) => push_slots(stack, e.operands),
                        None => {
                            self.diagnostics.push(Diagnostic {
                                offset,
                                message: format!(
                                    "unknown instruction {word} of extended set {}",
                                    set.name
                                ),
                            });
                            stack.clear();
                            stack.push(Slot {
                                kind: OperandKind::IdRef,
                                quantifier: Quantifier::Variadic,
                            });
                        }
                    },
                    Some(ExtSet::NonSemantic) => {
                        stack.clear();
                        stack.push(Slot {
                            kind: OperandKind::IdRef,
                            quantifier: Quantifier::Variadic,
                        });
                    }
                    Some(ExtSet::Unknown) => {
                        stack.clear();
                        stack.push(Slot {
                            kind: OperandKind::LiteralInteger,
                            quantifier: Quantifier::Variadic,
                        });
                    }
                    None => return err(offset, "OpExtInst set is not an OpExtInstImport result"),
                }
                number = NumberKind::Unsigned(32);
            }
            OperandKind::LiteralSpecConstantOpInteger => match grammar::instruction(word as u16) {
                Some(d) if word >> 16 == 0 => {
                    let rest: Vec<OperandDesc> = d
                        .operands
                        .iter()
                        .copied()
                        .filter(|o| {
                            !matches!(o.kind, OperandKind::IdResult | OperandKind::IdResultType)
                        })
                        .collect();
                    push_slots(stack, &rest);
                }
                _ => {
                    return err(
                        offset,
                        format!("OpSpecConstantOp names unknown opcode {word}"),
                    );
                }
            },
            _ => match desc.category {
                OperandCategory::ValueEnum => match grammar::enumerant(kind, word) {
                    Some(e) => push_slots(stack, e.parameters),
                    None => {
                        self.diagnostics.push(Diagnostic {
                            offset,
                            message: format!("unknown {} value {word}", desc.name),
                        });
                        inst.operands.push(raw_one(start, kind));
                        *pos += 1;
                        return Ok(false);
                    }
                },
                OperandCategory::BitEnum => {
                    let mut params = Vec::new();
                    for bit in 0..32 {
                        let mask = 1u32 << bit;
                        if word & mask == 0 {
                            continue;
                        }
                        match grammar::enumerant(kind, mask) {
                            Some(e) => params.extend(e.parameters.iter().copied()),
                            None => {
                                self.diagnostics.push(Diagnostic {
                                    offset,
                                    message: format!("unknown {} bit {mask:#x}", desc.name),
                                });
                                inst.operands.push(raw_one(start, kind));
                                *pos += 1;
                                return Ok(false);
                            }
                        }
                    }
                    push_slots(stack, &params);
                }
                OperandCategory::Composite => {
                    // SPIRV-Tools reads `PairIdRefIdRef*` (OpPhi) as a plain id list: an odd count
                    // parses and disassembles (only the validator objects), so the second id
                    // of such a pair is optional.
                    let bases: Vec<OperandDesc> = desc
                        .bases
                        .iter()
                        .enumerate()
                        .map(|(i, &k)| OperandDesc {
                            kind: k,
                            quantifier: if i > 0 && kind == OperandKind::PairIdRefIdRef {
                                Quantifier::Optional
                            } else {
                                Quantifier::One
                            },
                            name: "",
                        })
                        .collect();
                    push_slots(stack, &bases);
                    return Ok(true);
                }
                OperandCategory::Id | OperandCategory::Literal => {}
            },
        }
        if start + len > inst.words.len() {
            return err(
                offset,
                format!("operand {start} runs past the end of the instruction"),
            );
        }
        inst.operands.push(ParsedOperand {
            offset: start as u16,
            num_words: len as u16,
            kind: Some(kind),
            number,
        });
        *pos += len;
        Ok(true)
    }

    /// Records what later instructions need to know about this one.
    fn record(&mut self, inst: &Instruction, offset: usize) -> Result<(), ParseError> {
        if let (Some(id), Some(ty)) = (inst.result_id, inst.result_type) {
            self.ctx.value_types.set(id, ty);
        }
        match inst.opcode {
            op::TypeInt => {
                if let (Some(id), Some(width), Some(signed)) =
                    (inst.result_id, inst.word(1), inst.word(2))
                {
                    self.ctx.num_types.set(
                        id,
                        NumType {
                            width,
                            float: false,
                            signed: signed != 0,
                        },
                    );
                }
            }
            op::TypeFloat => {
                if let (Some(id), Some(width)) = (inst.result_id, inst.word(1)) {
                    self.ctx.num_types.set(
                        id,
                        NumType {
                            width,
                            float: true,
                            signed: true,
                        },
                    );
                }
            }
            op::ExtInstImport => {
                let name = inst.string(1).unwrap_or_default();
                let set = match grammar::ext_inst_set(&name) {
                    Some(s) => ExtSet::Known(s),
                    None if name.starts_with("NonSemantic.") => ExtSet::NonSemantic,
                    None => ExtSet::Unknown,
                };
                if let Some(id) = inst.result_id {
                    self.ctx.ext_sets.insert(id, set);
                }
            }
            _ => {}
        }
        let _ = offset;
        Ok(())
    }
}

fn num_kind(t: NumType) -> NumberKind {
    if t.float {
        NumberKind::Float(t.width)
    } else if t.signed {
        NumberKind::Signed(t.width)
    } else {
        NumberKind::Unsigned(t.width)
    }
}

fn raw_one(start: usize, kind: OperandKind) -> ParsedOperand {
    ParsedOperand {
        offset: start as u16,
        num_words: 1,
        kind: Some(kind),
        number: NumberKind::None,
    }
}

fn slots(list: &'static [OperandDesc]) -> impl DoubleEndedIterator<Item = Slot> {
    list.iter().map(|o| Slot {
        kind: o.kind,
        quantifier: o.quantifier,
    })
}

/// Pushes operand slots so that the first is consumed next.
fn push_slots(stack: &mut Vec<Slot>, list: &[OperandDesc]) {
    for o in list.iter().rev() {
        stack.push(Slot {
            kind: o.kind,
            quantifier: o.quantifier,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(body: &[u32], bound: u32) -> Vec<u32> {
        let mut w = vec![MAGIC, 0x0001_0600, 0, bound, 0];
        w.extend_from_slice(body);
        w
    }

    #[test]
    fn strings_round_trip() {
        for s in [
            "",
            "a",
            "abcd",
            "GLSL.std.450",
            "SPV_NV_cooperative_matrix2",
        ] {
            let mut w = Vec::new();
            encode_string(s, &mut w);
            assert_eq!(decode_string(&w), (s.to_string(), Some(w.len())));
        }
    }

    #[test]
    fn constants_take_their_width_from_the_type() {
        // %1 = OpTypeInt 64 0 ; %2 = OpConstant %1 0x1_0000_0002
        let w = module(
            &[
                4 << 16 | op::TypeInt as u32,
                1,
                64,
                0,
                5 << 16 | op::Constant as u32,
                1,
                2,
                2,
                1,
            ],
            3,
        );
        let p = parse_words(&w).unwrap();
        let c = &p.instructions[1];
        assert_eq!(c.operands[2].num_words, 2);
        assert_eq!(c.operands[2].number, NumberKind::Unsigned(64));
        assert_eq!(write_words(&p.header, &p.instructions), w);
    }

    #[test]
    fn malformed_input_names_the_word() {
        let w = module(&[0], 1);
        assert_eq!(parse_words(&w).unwrap_err().offset, 5);
        let w = module(&[4 << 16 | op::TypeInt as u32, 1, 32], 2);
        assert!(parse_words(&w).unwrap_err().message.contains("need"));
        let w = module(&[4 << 16 | op::TypeInt as u32, 9, 32, 0], 2);
        assert!(parse_words(&w).unwrap_err().message.contains("bound"));
    }

    #[test]
    fn unknown_opcodes_are_kept_raw() {
        let w = module(&[3 << 16 | 0xfff0, 7, 8], 2);
        let p = parse_words(&w).unwrap();
        assert_eq!(p.diagnostics.len(), 1);
        assert_eq!(write_words(&p.header, &p.instructions), w);
    }
}

//! The SPIR-V core of coopmat: grammar tables, the binary reader and writer, the module IR,
//! the disassembler and the assembler.

pub mod binary;
pub mod grammar;

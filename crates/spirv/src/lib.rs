//! The SPIR-V core of coopmat: grammar tables, the binary reader and writer, the module IR,
//! the disassembler and the assembler.

pub mod asm;
pub mod binary;
pub mod cfg;
pub mod coopvec;
pub mod dis;
pub mod grammar;
pub mod info;
pub mod module;
pub mod scalar_ops;
pub mod types;

pub use binary::{Instruction, ParseError};
pub use module::{Module, ModuleError};

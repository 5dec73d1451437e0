//! `--nested-indent` and `--reorder-blocks`: laying out function bodies by structured control
//! flow (SPIR-V spec 2.11 "Structured Control Flow").
//!
//! Blocks are walked depth first from the entry block: a header block (one with
//! `OpSelectionMerge` / `OpLoopMerge`) visits its branch targets in operand order, then its
//! continue target, then its merge block; any other block visits those successors that are not
//! some construct's merge block or continue target (their header places them). Nesting levels,
//! as spirv-dis prints them: a header's branch targets are two levels deeper than the header,
//! its continue target one level deeper, its merge block at the header's level, and a plain
//! successor at its predecessor's level. A level is two spaces; instructions inside a block are
//! one level deeper than its label. Without `--reorder-blocks` blocks keep their binary order.

use super::Dis;
use crate::binary::{Instruction, ParsedBinary};
use crate::grammar::op;
use std::collections::HashMap;

/// One block: its instruction range and the structure read from its last instructions.
struct Block {
    label: u32,
    start: usize,
    end: usize,
    merge: Option<u32>,
    continue_target: Option<u32>,
    successors: Vec<u32>,
    /// Ends in `OpBranchConditional` or `OpSwitch`.
    branches_conditionally: bool,
}

/// Emits the module with block nesting and/or structured block order.
pub(crate) fn emit_structured(d: &mut Dis<'_>, bin: &ParsedBinary, out: &mut Vec<u8>) {
    let insts = &bin.instructions;
    let mut i = 0;
    while i < insts.len() {
        if insts[i].opcode != op::Function {
            d.instruction(&insts[i], out, None);
            i += 1;
            continue;
        }
        // OpFunction and its parameters come before the first block.
        while i < insts.len() && insts[i].opcode != op::Label && insts[i].opcode != op::FunctionEnd
        {
            d.instruction(&insts[i], out, None);
            i += 1;
        }
        let body_start = i;
        while i < insts.len() && insts[i].opcode != op::FunctionEnd {
            i += 1;
        }
        function_body(d, &insts[body_start..i], out);
        if i < insts.len() {
            d.instruction(&insts[i], out, None);
            i += 1;
        }
    }
}

fn function_body(d: &mut Dis<'_>, insts: &[Instruction], out: &mut Vec<u8>) {
    let blocks = blocks(insts);
    let index: HashMap<u32, usize> = blocks
        .iter()
        .enumerate()
        .map(|(k, b)| (b.label, k))
        .collect();
    let (order, levels) = structure(&blocks, &index);
    let nested = d.opts.nested_indent;
    let emit_block = |d: &mut Dis<'_>, out: &mut Vec<u8>, k: usize| {
        let b = &blocks[k];
        let level = if nested { Some(levels[k]) } else { None };
        for inst in &insts[b.start..b.end] {
            d.instruction(inst, out, level);
        }
    };
    // Instructions before the first label (malformed input) keep their place.
    let first = blocks.first().map_or(insts.len(), |b| b.start);
    for inst in &insts[..first] {
        d.instruction(inst, out, None);
    }
    if d.opts.reorder_blocks {
        for k in order {
            emit_block(d, out, k);
        }
    } else {
        for k in 0..blocks.len() {
            emit_block(d, out, k);
        }
    }
}

/// Splits a function body into blocks.
fn blocks(insts: &[Instruction]) -> Vec<Block> {
    let mut blocks: Vec<Block> = Vec::new();
    for (k, inst) in insts.iter().enumerate() {
        if inst.opcode == op::Label {
            blocks.push(Block {
                label: inst.result_id.unwrap_or(0),
                start: k,
                end: k + 1,
                merge: None,
                continue_target: None,
                successors: Vec::new(),
                branches_conditionally: false,
            });
            continue;
        }
        let Some(b) = blocks.last_mut() else { continue };
        b.end = k + 1;
        if let Some(mi) = crate::cfg::merge_info(inst) {
            b.merge = Some(mi.merge);
            b.continue_target = mi.continue_target;
        }
        b.branches_conditionally |= matches!(inst.opcode, op::BranchConditional | op::Switch);
        b.successors.extend(crate::cfg::successors(inst));
    }
    blocks
}

/// The structured order of the blocks and the nesting level of each.
fn structure(blocks: &[Block], index: &HashMap<u32, usize>) -> (Vec<usize>, Vec<u32>) {
    let n = blocks.len();
    let mut order = Vec::with_capacity(n);
    let mut levels = vec![0u32; n];
    if n == 0 {
        return (order, levels);
    }
    // Blocks placed by a header: merge blocks and continue targets.
    let mut placed_by_header = vec![false; n];
    for b in blocks {
        for t in [b.merge, b.continue_target].into_iter().flatten() {
            if let Some(&k) = index.get(&t) {
                placed_by_header[k] = true;
            }
        }
    }
    // Depth first with an explicit stack; a block is claimed (and gets its level) when first
    // pushed, so a block listed twice by one `OpSwitch` is placed at its last listing.
    let mut visited = vec![false; n];
    visited[0] = true;
    let mut stack: Vec<usize> = vec![0];
    let mut children: Vec<(usize, u32)> = Vec::new();
    while let Some(k) = stack.pop() {
        let level = levels[k];
        order.push(k);
        let b = &blocks[k];
        children.clear();
        let lookup = |id: u32| index.get(&id).copied();
        // Targets of a header or of a conditional branch / switch are nested two levels deeper.
        let step = if b.merge.is_some() || b.branches_conditionally {
            2
        } else {
            0
        };
        for &s in &b.successors {
            if let Some(sk) = lookup(s)
                && !placed_by_header[sk]
            {
                children.push((sk, level + step));
            }
        }
        if let Some(sk) = b.continue_target.and_then(lookup) {
            children.push((sk, level + 1));
        }
        if let Some(sk) = b.merge.and_then(lookup) {
            children.push((sk, level));
        }
        for &(c, l) in children.iter().rev() {
            if !visited[c] {
                visited[c] = true;
                levels[c] = l;
                stack.push(c);
            }
        }
    }
    // Blocks the walk did not reach keep their binary order, at the end.
    order.extend((0..n).filter(|&k| !visited[k]));
    (order, levels)
}

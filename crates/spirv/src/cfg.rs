//! The control-flow facts every layer needs, read once from the instructions: a terminator's
//! branch targets and a header's merge block and continue target (SPIR-V 2.11 Structured
//! Control Flow). The validator's CFG, the disassembler's block nesting and the engine's
//! structured block order all build on these.

use crate::binary::Instruction;
use crate::grammar::{OperandKind, op};

/// The labels a block terminator branches to, in operand order: OpBranch its target,
/// OpBranchConditional the true then the false label, OpSwitch the default then each case's
/// label. Empty for the other terminators (return, kill, unreachable, ...) and for anything that
/// is not a terminator. Case labels are found by operand kind, so 64-bit case literals are
/// skipped correctly.
pub fn successors(term: &Instruction) -> Vec<u32> {
    match term.opcode {
        op::Branch => term.word(0).into_iter().collect(),
        op::BranchConditional => [term.word(1), term.word(2)].into_iter().flatten().collect(),
        op::Switch => {
            let mut targets: Vec<u32> = term.word(1).into_iter().collect();
            targets.extend(
                (2..term.operands.len())
                    .filter(|&k| term.operands[k].kind == Some(OperandKind::IdRef))
                    .filter_map(|k| term.word(k)),
            );
            targets
        }
        _ => Vec::new(),
    }
}

/// A structured header's targets, from its OpSelectionMerge or OpLoopMerge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MergeInfo {
    /// The merge block.
    pub merge: u32,
    /// The continue target (loops only).
    pub continue_target: Option<u32>,
}

/// The merge block (and continue target) a merge instruction declares; None for any other
/// instruction.
pub fn merge_info(inst: &Instruction) -> Option<MergeInfo> {
    match inst.opcode {
        op::SelectionMerge => Some(MergeInfo {
            merge: inst.word(0)?,
            continue_target: None,
        }),
        op::LoopMerge => Some(MergeInfo {
            merge: inst.word(0)?,
            continue_target: Some(inst.word(1)?),
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Module;
    use crate::asm::{AsmOptions, assemble};

    #[test]
    fn successors_and_merges_of_every_terminator() {
        let text = r#"
OpCapability Shader
OpCapability Int64
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 1 1 1
%void = OpTypeVoid
%fn = OpTypeFunction %void
%bool = OpTypeBool
%u64 = OpTypeInt 64 0
%t = OpConstantTrue %bool
%sel = OpConstant %u64 5
%main = OpFunction %void None %fn
%a = OpLabel
OpSelectionMerge %m None
OpBranchConditional %t %b %c
%b = OpLabel
OpLoopMerge %m %c None
OpBranch %c
%c = OpLabel
OpSelectionMerge %m None
OpSwitch %sel %m 0x100000000 %b 7 %c
%m = OpLabel
OpReturn
OpFunctionEnd
"#;
        let words = assemble(text, &AsmOptions::default()).unwrap();
        let m = Module::from_words(&words).unwrap();
        let labels: Vec<u32> = m
            .instructions
            .iter()
            .filter(|i| i.opcode == op::Label)
            .filter_map(|i| i.result_id)
            .collect();
        let (b, c, mm) = (labels[1], labels[2], labels[3]);
        let find = |o: u16| -> Vec<&Instruction> {
            m.instructions.iter().filter(|i| i.opcode == o).collect()
        };
        assert_eq!(successors(find(op::BranchConditional)[0]), vec![b, c]);
        assert_eq!(successors(find(op::Branch)[0]), vec![c]);
        assert_eq!(successors(find(op::Switch)[0]), vec![mm, b, c]);
        assert!(successors(find(op::Return)[0]).is_empty());
        assert_eq!(
            merge_info(find(op::LoopMerge)[0]),
            Some(MergeInfo {
                merge: mm,
                continue_target: Some(c)
            })
        );
        assert_eq!(merge_info(find(op::SelectionMerge)[0]).unwrap().merge, mm);
        assert_eq!(merge_info(find(op::Return)[0]), None);
    }
}

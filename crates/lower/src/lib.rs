//! Rewrites that let a shader run on a driver that lacks an extension.
//!
//! Each rewrite edits a [`Module`]'s instruction list and re-indexes it; the result is a valid
//! module whenever the input was.

use coopmat_spirv::binary::{Instruction, decode_string};
use coopmat_spirv::grammar::{OperandKind, capability, op, tensor_addressing_operands};
use coopmat_spirv::{Module, ModuleError};

mod coop2_to_khr;
mod nv_to_khr;
mod qcom_to_khr;
pub use coop2_to_khr::{Coop2ToKhrReport, coop2_to_khr};
pub use nv_to_khr::{NvToKhrReport, nv_to_khr};
pub use qcom_to_khr::{QcomToKhrReport, qcom_to_khr};

/// Why a rewrite did not happen.
#[derive(Debug, thiserror::Error)]
pub enum LowerError {
    /// The rewritten words did not parse back (a bug in the rewrite).
    #[error(transparent)]
    Module(#[from] ModuleError),
    /// The module uses something the rewrite cannot express: what, and where.
    #[error("cannot lower: {0}")]
    Refused(String),
}

/// What a rewrite changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RewriteReport {
    /// Instructions removed.
    pub removed: usize,
    /// Instructions rewritten in place.
    pub rewritten: usize,
}

/// Removes SPV_NV_cooperative_matrix_decode_vector from a module: the `DecodeVectorFunc` bit (0x4)
/// and its id operand from every OpCooperativeMatrixLoadTensorNV, the capability and the extension.
///
/// This is always legal: the spec makes DecodeVectorFunc an optional optimization ("the
/// implementation may invoke either DecodeFunc or DecodeVectorFunc", SPV_NV_cooperative_matrix_decode_vector,
/// modifications to OpCooperativeMatrixLoadTensorNV), and DecodeFunc must be present beside it. The vector
/// decode functions stay in the module, unused.
///
/// A load whose mask names DecodeVectorFunc without its operand is refused, the module unchanged.
pub fn strip_decode_vector(module: &mut Module) -> Result<RewriteReport, LowerError> {
    let mut report = RewriteReport::default();
    let mut edited = module.clone();
    let before = edited.instructions.len();
    edited.instructions.retain(|inst| {
        !(inst.opcode == op::Capability
            && inst.word(0) == Some(capability::CooperativeMatrixDecodeVectorNV)
            || inst.opcode == op::Extension
                && decode_string(&inst.words[1..]).0 == "SPV_NV_cooperative_matrix_decode_vector")
    });
    report.removed = before - edited.instructions.len();
    for inst in &mut edited.instructions {
        if inst.opcode == op::CooperativeMatrixLoadTensorNV
            && drop_mask_bit(inst, tensor_addressing_operands::DecodeVectorFunc)?
        {
            report.rewritten += 1;
        }
    }
    // Re-parse so operand tables match the edited words.
    let words = edited.to_words();
    *module = Module::from_words(&words)?;
    Ok(report)
}

/// Clears `bit` in the instruction's TensorAddressingOperands mask and removes that bit's single
/// id parameter. Parameters follow the mask in ascending bit order (SPIR-V 2.2.2, "Instructions":
/// operands of enabled mask bits appear in bit order). Refused when the parameter is missing.
fn drop_mask_bit(inst: &mut Instruction, bit: u32) -> Result<bool, LowerError> {
    let Some(mask_index) = inst
        .operands
        .iter()
        .position(|o| o.kind == Some(OperandKind::TensorAddressingOperands))
    else {
        return Ok(false);
    };
    let mask_word = inst.operands[mask_index].offset as usize;
    let Some(&mask) = inst.words.get(mask_word) else {
        return Ok(false);
    };
    if mask & bit == 0 {
        return Ok(false);
    }
    // Every TensorAddressingOperands bit carries exactly one id.
    let param = mask_word + 1 + (mask & (bit - 1)).count_ones() as usize;
    if param >= inst.words.len() {
        return Err(LowerError::Refused(format!(
            "the tensor load at word {} sets TensorAddressingOperands bit {bit:#x} without its operand",
            inst.offset
        )));
    }
    inst.words.remove(param);
    inst.words[mask_word] = mask & !bit;
    let count = inst.words.len() as u32;
    inst.words[0] = (count << 16) | (inst.words[0] & 0xffff);
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_the_bit_and_its_parameter() {
        // OpCooperativeMatrixLoadTensorNV %t %r %p %o %l None TensorView|DecodeFunc|DecodeVectorFunc %v %d %dv
        let words = vec![
            (11 << 16) | op::CooperativeMatrixLoadTensorNV as u32,
            1,
            2,
            3,
            4,
            5,
            0,
            7,
            10,
            11,
            12,
        ];
        let mut inst = Instruction {
            opcode: op::CooperativeMatrixLoadTensorNV,
            words,
            operands: vec![coopmat_spirv::binary::ParsedOperand {
                offset: 7,
                num_words: 1,
                kind: Some(OperandKind::TensorAddressingOperands),
                number: coopmat_spirv::binary::NumberKind::None,
            }],
            result_type: Some(1),
            result_id: Some(2),
            offset: 0,
        };
        assert!(drop_mask_bit(&mut inst, tensor_addressing_operands::DecodeVectorFunc).unwrap());
        assert_eq!(
            inst.words,
            vec![
                (10 << 16) | op::CooperativeMatrixLoadTensorNV as u32,
                1,
                2,
                3,
                4,
                5,
                0,
                3,
                10,
                11
            ]
        );
    }
}

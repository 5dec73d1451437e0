//! OpenCL kernel arguments of a SPIR-V module compiled by clspv, read from its
//! `NonSemantic.ClspvReflection` instructions (grammar:
//! `extinst.nonsemantic.clspvreflection.grammar.json`): where each argument of a kernel lives, so
//! that `BIND BUFFER b KERNEL ARG_NAME n` and `SET KERNEL ARG_NAME n AS type v` can be carried out
//! as ordinary bindings and push constants. This is the information clspv's descriptor map gives
//! Amber for OPENCL-C shaders; here it comes from the module itself, so SPIR-V shaders work too.

use coopmat_spirv::Module;
use coopmat_spirv::grammar::op;

/// Where a kernel argument lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArgPlace {
    /// A buffer of its own (`ArgumentStorageBuffer`, `ArgumentUniform`).
    Buffer {
        /// Descriptor set.
        set: u32,
        /// Binding.
        binding: u32,
        /// A uniform buffer (else storage).
        uniform: bool,
    },
    /// A plain-old-data value in the push constants (`ArgumentPodPushConstant`).
    PodPushConstant {
        /// Byte offset.
        offset: u32,
        /// Bytes.
        size: u32,
    },
    /// A plain-old-data value in a buffer shared by the kernel's POD arguments
    /// (`ArgumentPodStorageBuffer`, `ArgumentPodUniform`).
    PodBuffer {
        /// Descriptor set.
        set: u32,
        /// Binding.
        binding: u32,
        /// Byte offset.
        offset: u32,
        /// Bytes.
        size: u32,
        /// A uniform buffer (else storage).
        uniform: bool,
    },
    /// Anything else (images, samplers, workgroup memory, pointers): the instruction's number.
    Other(u32),
}

/// One kernel argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelArg {
    /// Position in the kernel's parameter list.
    pub ordinal: u32,
    /// Its name, when the module has `ArgumentInfo` for it.
    pub name: Option<String>,
    /// Where it lives.
    pub place: ArgPlace,
}

/// The arguments of kernel `entry_point` in `m`; None when the module has no clspv reflection for it.
pub fn kernel_args(m: &Module, entry_point: &str) -> Option<Vec<KernelArg>> {
    let set = m.instructions.iter().find_map(|i| {
        (i.opcode == op::ExtInstImport
            && i.string(1)
                .is_some_and(|s| s.starts_with("NonSemantic.ClspvReflection.")))
        .then_some(i.result_id?)
    })?;
    let text = |id: u32| {
        m.def(id)
            .filter(|d| d.opcode == op::String)
            .and_then(|d| d.string(1))
    };
    let num = |id: u32| m.constant_u64(id).and_then(|v| u32::try_from(v).ok());
    let refl = || {
        m.instructions
            .iter()
            .filter(move |i| i.opcode == op::ExtInst && i.word(2) == Some(set))
    };
    // The Kernel instruction (1) naming `entry_point`.
    let kernel = refl().find_map(|i| {
        (i.word(3) == Some(1) && i.word(5).and_then(text).as_deref() == Some(entry_point))
            .then_some(i.result_id?)
    })?;
    // ArgumentInfo (2): the name is its first operand.
    let arg_name = |info: Option<u32>| -> Option<String> {
        let d = m.def(info?)?;
        (d.opcode == op::ExtInst && d.word(2) == Some(set) && d.word(3) == Some(2))
            .then(|| d.word(4).and_then(text))
            .flatten()
    };
    let mut args = Vec::new();
    for i in refl() {
        let Some(code) = i.word(3) else { continue };
        if !(3..=11).contains(&code) && !(26..=27).contains(&code) && !(34..=35).contains(&code) {
            continue;
        }
        if i.word(4) != Some(kernel) {
            continue;
        }
        let w = |k: usize| i.word(k).and_then(num);
        let Some(ordinal) = w(5) else { continue };
        let (place, info) = match code {
            3 | 4 => (
                ArgPlace::Buffer {
                    set: w(6)?,
                    binding: w(7)?,
                    uniform: code == 4,
                },
                i.word(8),
            ),
            5 | 6 => (
                ArgPlace::PodBuffer {
                    set: w(6)?,
                    binding: w(7)?,
                    offset: w(8)?,
                    size: w(9)?,
                    uniform: code == 6,
                },
                i.word(10),
            ),
            7 => (
                ArgPlace::PodPushConstant {
                    offset: w(6)?,
                    size: w(7)?,
                },
                i.word(8),
            ),
            other => (ArgPlace::Other(other), None),
        };
        args.push(KernelArg {
            ordinal,
            name: arg_name(info),
            place,
        });
    }
    args.sort_by_key(|a| a.ordinal);
    Some(args)
}

//! Runs compute shaders on a real Vulkan GPU: the reference the CPU engine is compared with
//! (`coopmat gpu run`, `coopmat gpu info`, `coopmat diff`), and the driver's own cooperative-vector queries
//! (`vkGetPhysicalDeviceCooperativeVectorPropertiesNV`) and matrix conversion
//! (`vkConvertCooperativeVectorMatrixNV`).
//!
//! The Vulkan loader is opened at run time (`libvulkan.so.1`), so the crate builds and its
//! users run on machines without one; [`Gpu::open`] then reports [`GpuError::NoLoader`].
//! Everything is one queue, host-visible coherent buffers, one descriptor set per set number,
//! and a fence wait: simple and slow, which is right for a reference run.

use coopmat_spirv::Module;
use coopmat_spirv::grammar::{decoration, op, storage_class};
use std::collections::BTreeMap;
use std::ffi::{CStr, c_void};
use std::time::{Duration, Instant};
use vulkanalia::loader::{LIBRARY, LibloadingLoader};
use vulkanalia::prelude::v1_3::*;
use vulkanalia::vk::NvCooperativeVectorExtensionDeviceCommands;

/// What went wrong.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// No Vulkan loader library on this machine.
    #[error("no Vulkan loader ({LIBRARY}): {0}")]
    NoLoader(String),
    /// No physical device with a compute queue.
    #[error("no Vulkan device with a compute queue")]
    NoDevice,
    /// A Vulkan call failed.
    #[error("{call} failed: {code:?}")]
    Vulkan {
        /// The command.
        call: &'static str,
        /// Its result code.
        code: vk::ErrorCode,
    },
    /// The module or the request is unusable.
    #[error("{0}")]
    Invalid(String),
    /// The module needs what the device lacks.
    #[error("the device cannot run this module: {0}")]
    Unsupported(String),
}

fn vkerr(call: &'static str) -> impl FnOnce(vk::ErrorCode) -> GpuError {
    move |code| GpuError::Vulkan { call, code }
}

/// One supported cooperative-vector type combination (`VkCooperativeVectorPropertiesNV`);
/// the fields are `VkComponentTypeKHR` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoopVecCombination {
    /// Component type of the input vector.
    pub input_type: u32,
    /// InputInterpretation.
    pub input_interpretation: u32,
    /// MatrixInterpretation.
    pub matrix_interpretation: u32,
    /// BiasInterpretation.
    pub bias_interpretation: u32,
    /// Component type of the result.
    pub result_type: u32,
    /// Whether optimal-layout matrices of this combination may be transposed.
    pub transpose: bool,
}

/// The device's cooperative-vector limits (`VkPhysicalDeviceCooperativeVectorPropertiesNV`)
/// and training features.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CoopVecLimits {
    /// maxCooperativeVectorComponents.
    pub max_components: u32,
    /// cooperativeVectorTrainingFloat16Accumulation.
    pub training_f16_accumulation: bool,
    /// cooperativeVectorTrainingFloat32Accumulation.
    pub training_f32_accumulation: bool,
    /// The cooperativeVectorTraining feature.
    pub training: bool,
}

/// Device extensions enabled when the device has them.
const WANTED_EXTENSIONS: &[&CStr] = &[
    c"VK_KHR_cooperative_matrix",
    c"VK_NV_cooperative_matrix",
    c"VK_NV_cooperative_matrix2",
    c"VK_NV_cooperative_vector",
    c"VK_EXT_shader_replicated_composites",
    c"VK_EXT_shader_atomic_float",
    c"VK_EXT_shader_atomic_float2",
    c"VK_KHR_shader_bfloat16",
    c"VK_EXT_shader_float8",
    c"VK_KHR_shader_subgroup_rotate",
    c"VK_KHR_shader_relaxed_extended_instruction",
];

/// A Vulkan device opened for compute.
pub struct Gpu {
    _entry: Entry,
    instance: Instance,
    physical: vk::PhysicalDevice,
    device: Device,
    queue: vk::Queue,
    family: u32,
    memory: vk::PhysicalDeviceMemoryProperties,
    name: String,
    extensions: Vec<String>,
    available: Vec<String>,
    coopvec_training: bool,
    /// Nanoseconds per timestamp tick, when the queue has timestamps.
    timestamp_period: Option<f64>,
    /// The shader features the device was created with, by the SPIR-V capability they enable.
    capabilities: Vec<(u32, &'static str, bool)>,
    /// bufferDeviceAddress is enabled: buffers are made with device addresses.
    buffer_addresses: bool,
}

/// One VkCooperativeMatrixPropertiesKHR entry (component types as `VkComponentTypeKHR`
/// values, scope as a SPIR-V scope).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoopMatEntry {
    /// MSize, NSize, KSize.
    pub mnk: [u32; 3],
    /// AType, BType, CType, ResultType.
    pub types: [u32; 4],
    /// saturatingAccumulation.
    pub saturating: bool,
    /// The scope.
    pub scope: u32,
}

/// One dispatch: the module, its entry point and specialization, push constants, workgroup
/// counts, how many times to run it, and the subgroup size to require.
#[derive(Clone, Copy, Debug)]
pub struct Dispatch<'a> {
    /// The SPIR-V module's bytes.
    pub module: &'a [u8],
    /// Entry point name ("" = the first).
    pub entry: &'a str,
    /// Specialization constants by SpecId (the low bytes at each constant's width).
    pub spec: &'a BTreeMap<u32, u64>,
    /// Push-constant bytes.
    pub push: &'a [u8],
    /// Workgroup counts.
    pub groups: [u32; 3],
    /// Dispatches recorded back to back (with a memory barrier between): at least 1.
    pub repeat: u32,
    /// VkPipelineShaderStageRequiredSubgroupSizeCreateInfo, if set.
    pub subgroup_size: Option<u32>,
    /// Device addresses (vkGetBufferDeviceAddress) of bound buffers, written into the push
    /// constants or a buffer before the dispatch: PhysicalStorageBuffer pointers.
    pub addresses: &'a [AddressPatch],
}

/// Where a buffer's 64-bit device address is written (little-endian).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddressDest {
    /// At this byte of the push constants.
    Push(usize),
    /// At this byte of buffer (set, binding).
    Buffer((u32, u32), usize),
}

/// The device address of buffer `of` (set, binding), written at `dest`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddressPatch {
    /// Where the address goes.
    pub dest: AddressDest,
    /// The buffer whose address it is.
    pub of: (u32, u32),
}

impl AddressPatch {
    /// Writes `address`, the device address of buffer `of`, where `dest` says: into `push`
    /// (named `push_name` in messages) or into its buffer of `buffers`.
    pub fn apply(
        &self,
        address: u64,
        push: &mut [u8],
        push_name: &str,
        buffers: &mut BTreeMap<(u32, u32), Vec<u8>>,
    ) -> Result<(), String> {
        match self.dest {
            AddressDest::Push(at) => write_address(push, at, address, push_name),
            AddressDest::Buffer(key, at) => match buffers.get_mut(&key) {
                Some(data) => {
                    write_address(data, at, address, &format!("buffer {}:{}", key.0, key.1))
                }
                None => Err(format!("buffer {}:{}: no such buffer", key.0, key.1)),
            },
        }
    }
}

/// Writes `address` at byte `at` of `bytes`, which must hold the 8 bytes.
fn write_address(bytes: &mut [u8], at: usize, address: u64, what: &str) -> Result<(), String> {
    let len = bytes.len();
    let slot = at
        .checked_add(8)
        .and_then(|end| bytes.get_mut(at..end))
        .ok_or_else(|| format!("{what} has {len} bytes: no room for an address at byte {at}"))?;
    slot.copy_from_slice(&address.to_le_bytes());
    Ok(())
}

/// How long a dispatch took.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// From submit to the fence, every repetition included.
    pub wall: Duration,
    /// Between timestamps written before the first and after the last repetition, when the
    /// queue has timestamps.
    pub gpu: Option<Duration>,
}

/// The feature structures a device is created with: queried, then passed back unchanged, so
/// every supported feature is enabled. Boxed so that the `next` pointers stay valid.
#[derive(Default)]
struct Features {
    f2: vk::PhysicalDeviceFeatures2,
    f11: vk::PhysicalDeviceVulkan11Features,
    f12: vk::PhysicalDeviceVulkan12Features,
    f13: vk::PhysicalDeviceVulkan13Features,
    coopmat: vk::PhysicalDeviceCooperativeMatrixFeaturesKHR,
    coopmat_nv: vk::PhysicalDeviceCooperativeMatrixFeaturesNV,
    coopmat2: vk::PhysicalDeviceCooperativeMatrix2FeaturesNV,
    coopvec: vk::PhysicalDeviceCooperativeVectorFeaturesNV,
    replicated: vk::PhysicalDeviceShaderReplicatedCompositesFeaturesEXT,
    atomic_float: vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT,
    atomic_float2: vk::PhysicalDeviceShaderAtomicFloat2FeaturesEXT,
}

impl Features {
    /// Links the structures of the extensions in `has` into `f2`'s chain.
    fn chain(&mut self, has: &dyn Fn(&str) -> bool) {
        let mut next: *mut c_void = std::ptr::null_mut();
        macro_rules! link {
            ($field:ident, $ext:expr) => {
                if $ext.is_empty() || has($ext) {
                    self.$field.next = next;
                    next = (&mut self.$field) as *mut _ as *mut c_void;
                }
            };
        }
        link!(f11, "");
        link!(f12, "");
        link!(f13, "");
        link!(coopmat, "VK_KHR_cooperative_matrix");
        link!(coopmat_nv, "VK_NV_cooperative_matrix");
        link!(coopmat2, "VK_NV_cooperative_matrix2");
        link!(coopvec, "VK_NV_cooperative_vector");
        link!(replicated, "VK_EXT_shader_replicated_composites");
        link!(atomic_float, "VK_EXT_shader_atomic_float");
        link!(atomic_float2, "VK_EXT_shader_atomic_float2");
        self.f2.next = next;
    }
}

impl Features {
    /// The capabilities these features enable: (capability, feature name, supported).
    fn by_capability(&self) -> Vec<(u32, &'static str, bool)> {
        use coopmat_spirv::grammar::capability as c;
        let (f, f11, f12) = (&self.f2.features, &self.f11, &self.f12);
        let on = |b: vk::Bool32| b != 0;
        vec![
            (c::Float16, "shaderFloat16", on(f12.shader_float16)),
            (c::Int8, "shaderInt8", on(f12.shader_int8)),
            (c::Int16, "shaderInt16", on(f.shader_int16)),
            (c::Int64, "shaderInt64", on(f.shader_int64)),
            (c::Float64, "shaderFloat64", on(f.shader_float64)),
            (
                c::StorageBuffer16BitAccess,
                "storageBuffer16BitAccess",
                on(f11.storage_buffer_16bit_access),
            ),
            (
                c::StorageBuffer8BitAccess,
                "storageBuffer8BitAccess",
                on(f12.storage_buffer_8bit_access),
            ),
            (
                c::VulkanMemoryModel,
                "vulkanMemoryModel",
                on(f12.vulkan_memory_model),
            ),
            (
                c::PhysicalStorageBufferAddresses,
                "bufferDeviceAddress",
                on(f12.buffer_device_address),
            ),
            (
                c::CooperativeMatrixKHR,
                "VK_KHR_cooperative_matrix cooperativeMatrix",
                on(self.coopmat.cooperative_matrix),
            ),
            (
                c::CooperativeMatrixNV,
                "VK_NV_cooperative_matrix cooperativeMatrix",
                on(self.coopmat_nv.cooperative_matrix),
            ),
            (
                c::CooperativeMatrixReductionsNV,
                "VK_NV_cooperative_matrix2 cooperativeMatrixReductions",
                on(self.coopmat2.cooperative_matrix_reductions),
            ),
            (
                c::CooperativeMatrixConversionsNV,
                "VK_NV_cooperative_matrix2 cooperativeMatrixConversions",
                on(self.coopmat2.cooperative_matrix_conversions),
            ),
            (
                c::CooperativeMatrixPerElementOperationsNV,
                "VK_NV_cooperative_matrix2 cooperativeMatrixPerElementOperations",
                on(self.coopmat2.cooperative_matrix_per_element_operations),
            ),
            (
                c::CooperativeMatrixTensorAddressingNV,
                "VK_NV_cooperative_matrix2 cooperativeMatrixTensorAddressing",
                on(self.coopmat2.cooperative_matrix_tensor_addressing),
            ),
            (
                c::CooperativeMatrixBlockLoadsNV,
                "VK_NV_cooperative_matrix2 cooperativeMatrixBlockLoads",
                on(self.coopmat2.cooperative_matrix_block_loads),
            ),
            (
                c::TensorAddressingNV,
                "VK_NV_cooperative_matrix2 cooperativeMatrixTensorAddressing",
                on(self.coopmat2.cooperative_matrix_tensor_addressing),
            ),
            (
                c::CooperativeVectorNV,
                "VK_NV_cooperative_vector cooperativeVector",
                on(self.coopvec.cooperative_vector),
            ),
            (
                c::CooperativeVectorTrainingNV,
                "VK_NV_cooperative_vector cooperativeVectorTraining",
                on(self.coopvec.cooperative_vector_training),
            ),
            (
                c::ReplicatedCompositesEXT,
                "VK_EXT_shader_replicated_composites shaderReplicatedComposites",
                on(self.replicated.shader_replicated_composites),
            ),
        ]
    }
}

/// The device extension a capability needs when no feature of ours covers it (extensions this
/// runner does not enable by name), and the text its name contains. Checked before pipeline
/// creation: NVIDIA's 580 driver crashes (SIGSEGV in vkCreateComputePipelines) on a module that
/// declares CooperativeMatrixGetCoordinateEXT without the extension.
fn extension_only(cap: u32) -> Option<(&'static str, &'static str)> {
    use coopmat_spirv::grammar::capability as c;
    match cap {
        c::CooperativeMatrixDecodeVectorNV => Some((
            "VK_NV_cooperative_matrix_decode_vector",
            "cooperative_matrix_decode_vector",
        )),
        c::CooperativeMatrixConversionQCOM => Some((
            "VK_QCOM_cooperative_matrix_conversion",
            "cooperative_matrix_conversion",
        )),
        c::CooperativeMatrixGetCoordinateEXT => Some((
            "a cooperative-matrix maintenance extension (SPV_EXT_cooperative_matrix_maintenance1)",
            "cooperative_matrix_maintenance",
        )),
        _ => None,
    }
}

/// A host-visible buffer and its memory.
struct Buffer {
    buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    size: u64,
}

impl Gpu {
    /// Opens the first device with a compute queue (a discrete GPU first).
    pub fn open() -> Result<Gpu, GpuError> {
        // SAFETY: loading the system's Vulkan loader library by its well-known name; the
        // library's initialisers are the loader's own.
        let loader = unsafe { LibloadingLoader::new(LIBRARY) }
            .map_err(|e| GpuError::NoLoader(e.to_string()))?;
        // SAFETY: the loader was just opened; Entry keeps it alive.
        let entry = unsafe { Entry::new(loader) }.map_err(|e| GpuError::NoLoader(e.to_string()))?;
        let app = vk::ApplicationInfo::builder()
            .application_name(b"coopmat\0")
            .api_version(vk::make_version(1, 3, 0));
        let info = vk::InstanceCreateInfo::builder().application_info(&app);
        // SAFETY: valid create info; the instance is destroyed in Drop.
        let instance =
            unsafe { entry.create_instance(&info, None) }.map_err(vkerr("vkCreateInstance"))?;
        match Self::open_device(entry, instance) {
            Ok(g) => Ok(g),
            Err((e, Some(instance))) => {
                // SAFETY: nothing created from the instance is alive.
                unsafe { instance.destroy_instance(None) };
                Err(e)
            }
            Err((e, None)) => Err(e),
        }
    }

    #[allow(clippy::result_large_err)]
    fn open_device(entry: Entry, instance: Instance) -> Result<Gpu, (GpuError, Option<Instance>)> {
        // SAFETY (this function): every call gets handles made by `instance` and structures
        // that live across the call.
        let physicals = match unsafe { instance.enumerate_physical_devices() } {
            Ok(p) => p,
            Err(e) => return Err((vkerr("vkEnumeratePhysicalDevices")(e), Some(instance))),
        };
        let mut best: Option<(vk::PhysicalDevice, u32, bool)> = None;
        for &p in &physicals {
            let props = unsafe { instance.get_physical_device_properties(p) };
            let families = unsafe { instance.get_physical_device_queue_family_properties(p) };
            let Some(f) = families
                .iter()
                .position(|q| q.queue_flags.contains(vk::QueueFlags::COMPUTE))
            else {
                continue;
            };
            let discrete = props.device_type == vk::PhysicalDeviceType::DISCRETE_GPU;
            if best.is_none_or(|b| discrete && !b.2) {
                best = Some((p, f as u32, discrete));
            }
        }
        let Some((physical, family, _)) = best else {
            return Err((GpuError::NoDevice, Some(instance)));
        };
        let props = unsafe { instance.get_physical_device_properties(physical) };
        let name = format!(
            "{} (driver {:#x}, Vulkan {}.{}.{})",
            props.device_name,
            props.driver_version,
            vk::version_major(props.api_version),
            vk::version_minor(props.api_version),
            vk::version_patch(props.api_version)
        );
        let available: Vec<String> =
            match unsafe { instance.enumerate_device_extension_properties(physical, None) } {
                Ok(v) => v.iter().map(|e| e.extension_name.to_string()).collect(),
                Err(e) => {
                    return Err((
                        vkerr("vkEnumerateDeviceExtensionProperties")(e),
                        Some(instance),
                    ));
                }
            };
        // The wanted ones, and every other cooperative-matrix/-vector extension the device has
        // (maintenance and later revisions the list does not name yet).
        let extensions: Vec<String> = WANTED_EXTENSIONS
            .iter()
            .map(|e| e.to_string_lossy().into_owned())
            .filter(|e| available.contains(e))
            .chain(
                available
                    .iter()
                    .filter(|e| {
                        e.contains("cooperative")
                            && !WANTED_EXTENSIONS
                                .iter()
                                .any(|w| w.to_string_lossy() == e.as_str())
                    })
                    .cloned(),
            )
            .collect();
        let mut features = Box::<Features>::default();
        features.chain(&|e| extensions.iter().any(|x| x == e));
        unsafe { instance.get_physical_device_features2(physical, &mut features.f2) };
        let ext_c: Vec<std::ffi::CString> = extensions
            .iter()
            .map(|e| std::ffi::CString::new(e.as_str()).unwrap_or_default())
            .collect();
        let ext_ptrs: Vec<*const i8> = ext_c.iter().map(|c| c.as_ptr()).collect();
        let priorities = [1.0f32];
        let queue_info = vk::DeviceQueueCreateInfo::builder()
            .queue_family_index(family)
            .queue_priorities(&priorities);
        let queues = [queue_info];
        let mut info = vk::DeviceCreateInfo::builder()
            .queue_create_infos(&queues)
            .enabled_extension_names(&ext_ptrs)
            .build();
        info.next = (&features.f2) as *const _ as *const c_void;
        let device = match unsafe { instance.create_device(physical, &info, None) } {
            Ok(d) => d,
            Err(e) => return Err((vkerr("vkCreateDevice")(e), Some(instance))),
        };
        let coopvec_training = features.coopvec.cooperative_vector_training != 0;
        let buffer_addresses = features.f12.buffer_device_address != 0;
        let capabilities = features.by_capability();
        let timestamp_period = {
            let families =
                unsafe { instance.get_physical_device_queue_family_properties(physical) };
            let valid = families
                .get(family as usize)
                .is_some_and(|f| f.timestamp_valid_bits > 0);
            (valid && props.limits.timestamp_period > 0.0)
                .then_some(props.limits.timestamp_period as f64)
        };
        let queue = unsafe { device.get_device_queue(family, 0) };
        let memory = unsafe { instance.get_physical_device_memory_properties(physical) };
        Ok(Gpu {
            _entry: entry,
            instance,
            physical,
            device,
            queue,
            family,
            memory,
            name,
            extensions,
            available,
            coopvec_training,
            buffer_addresses,
            timestamp_period,
            capabilities,
        })
    }

    /// The shader capabilities that need a device feature, each with the feature's name and
    /// whether the device has it (and it is enabled).
    pub fn capability_support(&self) -> &[(u32, &'static str, bool)] {
        &self.capabilities
    }

    /// What `module` declares that this device lacks: one line per capability, naming the
    /// Vulkan feature or extension.
    pub fn missing_for(&self, module: &Module) -> Vec<String> {
        let mut out = Vec::new();
        for inst in &module.instructions {
            if inst.opcode != op::Capability {
                continue;
            }
            let Some(cap) = inst.word(0) else { continue };
            let name = coopmat_spirv::grammar::enumerant(
                coopmat_spirv::grammar::OperandKind::Capability,
                cap,
            )
            .map_or("?", |e| e.name);
            match self.capabilities.iter().find(|c| c.0 == cap) {
                Some((_, feature, false)) => out.push(format!(
                    "capability {name} needs {feature}, which {} lacks",
                    self.name
                )),
                Some(_) => {}
                None => {
                    if let Some((ext, marker)) = extension_only(cap)
                        && !self.available.iter().any(|e| e.contains(marker))
                    {
                        out.push(format!(
                            "capability {name} needs {ext}, which {} does not expose",
                            self.name
                        ));
                    }
                }
            }
        }
        out
    }

    /// The supported cooperative-matrix shapes and types (empty without VK_KHR_cooperative_matrix).
    pub fn cooperative_matrix_properties(&self) -> Result<Vec<CoopMatEntry>, GpuError> {
        if !self.has("VK_KHR_cooperative_matrix") {
            return Ok(Vec::new());
        }
        let f = self
            .instance
            .commands()
            .get_physical_device_cooperative_matrix_properties_khr;
        let mut n = 0u32;
        // SAFETY: the count query with a null array.
        let r = unsafe { f(self.physical, &mut n, std::ptr::null_mut()) };
        if r != vk::Result::SUCCESS {
            return Err(GpuError::Invalid(format!(
                "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR: {r:?}"
            )));
        }
        let mut props = vec![vk::CooperativeMatrixPropertiesKHR::default(); n as usize];
        // SAFETY: `props` holds `n` structures with their sType set.
        let r = unsafe { f(self.physical, &mut n, props.as_mut_ptr()) };
        if r != vk::Result::SUCCESS && r != vk::Result::INCOMPLETE {
            return Err(GpuError::Invalid(format!(
                "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR: {r:?}"
            )));
        }
        props.truncate(n as usize);
        Ok(props
            .iter()
            .map(|p| CoopMatEntry {
                mnk: [p.m_size, p.n_size, p.k_size],
                types: [
                    p.a_type.as_raw() as u32,
                    p.b_type.as_raw() as u32,
                    p.c_type.as_raw() as u32,
                    p.result_type.as_raw() as u32,
                ],
                saturating: p.saturating_accumulation != 0,
                scope: p.scope.as_raw() as u32,
            })
            .collect())
    }

    /// The cooperative-vector limits (all zero without VK_NV_cooperative_vector).
    pub fn cooperative_vector_limits(&self) -> CoopVecLimits {
        if !self.has("VK_NV_cooperative_vector") {
            return CoopVecLimits::default();
        }
        let mut cv = vk::PhysicalDeviceCooperativeVectorPropertiesNV::default();
        let mut p2 = vk::PhysicalDeviceProperties2 {
            next: (&mut cv) as *mut _ as *mut c_void,
            ..Default::default()
        };
        // SAFETY: a properties query with one chained structure of an enabled extension.
        unsafe {
            self.instance
                .get_physical_device_properties2(self.physical, &mut p2)
        };
        CoopVecLimits {
            max_components: cv.max_cooperative_vector_components,
            training_f16_accumulation: cv.cooperative_vector_training_float16_accumulation != 0,
            training_f32_accumulation: cv.cooperative_vector_training_float32_accumulation != 0,
            training: self.coopvec_training,
        }
    }

    /// The device's name, driver and Vulkan versions.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The wanted device extensions it has (and that are enabled).
    pub fn extensions(&self) -> &[String] {
        &self.extensions
    }

    /// Every device extension the device exposes (enabled or not).
    pub fn available_extensions(&self) -> &[String] {
        &self.available
    }

    fn has(&self, ext: &str) -> bool {
        self.extensions.iter().any(|e| e == ext)
    }

    /// The supported cooperative-vector combinations (empty without VK_NV_cooperative_vector).
    pub fn cooperative_vector_properties(&self) -> Result<Vec<CoopVecCombination>, GpuError> {
        if !self.has("VK_NV_cooperative_vector") {
            return Ok(Vec::new());
        }
        let f = self
            .instance
            .commands()
            .get_physical_device_cooperative_vector_properties_nv;
        let mut n = 0u32;
        // SAFETY: the count query with a null array, as the command allows.
        let r = unsafe { f(self.physical, &mut n, std::ptr::null_mut()) };
        if r != vk::Result::SUCCESS {
            return Err(GpuError::Invalid(format!(
                "vkGetPhysicalDeviceCooperativeVectorPropertiesNV: {r:?}"
            )));
        }
        // Output structures need their sType set: Default does.
        let mut props = vec![vk::CooperativeVectorPropertiesNV::default(); n as usize];
        // SAFETY: `props` holds `n` initialised structures.
        let r = unsafe { f(self.physical, &mut n, props.as_mut_ptr()) };
        if r != vk::Result::SUCCESS && r != vk::Result::INCOMPLETE {
            return Err(GpuError::Invalid(format!(
                "vkGetPhysicalDeviceCooperativeVectorPropertiesNV: {r:?}"
            )));
        }
        props.truncate(n as usize);
        Ok(props
            .iter()
            .map(|p| CoopVecCombination {
                input_type: p.input_type.as_raw() as u32,
                input_interpretation: p.input_interpretation.as_raw() as u32,
                matrix_interpretation: p.matrix_interpretation.as_raw() as u32,
                bias_interpretation: p.bias_interpretation.as_raw() as u32,
                result_type: p.result_type.as_raw() as u32,
                transpose: p.transpose != 0,
            })
            .collect())
    }

    /// Converts a `rows × cols` matrix with the driver (`vkConvertCooperativeVectorMatrixNV`
    /// on host memory): types are `VkComponentTypeKHR` values, layouts
    /// `VkCooperativeVectorMatrixLayoutNV` values, strides in bytes.
    #[allow(clippy::too_many_arguments)]
    pub fn convert_matrix(
        &self,
        rows: u32,
        cols: u32,
        src: (u32, u32, usize),
        src_data: &[u8],
        dst: (u32, u32, usize),
    ) -> Result<Vec<u8>, GpuError> {
        if !self.has("VK_NV_cooperative_vector") {
            return Err(GpuError::Invalid(
                "the device has no VK_NV_cooperative_vector".into(),
            ));
        }
        let mut size = 0usize;
        let mut info = vk::ConvertCooperativeVectorMatrixInfoNV {
            src_size: src_data.len(),
            src_data: vk::DeviceOrHostAddressConstKHR {
                host_address: std::ptr::null(),
            },
            dst_size: &mut size,
            dst_data: vk::DeviceOrHostAddressKHR {
                host_address: std::ptr::null_mut(),
            },
            src_component_type: vk::ComponentTypeKHR::from_raw(src.0 as i32),
            dst_component_type: vk::ComponentTypeKHR::from_raw(dst.0 as i32),
            num_rows: rows,
            num_columns: cols,
            src_layout: vk::CooperativeVectorMatrixLayoutNV::from_raw(src.1 as i32),
            src_stride: src.2,
            dst_layout: vk::CooperativeVectorMatrixLayoutNV::from_raw(dst.1 as i32),
            dst_stride: dst.2,
            ..Default::default()
        };
        // SAFETY: the size query (both data pointers null); `size` outlives the call.
        unsafe { self.device.convert_cooperative_vector_matrix_nv(&info) }
            .map_err(vkerr("vkConvertCooperativeVectorMatrixNV (size)"))?;
        let mut out = vec![0u8; size];
        info.src_data.host_address = src_data.as_ptr() as *const c_void;
        info.dst_data.host_address = out.as_mut_ptr() as *mut c_void;
        info.dst_size = &mut size;
        // SAFETY: `src_data` holds `src_size` bytes, `out` holds `size` bytes; they do not
        // overlap (VUID-vkConvertCooperativeVectorMatrixNV-pInfo-10076).
        unsafe { self.device.convert_cooperative_vector_matrix_nv(&info) }
            .map_err(vkerr("vkConvertCooperativeVectorMatrixNV"))?;
        out.truncate(size);
        Ok(out)
    }

    fn buffer(&self, size: u64) -> Result<Buffer, GpuError> {
        let size = size.max(4).next_multiple_of(4);
        let mut usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::UNIFORM_BUFFER;
        if self.buffer_addresses {
            usage |= vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS;
        }
        let info = vk::BufferCreateInfo::builder()
            .size(size)
            .usage(usage)
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY (this function): handles of this device; the buffer is freed by `free`.
        let buffer =
            unsafe { self.device.create_buffer(&info, None) }.map_err(vkerr("vkCreateBuffer"))?;
        let req = unsafe { self.device.get_buffer_memory_requirements(buffer) };
        let want = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let Some(ty) = (0..self.memory.memory_type_count).find(|&i| {
            req.memory_type_bits & (1 << i) != 0
                && self.memory.memory_types[i as usize]
                    .property_flags
                    .contains(want)
        }) else {
            unsafe { self.device.destroy_buffer(buffer, None) };
            return Err(GpuError::Invalid("no host-visible coherent memory".into()));
        };
        let mut flags =
            vk::MemoryAllocateFlagsInfo::builder().flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
        let mut alloc = vk::MemoryAllocateInfo::builder()
            .allocation_size(req.size)
            .memory_type_index(ty);
        if self.buffer_addresses {
            alloc = alloc.push_next(&mut flags);
        }
        let memory = match unsafe { self.device.allocate_memory(&alloc, None) } {
            Ok(m) => m,
            Err(e) => {
                unsafe { self.device.destroy_buffer(buffer, None) };
                return Err(vkerr("vkAllocateMemory")(e));
            }
        };
        if let Err(e) = unsafe { self.device.bind_buffer_memory(buffer, memory, 0) } {
            unsafe {
                self.device.destroy_buffer(buffer, None);
                self.device.free_memory(memory, None);
            }
            return Err(vkerr("vkBindBufferMemory")(e));
        }
        Ok(Buffer {
            buffer,
            memory,
            size,
        })
    }

    fn free(&self, b: &Buffer) {
        // SAFETY: the buffer is no longer used by any pending command (callers wait first).
        unsafe {
            self.device.destroy_buffer(b.buffer, None);
            self.device.free_memory(b.memory, None);
        }
    }

    /// Copies `data` in (`Some`) or the whole buffer out (`None`).
    fn access(&self, b: &Buffer, data: Option<&[u8]>, out: &mut Vec<u8>) -> Result<(), GpuError> {
        // SAFETY: host-visible coherent memory mapped whole, copied within its size, unmapped.
        unsafe {
            let p = self
                .device
                .map_memory(b.memory, 0, b.size, vk::MemoryMapFlags::empty())
                .map_err(vkerr("vkMapMemory"))? as *mut u8;
            match data {
                Some(d) => {
                    std::ptr::write_bytes(p, 0, b.size as usize);
                    std::ptr::copy_nonoverlapping(d.as_ptr(), p, d.len().min(b.size as usize));
                }
                None => {
                    out.resize(b.size as usize, 0);
                    std::ptr::copy_nonoverlapping(p, out.as_mut_ptr(), b.size as usize);
                }
            }
            self.device.unmap_memory(b.memory);
        }
        Ok(())
    }

    /// Runs `dispatch` with the given buffers (by (set, binding); written back in place, each
    /// at its original length) and returns its timing.
    pub fn dispatch(
        &self,
        dispatch: &Dispatch,
        buffers: &mut BTreeMap<(u32, u32), Vec<u8>>,
    ) -> Result<Timing, GpuError> {
        let m =
            Module::from_bytes(dispatch.module).map_err(|e| GpuError::Invalid(e.to_string()))?;
        let entry = match dispatch.entry {
            "" => m
                .entry_points()
                .find_map(|e| e.string(2))
                .ok_or_else(|| GpuError::Invalid("the module has no entry point".into()))?,
            e => e.to_string(),
        };
        let missing = self.missing_for(&m);
        if !missing.is_empty() {
            return Err(GpuError::Unsupported(missing.join("; ")));
        }
        let bindings = reflect_bindings(&m);
        for (key, _) in &bindings {
            if !buffers.contains_key(key) {
                return Err(GpuError::Invalid(format!(
                    "binding {}:{} is used by the shader but has no buffer",
                    key.0, key.1
                )));
            }
        }
        let spec_entries = reflect_spec_widths(&m);
        let mut run = Run::default();
        let r = self.dispatch_with(
            &mut run,
            dispatch,
            &entry,
            &spec_entries,
            &bindings,
            buffers,
        );
        run.destroy(self);
        r
    }

    fn dispatch_with(
        &self,
        run: &mut Run,
        dispatch: &Dispatch,
        entry: &str,
        spec_widths: &BTreeMap<u32, u32>,
        bindings: &[((u32, u32), vk::DescriptorType)],
        buffers: &mut BTreeMap<(u32, u32), Vec<u8>>,
    ) -> Result<Timing, GpuError> {
        let (module, spec, push, groups) = (
            dispatch.module,
            dispatch.spec,
            dispatch.push,
            dispatch.groups,
        );
        let d = &self.device;
        // SAFETY (this function): every handle is made here from `d`, recorded in `run` and
        // destroyed by `Run::destroy` after the fence wait; every structure a call reads lives
        // across that call.
        for (key, data) in buffers.iter() {
            let b = self.buffer(data.len() as u64)?;
            run.buffers.insert(*key, b);
        }
        // Device addresses into the push constants and buffers, then the buffers' contents.
        let mut push = push.to_vec();
        for a in dispatch.addresses {
            if !self.buffer_addresses {
                return Err(GpuError::Unsupported(
                    "device addresses need the bufferDeviceAddress feature".into(),
                ));
            }
            let of = run.buffers.get(&a.of).ok_or_else(|| {
                GpuError::Invalid(format!(
                    "address of buffer {}:{}: no such buffer",
                    a.of.0, a.of.1
                ))
            })?;
            let info = vk::BufferDeviceAddressInfo::builder().buffer(of.buffer);
            // SAFETY: a buffer of this device made with SHADER_DEVICE_ADDRESS usage, its memory
            // allocated with DEVICE_ADDRESS and bound.
            let address = unsafe { d.get_buffer_device_address(&info) };
            a.apply(address, &mut push, "the push constants", buffers)
                .map_err(GpuError::Invalid)?;
        }
        let push = push.as_slice();
        for (key, data) in buffers.iter() {
            self.access(&run.buffers[key], Some(data), &mut Vec::new())?;
        }
        let words: Vec<u32> = module
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let sm_info = vk::ShaderModuleCreateInfo::builder()
            .code_size(words.len() * 4)
            .code(&words);
        run.module = unsafe { d.create_shader_module(&sm_info, None) }
            .map_err(vkerr("vkCreateShaderModule"))?;
        let max_set = bindings.iter().map(|b| b.0.0).max();
        for set in 0..max_set.map_or(0, |s| s + 1) {
            let lb: Vec<vk::DescriptorSetLayoutBinding> = bindings
                .iter()
                .filter(|b| b.0.0 == set)
                .map(|b| {
                    vk::DescriptorSetLayoutBinding::builder()
                        .binding(b.0.1)
                        .descriptor_type(b.1)
                        .descriptor_count(1)
                        .stage_flags(vk::ShaderStageFlags::COMPUTE)
                        .build()
                })
                .collect();
            let info = vk::DescriptorSetLayoutCreateInfo::builder().bindings(&lb);
            run.set_layouts.push(
                unsafe { d.create_descriptor_set_layout(&info, None) }
                    .map_err(vkerr("vkCreateDescriptorSetLayout"))?,
            );
        }
        let ranges = [vk::PushConstantRange::builder()
            .stage_flags(vk::ShaderStageFlags::COMPUTE)
            .offset(0)
            .size(push.len().next_multiple_of(4) as u32)
            .build()];
        let mut pl_info = vk::PipelineLayoutCreateInfo::builder().set_layouts(&run.set_layouts);
        if !push.is_empty() {
            pl_info = pl_info.push_constant_ranges(&ranges);
        }
        run.layout = unsafe { d.create_pipeline_layout(&pl_info, None) }
            .map_err(vkerr("vkCreatePipelineLayout"))?;
        let mut spec_data = Vec::new();
        let mut map = Vec::new();
        for (id, width) in spec_widths {
            if let Some(v) = spec.get(id) {
                let bytes = (*width / 8).max(1) as usize;
                map.push(
                    vk::SpecializationMapEntry::builder()
                        .constant_id(*id)
                        .offset(spec_data.len() as u32)
                        .size(bytes)
                        .build(),
                );
                spec_data.extend_from_slice(&v.to_le_bytes()[..bytes.min(8)]);
            }
        }
        let spec_info = vk::SpecializationInfo::builder()
            .map_entries(&map)
            .data(&spec_data);
        let name = std::ffi::CString::new(entry)
            .map_err(|_| GpuError::Invalid("entry point name with a NUL".into()))?;
        let required = vk::PipelineShaderStageRequiredSubgroupSizeCreateInfo {
            required_subgroup_size: dispatch.subgroup_size.unwrap_or(0),
            ..Default::default()
        };
        let mut stage = vk::PipelineShaderStageCreateInfo::builder()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(run.module)
            .name(name.as_bytes_with_nul())
            .specialization_info(&spec_info)
            .build();
        if dispatch.subgroup_size.is_some() {
            stage.next = (&required) as *const _ as *const c_void;
        }
        let cp = vk::ComputePipelineCreateInfo::builder()
            .stage(stage)
            .layout(run.layout);
        run.pipeline =
            unsafe { d.create_compute_pipelines(vk::PipelineCache::null(), &[cp], None) }
                .map_err(vkerr("vkCreateComputePipelines"))?
                .0[0];
        let n_storage = bindings
            .iter()
            .filter(|b| b.1 == vk::DescriptorType::STORAGE_BUFFER)
            .count() as u32;
        let n_uniform = bindings.len() as u32 - n_storage;
        let mut sizes = Vec::new();
        if n_storage > 0 {
            sizes.push(
                vk::DescriptorPoolSize::builder()
                    .type_(vk::DescriptorType::STORAGE_BUFFER)
                    .descriptor_count(n_storage)
                    .build(),
            );
        }
        if n_uniform > 0 {
            sizes.push(
                vk::DescriptorPoolSize::builder()
                    .type_(vk::DescriptorType::UNIFORM_BUFFER)
                    .descriptor_count(n_uniform)
                    .build(),
            );
        }
        let mut sets = Vec::new();
        if !run.set_layouts.is_empty() {
            let pool_info = vk::DescriptorPoolCreateInfo::builder()
                .max_sets(run.set_layouts.len() as u32)
                .pool_sizes(&sizes);
            run.pool = unsafe { d.create_descriptor_pool(&pool_info, None) }
                .map_err(vkerr("vkCreateDescriptorPool"))?;
            let alloc = vk::DescriptorSetAllocateInfo::builder()
                .descriptor_pool(run.pool)
                .set_layouts(&run.set_layouts);
            sets = unsafe { d.allocate_descriptor_sets(&alloc) }
                .map_err(vkerr("vkAllocateDescriptorSets"))?;
            for ((set, binding), ty) in bindings {
                let b = &run.buffers[&(*set, *binding)];
                let info = [vk::DescriptorBufferInfo::builder()
                    .buffer(b.buffer)
                    .offset(0)
                    .range(vk::WHOLE_SIZE)
                    .build()];
                let w = vk::WriteDescriptorSet::builder()
                    .dst_set(sets[*set as usize])
                    .dst_binding(*binding)
                    .descriptor_type(*ty)
                    .buffer_info(&info);
                unsafe { d.update_descriptor_sets(&[w], &[] as &[vk::CopyDescriptorSet]) };
            }
        }
        let cp_info = vk::CommandPoolCreateInfo::builder().queue_family_index(self.family);
        run.cmd_pool = unsafe { d.create_command_pool(&cp_info, None) }
            .map_err(vkerr("vkCreateCommandPool"))?;
        let cb_info = vk::CommandBufferAllocateInfo::builder()
            .command_pool(run.cmd_pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        let cb = unsafe { d.allocate_command_buffers(&cb_info) }
            .map_err(vkerr("vkAllocateCommandBuffers"))?[0];
        if self.timestamp_period.is_some() {
            let qi = vk::QueryPoolCreateInfo::builder()
                .query_type(vk::QueryType::TIMESTAMP)
                .query_count(2);
            run.queries = Some(
                unsafe { d.create_query_pool(&qi, None) }.map_err(vkerr("vkCreateQueryPool"))?,
            );
        }
        let begin = vk::CommandBufferBeginInfo::builder()
            .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        unsafe {
            d.begin_command_buffer(cb, &begin)
                .map_err(vkerr("vkBeginCommandBuffer"))?;
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, run.pipeline);
            if !sets.is_empty() {
                d.cmd_bind_descriptor_sets(
                    cb,
                    vk::PipelineBindPoint::COMPUTE,
                    run.layout,
                    0,
                    &sets,
                    &[],
                );
            }
            if !push.is_empty() {
                let mut p = push.to_vec();
                p.resize(push.len().next_multiple_of(4), 0);
                d.cmd_push_constants(cb, run.layout, vk::ShaderStageFlags::COMPUTE, 0, &p);
            }
            if let Some(pool) = run.queries {
                d.cmd_reset_query_pool(cb, pool, 0, 2);
                d.cmd_write_timestamp(cb, vk::PipelineStageFlags::TOP_OF_PIPE, pool, 0);
            }
            for rep in 0..dispatch.repeat.max(1) {
                if rep > 0 {
                    // Each repetition sees the previous one's writes.
                    let between = vk::MemoryBarrier::builder()
                        .src_access_mask(vk::AccessFlags::SHADER_WRITE)
                        .dst_access_mask(
                            vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE,
                        );
                    d.cmd_pipeline_barrier(
                        cb,
                        vk::PipelineStageFlags::COMPUTE_SHADER,
                        vk::PipelineStageFlags::COMPUTE_SHADER,
                        vk::DependencyFlags::empty(),
                        &[between],
                        &[] as &[vk::BufferMemoryBarrier],
                        &[] as &[vk::ImageMemoryBarrier],
                    );
                }
                d.cmd_dispatch(cb, groups[0], groups[1], groups[2]);
            }
            if let Some(pool) = run.queries {
                d.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, 1);
            }
            let barrier = vk::MemoryBarrier::builder()
                .src_access_mask(vk::AccessFlags::SHADER_WRITE)
                .dst_access_mask(vk::AccessFlags::HOST_READ);
            d.cmd_pipeline_barrier(
                cb,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::PipelineStageFlags::HOST,
                vk::DependencyFlags::empty(),
                &[barrier],
                &[] as &[vk::BufferMemoryBarrier],
                &[] as &[vk::ImageMemoryBarrier],
            );
            d.end_command_buffer(cb)
                .map_err(vkerr("vkEndCommandBuffer"))?;
        }
        run.fence = unsafe { d.create_fence(&vk::FenceCreateInfo::default(), None) }
            .map_err(vkerr("vkCreateFence"))?;
        let cbs = [cb];
        let submit = vk::SubmitInfo::builder().command_buffers(&cbs);
        let t0 = Instant::now();
        unsafe {
            d.queue_submit(self.queue, &[submit], run.fence)
                .map_err(vkerr("vkQueueSubmit"))?;
            d.wait_for_fences(&[run.fence], true, u64::MAX)
                .map_err(vkerr("vkWaitForFences"))?;
        }
        let elapsed = t0.elapsed();
        let gpu_time = match (run.queries, self.timestamp_period) {
            (Some(pool), Some(period)) => {
                let mut ticks = [0u8; 16];
                unsafe {
                    d.get_query_pool_results(
                        pool,
                        0,
                        2,
                        &mut ticks,
                        8,
                        vk::QueryResultFlags::_64 | vk::QueryResultFlags::WAIT,
                    )
                }
                .map_err(vkerr("vkGetQueryPoolResults"))?;
                let t = |k: usize| {
                    u64::from_le_bytes(ticks[k * 8..k * 8 + 8].try_into().unwrap_or_default())
                };
                Some(Duration::from_nanos(
                    (t(1).wrapping_sub(t(0)) as f64 * period) as u64,
                ))
            }
            _ => None,
        };
        let mut out = Vec::new();
        for (key, data) in buffers.iter_mut() {
            self.access(&run.buffers[key], None, &mut out)?;
            let n = data.len();
            data.copy_from_slice(&out[..n]);
        }
        Ok(Timing {
            wall: elapsed,
            gpu: gpu_time,
        })
    }
}

/// Everything one dispatch creates, destroyed together.
#[derive(Default)]
struct Run {
    buffers: BTreeMap<(u32, u32), Buffer>,
    module: vk::ShaderModule,
    set_layouts: Vec<vk::DescriptorSetLayout>,
    layout: vk::PipelineLayout,
    pipeline: vk::Pipeline,
    pool: vk::DescriptorPool,
    cmd_pool: vk::CommandPool,
    fence: vk::Fence,
    queries: Option<vk::QueryPool>,
}

impl Run {
    fn destroy(&mut self, g: &Gpu) {
        let d = &g.device;
        // SAFETY: the queue is idle (the fence was waited on, or nothing was submitted);
        // null handles are ignored by the destroy commands.
        unsafe {
            let _ = d.device_wait_idle();
            d.destroy_fence(self.fence, None);
            if let Some(q) = self.queries {
                d.destroy_query_pool(q, None);
            }
            d.destroy_command_pool(self.cmd_pool, None);
            d.destroy_descriptor_pool(self.pool, None);
            d.destroy_pipeline(self.pipeline, None);
            d.destroy_pipeline_layout(self.layout, None);
            for l in &self.set_layouts {
                d.destroy_descriptor_set_layout(*l, None);
            }
            d.destroy_shader_module(self.module, None);
        }
        for b in self.buffers.values() {
            g.free(b);
        }
    }
}

impl Drop for Gpu {
    fn drop(&mut self) {
        // SAFETY: every object made from the device was destroyed by its `Run`.
        unsafe {
            let _ = self.device.device_wait_idle();
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}

/// The descriptor bindings a module declares: (set, binding) and storage or uniform buffer.
pub fn reflect_bindings(m: &Module) -> Vec<((u32, u32), vk::DescriptorType)> {
    let mut out = Vec::new();
    for inst in &m.instructions {
        if inst.opcode != op::Variable {
            continue;
        }
        let (Some(id), Some(sc)) = (inst.result_id, inst.word(2)) else {
            continue;
        };
        let (Some(Some(set)), Some(Some(binding))) = (
            m.decoration_param(id, decoration::DescriptorSet),
            m.decoration_param(id, decoration::Binding),
        ) else {
            continue;
        };
        let ty = match sc {
            storage_class::StorageBuffer => vk::DescriptorType::STORAGE_BUFFER,
            storage_class::Uniform => {
                // Uniform + BufferBlock (SPIR-V < 1.3 storage buffers) is a storage buffer.
                let block = inst
                    .result_type
                    .and_then(|pt| m.def(pt))
                    .and_then(|p| p.word(2));
                if block.is_some_and(|b| m.has_decoration(b, decoration::BufferBlock)) {
                    vk::DescriptorType::STORAGE_BUFFER
                } else {
                    vk::DescriptorType::UNIFORM_BUFFER
                }
            }
            _ => continue,
        };
        out.push(((set, binding), ty));
    }
    out.sort_by_key(|b| b.0);
    out.dedup_by_key(|b| b.0);
    out
}

/// Bit width of each specialization constant, by SpecId.
fn reflect_spec_widths(m: &Module) -> BTreeMap<u32, u32> {
    let mut out = BTreeMap::new();
    for inst in &m.instructions {
        let Some(id) = inst.result_id else { continue };
        let Some(Some(spec_id)) = m.decoration_param(id, decoration::SpecId) else {
            continue;
        };
        let width = match inst.opcode {
            op::SpecConstantTrue | op::SpecConstantFalse => 32,
            _ => inst
                .result_type
                .and_then(|t| m.def(t))
                .and_then(|t| t.word(1))
                .unwrap_or(32),
        };
        out.insert(spec_id, width);
    }
    out
}

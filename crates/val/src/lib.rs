//! `coopmat-val`: a SPIR-V validator focused on the cooperative-matrix family.
//!
//! [`validate`] checks a [`Module`] against the core structure the family rests on (layout,
//! ids and dominance, types, capabilities, memory model, structured control flow), the rules of
//! SPV_NV_cooperative_matrix, SPV_KHR_cooperative_matrix, SPV_NV_cooperative_matrix2,
//! SPV_NV_tensor_addressing, SPV_NV_cooperative_matrix_decode_vector,
//! SPV_QCOM_cooperative_matrix_conversion and SPV_NV_cooperative_vector (including the rules
//! SPIRV-Tools does not check), and optionally a Vulkan device [`Profile`].
//!
//! Every [`Diagnostic`] names a stable rule id (see [`rules::ALL`]), the spec reference that
//! decides, the offending instruction and related instructions.

#![warn(missing_docs)]

mod coop;
mod core;
mod ctx;
pub mod print;
pub mod profile;
pub mod rules;

use coopmat_spirv::Module;
pub use profile::Profile;
pub use rules::Rule;

/// How serious a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// The module is invalid.
    Error,
    /// Suspicious but not invalid (e.g. undefined behaviour that depends on run-time values).
    Warning,
}

impl Severity {
    /// Lower-case name as printed.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One validation finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The rule broken.
    pub rule: &'static Rule,
    /// Severity.
    pub severity: Severity,
    /// What is wrong, in words.
    pub message: String,
    /// Index of the offending instruction in `Module::instructions` (`None`: the module as a whole).
    pub inst: Option<usize>,
    /// Related instructions with a note each (e.g. a type and its use).
    pub related: Vec<(usize, String)>,
}

impl Diagnostic {
    /// The stable rule id, e.g. `KHR-MulAdd-Shape`.
    pub fn rule_id(&self) -> &'static str {
        self.rule.id
    }

    /// The spec reference that decides, e.g. "SPV_KHR_cooperative_matrix, OpCooperativeMatrixMulAddKHR".
    pub fn spec(&self) -> &'static str {
        self.rule.spec
    }
}

/// The environment to validate for, spelled as spirv-val's `--target-env`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetEnv {
    /// Universal SPIR-V 1.minor.
    Spv(u8),
    /// Vulkan 1.minor.
    Vulkan(u8),
}

impl TargetEnv {
    /// Parses `spv1.0`..`spv1.6` or `vulkan1.0`..`vulkan1.4`.
    pub fn parse(s: &str) -> Option<TargetEnv> {
        if let Some(v) = s.strip_prefix("spv1.") {
            let m: u8 = v.parse().ok()?;
            (m <= 6).then_some(TargetEnv::Spv(m))
        } else if let Some(v) = s.strip_prefix("vulkan1.") {
            let m: u8 = v.parse().ok()?;
            (m <= 4).then_some(TargetEnv::Vulkan(m))
        } else {
            None
        }
    }

    /// The highest SPIR-V version the environment accepts.
    pub fn max_spirv(self) -> (u8, u8) {
        match self {
            TargetEnv::Spv(m) => (1, m),
            TargetEnv::Vulkan(0) => (1, 0),
            TargetEnv::Vulkan(1) => (1, 3),
            TargetEnv::Vulkan(2) => (1, 5),
            TargetEnv::Vulkan(_) => (1, 6),
        }
    }

    /// Whether Vulkan environment rules apply.
    pub fn is_vulkan(self) -> bool {
        matches!(self, TargetEnv::Vulkan(_))
    }

    /// The spirv-val spelling.
    pub fn name(self) -> String {
        match self {
            TargetEnv::Spv(m) => format!("spv1.{m}"),
            TargetEnv::Vulkan(m) => format!("vulkan1.{m}"),
        }
    }
}

/// What to validate against.
#[derive(Clone, Debug)]
pub struct ValidateOptions {
    /// Target environment (default `vulkan1.3`).
    pub target_env: TargetEnv,
    /// Device profile; `None` checks no device limits (the permissive default).
    pub profile: Option<Profile>,
}

impl Default for ValidateOptions {
    fn default() -> Self {
        ValidateOptions {
            target_env: TargetEnv::Vulkan(3),
            profile: None,
        }
    }
}

/// Validates `module`; returns every finding, errors first in instruction order.
pub fn validate(module: &Module, options: &ValidateOptions) -> Vec<Diagnostic> {
    let mut cx = ctx::Ctx::new(module, options);
    core::check(&mut cx);
    if !cx.fatal {
        coop::check(&mut cx);
        if let Some(p) = &options.profile {
            profile::check(&mut cx, p);
        }
    }
    let mut diags = cx.diags.into_inner();
    // The same finding reached through repeated operands is reported once.
    let mut seen = std::collections::HashSet::new();
    diags.retain(|d| seen.insert((d.rule.id, d.inst, d.message.clone())));
    diags.sort_by_key(|d| (d.severity, d.inst.unwrap_or(0)));
    diags
}

/// Parses `bytes` and validates the module; a binary that cannot be parsed or whose function
/// structure is broken yields one `Core-Structure` diagnostic (with no instruction index).
pub fn validate_bytes(bytes: &[u8], options: &ValidateOptions) -> Vec<Diagnostic> {
    match Module::from_bytes(bytes) {
        Ok(m) => validate(&m, options),
        Err(e) => vec![Diagnostic {
            rule: &rules::CORE_STRUCTURE,
            severity: Severity::Error,
            message: e.to_string(),
            inst: None,
            related: Vec::new(),
        }],
    }
}

/// Whether the findings contain an error.
pub fn has_errors(diags: &[Diagnostic]) -> bool {
    diags.iter().any(|d| d.severity == Severity::Error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_envs_parse_as_spirv_val_names_them() {
        assert_eq!(TargetEnv::parse("vulkan1.3"), Some(TargetEnv::Vulkan(3)));
        assert_eq!(TargetEnv::parse("spv1.0"), Some(TargetEnv::Spv(0)));
        assert_eq!(TargetEnv::parse("vulkan1.5"), None);
        assert_eq!(TargetEnv::parse("spv1.7"), None);
        // Vulkan 1.1 accepts SPIR-V up to 1.3, 1.2 up to 1.5, 1.3 and 1.4 up to 1.6.
        assert_eq!(TargetEnv::Vulkan(1).max_spirv(), (1, 3));
        assert_eq!(TargetEnv::Vulkan(2).max_spirv(), (1, 5));
        assert_eq!(TargetEnv::Vulkan(4).max_spirv(), (1, 6));
    }

    #[test]
    fn rule_ids_are_unique_and_well_formed() {
        let mut seen = std::collections::HashSet::new();
        for r in rules::ALL {
            assert!(seen.insert(r.id), "duplicate rule id {}", r.id);
            assert!(r.id.split('-').count() >= 2, "{}", r.id);
            assert!(
                r.id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'),
                "{}",
                r.id
            );
            assert!(!r.spec.is_empty() && !r.summary.is_empty(), "{}", r.id);
            assert_eq!(rules::by_id(r.id).map(|x| x.id), Some(r.id));
        }
    }

    #[test]
    fn builtin_profiles_parse() {
        for name in Profile::builtin_names() {
            let p = Profile::builtin(name).unwrap_or_else(|| panic!("{name}"));
            assert_eq!(&p.name, name);
            assert!(
                p.subgroup_size > 0 && !p.cooperative_matrix.is_empty() && !p.source.is_empty()
            );
        }
        let h = Profile::builtin("nvidia-h100-580").unwrap();
        assert_eq!(h.subgroup_size, 32);
        assert_eq!(h.features.workgroup_scope, 1);
        let l = Profile::builtin("lavapipe-26").unwrap();
        assert_eq!(l.subgroup_size, 8);
        assert_eq!(l.features.workgroup_scope, 0);
    }
}

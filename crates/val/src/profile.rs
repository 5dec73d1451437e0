//! Vulkan device profiles.
use crate::ctx::Ctx;
/// A device profile.
#[derive(Clone, Debug, Default, serde::Deserialize)]
pub struct Profile {}
pub(crate) fn check(_cx: &mut Ctx, _p: &Profile) {}

//! Rules of the cooperative-matrix family.
use crate::ctx::Ctx;
pub(crate) fn check(_cx: &mut Ctx) {}

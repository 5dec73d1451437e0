//! Engine errors: a kind to match on, what went wrong, and where. A leaf module: every other
//! module of the engine may use it.

/// What kind of failure an [`ExecError`] is: callers (and tests) match on this, not on the
/// message text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The module is malformed or inconsistent in a way the engine cannot compile.
    InvalidModule,
    /// A feature of the module that the engine does not implement.
    Unsupported,
    /// A bad argument to the engine's API (entry point name, option, thread count).
    InvalidArgument,
    /// A binding the shader uses is missing or smaller than its layout, or the push
    /// constants are too short.
    MissingBinding,
    /// A memory access outside its object.
    OutOfBounds,
    /// A memory access through a null or invalid pointer.
    NullPointer,
    /// A store to read-only memory (a uniform buffer, push constants).
    ReadOnlyWrite,
    /// The instruction budget of a workgroup was exceeded (an endless loop, or too small a budget).
    Budget,
    /// A barrier in control flow that not every invocation of its scope reached.
    DivergentBarrier,
    /// An operation whose operand values the specification does not allow (a tensor layout or
    /// view out of its limits, a decode function's result of the wrong shape, ...).
    InvalidOperand,
    /// The dispatch would need more memory than [`crate::EngineOptions::max_memory`] allows.
    ResourceLimit,
    /// Behaviour the specification leaves undefined, which the engine detects and refuses
    /// (OpUnreachable reached, a store outside the tensor with clamp mode Undefined, a misaligned
    /// atomic).
    UndefinedBehavior,
}

/// An execution or compilation error: what went wrong and where.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{what}{}", if .place.is_empty() { String::new() } else { format!(" (at {})", .place) })]
pub struct ExecError {
    /// What kind of failure.
    pub kind: ErrorKind,
    /// What went wrong.
    pub what: String,
    /// Where: instruction, function, workgroup and local invocation, address.
    pub place: String,
}

impl ExecError {
    pub(crate) fn new(kind: ErrorKind, what: impl Into<String>) -> ExecError {
        ExecError {
            kind,
            what: what.into(),
            place: String::new(),
        }
    }

    /// An [`ErrorKind::InvalidModule`] error.
    pub(crate) fn invalid(what: impl Into<String>) -> ExecError {
        ExecError::new(ErrorKind::InvalidModule, what)
    }
}

/// An [`ErrorKind::InvalidModule`] error.
pub(crate) fn err<T>(what: impl Into<String>) -> Result<T, ExecError> {
    Err(ExecError::invalid(what))
}

/// An error of the given kind.
pub(crate) fn fail<T>(kind: ErrorKind, what: impl Into<String>) -> Result<T, ExecError> {
    Err(ExecError::new(kind, what))
}

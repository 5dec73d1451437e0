//! Printing diagnostics.

//! Failures of the C library, as Rust values.
use std::ffi::CStr;
use std::fmt;

/// Why a boxroot operation failed, from the C library's `errno`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The thread did not hold the domain lock (`EPERM`).
    LockNotHeld,
    /// No memory for a new pool of roots (`ENOMEM`).
    OutOfMemory,
    /// Boxroot is torn down or could not be set up (`ENOTSUP`).
    NotRunning,
    /// Any other failure, e.g. the OCaml runtime could not be started.
    Other,
}

/// A failed boxroot operation: its kind, and the C library's explanation
/// (`boxroot_error_string`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

impl Error {
    /// The error of the last failing call of this thread into the C library.
    /// Must be called right after the failure (it reads `errno`).
    pub(crate) fn last(operation: &str) -> Error {
        let errno = std::io::Error::last_os_error().raw_os_error();
        // SAFETY: boxroot_error_string never returns NULL; the string is static.
        let why = unsafe { CStr::from_ptr(ocaml_boxroot_sys::boxroot_error_string()) };
        let kind = match errno {
            Some(e) if e == libc_errno::EPERM => ErrorKind::LockNotHeld,
            Some(e) if e == libc_errno::ENOMEM => ErrorKind::OutOfMemory,
            Some(e) if e == libc_errno::ENOTSUP => ErrorKind::NotRunning,
            _ => ErrorKind::Other,
        };
        Error {
            kind,
            message: format!("{} failed: {}", operation, why.to_string_lossy()),
        }
    }

    pub(crate) fn other(message: String) -> Error {
        Error {
            kind: ErrorKind::Other,
            message,
        }
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The explanation: the operation, then `boxroot_error_string()`.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// The errno values the C library sets (Linux and the BSDs agree on the
/// first two; ENOTSUP differs).
mod libc_errno {
    pub const EPERM: i32 = 1;
    pub const ENOMEM: i32 = 12;
    #[cfg(target_os = "linux")]
    pub const ENOTSUP: i32 = 95;
    #[cfg(not(target_os = "linux"))]
    pub const ENOTSUP: i32 = 45;
}

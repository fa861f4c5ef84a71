//! The shapes of the per-RPC error catalogs (`csikit::v1::errors`): each spec error row as data,
//! with the gRPC code, the spec's description and what the caller should do.

use std::fmt;

/// gRPC status codes, numbered as gRPC numbers them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs, reason = "the names are gRPC's")]
pub enum Code {
    Ok = 0,
    Cancelled = 1,
    Unknown = 2,
    InvalidArgument = 3,
    DeadlineExceeded = 4,
    NotFound = 5,
    AlreadyExists = 6,
    PermissionDenied = 7,
    ResourceExhausted = 8,
    FailedPrecondition = 9,
    Aborted = 10,
    OutOfRange = 11,
    Unimplemented = 12,
    Internal = 13,
    Unavailable = 14,
    DataLoss = 15,
    Unauthenticated = 16,
}

impl Code {
    /// The number gRPC gives the code.
    pub const fn number(self) -> i32 {
        self as i32
    }

    /// The code with that number.
    pub const fn from_number(n: i32) -> Option<Code> {
        use Code::*;
        Some(match n {
            0 => Ok,
            1 => Cancelled,
            2 => Unknown,
            3 => InvalidArgument,
            4 => DeadlineExceeded,
            5 => NotFound,
            6 => AlreadyExists,
            7 => PermissionDenied,
            8 => ResourceExhausted,
            9 => FailedPrecondition,
            10 => Aborted,
            11 => OutOfRange,
            12 => Unimplemented,
            13 => Internal,
            14 => Unavailable,
            15 => DataLoss,
            16 => Unauthenticated,
            _ => return None,
        })
    }
}

/// What the spec tells the caller to do after an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Recovery {
    /// Do not retry the call as it is.
    DoNotRetry,
    /// Retry, with exponential back off.
    RetryWithBackoff,
    /// Fix the request (a field, a secret, an id) before retrying.
    FixRequest,
    /// Ask the plugin what it supports (`*GetCapabilities`) before calling again.
    CallCapabilities,
    /// The spec says something else; read [`ErrorInfo::recovery`].
    Other,
}

/// One row of a spec error table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorInfo {
    /// The condition, as the spec words it.
    pub condition: &'static str,
    /// The gRPC code the row's code *name* implies (the number is taken from the name when the
    /// table's number disagrees; see `code_as_written`).
    pub code: Code,
    /// The code exactly as the table writes it, e.g. `13 RESOURCE_EXHAUSTED`.
    pub code_as_written: &'static str,
    /// What the error indicates.
    pub description: &'static str,
    /// What the caller should do, in the spec's words (empty where the table has no such column).
    pub recovery: &'static str,
    /// The recovery, classified.
    pub recovery_kind: Recovery,
    /// The RPC the row belongs to, or `None` for the general table.
    pub rpc: Option<&'static str>,
    /// The row in Japanese, where the translation has this table: condition, description, recovery.
    pub ja: Option<(&'static str, &'static str, &'static str)>,
}

impl fmt::Display for ErrorInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({:?})", self.condition, self.code)
    }
}

/// What the spec says about an error a CO or sidecar received: the matching row of the RPC's
/// table, else of the general table (the first row with that code).
pub fn classify_code(
    rpc_rows: &'static [ErrorInfo],
    general: &'static [ErrorInfo],
    code: Code,
) -> Option<&'static ErrorInfo> {
    rpc_rows.iter().chain(general).find(|r| r.code == code)
}

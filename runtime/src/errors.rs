//! The shapes of the per-RPC error catalogs (`csikit::v1::errors`): each spec error row as data,
//! with the gRPC code, the spec's description and what the caller should do; and csikit's own
//! rows ([`CSIKIT_ROWS`]), for what every driver must say that the spec's tables do not name
//! (an internal failure, running out of space, a backend that cannot be reached or timed out),
//! so a driver answers every error from its RPC's catalog and never builds a raw status.

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

/// Where a row of a catalog comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Origin {
    /// The RPC's own error table in the spec.
    Rpc,
    /// The spec's general error table ("Error Scheme"), which applies to every RPC.
    General,
    /// csikit's own ([`CSIKIT_ROWS`]): a condition every driver meets that the spec's tables do
    /// not name, with the code gRPC's meaning of the codes gives it. Not the spec's.
    Csikit,
}

/// One row of an error catalog: a row of a spec error table, or one of csikit's own.
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
    /// The RPC the row belongs to, or `None` for the general table and csikit's own rows.
    pub rpc: Option<&'static str>,
    /// Whose row it is: the RPC's table, the general table, or csikit's.
    pub origin: Origin,
    /// The row in Japanese, where the translation has this table: condition, description, recovery.
    pub ja: Option<(&'static str, &'static str, &'static str)>,
    /// The older release whose spec.md the row comes from (`v1.12.0`), when the release the
    /// catalog was generated from is read from its proto alone and carries that release's
    /// tables for the RPCs whose schema is unchanged since: that release's word, to check
    /// against the newer text. `None` for a row of the release's own tables and for csikit's.
    pub carried_from: Option<&'static str>,
}

impl fmt::Display for ErrorInfo {
    /// `Volume does not exist (NotFound)`; csikit's own rows say so:
    /// `Internal error (Internal; csikit's row, not the spec's)`, and a carried row where from:
    /// `Volume does not exist (NotFound; carried from v1.12.0)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.origin, self.carried_from) {
            (Origin::Csikit, _) => {
                write!(f, "{} ({:?}; csikit's row, not the spec's)", self.condition, self.code)
            }
            (_, Some(from)) => {
                write!(f, "{} ({:?}; carried from {from})", self.condition, self.code)
            }
            (Origin::Rpc | Origin::General, None) => {
                write!(f, "{} ({:?})", self.condition, self.code)
            }
        }
    }
}

#[cfg(feature = "tonic")]
impl ErrorInfo {
    /// A status with this row's code and `message`, for code that answers for several RPCs
    /// and so has no one RPC's enum to ask (`INTERNAL_ERROR.status("...")`); an RPC's own code
    /// uses its enum's `status`.
    pub fn status(&self, message: impl Into<String>) -> tonic::Status {
        tonic::Status::new(tonic::Code::from_i32(self.code.number()), message)
    }
}

/// What the catalog says about an error a CO or sidecar received: the matching row of the RPC's
/// table, else of the general table, else csikit's own row for that code (the first row with
/// that code; check [`ErrorInfo::origin`] to tell the spec's rows from csikit's).
pub fn classify_code(
    rpc_rows: &'static [ErrorInfo],
    general: &'static [ErrorInfo],
    code: Code,
) -> Option<&'static ErrorInfo> {
    rpc_rows.iter().chain(general).chain(CSIKIT_ROWS).find(|r| r.code == code)
}

/// The spec's sentence every RPC's error section opens with (the RPC's name elided), which
/// obliges a non-ok code for a failure whatever its cause: the ground of csikit's rows.
macro_rules! non_ok {
    () => {
        "The spec's tables have no row for it; each RPC's error section says \"If the plugin is \
         unable to complete the … call successfully, it MUST return a non-ok gRPC code in the \
         gRPC status.\" csikit's own row, not the spec's."
    };
}

/// csikit's row for a failure of the plugin's own (`13 INTERNAL`).
pub const INTERNAL_ERROR: ErrorInfo = ErrorInfo {
    condition: "Internal error",
    code: Code::Internal,
    code_as_written: "13 INTERNAL",
    description: concat!(
        "The plugin failed for a reason of its own that no other row names: a bug, a broken ",
        "invariant, an answer from its storage backend it cannot make sense of. gRPC keeps ",
        "INTERNAL for such serious errors. ",
        non_ok!(),
    ),
    recovery: "Caller MAY retry with exponential back off (\"Any of the RPCs defined in this \
               spec MAY timeout and MAY be retried\"); a retry that fails the same way needs \
               the plugin's logs.",
    recovery_kind: Recovery::RetryWithBackoff,
    rpc: None,
    origin: Origin::Csikit,
    ja: None,
    carried_from: None,
};

/// csikit's row for running out of space, quota or another resource (`8 RESOURCE_EXHAUSTED`).
pub const OUT_OF_CAPACITY: ErrorInfo = ErrorInfo {
    condition: "Out of capacity",
    code: Code::ResourceExhausted,
    code_as_written: "8 RESOURCE_EXHAUSTED",
    description: concat!(
        "The storage system has no space, quota or other resource left for the call. gRPC's ",
        "RESOURCE_EXHAUSTED means a resource such as a quota or a file system's space is used ",
        "up. Where the RPC's own table has a RESOURCE_EXHAUSTED row, that row is the one to ",
        "use, and this one is not in its catalog. ",
        non_ok!(),
    ),
    recovery: "Caller SHOULD retry with exponential back off once space or quota has been \
               freed.",
    recovery_kind: Recovery::RetryWithBackoff,
    rpc: None,
    origin: Origin::Csikit,
    ja: None,
    carried_from: None,
};

/// csikit's row for a storage backend that cannot be reached for now (`14 UNAVAILABLE`).
pub const BACKEND_UNAVAILABLE: ErrorInfo = ErrorInfo {
    condition: "Backend unavailable",
    code: Code::Unavailable,
    code_as_written: "14 UNAVAILABLE",
    description: concat!(
        "The storage backend the plugin depends on cannot be reached for now. gRPC's ",
        "UNAVAILABLE means a passing condition that a retry with back off gets past. ",
        non_ok!(),
    ),
    recovery: "Caller SHOULD retry with exponential back off.",
    recovery_kind: Recovery::RetryWithBackoff,
    rpc: None,
    origin: Origin::Csikit,
    ja: None,
    carried_from: None,
};

/// csikit's row for a backend operation that did not finish in time (`4 DEADLINE_EXCEEDED`).
pub const BACKEND_TIMED_OUT: ErrorInfo = ErrorInfo {
    condition: "Backend timed out",
    code: Code::DeadlineExceeded,
    code_as_written: "4 DEADLINE_EXCEEDED",
    description: concat!(
        "An operation the plugin started on its backend did not finish in the time the plugin ",
        "gives it, and may still complete. gRPC's DEADLINE_EXCEEDED says the same of a call. ",
        "The spec's Timeouts section: \"Any of the RPCs defined in this spec MAY timeout and ",
        "MAY be retried.\" ",
        non_ok!(),
    ),
    recovery: "Caller MAY retry with the same fields, with exponential back off: \"Idempotency \
               requirements ensure that a retried call with the same fields continues where it \
               left off when retried.\"",
    recovery_kind: Recovery::RetryWithBackoff,
    rpc: None,
    origin: Origin::Csikit,
    ja: None,
    carried_from: None,
};

/// csikit's row for a call refused while another on the same object is in flight (`10 ABORTED`).
pub const OPERATION_PENDING: ErrorInfo = ErrorInfo {
    condition: "Operation pending",
    code: Code::Aborted,
    code_as_written: "10 ABORTED",
    description: concat!(
        "Another call on the same object is in flight in the plugin or its backend, so this ",
        "one was not carried out. gRPC's ABORTED means a conflict between concurrent ",
        "operations. The skeleton answers it itself while it serialises calls on one id. ",
        "Only in the catalogs of RPCs whose spec rows have no ABORTED row. ",
        non_ok!(),
    ),
    recovery: "Caller SHOULD retry with exponential back off once the other call has finished.",
    recovery_kind: Recovery::RetryWithBackoff,
    rpc: None,
    origin: Origin::Csikit,
    ja: None,
    carried_from: None,
};

/// csikit's own rows, in the order the generator appends them to each RPC's catalog: each only
/// where none of the RPC's rows (its own table's or the general table's) has its code, so the
/// spec's row for a code always comes first (`CreateVolume` answers running out of space with the
/// spec's `RESOURCE_EXHAUSTED` row, "Unable to provision in `accessible_topology`"). Their codes
/// and recoveries follow what gRPC's status codes mean; they are not the spec's.
pub const CSIKIT_ROWS: &[ErrorInfo] =
    &[INTERNAL_ERROR, OUT_OF_CAPACITY, BACKEND_UNAVAILABLE, BACKEND_TIMED_OUT, OPERATION_PENDING];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csikit_rows_have_one_code_each_and_say_whose_they_are() {
        for (i, row) in CSIKIT_ROWS.iter().enumerate() {
            assert!(CSIKIT_ROWS[..i].iter().all(|r| r.code != row.code), "{}", row.condition);
            assert_eq!(row.origin, Origin::Csikit);
            assert_eq!(row.rpc, None);
            let number: i32 =
                row.code_as_written.split(' ').next().unwrap_or("").parse().unwrap_or(-1);
            assert_eq!(number, row.code.number(), "{}", row.condition);
            assert!(row.to_string().contains("csikit's row, not the spec's"));
            assert!(row.description.contains("MUST return a non-ok gRPC code"));
        }
    }

    #[test]
    fn classify_prefers_the_spec_rows() {
        static OWN: [ErrorInfo; 1] = [ErrorInfo {
            condition: "Max volumes attached",
            code: Code::ResourceExhausted,
            code_as_written: "8 RESOURCE_EXHAUSTED",
            description: "",
            recovery: "",
            recovery_kind: Recovery::RetryWithBackoff,
            rpc: Some("ControllerPublishVolume"),
            origin: Origin::Rpc,
            ja: None,
            carried_from: None,
        }];
        let row = classify_code(&OWN, &[], Code::ResourceExhausted).expect("row");
        assert_eq!(row.origin, Origin::Rpc);
        assert_eq!(row.to_string(), "Max volumes attached (ResourceExhausted)");
        let row = classify_code(&OWN, &[], Code::Internal).expect("csikit's row");
        assert_eq!(row.origin, Origin::Csikit);
        assert!(classify_code(&OWN, &[], Code::DataLoss).is_none());
    }
}

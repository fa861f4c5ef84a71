//! A create from a source refused for a reason that lasts, as the model remembers it (see
//! `judge/refusal`).

use super::super::call::Source;

/// A CreateVolume from a source refused for a reason that lasts: the request, the source's
/// size then (0: unknown) and the answer (its code, and its message for a finding's words).
#[derive(Debug, Clone)]
pub(crate) struct Refused {
    pub(crate) mib: u32,
    pub(crate) limit: u32,
    pub(crate) source: Source,
    pub(crate) source_size: i64,
    pub(crate) code: tonic::Code,
    pub(crate) message: String,
}

//! Alpha is the driver's choice, made at run time: an [`AlphaPolicy`] of `Refuse` turns away
//! alpha RPCs and requests that set alpha fields; `Allow` (the default) lets them through.
//!
//! The check reads the spec-facts table, so it knows every alpha RPC, message and field of
//! the release the crate was generated from, nested fields included.
//!
//! ```
//! use csikit::alpha::AlphaPolicy;
//! use csikit::v1::{facts::FACTS, GetSnapshotRequest};
//!
//! let policy = AlphaPolicy::Refuse;
//! let refused = policy.check_request(&FACTS, &GetSnapshotRequest::default()).unwrap_err();
//! assert_eq!(refused.element, "csi.v1.GetSnapshotRequest");
//! assert!(AlphaPolicy::Allow.check_request(&FACTS, &GetSnapshotRequest::default()).is_ok());
//! ```

use std::fmt;

use crate::facts::{Label, MessageFacts, PackageFacts};

/// Whether a driver serves alpha RPCs and fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AlphaPolicy {
    /// Serve alpha RPCs and accept alpha fields.
    #[default]
    Allow,
    /// Refuse alpha RPCs (`UNIMPLEMENTED`) and requests setting alpha fields (`INVALID_ARGUMENT`).
    Refuse,
}

/// An alpha element that an [`AlphaPolicy::Refuse`] turned away.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlphaRefusal {
    /// The alpha RPC path, message name or field path (`csi.v1.Msg.field`).
    pub element: String,
    /// Whether a whole RPC (or its request type) is alpha, rather than a field in it.
    pub rpc: bool,
}

impl fmt::Display for AlphaRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "alpha element '{}' is refused by this plugin", self.element)
    }
}

impl std::error::Error for AlphaRefusal {}

#[cfg(feature = "tonic")]
impl From<AlphaRefusal> for tonic::Status {
    fn from(r: AlphaRefusal) -> Self {
        if r.rpc {
            tonic::Status::unimplemented(r.to_string())
        } else {
            tonic::Status::invalid_argument(r.to_string())
        }
    }
}

impl AlphaPolicy {
    /// Checks an RPC by gRPC path, `/csi.v1.Controller/ControllerGetVolume`.
    ///
    /// # Errors
    ///
    /// Under `Refuse`, when the RPC or its service is alpha.
    pub fn check_method(self, facts: &PackageFacts, path: &str) -> Result<(), AlphaRefusal> {
        match facts.method_by_path(path) {
            Some(m) if m.alpha && self == AlphaPolicy::Refuse => {
                Err(AlphaRefusal { element: path.to_owned(), rpc: true })
            }
            _ => Ok(()),
        }
    }

    /// Checks a request: its type must not be alpha and it must set no alpha field, at any depth.
    ///
    /// # Errors
    ///
    /// Under `Refuse`, the first alpha element found.
    pub fn check_request<M: prost::Message + prost::Name>(
        self,
        facts: &PackageFacts,
        request: &M,
    ) -> Result<(), AlphaRefusal> {
        if self == AlphaPolicy::Allow {
            return Ok(());
        }
        self.check_encoded(facts, &M::full_name(), &request.encode_to_vec())
    }

    /// Like [`AlphaPolicy::check_request`], on an encoded message of type `full_name`.
    ///
    /// # Errors
    ///
    /// Under `Refuse`, the first alpha element found.
    pub fn check_encoded(
        self,
        facts: &PackageFacts,
        full_name: &str,
        bytes: &[u8],
    ) -> Result<(), AlphaRefusal> {
        if self == AlphaPolicy::Allow {
            return Ok(());
        }
        let Some(message) = facts.message(full_name) else { return Ok(()) };
        if message.alpha {
            return Err(AlphaRefusal { element: full_name.to_owned(), rpc: true });
        }
        match first_alpha_field(facts, message, bytes, 0) {
            Some(element) => Err(AlphaRefusal { element, rpc: false }),
            None => Ok(()),
        }
    }
}

fn varint(buf: &mut &[u8]) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&b, rest) = buf.split_first()?;
        *buf = rest;
        value |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

/// Proto3 puts a field on the wire only when it is set, so a field seen is a field set.
fn first_alpha_field(
    facts: &PackageFacts,
    message: &MessageFacts,
    mut buf: &[u8],
    depth: u32,
) -> Option<String> {
    while !buf.is_empty() {
        let key = varint(&mut buf)?;
        let number = u32::try_from(key >> 3).ok()?;
        let field = message.field_by_number(number);
        if let Some(f) = field.filter(|f| f.alpha) {
            return Some(format!("{}.{}", message.full_name, f.name));
        }
        match key & 7 {
            0 => {
                varint(&mut buf)?;
            }
            1 => buf = buf.get(8..)?,
            5 => buf = buf.get(4..)?,
            2 => {
                let len = usize::try_from(varint(&mut buf)?).ok()?;
                let value = buf.get(..len)?;
                buf = buf.get(len..)?;
                let nested = field
                    .filter(|f| f.label != Label::Map)
                    .and_then(|f| facts.message(&f.type_name));
                if let Some(nested) = nested.filter(|_| depth < 64) {
                    if nested.alpha {
                        return Some(nested.full_name.to_string());
                    }
                    if let Some(found) = first_alpha_field(facts, nested, value, depth + 1) {
                        return Some(found);
                    }
                }
            }
            _ => return None,
        }
    }
    None
}

//! The runtime that csikit's generated CSI bindings stand on, as `prost` is for prost-build's
//! output: everything that does not depend on a particular spec release.
//!
//! Users depend on [`csikit`](https://docs.rs/csikit), which re-exports this crate; its generated
//! code (and `#[csi_validate]` expansions) name these items through `::csikit`.
//!
//! * [`validate`]: the [`Validate`] trait that `#[csi_validate]` implements, field paths, the
//!   violations it reports (never a value) and the checks it calls. Validating a valid message
//!   allocates nothing.
//! * [`endpoint`]: the one reader of `CSI_ENDPOINT` and every endpoint a tool is given (the
//!   forms it accepts and refuses are the table [`endpoint::FORMS`]); with feature `listen`, binding
//!   a unix socket over a stale one, and the shutdown signal.
//! * [`facts`]: the shapes of the spec-facts tables a generated package holds (`FACTS`).
//! * [`h2frame`]: the HTTP/2 frame layer (frame headers, padding, header-block assembly, one
//!   set of limits), pure bytes, for the skeleton's `:authority` rewriter and csi-view's tap.
//! * [`hpack`]: HPACK's integers, strings, Huffman code, static table and a decoder that follows
//!   a peer's dynamic table, pure bytes, for the same two.
//! * [`redact`]: the pieces redacted `Debug` impls print secrets with, and [`redact::scrub`],
//!   the one rule for removing secret values from a message (the skeleton's errors, the proxy's output).
//! * [`alpha`]: the alpha policy, a run-time choice read against the facts.
//! * [`secrets`]: csi-sanity's secrets file (its YAML subset in `secrets::yaml`) and the kind of
//!   secrets each RPC is sent with; `Debug` shows kinds and keys, never values.
//! * [`errors`]: the shapes of the per-RPC error catalogs.
//! * `server` (feature `server`): the server skeleton: layers, the pipeline every call passes,
//!   the generic plugin builder fed by a package's `const` tables, `CSI_ENDPOINT` serving, and
//!   `server::log`, the plugin's log written off the calls' threads.
//! * `channel` (feature `channel`): a tonic channel to a plugin's endpoint (unix socket or TCP),
//!   for the generated clients.
//! * `fs` (feature `fs`): `fs::write_atomic`, the one way the workspace's tools replace a file
//!   (a temporary file beside it, synced, then a rename), so no reader sees it half-written.
//!
//! | feature | adds |
//! |---|---|
//! | `listen` | `endpoint::bind_unix`, `endpoint::shutdown_signal` (tokio) |
//! | `tonic` | `tonic::Status` conversions for violations and alpha refusals |
//! | `server` | the server skeleton (tonic's server transport, tokio, tracing, tracing-subscriber's registry); implies `listen` |
//! | `channel` | `channel::connect` (tonic's client transport, tokio, a unix-socket connector) |
//! | `fs` | `fs::write_atomic` (tempfile) |

pub mod alpha;
#[cfg(feature = "channel")]
pub mod channel;
pub mod endpoint;
pub mod errors;
pub mod facts;
#[cfg(feature = "fs")]
pub mod fs;
pub mod h2frame;
pub mod hpack;
pub mod redact;
pub mod secrets;
#[cfg(feature = "server")]
pub mod server;
pub mod validate;

pub use validate::{
    FieldPath, RuleId, Validate, ValidateEncodedError, Violation, Violations, check,
};

/// The csikit version this runtime belongs to: generated code is built against the runtime of
/// its own csikit release.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

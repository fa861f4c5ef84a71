//! `#[csi_validate]`: turns field rules written as `#[csi(...)]` attributes into an
//! implementation of `csikit::Validate`.
//!
//! ```text
//! #[csikit::csi_validate]
//! struct DriverParameters {
//!     #[csi(required, max_bytes = 63, no_control_chars)]
//!     pool: String,
//!     #[csi(non_negative)]
//!     replicas: i32,
//!     #[csi(secret_keys, max_total_bytes = 4096)]
//!     credentials: std::collections::HashMap<String, String>,
//! }
//! ```
//!
//! (Runnable examples are in the `csikit` crate docs, which re-export this macro.)
//!
//! Field rules: `required`, `max_bytes = N`, `max_total_bytes = N`, `non_negative`,
//! `no_control_chars`, `secret_keys`, `nested`, `oneof` (a prost oneof: its variants validate
//! at this message's level), `name = "..."` (the name shown in paths). A oneof field may
//! instead carry `#[csi_oneof]` or `#[csi_oneof(required)]`: prost-build copies a oneof field's
//! attributes onto the oneof's variants, where this one is ignored. Item arguments:
//! `crate = path` (where `Validate` lives, default `::csikit`), `check = path` (a
//! message-level rule: `fn(&Self, &FieldPath, &mut Violations)`).
//!
//! Modules: `ast` (the struct read into plain data), `attr` (the `#[csi(...)]` rules), `valid`
//! (rules that cannot apply, rejected at their tokens), `expand` (the `impl Validate`) and `service`
//! (`#[csi_service]`).

mod ast;
mod attr;
mod expand;
mod service;
mod valid;

use proc_macro::TokenStream;

/// Implements `Validate` for a struct or a prost oneof enum from its `#[csi(...)]` rules.
#[proc_macro_attribute]
pub fn csi_validate(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::expand(args.into(), input.into()).into()
}

/// Marks an `impl` block of a csikit server trait (`csikit::v1::server::Controller`, ...) and
/// writes its `implemented()` method: the names of the RPC methods the block defines. The
/// server answers UNIMPLEMENTED for every other RPC, derives the capabilities it advertises
/// from the list, and reports at start-up where advertised capabilities and the list disagree.
///
/// ```text
/// #[csikit::csi_service]
/// impl csikit::v1::server::Node for MyDriver {
///     async fn node_get_info(&self, request: Request<NodeGetInfoRequest>) -> Result<Response<NodeGetInfoResponse>, Status> {
///         ...
///     }
/// }
/// ```
#[proc_macro_attribute]
pub fn csi_service(args: TokenStream, input: TokenStream) -> TokenStream {
    service::expand(args.into(), input.into()).into()
}

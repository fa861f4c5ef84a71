//! `csi-view-core`: the offline parts of csi-view: read, view, validate and edit binary CSI (or any
//! protobuf) messages, with no network and no terminal.
//!
//! The phases are separate modules, each depending only on those listed before it: [`wire`]
//! reads records without a schema, [`input`] turns a file into message bytes, [`former`] names
//! what a release reserved as an older release named it, [`schema`] holds the types and the spec's
//! facts, [`redact`] hides secrets in decoded messages, [`detect`]
//! guesses types, [`mask`] finds secret byte ranges, [`text`] prints annotated text format,
//! [`raw`] prints the wire layout, [`textparse`] encodes text back, [`validate`] checks the spec
//! rules, [`diff`] compares, [`edit`] drives an editor, [`capture`] reads and writes the
//! proxy's recordings, and [`replay`] judges a capture sent again (all but the sending).
//!
//! What a call to a plugin needs offline (for `csi-view call`, `replay` and the page): [`method`]
//! resolves a method name (`CreateVolume`, `Controller/CreateVolume`,
//! `csi.v1.Controller/CreateVolume`; a "did you mean" for near misses), [`request`] reads
//! requests from JSON or text format and puts csi-sanity's secrets into the secret fields the
//! facts name, [`rpcs`] holds each source's error tables and obligations (what to say about a
//! status code), [`outline`] sets out an RPC as the schema states it (`describe METHOD`), and
//! [`render`] shows a response annotated or as JSON with secrets hidden and the values sent
//! scrubbed.

pub mod capture;
pub mod detect;
pub mod diff;
pub mod edit;
pub mod former;
pub mod input;
pub mod mask;
pub mod method;
pub mod outline;
pub mod raw;
pub mod redact;
pub mod render;
pub mod replay;
pub mod request;
pub mod rpcs;
pub mod schema;
pub mod text;
pub mod textparse;
pub mod validate;
pub mod wire;

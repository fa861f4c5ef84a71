//! `csi-view-core`: the offline parts of csi-view: read, view, validate and edit binary CSI (or any
//! protobuf) messages, with no network and no terminal.
//!
//! The phases are separate modules, each depending only on those listed before it: [`wire`]
//! reads records without a schema, [`input`] turns a file into message bytes, [`rpcs`] holds
//! each source's error tables and obligations (what to say about a status code) and the names of
//! status codes, [`former`] names what a release reserved as an older release named it,
//! [`schema`] holds the types and the spec's facts, [`redact`] hides secrets in
//! decoded messages, [`detect`] guesses types, [`mask`] finds secret byte ranges, [`text`]
//! prints annotated text format, [`raw`] prints the wire layout, [`textparse`] encodes text
//! back, [`validate`] checks the spec rules, [`diff`] compares, [`edit`] drives an editor,
//! [`timestamp`] writes and reads the RFC 3339 times the proxy's recordings hold, [`capture`]
//! reads and writes those recordings, then what a call to a plugin needs offline (for `csi-view
//! call`, `replay` and the page): [`method`] resolves a method name (`CreateVolume`,
//! `Controller/CreateVolume`, `csi.v1.Controller/CreateVolume`; a "did you mean" for near
//! misses), [`outline`] sets out an RPC as the schema states it (`describe METHOD`), [`request`]
//! reads requests from JSON or text format and puts csi-sanity's secrets into the secret fields
//! the facts name, and [`render`] shows a response annotated or as JSON with secrets hidden and
//! the values sent scrubbed; last, [`replay`] judges a capture sent again (all but the sending).

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
pub mod timestamp;
pub mod validate;
pub mod wire;

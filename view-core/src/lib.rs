//! `csi-view-core`: the offline parts of csi-view: read, view, validate and edit binary CSI (or any
//! protobuf) messages, with no network and no terminal.
//!
//! The phases are separate modules, each depending only on those listed before it: [`wire`]
//! reads records without a schema, [`input`] turns a file into message bytes, [`schema`] holds
//! the types and the spec's facts, [`redact`] hides secrets in decoded messages, [`detect`]
//! guesses types, [`mask`] finds secret byte ranges, [`text`] prints annotated text format,
//! [`raw`] prints the wire layout, [`textparse`] encodes text back, [`validate`] checks the spec
//! rules, [`diff`] compares, [`edit`] drives an editor, [`capture`] reads and writes the
//! proxy's recordings, and [`replay`] judges a capture sent again (all but the sending).

pub mod capture;
pub mod detect;
pub mod diff;
pub mod edit;
pub mod input;
pub mod mask;
pub mod raw;
pub mod redact;
pub mod replay;
pub mod schema;
pub mod text;
pub mod textparse;
pub mod validate;
pub mod wire;

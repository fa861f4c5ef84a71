//! `csi-view`: view, validate and edit binary CSI (or any protobuf) messages.
//!
//! The phases are separate modules: [`input`] turns a file into message bytes, [`wire`] reads
//! records without a schema, [`raw`] prints the wire layout, [`text`] prints annotated text
//! format from a [`schema`], [`textparse`] encodes text back, [`detect`] guesses types,
//! [`validate`] checks the spec rules, [`diff`] compares, [`edit`] drives an editor and [`tui`] is the terminal UI.

pub mod capture;
pub mod detect;
pub mod diff;
pub mod edit;
pub mod input;
pub mod mask;
pub mod proxy;
pub mod raw;
pub mod redact;
pub mod schema;
mod tap;
pub mod text;
pub mod textparse;
pub mod tui;
pub mod ui;
pub mod validate;
pub mod wire;

//! A user crate of csikit-build: the bindings its build script generated from
//! `tests/data/myaddon` (a csi-addons style spec importing CSI's `csi.proto`).

/// The `myaddon` proto package: prost types with validators, redacted `Debug`, facts, error
/// enums, tonic clients and server traits.
pub mod myaddon {
    csikit::include_spec!("myaddon");
}

//! csi-sanity's secrets file (`--csi.secrets`): the secrets to send, per kind of call, and the
//! kind of each RPC. One reader for every csikit tool that sends secrets (csi-conformance,
//! `csi-view call` and `replay`).
//!
//! The file is a YAML mapping of kinds (`CreateVolumeSecret`, `NodePublishVolumeSecret`, ...)
//! to mappings of keys to values. [`kind_of`] names the kind of an RPC as csi-sanity v5.4.0 does
//! (its `CSISecrets` fields: `<RPC>Secret`, and `ControllerValidateVolumeCapabilitiesSecret` for
//! `ValidateVolumeCapabilities`); RPCs csi-sanity has no kind for (`GetSnapshot`,
//! `NodeExpandVolume`, the group snapshot RPCs, ...) take the same pattern.
//!
//! [`Secrets`] prints (`Debug`) the kinds and keys, never a value; errors name the line, never
//! its text.
//!
//! The YAML is read by [`yaml`], a line reader of the subset csi-sanity's files are written in,
//! rather than a YAML crate: this crate sits under every driver built on csikit, the files are
//! flat mappings of strings, and what the reader does not take (flow style, anchors, block
//! scalars, nesting) it refuses with the line. The one maintained serde YAML crate of the field
//! (`serde_yaml`) is archived, and a full YAML parser for two levels of strings would be most
//! of the code a driver's dependency tree gained. Its values are read as csi-sanity's
//! go-yaml v2 reads them into strings (a test compares it with PyYAML's composer, which keeps
//! each scalar's text as go-yaml does).

pub mod yaml;

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::Path;

pub use yaml::YamlError;

/// The kinds csi-sanity v5.4.0 reads from its secrets file (its `CSISecrets` fields), with the
/// RPC each is sent with.
pub const SANITY_KINDS: &[(&str, &str)] = &[
    ("CreateVolumeSecret", "CreateVolume"),
    ("DeleteVolumeSecret", "DeleteVolume"),
    ("ControllerPublishVolumeSecret", "ControllerPublishVolume"),
    ("ControllerUnpublishVolumeSecret", "ControllerUnpublishVolume"),
    ("ControllerValidateVolumeCapabilitiesSecret", "ValidateVolumeCapabilities"),
    ("NodeStageVolumeSecret", "NodeStageVolume"),
    ("NodePublishVolumeSecret", "NodePublishVolume"),
    ("CreateSnapshotSecret", "CreateSnapshot"),
    ("DeleteSnapshotSecret", "DeleteSnapshot"),
    ("ControllerExpandVolumeSecret", "ControllerExpandVolume"),
    ("ControllerModifyVolumeSecret", "ControllerModifyVolume"),
    ("ListSnapshotsSecret", "ListSnapshots"),
];

/// The kind of the secrets sent with `rpc` (its simple name, `CreateVolume`): csi-sanity's name
/// where it has one, else `<rpc>Secret`.
///
/// ```
/// use csikit_runtime::secrets::kind_of;
/// assert_eq!(kind_of("CreateVolume"), "CreateVolumeSecret");
/// assert_eq!(kind_of("ValidateVolumeCapabilities"), "ControllerValidateVolumeCapabilitiesSecret");
/// assert_eq!(kind_of("NodeExpandVolume"), "NodeExpandVolumeSecret");
/// ```
pub fn kind_of(rpc: &str) -> String {
    match SANITY_KINDS.iter().find(|(_, r)| *r == rpc) {
        Some((kind, _)) => (*kind).to_owned(),
        None => format!("{rpc}Secret"),
    }
}

/// Secrets per kind of call, as csi-sanity's `--csi.secrets` YAML gives them.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secrets {
    by_kind: BTreeMap<String, HashMap<String, String>>,
}

/// Kinds and their keys, sorted; never a value.
impl fmt::Debug for Secrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut map = f.debug_map();
        for (kind, secrets) in &self.by_kind {
            map.entry(kind, &crate::redact::RedactedMap(secrets));
        }
        map.finish()
    }
}

impl Secrets {
    /// The secrets for a kind (`CreateVolumeSecret`, `NodePublishVolumeSecret`, ...); empty when
    /// the file names none.
    pub fn get(&self, kind: &str) -> HashMap<String, String> {
        self.by_kind.get(kind).cloned().unwrap_or_default()
    }

    /// The secrets sent with `rpc` (`CreateVolume`): those of its [`kind_of`].
    pub fn for_rpc(&self, rpc: &str) -> HashMap<String, String> {
        self.get(&kind_of(rpc))
    }

    /// Whether the file names the kind of `rpc` (even with no keys).
    pub fn has_rpc(&self, rpc: &str) -> bool {
        self.by_kind.contains_key(&kind_of(rpc))
    }

    /// True when the file names no kind at all.
    pub fn is_empty(&self) -> bool {
        self.by_kind.is_empty()
    }

    /// The kinds the file names, sorted.
    pub fn kinds(&self) -> impl Iterator<Item = &str> {
        self.by_kind.keys().map(String::as_str)
    }

    /// Every non-empty value, to scrub from what is printed or to look for in a driver's log.
    pub fn values(&self) -> Vec<String> {
        self.by_kind.values().flat_map(|m| m.values().cloned()).filter(|v| !v.is_empty()).collect()
    }

    /// Reads csi-sanity's secrets file: a YAML mapping of kinds to mappings of keys to values
    /// (block style, plain or quoted scalars, `#` comments; see [`yaml`]).
    ///
    /// # Errors
    ///
    /// A line [`yaml`] does not read, a kind holding a value instead of a mapping, a secret
    /// outside any kind, or nesting deeper than kind and key, with the line's number.
    pub fn parse(text: &str) -> Result<Secrets, YamlError> {
        let mut by_kind: BTreeMap<String, HashMap<String, String>> = BTreeMap::new();
        // The kind being read, and the indentation of its keys once the first is seen.
        let mut current: Option<(String, Option<usize>)> = None;
        for e in yaml::entries(text)? {
            if e.indent == 0 {
                if !e.value.is_empty() {
                    return Err(yaml::error(
                        e.line,
                        format!("'{}' must hold a mapping of secrets", e.key),
                    ));
                }
                by_kind.entry(e.key.clone()).or_default();
                current = Some((e.key, None));
                continue;
            }
            let (kind, indent) =
                current.as_mut().ok_or_else(|| yaml::error(e.line, "a secret outside any kind"))?;
            match *indent {
                None => *indent = Some(e.indent),
                Some(i) if i == e.indent => {}
                Some(_) => {
                    return Err(yaml::error(
                        e.line,
                        "secrets are one level under their kind; this line is indented differently",
                    ));
                }
            }
            by_kind.entry(kind.clone()).or_default().insert(e.key, e.value);
        }
        Ok(Secrets { by_kind })
    }

    /// Reads a secrets file.
    ///
    /// # Errors
    ///
    /// When the file cannot be read or does not parse (`path: line N: why`).
    pub fn read(path: &Path) -> Result<Secrets, YamlError> {
        Secrets::parse(&yaml::read(path)?).map_err(|e| yaml::in_file(path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "# as csi-sanity reads them\nCreateVolumeSecret:\n  secretKey: create-s3cr3t-value\n  other: \"x#y\" # note\nDeleteVolumeSecret:\n    secretKey: 'delete-s3cr3t'\nListSnapshotsSecret:\n";

    #[test]
    fn kinds_keys_and_values() {
        let s = Secrets::parse(FILE).expect("parses");
        assert_eq!(s.get("CreateVolumeSecret").get("other").map(String::as_str), Some("x#y"));
        assert_eq!(
            s.for_rpc("DeleteVolume").get("secretKey").map(String::as_str),
            Some("delete-s3cr3t")
        );
        assert!(s.has_rpc("ListSnapshots") && s.for_rpc("ListSnapshots").is_empty());
        assert!(!s.has_rpc("NodePublishVolume"));
        assert_eq!(
            s.kinds().collect::<Vec<_>>(),
            ["CreateVolumeSecret", "DeleteVolumeSecret", "ListSnapshotsSecret"]
        );
        let mut values = s.values();
        values.sort();
        assert_eq!(values, ["create-s3cr3t-value", "delete-s3cr3t", "x#y"]);
    }

    #[test]
    fn debug_shows_kinds_and_keys_never_values() {
        let s = Secrets::parse(FILE).expect("parses");
        let debug = format!("{s:?} {s:#?}");
        assert!(debug.contains("CreateVolumeSecret") && debug.contains("secretKey"), "{debug}");
        for v in s.values() {
            assert!(!debug.contains(&v), "{debug}");
        }
    }

    #[test]
    fn bad_files_name_the_line_and_no_value() {
        for (text, line) in [
            ("CreateVolumeSecret: s3cr3t-inline\n", 1),
            ("  key: s3cr3t\n", 1),
            ("CreateVolumeSecret:\n  key: s3cr3t\n    deeper: s3cr3t\n", 3),
            ("CreateVolumeSecret:\n  key: {s3cr3t: 1}\n", 2),
        ] {
            let e = Secrets::parse(text).expect_err(text);
            assert_eq!(e.line, line, "{text}: {e}");
            assert!(!e.to_string().contains("s3cr3t"), "{e}");
        }
    }

    #[test]
    fn every_sanity_kind_maps_back_to_its_rpc() {
        for (kind, rpc) in SANITY_KINDS {
            assert_eq!(kind_of(rpc), *kind);
        }
        assert_eq!(kind_of("GetSnapshot"), "GetSnapshotSecret");
    }
}

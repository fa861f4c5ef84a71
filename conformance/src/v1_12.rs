//! What a plugin still on CSI v1.12.0 sends in a field v1.13.0 reserved: `volume_condition`
//! (field 2 of `ListVolumesResponse.entries.status`, `ControllerGetVolumeResponse.status` and
//! `NodeGetVolumeStatsResponse`), which `csikit::v1` reads past. An answer's bytes are read once
//! here with `csikit::v1_12`: which of its volumes hold a condition (for the answer checks, when
//! the plugin advertises VOLUME_CONDITION) and how the conditions sent break v1.12.0's rules
//! (`abnormal` and `message` REQUIRED, `message` within 128 bytes), as the suite held them before
//! csikit moved to v1.13.0. A v1.13.0 plugin never sends one.

use csikit::{FieldPath, Validate, Violations};
use prost::Message;

/// The v1.12.0 conditions of one answer.
#[derive(Debug, Default)]
pub(crate) struct Conditions {
    /// For each volume of the answer, in order (ListVolumes' entries; the one volume of the
    /// others): whether it holds a `volume_condition`.
    held: Vec<bool>,
    /// v1.12.0's rules the conditions sent break, at their field paths.
    pub(crate) violations: Violations,
}

impl Conditions {
    /// Reads an answer of the message `output` (its full name); an answer of another message,
    /// or bytes that do not read, hold none.
    pub(crate) fn read(output: &str, bytes: &[u8]) -> Conditions {
        let root = FieldPath::ROOT;
        let mut found = Conditions::default();
        match output {
            "csi.v1.ListVolumesResponse" => {
                let Ok(r) = csikit::v1_12::ListVolumesResponse::decode(bytes) else { return found };
                let entries = root.field("entries");
                for (i, e) in r.entries.iter().enumerate() {
                    let condition = e.status.as_ref().and_then(|s| s.volume_condition.as_ref());
                    found.add(condition, &entries.index(i).field("status"));
                }
            }
            "csi.v1.ControllerGetVolumeResponse" => {
                let Ok(r) = csikit::v1_12::ControllerGetVolumeResponse::decode(bytes) else {
                    return found;
                };
                let condition = r.status.as_ref().and_then(|s| s.volume_condition.as_ref());
                found.add(condition, &root.field("status"));
            }
            "csi.v1.NodeGetVolumeStatsResponse" => {
                let Ok(r) = csikit::v1_12::NodeGetVolumeStatsResponse::decode(bytes) else {
                    return found;
                };
                found.add(r.volume_condition.as_ref(), &root);
            }
            _ => {}
        }
        found
    }

    /// One volume's `volume_condition` (in the message at `parent`): whether it is there, and
    /// the v1.12.0 rules it breaks.
    fn add(&mut self, condition: Option<&csikit::v1_12::VolumeCondition>, parent: &FieldPath<'_>) {
        if let Some(c) = condition {
            c.validate_at(&parent.field("volume_condition"), &mut self.violations);
        }
        self.held.push(condition.is_some());
    }

    /// Whether the answer's `i`th volume holds a `volume_condition`.
    pub(crate) fn held(&self, i: usize) -> bool {
        self.held.get(i).copied().unwrap_or(false)
    }
}

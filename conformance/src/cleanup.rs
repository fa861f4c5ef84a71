//! The end of every run: what the suite published, staged and made (group snapshots, snapshots,
//! volumes) is undone, and the driver's log is searched for the secret values sent.

use std::path::Path;

use csikit::v1::{
    ControllerUnpublishVolumeRequest, DeleteSnapshotRequest, NodeUnpublishVolumeRequest,
    NodeUnstageVolumeRequest,
};

use crate::report::Outcome;
use crate::suite::{Suite, show_status};

/// Undoes everything the suite did; what could not be deleted, each with the plugin's answer.
pub(crate) async fn clean_up(s: &mut Suite) -> Vec<String> {
    let mut left = Vec::new();
    for (volume, target) in std::mem::take(&mut s.node_published) {
        let un = NodeUnpublishVolumeRequest {
            volume_id: volume,
            target_path: target.display().to_string(),
        };
        let _ = s.ask(un).await;
    }
    for (volume, staging) in std::mem::take(&mut s.staged) {
        let un = NodeUnstageVolumeRequest {
            volume_id: volume,
            staging_target_path: staging.display().to_string(),
        };
        let _ = s.ask(un).await;
    }
    for (volume, node) in std::mem::take(&mut s.published) {
        let secrets = s.secrets("ControllerUnpublishVolume");
        let un = ControllerUnpublishVolumeRequest { volume_id: volume, node_id: node, secrets };
        let _ = s.ask(un).await;
    }
    for (id, members) in s.groups.clone() {
        if let Err(e) = crate::cases::group::delete(s, &id, &members).await {
            left.push(format!("group snapshot {id}: {}", show_status(&e)));
        }
    }
    for id in std::mem::take(&mut s.snapshots) {
        let secrets = s.secrets("DeleteSnapshot");
        let del = DeleteSnapshotRequest { snapshot_id: id.clone(), secrets };
        if let Err(e) = s.ask(del).await {
            left.push(format!("snapshot {id}: {}", show_status(&e)));
        }
    }
    for v in s.volumes.clone() {
        if let Err(e) = s.delete(&v).await {
            left.push(format!("volume {v}: {}", show_status(&e)));
        }
    }
    left
}

/// No secret value the suite sent is in the driver's log.
pub(crate) fn check_log(s: &Suite, path: &Path) -> Outcome {
    let text = match std::fs::read(path) {
        Ok(t) => String::from_utf8_lossy(&t).into_owned(),
        Err(e) => {
            return Outcome::Failed(format!(
                "cannot read the driver log '{}': {e}",
                path.display()
            ));
        }
    };
    if s.sent_secrets.is_empty() {
        return Outcome::Skipped("no secret was sent".into());
    }
    // The first line that holds any of them, by the runtime's one rule.
    let values: Vec<&String> = s.sent_secrets.iter().collect();
    match csikit::runtime::redact::first_line_holding(&text, &values) {
        Some(line) => {
            Outcome::Failed(format!("a secret value sent is in the driver log at line {line}"))
        }
        None => Outcome::Passed,
    }
}

//! The cases built from the spec's error tables: for each row the suite can bring about without
//! special setup (an id never issued, a node never named, a token never handed out, ...), one
//! case that makes the call and expects exactly the code the Model's row names. The table here
//! says only how to provoke a condition; the condition's code, description and the sentence
//! that binds the plugin come from the Model (`csikit::v1::errors::rpc_rows`).
//!
//! Rows the suite does not provoke, and why, are in [`NOT_PROVOKED`].

use std::future::Future;
use std::pin::Pin;
use std::time::Instant;

use csikit::errors::ErrorInfo;
use csikit::v1::controller_service_capability::rpc::Type as Ctl;
use csikit::v1::node_service_capability::rpc::Type as Nd;
use csikit::v1::volume_content_source::{SnapshotSource, Type as Source, VolumeSource};
use csikit::v1::{
    CapacityRange, ControllerExpandVolumeRequest, ControllerGetVolumeRequest,
    ControllerModifyVolumeRequest, ControllerPublishVolumeRequest, GetSnapshotRequest,
    ListSnapshotsRequest, ListVolumesRequest, NodeExpandVolumeRequest, NodeGetVolumeStatsRequest,
    NodePublishVolumeRequest, NodeStageVolumeRequest, NodeUnpublishVolumeRequest,
    ValidateVolumeCapabilitiesRequest, VolumeContentSource,
};
use tonic::{Code, Status};

use crate::case::Need;
use crate::record::Recorder;
use crate::report::Outcome;
use crate::sentence::Sentence;
use crate::suite::{Suite, UNKNOWN_SNAPSHOT, UNKNOWN_VOLUME, expect, show_status};

/// What a provoking call gave: the answer's status (`Ok(())` for OK), or why the case could not
/// set itself up.
type Answer = Result<Result<(), Status>, String>;

/// Makes the call that brings the condition about.
type Provoke = for<'a> fn(&'a mut Suite) -> Pin<Box<dyn Future<Output = Answer> + 'a>>;

/// A node id no plugin has issued.
const UNKNOWN_NODE: &str = "csi-conformance-no-such-node";
/// A token no plugin has handed out.
const NEVER_ISSUED: &str = "csi-conformance-never-issued";

/// One row of an RPC's error table, and how the suite brings its condition about.
pub(crate) struct Row {
    /// The RPC whose table holds the row.
    pub(crate) rpc: &'static str,
    /// The row's condition, exactly as the Model words it.
    pub(crate) condition: &'static str,
    /// How the suite brings it about, for the case's name.
    pub(crate) how: &'static str,
    /// What the plugin must advertise for the call to be one it must answer.
    pub(crate) needs: &'static [Need],
    /// The call.
    pub(crate) provoke: Provoke,
}

impl Row {
    /// The Model's row, or `None` when the RPC's table has no such condition.
    pub(crate) fn info(&self) -> Option<&'static ErrorInfo> {
        csikit::v1::errors::rpc_rows(self.rpc)?.iter().find(|r| r.condition == self.condition)
    }

    /// `errors: CreateVolume from a snapshot never issued is NOT_FOUND (Source does not exist)`.
    pub(crate) fn name(&self) -> String {
        let code = self.info().map_or("?", |r| r.code_as_written);
        format!("errors: {} {} is {code} ({})", self.rpc, self.how, self.condition)
    }

    /// The sentence the case checks.
    pub(crate) fn sentence(&self) -> Sentence {
        match self.info() {
            Some(row) => Sentence::row(self.rpc, row),
            None => Sentence::must(self.rpc, "(no such row in the Model's error table)"),
        }
    }
}

/// `Provoke` from an `async fn(&mut Suite) -> Answer`.
macro_rules! provoke {
    ($f:path) => {{
        fn provoke(s: &mut Suite) -> Pin<Box<dyn Future<Output = Answer> + '_>> {
            Box::pin($f(s))
        }
        provoke
    }};
}

const CREATE: Need = Need::Ctl(Ctl::CreateDeleteVolume);
const PUBLISH: Need = Need::Ctl(Ctl::PublishUnpublishVolume);
const NOT_EXIST: &str = "Volume does not exist";

/// Every row the suite provokes, in the spec's order of RPCs.
pub(crate) const ROWS: &[Row] = &[
    Row {
        rpc: "CreateVolume",
        condition: "Source does not exist",
        // "plugins supporting CREATE_DELETE_SNAPSHOT MUST support creating volume from snapshot"
        how: "from a snapshot never issued",
        needs: &[CREATE, Need::Ctl(Ctl::CreateDeleteSnapshot)],
        provoke: provoke!(create_from_unknown_snapshot),
    },
    Row {
        rpc: "CreateVolume",
        condition: "Source does not exist",
        how: "cloned from a volume never issued",
        needs: &[CREATE, Need::Ctl(Ctl::CloneVolume)],
        provoke: provoke!(create_from_unknown_volume),
    },
    Row {
        rpc: "ControllerPublishVolume",
        condition: NOT_EXIST,
        how: "of a volume never issued",
        needs: &[PUBLISH],
        provoke: provoke!(publish_unknown_volume),
    },
    Row {
        rpc: "ControllerPublishVolume",
        condition: "Node does not exist",
        how: "of the suite's volume to a node never named",
        needs: &[CREATE, PUBLISH],
        provoke: provoke!(publish_unknown_node),
    },
    Row {
        rpc: "ControllerPublishVolume",
        condition: "Volume published but is incompatible",
        how: "again to the same node with the other readonly flag",
        needs: &[CREATE, PUBLISH, Need::Ctl(Ctl::PublishReadonly)],
        provoke: provoke!(publish_incompatible),
    },
    Row {
        rpc: "ValidateVolumeCapabilities",
        condition: NOT_EXIST,
        how: "of a volume never issued",
        needs: &[Need::Controller],
        provoke: provoke!(validate_unknown),
    },
    Row {
        rpc: "ListVolumes",
        condition: "Invalid `starting_token`",
        how: "with a starting_token never issued",
        needs: &[Need::Ctl(Ctl::ListVolumes)],
        provoke: provoke!(list_volumes_bad_token),
    },
    Row {
        rpc: "ListSnapshots",
        condition: "Invalid `starting_token`",
        how: "with a starting_token never issued",
        needs: &[Need::Ctl(Ctl::ListSnapshots)],
        provoke: provoke!(list_snapshots_bad_token),
    },
    Row {
        rpc: "GetSnapshot",
        condition: "Snapshot does not exist",
        how: "of a snapshot never issued",
        needs: &[Need::Ctl(Ctl::GetSnapshot)],
        provoke: provoke!(get_snapshot_unknown),
    },
    Row {
        rpc: "ControllerExpandVolume",
        condition: NOT_EXIST,
        how: "of a volume never issued",
        needs: &[Need::Ctl(Ctl::ExpandVolume)],
        provoke: provoke!(expand_unknown),
    },
    Row {
        rpc: "ControllerGetVolume",
        condition: NOT_EXIST,
        how: "of a volume never issued",
        needs: &[Need::Ctl(Ctl::GetVolume)],
        provoke: provoke!(get_volume_unknown),
    },
    Row {
        rpc: "ControllerModifyVolume",
        condition: NOT_EXIST,
        how: "of a volume never issued",
        needs: &[Need::Ctl(Ctl::ModifyVolume), Need::MutableParameters],
        provoke: provoke!(modify_unknown),
    },
    Row {
        rpc: "NodeStageVolume",
        condition: NOT_EXIST,
        how: "of a volume never issued",
        needs: &[Need::Nd(Nd::StageUnstageVolume)],
        provoke: provoke!(stage_unknown),
    },
    Row {
        rpc: "NodePublishVolume",
        condition: NOT_EXIST,
        how: "of a volume never issued",
        needs: &[Need::Node],
        provoke: provoke!(node_publish_unknown),
    },
    Row {
        rpc: "NodeUnpublishVolume",
        condition: NOT_EXIST,
        how: "of a volume never issued",
        needs: &[Need::Node],
        provoke: provoke!(node_unpublish_unknown),
    },
    Row {
        rpc: "NodeGetVolumeStats",
        condition: NOT_EXIST,
        how: "of a volume never issued, at a path that exists",
        needs: &[Need::Nd(Nd::GetVolumeStats)],
        provoke: provoke!(stats_unknown_volume),
    },
    Row {
        rpc: "NodeGetVolumeStats",
        condition: NOT_EXIST,
        how: "of the suite's volume at a path it was never published at",
        needs: &[Need::Nd(Nd::GetVolumeStats)],
        provoke: provoke!(stats_unpublished),
    },
    Row {
        rpc: "NodeExpandVolume",
        condition: NOT_EXIST,
        how: "of a volume never issued, at a path that exists",
        needs: &[Need::Nd(Nd::ExpandVolume)],
        provoke: provoke!(node_expand_unknown),
    },
];

/// Why the ControllerUnpublishVolume rows are not provoked: whether the plugin assumes the volume
/// unpublished is its own, and then OK is what the spec asks.
const UNPUBLISHED_OK: &str = "\"If the volume corresponding to the volume_id or the node corresponding to node_id cannot be found by the Plugin and the volume can be safely regarded as ControllerUnpublished from the node, the plugin SHOULD return 0 OK.\"";

/// Rows of the RPCs' tables no case above provokes, and why: `(rpc, condition, why)`. Rows
/// checked by a written case name it there.
pub(crate) const NOT_PROVOKED: &[(&str, &str, &str)] = &[
    ("Probe", "Plugin not healthy", "needs a broken plugin"),
    ("Probe", "Missing required dependency", "needs a broken plugin"),
    (
        "CreateVolume",
        "Source incompatible or not supported",
        "what a plugin cannot create from is its own",
    ),
    (
        "CreateVolume",
        "Volume already exists but is incompatible",
        "written case 'volume: an incompatible re-create is ALREADY_EXISTS'",
    ),
    (
        "CreateVolume",
        "Unable to provision in `accessible_topology`",
        "needs topology the plugin cannot serve",
    ),
    ("CreateVolume", "Unsupported `capacity_range`", "the plugin's limits are its own"),
    ("DeleteVolume", "Volume in use", "whether a volume in use can be deleted is the plugin's"),
    ("ControllerPublishVolume", "Volume published to another node", "needs a second node"),
    ("ControllerPublishVolume", "Max volumes attached", "needs the plugin's attach limit"),
    (
        "ControllerUnpublishVolume",
        "Volume does not exist and volume not assumed ControllerUnpublished from node",
        UNPUBLISHED_OK,
    ),
    (
        "ControllerUnpublishVolume",
        "Node does not exist and volume not assumed ControllerUnpublished from node",
        UNPUBLISHED_OK,
    ),
    (
        "CreateSnapshot",
        "Snapshot already exists but is incompatible",
        "written case 'snapshot: the same name from another volume is ALREADY_EXISTS'",
    ),
    ("CreateSnapshot", "Operation pending for snapshot", "a race the plugin MAY refuse"),
    ("CreateSnapshot", "Not enough space to create snapshot", "needs a full plugin"),
    ("DeleteSnapshot", "Snapshot is part of a group", "needs a group snapshot"),
    (
        "DeleteSnapshot",
        "Snapshot in use",
        "whether a snapshot in use can be deleted is the plugin's",
    ),
    ("DeleteSnapshot", "Operation pending for snapshot", "a race the plugin MAY refuse"),
    (
        "ControllerExpandVolume",
        "Exceeds capabilities",
        "the volume's capabilities are the plugin's",
    ),
    ("ControllerExpandVolume", "Volume in use", "needs an OFFLINE-only plugin"),
    ("ControllerExpandVolume", "Unsupported `capacity_range`", "the plugin's limits are its own"),
    (
        "ControllerModifyVolume",
        "Parameters not supported",
        "written case 'modify: ControllerModifyVolume with an unsupported key is INVALID_ARGUMENT'",
    ),
    ("NodeStageVolume", "Volume published but is incompatible", "written node cases stage once"),
    ("NodeStageVolume", "Exceeds capabilities", "the volume's capabilities are the plugin's"),
    (
        "NodeUnstageVolume",
        NOT_EXIST,
        "\"If the volume corresponding to the volume_id is not staged to the staging_target_path, the Plugin MUST reply 0 OK\" answers the same call",
    ),
    (
        "NodePublishVolume",
        "Volume published but is incompatible",
        "the second-publish table is a SHOULD",
    ),
    ("NodePublishVolume", "Exceeds capabilities", "needs a second node"),
    ("NodePublishVolume", "Staging target path not set", "a CO never leaves it out"),
    ("NodeExpandVolume", "Exceeds capabilities", "the volume's capabilities are the plugin's"),
    ("NodeExpandVolume", "Volume in use", "needs an OFFLINE-only plugin"),
    ("NodeExpandVolume", "Unsupported capacity_range", "the plugin's limits are its own"),
];

/// Runs every row's case the filter wants.
pub(crate) async fn run(s: &mut Suite, rec: &mut Recorder<'_>) {
    for row in ROWS {
        let name = row.name();
        if !rec.wants(&name) {
            continue;
        }
        let started = Instant::now();
        let outcome = match row.needs.iter().find(|n| !n.met(s)) {
            Some(n) => Outcome::Skipped(n.missing()),
            None => check(s, row).await,
        };
        rec.record(s, name, row.sentence(), started, outcome);
    }
}

async fn check(s: &mut Suite, row: &Row) -> Outcome {
    let Some(info) = row.info() else {
        return Outcome::Failed(format!(
            "the Model's {} error table has no row '{}' (a suite bug)",
            row.rpc, row.condition
        ));
    };
    let want = Code::from_i32(info.code.number());
    match (row.provoke)(s).await {
        Ok(answer) => expect(&answer, want, &format!("{} {}", row.rpc, row.how)),
        Err(why) => Outcome::Failed(why),
    }
}

/// Every row's case, for `--list`, then each row not provoked and why.
pub(crate) fn list() -> impl Iterator<Item = (String, Sentence)> {
    let not_provoked = NOT_PROVOKED.iter().filter_map(|(rpc, condition, why)| {
        let row = csikit::v1::errors::rpc_rows(rpc)?.iter().find(|r| r.condition == *condition)?;
        Some((format!("(not provoked) {rpc}: {condition}: {why}"), Sentence::row(rpc, row)))
    });
    ROWS.iter().map(|r| (r.name(), r.sentence())).chain(not_provoked)
}

async fn create_from(s: &mut Suite, source: Source) -> Answer {
    let name = s.name("from-unknown");
    let mut r = s.create_request(&name, 0);
    r.volume_content_source = Some(VolumeContentSource { r#type: Some(source) });
    Ok(s.create(r).await.map(drop))
}

async fn create_from_unknown_snapshot(s: &mut Suite) -> Answer {
    create_from(s, Source::Snapshot(SnapshotSource { snapshot_id: UNKNOWN_SNAPSHOT.into() })).await
}

async fn create_from_unknown_volume(s: &mut Suite) -> Answer {
    create_from(s, Source::Volume(VolumeSource { volume_id: UNKNOWN_VOLUME.into() })).await
}

fn publish_request(s: &mut Suite, volume: &str, node: &str) -> ControllerPublishVolumeRequest {
    ControllerPublishVolumeRequest {
        volume_id: volume.into(),
        node_id: node.into(),
        volume_capability: Some(s.capability()),
        secrets: s.secrets("ControllerPublishVolume"),
        ..ControllerPublishVolumeRequest::default()
    }
}

async fn publish(s: &mut Suite, r: ControllerPublishVolumeRequest) -> Result<(), Status> {
    let mut c = s.ctl_client();
    let answer = s.call(c.controller_publish_volume(s.req(r.clone()))).await.map(drop);
    if answer.is_ok() && !s.published.iter().any(|(v, n)| *v == r.volume_id && *n == r.node_id) {
        s.published.push((r.volume_id, r.node_id));
    }
    answer
}

async fn publish_unknown_volume(s: &mut Suite) -> Answer {
    let node = s.node_id.clone();
    let r = publish_request(s, UNKNOWN_VOLUME, &node);
    Ok(publish(s, r).await)
}

async fn publish_unknown_node(s: &mut Suite) -> Answer {
    let fixture = s.fixture.clone();
    let r = publish_request(s, &fixture, UNKNOWN_NODE);
    Ok(publish(s, r).await)
}

async fn publish_incompatible(s: &mut Suite) -> Answer {
    let fixture = s.fixture.clone();
    let node = s.node_id.clone();
    let first = publish_request(s, &fixture, &node);
    publish(s, first.clone())
        .await
        .map_err(|e| format!("ControllerPublishVolume: {}", show_status(&e)))?;
    let answer = publish(s, ControllerPublishVolumeRequest { readonly: true, ..first }).await;
    s.unpublish_for_node(&fixture).await?;
    Ok(answer)
}

async fn validate_unknown(s: &mut Suite) -> Answer {
    let r = ValidateVolumeCapabilitiesRequest {
        volume_id: UNKNOWN_VOLUME.into(),
        volume_capabilities: vec![s.capability()],
        secrets: s.secrets("ValidateVolumeCapabilities"),
        ..ValidateVolumeCapabilitiesRequest::default()
    };
    let mut c = s.ctl_client();
    Ok(s.call(c.validate_volume_capabilities(s.req(r))).await.map(drop))
}

async fn list_volumes_bad_token(s: &mut Suite) -> Answer {
    let r = ListVolumesRequest { max_entries: 1, starting_token: NEVER_ISSUED.into() };
    let mut c = s.ctl_client();
    Ok(s.call(c.list_volumes(s.req(r))).await.map(drop))
}

async fn list_snapshots_bad_token(s: &mut Suite) -> Answer {
    let r = ListSnapshotsRequest {
        max_entries: 1,
        starting_token: NEVER_ISSUED.into(),
        secrets: s.secrets("ListSnapshots"),
        ..ListSnapshotsRequest::default()
    };
    let mut c = s.ctl_client();
    Ok(s.call(c.list_snapshots(s.req(r))).await.map(drop))
}

async fn get_snapshot_unknown(s: &mut Suite) -> Answer {
    let r = GetSnapshotRequest {
        snapshot_id: UNKNOWN_SNAPSHOT.into(),
        secrets: s.secrets("GetSnapshot"),
    };
    let mut c = s.ctl_client();
    Ok(s.call(c.get_snapshot(s.req(r))).await.map(drop))
}

async fn expand_unknown(s: &mut Suite) -> Answer {
    let r = ControllerExpandVolumeRequest {
        volume_id: UNKNOWN_VOLUME.into(),
        capacity_range: Some(CapacityRange { required_bytes: 64 << 20, limit_bytes: 0 }),
        secrets: s.secrets("ControllerExpandVolume"),
        volume_capability: Some(s.capability()),
    };
    let mut c = s.ctl_client();
    Ok(s.call(c.controller_expand_volume(s.req(r))).await.map(drop))
}

async fn get_volume_unknown(s: &mut Suite) -> Answer {
    let r = ControllerGetVolumeRequest { volume_id: UNKNOWN_VOLUME.into() };
    let mut c = s.ctl_client();
    Ok(s.call(c.controller_get_volume(s.req(r))).await.map(drop))
}

async fn modify_unknown(s: &mut Suite) -> Answer {
    let r = ControllerModifyVolumeRequest {
        volume_id: UNKNOWN_VOLUME.into(),
        secrets: s.secrets("ControllerModifyVolume"),
        mutable_parameters: s.cfg.mutable_parameters.clone(),
    };
    let mut c = s.ctl_client();
    Ok(s.call(c.controller_modify_volume(s.req(r))).await.map(drop))
}

async fn stage_unknown(s: &mut Suite) -> Answer {
    let staging = s.staging_dir()?.display().to_string();
    let r = NodeStageVolumeRequest {
        volume_id: UNKNOWN_VOLUME.into(),
        staging_target_path: staging,
        volume_capability: Some(s.capability()),
        secrets: s.secrets("NodeStageVolume"),
        ..NodeStageVolumeRequest::default()
    };
    let mut n = s.node_client();
    Ok(s.call(n.node_stage_volume(s.req(r))).await.map(drop))
}

async fn node_publish_unknown(s: &mut Suite) -> Answer {
    let staging = s.staging_for_publish()?;
    let target = s.target_path()?.display().to_string();
    let r = NodePublishVolumeRequest {
        volume_id: UNKNOWN_VOLUME.into(),
        staging_target_path: staging,
        target_path: target,
        volume_capability: Some(s.capability()),
        secrets: s.secrets("NodePublishVolume"),
        ..NodePublishVolumeRequest::default()
    };
    let mut n = s.node_client();
    Ok(s.call(n.node_publish_volume(s.req(r))).await.map(drop))
}

async fn node_unpublish_unknown(s: &mut Suite) -> Answer {
    let target = s.target_path()?.display().to_string();
    let r = NodeUnpublishVolumeRequest { volume_id: UNKNOWN_VOLUME.into(), target_path: target };
    let mut n = s.node_client();
    Ok(s.call(n.node_unpublish_volume(s.req(r))).await.map(drop))
}

async fn stats(s: &mut Suite, volume: String, path: String) -> Answer {
    let r = NodeGetVolumeStatsRequest {
        volume_id: volume,
        volume_path: path,
        staging_target_path: String::new(),
    };
    let mut n = s.node_client();
    Ok(s.call(n.node_get_volume_stats(s.req(r))).await.map(drop))
}

async fn stats_unknown_volume(s: &mut Suite) -> Answer {
    // A folder the suite made: it exists, and no volume is there.
    let path = s.staging_dir()?.display().to_string();
    stats(s, UNKNOWN_VOLUME.into(), path).await
}

async fn stats_unpublished(s: &mut Suite) -> Answer {
    let fixture = s.fixture.clone();
    let path = s.target_path()?.display().to_string();
    stats(s, fixture, path).await
}

async fn node_expand_unknown(s: &mut Suite) -> Answer {
    let path = s.staging_dir()?.display().to_string();
    let r = NodeExpandVolumeRequest {
        volume_id: UNKNOWN_VOLUME.into(),
        volume_path: path,
        capacity_range: Some(CapacityRange { required_bytes: 64 << 20, limit_bytes: 0 }),
        volume_capability: Some(s.capability()),
        secrets: s.secrets("NodeExpandVolume"),
        ..NodeExpandVolumeRequest::default()
    };
    let mut n = s.node_client();
    Ok(s.call(n.node_expand_volume(s.req(r))).await.map(drop))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every provoked row and every row listed as not provoked is a row of the Model's table,
    /// and together they cover every row of every RPC the suite calls.
    #[test]
    fn rows_are_the_models_and_every_row_is_accounted_for() {
        for row in ROWS {
            assert!(row.info().is_some(), "{} has no row '{}'", row.rpc, row.condition);
            assert!(row.sentence().fails_plugin());
        }
        for (rpc, condition, _) in NOT_PROVOKED {
            let rows = csikit::v1::errors::rpc_rows(rpc).expect("an RPC of csi.v1");
            assert!(rows.iter().any(|r| r.condition == *condition), "{rpc}: no row '{condition}'");
        }
        let accounted = |rpc: &str, condition: &str| {
            ROWS.iter().any(|r| r.rpc == rpc && r.condition == condition)
                || NOT_PROVOKED.iter().any(|(r, c, _)| *r == rpc && *c == condition)
        };
        for rpc in [
            "Probe",
            "CreateVolume",
            "DeleteVolume",
            "ControllerPublishVolume",
            "ControllerUnpublishVolume",
            "ValidateVolumeCapabilities",
            "ListVolumes",
            "CreateSnapshot",
            "DeleteSnapshot",
            "ListSnapshots",
            "GetSnapshot",
            "ControllerExpandVolume",
            "ControllerGetVolume",
            "ControllerModifyVolume",
            "NodeStageVolume",
            "NodeUnstageVolume",
            "NodePublishVolume",
            "NodeUnpublishVolume",
            "NodeGetVolumeStats",
            "NodeExpandVolume",
        ] {
            for r in csikit::v1::errors::rpc_rows(rpc).expect("an RPC of csi.v1") {
                assert!(
                    accounted(rpc, r.condition),
                    "{rpc}: row '{}' not accounted for",
                    r.condition
                );
            }
        }
    }

    #[test]
    fn a_case_names_its_row_and_code() {
        let names: Vec<String> = ROWS.iter().map(Row::name).collect();
        assert!(
            names.contains(
                &"errors: CreateVolume from a snapshot never issued is 5 NOT_FOUND (Source does not exist)"
                    .to_owned()
            ),
            "{names:#?}"
        );
        let unique: std::collections::BTreeSet<&String> = names.iter().collect();
        assert_eq!(unique.len(), names.len(), "two rows make one name");
        let shown = ROWS[0].sentence().to_string();
        assert!(
            shown.starts_with("§CreateVolume Errors (plugin, MUST): \"If the conditions"),
            "{shown}"
        );
        assert!(shown.contains("row: Source does not exist | 5 NOT_FOUND | "), "{shown}");
    }
}

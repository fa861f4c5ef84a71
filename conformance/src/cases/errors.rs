//! The cases built from the spec's error tables: for each row the suite can bring about without
//! special setup (an id never issued, a node never named, a token never handed out, ...), one
//! case that makes the call and expects exactly the code the Model's row names. The table here
//! says only how to provoke a condition; the condition's code, description and the sentence
//! that binds the plugin come from the Model ([`spec_rows`]: `csikit::v1::errors::rpc_rows`, or
//! v1.12.0's for an RPC whose table v1.13.0's proto does not state).
//!
//! Rows the suite does not provoke, and why, are in the audit (`AUDIT.md`), whose tests hold
//! every row of the Model to a case or a reason.

use std::future::Future;
use std::pin::Pin;
use std::time::Instant;

use csikit::errors::ErrorInfo;
use csikit::v1::controller_service_capability::rpc::Type as Ctl;
use csikit::v1::group_controller_service_capability::rpc::Type as GroupCap;
use csikit::v1::node_service_capability::rpc::Type as Nd;
use csikit::v1::volume_capability::access_mode::Mode;
use csikit::v1::volume_content_source::{SnapshotSource, Type as Source, VolumeSource};
use csikit::v1::{
    CapacityRange, ControllerExpandVolumeRequest, ControllerGetVolumeRequest,
    ControllerModifyVolumeRequest, ControllerPublishVolumeRequest, GetSnapshotRequest,
    GetVolumeGroupSnapshotRequest, ListSnapshotsRequest, ListVolumesRequest,
    NodeExpandVolumeRequest, NodeGetVolumeStatsRequest, NodePublishVolumeRequest,
    NodeStageVolumeRequest, NodeUnpublishVolumeRequest, ValidateVolumeCapabilitiesRequest,
    VolumeContentSource,
};
use tonic::{Code, Status};

use crate::case::Need;
use crate::record::Recorder;
use crate::report::Outcome;
use crate::sentence::Sentence;
use crate::suite::{Suite, UNKNOWN_GROUP, UNKNOWN_SNAPSHOT, UNKNOWN_VOLUME, expect, show_status};
use crate::workload::{self, Paths, bring_down, bring_up};

/// What a provoking call gave: the answer's status (`Ok(())` for OK), or why it was not made.
type Answer = Result<Result<(), Status>, NoCall>;

/// Why the provoking call was not made.
pub(crate) enum NoCall {
    /// The case could not set itself up: a failure, in the plugin's words.
    Failed(String),
    /// What the call needs is not there (a capability the plugin does not serve): a skip.
    Skipped(String),
}

impl From<String> for NoCall {
    fn from(why: String) -> NoCall {
        NoCall::Failed(why)
    }
}

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

/// The rows of `rpc`'s error table as the spec last wrote them: `csikit::v1`'s (its own, or
/// carried from v1.12.0), or, for an RPC whose table `csikit::v1`'s source does not state
/// (v1.13.0 is read from its proto alone, and the tables of RPCs it changed are not carried),
/// v1.12.0's (`csikit::v1_12`). `None` for an RPC neither declares.
pub(crate) fn spec_rows(rpc: &str) -> Option<&'static [ErrorInfo]> {
    if csikit::v1::errors::TABLES_NOT_STATED.contains(&rpc) {
        csikit::v1_12::errors::rpc_rows(rpc).or_else(|| csikit::v1::errors::rpc_rows(rpc))
    } else {
        csikit::v1::errors::rpc_rows(rpc)
    }
}

impl Row {
    /// The Model's row, or `None` when the RPC's table has no such condition.
    pub(crate) fn info(&self) -> Option<&'static ErrorInfo> {
        spec_rows(self.rpc)?.iter().find(|r| r.condition == self.condition)
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
        rpc: "ControllerPublishVolume",
        condition: "Volume published but is incompatible",
        how: "again to the same node in another access mode",
        needs: &[CREATE, PUBLISH],
        provoke: provoke!(publish_other_mode),
    },
    Row {
        rpc: "ControllerPublishVolume",
        condition: "Max volumes attached",
        how: "of one volume more than the node's max_volumes_per_node",
        needs: &[CREATE, PUBLISH, Need::Node],
        provoke: provoke!(publish_past_limit),
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
        rpc: "ControllerExpandVolume",
        condition: "Volume in use",
        how: "of a volume in use on the node, by an OFFLINE plugin",
        needs: &[CREATE, Need::Ctl(Ctl::ExpandVolume), Need::Offline, Need::Node],
        provoke: provoke!(expand_in_use),
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
        rpc: "NodePublishVolume",
        condition: "Staging target path not set",
        how: "of a volume not staged, without staging_target_path",
        needs: &[CREATE, Need::Nd(Nd::StageUnstageVolume)],
        provoke: provoke!(node_publish_not_staged),
    },
    Row {
        rpc: "NodePublishVolume",
        condition: "Staging target path not set",
        how: "of a staged volume, without staging_target_path",
        needs: &[CREATE, Need::Nd(Nd::StageUnstageVolume)],
        provoke: provoke!(node_publish_staged),
    },
    Row {
        rpc: "NodePublishVolume",
        condition: "Volume published but is incompatible",
        how: "again at the same target_path with the other readonly flag",
        needs: &[CREATE, Need::Node],
        provoke: provoke!(node_publish_incompatible),
    },
    Row {
        rpc: "GetVolumeGroupSnapshot",
        condition: "Volume group snapshot does not exist",
        how: "of a group snapshot never issued",
        needs: &[Need::Group(GroupCap::CreateDeleteGetVolumeGroupSnapshot)],
        provoke: provoke!(get_group_unknown),
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
        Err(NoCall::Failed(why)) => Outcome::Failed(why),
        Err(NoCall::Skipped(why)) => Outcome::Skipped(why),
    }
}

/// Every row's case, for `--list`, then each row no case checks and why (from the audit).
pub(crate) fn list() -> impl Iterator<Item = (String, Sentence)> {
    let audit = crate::audit::read().map(|a| a.rows).unwrap_or_default();
    let unchecked = audit.into_iter().filter(|r| r.verdict != crate::audit::Verdict::Checked);
    let unchecked = unchecked.filter_map(|r| {
        let (rpc, condition) = r.error_row()?;
        let rows =
            if rpc == "Error Scheme" { csikit::v1::errors::GENERAL } else { spec_rows(rpc)? };
        let info = rows.iter().find(|i| i.condition == condition)?;
        let section = info.rpc.unwrap_or("Error Scheme");
        Some((format!("(not checked) {rpc}: {condition}: {}", r.by), Sentence::row(section, info)))
    });
    ROWS.iter().map(|r| (r.name(), r.sentence())).chain(unchecked)
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
    let answer = s.ask(r.clone()).await.map(drop);
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

/// A volume made for two access modes, published to the node in one, then in the other.
async fn publish_other_mode(s: &mut Suite) -> Answer {
    let (writer, reader) =
        (s.capability_with(Mode::SingleNodeWriter), s.capability_with(Mode::SingleNodeReaderOnly));
    let name = s.name("two-modes");
    let mut r = s.create_request(&name, 0);
    r.volume_capabilities = vec![writer.clone(), reader.clone()];
    let volume = match s.create(r).await {
        Ok(v) => v.volume_id,
        Err(e) if e.code() == Code::InvalidArgument => {
            return Err(NoCall::Skipped(format!(
                "the plugin makes no volume for both SINGLE_NODE_WRITER and SINGLE_NODE_READER_ONLY: {}",
                show_status(&e)
            )));
        }
        Err(e) => {
            return Err(format!("CreateVolume in two access modes: {}", show_status(&e)).into());
        }
    };
    let node = s.node_id.clone();
    let first = ControllerPublishVolumeRequest {
        volume_capability: Some(writer),
        ..publish_request(s, &volume, &node)
    };
    publish(s, first.clone())
        .await
        .map_err(|e| format!("ControllerPublishVolume: {}", show_status(&e)))?;
    let answer =
        publish(s, ControllerPublishVolumeRequest { volume_capability: Some(reader), ..first })
            .await;
    s.unpublish_for_node(&volume).await?;
    let _ = s.delete(&volume).await;
    Ok(answer)
}

/// The most volumes the suite makes to reach a node's attach limit.
const MOST_TO_ATTACH: i64 = 32;

/// Volumes published to the node until one is refused or one more than NodeGetInfo's
/// `max_volumes_per_node` is: the first refusal, or the answer to the one too many.
async fn publish_past_limit(s: &mut Suite) -> Answer {
    let max = s.max_volumes;
    if max <= 0 {
        return Err(NoCall::Skipped("NodeGetInfo gives no max_volumes_per_node".into()));
    }
    if max > MOST_TO_ATTACH {
        return Err(NoCall::Skipped(format!(
            "max_volumes_per_node is {max}: more volumes than the suite makes ({MOST_TO_ATTACH})"
        )));
    }
    let node = s.node_id.clone();
    let mut made = Vec::new();
    let mut answer: Answer = Ok(Ok(()));
    for _ in 0..=max {
        let v = match s.fresh_volume("attach-limit", 0).await {
            Ok(v) => v.volume_id,
            Err(why) => {
                answer = Err(NoCall::Failed(why));
                break;
            }
        };
        made.push(v.clone());
        let r = publish_request(s, &v, &node);
        if let Err(e) = publish(s, r).await {
            answer = Ok(Err(e));
            break;
        }
    }
    for v in &made {
        let _ = s.unpublish_for_node(v).await;
        let _ = s.delete(v).await;
    }
    answer
}

async fn validate_unknown(s: &mut Suite) -> Answer {
    let r = ValidateVolumeCapabilitiesRequest {
        volume_id: UNKNOWN_VOLUME.into(),
        volume_capabilities: vec![s.capability()],
        secrets: s.secrets("ValidateVolumeCapabilities"),
        ..ValidateVolumeCapabilitiesRequest::default()
    };
    Ok(s.ask(r).await.map(drop))
}

async fn list_volumes_bad_token(s: &mut Suite) -> Answer {
    let r = ListVolumesRequest { max_entries: 1, starting_token: NEVER_ISSUED.into() };
    Ok(s.ask(r).await.map(drop))
}

async fn list_snapshots_bad_token(s: &mut Suite) -> Answer {
    let r = ListSnapshotsRequest {
        max_entries: 1,
        starting_token: NEVER_ISSUED.into(),
        secrets: s.secrets("ListSnapshots"),
        ..ListSnapshotsRequest::default()
    };
    Ok(s.ask(r).await.map(drop))
}

async fn get_snapshot_unknown(s: &mut Suite) -> Answer {
    let r = GetSnapshotRequest {
        snapshot_id: UNKNOWN_SNAPSHOT.into(),
        secrets: s.secrets("GetSnapshot"),
    };
    Ok(s.ask(r).await.map(drop))
}

async fn expand_unknown(s: &mut Suite) -> Answer {
    let r = ControllerExpandVolumeRequest {
        volume_id: UNKNOWN_VOLUME.into(),
        capacity_range: Some(CapacityRange { required_bytes: 64 << 20, limit_bytes: 0 }),
        secrets: s.secrets("ControllerExpandVolume"),
        volume_capability: Some(s.capability()),
    };
    Ok(s.ask(r).await.map(drop))
}

/// A volume of an OFFLINE plugin, in use on the node, expanded by the controller.
async fn expand_in_use(s: &mut Suite) -> Answer {
    let v = s.fresh_volume("expand-in-use", 0).await?.volume_id;
    let cap = s.capability();
    let used = bring_up(s, &v, cap.clone(), false, Paths::default()).await?;
    let r = ControllerExpandVolumeRequest {
        volume_id: v.clone(),
        capacity_range: Some(CapacityRange { required_bytes: 64 << 20, limit_bytes: 0 }),
        secrets: s.secrets("ControllerExpandVolume"),
        volume_capability: Some(cap),
    };
    let answer = s.ask(r).await.map(drop);
    bring_down(s, &used).await?;
    let _ = s.delete(&v).await;
    Ok(answer)
}

async fn get_volume_unknown(s: &mut Suite) -> Answer {
    let r = ControllerGetVolumeRequest { volume_id: UNKNOWN_VOLUME.into() };
    Ok(s.ask(r).await.map(drop))
}

async fn modify_unknown(s: &mut Suite) -> Answer {
    let r = ControllerModifyVolumeRequest {
        volume_id: UNKNOWN_VOLUME.into(),
        secrets: s.secrets("ControllerModifyVolume"),
        mutable_parameters: s.cfg.mutable_parameters.clone(),
    };
    Ok(s.ask(r).await.map(drop))
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
    Ok(s.ask(r).await.map(drop))
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
    Ok(s.ask(r).await.map(drop))
}

/// NodePublishVolume of the suite's volume, without `staging_target_path`, after the controller
/// publication (and, with `stage`, after NodeStageVolume): the plugin must refuse it; if it
/// does not, the publication is undone at once.
async fn node_publish_without_staging(s: &mut Suite, stage: bool) -> Answer {
    let fixture = s.fixture.clone();
    let cap = s.capability();
    let publish_context = s.publish_for_node(&fixture, cap.clone()).await?;
    let staging = if stage { s.staging_dir()?.display().to_string() } else { String::new() };
    if stage {
        workload::stage(s, &fixture, &staging, cap.clone(), &publish_context)
            .await
            .map_err(|e| format!("NodeStageVolume: {}", show_status(&e)))?;
    }
    let target = s.target_path()?;
    let r = NodePublishVolumeRequest {
        volume_id: fixture.clone(),
        staging_target_path: String::new(),
        target_path: target.display().to_string(),
        volume_capability: Some(cap),
        publish_context,
        secrets: s.secrets("NodePublishVolume"),
        ..NodePublishVolumeRequest::default()
    };
    let answer = s.ask(r).await.map(drop);
    if answer.is_ok() {
        s.node_published.push((fixture.clone(), target.clone()));
        let un = NodeUnpublishVolumeRequest {
            volume_id: fixture.clone(),
            target_path: target.display().to_string(),
        };
        s.ask(un).await.map_err(|e| format!("NodeUnpublishVolume: {}", show_status(&e)))?;
        s.node_published.retain(|(_, p)| *p != target);
    }
    if stage {
        workload::unstage(s, &fixture, &staging)
            .await
            .map_err(|e| format!("NodeUnstageVolume: {}", show_status(&e)))?;
    }
    s.unpublish_for_node(&fixture).await?;
    Ok(answer)
}

async fn node_publish_not_staged(s: &mut Suite) -> Answer {
    node_publish_without_staging(s, false).await
}

async fn node_publish_staged(s: &mut Suite) -> Answer {
    node_publish_without_staging(s, true).await
}

/// The suite's volume published at a target, then published there again read-only.
async fn node_publish_incompatible(s: &mut Suite) -> Answer {
    let fixture = s.fixture.clone();
    let cap = s.capability();
    let used = bring_up(s, &fixture, cap, false, Paths::default()).await?;
    let again = NodePublishVolumeRequest {
        volume_id: fixture.clone(),
        staging_target_path: used.staging.clone(),
        target_path: used.target.display().to_string(),
        volume_capability: Some(used.capability.clone()),
        publish_context: used.publish_context.clone(),
        readonly: true,
        secrets: s.secrets("NodePublishVolume"),
        ..NodePublishVolumeRequest::default()
    };
    let answer = s.ask(again).await.map(drop);
    bring_down(s, &used).await?;
    Ok(answer)
}

async fn get_group_unknown(s: &mut Suite) -> Answer {
    let r = GetVolumeGroupSnapshotRequest {
        group_snapshot_id: UNKNOWN_GROUP.into(),
        snapshot_ids: vec![UNKNOWN_SNAPSHOT.into()],
        secrets: s.secrets("GetVolumeGroupSnapshot"),
    };
    Ok(s.ask(r).await.map(drop))
}

async fn node_unpublish_unknown(s: &mut Suite) -> Answer {
    let target = s.target_path()?.display().to_string();
    let r = NodeUnpublishVolumeRequest { volume_id: UNKNOWN_VOLUME.into(), target_path: target };
    Ok(s.ask(r).await.map(drop))
}

async fn stats(s: &mut Suite, volume: String, path: String) -> Answer {
    let r = NodeGetVolumeStatsRequest {
        volume_id: volume,
        volume_path: path,
        staging_target_path: String::new(),
    };
    Ok(s.ask(r).await.map(drop))
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
    Ok(s.ask(r).await.map(drop))
}

#[cfg(test)]
mod tests {
    use super::*;

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

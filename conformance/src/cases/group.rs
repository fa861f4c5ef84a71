//! GroupController service cases: a group snapshot of two volumes made twice (one group),
//! fetched, deleted twice; the same name over other volumes refused; a group never issued
//! deleted; a member snapshot deleted alone; a wrong snapshot list. Every answer's members are
//! held to the group's id and sources by [`crate::answers`].

use csikit::v1::controller_service_capability::rpc::Type as Ctl;
use csikit::v1::group_controller_service_capability::rpc::Type as GroupCap;
use csikit::v1::{
    CreateVolumeGroupSnapshotRequest, DeleteSnapshotRequest, DeleteVolumeGroupSnapshotRequest,
    GetSnapshotRequest, GetVolumeGroupSnapshotRequest, ListSnapshotsRequest, VolumeGroupSnapshot,
};
use tonic::{Code, Status};

use crate::case::{Case, Need, body};
use crate::report::Outcome;
use crate::sentence::Sentence;
use crate::suite::{
    Suite, UNKNOWN_GROUP, UNKNOWN_SNAPSHOT, check, ensure, expect, show, show_status,
};

const CREATE: Need = Need::Ctl(Ctl::CreateDeleteVolume);
const GROUP: Need = Need::Group(GroupCap::CreateDeleteGetVolumeGroupSnapshot);

pub(crate) const CASES: &[Case] = &[
    Case {
        name: "group: CreateVolumeGroupSnapshot of two volumes, twice (one group), Get, Delete twice (its snapshots gone)",
        needs: &[CREATE, GROUP],
        sentence: Sentence::must(
            "CreateVolumeGroupSnapshot",
            "Note that calls to this function MUST be idempotent - the function may be called multiple times for the same name, with the same `source_volume_ids` and `parameters` - the group snapshot MUST only be created once.",
        ),
        body: body!(lifecycle),
    },
    Case {
        name: "group: the same name over other volumes is ALREADY_EXISTS",
        needs: &[CREATE, GROUP],
        sentence: Sentence::must(
            "CreateVolumeGroupSnapshot Errors",
            "Group snapshot already exists but is incompatible | 6 ALREADY_EXISTS",
        ),
        body: body!(already_exists),
    },
    Case {
        name: "group: DeleteVolumeGroupSnapshot of a group never issued is OK",
        needs: &[GROUP],
        sentence: Sentence::must(
            "DeleteVolumeGroupSnapshot",
            "If a group snapshot corresponding to the specified `group_snapshot_id` does not exist or the artifacts associated with the group snapshot do not exist anymore, the Plugin MUST reply `0 OK`.",
        ),
        body: body!(delete_unknown),
    },
    Case {
        name: "group: DeleteSnapshot of a group's snapshot is refused INVALID_ARGUMENT, or deletes it",
        needs: &[CREATE, GROUP, Need::Ctl(Ctl::CreateDeleteSnapshot)],
        sentence: Sentence::must(
            "DeleteSnapshot Errors",
            "Snapshot is part of a group | 3 INVALID_ARGUMENT",
        ),
        body: body!(member_alone),
    },
    Case {
        name: "group: GetVolumeGroupSnapshot with a snapshot list that does not match is INVALID_ARGUMENT",
        needs: &[CREATE, GROUP],
        sentence: Sentence::should(
            "GetVolumeGroupSnapshot Errors",
            "Snapshot list mismatch | 3 INVALID_ARGUMENT | Besides the general cases, this code SHOULD also be used to indicate when plugin supporting CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT detects a mismatch in the `snapshot_ids`.",
        ),
        body: body!(list_mismatch),
    },
];

/// CreateVolumeGroupSnapshot named `name` of `sources`; a group made is remembered for the
/// clean-up.
pub(crate) async fn create(
    s: &mut Suite,
    name: &str,
    sources: &[String],
) -> Result<VolumeGroupSnapshot, Status> {
    let req = CreateVolumeGroupSnapshotRequest {
        name: name.into(),
        source_volume_ids: sources.to_vec(),
        secrets: s.secrets("CreateVolumeGroupSnapshot"),
        ..CreateVolumeGroupSnapshotRequest::default()
    };
    let r = s.ask(req).await?;
    let g = r
        .group_snapshot
        .ok_or_else(|| Status::internal("CreateVolumeGroupSnapshot answered no group_snapshot"))?;
    adopt(s, &g);
    Ok(g)
}

/// Remembers a group snapshot for the clean-up.
pub(crate) fn adopt(s: &mut Suite, g: &VolumeGroupSnapshot) {
    if !g.group_snapshot_id.is_empty() && !s.groups.iter().any(|(id, _)| *id == g.group_snapshot_id)
    {
        s.groups.push((g.group_snapshot_id.clone(), members(g)));
    }
}

/// DeleteVolumeGroupSnapshot; a group gone is forgotten.
pub(crate) async fn delete(s: &mut Suite, id: &str, members: &[String]) -> Result<(), Status> {
    let req = DeleteVolumeGroupSnapshotRequest {
        group_snapshot_id: id.into(),
        snapshot_ids: members.to_vec(),
        secrets: s.secrets("DeleteVolumeGroupSnapshot"),
    };
    s.ask(req).await?;
    s.groups.retain(|(g, _)| g != id);
    Ok(())
}

async fn get(s: &mut Suite, id: &str, members: &[String]) -> Result<VolumeGroupSnapshot, Status> {
    let req = GetVolumeGroupSnapshotRequest {
        group_snapshot_id: id.into(),
        snapshot_ids: members.to_vec(),
        secrets: s.secrets("GetVolumeGroupSnapshot"),
    };
    let r = s.ask(req).await?;
    r.group_snapshot
        .ok_or_else(|| Status::internal("GetVolumeGroupSnapshot answered no group_snapshot"))
}

/// Two fresh volumes.
async fn two_volumes(s: &mut Suite, what: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for _ in 0..2 {
        out.push(s.fresh_volume(what, 0).await?.volume_id);
    }
    Ok(out)
}

fn members(g: &VolumeGroupSnapshot) -> Vec<String> {
    g.snapshots.iter().map(|x| x.snapshot_id.clone()).collect()
}

/// The group snapshot a case starts from: its name, the two fresh volumes made for it, and the
/// group made of the first `of` of them.
struct Made {
    name: String,
    sources: Vec<String>,
    group: VolumeGroupSnapshot,
}

/// Two fresh volumes and a group snapshot of the first `of` of them; a failure is the case's
/// outcome.
async fn made(s: &mut Suite, what: &str, of: usize) -> Result<Made, Outcome> {
    let sources = two_volumes(s, what).await.map_err(Outcome::Failed)?;
    let name = s.name("group");
    match create(s, &name, &sources[..of]).await {
        Ok(group) => Ok(Made { name, sources, group }),
        Err(e) => Err(Outcome::Failed(format!("CreateVolumeGroupSnapshot: {}", show_status(&e)))),
    }
}

/// The volumes a case made deleted, once their group is gone (or could not be).
async fn delete_sources(s: &mut Suite, sources: Vec<String>) {
    for v in sources {
        let _ = s.delete(&v).await;
    }
}

async fn lifecycle(s: &mut Suite) -> Outcome {
    let Made { name, sources, group: first } = match made(s, "group-source", 2).await {
        Ok(m) => m,
        Err(outcome) => return outcome,
    };
    ensure!(
        first.snapshots.len() == sources.len(),
        "a group snapshot of {} volumes holds {} snapshots",
        sources.len(),
        first.snapshots.len()
    );
    let again = create(s, &name, &sources).await;
    ensure!(
        again.as_ref().is_ok_and(|g| g.group_snapshot_id == first.group_snapshot_id),
        "CreateVolumeGroupSnapshot again with the same name and volumes: expected group {}, got {}",
        first.group_snapshot_id,
        again.as_ref().map_or_else(show_status, |g| format!("group {}", g.group_snapshot_id))
    );
    let ids = members(&first);
    let got = get(s, &first.group_snapshot_id, &ids).await;
    check!(expect(&got, Code::Ok, "GetVolumeGroupSnapshot of the group it made"));
    let mut listed = got.map(|g| members(&g)).unwrap_or_default();
    let mut made = ids.clone();
    listed.sort();
    made.sort();
    ensure!(
        listed == made,
        "GetVolumeGroupSnapshot lists snapshots {listed:?}; CreateVolumeGroupSnapshot made {made:?}"
    );
    for what in ["DeleteVolumeGroupSnapshot", "DeleteVolumeGroupSnapshot again"] {
        let r = delete(s, &first.group_snapshot_id, &ids).await;
        check!(expect(&r, Code::Ok, what));
    }
    let gone = get(s, &first.group_snapshot_id, &ids).await;
    check!(expect(&gone, Code::NotFound, "GetVolumeGroupSnapshot of the group it deleted"));
    // The group's snapshots went with it.
    for id in &ids {
        check!(member_gone(s, id).await);
    }
    delete_sources(s, sources).await;
    Outcome::Passed
}

async fn already_exists(s: &mut Suite) -> Outcome {
    let Made { name, sources, group: first } = match made(s, "group-exists", 1).await {
        Ok(m) => m,
        Err(outcome) => return outcome,
    };
    let other = create(s, &name, &sources[1..]).await;
    let outcome = expect(&other, Code::AlreadyExists, "the same group name over another volume");
    let _ = delete(s, &first.group_snapshot_id, &members(&first)).await;
    delete_sources(s, sources).await;
    outcome
}

async fn delete_unknown(s: &mut Suite) -> Outcome {
    let r = delete(s, UNKNOWN_GROUP, &[UNKNOWN_SNAPSHOT.to_owned()]).await;
    expect(&r, Code::Ok, "DeleteVolumeGroupSnapshot of an id never issued")
}

/// "The SP MAY refuse to delete such snapshots with this RPC call and return an error instead":
/// OK is allowed; a refusal is the table's row, INVALID_ARGUMENT.
async fn member_alone(s: &mut Suite) -> Outcome {
    let Made { sources, group: g, .. } = match made(s, "group-member", 2).await {
        Ok(m) => m,
        Err(outcome) => return outcome,
    };
    let Some(member) = g.snapshots.first().map(|x| x.snapshot_id.clone()) else {
        return Outcome::Failed("the group snapshot holds no snapshot".into());
    };
    let req =
        DeleteSnapshotRequest { snapshot_id: member.clone(), secrets: s.secrets("DeleteSnapshot") };
    let r = s.ask(req).await;
    let remaining: Vec<String> = match &r {
        Ok(_) => members(&g).into_iter().filter(|m| *m != member).collect(),
        Err(_) => members(&g),
    };
    let refused_alone = matches!(&r, Err(e) if e.code() == Code::InvalidArgument);
    // Refused alone, it is a snapshot that "MUST NOT be deleted as a stand alone snapshot", whose
    // group id the SP "MUST provide". The DeleteSnapshot section reads that id as the one given
    // at creation time (held by the answers' rules), so GetSnapshot leaving it out is a note.
    let mut note = None;
    if refused_alone && s.plugin.has(Ctl::GetSnapshot) {
        let req =
            GetSnapshotRequest { snapshot_id: member.clone(), secrets: s.secrets("GetSnapshot") };
        if let Ok(got) = s.ask(req).await
            && let Some(x) = got.snapshot
            && x.group_snapshot_id != g.group_snapshot_id
        {
            note = Some(format!(
                "DeleteSnapshot refused {member} as part of group {}, and GetSnapshot gives it group_snapshot_id '{}' (\"the SP MUST provide the ID of the volume group snapshot in this field\")",
                g.group_snapshot_id, x.group_snapshot_id
            ));
        }
    }
    let outcome = match &r {
        Ok(_) => Outcome::Passed,
        Err(e) if e.code() == Code::InvalidArgument => Outcome::Passed,
        Err(e) => Outcome::Failed(format!(
            "DeleteSnapshot of a snapshot of group {}: expected OK or INVALID_ARGUMENT, got {}",
            g.group_snapshot_id,
            show_status(e)
        )),
    };
    if delete(s, &g.group_snapshot_id, &remaining).await.is_err() {
        let _ = delete(s, &g.group_snapshot_id, &members(&g)).await;
    }
    delete_sources(s, sources).await;
    match (outcome, note) {
        (Outcome::Passed, Some(note)) => Outcome::Note(note),
        (outcome, _) => outcome,
    }
}

async fn list_mismatch(s: &mut Suite) -> Outcome {
    let Made { sources, group: g, .. } = match made(s, "group-mismatch", 2).await {
        Ok(m) => m,
        Err(outcome) => return outcome,
    };
    let wrong = vec![UNKNOWN_SNAPSHOT.to_owned()];
    let r = get(s, &g.group_snapshot_id, &wrong).await;
    let outcome = match &r {
        Err(e) if e.code() == Code::InvalidArgument => Outcome::Passed,
        other => Outcome::Failed(format!(
            "GetVolumeGroupSnapshot of group {} with snapshot_ids [{UNKNOWN_SNAPSHOT}]: expected INVALID_ARGUMENT, got {}",
            g.group_snapshot_id,
            show(other)
        )),
    };
    let _ = delete(s, &g.group_snapshot_id, &members(&g)).await;
    delete_sources(s, sources).await;
    outcome
}

/// A snapshot of a deleted group is gone: GetSnapshot finds nothing, ListSnapshots lists it not.
async fn member_gone(s: &mut Suite, id: &str) -> Outcome {
    if s.plugin.has(Ctl::GetSnapshot) {
        let req = GetSnapshotRequest { snapshot_id: id.into(), secrets: s.secrets("GetSnapshot") };
        let r = s.ask(req).await;
        check!(expect(
            &r,
            Code::NotFound,
            &format!("GetSnapshot of {id}, a snapshot of the deleted group")
        ));
    }
    if s.plugin.has(Ctl::ListSnapshots) {
        let req = ListSnapshotsRequest {
            snapshot_id: id.into(),
            secrets: s.secrets("ListSnapshots"),
            ..ListSnapshotsRequest::default()
        };
        let r = s.ask(req).await;
        ensure!(
            r.as_ref().map_or(true, |r| r.entries.is_empty()),
            "ListSnapshots still lists {id}, a snapshot of the deleted group"
        );
    }
    Outcome::Passed
}

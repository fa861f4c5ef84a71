//! Controller service cases on snapshots: create and delete, ALREADY_EXISTS for a name taken by
//! another source, NOT_FOUND for an unknown source.

use csikit::v1::controller_service_capability::rpc::Type as Ctl;
use csikit::v1::{
    CreateSnapshotRequest, DeleteSnapshotRequest, GetSnapshotRequest, ListSnapshotsRequest,
};
use tonic::Code;

use crate::case::{Case, Need, body};
use crate::report::Outcome;
use crate::sentence::Sentence;
use crate::suite::{
    Suite, UNKNOWN_SNAPSHOT, UNKNOWN_VOLUME, check, ensure, expect, show, show_status,
};

const SNAP: Need = Need::Ctl(Ctl::CreateDeleteSnapshot);

pub(crate) const CASES: &[Case] = &[
    Case {
        name: "snapshot: create and delete, each twice (idempotent)",
        needs: &[Need::Ctl(Ctl::CreateDeleteVolume), SNAP],
        sentence: Sentence::must("CreateSnapshot", "This operation MUST be idempotent."),
        body: body!(lifecycle),
    },
    Case {
        name: "snapshot: the same name from another volume is ALREADY_EXISTS",
        needs: &[Need::Ctl(Ctl::CreateDeleteVolume), SNAP],
        sentence: Sentence::must(
            "CreateSnapshot Errors",
            "Snapshot already exists but is incompatible | 6 ALREADY_EXISTS",
        ),
        body: body!(already_exists),
    },
    Case {
        name: "snapshot: CreateSnapshot of an unknown volume is NOT_FOUND",
        needs: &[SNAP],
        sentence: Sentence::must(
            "CreateSnapshot Errors",
            "If the plugin is unable to complete the CreateSnapshot call successfully, it MUST return a non-ok gRPC code in the gRPC status.",
        ),
        body: body!(unknown_source),
    },
    Case {
        name: "snapshot: GetSnapshot answers each of two snapshots it made",
        needs: &[Need::Ctl(Ctl::CreateDeleteVolume), SNAP, Need::Ctl(Ctl::GetSnapshot)],
        sentence: Sentence::must(
            "GetSnapshot",
            "A Controller Plugin MUST implement this `GetSnapshot` RPC call if it has `GET_SNAPSHOT` capability.",
        ),
        body: body!(get_each),
    },
    Case {
        name: "snapshot: ListSnapshots pages over the snapshots it made, and filters by id",
        needs: &[Need::Ctl(Ctl::CreateDeleteVolume), SNAP, Need::Ctl(Ctl::ListSnapshots)],
        sentence: Sentence::must(
            "ListSnapshots",
            "If specified (non-zero value), the Plugin MUST NOT return more entries than this number in the response. If the actual number of entries is more than this number, the Plugin MUST set `next_token` in the response which can be used to get the next page of entries in the subsequent `ListSnapshots` call.",
        ),
        body: body!(list_own),
    },
    Case {
        name: "snapshot: ListSnapshots by source_volume_id lists no snapshot of another volume",
        needs: &[Need::Ctl(Ctl::CreateDeleteVolume), SNAP, Need::Ctl(Ctl::ListSnapshots)],
        sentence: Sentence::must(
            "ListSnapshots",
            "The Plugin SHALL return the information about all snapshots on the storage system within the given parameters regardless of how they were created. / It can be used to list snapshots by volume.",
        ),
        body: body!(list_by_source_only),
    },
    Case {
        name: "snapshot: ListSnapshots by a snapshot_id never issued lists no snapshot",
        needs: &[Need::Ctl(Ctl::CreateDeleteVolume), SNAP, Need::Ctl(Ctl::ListSnapshots)],
        sentence: Sentence::must(
            "ListSnapshots",
            "The Plugin SHALL return the information about all snapshots on the storage system within the given parameters regardless of how they were created. / It can be used to list only a specific snapshot.",
        ),
        body: body!(list_by_unknown_id),
    },
    Case {
        name: "snapshot: ListSnapshots by a source_volume_id never issued lists no snapshot",
        needs: &[Need::Ctl(Ctl::CreateDeleteVolume), SNAP, Need::Ctl(Ctl::ListSnapshots)],
        sentence: Sentence::must(
            "ListSnapshots",
            "The Plugin SHALL return the information about all snapshots on the storage system within the given parameters regardless of how they were created. / It can be used to list snapshots by volume.",
        ),
        body: body!(list_by_unknown_source),
    },
    Case {
        name: "snapshot: DeleteSnapshot of an unknown id is OK",
        needs: &[SNAP],
        sentence: Sentence::must(
            "DeleteSnapshot",
            "If a snapshot corresponding to the specified `snapshot_id` does not exist or the artifacts associated with the snapshot do not exist anymore, the Plugin MUST reply `0 OK`.",
        ),
        body: body!(delete_unknown),
    },
    Case {
        name: "snapshot: ListSnapshots by source_volume_id lists every snapshot of it",
        needs: &[Need::Ctl(Ctl::CreateDeleteVolume), SNAP, Need::Ctl(Ctl::ListSnapshots)],
        sentence: Sentence::must(
            "ListSnapshots",
            "The Plugin SHALL return the information about all snapshots on the storage system within the given parameters regardless of how they were created.",
        ),
        body: body!(list_by_source),
    },
];

/// CreateSnapshot of `source` named `name`; a snapshot made is remembered for the clean-up.
pub(crate) async fn create(
    s: &mut Suite,
    source: &str,
    name: &str,
) -> Result<csikit::v1::Snapshot, tonic::Status> {
    let req = CreateSnapshotRequest {
        source_volume_id: source.into(),
        name: name.into(),
        secrets: s.secrets("CreateSnapshot"),
        ..CreateSnapshotRequest::default()
    };
    let r = s.ask(req).await?;
    let snap =
        r.snapshot.ok_or_else(|| tonic::Status::internal("CreateSnapshot answered no snapshot"))?;
    s.adopt_snapshot(&snap.snapshot_id);
    Ok(snap)
}

/// DeleteSnapshot; a snapshot gone is forgotten.
pub(crate) async fn delete(s: &mut Suite, id: &str) -> Result<(), tonic::Status> {
    let req = DeleteSnapshotRequest {
        snapshot_id: id.into(),
        secrets: s.secrets("DeleteSnapshot"),
    };
    s.ask(req).await?;
    s.snapshots.retain(|x| x != id);
    Ok(())
}

async fn lifecycle(s: &mut Suite) -> Outcome {
    let fixture = s.fixture.clone();
    let name = s.name("snap");
    let snap = match create(s, &fixture, &name).await {
        Ok(snap) => snap,
        Err(e) => return Outcome::Failed(format!("CreateSnapshot: {}", show_status(&e))),
    };
    let again = create(s, &fixture, &name).await;
    ensure!(
        again.as_ref().is_ok_and(|x| x.snapshot_id == snap.snapshot_id),
        "CreateSnapshot again: expected the same snapshot, got {}",
        again.as_ref().map_or_else(show_status, |x| format!("snapshot {}", x.snapshot_id))
    );
    for what in ["DeleteSnapshot", "DeleteSnapshot again"] {
        let r = delete(s, &snap.snapshot_id).await;
        check!(expect(&r, Code::Ok, what));
    }
    Outcome::Passed
}

async fn already_exists(s: &mut Suite) -> Outcome {
    let fixture = s.fixture.clone();
    let name = s.name("snap");
    if let Err(e) = create(s, &fixture, &name).await {
        return Outcome::Failed(format!("CreateSnapshot: {}", show_status(&e)));
    }
    let other = match s.fresh_volume("snap-source", 0).await {
        Ok(v) => v,
        Err(why) => return Outcome::Failed(why),
    };
    let r = create(s, &other.volume_id, &name).await;
    ensure!(
        matches!(&r, Err(e) if e.code() == Code::AlreadyExists),
        "the same snapshot name from another volume: expected ALREADY_EXISTS, got {}",
        show(&r)
    );
    Outcome::Passed
}

async fn unknown_source(s: &mut Suite) -> Outcome {
    let name = s.name("snap-unknown");
    let r = create(s, UNKNOWN_VOLUME, &name).await;
    match r {
        Ok(snap) => Outcome::Failed(format!(
            "CreateSnapshot of an unknown volume answered OK (snapshot {})",
            snap.snapshot_id
        )),
        Err(e) if e.code() == Code::NotFound => Outcome::Passed,
        // The table names no code for this condition: NOT_FOUND is what the other tables name
        // for an id that does not exist, so anything else is worth a note, not a failure.
        Err(e) => Outcome::Note(format!(
            "CreateSnapshot of an unknown volume: {}; NOT_FOUND is the code the other tables name for an id that does not exist",
            show_status(&e)
        )),
    }
}

async fn get(s: &mut Suite, id: &str) -> Result<csikit::v1::GetSnapshotResponse, tonic::Status> {
    let req =
        GetSnapshotRequest { snapshot_id: id.into(), secrets: s.secrets("GetSnapshot") };
    s.ask(req).await
}

async fn get_each(s: &mut Suite) -> Outcome {
    let fixture = s.fixture.clone();
    let mut made = Vec::new();
    for _ in 0..2 {
        let name = s.name("snap-get");
        match create(s, &fixture, &name).await {
            Ok(snap) => made.push(snap.snapshot_id),
            Err(e) => return Outcome::Failed(format!("CreateSnapshot: {}", show_status(&e))),
        }
    }
    for id in &made {
        let r = get(s, id).await;
        check!(expect(&r, Code::Ok, &format!("GetSnapshot of {id}")));
        let got = r.ok().and_then(|r| r.snapshot).map(|x| x.snapshot_id).unwrap_or_default();
        if got != *id {
            return Outcome::Failed(format!("GetSnapshot of {id} answered snapshot '{got}'"));
        }
    }
    for id in made {
        let _ = delete(s, &id).await;
    }
    Outcome::Passed
}

/// Every snapshot id ListSnapshots gives for `filter`, following its tokens.
async fn list_all(s: &mut Suite, filter: ListSnapshotsRequest) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut token = String::new();
    for _ in 0..10_000 {
        let req = ListSnapshotsRequest {
            starting_token: token.clone(),
            secrets: s.secrets("ListSnapshots"),
            ..filter.clone()
        };
        let r = s.ask(req).await.map_err(|e| format!("ListSnapshots: {}", show_status(&e)))?;
        if filter.max_entries > 0 && r.entries.len() > filter.max_entries as usize {
            return Err(format!(
                "ListSnapshots gave {} entries for max_entries {}",
                r.entries.len(),
                filter.max_entries
            ));
        }
        out.extend(r.entries.into_iter().filter_map(|e| e.snapshot.map(|x| x.snapshot_id)));
        if r.next_token.is_empty() {
            return Ok(out);
        }
        if r.next_token == token {
            return Err(
                "ListSnapshots gave back the token it was sent: the listing never ends".into()
            );
        }
        token = r.next_token;
    }
    Err("ListSnapshots gave 10,000 pages: the listing never ends".into())
}

async fn list_by_source(s: &mut Suite) -> Outcome {
    let fixture = s.fixture.clone();
    let mut made = Vec::new();
    for _ in 0..2 {
        let name = s.name("snap-source");
        match create(s, &fixture, &name).await {
            Ok(snap) => made.push(snap.snapshot_id),
            Err(e) => return Outcome::Failed(format!("CreateSnapshot: {}", show_status(&e))),
        }
    }
    let filter = ListSnapshotsRequest { source_volume_id: fixture.clone(), ..Default::default() };
    let by_source = list_all(s, filter).await;
    for id in made.clone() {
        let _ = delete(s, &id).await;
    }
    ensure!(
        by_source.as_ref().is_ok_and(|ids| made.iter().all(|m| ids.contains(m))),
        "ListSnapshots with source_volume_id {fixture}: expected both snapshots made of it, got {:?}",
        by_source
    );
    Outcome::Passed
}

async fn list_by_source_only(s: &mut Suite) -> Outcome {
    let fixture = s.fixture.clone();
    let other = match s.fresh_volume("snap-other", 0).await {
        Ok(v) => v.volume_id,
        Err(why) => return Outcome::Failed(why),
    };
    let mut made = Vec::new();
    for source in [fixture.clone(), other.clone()] {
        let name = s.name("snap-filter");
        match create(s, &source, &name).await {
            Ok(snap) => made.push(snap.snapshot_id),
            Err(e) => return Outcome::Failed(format!("CreateSnapshot: {}", show_status(&e))),
        }
    }
    let filter = ListSnapshotsRequest { source_volume_id: fixture.clone(), ..Default::default() };
    let listed = list_all(s, filter).await;
    for id in made.clone() {
        let _ = delete(s, &id).await;
    }
    let _ = s.delete(&other).await;
    ensure!(
        listed.as_ref().is_ok_and(|ids| !ids.contains(&made[1])),
        "ListSnapshots with source_volume_id {fixture} listed {}, a snapshot of volume {other}: {:?}",
        made[1],
        listed
    );
    Outcome::Passed
}

async fn list_own(s: &mut Suite) -> Outcome {
    let fixture = s.fixture.clone();
    let mut made = Vec::new();
    for _ in 0..3 {
        let name = s.name("snap-list");
        match create(s, &fixture, &name).await {
            Ok(snap) => made.push(snap.snapshot_id),
            Err(e) => return Outcome::Failed(format!("CreateSnapshot: {}", show_status(&e))),
        }
    }
    let paged =
        match list_all(s, ListSnapshotsRequest { max_entries: 1, ..Default::default() }).await {
            Ok(p) => p,
            Err(why) => return Outcome::Failed(why),
        };
    for id in &made {
        let seen = paged.iter().filter(|p| *p == id).count();
        ensure!(seen == 1, "paging one entry at a time saw snapshot {id} {seen} times");
    }
    let one =
        list_all(s, ListSnapshotsRequest { snapshot_id: made[0].clone(), ..Default::default() })
            .await;
    ensure!(
        one.as_ref().is_ok_and(|ids| ids == &made[..1]),
        "ListSnapshots with snapshot_id {}: expected just it, got {:?}",
        made[0],
        one
    );
    for id in made {
        let _ = delete(s, &id).await;
    }
    Outcome::Passed
}

async fn delete_unknown(s: &mut Suite) -> Outcome {
    let r = delete(s, UNKNOWN_SNAPSHOT).await;
    expect(&r, Code::Ok, "DeleteSnapshot of an id never issued")
}

/// With a snapshot of its own present, a listing filtered by an id (snapshot or volume) never
/// issued holds nothing: no snapshot is within that parameter. The table names no code for an id
/// that does not exist, so an error instead of the empty list is a note.
async fn list_by_unknown(s: &mut Suite, filter: ListSnapshotsRequest, what: &str) -> Outcome {
    let fixture = s.fixture.clone();
    let name = s.name("snap-unknown");
    let made = match create(s, &fixture, &name).await {
        Ok(snap) => snap.snapshot_id,
        Err(e) => return Outcome::Failed(format!("CreateSnapshot: {}", show_status(&e))),
    };
    let listed = list_all(s, filter).await;
    let _ = delete(s, &made).await;
    match listed {
        Ok(ids) if ids.is_empty() => Outcome::Passed,
        Ok(ids) => Outcome::Failed(format!(
            "ListSnapshots with {what} (never issued) listed {} snapshot(s): {ids:?}",
            ids.len()
        )),
        Err(why) => Outcome::Note(format!(
            "ListSnapshots with {what} (never issued): {why}; the sentence asks for the (empty) list of the snapshots within the given parameters"
        )),
    }
}

async fn list_by_unknown_id(s: &mut Suite) -> Outcome {
    let filter =
        ListSnapshotsRequest { snapshot_id: UNKNOWN_SNAPSHOT.into(), ..Default::default() };
    list_by_unknown(s, filter, &format!("snapshot_id {UNKNOWN_SNAPSHOT}")).await
}

async fn list_by_unknown_source(s: &mut Suite) -> Outcome {
    let filter =
        ListSnapshotsRequest { source_volume_id: UNKNOWN_VOLUME.into(), ..Default::default() };
    list_by_unknown(s, filter, &format!("source_volume_id {UNKNOWN_VOLUME}")).await
}

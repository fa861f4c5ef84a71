//! Controller service cases on volumes: create and delete, capacity ranges of sizes that are not
//! round, volumes from snapshots and clones and their sizes, ALREADY_EXISTS, concurrent creates,
//! GetCapacity, ControllerGetVolume, a volume deleted while it has a snapshot, topology.

use std::collections::BTreeSet;

use csikit::v1::controller_service_capability::rpc::Type as Ctl;
use csikit::v1::volume_content_source::{SnapshotSource, Type as Source, VolumeSource};
use csikit::v1::{
    CapacityRange, ControllerGetVolumeRequest, GetCapacityRequest, GetSnapshotRequest,
    ListSnapshotsRequest, Snapshot, TopologyRequirement, ValidateVolumeCapabilitiesRequest, Volume,
    VolumeContentSource,
};
use tonic::Code;

use crate::case::{Case, Need, body};
use crate::cases::snapshot;
use crate::report::Outcome;
use crate::sentence::Sentence;
use crate::suite::{MIB, Suite, UNKNOWN_VOLUME, check, ensure, expect, show, show_status};

const CREATE: Need = Need::Ctl(Ctl::CreateDeleteVolume);
const SNAP: Need = Need::Ctl(Ctl::CreateDeleteSnapshot);

pub(crate) const CASES: &[Case] = &[
    Case {
        name: "volume: create and delete, each twice (idempotent)",
        needs: &[CREATE],
        sentence: Sentence::must(
            "CreateVolume",
            "If a volume corresponding to the specified volume `name` already exists, is accessible from `accessibility_requirements`, and is compatible with the specified `capacity_range`, `volume_capabilities`, `parameters` and `mutable_parameters` in the `CreateVolumeRequest`, the Plugin MUST reply `0 OK` with the corresponding `CreateVolumeResponse`.",
        ),
        body: body!(lifecycle),
    },
    Case {
        name: "volume: CreateVolume honours capacity_range (sizes that are not round: at least, exact, between, at most)",
        needs: &[CREATE],
        sentence: Sentence::must(
            "CreateVolumeRequest.capacity_range",
            "If specified it MUST always be honored, even when creating volumes from a source; which MAY force some backends to internally extend the volume after creating it.",
        ),
        body: body!(capacity_range),
    },
    Case {
        name: "volume: CreateVolume from a snapshot makes a volume no smaller than it, and a larger one when asked",
        needs: &[CREATE, SNAP],
        sentence: Sentence::must(
            "VolumeContentSource.SnapshotSource.snapshot_id",
            "Plugin is REQUIRED to support creating volume from snapshot if it supports the capability CREATE_DELETE_SNAPSHOT.",
        ),
        body: body!(from_snapshot),
    },
    Case {
        name: "volume: CreateVolume from another volume (a clone) makes a volume no smaller than it, and a larger one when asked",
        needs: &[CREATE, Need::Ctl(Ctl::CloneVolume)],
        sentence: Sentence::must(
            "VolumeContentSource.VolumeSource.volume_id",
            "Plugins reporting CLONE_VOLUME capability MUST support creating a volume from another volume.",
        ),
        body: body!(clone),
    },
    Case {
        name: "volume: CreateVolume from a snapshot with limit_bytes below the snapshot's size is OUT_OF_RANGE",
        needs: &[CREATE, SNAP],
        sentence: Sentence::must(
            "CreateVolume Errors",
            "Unsupported `capacity_range` | 11 OUT_OF_RANGE | Indicates that the capacity range is not allowed by the Plugin, for example when trying to create a volume smaller than the source snapshot or the Plugin does not support creating volumes larger than the source snapshot or source volume.",
        ),
        body: body!(smaller_than_snapshot),
    },
    Case {
        name: "volume: DeleteVolume of a volume with a snapshot: the snapshot stays usable, or FAILED_PRECONDITION and the volume stays",
        needs: &[CREATE, SNAP],
        sentence: Sentence::must(
            "DeleteVolume",
            "If the Controller Plugin supports deleting a volume without affecting its existing snapshots, then these snapshots MUST still be fully operational and acceptable as sources for new volumes as well as appear on `ListSnapshot` calls once the volume has been deleted.",
        ),
        body: body!(delete_with_snapshot),
    },
    Case {
        name: "topology: CreateVolume with the node's topology as requisite makes a volume accessible from it",
        needs: &[CREATE, Need::Accessibility],
        sentence: Sentence::must(
            "TopologyRequirement.requisite",
            "If requisite is specified, the provisioned volume MUST be accessible from at least one of the requisite topologies.",
        ),
        body: body!(requisite),
    },
    Case {
        name: "volume: an incompatible re-create is ALREADY_EXISTS",
        needs: &[CREATE],
        sentence: Sentence::must(
            "CreateVolume Errors",
            "Volume already exists but is incompatible | 6 ALREADY_EXISTS",
        ),
        body: body!(already_exists),
    },
    Case {
        name: "volume: DeleteVolume of an unknown id is OK",
        needs: &[CREATE],
        sentence: Sentence::must(
            "DeleteVolume",
            "If a volume corresponding to the specified `volume_id` does not exist or the artifacts associated with the volume do not exist anymore, the Plugin MUST reply `0 OK`.",
        ),
        body: body!(delete_unknown),
    },
    Case {
        name: "volume: concurrent creates of one name make one volume",
        needs: &[CREATE],
        sentence: Sentence::must("CreateVolume", "This operation MUST be idempotent."),
        body: body!(concurrent_create),
    },
    Case {
        name: "volume: ValidateVolumeCapabilities twice answers the same (idempotent)",
        needs: &[CREATE],
        sentence: Sentence::must(
            "ValidateVolumeCapabilities",
            "This operation MUST be idempotent.",
        ),
        body: body!(validate_twice),
    },
    Case {
        name: "capacity: GetCapacity follows what is provisioned",
        needs: &[CREATE, Need::Ctl(Ctl::GetCapacity)],
        sentence: Sentence::should(
            "GetCapacity",
            "The available capacity, in bytes, of the storage that can be used to provision volumes.",
        ),
        body: body!(capacity_accounting),
    },
    Case {
        name: "volume: ControllerGetVolume answers a volume it made",
        needs: &[CREATE, Need::Ctl(Ctl::GetVolume)],
        sentence: Sentence::must(
            "ControllerGetVolume",
            "A Controller Plugin MUST implement this `ControllerGetVolume` RPC call if it has `GET_VOLUME` capability.",
        ),
        body: body!(get_volume),
    },
];

async fn lifecycle(s: &mut Suite) -> Outcome {
    let name = s.name("lifecycle");
    let r = s.create_request(&name, 0);
    let first = match s.create(r.clone()).await {
        Ok(v) => v,
        Err(e) => return Outcome::Failed(format!("CreateVolume: {}", show_status(&e))),
    };
    ensure!(!first.volume_id.is_empty(), "CreateVolume answered an empty volume_id");
    let again = s.create(r).await;
    ensure!(
        again.as_ref().is_ok_and(|v| v.volume_id == first.volume_id),
        "CreateVolume again with the same name and parameters: expected the same volume, got {}",
        again.as_ref().map_or_else(show_status, |v| format!("volume {}", v.volume_id))
    );
    let d = s.delete(&first.volume_id).await;
    check!(expect(&d, Code::Ok, "DeleteVolume"));
    let d = s.delete(&first.volume_id).await;
    expect(&d, Code::Ok, "DeleteVolume again")
}

/// A range's answer: OK within it (the answer's size is held to the range by
/// [`crate::answers`]), or OUT_OF_RANGE, the table's code for a range the plugin cannot make.
async fn create_in_range(s: &mut Suite, what: &str, range: CapacityRange) -> Outcome {
    let name = s.name("capacity");
    let mut r = s.create_request(&name, 0);
    r.capacity_range = Some(range);
    let v = match s.create(r).await {
        Ok(v) => v,
        Err(e) if e.code() == Code::OutOfRange => return Outcome::Passed,
        Err(e) => {
            return Outcome::Failed(format!(
                "CreateVolume with {what}: expected OK or OUT_OF_RANGE, got {}",
                show_status(&e)
            ));
        }
    };
    let _ = s.delete(&v.volume_id).await;
    let c = v.capacity_bytes;
    let (lo, hi) = (range.required_bytes, range.limit_bytes);
    ensure!(
        c == 0 || ((lo == 0 || c >= lo) && (hi == 0 || c <= hi)),
        "CreateVolume with {what} gave a volume of {c} bytes"
    );
    Outcome::Passed
}

async fn capacity_range(s: &mut Suite) -> Outcome {
    // Not whole MiB: a plugin that rounds to its allocation unit shows it here.
    let odd = 3 * MIB + 4097;
    for (what, range) in [
        ("required_bytes 3 MiB + 4097", CapacityRange { required_bytes: odd, limit_bytes: 0 }),
        (
            "required_bytes = limit_bytes = 5 MiB + 12288",
            CapacityRange { required_bytes: 5 * MIB + 12288, limit_bytes: 5 * MIB + 12288 },
        ),
        (
            "required_bytes 3 MiB + 4097, limit_bytes 9 MiB + 4097",
            CapacityRange { required_bytes: odd, limit_bytes: 9 * MIB + 4097 },
        ),
        (
            "limit_bytes 9 MiB + 4097 alone",
            CapacityRange { required_bytes: 0, limit_bytes: 9 * MIB + 4097 },
        ),
    ] {
        check!(create_in_range(s, what, range).await);
    }
    Outcome::Passed
}

/// A volume of 8 MiB (or what the plugin makes of it) and a snapshot of it.
async fn volume_and_snapshot(s: &mut Suite, what: &str) -> Result<(Volume, Snapshot), String> {
    let v = s.fresh_volume(what, 8 * MIB).await?;
    let name = s.name(what);
    let snap = snapshot::create(s, &v.volume_id, &name)
        .await
        .map_err(|e| format!("CreateSnapshot: {}", show_status(&e)))?;
    Ok((v, snap))
}

/// CreateVolume from `source` with `range`: OK (sizes held by [`crate::answers`]) or, with a
/// range larger than the source, OUT_OF_RANGE ("the Plugin can either refuse such a call with
/// `OUT_OF_RANGE` error or MUST provide a volume that ... has both the requested (larger) size").
async fn create_from(
    s: &mut Suite,
    source: Source,
    range: Option<CapacityRange>,
    larger: bool,
) -> Result<Option<Volume>, String> {
    let name = s.name("from-source");
    let mut r = s.create_request(&name, 0);
    r.capacity_range = range;
    r.volume_content_source = Some(VolumeContentSource { r#type: Some(source) });
    match s.create(r).await {
        Ok(v) => Ok(Some(v)),
        Err(e) if larger && e.code() == Code::OutOfRange => Ok(None),
        Err(e) => Err(format!(
            "CreateVolume from a source{}: {}",
            if larger { ", larger" } else { "" },
            show_status(&e)
        )),
    }
}

/// From `source` of `size` bytes (0: unknown): a volume of its size (asked for as a CO does,
/// `required_bytes` the source's size), then a larger one.
async fn from_source(s: &mut Suite, source: Source, size: i64) -> Outcome {
    let range = (size > 0).then_some(CapacityRange { required_bytes: size, limit_bytes: 0 });
    let same = match create_from(s, source.clone(), range, false).await {
        Ok(v) => v,
        Err(why) => return Outcome::Failed(why),
    };
    if let Some(v) = same {
        let _ = s.delete(&v.volume_id).await;
        ensure!(
            v.capacity_bytes == 0 || size == 0 || v.capacity_bytes >= size,
            "a volume made from a source of {size} bytes holds {} bytes",
            v.capacity_bytes
        );
    }
    let want = size.max(8 * MIB) + MIB + 4097;
    let range = CapacityRange { required_bytes: want, limit_bytes: 0 };
    match create_from(s, source, Some(range), true).await {
        Ok(Some(v)) => {
            let _ = s.delete(&v.volume_id).await;
            ensure!(
                v.capacity_bytes == 0 || v.capacity_bytes >= want,
                "a volume from a source asked for {want} bytes holds {}",
                v.capacity_bytes
            );
        }
        Ok(None) => {}
        Err(why) => return Outcome::Failed(why),
    }
    Outcome::Passed
}

async fn from_snapshot(s: &mut Suite) -> Outcome {
    let (v, snap) = match volume_and_snapshot(s, "from-snapshot").await {
        Ok(x) => x,
        Err(why) => return Outcome::Failed(why),
    };
    let source = Source::Snapshot(SnapshotSource { snapshot_id: snap.snapshot_id.clone() });
    let outcome = from_source(s, source, snap.size_bytes).await;
    let _ = snapshot::delete(s, &snap.snapshot_id).await;
    let _ = s.delete(&v.volume_id).await;
    outcome
}

async fn clone(s: &mut Suite) -> Outcome {
    let v = match s.fresh_volume("clone-source", 8 * MIB).await {
        Ok(v) => v,
        Err(why) => return Outcome::Failed(why),
    };
    let source = Source::Volume(VolumeSource { volume_id: v.volume_id.clone() });
    let outcome = from_source(s, source, v.capacity_bytes).await;
    let _ = s.delete(&v.volume_id).await;
    outcome
}

async fn smaller_than_snapshot(s: &mut Suite) -> Outcome {
    let (v, snap) = match volume_and_snapshot(s, "smaller").await {
        Ok(x) => x,
        Err(why) => return Outcome::Failed(why),
    };
    let outcome = if snap.size_bytes < 2 {
        Outcome::Skipped(
            "the snapshot's size_bytes is unknown (0): no smaller size to ask for".into(),
        )
    } else {
        let half = snap.size_bytes / 2;
        let source = Source::Snapshot(SnapshotSource { snapshot_id: snap.snapshot_id.clone() });
        let range = CapacityRange { required_bytes: half, limit_bytes: half };
        let name = s.name("smaller");
        let mut r = s.create_request(&name, 0);
        r.capacity_range = Some(range);
        r.volume_content_source = Some(VolumeContentSource { r#type: Some(source) });
        let made = s.create(r).await;
        if let Ok(v) = &made {
            let _ = s.delete(&v.volume_id).await;
        }
        expect(
            &made,
            Code::OutOfRange,
            &format!("CreateVolume of {half} bytes from a snapshot of {} bytes", snap.size_bytes),
        )
    };
    let _ = snapshot::delete(s, &snap.snapshot_id).await;
    let _ = s.delete(&v.volume_id).await;
    outcome
}

async fn delete_with_snapshot(s: &mut Suite) -> Outcome {
    let (v, snap) = match volume_and_snapshot(s, "deleted-source").await {
        Ok(x) => x,
        Err(why) => return Outcome::Failed(why),
    };
    let deleted = s.delete(&v.volume_id).await;
    let outcome = match deleted {
        Ok(_) => snapshot_still_usable(s, &snap).await,
        Err(e) if e.code() == Code::FailedPrecondition => volume_still_there(s, &v.volume_id).await,
        Err(e) => Outcome::Failed(format!(
            "DeleteVolume of a volume with a snapshot: expected OK or FAILED_PRECONDITION, got {}",
            show_status(&e)
        )),
    };
    let _ = snapshot::delete(s, &snap.snapshot_id).await;
    let _ = s.delete(&v.volume_id).await;
    outcome
}

/// The source volume is gone: its snapshot is still listed, fetched and a source.
async fn snapshot_still_usable(s: &mut Suite, snap: &Snapshot) -> Outcome {
    let id = snap.snapshot_id.clone();
    if s.plugin.has(Ctl::ListSnapshots) {
        let req = ListSnapshotsRequest {
            snapshot_id: id.clone(),
            secrets: s.secrets("ListSnapshots"),
            ..ListSnapshotsRequest::default()
        };
        let r = s.ask(req).await;
        ensure!(
            r.as_ref().is_ok_and(|r| r
                .entries
                .iter()
                .any(|e| e.snapshot.as_ref().is_some_and(|x| x.snapshot_id == id))),
            "after its volume was deleted, ListSnapshots by snapshot_id does not list snapshot {id}: {}",
            show(&r)
        );
    }
    if s.plugin.has(Ctl::GetSnapshot) {
        let req = GetSnapshotRequest { snapshot_id: id.clone(), secrets: s.secrets("GetSnapshot") };
        let r = s.ask(req).await;
        check!(expect(&r, Code::Ok, "GetSnapshot of a snapshot whose volume was deleted"));
    }
    let source = Source::Snapshot(SnapshotSource { snapshot_id: id });
    let range = (snap.size_bytes > 0)
        .then_some(CapacityRange { required_bytes: snap.size_bytes, limit_bytes: 0 });
    match create_from(s, source, range, false).await {
        Ok(Some(v)) => {
            let _ = s.delete(&v.volume_id).await;
            Outcome::Passed
        }
        Ok(None) => Outcome::Passed,
        Err(why) => Outcome::Failed(format!("after its volume was deleted: {why}")),
    }
}

/// DeleteVolume refused: the volume is still there ("the volume MUST NOT be altered in any way").
async fn volume_still_there(s: &mut Suite, id: &str) -> Outcome {
    if s.plugin.has(Ctl::GetVolume) {
        let r = s.ask(ControllerGetVolumeRequest { volume_id: id.into() }).await;
        check!(expect(
            &r,
            Code::Ok,
            "ControllerGetVolume of the volume DeleteVolume refused to delete"
        ));
    } else if s.plugin.has(Ctl::ListVolumes) {
        let listed = match s.list_all(0).await {
            Ok(l) => l,
            Err(why) => return Outcome::Failed(why),
        };
        ensure!(
            listed.iter().any(|l| l == id),
            "DeleteVolume refused with FAILED_PRECONDITION, and ListVolumes no longer lists volume {id}"
        );
    }
    Outcome::Passed
}

/// CreateVolume asking for the node's topology (requisite and preferred): OK, the answer held to
/// the requisite by [`crate::answers`]; a plugin with no node topology gives nothing to ask for.
async fn requisite(s: &mut Suite) -> Outcome {
    let Some(node) = s.node_topology.clone().filter(|t| !t.segments.is_empty()) else {
        return Outcome::Skipped("NodeGetInfo gave no accessible_topology to ask for".into());
    };
    let name = s.name("topology");
    let mut r = s.create_request(&name, 0);
    r.accessibility_requirements =
        Some(TopologyRequirement { requisite: vec![node.clone()], preferred: vec![node.clone()] });
    let v = match s.create(r).await {
        Ok(v) => v,
        Err(e) => {
            return Outcome::Failed(format!(
                "CreateVolume with the node's topology as requisite: {}",
                show_status(&e)
            ));
        }
    };
    let _ = s.delete(&v.volume_id).await;
    let within = v.accessible_topology.is_empty()
        || v.accessible_topology.iter().any(|t| crate::answers::accessible_from(t, &node));
    ensure!(
        within,
        "asked for {:?}, the volume is accessible from {:?}",
        node.segments,
        v.accessible_topology.iter().map(|t| &t.segments).collect::<Vec<_>>()
    );
    Outcome::Passed
}

async fn already_exists(s: &mut Suite) -> Outcome {
    let name = s.name("exists");
    let r = s.create_request(&name, MIB);
    if let Err(e) = s.create(r).await {
        return Outcome::Failed(format!("CreateVolume: {}", show_status(&e)));
    }
    let mut other = s.create_request(&name, 0);
    other.capacity_range = Some(CapacityRange { required_bytes: 8 * MIB, limit_bytes: 8 * MIB });
    let r = s.create(other).await;
    expect(&r, Code::AlreadyExists, "the same name with an incompatible capacity_range")
}

async fn delete_unknown(s: &mut Suite) -> Outcome {
    let r = s.delete(UNKNOWN_VOLUME).await;
    expect(&r, Code::Ok, "DeleteVolume of an id never issued")
}

async fn concurrent_create(s: &mut Suite) -> Outcome {
    let name = s.name("concurrent");
    let r = s.create_request(&name, 0);
    let (x, y) = tokio::join!(s.ask(r.clone()), s.ask(r.clone()));
    let mut ids = BTreeSet::new();
    for answer in [&x, &y] {
        match answer {
            Ok(v) => {
                if let Some(v) = &v.volume {
                    ids.insert(v.volume_id.clone());
                    s.adopt_volume(&v.volume_id);
                }
            }
            Err(e) if e.code() == Code::Aborted => {}
            Err(e) => {
                return Outcome::Failed(format!("expected OK or ABORTED, got {}", show_status(e)));
            }
        }
    }
    ensure!(ids.len() <= 1, "two concurrent creates of one name made {} volumes", ids.len());
    // Settled, one more create must name the same volume.
    let settled = s.create(r).await;
    ensure!(
        settled.as_ref().is_ok_and(|v| ids.is_empty() || ids.contains(&v.volume_id)),
        "after the concurrent creates, CreateVolume gave another volume: {}",
        show(&settled)
    );
    Outcome::Passed
}

async fn validate_twice(s: &mut Suite) -> Outcome {
    let req = ValidateVolumeCapabilitiesRequest {
        volume_id: s.fixture.clone(),
        volume_capabilities: vec![s.capability()],
        secrets: s.secrets("ValidateVolumeCapabilities"),
        ..ValidateVolumeCapabilitiesRequest::default()
    };
    let first = s.ask(req.clone()).await;
    check!(expect(&first, Code::Ok, "ValidateVolumeCapabilities of the suite's volume"));
    let again = s.ask(req).await;
    check!(expect(&again, Code::Ok, "ValidateVolumeCapabilities again"));
    let confirmed = |r: &Result<csikit::v1::ValidateVolumeCapabilitiesResponse, tonic::Status>| {
        r.as_ref().ok().map(|r| r.confirmed.is_some())
    };
    ensure!(
        confirmed(&first) == confirmed(&again),
        "ValidateVolumeCapabilities confirmed the capability once and not the second time"
    );
    Outcome::Passed
}

async fn capacity_accounting(s: &mut Suite) -> Outcome {
    let ask = GetCapacityRequest {
        volume_capabilities: vec![s.capability()],
        ..GetCapacityRequest::default()
    };
    let before = match s.ask(ask.clone()).await {
        Ok(r) => r.available_capacity,
        Err(e) => return Outcome::Failed(format!("GetCapacity: {}", show_status(&e))),
    };
    let v = match s.fresh_volume("capacity-accounting", 4 * MIB).await {
        Ok(v) => v,
        Err(why) => return Outcome::Failed(why),
    };
    let during = s.ask(ask.clone()).await.map(|r| r.available_capacity);
    let _ = s.delete(&v.volume_id).await;
    let after = s.ask(ask).await.map(|r| r.available_capacity);
    let (Ok(during), Ok(after)) = (during, after) else {
        return Outcome::Failed("GetCapacity failed during the case".into());
    };
    ensure!(
        during <= before,
        "available_capacity grew from {before} to {during} while a volume was created"
    );
    ensure!(
        after == before,
        "available_capacity is {after} after the volume was deleted, {before} before"
    );
    Outcome::Passed
}

async fn get_volume(s: &mut Suite) -> Outcome {
    let v = match s.fresh_volume("get", 0).await {
        Ok(v) => v,
        Err(why) => return Outcome::Failed(why),
    };
    let r = s.ask(ControllerGetVolumeRequest { volume_id: v.volume_id.clone() }).await;
    let _ = s.delete(&v.volume_id).await;
    check!(expect(&r, Code::Ok, "ControllerGetVolume of a volume it made"));
    let got = r.ok().and_then(|r| r.volume).map(|v| v.volume_id).unwrap_or_default();
    ensure!(got == v.volume_id, "ControllerGetVolume of {} answered volume '{got}'", v.volume_id);
    Outcome::Passed
}

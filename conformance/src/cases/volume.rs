//! Controller service cases on volumes: create and delete, capacity, ALREADY_EXISTS, concurrent
//! creates, GetCapacity, ControllerGetVolume and ControllerExpandVolume.

use std::collections::BTreeSet;

use csikit::v1::controller_service_capability::rpc::Type as Ctl;
use csikit::v1::{
    CapacityRange, ControllerExpandVolumeRequest, ControllerGetVolumeRequest, GetCapacityRequest,
};
use tonic::Code;

use crate::case::{Case, Need, body};
use crate::report::Outcome;
use crate::sentence::Sentence;
use crate::suite::{MIB, Suite, UNKNOWN_VOLUME, check, ensure, expect, show, show_status};

const CREATE: Need = Need::Ctl(Ctl::CreateDeleteVolume);

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
        name: "volume: CreateVolume honours capacity_range",
        needs: &[CREATE],
        sentence: Sentence::must("CapacityRange", "Volume MUST be at least this big."),
        body: body!(capacity_range),
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
    Case {
        name: "expand: ControllerExpandVolume grows the volume",
        needs: &[CREATE, Need::Ctl(Ctl::ExpandVolume)],
        sentence: Sentence::must("CapacityRange", "Volume MUST be at least this big."),
        body: body!(expand),
    },
    Case {
        name: "expand: ControllerExpandVolume to less than the volume holds does not shrink it",
        needs: &[CREATE, Need::Ctl(Ctl::ExpandVolume)],
        sentence: Sentence::should(
            "ControllerExpandVolume",
            "If a volume corresponding to the specified volume ID is already larger than or equal to the target capacity of the expansion request, the plugin SHOULD reply 0 OK.",
        ),
        body: body!(no_shrink),
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

async fn capacity_range(s: &mut Suite) -> Outcome {
    let v = match s.fresh_volume("capacity", 3 * MIB).await {
        Ok(v) => v,
        Err(why) => return Outcome::Failed(format!("with required_bytes 3 MiB: {why}")),
    };
    let _ = s.delete(&v.volume_id).await;
    ensure!(
        v.capacity_bytes == 0 || v.capacity_bytes >= 3 * MIB,
        "required_bytes 3 MiB gave a volume of {} bytes",
        v.capacity_bytes
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
    let (mut a, mut b) = (s.ctl_client(), s.ctl_client());
    let (x, y) = tokio::join!(
        s.call(a.create_volume(s.req(r.clone()))),
        s.call(b.create_volume(s.req(r.clone())))
    );
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

async fn capacity_accounting(s: &mut Suite) -> Outcome {
    let mut c = s.ctl_client();
    let ask = GetCapacityRequest {
        volume_capabilities: vec![s.capability()],
        ..GetCapacityRequest::default()
    };
    let before = match s.call(c.get_capacity(s.req(ask.clone()))).await {
        Ok(r) => r.available_capacity,
        Err(e) => return Outcome::Failed(format!("GetCapacity: {}", show_status(&e))),
    };
    let v = match s.fresh_volume("capacity-accounting", 4 * MIB).await {
        Ok(v) => v,
        Err(why) => return Outcome::Failed(why),
    };
    let during = s.call(c.get_capacity(s.req(ask.clone()))).await.map(|r| r.available_capacity);
    let _ = s.delete(&v.volume_id).await;
    let after = s.call(c.get_capacity(s.req(ask))).await.map(|r| r.available_capacity);
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
    let mut c = s.ctl_client();
    let r = s
        .call(c.controller_get_volume(
            s.req(ControllerGetVolumeRequest { volume_id: v.volume_id.clone() }),
        ))
        .await;
    let _ = s.delete(&v.volume_id).await;
    check!(expect(&r, Code::Ok, "ControllerGetVolume of a volume it made"));
    let got = r.ok().and_then(|r| r.volume).map(|v| v.volume_id).unwrap_or_default();
    ensure!(got == v.volume_id, "ControllerGetVolume of {} answered volume '{got}'", v.volume_id);
    Outcome::Passed
}

async fn expand(s: &mut Suite) -> Outcome {
    let fixture = s.fixture.clone();
    let mut c = s.ctl_client();
    let secrets = s.secrets("ControllerExpandVolume");
    let grow = |id: &str| ControllerExpandVolumeRequest {
        volume_id: id.into(),
        capacity_range: Some(CapacityRange { required_bytes: 64 * MIB, limit_bytes: 0 }),
        secrets: secrets.clone(),
        volume_capability: Some(s.capability()),
    };
    let r = s.call(c.controller_expand_volume(s.req(grow(&fixture)))).await;
    ensure!(
        r.as_ref().is_ok_and(|r| r.capacity_bytes == 0 || r.capacity_bytes >= 64 * MIB),
        "ControllerExpandVolume to 64 MiB: {}",
        r.as_ref().map_or_else(show_status, |r| format!("{} bytes", r.capacity_bytes))
    );
    Outcome::Passed
}

async fn no_shrink(s: &mut Suite) -> Outcome {
    let v = match s.fresh_volume("no-shrink", 8 * MIB).await {
        Ok(v) => v,
        Err(why) => return Outcome::Failed(why),
    };
    let held = v.capacity_bytes.max(8 * MIB);
    let mut c = s.ctl_client();
    let req = ControllerExpandVolumeRequest {
        volume_id: v.volume_id.clone(),
        capacity_range: Some(CapacityRange { required_bytes: MIB, limit_bytes: 0 }),
        secrets: s.secrets("ControllerExpandVolume"),
        volume_capability: Some(s.capability()),
    };
    let r = s.call(c.controller_expand_volume(s.req(req))).await;
    let _ = s.delete(&v.volume_id).await;
    check!(expect(&r, Code::Ok, "ControllerExpandVolume to 1 MiB of a volume of 8 MiB or more"));
    let after = r.map(|r| r.capacity_bytes).unwrap_or_default();
    ensure!(
        after == 0 || after >= held,
        "ControllerExpandVolume to 1 MiB shrank the volume from {held} to {after} bytes"
    );
    Outcome::Passed
}

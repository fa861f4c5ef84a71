//! Expansion cases: ControllerExpandVolume past the volume's size (by a number of bytes that is
//! not round), not shrinking it; ONLINE expansion of a volume in use; NodeExpandVolume of a
//! volume in use. The answered sizes are held to the ranges asked for by [`crate::answers`].

use csikit::v1::controller_service_capability::rpc::Type as Ctl;
use csikit::v1::node_service_capability::rpc::Type as Nd;
use csikit::v1::{
    CapacityRange, ControllerExpandVolumeRequest, ControllerExpandVolumeResponse,
    NodeExpandVolumeRequest,
};
use tonic::{Code, Status};

use crate::case::{Case, Need, body};
use crate::report::Outcome;
use crate::sentence::Sentence;
use crate::suite::{MIB, Suite, check, ensure, expect, show_status};
use crate::workload::{InUse, Paths, bring_down, bring_up};

const CREATE: Need = Need::Ctl(Ctl::CreateDeleteVolume);
const EXPAND: Need = Need::Ctl(Ctl::ExpandVolume);

pub(crate) const CASES: &[Case] = &[
    Case {
        name: "expand: ControllerExpandVolume grows the volume past its size",
        needs: &[CREATE, EXPAND],
        sentence: Sentence::must(
            "CapacityRange.required_bytes",
            "Volume MUST be at least this big.",
        ),
        body: body!(grows),
    },
    Case {
        name: "expand: ControllerExpandVolume twice to one size (idempotent)",
        needs: &[CREATE, EXPAND],
        sentence: Sentence::must("ControllerExpandVolume", "This operation MUST be idempotent."),
        body: body!(twice),
    },
    Case {
        name: "expand: ControllerExpandVolume to less than the volume holds does not shrink it",
        needs: &[CREATE, EXPAND],
        sentence: Sentence::should(
            "ControllerExpandVolume",
            "If a volume corresponding to the specified volume ID is already larger than or equal to the target capacity of the expansion request, the plugin SHOULD reply 0 OK.",
        ),
        body: body!(no_shrink),
    },
    Case {
        name: "expand: ONLINE expansion of a volume in use on the node (controller, then node when required)",
        needs: &[CREATE, EXPAND, Need::Online, Need::Node],
        sentence: Sentence::must(
            "PluginCapability.VolumeExpansion.Type.ONLINE",
            "When a plugin supports ONLINE volume expansion and also has the EXPAND_VOLUME controller capability then the plugin MUST support expansion of volumes currently published and available on a node.",
        ),
        body: body!(online),
    },
    Case {
        name: "expand: NodeExpandVolume of a volume in use on the node, twice (idempotent)",
        needs: &[CREATE, Need::Nd(Nd::ExpandVolume)],
        sentence: Sentence::must("NodeExpandVolume", "This operation MUST be idempotent."),
        body: body!(node),
    },
];

/// The size to grow a volume of `held` bytes to: past it by a number of bytes that is not round.
pub(crate) fn past(held: i64) -> i64 {
    held.max(8 * MIB) + 16 * MIB + 4097
}

pub(crate) async fn controller_expand(
    s: &mut Suite,
    volume: &str,
    to: i64,
) -> Result<ControllerExpandVolumeResponse, Status> {
    let req = ControllerExpandVolumeRequest {
        volume_id: volume.into(),
        capacity_range: Some(CapacityRange { required_bytes: to, limit_bytes: 0 }),
        secrets: s.secrets("ControllerExpandVolume"),
        volume_capability: Some(s.capability()),
    };
    s.ask(req).await
}

pub(crate) async fn node_expand(s: &mut Suite, used: &InUse, to: i64) -> Result<i64, Status> {
    let req = NodeExpandVolumeRequest {
        volume_id: used.volume.clone(),
        volume_path: used.target.display().to_string(),
        capacity_range: Some(CapacityRange { required_bytes: to, limit_bytes: 0 }),
        staging_target_path: used.staging.clone(),
        volume_capability: Some(used.capability.clone()),
        secrets: s.secrets("NodeExpandVolume"),
    };
    s.ask(req).await.map(|r| r.capacity_bytes)
}

async fn grows(s: &mut Suite) -> Outcome {
    let v = match s.fresh_volume("expand", 8 * MIB).await {
        Ok(v) => v,
        Err(why) => return Outcome::Failed(why),
    };
    let to = past(v.capacity_bytes);
    let r = controller_expand(s, &v.volume_id, to).await;
    let _ = s.delete(&v.volume_id).await;
    let r = match r {
        Ok(r) => r,
        Err(e) => {
            return Outcome::Failed(format!(
                "ControllerExpandVolume to {to} bytes: {}",
                show_status(&e)
            ));
        }
    };
    ensure!(
        r.capacity_bytes >= to,
        "ControllerExpandVolume of a volume of {} bytes to {to} bytes answered capacity_bytes {}",
        v.capacity_bytes,
        r.capacity_bytes
    );
    Outcome::Passed
}

async fn twice(s: &mut Suite) -> Outcome {
    let v = match s.fresh_volume("expand-twice", 8 * MIB).await {
        Ok(v) => v,
        Err(why) => return Outcome::Failed(why),
    };
    let to = past(v.capacity_bytes);
    let mut outcome = Outcome::Passed;
    for what in ["ControllerExpandVolume", "ControllerExpandVolume again"] {
        let r = controller_expand(s, &v.volume_id, to).await;
        if let Outcome::Failed(why) = expect(&r, Code::Ok, &format!("{what} to {to} bytes")) {
            outcome = Outcome::Failed(why);
            break;
        }
    }
    let _ = s.delete(&v.volume_id).await;
    outcome
}

async fn no_shrink(s: &mut Suite) -> Outcome {
    let v = match s.fresh_volume("no-shrink", 8 * MIB).await {
        Ok(v) => v,
        Err(why) => return Outcome::Failed(why),
    };
    let held = v.capacity_bytes.max(8 * MIB);
    let r = controller_expand(s, &v.volume_id, MIB).await;
    let _ = s.delete(&v.volume_id).await;
    check!(expect(&r, Code::Ok, "ControllerExpandVolume to 1 MiB of a volume of 8 MiB or more"));
    let after = r.map(|r| r.capacity_bytes).unwrap_or_default();
    ensure!(
        after == 0 || after >= held,
        "ControllerExpandVolume to 1 MiB shrank the volume from {held} to {after} bytes"
    );
    Outcome::Passed
}

async fn online(s: &mut Suite) -> Outcome {
    let v = match s.fresh_volume("expand-online", 8 * MIB).await {
        Ok(v) => v,
        Err(why) => return Outcome::Failed(why),
    };
    let cap = s.capability();
    let used = match bring_up(s, &v.volume_id, cap, false, Paths::default()).await {
        Ok(u) => u,
        Err(why) => return Outcome::Failed(why),
    };
    let to = past(v.capacity_bytes);
    let r = controller_expand(s, &v.volume_id, to).await;
    let outcome = match &r {
        Err(e) => Outcome::Failed(format!(
            "ControllerExpandVolume of a volume in use to {to} bytes: {}",
            show_status(e)
        )),
        Ok(r) if r.node_expansion_required && s.plugin.node_has(Nd::ExpandVolume) => {
            let n = node_expand(s, &used, to).await;
            expect(&n, Code::Ok, "NodeExpandVolume after ControllerExpandVolume asked for it")
        }
        Ok(_) => Outcome::Passed,
    };
    let down = bring_down(s, &used).await;
    let _ = s.delete(&v.volume_id).await;
    match down {
        Err(why) if outcome == Outcome::Passed => Outcome::Failed(why),
        _ => outcome,
    }
}

/// The volume grown by the controller first when it can (before it is in use, as an OFFLINE
/// plugin needs), then on the node where it is published.
async fn node(s: &mut Suite) -> Outcome {
    let v = match s.fresh_volume("expand-node", 8 * MIB).await {
        Ok(v) => v,
        Err(why) => return Outcome::Failed(why),
    };
    let to = past(v.capacity_bytes);
    if s.plugin.has(Ctl::ExpandVolume)
        && let Err(e) = controller_expand(s, &v.volume_id, to).await
    {
        let _ = s.delete(&v.volume_id).await;
        return Outcome::Failed(format!(
            "ControllerExpandVolume to {to} bytes: {}",
            show_status(&e)
        ));
    }
    let cap = s.capability();
    let used = match bring_up(s, &v.volume_id, cap, false, Paths::default()).await {
        Ok(u) => u,
        Err(why) => return Outcome::Failed(why),
    };
    let mut outcome = Outcome::Passed;
    for what in ["NodeExpandVolume", "NodeExpandVolume again"] {
        let n = node_expand(s, &used, to).await;
        outcome = expect(&n, Code::Ok, &format!("{what} to {to} bytes of a volume in use"));
        if outcome != Outcome::Passed {
            break;
        }
    }
    let down = bring_down(s, &used).await;
    let _ = s.delete(&v.volume_id).await;
    match down {
        Err(why) if outcome == Outcome::Passed => Outcome::Failed(why),
        _ => outcome,
    }
}

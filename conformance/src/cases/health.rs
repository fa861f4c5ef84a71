//! Health cases (CSI v1.13.0, alpha): what the external health monitor and the kubelet call
//! (KEP-1432). ControllerGetVolumeHealth of a volume the suite made; NodeGetVolumeHealth of a
//! volume the suite put in use on the node, with its publish and staging paths, as the kubelet
//! asks; ControllerListVolumeHealth paged one entry at a time to its end, as the monitor pages;
//! NodeGetStorageHealth. Each call sends the suite's secrets where the request has a `secrets`
//! field. What the answers must be (the volume asked for, no condition twice, `max_entries`,
//! REQUIRED fields, no secret) is [`crate::answers`]' and the facts' checks, which every call
//! gets; a case here fails on its own for what it saw directly.
//!
//! A plugin on CSI v1.12 advertises none of the health capabilities, so each case is skipped
//! with the capability it lacks. Whether a capability obliges its RPC is the generated
//! obligation cases' ([`super::facts`]); LIST_VOLUME_HEALTH implying GET_VOLUME_HEALTH is
//! [`super::capabilities`]'.

use std::collections::BTreeSet;

use csikit::v1::controller_service_capability::rpc::Type as Ctl;
use csikit::v1::node_service_capability::rpc::Type as Nd;
use csikit::v1::{
    ControllerGetVolumeHealthRequest, ControllerListVolumeHealthRequest,
    NodeGetStorageHealthRequest, NodeGetVolumeHealthRequest, VolumeHealth,
};

use crate::answers::rule;
use crate::case::{Case, Need, body};
use crate::report::Outcome;
use crate::sentence::Sentence;
use crate::suite::{Suite, ensure, show_status};
use crate::workload::{Paths, bring_down, bring_up};

const CREATE: Need = Need::Ctl(Ctl::CreateDeleteVolume);

/// Pages the listing case follows before it calls the listing endless.
const MAX_PAGES: usize = 10_000;

pub(crate) const CASES: &[Case] = &[
    Case {
        name: "health: ControllerGetVolumeHealth answers the health of the volume asked for",
        needs: &[CREATE, Need::Ctl(Ctl::GetVolumeHealth)],
        sentence: rule::HEALTH_VOLUME_ID,
        body: body!(controller_get),
    },
    Case {
        name: "health: NodeGetVolumeHealth answers for a volume in use on the node, asked with its paths as the kubelet asks",
        needs: &[CREATE, Need::Node, Need::Nd(Nd::GetVolumeHealth)],
        sentence: rule::HEALTH_VOLUME_ID,
        body: body!(node_get),
    },
    Case {
        name: "health: ControllerListVolumeHealth pages with max_entries and tokens, and the paging ends",
        needs: &[Need::Ctl(Ctl::ListVolumeHealth)],
        sentence: Sentence::must(
            "ControllerListVolumeHealthRequest.max_entries",
            "If specified (non-zero value), the Plugin MUST NOT return more entries than this number in the response. If the actual number of entries is more than this number, the Plugin MUST set `next_token` in the response which can be used to get the next page of entries in the subsequent `ControllerListVolumeHealth` call.",
        ),
        body: body!(list_pages),
    },
    Case {
        name: "health: NodeGetStorageHealth answers each backend condition once",
        needs: &[Need::Node, Need::Nd(Nd::GetStorageHealth)],
        sentence: rule::STORAGE_ENTRY_ONCE,
        body: body!(storage),
    },
];

/// What the case saw directly of a volume's health answered for `asked`: there is one, for
/// that volume. (A missing `volume_health` is what kubernetes/kubernetes#141724 read as healthy.)
fn answered_for(rpc: &str, asked: &str, health: Option<&VolumeHealth>) -> Outcome {
    let Some(h) = health else {
        return Outcome::Failed(format!(
            "{rpc} of volume {asked} answered no volume_health (REQUIRED; a CO may read its absence as healthy)"
        ));
    };
    ensure!(
        h.volume_id == asked,
        "{rpc} of volume {asked} answered the health of volume '{}'",
        h.volume_id
    );
    Outcome::Passed
}

async fn controller_get(s: &mut Suite) -> Outcome {
    let v = match s.fresh_volume("health", 0).await {
        Ok(v) => v.volume_id,
        Err(why) => return Outcome::Failed(why),
    };
    let secrets = s.secrets("ControllerGetVolumeHealth");
    let r = s.ask(ControllerGetVolumeHealthRequest { volume_id: v.clone(), secrets }).await;
    let _ = s.delete(&v).await;
    match r {
        Ok(a) => answered_for("ControllerGetVolumeHealth", &v, a.volume_health.as_ref()),
        Err(e) => Outcome::Failed(format!("ControllerGetVolumeHealth: {}", show_status(&e))),
    }
}

async fn node_get(s: &mut Suite) -> Outcome {
    let v = match s.fresh_volume("health-node", 0).await {
        Ok(v) => v.volume_id,
        Err(why) => return Outcome::Failed(why),
    };
    let cap = s.capability();
    let used = match bring_up(s, &v, cap, false, Paths::default()).await {
        Ok(u) => u,
        Err(why) => {
            let _ = s.delete(&v).await;
            return Outcome::Failed(why);
        }
    };
    let r = s
        .ask(NodeGetVolumeHealthRequest {
            volume_id: v.clone(),
            volume_publish_path: used.target.display().to_string(),
            staging_target_path: used.staging.clone(),
        })
        .await;
    let down = bring_down(s, &used).await;
    let _ = s.delete(&v).await;
    let outcome = match r {
        Ok(a) => answered_for("NodeGetVolumeHealth", &v, a.volume_health.as_ref()),
        Err(e) => Outcome::Failed(format!("NodeGetVolumeHealth: {}", show_status(&e))),
    };
    match (outcome, down) {
        (Outcome::Passed, Err(why)) => Outcome::Failed(why),
        (outcome, _) => outcome,
    }
}

/// Pages the listing one entry at a time (with two volumes of its own in it, when it can make
/// them, so a plugin whose volumes come with a condition has something to page): every page
/// within `max_entries`, every token new, and an end. The suite cannot make a plugin report an
/// adverse condition, so an empty listing without a token passes.
async fn list_pages(s: &mut Suite) -> Outcome {
    let mut made = Vec::new();
    if s.plugin.has(Ctl::CreateDeleteVolume) {
        for _ in 0..2 {
            match s.fresh_volume("health-list", 0).await {
                Ok(v) => made.push(v.volume_id),
                Err(why) => return Outcome::Failed(why),
            }
        }
    }
    let outcome = page_to_the_end(s).await;
    for v in made {
        let _ = s.delete(&v).await;
    }
    outcome
}

async fn page_to_the_end(s: &mut Suite) -> Outcome {
    let mut token = String::new();
    let mut tokens = BTreeSet::new();
    for page in 0..MAX_PAGES {
        let request = ControllerListVolumeHealthRequest {
            max_entries: 1,
            starting_token: token.clone(),
            secrets: s.secrets("ControllerListVolumeHealth"),
        };
        let r = match s.ask(request).await {
            Ok(r) => r,
            Err(e) => {
                return Outcome::Failed(format!(
                    "ControllerListVolumeHealth page {page}: {}",
                    show_status(&e)
                ));
            }
        };
        ensure!(
            r.entries.len() <= 1,
            "ControllerListVolumeHealth gave {} entries for max_entries 1",
            r.entries.len()
        );
        if r.next_token.is_empty() {
            return Outcome::Passed;
        }
        ensure!(
            tokens.insert(r.next_token.clone()),
            "ControllerListVolumeHealth page {page} gave next_token '{}' again: the paging never ends",
            r.next_token
        );
        token = r.next_token;
    }
    Outcome::Failed(format!(
        "ControllerListVolumeHealth gave {MAX_PAGES} pages: the paging never ends"
    ))
}

async fn storage(s: &mut Suite) -> Outcome {
    let secrets = s.secrets("NodeGetStorageHealth");
    match s.ask(NodeGetStorageHealthRequest { secrets }).await {
        Ok(_) => Outcome::Passed,
        Err(e) => Outcome::Failed(format!("NodeGetStorageHealth: {}", show_status(&e))),
    }
}

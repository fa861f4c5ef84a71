//! Controller service cases on publication: ControllerPublishVolume and its undoing, for one
//! node and (with `node_id` unset) for every node; while a volume is published, the listings
//! name the node ([`crate::answers`] holds them to it).

use csikit::v1::controller_service_capability::rpc::Type as Ctl;
use csikit::v1::{
    ControllerGetVolumeRequest, ControllerPublishVolumeRequest, ControllerUnpublishVolumeRequest,
};
use tonic::Code;

use crate::case::{Case, Need, body};
use crate::report::Outcome;
use crate::sentence::Sentence;
use crate::suite::{Suite, check, ensure, expect, show, show_status};

const PUBLISH: Need = Need::Ctl(Ctl::PublishUnpublishVolume);

pub(crate) const CASES: &[Case] = &[
    Case {
        name: "publish: ControllerPublishVolume twice, unpublish twice",
        needs: &[Need::Ctl(Ctl::CreateDeleteVolume), PUBLISH],
        sentence: Sentence::must(
            "ControllerPublishVolume",
            "If the volume corresponding to the `volume_id` has already been published at the node corresponding to the `node_id`, and is compatible with the specified `volume_capability` and `readonly` flag, the Plugin MUST reply `0 OK`.",
        ),
        body: body!(publish_twice),
    },
    Case {
        name: "publish: ControllerUnpublishVolume without node_id unpublishes from every node",
        needs: &[Need::Ctl(Ctl::CreateDeleteVolume), PUBLISH],
        sentence: Sentence::must(
            "ControllerUnpublishVolumeRequest.node_id",
            "If the value is unset, the SP MUST unpublish the volume from all nodes it is published to.",
        ),
        body: body!(unpublish_all),
    },
];

/// The nodes the plugin lists the volume as published on, if it says (LIST_VOLUMES_PUBLISHED_NODES
/// with GET_VOLUME or LIST_VOLUMES); the answers are checked on the way.
async fn published_nodes(s: &mut Suite, volume: &str) -> Result<Option<Vec<String>>, String> {
    if !s.plugin.has(Ctl::ListVolumesPublishedNodes) {
        return Ok(None);
    }
    if s.plugin.has(Ctl::GetVolume) {
        let r = s
            .ask(ControllerGetVolumeRequest { volume_id: volume.into() })
            .await
            .map_err(|e| format!("ControllerGetVolume: {}", show_status(&e)))?;
        return Ok(Some(r.status.map(|st| st.published_node_ids).unwrap_or_default()));
    }
    if s.plugin.has(Ctl::ListVolumes) {
        let mut token = String::new();
        for _ in 0..10_000 {
            let r = s
                .ask(csikit::v1::ListVolumesRequest { max_entries: 0, starting_token: token })
                .await
                .map_err(|e| format!("ListVolumes: {}", show_status(&e)))?;
            for e in r.entries {
                if e.volume.as_ref().is_some_and(|v| v.volume_id == volume) {
                    return Ok(Some(e.status.map(|st| st.published_node_ids).unwrap_or_default()));
                }
            }
            if r.next_token.is_empty() {
                return Ok(Some(Vec::new()));
            }
            token = r.next_token;
        }
    }
    Ok(None)
}

/// Published to the node, then unpublished with `node_id` unset: OK, and where the plugin lists
/// publications, the node is no longer listed (else, with PUBLISH_READONLY, a publication with
/// the other `readonly` flag is no longer incompatible).
async fn unpublish_all(s: &mut Suite) -> Outcome {
    let v = match s.fresh_volume("unpublish-all", 0).await {
        Ok(v) => v.volume_id,
        Err(why) => return Outcome::Failed(why),
    };
    let node = s.node_id.clone();
    let req = publish_request(s, &v);
    let first = s.ask(req.clone()).await;
    check!(expect(&first, Code::Ok, "ControllerPublishVolume"));
    s.published.push((v.clone(), node.clone()));
    // While published, the listings name the node (held by the answers' rules).
    if let Err(why) = published_nodes(s, &v).await {
        return Outcome::Failed(why);
    }
    let un = ControllerUnpublishVolumeRequest {
        volume_id: v.clone(),
        node_id: String::new(),
        secrets: s.secrets("ControllerUnpublishVolume"),
    };
    let r = s.ask(un).await;
    check!(expect(&r, Code::Ok, "ControllerUnpublishVolume with node_id unset"));
    s.published.retain(|(x, _)| *x != v);
    let outcome = match published_nodes(s, &v).await {
        Err(why) => Outcome::Failed(why),
        Ok(Some(nodes)) if nodes.contains(&node) => Outcome::Failed(format!(
            "after ControllerUnpublishVolume with node_id unset, the volume is still listed as published on {node}"
        )),
        Ok(Some(_)) => Outcome::Passed,
        Ok(None) if s.plugin.has(Ctl::PublishReadonly) => {
            let ro = ControllerPublishVolumeRequest { readonly: true, ..req };
            let again = s.ask(ro).await;
            if again.is_ok() {
                s.published.push((v.clone(), node.clone()));
            }
            expect(
                &again,
                Code::Ok,
                "ControllerPublishVolume read-only after the unpublish from every node (still published read-write?)",
            )
        }
        Ok(None) => Outcome::Passed,
    };
    if s.published.iter().any(|(x, _)| *x == v)
        && let Err(why) = s.unpublish_for_node(&v).await
    {
        return Outcome::Failed(why);
    }
    let _ = s.delete(&v).await;
    outcome
}

fn publish_request(s: &mut Suite, volume: &str) -> ControllerPublishVolumeRequest {
    ControllerPublishVolumeRequest {
        volume_id: volume.into(),
        node_id: s.node_id.clone(),
        volume_capability: Some(s.capability()),
        secrets: s.secrets("ControllerPublishVolume"),
        ..ControllerPublishVolumeRequest::default()
    }
}

async fn publish_twice(s: &mut Suite) -> Outcome {
    let fixture = s.fixture.clone();
    let req = publish_request(s, &fixture);
    let first = s.ask(req.clone()).await;
    check!(expect(&first, Code::Ok, "ControllerPublishVolume"));
    s.published.push((fixture.clone(), s.node_id.clone()));
    // While published, the listings name the node (held by the answers' rules).
    if let Err(why) = published_nodes(s, &fixture).await {
        return Outcome::Failed(why);
    }
    let again = s.ask(req).await;
    ensure!(
        again.as_ref().ok().map(|r| &r.publish_context)
            == first.as_ref().ok().map(|r| &r.publish_context),
        "ControllerPublishVolume again: expected the same answer, got {}",
        show(&again)
    );
    let un = ControllerUnpublishVolumeRequest {
        volume_id: fixture.clone(),
        node_id: s.node_id.clone(),
        secrets: s.secrets("ControllerUnpublishVolume"),
    };
    for what in ["ControllerUnpublishVolume", "ControllerUnpublishVolume again"] {
        let r = s.ask(un.clone()).await;
        check!(expect(&r, Code::Ok, what));
    }
    s.published.retain(|(v, _)| *v != fixture);
    Outcome::Passed
}

//! Node service cases: stage, publish (the target path made by the plugin), unpublish, unstage,
//! each twice (the error-table rows for unknown volumes are in `errors`).

use csikit::v1::controller_service_capability::rpc::Type as Ctl;
use csikit::v1::node_service_capability::rpc::Type as Nd;
use csikit::v1::{
    NodeGetVolumeStatsRequest, NodePublishVolumeRequest, NodeStageVolumeRequest,
    NodeUnpublishVolumeRequest, NodeUnstageVolumeRequest,
};
use tonic::Code;

use crate::case::{Case, Need, body};
use crate::report::Outcome;
use crate::sentence::Sentence;
use crate::suite::{Suite, check, ensure, expect};

pub(crate) const CASES: &[Case] = &[Case {
    name: "node: stage, publish (target_path created), unpublish (removed), unstage, each twice",
    needs: &[Need::Ctl(Ctl::CreateDeleteVolume), Need::Node],
    sentence: Sentence::must(
        "NodePublishVolume",
        "If the volume corresponding to the `volume_id` has already been published at the specified `target_path`, and is compatible with the specified `volume_capability` and `readonly` flag, the Plugin MUST reply `0 OK`.",
    ),
    body: body!(lifecycle),
}];

async fn lifecycle(s: &mut Suite) -> Outcome {
    let fixture = s.fixture.clone();
    let mut n = s.node_client();
    let (staging, target) = match (s.staging_for_publish(), s.target_path()) {
        (Ok(st), Ok(t)) => (st, t),
        (Err(why), _) | (_, Err(why)) => return Outcome::Failed(why),
    };
    let publish_context = match s.publish_for_node(&fixture, s.capability()).await {
        Ok(c) => c,
        Err(why) => return Outcome::Failed(why),
    };
    let stage = !staging.is_empty();
    if stage {
        let req = NodeStageVolumeRequest {
            volume_id: fixture.clone(),
            staging_target_path: staging.clone(),
            volume_capability: Some(s.capability()),
            publish_context: publish_context.clone(),
            secrets: s.secrets("NodeStageVolume"),
            ..NodeStageVolumeRequest::default()
        };
        for what in ["NodeStageVolume", "NodeStageVolume again"] {
            let r = s.call(n.node_stage_volume(s.req(req.clone()))).await;
            check!(expect(&r, Code::Ok, what));
        }
        s.staged.push((fixture.clone(), staging.clone().into()));
    }
    let req = NodePublishVolumeRequest {
        volume_id: fixture.clone(),
        staging_target_path: staging.clone(),
        target_path: target.display().to_string(),
        volume_capability: Some(s.capability()),
        publish_context,
        secrets: s.secrets("NodePublishVolume"),
        ..NodePublishVolumeRequest::default()
    };
    for what in ["NodePublishVolume", "NodePublishVolume again"] {
        let r = s.call(n.node_publish_volume(s.req(req.clone()))).await;
        check!(expect(&r, Code::Ok, what));
    }
    s.node_published.push((fixture.clone(), target.clone()));
    ensure!(
        target.exists(),
        "target_path {} does not exist after NodePublishVolume (\"Creation of target_path is the responsibility of the SP.\")",
        target.display()
    );
    if s.node_has(Nd::GetVolumeStats) {
        let r = s
            .call(n.node_get_volume_stats(s.req(NodeGetVolumeStatsRequest {
                volume_id: fixture.clone(),
                volume_path: target.display().to_string(),
                ..NodeGetVolumeStatsRequest::default()
            })))
            .await;
        check!(expect(&r, Code::Ok, "NodeGetVolumeStats of the published path"));
    }
    let un = NodeUnpublishVolumeRequest {
        volume_id: fixture.clone(),
        target_path: target.display().to_string(),
    };
    for what in ["NodeUnpublishVolume", "NodeUnpublishVolume again"] {
        let r = s.call(n.node_unpublish_volume(s.req(un.clone()))).await;
        check!(expect(&r, Code::Ok, what));
    }
    s.node_published.retain(|(_, p)| *p != target);
    ensure!(
        !target.exists(),
        "target_path {} is still there after NodeUnpublishVolume",
        target.display()
    );
    if stage {
        let un = NodeUnstageVolumeRequest {
            volume_id: fixture.clone(),
            staging_target_path: staging.clone(),
        };
        for what in ["NodeUnstageVolume", "NodeUnstageVolume again"] {
            let r = s.call(n.node_unstage_volume(s.req(un.clone()))).await;
            check!(expect(&r, Code::Ok, what));
        }
        s.staged.retain(|(_, p)| p.as_os_str() != staging.as_str());
    }
    if let Err(why) = s.unpublish_for_node(&fixture).await {
        return Outcome::Failed(why);
    }
    Outcome::Passed
}

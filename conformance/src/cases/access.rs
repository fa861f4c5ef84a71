//! Node service cases on access modes: a second NodePublishVolume at another target path, for a
//! plugin that supports SINGLE_NODE_MULTI_WRITER (the spec's second table): refused for
//! SINGLE_NODE_SINGLE_WRITER, accepted for SINGLE_NODE_MULTI_WRITER.

use csikit::v1::controller_service_capability::rpc::Type as Ctl;
use csikit::v1::node_service_capability::rpc::Type as Nd;
use csikit::v1::volume_capability::access_mode::Mode;
use csikit::v1::{NodePublishVolumeRequest, VolumeCapability};
use tonic::Code;

use crate::case::{Case, Need, body};
use crate::report::Outcome;
use crate::sentence::Sentence;
use crate::suite::{Suite, check, expect, show_status};
use crate::workload::stage;

const NEEDS: &[Need] = &[
    Need::Ctl(Ctl::CreateDeleteVolume),
    Need::Node,
    Need::Ctl(Ctl::SingleNodeMultiWriter),
    Need::Nd(Nd::SingleNodeMultiWriter),
];

pub(crate) const CASES: &[Case] = &[
    Case {
        name: "access: a second publish of a SINGLE_NODE_SINGLE_WRITER volume at another target is FAILED_PRECONDITION",
        needs: NEEDS,
        sentence: Sentence::should(
            "NodePublishVolume",
            "If the Plugin supports the `SINGLE_NODE_MULTI_WRITER` capability, use the following table instead for what the Plugin SHOULD return when receiving a second `NodePublishVolume` on the same volume on the same node: / (the table's row SINGLE_NODE_SINGLE_WRITER, column T1!=T2, P1=P2: FAILED_PRECONDITION)",
        ),
        body: body!(single_writer),
    },
    Case {
        name: "access: a SINGLE_NODE_MULTI_WRITER volume publishes at a second target",
        needs: NEEDS,
        sentence: Sentence::should(
            "NodePublishVolume",
            "If the Plugin supports the `SINGLE_NODE_MULTI_WRITER` capability, use the following table instead for what the Plugin SHOULD return when receiving a second `NodePublishVolume` on the same volume on the same node: / (the table's row SINGLE_NODE_MULTI_WRITER, column T1!=T2, P1=P2: OK)",
        ),
        body: body!(multi_writer),
    },
];

async fn single_writer(s: &mut Suite) -> Outcome {
    second_publish(s, Mode::SingleNodeSingleWriter, Code::FailedPrecondition).await
}

async fn multi_writer(s: &mut Suite) -> Outcome {
    second_publish(s, Mode::SingleNodeMultiWriter, Code::Ok).await
}

/// A volume in `mode`, published (controller, staged, node) at one target, then at a second:
/// the second must answer `second`. Everything is undone by the run's clean-up.
async fn second_publish(s: &mut Suite, mode: Mode, second: Code) -> Outcome {
    let cap = s.capability_with(mode);
    let name = s.name("access");
    let mut r = s.create_request(&name, 0);
    r.volume_capabilities = vec![cap.clone()];
    let volume = match s.create(r).await {
        Ok(v) => v.volume_id,
        Err(e) => return Outcome::Failed(format!("CreateVolume in {mode:?}: {}", show_status(&e))),
    };
    let publish_context = match s.publish_for_node(&volume, cap.clone()).await {
        Ok(c) => c,
        Err(why) => return Outcome::Failed(why),
    };
    let staging = match s.staging_for_publish() {
        Ok(p) => p,
        Err(why) => return Outcome::Failed(why),
    };
    if !staging.is_empty() {
        let r = stage(s, &volume, &staging, cap.clone(), &publish_context).await;
        check!(expect(&r, Code::Ok, "NodeStageVolume"));
    }
    for (i, want) in [(1, Code::Ok), (2, second)] {
        let target = match s.target_path() {
            Ok(t) => t,
            Err(why) => return Outcome::Failed(why),
        };
        let req = publish(s, &volume, &staging, &target, cap.clone(), &publish_context);
        let r = s.ask(req).await;
        if r.is_ok() {
            s.node_published.push((volume.clone(), target));
        }
        check!(expect(&r, want, &format!("NodePublishVolume {i} in {mode:?}")));
    }
    Outcome::Passed
}

fn publish(
    s: &mut Suite,
    volume: &str,
    staging: &str,
    target: &std::path::Path,
    cap: VolumeCapability,
    publish_context: &std::collections::HashMap<String, String>,
) -> NodePublishVolumeRequest {
    NodePublishVolumeRequest {
        volume_id: volume.into(),
        staging_target_path: staging.into(),
        target_path: target.display().to_string(),
        volume_capability: Some(cap),
        publish_context: publish_context.clone(),
        secrets: s.secrets("NodePublishVolume"),
        ..NodePublishVolumeRequest::default()
    }
}

//! Controller service cases on publication: ControllerPublishVolume and its undoing.

use csikit::v1::controller_service_capability::rpc::Type as Ctl;
use csikit::v1::{ControllerPublishVolumeRequest, ControllerUnpublishVolumeRequest};
use tonic::Code;

use crate::case::{Case, Need, body};
use crate::report::Outcome;
use crate::sentence::Sentence;
use crate::suite::{Suite, check, ensure, expect, show};

const PUBLISH: Need = Need::Ctl(Ctl::PublishUnpublishVolume);

pub(crate) const CASES: &[Case] = &[Case {
    name: "publish: ControllerPublishVolume twice, unpublish twice",
    needs: &[Need::Ctl(Ctl::CreateDeleteVolume), PUBLISH],
    sentence: Sentence::must(
        "ControllerPublishVolume",
        "If the volume corresponding to the `volume_id` has already been published at the node corresponding to the `node_id`, and is compatible with the specified `volume_capability` and `readonly` flag, the Plugin MUST reply `0 OK`.",
    ),
    body: body!(publish_twice),
}];

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
    let mut c = s.ctl_client();
    let req = publish_request(s, &fixture);
    let first = s.call(c.controller_publish_volume(s.req(req.clone()))).await;
    check!(expect(&first, Code::Ok, "ControllerPublishVolume"));
    s.published.push((fixture.clone(), s.node_id.clone()));
    let again = s.call(c.controller_publish_volume(s.req(req))).await;
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
        let r = s.call(c.controller_unpublish_volume(s.req(un.clone()))).await;
        check!(expect(&r, Code::Ok, what));
    }
    s.published.retain(|(v, _)| *v != fixture);
    Outcome::Passed
}

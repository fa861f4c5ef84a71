//! The capability implications the Model holds, against a plugin that breaks one: a Controller
//! that serves ControllerListVolumeHealth alone advertises LIST_VOLUME_HEALTH (derived from the
//! RPC) without GET_VOLUME_HEALTH, which the proto's comment obliges, and the generated case for
//! that implication fails; the one for LIST_VOLUMES_PUBLISHED_NODES, which it does not
//! advertise, is skipped naming it.

use csikit::v1::{ControllerListVolumeHealthRequest, ControllerListVolumeHealthResponse};
use csikit_conformance::{Config, Outcome};
use tonic::{Request, Response, Status};

/// Lists no adverse volume, and serves nothing else.
struct ListOnly;

#[csikit::csi_service]
impl csikit::v1::server::Controller for ListOnly {
    async fn controller_list_volume_health(
        &self,
        _: Request<ControllerListVolumeHealthRequest>,
    ) -> Result<Response<ControllerListVolumeHealthResponse>, Status> {
        Ok(Response::new(ControllerListVolumeHealthResponse::default()))
    }
}

#[tokio::test]
async fn list_volume_health_without_get_volume_health_fails_its_implication() {
    let routes = csikit::server::Builder::new("implication.csikit.dev", "0.1.0")
        .controller(ListOnly)
        .build()
        .await
        .expect("builds (the broken implication is a start-up warning)")
        .into_routes();
    let config = Config { filter: Some("capabilities: ".into()), ..Config::default() };
    let report = csikit_conformance::run_in_process(routes, &config).await.expect("runs");
    let outcome = |name: &str| {
        report
            .results
            .iter()
            .find(|r| r.name == name)
            .map(|r| r.outcome.clone())
            .unwrap_or_else(|| panic!("no case '{name}': {:#?}", report.results))
    };
    match outcome("capabilities: LIST_VOLUME_HEALTH comes with GET_VOLUME_HEALTH") {
        Outcome::Failed(why) => assert!(why.contains("without GET_VOLUME_HEALTH"), "{why}"),
        other => panic!("expected a failure, got {other:?}"),
    }
    assert_eq!(
        outcome("capabilities: LIST_VOLUMES_PUBLISHED_NODES comes with PUBLISH_UNPUBLISH_VOLUME"),
        Outcome::Skipped("no LIST_VOLUMES_PUBLISHED_NODES".into())
    );
}

//! The server skeleton: UNIMPLEMENTED defaults, the layers (validation, serialisation, response
//! validation, secret scrubbing), derived Identity and capabilities, the start-up check, and
//! serving on a unix socket (stale socket, drain on shutdown). Calls go through real tonic
//! clients over a unix socket where the transport matters, and straight into the adapters
//! where only the layers do.
#![allow(clippy::unwrap_used, reason = "a test: a panic is the failure report")]

mod fill;
use csikit::registry as support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use csikit::server::{Endpoint, Layers, Pipeline, ServeError};
use csikit::v1::controller_server::Controller as _;
use csikit::v1::server::{Builder, Controller, ControllerService, Node};
use csikit::v1::*;
use prost::Message as _;
use tonic::{Code, Request, Response, Status};

const SECRET: &str = "hunter2-very-secret";

#[derive(Default)]
struct Driver;

#[csikit::csi_service]
impl Controller for Driver {
    async fn create_volume(
        &self,
        request: Request<CreateVolumeRequest>,
    ) -> Result<Response<CreateVolumeResponse>, Status> {
        let r = request.into_inner();
        if let Some(ms) = r.parameters.get("sleep-ms") {
            tokio::time::sleep(Duration::from_millis(ms.parse().unwrap_or(0))).await;
        }
        if r.parameters.contains_key("leak") {
            let values: Vec<&String> = r.secrets.values().collect();
            return Err(Status::permission_denied(format!("credentials {values:?} rejected")));
        }
        let volume_id = if r.parameters.contains_key("bad-response") {
            String::new()
        } else {
            format!("id-{}", r.name)
        };
        Ok(Response::new(CreateVolumeResponse {
            volume: Some(Volume { volume_id, capacity_bytes: 1, ..Default::default() }),
        }))
    }

    async fn delete_volume(
        &self,
        _request: Request<DeleteVolumeRequest>,
    ) -> Result<Response<DeleteVolumeResponse>, Status> {
        Ok(Response::new(DeleteVolumeResponse {}))
    }

    // The spec obliges every Controller plugin to implement it.
    async fn validate_volume_capabilities(
        &self,
        _request: Request<ValidateVolumeCapabilitiesRequest>,
    ) -> Result<Response<ValidateVolumeCapabilitiesResponse>, Status> {
        Ok(Response::new(ValidateVolumeCapabilitiesResponse::default()))
    }
}

/// Implements only half of STAGE_UNSTAGE_VOLUME.
struct HalfNode;

#[csikit::csi_service]
impl Node for HalfNode {
    async fn node_stage_volume(
        &self,
        _request: Request<NodeStageVolumeRequest>,
    ) -> Result<Response<NodeStageVolumeResponse>, Status> {
        Ok(Response::new(NodeStageVolumeResponse {}))
    }

    async fn node_get_info(
        &self,
        _request: Request<NodeGetInfoRequest>,
    ) -> Result<Response<NodeGetInfoResponse>, Status> {
        Ok(Response::new(NodeGetInfoResponse { node_id: "n1".into(), ..Default::default() }))
    }
}

/// Advertises LIST_VOLUMES without implementing ListVolumes, and not CREATE_DELETE_VOLUME
/// although it implements both RPCs.
struct Liar;

#[csikit::csi_service]
impl Controller for Liar {
    async fn create_volume(
        &self,
        _request: Request<CreateVolumeRequest>,
    ) -> Result<Response<CreateVolumeResponse>, Status> {
        Err(Status::internal("unused"))
    }

    async fn delete_volume(
        &self,
        _request: Request<DeleteVolumeRequest>,
    ) -> Result<Response<DeleteVolumeResponse>, Status> {
        Err(Status::internal("unused"))
    }

    async fn controller_get_capabilities(
        &self,
        _request: Request<ControllerGetCapabilitiesRequest>,
    ) -> Result<Response<ControllerGetCapabilitiesResponse>, Status> {
        use controller_service_capability::{Rpc, Type, rpc};
        let cap = ControllerServiceCapability {
            r#type: Some(Type::Rpc(Rpc { r#type: rpc::Type::ListVolumes as i32 })),
        };
        Ok(Response::new(ControllerGetCapabilitiesResponse { capabilities: vec![cap] }))
    }
}

fn adapter(layers: Layers) -> ControllerService<Driver> {
    ControllerService::new(Arc::new(Driver), Arc::new(Pipeline::new(layers)), Arc::default())
}

fn create(name: &str, params: &[(&str, &str)]) -> Request<CreateVolumeRequest> {
    Request::new(CreateVolumeRequest {
        name: name.into(),
        parameters: params.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
        secrets: [("password".to_owned(), SECRET.to_owned())].into(),
        volume_capabilities: vec![mount_rw()],
        ..Default::default()
    })
}

fn mount_rw() -> VolumeCapability {
    VolumeCapability {
        access_type: Some(volume_capability::AccessType::Mount(
            volume_capability::MountVolume::default(),
        )),
        access_mode: Some(volume_capability::AccessMode {
            mode: volume_capability::access_mode::Mode::SingleNodeWriter as i32,
        }),
    }
}

#[test]
fn csi_service_lists_the_defined_methods() {
    assert_eq!(
        Driver.implemented(),
        ["create_volume", "delete_volume", "validate_volume_capabilities"]
    );
    let a = adapter(Layers::default());
    assert!(a.implements("create_volume") && !a.implements("list_volumes"));
}

#[tokio::test]
async fn rpcs_left_out_answer_unimplemented() {
    let a = adapter(Layers::default());
    let err = a
        .controller_publish_volume(Request::new(ControllerPublishVolumeRequest::default()))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented, "{err:?}");
    assert!(err.message().contains("ControllerPublishVolume"), "{}", err.message());
}

#[tokio::test]
async fn invalid_requests_never_reach_the_driver() {
    let a = adapter(Layers::default());
    let err = a.create_volume(create("", &[("leak", "")])).await.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
    assert!(err.message().contains("name"), "{}", err.message());
    // With the layers off, the same request reaches the driver (which answers from "leak").
    let err = adapter(Layers::NONE).create_volume(create("", &[("leak", "")])).await.unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied, "{err:?}");
}

#[tokio::test]
async fn overlapping_calls_on_one_volume_are_aborted() {
    let a = adapter(Layers::default());
    let slow = {
        let a = a.clone();
        tokio::spawn(async move { a.create_volume(create("pv-1", &[("sleep-ms", "300")])).await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    let err = a.create_volume(create("pv-1", &[])).await.unwrap_err();
    assert_eq!(err.code(), Code::Aborted, "{err:?}");
    assert!(err.message().contains("pv-1"), "{}", err.message());
    // Another name is not held up.
    assert!(a.create_volume(create("pv-2", &[])).await.is_ok());
    assert!(slow.await.unwrap().is_ok());
    // Released when done.
    assert!(a.create_volume(create("pv-1", &[])).await.is_ok());
    // Released when the caller goes away mid-call, too.
    let cancelled = tokio::time::timeout(
        Duration::from_millis(30),
        a.create_volume(create("pv-3", &[("sleep-ms", "5000")])),
    )
    .await;
    assert!(cancelled.is_err(), "timed out");
    assert!(a.create_volume(create("pv-3", &[])).await.is_ok());
    // With serialisation off, overlap is the driver's business.
    let a = adapter(Layers { serialize: false, ..Layers::default() });
    let slow = {
        let a = a.clone();
        tokio::spawn(async move { a.create_volume(create("pv-1", &[("sleep-ms", "200")])).await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(a.create_volume(create("pv-1", &[])).await.is_ok());
    assert!(slow.await.unwrap().is_ok());
}

#[tokio::test]
async fn serialisation_spans_services() {
    // DeleteVolume (controller) and NodeStageVolume (node) on one volume id share the pipeline.
    struct SlowNode;
    #[csikit::csi_service]
    impl Node for SlowNode {
        async fn node_stage_volume(
            &self,
            _request: Request<NodeStageVolumeRequest>,
        ) -> Result<Response<NodeStageVolumeResponse>, Status> {
            tokio::time::sleep(Duration::from_millis(300)).await;
            Ok(Response::new(NodeStageVolumeResponse {}))
        }
    }
    let pipeline = Arc::new(Pipeline::new(Layers::default()));
    let controller =
        ControllerService::new(Arc::new(Driver), Arc::clone(&pipeline), Arc::default());
    let node = csikit::v1::server::NodeService::new(Arc::new(SlowNode), pipeline, Arc::default());
    let stage = NodeStageVolumeRequest {
        volume_id: "vol-9".into(),
        staging_target_path: "/stage".into(),
        volume_capability: Some(mount_rw()),
        ..Default::default()
    };
    let slow = tokio::spawn(async move {
        csikit::v1::node_server::Node::node_stage_volume(&node, Request::new(stage)).await
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let err = controller
        .delete_volume(Request::new(DeleteVolumeRequest {
            volume_id: "vol-9".into(),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::Aborted, "{err:?}");
    assert!(slow.await.unwrap().is_ok());
}

#[tokio::test]
async fn secret_values_are_scrubbed_from_error_messages() {
    let a = adapter(Layers::default());
    let err = a.create_volume(create("pv-1", &[("leak", "")])).await.unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied);
    assert!(!err.message().contains(SECRET), "{}", err.message());
    assert!(err.message().contains(csikit::redact::REDACTED), "{}", err.message());
    // Scrubbing is not a switchable layer: with every layer off it still happens.
    let raw =
        adapter(Layers::NONE).create_volume(create("pv-1", &[("leak", "")])).await.unwrap_err();
    assert!(
        !raw.message().contains(SECRET) && raw.message().contains(csikit::redact::REDACTED),
        "{}",
        raw.message()
    );
}

#[tokio::test]
async fn invalid_responses_are_caught_when_asked() {
    let on = adapter(Layers { validate_responses: true, ..Layers::default() });
    let err = on.create_volume(create("pv-1", &[("bad-response", "")])).await.unwrap_err();
    assert_eq!(err.code(), Code::Internal, "{err:?}");
    assert!(err.message().contains("volume.volume_id"), "{}", err.message());
    let off = adapter(Layers { validate_responses: false, ..Layers::default() });
    assert!(off.create_volume(create("pv-1", &[("bad-response", "")])).await.is_ok());
}

struct AlphaUser;

#[csikit::csi_service]
impl Controller for AlphaUser {
    async fn controller_get_volume(
        &self,
        request: Request<ControllerGetVolumeRequest>,
    ) -> Result<Response<ControllerGetVolumeResponse>, Status> {
        let volume = Volume { volume_id: request.into_inner().volume_id, ..Default::default() };
        Ok(Response::new(ControllerGetVolumeResponse {
            volume: Some(volume),
            status: Some(controller_get_volume_response::VolumeStatus::default()),
        }))
    }
}

#[csikit::csi_service]
impl Node for AlphaUser {
    async fn node_expand_volume(
        &self,
        _request: Request<NodeExpandVolumeRequest>,
    ) -> Result<Response<NodeExpandVolumeResponse>, Status> {
        Ok(Response::new(NodeExpandVolumeResponse { capacity_bytes: 1 }))
    }
}

#[tokio::test]
async fn alpha_refuse_turns_away_alpha_rpcs_and_fields() {
    use csikit::alpha::AlphaPolicy;
    // The facts say which elements are alpha in v1.12.0; the test relies on two of them.
    let facts = &csikit::v1::facts::FACTS;
    assert!(
        facts.method_by_path("/csi.v1.Controller/ControllerGetVolume").is_some_and(|m| m.alpha)
    );
    assert!(
        facts
            .message("csi.v1.NodeExpandVolumeRequest")
            .and_then(|m| m.field("secrets"))
            .is_some_and(|f| f.alpha)
    );

    for (policy, refused) in [(AlphaPolicy::Refuse, true), (AlphaPolicy::Allow, false)] {
        let pipeline = Arc::new(Pipeline::new(Layers { alpha: policy, ..Layers::default() }));
        let controller =
            ControllerService::new(Arc::new(AlphaUser), Arc::clone(&pipeline), Arc::default());
        let node =
            csikit::v1::server::NodeService::new(Arc::new(AlphaUser), pipeline, Arc::default());
        let got = controller
            .controller_get_volume(Request::new(ControllerGetVolumeRequest {
                volume_id: "v".into(),
            }))
            .await;
        match got {
            Err(e) if refused => assert_eq!(e.code(), Code::Unimplemented, "{e:?}"),
            other => assert!(other.is_ok(), "{policy:?}: {other:?}"),
        }
        let expand = NodeExpandVolumeRequest {
            volume_id: "v".into(),
            volume_path: "/p".into(),
            secrets: [("k".to_owned(), "s3cr3t".to_owned())].into(),
            ..Default::default()
        };
        let got =
            csikit::v1::node_server::Node::node_expand_volume(&node, Request::new(expand)).await;
        match got {
            Err(e) if refused => {
                assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
                assert!(e.message().contains("secrets"), "{}", e.message());
            }
            other => assert!(other.is_ok(), "{policy:?}: {other:?}"),
        }
    }
}

/// Every secret value of every secret-holding message is reported, nested ones included:
/// removing the reported values from the encoded message leaves no secret behind.
#[test]
fn secret_values_cover_every_secret() {
    let is_secret = |message: &str, field: &str| {
        support::packages()
            .iter()
            .filter_map(|(facts, _)| facts.message(message))
            .any(|m| m.field(field).is_some_and(|f| f.secret))
    };
    for (facts, pool) in support::packages() {
        for &name in support::SECRET_HOLDERS.iter().filter(|n| facts.message(n).is_some()) {
            let desc = pool.get_message_by_name(name).expect("in the pool");
            let mut bytes = fill::filled(&desc, &is_secret, 0).encode_to_vec();
            let found = support::secret_values_of(name, &bytes).expect("known").expect("decodes");
            assert!(!found.is_empty(), "{name}: no secret values found");
            for value in &found {
                assert!(
                    value.contains(fill::SECRET_MARK),
                    "{name}: {value:?} is not a secret value"
                );
                bytes = replace(&bytes, value.as_bytes());
            }
            let mark = fill::SECRET_MARK.as_bytes();
            assert!(
                !bytes.windows(mark.len()).any(|w| w == mark),
                "{name}: a secret value was not reported"
            );
        }
    }
}

fn replace(haystack: &[u8], needle: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(haystack.len());
    let mut i = 0;
    while i < haystack.len() {
        if haystack[i..].starts_with(needle) {
            i += needle.len();
        } else {
            out.push(haystack[i]);
            i += 1;
        }
    }
    out
}

// ---- over a unix socket ----

fn socket_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("csikit-server-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

async fn channel(path: &Path) -> tonic::transport::Channel {
    for _ in 0..250 {
        if tokio::net::UnixStream::connect(&path).await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    csikit::channel::connect_unix(&path).await.expect("connects")
}

#[tokio::test]
async fn derived_identity_and_capabilities_over_a_socket() {
    let dir = socket_dir("derived");
    let sock = dir.join("csi.sock");
    let server = Builder::new("test.csikit.dev", "1.2.3")
        .controller(Driver)
        .node(HalfNode)
        .controller_capability(controller_service_capability::rpc::Type::CloneVolume)
        .build()
        .await
        .expect("builds");
    assert!(
        server.problems().iter().any(|p| p.contains("node_stage_volume")
            && p.contains("node_unstage_volume")
            && p.contains("STAGE_UNSTAGE_VOLUME")),
        "{:?}",
        server.problems()
    );
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let endpoint = Endpoint::Unix(sock.clone());
    let serving =
        tokio::spawn(async move { server.serve(&endpoint, async { drop(stopped.await) }).await });
    let ch = channel(&sock).await;

    let mut identity = identity_client::IdentityClient::new(ch.clone());
    let info = identity.get_plugin_info(GetPluginInfoRequest {}).await.expect("info").into_inner();
    assert_eq!((info.name.as_str(), info.vendor_version.as_str()), ("test.csikit.dev", "1.2.3"));
    let probe = identity.probe(ProbeRequest {}).await.expect("probe").into_inner();
    assert_eq!(probe.ready, Some(true));
    let caps = identity
        .get_plugin_capabilities(GetPluginCapabilitiesRequest {})
        .await
        .expect("caps")
        .into_inner();
    let services: Vec<i32> = caps
        .capabilities
        .iter()
        .filter_map(|c| match &c.r#type {
            Some(plugin_capability::Type::Service(s)) => Some(s.r#type),
            _ => None,
        })
        .collect();
    assert_eq!(services, [plugin_capability::service::Type::ControllerService as i32]);

    let mut controller = controller_client::ControllerClient::new(ch.clone());
    let caps = controller
        .controller_get_capabilities(ControllerGetCapabilitiesRequest {})
        .await
        .expect("caps")
        .into_inner();
    let mut types: Vec<i32> = caps
        .capabilities
        .iter()
        .filter_map(|c| {
            c.r#type.as_ref().map(|controller_service_capability::Type::Rpc(r)| r.r#type)
        })
        .collect();
    types.sort_unstable();
    use controller_service_capability::rpc::Type as C;
    assert_eq!(types, [C::CreateDeleteVolume as i32, C::CloneVolume as i32]);
    let err = controller.list_volumes(ListVolumesRequest::default()).await.unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented);
    let err = controller.create_volume(CreateVolumeRequest::default()).await.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);

    let mut node = node_client::NodeClient::new(ch.clone());
    let caps =
        node.node_get_capabilities(NodeGetCapabilitiesRequest {}).await.expect("caps").into_inner();
    assert!(
        caps.capabilities.is_empty(),
        "half of STAGE_UNSTAGE_VOLUME is not advertised: {caps:?}"
    );

    // A service nobody registered.
    let mut group = group_controller_client::GroupControllerClient::new(ch);
    let err = group
        .group_controller_get_capabilities(GroupControllerGetCapabilitiesRequest {})
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented);

    stop.send(()).expect("server running");
    serving.await.expect("joins").expect("serves and stops cleanly");
    assert!(!sock.exists(), "the socket is removed on shutdown");
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn advertised_capabilities_are_checked_at_start_up() {
    let server = Builder::new("test.csikit.dev", "1")
        .controller(Liar)
        .build()
        .await
        .expect("not strict: builds");
    let problems = server.problems().join("\n");
    assert!(problems.contains("advertises LIST_VOLUMES"), "{problems}");
    assert!(
        problems.contains("implements CREATE_DELETE_VOLUME but does not advertise it"),
        "{problems}"
    );
    let err = Builder::new("test.csikit.dev", "1")
        .controller(Liar)
        .strict(true)
        .build()
        .await
        .unwrap_err();
    // The two disagreements, and ValidateVolumeCapabilities, which Liar leaves out although the
    // spec obliges every Controller plugin to implement it.
    assert!(matches!(err, ServeError::Capabilities(ref p) if p.len() == 3), "{err}");
    assert!(
        err.to_string()
            .contains("ValidateVolumeCapabilities: the spec obliges a Controller plugin"),
        "{err}"
    );
    // An honest driver passes.
    let server = Builder::new("test.csikit.dev", "1")
        .controller(Driver)
        .strict(true)
        .build()
        .await
        .expect("consistent");
    assert!(server.problems().is_empty(), "{:?}", server.problems());
}

#[tokio::test]
async fn obliged_rpcs_left_unimplemented_are_reported() {
    // HalfNode leaves out NodePublishVolume and NodeUnpublishVolume (always obliged for a Node
    // plugin) and, with
    // PUBLISH_UNPUBLISH_VOLUME declared for the controller, nothing else: NodeGetInfo is written.
    let server = Builder::new("test.csikit.dev", "1")
        .controller(Driver)
        .node(HalfNode)
        .build()
        .await
        .expect("not strict: builds");
    let problems = server.problems().join("\n");
    assert!(
        problems.contains("NodeUnpublishVolume: the spec obliges a Node plugin to implement it"),
        "{problems}"
    );
    // NodePublishVolume's section says nothing; its service's line obliges it.
    assert!(
        problems.contains("NodePublishVolume: the spec obliges a Node plugin to implement it"),
        "{problems}"
    );
    assert!(!problems.contains("ValidateVolumeCapabilities"), "Driver implements it: {problems}");
    // A capability declared without the RPCs it obliges: GET_CAPACITY without GetCapacity.
    let err = Builder::new("test.csikit.dev", "1")
        .controller(Driver)
        .controller_capability(controller_service_capability::rpc::Type::GetCapacity)
        .strict(true)
        .build()
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("GetCapacity: the spec obliges a Controller plugin with GET_CAPACITY"),
        "{err}"
    );
    // Without a Node service, no Node obligation applies.
    Builder::new("test.csikit.dev", "1").controller(Driver).strict(true).build().await.expect("ok");
}

/// Implements the two controller health RPCs, so the skeleton derives both capabilities.
struct Healthy;

#[csikit::csi_service]
impl Controller for Healthy {
    async fn validate_volume_capabilities(
        &self,
        _request: Request<ValidateVolumeCapabilitiesRequest>,
    ) -> Result<Response<ValidateVolumeCapabilitiesResponse>, Status> {
        Ok(Response::new(ValidateVolumeCapabilitiesResponse::default()))
    }

    async fn controller_list_volume_health(
        &self,
        _request: Request<ControllerListVolumeHealthRequest>,
    ) -> Result<Response<ControllerListVolumeHealthResponse>, Status> {
        Ok(Response::new(ControllerListVolumeHealthResponse::default()))
    }

    async fn controller_get_volume_health(
        &self,
        _request: Request<ControllerGetVolumeHealthRequest>,
    ) -> Result<Response<ControllerGetVolumeHealthResponse>, Status> {
        Ok(Response::new(ControllerGetVolumeHealthResponse::default()))
    }
}

/// Answers ControllerGetCapabilities itself with LIST_VOLUME_HEALTH alone: its own word is what
/// the report reads, not the derivation.
struct OwnHealthAnswer;

#[csikit::csi_service]
impl Controller for OwnHealthAnswer {
    async fn validate_volume_capabilities(
        &self,
        _request: Request<ValidateVolumeCapabilitiesRequest>,
    ) -> Result<Response<ValidateVolumeCapabilitiesResponse>, Status> {
        Ok(Response::new(ValidateVolumeCapabilitiesResponse::default()))
    }

    async fn controller_list_volume_health(
        &self,
        _request: Request<ControllerListVolumeHealthRequest>,
    ) -> Result<Response<ControllerListVolumeHealthResponse>, Status> {
        Ok(Response::new(ControllerListVolumeHealthResponse::default()))
    }

    async fn controller_get_capabilities(
        &self,
        _request: Request<ControllerGetCapabilitiesRequest>,
    ) -> Result<Response<ControllerGetCapabilitiesResponse>, Status> {
        let rpc = |t: controller_service_capability::rpc::Type| ControllerServiceCapability {
            r#type: Some(controller_service_capability::Type::Rpc(
                controller_service_capability::Rpc { r#type: t as i32 },
            )),
        };
        Ok(Response::new(ControllerGetCapabilitiesResponse {
            capabilities: vec![rpc(controller_service_capability::rpc::Type::ListVolumeHealth)],
        }))
    }
}

#[tokio::test]
async fn capability_implications_and_health_obligations_are_reported() {
    use controller_service_capability::rpc::Type as C;
    // LIST_VOLUMES_PUBLISHED_NODES without PUBLISH_UNPUBLISH_VOLUME: the proto's comment on
    // the capability, from the generated table (not a list in the runtime).
    let server = Builder::new("test.csikit.dev", "1")
        .controller(Driver)
        .controller_capability(C::ListVolumesPublishedNodes)
        .build()
        .await
        .expect("not strict: builds");
    let problems = server.problems().join("\n");
    assert!(
        problems.contains(
            "Controller advertises LIST_VOLUMES_PUBLISHED_NODES but not PUBLISH_UNPUBLISH_VOLUME: \
             the spec says a plugin with LIST_VOLUMES_PUBLISHED_NODES MUST also support \
             PUBLISH_UNPUBLISH_VOLUME (the proto's comment)"
        ),
        "{problems}"
    );

    // LIST_VOLUME_HEALTH declared with neither health RPC: the implication and the obligation
    // the capability's comment states ("Indicates the SP supports the ControllerListVolumeHealth
    // RPC"); strict makes both fatal.
    let err = Builder::new("test.csikit.dev", "1")
        .controller(Driver)
        .controller_capability(C::ListVolumeHealth)
        .strict(true)
        .build()
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, ServeError::Capabilities(ref p) if p.len() == 2),
        "the obligation and the implication: {text}"
    );
    assert!(
        text.contains(
            "ControllerListVolumeHealth: the spec obliges a Controller plugin with \
             LIST_VOLUME_HEALTH to implement it (the proto's comment), and it answers \
             UNIMPLEMENTED"
        ),
        "{text}"
    );
    assert!(
        text.contains("Controller advertises LIST_VOLUME_HEALTH but not GET_VOLUME_HEALTH"),
        "{text}"
    );

    // A driver's own capabilities answer is what a CO sees, so it is what is checked.
    let server = Builder::new("test.csikit.dev", "1")
        .controller(OwnHealthAnswer)
        .build()
        .await
        .expect("not strict: builds");
    let problems = server.problems().join("\n");
    assert!(
        problems.contains("Controller advertises LIST_VOLUME_HEALTH but not GET_VOLUME_HEALTH"),
        "{problems}"
    );

    // Both health RPCs written: both capabilities derived, nothing to report.
    let server = Builder::new("test.csikit.dev", "1")
        .controller(Healthy)
        .strict(true)
        .build()
        .await
        .expect("consistent");
    assert!(server.problems().is_empty(), "{:?}", server.problems());
}

#[tokio::test]
async fn stale_sockets_are_replaced_and_live_ones_kept() {
    let dir = socket_dir("stale");
    let sock = dir.join("csi.sock");
    let endpoint = Endpoint::Unix(sock.clone());

    // A live listener: refused, and left alone.
    let live = std::os::unix::net::UnixListener::bind(&sock).expect("binds");
    let built = Builder::new("test.csikit.dev", "1").build().await.expect("builds");
    let err = built.serve(&endpoint, async {}).await.unwrap_err();
    assert!(matches!(err, ServeError::InUse(_)), "{err}");
    assert!(sock.exists());
    drop(live);

    // The same file, its listener gone: stale, removed, served on, removed at the end.
    assert!(sock.exists(), "a dropped listener leaves its file behind");
    let built = Builder::new("test.csikit.dev", "1").build().await.expect("builds");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let ep = endpoint.clone();
    let serving =
        tokio::spawn(async move { built.serve(&ep, async { drop(stopped.await) }).await });
    let mut identity = identity_client::IdentityClient::new(channel(&sock).await);
    assert!(identity.probe(ProbeRequest {}).await.is_ok());
    stop.send(()).expect("running");
    serving.await.expect("joins").expect("serves");
    assert!(!sock.exists());

    // Not a socket: refused and untouched.
    std::fs::write(&sock, b"keep me").expect("writes");
    let built = Builder::new("test.csikit.dev", "1").build().await.expect("builds");
    let err = built.serve(&endpoint, async {}).await.unwrap_err();
    assert!(matches!(err, ServeError::NotASocket(_)), "{err}");
    assert_eq!(std::fs::read(&sock).expect("still there"), b"keep me");
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn shutdown_lets_in_flight_calls_finish() {
    let dir = socket_dir("drain");
    let sock = dir.join("csi.sock");
    let built =
        Builder::new("test.csikit.dev", "1").controller(Driver).build().await.expect("builds");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let endpoint = Endpoint::Unix(sock.clone());
    let serving =
        tokio::spawn(async move { built.serve(&endpoint, async { drop(stopped.await) }).await });
    let mut controller = controller_client::ControllerClient::new(channel(&sock).await);
    let call = tokio::spawn(async move {
        controller.create_volume(create("pv-drain", &[("sleep-ms", "400")]).into_inner()).await
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    stop.send(()).expect("running");
    let response =
        call.await.expect("joins").expect("the in-flight call completes after the shutdown signal");
    assert_eq!(response.into_inner().volume.map(|v| v.volume_id).as_deref(), Some("id-pv-drain"));
    serving.await.expect("joins").expect("stops cleanly");
    assert!(!sock.exists());
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn the_drain_has_a_deadline() {
    let dir = socket_dir("deadline");
    let sock = dir.join("csi.sock");
    let built = Builder::new("test.csikit.dev", "1")
        .controller(Driver)
        .drain_timeout(Duration::from_millis(300))
        .build()
        .await
        .expect("builds");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let endpoint = Endpoint::Unix(sock.clone());
    let serving =
        tokio::spawn(async move { built.serve(&endpoint, async { drop(stopped.await) }).await });
    let mut controller = controller_client::ControllerClient::new(channel(&sock).await);
    // A call that would outlive any reasonable drain.
    let _call = tokio::spawn(async move {
        controller.create_volume(create("pv-stuck", &[("sleep-ms", "60000")]).into_inner()).await
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let signalled = std::time::Instant::now();
    stop.send(()).expect("running");
    let served = tokio::time::timeout(Duration::from_secs(10), serving)
        .await
        .expect("stops within the deadline, not after the call");
    served.expect("joins").expect("stops cleanly");
    let waited = signalled.elapsed();
    assert!(waited >= Duration::from_millis(300), "waited the drain timeout first: {waited:?}");
    assert!(!sock.exists());
    let _ = std::fs::remove_dir_all(dir);
}

//! The bindings csikit-build generated from `tests/data/myaddon`, as a user sees them:
//! redaction, validation, the error catalog, facts, and serving through the v1 builder.

use std::collections::HashMap;
use std::sync::Arc;

use csikit::Validate as _;
use csikit_build_myaddon::myaddon::{
    self, Client, FenceVolumeRequest, FenceVolumeResponse, UnfenceVolumeRequest,
};

fn request() -> FenceVolumeRequest {
    FenceVolumeRequest {
        volume_id: "vol-1".to_owned(),
        clients: vec![Client { address: "10.0.0.7".to_owned() }],
        parameters: HashMap::from([("pool".to_owned(), "fast".to_owned())]),
        secrets: HashMap::from([("token".to_owned(), "hunter2-secret".to_owned())]),
        volume_capability: None,
        reason: String::new(),
    }
}

#[test]
fn debug_redacts_the_secret_values_and_shows_the_rest() {
    let text = format!("{:?}", request());
    assert!(!text.contains("hunter2-secret"), "secret value in Debug: {text}");
    assert!(text.contains("token"), "secret keys show: {text}");
    assert!(text.contains("fast") && text.contains("10.0.0.7"), "other fields show: {text}");
    let unfence = UnfenceVolumeRequest {
        volume_id: "vol-1".to_owned(),
        secrets: HashMap::from([("password".to_owned(), "hunter2-secret".to_owned())]),
    };
    assert!(!format!("{unfence:?}").contains("hunter2-secret"));
    assert!(!format!("{unfence:#?}").contains("hunter2-secret"));
}

#[test]
fn validate_reports_each_missing_required_field_with_its_path() {
    assert_eq!(request().validate(), Ok(()));
    let mut r = request();
    r.volume_id.clear();
    r.clients.push(Client::default());
    let violations = r.validate().expect_err("two REQUIRED fields are empty");
    let required: Vec<&str> = violations
        .iter()
        .filter(|v| v.rule == csikit::RuleId::Required)
        .map(|v| v.path.as_str())
        .collect();
    assert_eq!(required, ["volume_id", "clients[1].address"], "{violations:?}");

    let none = FenceVolumeRequest { clients: Vec::new(), ..request() };
    let violations = none.validate().expect_err("REQUIRED repeated field is empty");
    assert!(violations.iter().any(|v| v.path == "clients"), "{violations:?}");
}

#[test]
fn the_error_enum_has_the_table_rows() {
    use myaddon::errors::FenceVolumeError as E;
    let rows: Vec<(&str, &str)> =
        E::ALL.iter().map(|e| (e.info().condition, e.info().code_as_written)).collect();
    // The spec's rows, then csikit's own for the codes they lack (marked as csikit's).
    assert_eq!(
        rows,
        [
            ("Missing required field", "3 INVALID_ARGUMENT"),
            ("Volume does not exist", "5 NOT_FOUND"),
            ("Client already fenced", "6 ALREADY_EXISTS"),
            ("Internal error", "13 INTERNAL"),
            ("Out of capacity", "8 RESOURCE_EXHAUSTED"),
            ("Backend unavailable", "14 UNAVAILABLE"),
            ("Backend timed out", "4 DEADLINE_EXCEEDED"),
            ("Operation pending", "10 ABORTED"),
        ]
    );
    assert_eq!(E::ClientAlreadyFenced.status("x").code(), tonic::Code::AlreadyExists);
    assert_eq!(E::ClientAlreadyFenced.info().origin, csikit::errors::Origin::Rpc);
    assert_eq!(E::InternalError.status("x").code(), tonic::Code::Internal);
    assert_eq!(E::InternalError.info().origin, csikit::errors::Origin::Csikit);
    assert_eq!(
        E::InternalError.to_string(),
        "Internal error (Internal; csikit's row, not the spec's)"
    );
}

#[test]
fn the_server_trait_methods_carry_docs_from_this_spec() {
    // The file the build script wrote, as the crate includes it.
    let file = include_str!(concat!(env!("OUT_DIR"), "/myaddon.rs"));
    let server = &file[file.find("pub mod server {").expect("server module")..];
    let fence = &server[server.find("/// The `FenceVolume` RPC").expect("FenceVolume's docs")..];
    let fence = &fence[..fence.find("fn fence_volume(").expect("the method after its docs")];
    for expected in [
        // The proto comment: this spec's README has no section the Model ties to the RPC.
        "FenceVolume cuts the listed clients off the volume.",
        "No obligation: optional.",
        "REQUIRED: `volume_id`, `clients` (at least one), `clients[i].address`.",
        "`volume_capability` (`csi.v1.VolumeCapability`)",
        "**Serialised per volume** on `volume_id`",
        "a request setting `reason` is refused INVALID_ARGUMENT",
        "**Secrets** (`secrets`)",
        "[`FenceVolumeError`](super::errors::FenceVolumeError)",
        "internal error: [`InternalError`](super::errors::FenceVolumeError::InternalError)",
    ] {
        assert!(fence.contains(expected), "missing {expected:?} in:\n{fence}");
    }
}

#[test]
fn facts_know_the_secret_alpha_and_required_fields() {
    let m = myaddon::facts::FACTS.message("myaddon.FenceVolumeRequest").expect("message facts");
    let field = |n: &str| m.field(n).expect(n);
    assert!(field("secrets").secret && !field("parameters").secret);
    assert!(field("reason").alpha && !field("volume_id").alpha);
    assert_eq!(field("volume_id").presence, csikit::facts::Presence::Required);
    // The CSI type the spec imports is csikit's own, not generated again.
    let capability: Option<csikit::v1::VolumeCapability> = request().volume_capability;
    assert!(capability.is_none());
    assert!(!myaddon::FILE_DESCRIPTOR_SET.is_empty());
}

/// Implements FenceVolume only: UnfenceVolume is left to the default (UNIMPLEMENTED).
struct Driver;

#[csikit::csi_service]
impl myaddon::server::FenceController for Driver {
    async fn fence_volume(
        &self,
        request: tonic::Request<FenceVolumeRequest>,
    ) -> csikit::server::RpcResult<FenceVolumeResponse> {
        if request.get_ref().volume_id == "missing" {
            return Err(
                myaddon::errors::FenceVolumeError::VolumeDoesNotExist.status("no such volume")
            );
        }
        Ok(tonic::Response::new(FenceVolumeResponse {}))
    }
}

async fn serve(
    layers: Option<csikit::server::Layers>,
) -> (tempfile::TempDir, tonic::transport::Channel) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("plugin.sock");
    let mut builder = csikit::server::Builder::new("fence.csikit.dev", "0.1.0").routes_with(
        |routes, pipeline| {
            routes.add_service(
                myaddon::server::FenceControllerService::new(Arc::new(Driver), pipeline)
                    .into_server(),
            )
        },
    );
    if let Some(layers) = layers {
        builder = builder.layers(layers);
    }
    let routes = builder.build().await.expect("builds").into_routes();
    // Bound before serving, so the client's connect cannot race the server.
    let listener = tokio::net::UnixListener::bind(&path).expect("binds");
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_routes(routes)
            .serve_with_incoming(tokio_stream::wrappers::UnixListenerStream::new(listener)),
    );
    let channel = csikit::channel::connect_unix(&path).await.expect("connects");
    (dir, channel)
}

#[tokio::test]
async fn served_by_the_v1_builder_over_a_unix_socket() {
    let (_dir, channel) = serve(None).await;
    let mut client = myaddon::fence_controller_client::FenceControllerClient::new(channel);

    client.fence_volume(request()).await.expect("FenceVolume answers");

    let status = client
        .fence_volume(FenceVolumeRequest { volume_id: "missing".to_owned(), ..request() })
        .await
        .expect_err("the driver's error");
    assert_eq!(status.code(), tonic::Code::NotFound);

    let status = client
        .fence_volume(FenceVolumeRequest { volume_id: String::new(), ..request() })
        .await
        .expect_err("the pipeline validates");
    assert_eq!(status.code(), tonic::Code::InvalidArgument);
    assert!(status.message().contains("volume_id"), "{}", status.message());
    assert!(!status.message().contains("hunter2"), "{}", status.message());

    let status = client
        .unfence_volume(UnfenceVolumeRequest {
            volume_id: "vol-1".to_owned(),
            ..Default::default()
        })
        .await
        .expect_err("not written");
    assert_eq!(status.code(), tonic::Code::Unimplemented);
}

#[tokio::test]
async fn refusing_alpha_turns_away_the_alpha_field() {
    let layers = csikit::server::Layers {
        alpha: csikit::server::AlphaPolicy::Refuse,
        ..csikit::server::Layers::default()
    };
    let (_dir, channel) = serve(Some(layers)).await;
    let mut client = myaddon::fence_controller_client::FenceControllerClient::new(channel);
    client.fence_volume(request()).await.expect("no alpha field set");
    let status = client
        .fence_volume(FenceVolumeRequest { reason: "audit".to_owned(), ..request() })
        .await
        .expect_err("alpha field refused");
    assert_eq!(status.code(), tonic::Code::InvalidArgument);
    assert!(status.message().contains("reason"), "{}", status.message());
}

//! The volume-health RPCs of the generated skeleton against a real client: grpcio stubs compiled
//! by grpcio-tools from the corpus's csi.proto of the release `csikit::v1` is (v1.13.0) call a
//! skeleton serving on a unix socket (`health_grpcio.py` checks the answers). With the alpha
//! policy allowing alpha, an RPC the driver leaves out answers UNIMPLEMENTED and the one it writes
//! answers; with the policy refusing alpha, every one answers the refusal.
#![allow(clippy::unwrap_used, reason = "a test: a panic is the failure report")]

use std::path::{Path, PathBuf};
use std::process::Command;

use csikit::alpha::AlphaPolicy;
use csikit::server::{Endpoint, Layers};
use csikit::v1::server::{Builder, Controller, Node};
use csikit::v1::volume_health::VolumeHealthEntry;
use csikit::v1::*;
use tonic::{Request, Response, Status};

/// A Controller plugin without health RPCs.
struct Plain;

#[csikit::csi_service]
impl Controller for Plain {
    async fn validate_volume_capabilities(
        &self,
        _request: Request<ValidateVolumeCapabilitiesRequest>,
    ) -> Result<Response<ValidateVolumeCapabilitiesResponse>, Status> {
        Ok(Response::new(ValidateVolumeCapabilitiesResponse::default()))
    }
}

/// A Node plugin that answers NodeGetVolumeHealth and not NodeGetStorageHealth.
struct HealthNode;

#[csikit::csi_service]
impl Node for HealthNode {
    async fn node_publish_volume(
        &self,
        _request: Request<NodePublishVolumeRequest>,
    ) -> Result<Response<NodePublishVolumeResponse>, Status> {
        Ok(Response::new(NodePublishVolumeResponse {}))
    }

    async fn node_unpublish_volume(
        &self,
        _request: Request<NodeUnpublishVolumeRequest>,
    ) -> Result<Response<NodeUnpublishVolumeResponse>, Status> {
        Ok(Response::new(NodeUnpublishVolumeResponse {}))
    }

    async fn node_get_info(
        &self,
        _request: Request<NodeGetInfoRequest>,
    ) -> Result<Response<NodeGetInfoResponse>, Status> {
        Ok(Response::new(NodeGetInfoResponse {
            node_id: "n1".into(),
            ..NodeGetInfoResponse::default()
        }))
    }

    async fn node_get_volume_health(
        &self,
        request: Request<NodeGetVolumeHealthRequest>,
    ) -> Result<Response<NodeGetVolumeHealthResponse>, Status> {
        let entry = VolumeHealthEntry {
            status: VolumeHealthErrorType::Degraded as i32,
            reason: "PathDegraded".into(),
            message: "one of two paths is down".into(),
        };
        Ok(Response::new(NodeGetVolumeHealthResponse {
            volume_health: Some(VolumeHealth {
                volume_id: request.into_inner().volume_id,
                health_statuses: vec![entry],
            }),
        }))
    }
}

fn python() -> Command {
    Command::new(std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned()))
}

/// Serves the two services under `alpha` on a socket in `dir` and runs the client in `mode`.
async fn run(dir: &Path, proto: &Path, alpha: AlphaPolicy, mode: &str) -> String {
    let socket = dir.join(format!("{mode}.sock"));
    let server = Builder::new("health.csikit.dev", "1")
        .controller(Plain)
        .node(HealthNode)
        .layers(Layers { alpha, ..Layers::default() })
        .build()
        .await
        .expect("builds");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let endpoint = Endpoint::Unix(socket.clone());
    let serving =
        tokio::spawn(async move { server.serve(&endpoint, async { drop(stopped.await) }).await });
    // grpcio connects when the socket is there and waits for it up to each call's deadline.
    let stubs = dir.join(format!("stubs-{mode}"));
    std::fs::create_dir_all(&stubs).expect("stubs dir");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/health_grpcio.py");
    let mut command = python();
    command.arg(&script).arg(proto).arg(&stubs).arg(&socket).arg(mode);
    let out = tokio::task::spawn_blocking(move || command.output())
        .await
        .expect("joins")
        .expect("run health_grpcio.py");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "health_grpcio.py {mode} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stop.send(()).expect("server running");
    serving.await.expect("joins").expect("serves and stops cleanly");
    stdout
}

#[tokio::test(flavor = "multi_thread")]
async fn health_rpcs_answer_a_grpcio_client_as_the_alpha_policy_says() {
    let Some(corpus) = csikit_spec::corpus_or_skip() else { return };
    let proto: PathBuf = corpus.join("csi-spec").join(csikit::SPEC_RELEASE).join("csi.proto");
    assert!(proto.is_file(), "{} is missing", proto.display());
    let probe = python().args(["-c", "import grpc, grpc_tools.protoc, google.protobuf"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        return csikit_spec::skip_missing(
            "python3 with grpcio, grpcio-tools and protobuf is missing; pip install -r .ci/requirements.txt",
        );
    }
    let dir = tempfile::tempdir().expect("temp dir");

    let allowed = run(dir.path(), &proto, AlphaPolicy::Allow, "allow").await;
    let lines: Vec<&str> = allowed.lines().collect();
    assert_eq!(lines.len(), 4, "{allowed}");
    assert!(lines[0].starts_with("ControllerListVolumeHealth UNIMPLEMENTED"), "{allowed}");
    assert!(lines[1].starts_with("ControllerGetVolumeHealth UNIMPLEMENTED"), "{allowed}");
    assert_eq!(lines[2], "NodeGetVolumeHealth OK", "{allowed}");
    assert!(lines[3].starts_with("NodeGetStorageHealth UNIMPLEMENTED"), "{allowed}");

    let refused = run(dir.path(), &proto, AlphaPolicy::Refuse, "refuse").await;
    for (line, rpc) in refused.lines().zip([
        "/csi.v1.Controller/ControllerListVolumeHealth",
        "/csi.v1.Controller/ControllerGetVolumeHealth",
        "/csi.v1.Node/NodeGetVolumeHealth",
        "/csi.v1.Node/NodeGetStorageHealth",
    ]) {
        assert!(
            line.contains(&format!(
                "UNIMPLEMENTED alpha element '{rpc}' is refused by this plugin"
            )),
            "{refused}"
        );
    }
    assert_eq!(refused.lines().count(), 4, "{refused}");
}

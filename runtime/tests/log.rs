//! The skeleton's log through `server::log::LogLayer`, the non-blocking writer, as a deployed
//! plugin has it: a server over a unix socket, the layer as the process's subscriber at TRACE
//! (requests and responses logged too), a file as the log. Every call gets its line, in its
//! span, with its outcome; no secret value appears anywhere in the file, also when the driver
//! puts one into an error message; and the file is whole once the guard has flushed.
#![allow(clippy::unwrap_used, reason = "a test: a panic is the failure report")]

use std::time::Duration;

use csikit::server::log::LogLayer;
use csikit::v1::server::{Builder, Controller};
use csikit::v1::*;
use tonic::{Code, Request, Response, Status};
use tracing_subscriber::prelude::*;

/// Secret values no other text in the log holds: a long one, and one of three letters (which
/// the scrubbing rule replaces where it stands as a word of its own).
const SECRETS: [(&str, &str); 2] = [("password", "pw-7Qm2-xK9v-hunter2"), ("pin", "zqx")];

/// CreateVolume only: what the builder reports missing (DeleteVolume, ValidateVolumeCapabilities)
/// goes into the log as warnings, which the checks below leave alone.
struct Driver;

#[csikit::csi_service]
impl Controller for Driver {
    async fn create_volume(
        &self,
        request: Request<CreateVolumeRequest>,
    ) -> Result<Response<CreateVolumeResponse>, Status> {
        let r = request.into_inner();
        // Logged by the driver itself, inside the call's span, as drivers do: its name only.
        tracing::info!(name = r.name.as_str(), "creating");
        if r.parameters.contains_key("leak") {
            // A driver's mistake the skeleton must not pass on: the secrets in the message.
            let values: Vec<&String> = r.secrets.values().collect();
            return Err(Status::permission_denied(format!("zqx: credentials {values:?} rejected")));
        }
        Ok(Response::new(CreateVolumeResponse {
            volume: Some(Volume {
                volume_id: format!("id-{}", r.name),
                capacity_bytes: 1,
                ..Default::default()
            }),
        }))
    }
}

fn secrets() -> std::collections::HashMap<String, String> {
    SECRETS.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

fn create(name: &str, leak: bool) -> CreateVolumeRequest {
    CreateVolumeRequest {
        name: name.into(),
        parameters: if leak { [("leak".to_owned(), String::new())].into() } else { [].into() },
        secrets: secrets(),
        volume_capabilities: vec![VolumeCapability {
            access_type: Some(volume_capability::AccessType::Mount(
                volume_capability::MountVolume::default(),
            )),
            access_mode: Some(volume_capability::AccessMode {
                mode: volume_capability::access_mode::Mode::SingleNodeWriter as i32,
            }),
        }],
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_call_is_logged_off_the_call_path_and_no_secret_value_is() {
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("plugin.log");
    let (layer, guard) = LogLayer::new(std::fs::File::create(&log_path).unwrap()).unwrap();
    tracing_subscriber::registry()
        .with(tracing_subscriber::filter::LevelFilter::TRACE)
        .with(layer)
        .init();

    let server = Builder::new("test.csikit.dev", "1").controller(Driver).build().await.unwrap();
    // The routes on a listener bound here, so the client connects without waiting for it.
    let sock = dir.path().join("csi.sock");
    let listener = tokio::net::UnixListener::bind(&sock).unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(
        tonic::transport::Server::builder()
            .add_routes(server.into_routes())
            .serve_with_incoming_shutdown(
                tokio_stream::wrappers::UnixListenerStream::new(listener),
                async { drop(stopped.await) },
            ),
    );
    let channel = csikit::channel::connect_unix(&sock).await.unwrap();
    let client = controller_client::ControllerClient::new(channel);

    // Calls at once from several tasks: answered, failed by the driver with the secrets in its
    // message, refused by validation, and one the plugin does not implement.
    const CALLS: usize = 40;
    let calls: Vec<_> = (0..CALLS)
        .map(|i| {
            let mut client = client.clone();
            tokio::spawn(async move {
                let leak = i % 4 == 1;
                let name = if i % 10 == 7 { String::new() } else { format!("pv-{i}") };
                client.create_volume(create(&name, leak)).await.map(drop).map_err(|s| s.code())
            })
        })
        .collect();
    let mut outcomes = [0usize; 3];
    for (i, call) in calls.into_iter().enumerate() {
        match call.await.unwrap() {
            Ok(()) => outcomes[0] += 1,
            Err(Code::PermissionDenied) => outcomes[1] += 1,
            Err(Code::InvalidArgument) => outcomes[2] += 1,
            Err(other) => panic!("call {i}: {other:?}"),
        }
    }
    let unimplemented = client
        .clone()
        .controller_publish_volume(ControllerPublishVolumeRequest {
            secrets: secrets(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(unimplemented.code(), Code::Unimplemented);
    drop(client);
    stop.send(()).unwrap();
    serving.await.unwrap().unwrap();

    assert!(guard.flush(Duration::from_secs(30)), "the writer wrote everything logged");
    assert_eq!((guard.dropped(), guard.failed()), (0, 0));
    drop(guard);
    let log = std::fs::read_to_string(&log_path).unwrap();

    let (long, short) = (SECRETS[0].1, SECRETS[1].1);
    let leaked: Vec<&str> = log
        .lines()
        // The short value counts as a word of its own, where the scrubbing rule looks for it.
        .filter(|l| l.contains(long) || l.split(|c: char| !c.is_alphanumeric()).any(|w| w == short))
        .collect();
    assert!(leaked.is_empty(), "secret values in the log: {leaked:#?}");
    // Requests are logged (their keys show, values redacted), so the check above means something.
    assert!(log.contains("\"password\": <redacted>"), "{log}");

    let span = "csi{rpc=\"CreateVolume\"";
    let line_of = |outcome: &str| {
        log.lines().filter(|l| l.contains(span) && l.contains(outcome)).collect::<Vec<_>>()
    };
    let ok = line_of(": ok elapsed_us=");
    let failed = line_of(": failed elapsed_us=");
    assert_eq!(ok.len(), outcomes[0], "one ok line per answered call:\n{log}");
    assert_eq!(failed.len(), outcomes[1] + outcomes[2], "one line per failed call:\n{log}");
    assert!(
        failed
            .iter()
            .filter(|l| l.contains("code=PermissionDenied"))
            .all(|l| l.contains("<redacted>")),
        "{failed:#?}"
    );
    assert_eq!(
        log.lines().filter(|l| l.contains(span) && l.contains(": creating name=")).count(),
        outcomes[0] + outcomes[1],
        "the driver's own lines, in the span of their call"
    );
    assert!(
        log.lines().any(|l| l.contains("rpc=\"ControllerPublishVolume\"") && l.contains("not implemented")),
        "{log}"
    );
    // One event, one line: every line starts with its time.
    assert!(log.lines().all(|l| l.len() > 28 && &l[4..5] == "-" && &l[26..27] == "Z"), "{log}");
}

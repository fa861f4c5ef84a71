//! What both proxy benches share: the call they make (a csikit plugin answering CreateVolume, and
//! a request with a secret, so redaction runs, and a parameter, as a provisioner sends it), and
//! the bounded wait for a socket they started.

use std::path::Path;
use std::time::{Duration, Instant};

use csikit::v1::server::Controller;
use csikit::v1::*;
use tonic::{Request, Response, Status};

/// Answers CreateVolume with a volume named as asked.
pub struct Plugin;

#[csikit::csi_service]
impl Controller for Plugin {
    async fn create_volume(
        &self,
        request: Request<CreateVolumeRequest>,
    ) -> Result<Response<CreateVolumeResponse>, Status> {
        let r = request.into_inner();
        Ok(Response::new(CreateVolumeResponse {
            volume: Some(Volume {
                volume_id: r.name,
                capacity_bytes: 1 << 30,
                ..Volume::default()
            }),
        }))
    }
}

/// The `i`th request: its name is different each time.
pub fn request(i: usize) -> CreateVolumeRequest {
    CreateVolumeRequest {
        name: format!("pvc-0b2a6c4e-3d2f-4f0e-9a7b-{i:012}"),
        volume_capabilities: vec![VolumeCapability {
            access_type: Some(volume_capability::AccessType::Mount(
                volume_capability::MountVolume { fs_type: "ext4".into(), ..Default::default() },
            )),
            access_mode: Some(volume_capability::AccessMode {
                mode: volume_capability::access_mode::Mode::SingleNodeWriter as i32,
            }),
        }],
        secrets: [("password".to_owned(), "hunter2".to_owned())].into(),
        parameters: [("csi.storage.k8s.io/pvc/name".to_owned(), "data-web-0".to_owned())].into(),
        ..CreateVolumeRequest::default()
    }
}

/// How long a socket the bench started may take to accept connections (the machine may be busy
/// building).
const READY_WITHIN: Duration = Duration::from_secs(60);

/// Waits until `what` at `path` accepts a connection, trying again every few milliseconds.
///
/// # Panics
///
/// When it does not within [`READY_WITHIN`], naming what and where.
pub async fn ready(what: &str, path: &Path) {
    let deadline = Instant::now() + READY_WITHIN;
    loop {
        match tokio::net::UnixStream::connect(path).await {
            Ok(_) => return,
            Err(e) if Instant::now() >= deadline => panic!(
                "{what} did not accept a connection at {} within {READY_WITHIN:?}: {e}",
                path.display()
            ),
            Err(_) => tokio::time::sleep(Duration::from_millis(5)).await,
        }
    }
}

//! The call both proxy benches make: a csikit plugin answering CreateVolume, and a request with a
//! secret (so redaction runs) and a parameter, as a provisioner sends it.

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

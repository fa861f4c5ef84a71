//! Per-volume serialisation, wait mode against fail-fast: a batch of 16 concurrent CreateVolume
//! calls, all on one volume name or on 16 names, straight into the skeleton's adapter (the
//! layers without the transport) on a multi-thread tokio runtime. The handler takes 1 ms (a
//! short operation, a timer rather than a busy loop so the two cores stay free). Criterion times
//! a whole batch; before it, one batch of each case prints how many calls answered OK and how
//! many ABORTED, since a fail-fast batch is quick because it refuses most of its calls.
//!
//! Run: `cargo bench -p csikit-runtime --bench serialisation`.
#![allow(missing_docs, reason = "criterion's macros generate undocumented items")]

use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use csikit::server::{Layers, Pipeline, Serialisation};
use csikit::v1::controller_server::Controller as _;
use csikit::v1::server::{Controller, ControllerService};
use csikit::v1::*;
use tonic::{Request, Response, Status};

/// Calls in a batch.
const CALLS: usize = 16;
/// What each call's handler takes.
const WORK: Duration = Duration::from_millis(1);

struct Driver;

#[csikit::csi_service]
impl Controller for Driver {
    async fn create_volume(
        &self,
        request: Request<CreateVolumeRequest>,
    ) -> Result<Response<CreateVolumeResponse>, Status> {
        tokio::time::sleep(WORK).await;
        let volume =
            Volume { volume_id: format!("id-{}", request.get_ref().name), ..Default::default() };
        Ok(Response::new(CreateVolumeResponse { volume: Some(volume) }))
    }

    async fn delete_volume(
        &self,
        _request: Request<DeleteVolumeRequest>,
    ) -> Result<Response<DeleteVolumeResponse>, Status> {
        Ok(Response::new(DeleteVolumeResponse {}))
    }

    async fn validate_volume_capabilities(
        &self,
        _request: Request<ValidateVolumeCapabilitiesRequest>,
    ) -> Result<Response<ValidateVolumeCapabilitiesResponse>, Status> {
        Ok(Response::new(ValidateVolumeCapabilitiesResponse::default()))
    }
}

fn request(name: String) -> CreateVolumeRequest {
    CreateVolumeRequest {
        name,
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

fn service(serialisation: Serialisation) -> ControllerService<Driver> {
    let layers = Layers { serialisation, ..Layers::default() };
    ControllerService::new(Arc::new(Driver), Arc::new(Pipeline::new(layers)), Arc::default())
}

/// Sends a batch at once and waits for every answer: (OK, ABORTED).
async fn batch(service: &ControllerService<Driver>, volumes: usize) -> (usize, usize) {
    let calls: Vec<_> = (0..CALLS)
        .map(|i| {
            let service = service.clone();
            let name = format!("pvc-{}", i % volumes);
            tokio::spawn(async move { service.create_volume(Request::new(request(name))).await })
        })
        .collect();
    let (mut ok, mut aborted) = (0, 0);
    for call in calls {
        match call.await.expect("joins") {
            Ok(_) => ok += 1,
            Err(status) if status.code() == tonic::Code::Aborted => aborted += 1,
            Err(status) => panic!("unexpected {status:?}"),
        }
    }
    (ok, aborted)
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let modes = [
        ("wait", Serialisation::Wait { timeout: Duration::from_secs(10) }),
        ("fail_fast", Serialisation::FailFast),
    ];
    for (case, volumes) in [("one_volume", 1), ("16_volumes", CALLS)] {
        for (mode, serialisation) in modes {
            let (ok, aborted) = runtime.block_on(batch(&service(serialisation), volumes));
            println!(
                "serialisation/{case}/{mode}: one batch of {CALLS}: {ok} OK, {aborted} ABORTED"
            );
        }
    }
    for (case, volumes) in [("one_volume", 1), ("16_volumes", CALLS)] {
        let mut group = c.benchmark_group(format!("serialisation/{case}"));
        group.throughput(Throughput::Elements(CALLS as u64));
        for (mode, serialisation) in modes {
            let service = service(serialisation);
            group.bench_function(mode, |b| b.iter(|| runtime.block_on(batch(&service, volumes))));
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);

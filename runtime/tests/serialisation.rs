//! Per-volume serialisation in wait mode: calls on one volume run one after another in arrival
//! order, a call answers ABORTED only when its wait exceeds the timeout, a cancelled waiting call
//! does not hold up the ones behind it, calls on other volumes run in parallel, and the wait is
//! visible in the call's span. Calls go straight into the adapter on tokio's paused clock (the
//! handlers' 10 ms are virtual time, and time stands still while the test sends calls and waits
//! for each to be queued), and through a real server over a unix socket for the builder's switch.
#![allow(clippy::unwrap_used, reason = "a test: a panic is the failure report")]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use csikit::server::{Layers, Pipeline, Serialisation};
use csikit::v1::controller_server::Controller as _;
use csikit::v1::server::{Builder, Controller, ControllerService};
use csikit::v1::*;
use tonic::{Code, Request, Response, Status};

/// Records the order calls ran in; a call waits at the gate or the barrier when asked to.
struct Driver {
    order: Mutex<Vec<usize>>,
    gate: tokio::sync::Semaphore,
    barrier: tokio::sync::Barrier,
}

impl Driver {
    fn new(parallel: usize) -> Self {
        Driver {
            order: Mutex::new(Vec::new()),
            gate: tokio::sync::Semaphore::new(0),
            barrier: tokio::sync::Barrier::new(parallel),
        }
    }

    fn order(&self) -> Vec<usize> {
        self.order.lock().unwrap().clone()
    }
}

#[csikit::csi_service]
impl Controller for Driver {
    async fn create_volume(
        &self,
        request: Request<CreateVolumeRequest>,
    ) -> Result<Response<CreateVolumeResponse>, Status> {
        let r = request.into_inner();
        let call: usize = r.parameters["call"].parse().unwrap();
        self.order.lock().unwrap().push(call);
        if r.parameters.contains_key("gate") {
            drop(self.gate.acquire().await.unwrap());
        }
        if r.parameters.contains_key("barrier") {
            self.barrier.wait().await;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        let volume = Volume { volume_id: format!("id-{}", r.name), ..Default::default() };
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

fn create(name: &str, call: usize, flags: &[&str]) -> CreateVolumeRequest {
    let mut parameters: std::collections::HashMap<String, String> =
        flags.iter().map(|f| ((*f).to_owned(), String::new())).collect();
    parameters.insert("call".into(), call.to_string());
    CreateVolumeRequest {
        name: name.into(),
        parameters,
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

type Call = tokio::task::JoinHandle<Result<Response<CreateVolumeResponse>, Status>>;

struct Setup {
    service: ControllerService<Driver>,
    pipeline: Arc<Pipeline>,
    driver: Arc<Driver>,
}

fn setup(timeout: Duration) -> Setup {
    let layers = Layers { serialisation: Serialisation::Wait { timeout }, ..Layers::default() };
    let pipeline = Arc::new(Pipeline::new(layers));
    let driver = Arc::new(Driver::new(1));
    let service =
        ControllerService::new(Arc::clone(&driver), Arc::clone(&pipeline), Arc::default());
    Setup { service, pipeline, driver }
}

impl Setup {
    fn send(&self, request: CreateVolumeRequest) -> Call {
        let service = self.service.clone();
        tokio::spawn(async move { service.create_volume(Request::new(request)).await })
    }

    /// Yields until `done` holds: time stands still meanwhile (the test task stays runnable).
    async fn until(&self, done: impl Fn(&Pipeline) -> bool) {
        while !done(&self.pipeline) {
            tokio::task::yield_now().await;
        }
    }

    /// Sends `n` calls on volume `pv-1`, each once the one before holds the volume or is queued,
    /// so they arrive in the order sent.
    async fn send_in_order(&self, n: usize) -> Vec<Call> {
        let mut calls = Vec::new();
        for i in 0..n {
            calls.push(self.send(create("pv-1", i, &[])));
            self.until(|p| p.in_flight() == 1 && p.waiting() == i).await;
        }
        calls
    }
}

#[tokio::test(start_paused = true)]
async fn waiting_calls_run_in_arrival_order() {
    let s = setup(Duration::from_secs(1));
    let calls = s.send_in_order(16).await;
    for (i, call) in calls.into_iter().enumerate() {
        let response = call.await.unwrap().unwrap_or_else(|e| panic!("call {i}: {e:?}"));
        assert_eq!(response.into_inner().volume.unwrap().volume_id, "id-pv-1");
    }
    assert_eq!(s.driver.order(), (0..16).collect::<Vec<_>>());
    assert_eq!((s.pipeline.waiting(), s.pipeline.in_flight()), (0, 0), "nothing left behind");
}

#[tokio::test(start_paused = true)]
async fn calls_that_wait_past_the_timeout_are_aborted() {
    let s = setup(Duration::from_millis(20));
    let calls = s.send_in_order(16).await;
    let mut outcomes = Vec::new();
    for call in calls {
        outcomes.push(call.await.unwrap().map(|_| ()));
    }
    // Call 0 runs at once (0-10 ms), call 1 after it (10-20 ms); the others' 20 ms are up by the
    // time call 1 ends (call 2's in the same instant: either outcome is right for it).
    assert!(outcomes[0].is_ok() && outcomes[1].is_ok(), "{outcomes:?}");
    for (i, outcome) in outcomes.iter().enumerate().skip(3) {
        let err = outcome.as_ref().expect_err("waited past the timeout");
        assert_eq!(err.code(), Code::Aborted, "call {i}: {err:?}");
        assert!(
            err.message().contains("volume name \"pv-1\"")
                && err.message().contains("waited 20 ms"),
            "{}",
            err.message()
        );
    }
    let ran = s.driver.order();
    assert!(ran.starts_with(&[0, 1]) && ran.len() <= 3, "{ran:?}");
    assert_eq!((s.pipeline.waiting(), s.pipeline.in_flight()), (0, 0), "nothing left behind");
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_waiting_call_does_not_hold_up_the_ones_behind_it() {
    let s = setup(Duration::from_secs(60));
    let first = s.send(create("pv-1", 0, &["gate"]));
    s.until(|p| p.in_flight() == 1).await;
    let second = s.send(create("pv-1", 1, &[]));
    s.until(|p| p.waiting() == 1).await;
    let third = s.send(create("pv-1", 2, &[]));
    s.until(|p| p.waiting() == 2).await;
    // The second call's client goes away while it waits.
    second.abort();
    s.until(|p| p.waiting() == 1).await;
    s.driver.gate.add_permits(1);
    assert!(first.await.unwrap().is_ok());
    assert!(third.await.unwrap().is_ok());
    assert_eq!(s.driver.order(), [0, 2]);
    assert_eq!((s.pipeline.waiting(), s.pipeline.in_flight()), (0, 0));
}

#[tokio::test(start_paused = true)]
async fn the_wait_is_in_the_call_span() {
    #[derive(Clone, Default)]
    struct Log(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Log {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let log = Log::default();
    let writer = log.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let _default = tracing::subscriber::set_default(subscriber);
    let s = setup(Duration::from_secs(1));
    for call in s.send_in_order(2).await {
        assert!(call.await.unwrap().is_ok());
    }
    let text = String::from_utf8(log.0.lock().unwrap().clone()).unwrap();
    assert!(text.contains("waiting for the calls ahead"), "{text}");
    assert!(text.contains("waited_ms=10"), "{text}");
}

#[test]
fn fail_fast_is_the_default() {
    assert_eq!(Layers::default().serialisation, Serialisation::FailFast);
    assert_eq!(Serialisation::default(), Serialisation::FailFast);
}

/// Through the builder and a real server: sixteen calls on sixteen volumes meet at a barrier
/// inside the driver, which they pass only when all sixteen run at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_on_other_volumes_run_in_parallel() {
    let dir = std::env::temp_dir().join(format!("csikit-serialisation-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let sock: PathBuf = dir.join("csi.sock");
    let driver = Driver::new(16);
    let server = Builder::new("test.csikit.dev", "1")
        .serialisation(Serialisation::Wait { timeout: Duration::from_secs(60) })
        .controller(driver)
        .build()
        .await
        .unwrap();
    // The routes on a listener bound here, so the client connects without polling for it.
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
    let calls: Vec<_> = (0..16)
        .map(|i| {
            let mut client = controller_client::ControllerClient::new(channel.clone());
            tokio::spawn(async move {
                client.create_volume(create(&format!("pv-{i}"), i, &["barrier"])).await
            })
        })
        .collect();
    // A guard against a hang, not a measurement: serialised, the barrier is never passed.
    let all = tokio::time::timeout(Duration::from_secs(60), async {
        let mut ok = 0;
        for call in calls {
            ok += usize::from(call.await.unwrap().is_ok());
        }
        ok
    })
    .await
    .expect("the sixteen calls overlapped");
    assert_eq!(all, 16);
    stop.send(()).unwrap();
    serving.await.unwrap().unwrap();
    let _ = std::fs::remove_dir_all(dir);
}

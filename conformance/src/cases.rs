//! The suite: discovery, the cases built from the facts ([`crate::generated`]) and the cases
//! written for behaviour the facts cannot hold, and the clean-up every run ends with.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use csikit::server::PluginSpec as _;
use csikit::v1::controller_client::ControllerClient;
use csikit::v1::controller_service_capability::rpc::Type as Ctl;
use csikit::v1::identity_client::IdentityClient;
use csikit::v1::node_client::NodeClient;
use csikit::v1::node_service_capability::rpc::Type as Nd;
use csikit::v1::plugin_capability::service::Type as Svc;
use csikit::v1::volume_capability::access_mode::Mode;
use csikit::v1::volume_capability::{AccessMode, AccessType, MountVolume};
use csikit::v1::*;
use prost::Message as _;
use prost_reflect::DynamicMessage;
use tonic::transport::Channel;
use tonic::{Code, Status};

use crate::client::{Endpoint, raw_call, request, typed};
use crate::generated::{self, Expect, Mutation};
use crate::{CaseResult, Config, Outcome, Report};

const MIB: i64 = 1 << 20;
/// A volume id and a snapshot id no plugin has issued.
const UNKNOWN_VOLUME: &str = "csi-conformance-no-such-volume";
const UNKNOWN_SNAPSHOT: &str = "csi-conformance-no-such-snapshot";

fn fail(why: impl Into<String>) -> Outcome {
    Outcome::Failed(why.into())
}

fn code_is(result: &Result<impl Sized, Status>, code: Code) -> bool {
    matches!(result, Err(s) if s.code() == code)
}

fn show<T>(result: &Result<T, Status>) -> String {
    match result {
        Ok(_) => "OK".into(),
        Err(s) => format!("{:?}: {}", s.code(), s.message()),
    }
}

/// Checks a condition inside a case.
macro_rules! ensure {
    ($cond:expr, $($why:tt)+) => {
        if !$cond {
            return fail(format!($($why)+));
        }
    };
}

pub(crate) struct Suite {
    ch: Channel,
    cfg: Config,
    t: Duration,
    services: HashSet<i32>,
    ctl: HashSet<i32>,
    node: HashSet<i32>,
    has_node: bool,
    node_id: String,
    dir: tempfile::TempDir,
    volumes: Vec<String>,
    snapshots: Vec<String>,
    /// Controller publications to undo: (volume, node).
    published: Vec<(String, String)>,
    /// Node paths to undo: (volume, target) and (volume, staging).
    node_published: Vec<(String, PathBuf)>,
    staged: Vec<(String, PathBuf)>,
    results: Vec<CaseResult>,
    required_total: usize,
    required_covered: usize,
    names: u64,
    sent_secrets: BTreeSet<String>,
}

impl Suite {
    /// Connects and learns what the plugin advertises.
    pub(crate) async fn connect(endpoint: &Endpoint, cfg: &Config) -> Result<Suite, String> {
        let t = cfg.timeout;
        let ch = endpoint.connect(t).await?;
        let mut identity = IdentityClient::new(ch.clone());
        let info = typed(t, identity.get_plugin_info(request(GetPluginInfoRequest {}, t)))
            .await
            .map_err(|s| {
                format!("GetPluginInfo: {:?}: {} (is this a CSI plugin?)", s.code(), s.message())
            })?;
        if info.name.is_empty() {
            return Err("GetPluginInfo answered an empty name".into());
        }
        let caps =
            typed(t, identity.get_plugin_capabilities(request(GetPluginCapabilitiesRequest {}, t)))
                .await
                .map_err(|s| format!("GetPluginCapabilities: {:?}: {}", s.code(), s.message()))?;
        let services: HashSet<i32> = caps
            .capabilities
            .iter()
            .filter_map(|c| match &c.r#type {
                Some(plugin_capability::Type::Service(s)) => Some(s.r#type),
                _ => None,
            })
            .collect();
        let mut ctl = HashSet::new();
        if services.contains(&(Svc::ControllerService as i32)) {
            let mut c = ControllerClient::new(ch.clone());
            let r = typed(
                t,
                c.controller_get_capabilities(request(ControllerGetCapabilitiesRequest {}, t)),
            )
            .await
            .map_err(|s| format!("ControllerGetCapabilities: {:?}: {}", s.code(), s.message()))?;
            ctl = r
                .capabilities
                .iter()
                .filter_map(|c| match &c.r#type {
                    Some(controller_service_capability::Type::Rpc(r)) => Some(r.r#type),
                    _ => None,
                })
                .collect();
        }
        let mut n = NodeClient::new(ch.clone());
        let (has_node, node) = match typed(
            t,
            n.node_get_capabilities(request(NodeGetCapabilitiesRequest {}, t)),
        )
        .await
        {
            Ok(r) => (
                true,
                r.capabilities
                    .iter()
                    .filter_map(|c| match &c.r#type {
                        Some(node_service_capability::Type::Rpc(r)) => Some(r.r#type),
                        _ => None,
                    })
                    .collect(),
            ),
            Err(s) if s.code() == Code::Unimplemented => (false, HashSet::new()),
            Err(s) => return Err(format!("NodeGetCapabilities: {:?}: {}", s.code(), s.message())),
        };
        let node_id = if has_node {
            typed(t, n.node_get_info(request(NodeGetInfoRequest {}, t)))
                .await
                .map(|i| i.node_id)
                .map_err(|s| format!("NodeGetInfo: {:?}: {}", s.code(), s.message()))?
        } else {
            "csi-conformance-node".into()
        };
        let dir = tempfile::Builder::new()
            .prefix("csi-conformance-")
            .tempdir()
            .map_err(|e| format!("cannot make a temporary folder: {e}"))?;
        Ok(Suite {
            ch,
            cfg: cfg.clone(),
            t,
            services,
            ctl,
            node,
            has_node,
            node_id,
            dir,
            volumes: Vec::new(),
            snapshots: Vec::new(),
            published: Vec::new(),
            node_published: Vec::new(),
            staged: Vec::new(),
            results: Vec::new(),
            required_total: 0,
            required_covered: 0,
            names: 0,
            sent_secrets: BTreeSet::new(),
        })
    }

    pub(crate) fn into_report(self) -> Report {
        Report {
            results: self.results,
            required_total: self.required_total,
            required_covered: self.required_covered,
            duration: Duration::ZERO,
        }
    }

    fn controller(&self) -> bool {
        self.services.contains(&(Svc::ControllerService as i32))
    }

    fn has(&self, c: Ctl) -> bool {
        self.controller() && self.ctl.contains(&(c as i32))
    }

    fn node_has(&self, c: Nd) -> bool {
        self.has_node && self.node.contains(&(c as i32))
    }

    fn record(
        &mut self,
        name: String,
        started: Instant,
        outcome: Outcome,
        line: &mut dyn FnMut(&CaseResult),
    ) {
        if let Some(f) = &self.cfg.filter
            && !name.contains(f.as_str())
        {
            return;
        }
        let r = CaseResult { name, outcome, duration: started.elapsed() };
        line(&r);
        self.results.push(r);
    }

    fn name(&mut self, what: &str) -> String {
        self.names += 1;
        format!("csi-conformance-{what}-{}-{}", std::process::id(), self.names)
    }

    fn secrets(&mut self, kind: &str) -> HashMap<String, String> {
        let s = self.cfg.secrets.get(kind);
        self.sent_secrets.extend(s.values().filter(|v| !v.is_empty()).cloned());
        s
    }

    fn ctl_client(&self) -> ControllerClient<Channel> {
        ControllerClient::new(self.ch.clone())
    }

    fn node_client(&self) -> NodeClient<Channel> {
        NodeClient::new(self.ch.clone())
    }

    fn capability() -> VolumeCapability {
        VolumeCapability {
            access_type: Some(AccessType::Mount(MountVolume::default())),
            access_mode: Some(AccessMode { mode: Mode::SingleNodeWriter as i32 }),
        }
    }

    fn create_request(&mut self, name: &str, required: i64) -> CreateVolumeRequest {
        CreateVolumeRequest {
            name: name.to_owned(),
            capacity_range: (required > 0)
                .then_some(CapacityRange { required_bytes: required, limit_bytes: 0 }),
            volume_capabilities: vec![Self::capability()],
            secrets: self.secrets("CreateVolumeSecret"),
            ..CreateVolumeRequest::default()
        }
    }

    /// CreateVolume, the volume remembered for the clean-up.
    async fn create(&mut self, r: CreateVolumeRequest) -> Result<Volume, Status> {
        let t = self.t;
        let mut c = self.ctl_client();
        let v = typed(t, c.create_volume(request(r, t))).await?;
        let v = v.volume.ok_or_else(|| Status::internal("CreateVolume answered no volume"))?;
        if !self.volumes.contains(&v.volume_id) {
            self.volumes.push(v.volume_id.clone());
        }
        Ok(v)
    }

    async fn delete(&mut self, id: &str) -> Result<DeleteVolumeResponse, Status> {
        let t = self.t;
        let secrets = self.secrets("DeleteVolumeSecret");
        let mut c = self.ctl_client();
        let r = typed(
            t,
            c.delete_volume(request(DeleteVolumeRequest { volume_id: id.into(), secrets }, t)),
        )
        .await;
        if r.is_ok() {
            self.volumes.retain(|v| v != id);
        }
        r
    }

    /// Every volume id ListVolumes gives, following its tokens.
    async fn list_all(&mut self, max_entries: i32) -> Result<Vec<String>, String> {
        let t = self.t;
        let mut c = self.ctl_client();
        let mut out = Vec::new();
        let mut token = String::new();
        for _ in 0..10_000 {
            let r = typed(
                t,
                c.list_volumes(request(
                    ListVolumesRequest { max_entries, starting_token: token.clone() },
                    t,
                )),
            )
            .await
            .map_err(|s| format!("ListVolumes: {:?}: {}", s.code(), s.message()))?;
            if max_entries > 0 && r.entries.len() > max_entries as usize {
                return Err(format!(
                    "ListVolumes gave {} entries for max_entries {max_entries}",
                    r.entries.len()
                ));
            }
            out.extend(r.entries.into_iter().filter_map(|e| e.volume.map(|v| v.volume_id)));
            if r.next_token.is_empty() {
                return Ok(out);
            }
            if r.next_token == token {
                return Err(
                    "ListVolumes gave back the token it was sent: the listing never ends".into()
                );
            }
            token = r.next_token;
        }
        Err("ListVolumes gave 10,000 pages: the listing never ends".into())
    }

    pub(crate) async fn run_all(&mut self, line: &mut dyn FnMut(&CaseResult)) {
        let before = if self.has(Ctl::ListVolumes) { self.list_all(0).await.ok() } else { None };
        let started = Instant::now();
        let fixture = if self.has(Ctl::CreateDeleteVolume) {
            let name = self.name("fixture");
            let r = self.create_request(&name, 0);
            self.create(r).await.ok()
        } else {
            None
        };
        self.record(
            "setup: a volume to work on".into(),
            started,
            match &fixture {
                Some(_) => Outcome::Passed,
                None if !self.has(Ctl::CreateDeleteVolume) => {
                    Outcome::Skipped("no CREATE_DELETE_VOLUME".into())
                }
                None => fail("CreateVolume of a plain volume failed"),
            },
            line,
        );
        let fixture = fixture.map(|v| v.volume_id).unwrap_or_else(|| UNKNOWN_VOLUME.to_owned());

        self.generated_cases(&fixture, line).await;
        self.obligations(&fixture, line).await;
        self.written_cases(&fixture, line).await;

        // Clean-up, then the listing must read as before the run.
        let started = Instant::now();
        let leftovers = self.clean_up().await;
        self.record(
            "clean-up: every volume and snapshot the suite made is deleted".into(),
            started,
            if leftovers.is_empty() { Outcome::Passed } else { fail(leftovers.join("; ")) },
            line,
        );
        if let Some(before) = before {
            let started = Instant::now();
            let outcome = match self.list_all(0).await {
                Ok(after) => {
                    let (b, a): (BTreeSet<_>, BTreeSet<_>) =
                        (before.into_iter().collect(), after.into_iter().collect());
                    if a == b {
                        Outcome::Passed
                    } else {
                        fail(format!(
                            "ListVolumes differs after the run: {} left over, {} gone",
                            a.difference(&b).count(),
                            b.difference(&a).count()
                        ))
                    }
                }
                Err(why) => fail(why),
            };
            self.record(
                "clean-up: ListVolumes is the same after the run as before".into(),
                started,
                outcome,
                line,
            );
        }
        if let Some(log) = self.cfg.driver_log.clone() {
            let started = Instant::now();
            let outcome = self.check_log(&log);
            self.record(
                "secrets: no secret value the suite sent is in the driver's log".into(),
                started,
                outcome,
                line,
            );
        }
    }

    fn check_log(&self, path: &Path) -> Outcome {
        let text = match std::fs::read(path) {
            Ok(t) => String::from_utf8_lossy(&t).into_owned(),
            Err(e) => return fail(format!("cannot read the driver log '{}': {e}", path.display())),
        };
        if self.sent_secrets.is_empty() {
            return Outcome::Skipped("no secret was sent (--secrets names none)".into());
        }
        for s in &self.sent_secrets {
            if let Some(at) = text.find(s.as_str()) {
                let line = text[..at].lines().count().max(1);
                return fail(format!("a secret value sent is in the driver log at line {line}"));
            }
        }
        Outcome::Passed
    }

    async fn clean_up(&mut self) -> Vec<String> {
        let t = self.t;
        let mut left = Vec::new();
        let mut n = self.node_client();
        for (volume, target) in std::mem::take(&mut self.node_published) {
            let _ = typed(
                t,
                n.node_unpublish_volume(request(
                    NodeUnpublishVolumeRequest {
                        volume_id: volume,
                        target_path: target.display().to_string(),
                    },
                    t,
                )),
            )
            .await;
        }
        for (volume, staging) in std::mem::take(&mut self.staged) {
            let _ = typed(
                t,
                n.node_unstage_volume(request(
                    NodeUnstageVolumeRequest {
                        volume_id: volume,
                        staging_target_path: staging.display().to_string(),
                    },
                    t,
                )),
            )
            .await;
        }
        let mut c = self.ctl_client();
        for (volume, node) in std::mem::take(&mut self.published) {
            let secrets = self.secrets("ControllerUnpublishVolumeSecret");
            let _ = typed(
                t,
                c.controller_unpublish_volume(request(
                    ControllerUnpublishVolumeRequest { volume_id: volume, node_id: node, secrets },
                    t,
                )),
            )
            .await;
        }
        for s in std::mem::take(&mut self.snapshots) {
            let secrets = self.secrets("DeleteSnapshotSecret");
            if let Err(e) = typed(
                t,
                c.delete_snapshot(request(
                    DeleteSnapshotRequest { snapshot_id: s.clone(), secrets },
                    t,
                )),
            )
            .await
            {
                left.push(format!("snapshot {s}: {:?}: {}", e.code(), e.message()));
            }
        }
        for v in self.volumes.clone() {
            if let Err(e) = self.delete(&v).await {
                left.push(format!("volume {v}: {:?}: {}", e.code(), e.message()));
            }
        }
        left
    }

    // ---- Cases from the facts ----

    /// A valid request for each RPC the suite can build one for, as bytes of its request type.
    fn baseline(&mut self, rpc: &str, fixture: &str) -> Option<Vec<u8>> {
        let cap = Self::capability();
        let staging = self.dir.path().join("generated-staging").display().to_string();
        let target = self.dir.path().join("generated-target").display().to_string();
        Some(match rpc {
            "CreateVolume" => {
                let name = self.name("generated");
                self.create_request(&name, 0).encode_to_vec()
            }
            "DeleteVolume" => DeleteVolumeRequest {
                volume_id: UNKNOWN_VOLUME.into(),
                secrets: self.secrets("DeleteVolumeSecret"),
            }
            .encode_to_vec(),
            "ControllerPublishVolume" => ControllerPublishVolumeRequest {
                volume_id: UNKNOWN_VOLUME.into(),
                node_id: self.node_id.clone(),
                volume_capability: Some(cap),
                secrets: self.secrets("ControllerPublishVolumeSecret"),
                ..ControllerPublishVolumeRequest::default()
            }
            .encode_to_vec(),
            "ControllerUnpublishVolume" => ControllerUnpublishVolumeRequest {
                volume_id: UNKNOWN_VOLUME.into(),
                node_id: self.node_id.clone(),
                secrets: self.secrets("ControllerUnpublishVolumeSecret"),
            }
            .encode_to_vec(),
            "ValidateVolumeCapabilities" => ValidateVolumeCapabilitiesRequest {
                volume_id: fixture.into(),
                volume_capabilities: vec![cap],
                secrets: self.secrets("ControllerValidateVolumeCapabilitiesSecret"),
                ..ValidateVolumeCapabilitiesRequest::default()
            }
            .encode_to_vec(),
            "ListVolumes" => ListVolumesRequest::default().encode_to_vec(),
            "GetCapacity" => GetCapacityRequest {
                volume_capabilities: vec![cap],
                ..GetCapacityRequest::default()
            }
            .encode_to_vec(),
            "CreateSnapshot" => CreateSnapshotRequest {
                source_volume_id: fixture.into(),
                name: self.name("generated-snap"),
                secrets: self.secrets("CreateSnapshotSecret"),
                ..CreateSnapshotRequest::default()
            }
            .encode_to_vec(),
            "DeleteSnapshot" => DeleteSnapshotRequest {
                snapshot_id: UNKNOWN_SNAPSHOT.into(),
                secrets: self.secrets("DeleteSnapshotSecret"),
            }
            .encode_to_vec(),
            "ListSnapshots" => ListSnapshotsRequest::default().encode_to_vec(),
            "ControllerExpandVolume" => ControllerExpandVolumeRequest {
                volume_id: UNKNOWN_VOLUME.into(),
                capacity_range: Some(CapacityRange { required_bytes: 2 * MIB, limit_bytes: 0 }),
                secrets: self.secrets("ControllerExpandVolumeSecret"),
                volume_capability: Some(cap),
            }
            .encode_to_vec(),
            "ControllerGetVolume" => {
                ControllerGetVolumeRequest { volume_id: fixture.into() }.encode_to_vec()
            }
            "ControllerModifyVolume" => ControllerModifyVolumeRequest {
                volume_id: UNKNOWN_VOLUME.into(),
                secrets: self.secrets("ControllerModifyVolumeSecret"),
                mutable_parameters: [("csi-conformance".to_owned(), "1".to_owned())].into(),
            }
            .encode_to_vec(),
            "GetSnapshot" => GetSnapshotRequest {
                snapshot_id: UNKNOWN_SNAPSHOT.into(),
                secrets: self.secrets("GetSnapshotSecret"),
            }
            .encode_to_vec(),
            "NodeStageVolume" => NodeStageVolumeRequest {
                volume_id: UNKNOWN_VOLUME.into(),
                staging_target_path: staging,
                volume_capability: Some(cap),
                secrets: self.secrets("NodeStageVolumeSecret"),
                ..NodeStageVolumeRequest::default()
            }
            .encode_to_vec(),
            "NodeUnstageVolume" => NodeUnstageVolumeRequest {
                volume_id: UNKNOWN_VOLUME.into(),
                staging_target_path: staging,
            }
            .encode_to_vec(),
            "NodePublishVolume" => NodePublishVolumeRequest {
                volume_id: UNKNOWN_VOLUME.into(),
                target_path: target,
                staging_target_path: if self.node_has(Nd::StageUnstageVolume) {
                    staging
                } else {
                    String::new()
                },
                volume_capability: Some(cap),
                secrets: self.secrets("NodePublishVolumeSecret"),
                ..NodePublishVolumeRequest::default()
            }
            .encode_to_vec(),
            "NodeUnpublishVolume" => {
                NodeUnpublishVolumeRequest { volume_id: UNKNOWN_VOLUME.into(), target_path: target }
                    .encode_to_vec()
            }
            "NodeGetVolumeStats" => NodeGetVolumeStatsRequest {
                volume_id: UNKNOWN_VOLUME.into(),
                volume_path: target,
                ..NodeGetVolumeStatsRequest::default()
            }
            .encode_to_vec(),
            "NodeExpandVolume" => NodeExpandVolumeRequest {
                volume_id: UNKNOWN_VOLUME.into(),
                volume_path: target,
                capacity_range: Some(CapacityRange { required_bytes: 2 * MIB, limit_bytes: 0 }),
                volume_capability: Some(cap),
                secrets: self.secrets("NodeExpandVolumeSecret"),
                ..NodeExpandVolumeRequest::default()
            }
            .encode_to_vec(),
            "GetPluginInfo"
            | "GetPluginCapabilities"
            | "Probe"
            | "ControllerGetCapabilities"
            | "NodeGetCapabilities"
            | "NodeGetInfo" => Vec::new(),
            _ => return None,
        })
    }

    /// The RPCs this plugin must answer: from the spec's obligations, given what it advertises.
    fn applicable(&self) -> Vec<&'static csikit::server::Obligation> {
        csikit::v1::server::Spec::OBLIGATIONS
            .iter()
            .filter(|o| match o.service {
                "Identity" => true,
                "Controller" => self.controller(),
                "Node" => self.has_node,
                _ => false,
            })
            .filter(|o| {
                o.if_any.is_empty()
                    || o.if_any.iter().any(|(service, _, number)| match *service {
                        "Controller" => self.ctl.contains(number),
                        "Node" => self.node.contains(number),
                        _ => false,
                    })
            })
            .collect()
    }

    async fn generated_cases(&mut self, fixture: &str, line: &mut dyn FnMut(&CaseResult)) {
        let facts = &csikit::v1::facts::FACTS;
        for o in self.applicable() {
            let Some(method) = facts
                .methods
                .iter()
                .find(|m| m.service.rsplit('.').next() == Some(o.service) && m.name == o.rpc)
            else {
                continue;
            };
            let total = generated::required_count(&method.input);
            self.required_total += total;
            let Some(bytes) = self.baseline(o.rpc, fixture) else {
                if total > 0 {
                    let started = Instant::now();
                    self.record(
                        format!("{}: REQUIRED fields", o.rpc),
                        started,
                        Outcome::Skipped("no valid request is built for this RPC".into()),
                        line,
                    );
                }
                continue;
            };
            let Some(desc) = csikit::v1::descriptor_pool().get_message_by_name(&method.input)
            else {
                continue;
            };
            let Ok(base) = DynamicMessage::decode(desc, bytes.as_slice()) else { continue };
            let mut mutations: Vec<Mutation> = generated::missing_required(&base);
            self.required_covered += mutations.len().min(total);
            mutations.extend(generated::size_limits(&base));
            mutations.extend(generated::bad_secret_key(&base));
            mutations.extend(generated::control_chars(&base));
            for m in mutations {
                let started = Instant::now();
                let answer = raw_call(&self.ch, &method.path, m.bytes, self.t).await;
                self.adopt(o.rpc, &answer);
                let outcome = match (m.expect, &answer) {
                    (Expect::Invalid, Err(s)) if s.code() == Code::InvalidArgument => {
                        Outcome::Passed
                    }
                    (Expect::Invalid, other) => {
                        fail(format!("expected INVALID_ARGUMENT, got {}", show(other)))
                    }
                    (Expect::NotInvalid, Err(s)) if s.code() == Code::InvalidArgument => {
                        fail(format!("a value within the limit was refused: {}", s.message()))
                    }
                    (Expect::NotInvalid, Err(s)) if s.code() == Code::DeadlineExceeded => {
                        fail("no answer within the deadline")
                    }
                    (Expect::NotInvalid, _) => Outcome::Passed,
                };
                self.record(format!("{}: {}", o.rpc, m.what), started, outcome, line);
            }
        }
    }

    /// Something a raw call made (a plugin that did not refuse it) is remembered for the clean-up.
    fn adopt(&mut self, rpc: &str, answer: &Result<Vec<u8>, Status>) {
        let Ok(bytes) = answer else { return };
        match rpc {
            "CreateVolume" => {
                if let Ok(r) = CreateVolumeResponse::decode(bytes.as_slice())
                    && let Some(v) = r.volume
                    && !self.volumes.contains(&v.volume_id)
                {
                    self.volumes.push(v.volume_id);
                }
            }
            "CreateSnapshot" => {
                if let Ok(r) = CreateSnapshotResponse::decode(bytes.as_slice())
                    && let Some(s) = r.snapshot
                    && !self.snapshots.contains(&s.snapshot_id)
                {
                    self.snapshots.push(s.snapshot_id);
                }
            }
            _ => {}
        }
    }

    async fn obligations(&mut self, fixture: &str, line: &mut dyn FnMut(&CaseResult)) {
        let facts = &csikit::v1::facts::FACTS;
        for o in self.applicable() {
            let Some(method) = facts
                .methods
                .iter()
                .find(|m| m.service.rsplit('.').next() == Some(o.service) && m.name == o.rpc)
            else {
                continue;
            };
            let started = Instant::now();
            let bytes = self.baseline(o.rpc, fixture).unwrap_or_default();
            let answer = raw_call(&self.ch, &method.path, bytes, self.t).await;
            self.adopt(o.rpc, &answer);
            let why = if o.if_any.is_empty() {
                "always".to_owned()
            } else {
                format!(
                    "with {}",
                    o.if_any.iter().map(|(_, n, _)| *n).collect::<Vec<_>>().join(" or ")
                )
            };
            let outcome = if code_is(&answer, Code::Unimplemented) {
                fail(format!(
                    "UNIMPLEMENTED, but the spec obliges a {} plugin to implement it ({why})",
                    o.service
                ))
            } else {
                Outcome::Passed
            };
            self.record(
                format!("{}: implemented, as the spec obliges ({why})", o.rpc),
                started,
                outcome,
                line,
            );
        }
    }

    // ---- Written cases ----

    async fn written_cases(&mut self, fixture: &str, line: &mut dyn FnMut(&CaseResult)) {
        macro_rules! case {
            ($name:expr, $cond:expr, $skip:expr, $body:expr) => {{
                let started = Instant::now();
                let outcome = if $cond { $body.await } else { Outcome::Skipped($skip.into()) };
                self.record($name.into(), started, outcome, line);
            }};
        }
        case!(
            "identity: GetPluginInfo names the plugin and its version",
            true,
            "",
            self.plugin_info()
        );
        case!("identity: Probe answers", true, "", self.probe());
        let create = self.has(Ctl::CreateDeleteVolume);
        case!(
            "volume: create and delete, each twice (idempotent)",
            create,
            "no CREATE_DELETE_VOLUME",
            self.volume_lifecycle()
        );
        case!(
            "volume: CreateVolume honours capacity_range",
            create,
            "no CREATE_DELETE_VOLUME",
            self.capacity_range()
        );
        case!(
            "volume: an incompatible re-create is ALREADY_EXISTS",
            create,
            "no CREATE_DELETE_VOLUME",
            self.already_exists()
        );
        case!(
            "volume: DeleteVolume of an unknown id is OK",
            create,
            "no CREATE_DELETE_VOLUME",
            self.delete_unknown()
        );
        case!(
            "volume: concurrent creates of one name make one volume",
            create,
            "no CREATE_DELETE_VOLUME",
            self.concurrent_create()
        );
        case!(
            "capacity: GetCapacity follows what is provisioned",
            create && self.has(Ctl::GetCapacity),
            "no GET_CAPACITY",
            self.capacity_accounting()
        );
        case!(
            "list: ListVolumes pages with max_entries and tokens",
            create && self.has(Ctl::ListVolumes),
            "no LIST_VOLUMES",
            self.list_pagination()
        );
        case!(
            "list: a ListVolumes token never issued is ABORTED",
            self.has(Ctl::ListVolumes),
            "no LIST_VOLUMES",
            self.list_bad_token()
        );
        let publish = self.has(Ctl::PublishUnpublishVolume);
        case!(
            "publish: ControllerPublishVolume twice, unpublish twice",
            create && publish,
            "no PUBLISH_UNPUBLISH_VOLUME",
            self.controller_publish(fixture)
        );
        case!(
            "publish: ControllerPublishVolume of an unknown volume is NOT_FOUND",
            publish,
            "no PUBLISH_UNPUBLISH_VOLUME",
            self.publish_unknown()
        );
        case!(
            "node: stage, publish (target_path created), unpublish (removed), unstage, each twice",
            create && self.has_node,
            "no Node service",
            self.node_lifecycle(fixture)
        );
        case!(
            "node: NodePublishVolume of an unknown volume is NOT_FOUND",
            self.has_node,
            "no Node service",
            self.node_publish_unknown()
        );
        case!(
            "node: NodeGetVolumeStats of an unpublished path is NOT_FOUND",
            self.node_has(Nd::GetVolumeStats),
            "no GET_VOLUME_STATS",
            self.stats_unpublished(fixture)
        );
        let snap = self.has(Ctl::CreateDeleteSnapshot);
        case!(
            "snapshot: create and delete, each twice (idempotent)",
            create && snap,
            "no CREATE_DELETE_SNAPSHOT",
            self.snapshot_lifecycle(fixture)
        );
        case!(
            "snapshot: CreateSnapshot of an unknown volume is NOT_FOUND",
            snap,
            "no CREATE_DELETE_SNAPSHOT",
            self.snapshot_unknown_source()
        );
        case!(
            "list: a ListSnapshots token never issued is ABORTED",
            self.has(Ctl::ListSnapshots),
            "no LIST_SNAPSHOTS",
            self.list_snapshots_bad_token()
        );
        case!(
            "expand: ControllerExpandVolume grows the volume; unknown id is NOT_FOUND",
            create && self.has(Ctl::ExpandVolume),
            "no EXPAND_VOLUME",
            self.expand(fixture)
        );
        case!(
            "volume: ControllerGetVolume of an unknown id is NOT_FOUND",
            self.has(Ctl::GetVolume),
            "no GET_VOLUME",
            self.get_volume_unknown()
        );
    }

    async fn plugin_info(&mut self) -> Outcome {
        let t = self.t;
        let mut i = IdentityClient::new(self.ch.clone());
        match typed(t, i.get_plugin_info(request(GetPluginInfoRequest {}, t))).await {
            Ok(r) if !r.name.is_empty() && !r.vendor_version.is_empty() => Outcome::Passed,
            Ok(_) => fail("name or vendor_version is empty (both are REQUIRED)"),
            Err(s) => fail(show::<()>(&Err(s))),
        }
    }

    async fn probe(&mut self) -> Outcome {
        let t = self.t;
        let mut i = IdentityClient::new(self.ch.clone());
        let r = typed(t, i.probe(request(ProbeRequest {}, t))).await;
        ensure!(r.is_ok(), "Probe: {}", show(&r));
        Outcome::Passed
    }

    async fn volume_lifecycle(&mut self) -> Outcome {
        let name = self.name("lifecycle");
        let r = self.create_request(&name, 0);
        let first = match self.create(r.clone()).await {
            Ok(v) => v,
            Err(s) => return fail(format!("CreateVolume: {}", show::<()>(&Err(s)))),
        };
        ensure!(!first.volume_id.is_empty(), "CreateVolume answered an empty volume_id");
        let again = self.create(r).await;
        ensure!(
            again.as_ref().is_ok_and(|v| v.volume_id == first.volume_id),
            "CreateVolume again with the same name and parameters: expected the same volume, got {}",
            again.as_ref().map_or_else(
                |e| show::<()>(&Err(e.clone())),
                |v| format!("volume {}", v.volume_id)
            )
        );
        let d = self.delete(&first.volume_id).await;
        ensure!(d.is_ok(), "DeleteVolume: {}", show(&d));
        let d = self.delete(&first.volume_id).await;
        ensure!(d.is_ok(), "DeleteVolume again: expected OK, got {}", show(&d));
        Outcome::Passed
    }

    async fn capacity_range(&mut self) -> Outcome {
        let name = self.name("capacity");
        let r = self.create_request(&name, 3 * MIB);
        let v = match self.create(r).await {
            Ok(v) => v,
            Err(s) => {
                return fail(format!(
                    "CreateVolume with required_bytes 3 MiB: {}",
                    show::<()>(&Err(s))
                ));
            }
        };
        let id = v.volume_id.clone();
        let _ = self.delete(&id).await;
        ensure!(
            v.capacity_bytes == 0 || v.capacity_bytes >= 3 * MIB,
            "required_bytes 3 MiB gave a volume of {} bytes",
            v.capacity_bytes
        );
        Outcome::Passed
    }

    async fn already_exists(&mut self) -> Outcome {
        let name = self.name("exists");
        let r = self.create_request(&name, MIB);
        if let Err(s) = self.create(r).await {
            return fail(format!("CreateVolume: {}", show::<()>(&Err(s))));
        }
        let mut other = self.create_request(&name, 0);
        other.capacity_range =
            Some(CapacityRange { required_bytes: 8 * MIB, limit_bytes: 8 * MIB });
        let r = self.create(other).await;
        ensure!(
            code_is(&r, Code::AlreadyExists),
            "the same name with an incompatible capacity_range: expected ALREADY_EXISTS, got {}",
            show(&r)
        );
        Outcome::Passed
    }

    async fn delete_unknown(&mut self) -> Outcome {
        let r = self.delete(UNKNOWN_VOLUME).await;
        ensure!(r.is_ok(), "DeleteVolume of an id never issued: expected OK, got {}", show(&r));
        Outcome::Passed
    }

    async fn concurrent_create(&mut self) -> Outcome {
        let name = self.name("concurrent");
        let r = self.create_request(&name, 0);
        let t = self.t;
        let (mut a, mut b) = (self.ctl_client(), self.ctl_client());
        let (x, y) = tokio::join!(
            typed(t, a.create_volume(request(r.clone(), t))),
            typed(t, b.create_volume(request(r.clone(), t)))
        );
        let mut ids = BTreeSet::new();
        for answer in [&x, &y] {
            match answer {
                Ok(v) => {
                    if let Some(v) = &v.volume {
                        ids.insert(v.volume_id.clone());
                        if !self.volumes.contains(&v.volume_id) {
                            self.volumes.push(v.volume_id.clone());
                        }
                    }
                }
                Err(s) if s.code() == Code::Aborted => {}
                Err(s) => {
                    return fail(format!(
                        "expected OK or ABORTED, got {:?}: {}",
                        s.code(),
                        s.message()
                    ));
                }
            }
        }
        ensure!(ids.len() <= 1, "two concurrent creates of one name made {} volumes", ids.len());
        // Settled, one more create must name the same volume.
        let settled = self.create(r).await;
        ensure!(
            settled.as_ref().is_ok_and(|v| ids.is_empty() || ids.contains(&v.volume_id)),
            "after the concurrent creates, CreateVolume gave another volume: {}",
            show(&settled)
        );
        Outcome::Passed
    }

    async fn capacity_accounting(&mut self) -> Outcome {
        let t = self.t;
        let mut c = self.ctl_client();
        let ask = |cap| GetCapacityRequest {
            volume_capabilities: vec![cap],
            ..GetCapacityRequest::default()
        };
        let before = match typed(t, c.get_capacity(request(ask(Self::capability()), t))).await {
            Ok(r) => r.available_capacity,
            Err(s) => return fail(format!("GetCapacity: {}", show::<()>(&Err(s)))),
        };
        let name = self.name("capacity-accounting");
        let r = self.create_request(&name, 4 * MIB);
        let v = match self.create(r).await {
            Ok(v) => v,
            Err(s) => return fail(format!("CreateVolume: {}", show::<()>(&Err(s)))),
        };
        let during = typed(t, c.get_capacity(request(ask(Self::capability()), t)))
            .await
            .map(|r| r.available_capacity);
        let _ = self.delete(&v.volume_id).await;
        let after = typed(t, c.get_capacity(request(ask(Self::capability()), t)))
            .await
            .map(|r| r.available_capacity);
        let (Ok(during), Ok(after)) = (during, after) else {
            return fail("GetCapacity failed during the case");
        };
        ensure!(
            during <= before,
            "available_capacity grew from {before} to {during} while a volume was created"
        );
        ensure!(
            after == before,
            "available_capacity is {after} after the volume was deleted, {before} before"
        );
        Outcome::Passed
    }

    async fn list_pagination(&mut self) -> Outcome {
        let mut made = Vec::new();
        for _ in 0..3 {
            let name = self.name("list");
            let r = self.create_request(&name, 0);
            match self.create(r).await {
                Ok(v) => made.push(v.volume_id),
                Err(s) => return fail(format!("CreateVolume: {}", show::<()>(&Err(s)))),
            }
        }
        let paged = match self.list_all(1).await {
            Ok(p) => p,
            Err(why) => return fail(why),
        };
        for id in &made {
            let seen = paged.iter().filter(|p| *p == id).count();
            ensure!(seen == 1, "paging one entry at a time saw volume {id} {seen} times");
        }
        for id in made {
            let _ = self.delete(&id).await;
        }
        Outcome::Passed
    }

    async fn list_bad_token(&mut self) -> Outcome {
        let t = self.t;
        let mut c = self.ctl_client();
        let r = typed(
            t,
            c.list_volumes(request(
                ListVolumesRequest {
                    max_entries: 1,
                    starting_token: "csi-conformance-never-issued".into(),
                },
                t,
            )),
        )
        .await;
        ensure!(code_is(&r, Code::Aborted), "expected ABORTED, got {}", show(&r));
        Outcome::Passed
    }

    async fn list_snapshots_bad_token(&mut self) -> Outcome {
        let t = self.t;
        let mut c = self.ctl_client();
        let r = typed(
            t,
            c.list_snapshots(request(
                ListSnapshotsRequest {
                    max_entries: 1,
                    starting_token: "csi-conformance-never-issued".into(),
                    ..ListSnapshotsRequest::default()
                },
                t,
            )),
        )
        .await;
        ensure!(code_is(&r, Code::Aborted), "expected ABORTED, got {}", show(&r));
        Outcome::Passed
    }

    async fn controller_publish(&mut self, fixture: &str) -> Outcome {
        let t = self.t;
        let mut c = self.ctl_client();
        let req = ControllerPublishVolumeRequest {
            volume_id: fixture.into(),
            node_id: self.node_id.clone(),
            volume_capability: Some(Self::capability()),
            secrets: self.secrets("ControllerPublishVolumeSecret"),
            ..ControllerPublishVolumeRequest::default()
        };
        let first = typed(t, c.controller_publish_volume(request(req.clone(), t))).await;
        ensure!(first.is_ok(), "ControllerPublishVolume: {}", show(&first));
        self.published.push((fixture.to_owned(), self.node_id.clone()));
        let again = typed(t, c.controller_publish_volume(request(req, t))).await;
        ensure!(
            again.as_ref().ok().map(|r| &r.publish_context)
                == first.as_ref().ok().map(|r| &r.publish_context),
            "ControllerPublishVolume again: expected the same answer, got {}",
            show(&again)
        );
        let un = ControllerUnpublishVolumeRequest {
            volume_id: fixture.into(),
            node_id: self.node_id.clone(),
            secrets: self.secrets("ControllerUnpublishVolumeSecret"),
        };
        for what in ["ControllerUnpublishVolume", "ControllerUnpublishVolume again"] {
            let r = typed(t, c.controller_unpublish_volume(request(un.clone(), t))).await;
            ensure!(r.is_ok(), "{what}: {}", show(&r));
        }
        self.published.retain(|(v, _)| v != fixture);
        Outcome::Passed
    }

    async fn publish_unknown(&mut self) -> Outcome {
        let t = self.t;
        let mut c = self.ctl_client();
        let req = ControllerPublishVolumeRequest {
            volume_id: UNKNOWN_VOLUME.into(),
            node_id: self.node_id.clone(),
            volume_capability: Some(Self::capability()),
            secrets: self.secrets("ControllerPublishVolumeSecret"),
            ..ControllerPublishVolumeRequest::default()
        };
        let r = typed(t, c.controller_publish_volume(request(req, t))).await;
        ensure!(code_is(&r, Code::NotFound), "expected NOT_FOUND, got {}", show(&r));
        Outcome::Passed
    }

    async fn node_lifecycle(&mut self, fixture: &str) -> Outcome {
        let t = self.t;
        let mut n = self.node_client();
        let staging = self.dir.path().join(format!("staging-{}", self.names));
        let pod = self.dir.path().join(format!("pod-{}", self.names));
        let target = pod.join("mount");
        if std::fs::create_dir_all(&staging).and_then(|()| std::fs::create_dir_all(&pod)).is_err() {
            return fail("cannot make the staging and pod folders");
        }
        let stage = self.node_has(Nd::StageUnstageVolume);
        if stage {
            let req = NodeStageVolumeRequest {
                volume_id: fixture.into(),
                staging_target_path: staging.display().to_string(),
                volume_capability: Some(Self::capability()),
                secrets: self.secrets("NodeStageVolumeSecret"),
                ..NodeStageVolumeRequest::default()
            };
            for what in ["NodeStageVolume", "NodeStageVolume again"] {
                let r = typed(t, n.node_stage_volume(request(req.clone(), t))).await;
                ensure!(r.is_ok(), "{what}: {}", show(&r));
            }
            self.staged.push((fixture.to_owned(), staging.clone()));
        }
        let req = NodePublishVolumeRequest {
            volume_id: fixture.into(),
            staging_target_path: if stage { staging.display().to_string() } else { String::new() },
            target_path: target.display().to_string(),
            volume_capability: Some(Self::capability()),
            secrets: self.secrets("NodePublishVolumeSecret"),
            ..NodePublishVolumeRequest::default()
        };
        for what in ["NodePublishVolume", "NodePublishVolume again"] {
            let r = typed(t, n.node_publish_volume(request(req.clone(), t))).await;
            ensure!(r.is_ok(), "{what}: {}", show(&r));
        }
        self.node_published.push((fixture.to_owned(), target.clone()));
        ensure!(
            target.exists(),
            "target_path {} does not exist after NodePublishVolume (creating it is the plugin's job)",
            target.display()
        );
        if self.node_has(Nd::GetVolumeStats) {
            let r = typed(
                t,
                n.node_get_volume_stats(request(
                    NodeGetVolumeStatsRequest {
                        volume_id: fixture.into(),
                        volume_path: target.display().to_string(),
                        ..NodeGetVolumeStatsRequest::default()
                    },
                    t,
                )),
            )
            .await;
            ensure!(r.is_ok(), "NodeGetVolumeStats of the published path: {}", show(&r));
        }
        let un = NodeUnpublishVolumeRequest {
            volume_id: fixture.into(),
            target_path: target.display().to_string(),
        };
        for what in ["NodeUnpublishVolume", "NodeUnpublishVolume again"] {
            let r = typed(t, n.node_unpublish_volume(request(un.clone(), t))).await;
            ensure!(r.is_ok(), "{what}: {}", show(&r));
        }
        self.node_published.retain(|(_, p)| p != &target);
        ensure!(
            !target.exists(),
            "target_path {} is still there after NodeUnpublishVolume",
            target.display()
        );
        if stage {
            let un = NodeUnstageVolumeRequest {
                volume_id: fixture.into(),
                staging_target_path: staging.display().to_string(),
            };
            for what in ["NodeUnstageVolume", "NodeUnstageVolume again"] {
                let r = typed(t, n.node_unstage_volume(request(un.clone(), t))).await;
                ensure!(r.is_ok(), "{what}: {}", show(&r));
            }
            self.staged.retain(|(_, p)| p != &staging);
        }
        Outcome::Passed
    }

    async fn node_publish_unknown(&mut self) -> Outcome {
        let t = self.t;
        let mut n = self.node_client();
        let pod = self.dir.path().join("pod-unknown");
        let _ = std::fs::create_dir_all(&pod);
        let staging = self.dir.path().join("staging-unknown");
        let _ = std::fs::create_dir_all(&staging);
        let req = NodePublishVolumeRequest {
            volume_id: UNKNOWN_VOLUME.into(),
            staging_target_path: if self.node_has(Nd::StageUnstageVolume) {
                staging.display().to_string()
            } else {
                String::new()
            },
            target_path: pod.join("mount").display().to_string(),
            volume_capability: Some(Self::capability()),
            secrets: self.secrets("NodePublishVolumeSecret"),
            ..NodePublishVolumeRequest::default()
        };
        let r = typed(t, n.node_publish_volume(request(req, t))).await;
        ensure!(code_is(&r, Code::NotFound), "expected NOT_FOUND, got {}", show(&r));
        Outcome::Passed
    }

    async fn stats_unpublished(&mut self, fixture: &str) -> Outcome {
        let t = self.t;
        let mut n = self.node_client();
        let path = self.dir.path().join("never-published").display().to_string();
        let r = typed(
            t,
            n.node_get_volume_stats(request(
                NodeGetVolumeStatsRequest {
                    volume_id: fixture.into(),
                    volume_path: path,
                    ..NodeGetVolumeStatsRequest::default()
                },
                t,
            )),
        )
        .await;
        ensure!(code_is(&r, Code::NotFound), "expected NOT_FOUND, got {}", show(&r));
        Outcome::Passed
    }

    async fn snapshot_lifecycle(&mut self, fixture: &str) -> Outcome {
        let t = self.t;
        let mut c = self.ctl_client();
        let name = self.name("snap");
        let req = CreateSnapshotRequest {
            source_volume_id: fixture.into(),
            name: name.clone(),
            secrets: self.secrets("CreateSnapshotSecret"),
            ..CreateSnapshotRequest::default()
        };
        let first = typed(t, c.create_snapshot(request(req.clone(), t))).await;
        let Ok(Some(snap)) = first.as_ref().map(|r| r.snapshot.clone()) else {
            return fail(format!("CreateSnapshot: {}", show(&first)));
        };
        self.snapshots.push(snap.snapshot_id.clone());
        let again = typed(t, c.create_snapshot(request(req, t))).await;
        ensure!(
            again
                .as_ref()
                .ok()
                .and_then(|r| r.snapshot.as_ref())
                .is_some_and(|s| s.snapshot_id == snap.snapshot_id),
            "CreateSnapshot again: expected the same snapshot, got {}",
            show(&again)
        );
        // The same name from another source is ALREADY_EXISTS.
        let other_name = self.name("snap-source");
        let other_req = self.create_request(&other_name, 0);
        if let Ok(other) = self.create(other_req).await {
            let clash = CreateSnapshotRequest {
                source_volume_id: other.volume_id.clone(),
                name,
                secrets: self.secrets("CreateSnapshotSecret"),
                ..CreateSnapshotRequest::default()
            };
            let r = typed(t, c.create_snapshot(request(clash, t))).await;
            if let Ok(Some(s)) = r.as_ref().map(|r| r.snapshot.clone()) {
                self.snapshots.push(s.snapshot_id);
            }
            ensure!(
                code_is(&r, Code::AlreadyExists),
                "the same snapshot name from another volume: expected ALREADY_EXISTS, got {}",
                show(&r)
            );
        }
        let del = DeleteSnapshotRequest {
            snapshot_id: snap.snapshot_id.clone(),
            secrets: self.secrets("DeleteSnapshotSecret"),
        };
        for what in ["DeleteSnapshot", "DeleteSnapshot again"] {
            let r = typed(t, c.delete_snapshot(request(del.clone(), t))).await;
            ensure!(r.is_ok(), "{what}: {}", show(&r));
        }
        self.snapshots.retain(|s| s != &snap.snapshot_id);
        Outcome::Passed
    }

    async fn snapshot_unknown_source(&mut self) -> Outcome {
        let t = self.t;
        let mut c = self.ctl_client();
        let name = self.name("snap-unknown");
        let req = CreateSnapshotRequest {
            source_volume_id: UNKNOWN_VOLUME.into(),
            name,
            secrets: self.secrets("CreateSnapshotSecret"),
            ..CreateSnapshotRequest::default()
        };
        let r = typed(t, c.create_snapshot(request(req, t))).await;
        if let Ok(Some(s)) = r.as_ref().map(|r| r.snapshot.clone()) {
            self.snapshots.push(s.snapshot_id);
        }
        ensure!(code_is(&r, Code::NotFound), "expected NOT_FOUND, got {}", show(&r));
        Outcome::Passed
    }

    async fn expand(&mut self, fixture: &str) -> Outcome {
        let t = self.t;
        let mut c = self.ctl_client();
        let grow = |id: &str, secrets| ControllerExpandVolumeRequest {
            volume_id: id.into(),
            capacity_range: Some(CapacityRange { required_bytes: 64 * MIB, limit_bytes: 0 }),
            secrets,
            volume_capability: Some(Self::capability()),
        };
        let secrets = self.secrets("ControllerExpandVolumeSecret");
        let r =
            typed(t, c.controller_expand_volume(request(grow(fixture, secrets.clone()), t))).await;
        ensure!(
            r.as_ref().is_ok_and(|r| r.capacity_bytes == 0 || r.capacity_bytes >= 64 * MIB),
            "ControllerExpandVolume to 64 MiB: {}",
            r.as_ref().map_or_else(
                |e| show::<()>(&Err(e.clone())),
                |r| format!("{} bytes", r.capacity_bytes)
            )
        );
        let r =
            typed(t, c.controller_expand_volume(request(grow(UNKNOWN_VOLUME, secrets), t))).await;
        ensure!(
            code_is(&r, Code::NotFound),
            "ControllerExpandVolume of an unknown volume: expected NOT_FOUND, got {}",
            show(&r)
        );
        Outcome::Passed
    }

    async fn get_volume_unknown(&mut self) -> Outcome {
        let t = self.t;
        let mut c = self.ctl_client();
        let r = typed(
            t,
            c.controller_get_volume(request(
                ControllerGetVolumeRequest { volume_id: UNKNOWN_VOLUME.into() },
                t,
            )),
        )
        .await;
        ensure!(code_is(&r, Code::NotFound), "expected NOT_FOUND, got {}", show(&r));
        Outcome::Passed
    }
}

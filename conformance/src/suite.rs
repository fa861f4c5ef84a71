//! The suite's side of the connection: what the plugin advertises (read at connection), what the
//! suite made on it (for the clean-up), and the calls every case makes through, each with the
//! suite's deadline, each answer checked against the spec's facts (REQUIRED response fields, size
//! limits, non-negative numbers), for the secret values sent, and by [`crate::answers`] with the
//! suite's memory of earlier answers.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use csikit::v1::controller_service_capability::rpc::Type as Ctl;
use csikit::v1::node_service_capability::rpc::Type as Nd;
use csikit::v1::volume_capability::access_mode::Mode;
use csikit::v1::volume_capability::{AccessMode, AccessType, BlockVolume, MountVolume};
use csikit::v1::{
    CapacityRange, ControllerGetCapabilitiesRequest, ControllerPublishVolumeRequest,
    ControllerUnpublishVolumeRequest, CreateVolumeRequest, DeleteVolumeRequest,
    DeleteVolumeResponse, GetPluginCapabilitiesRequest, GetPluginInfoRequest,
    GroupControllerGetCapabilitiesRequest, ListVolumesRequest, NodeGetCapabilitiesRequest,
    NodeGetInfoRequest, Topology, Volume, VolumeCapability,
};
use csikit::validate::RuleId;
use tonic::transport::Channel;
use tonic::{Code, Status};

use crate::advertised::Advertised;
use crate::answers::{Against, Answers, Problem};
use crate::client::Endpoint;
use crate::config::Config;
use crate::report::Outcome;
use crate::sentence::{Sentence, general};

/// A volume id, a snapshot id and a group snapshot id no plugin has issued.
pub(crate) const UNKNOWN_VOLUME: &str = "csi-conformance-no-such-volume";
pub(crate) const UNKNOWN_SNAPSHOT: &str = "csi-conformance-no-such-snapshot";
pub(crate) const UNKNOWN_GROUP: &str = "csi-conformance-no-such-group-snapshot";
pub(crate) const MIB: i64 = 1 << 20;
/// The key of the canary secret sent when no secrets file is given.
const CANARY_KEY: &str = "csi-conformance-canary";

pub(crate) struct Suite {
    pub(crate) ch: Channel,
    pub(crate) cfg: Config,
    pub(crate) t: Duration,
    /// What the plugin advertises.
    pub(crate) plugin: Advertised,
    /// NodeGetInfo's `accessible_topology`.
    pub(crate) node_topology: Option<Topology>,
    /// NodeGetInfo's `max_volumes_per_node` (0: not said).
    pub(crate) max_volumes: i64,
    pub(crate) node_id: String,
    dir: tempfile::TempDir,
    /// The volume most cases work on (an id never issued when none could be made).
    pub(crate) fixture: String,
    /// Volumes are asked for as block devices: the plugin refused a mount and took a block one.
    pub(crate) block: bool,
    pub(crate) volumes: Vec<String>,
    pub(crate) snapshots: Vec<String>,
    /// Group snapshots to delete: (group, its snapshots).
    pub(crate) groups: Vec<(String, Vec<String>)>,
    /// Controller publications to undo: (volume, node).
    pub(crate) published: Vec<(String, String)>,
    /// Node paths to undo: (volume, target) and (volume, staging).
    pub(crate) node_published: Vec<(String, PathBuf)>,
    pub(crate) staged: Vec<(String, PathBuf)>,
    names: u64,
    pub(crate) sent_secrets: BTreeSet<String>,
    /// The canary secret's value (see [`Suite::secrets`]).
    canary: String,
    /// What the answers since the last [`Suite::take_problems`] broke.
    problems: Mutex<Vec<Problem>>,
    /// What earlier answers said ([`crate::answers`]).
    answers: Mutex<Answers>,
}

impl Suite {
    /// Connects and learns what the plugin advertises.
    pub(crate) async fn connect(endpoint: &Endpoint, cfg: &Config) -> Result<Suite, String> {
        let t = cfg.timeout;
        let ch = crate::client::connect(endpoint, t).await?;
        let dir = tempfile::Builder::new()
            .prefix("csi-conformance-")
            .tempdir()
            .map_err(|e| format!("cannot make a temporary folder: {e}"))?;
        let mut suite = Suite {
            ch,
            cfg: cfg.clone(),
            t,
            plugin: Advertised::default(),
            node_topology: None,
            max_volumes: 0,
            node_id: "csi-conformance-node".into(),
            dir,
            fixture: UNKNOWN_VOLUME.into(),
            block: false,
            volumes: Vec::new(),
            snapshots: Vec::new(),
            groups: Vec::new(),
            published: Vec::new(),
            node_published: Vec::new(),
            staged: Vec::new(),
            names: 0,
            sent_secrets: BTreeSet::new(),
            canary: format!(
                "csi-conformance-canary-{}-{}",
                std::process::id(),
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.subsec_nanos())
            ),
            problems: Mutex::new(Vec::new()),
            answers: Mutex::default(),
        };
        suite.discover().await?;
        Ok(suite)
    }

    async fn discover(&mut self) -> Result<(), String> {
        let said = |rpc: &str, s: Status| format!("{rpc}: {}", show_status(&s));
        let info = self
            .ask(GetPluginInfoRequest {})
            .await
            .map_err(|s| format!("{} (is this a CSI plugin?)", said("GetPluginInfo", s)))?;
        if info.name.is_empty() {
            return Err("GetPluginInfo answered an empty name".into());
        }
        let caps = self
            .ask(GetPluginCapabilitiesRequest {})
            .await
            .map_err(|s| said("GetPluginCapabilities", s))?;
        self.plugin = Advertised::from_plugin(&caps);
        if self.plugin.controller() {
            let r = self
                .ask(ControllerGetCapabilitiesRequest {})
                .await
                .map_err(|s| said("ControllerGetCapabilities", s))?;
            self.plugin.read_controller(&r);
        }
        if self.plugin.group_service() {
            // An error here is the obligation case's to report; the group cases then skip.
            if let Ok(r) = self.ask(GroupControllerGetCapabilitiesRequest {}).await {
                self.plugin.read_group(&r);
            }
        }
        match self.ask(NodeGetCapabilitiesRequest {}).await {
            Ok(r) => self.plugin.read_node(&r),
            Err(s) if s.code() == Code::Unimplemented => {}
            Err(s) => return Err(said("NodeGetCapabilities", s)),
        }
        if self.plugin.has_node {
            let info = self.ask(NodeGetInfoRequest {}).await.map_err(|s| said("NodeGetInfo", s))?;
            self.node_id = info.node_id;
            self.node_topology = info.accessible_topology;
            self.max_volumes = info.max_volumes_per_node;
        }
        Ok(())
    }

    /// A name no other call of this run uses.
    pub(crate) fn name(&mut self, what: &str) -> String {
        self.names += 1;
        format!("csi-conformance-{what}-{}-{}", std::process::id(), self.names)
    }

    /// The folder paths are made under: `given`, else the run's temporary folder; made absolute,
    /// since the paths the CO sends "MUST be an absolute path in the root filesystem of the
    /// process serving this request", and a plugin resolves a relative one against its own
    /// working folder, not the suite's.
    fn base(&self, given: Option<&PathBuf>) -> Result<PathBuf, String> {
        let base = given.cloned().unwrap_or_else(|| self.dir.path().to_owned());
        std::path::absolute(&base)
            .map_err(|e| format!("cannot make '{}' an absolute path: {e}", base.display()))
    }

    /// A fresh folder for a staging path (under `--csi.stagingdir` when given), made.
    pub(crate) fn staging_dir(&mut self) -> Result<PathBuf, String> {
        let base = self.base(self.cfg.staging_dir.as_ref())?;
        let dir = base.join(self.name("staging"));
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot make the staging folder '{}': {e}", dir.display()))?;
        Ok(dir)
    }

    /// A fresh target path whose parent (the CO's to make) exists and which does not (the
    /// plugin's to make), under `--csi.mountdir` when given.
    pub(crate) fn target_path(&mut self) -> Result<PathBuf, String> {
        let base = self.base(self.cfg.mount_dir.as_ref())?;
        let pod = base.join(self.name("pod"));
        std::fs::create_dir_all(&pod)
            .map_err(|e| format!("cannot make the pod folder '{}': {e}", pod.display()))?;
        Ok(pod.join("mount"))
    }

    /// The secrets for a call of `rpc` (`CreateVolume`: the file's kind for it, csi-sanity's
    /// `CreateVolumeSecret`), remembered to look for in answers and the log. With no secrets file, one canary secret (a key of its own, a value unique to the run) is
    /// sent in every `secrets` field, so a plugin that echoes secrets into an answer or its log
    /// is still seen.
    pub(crate) fn secrets(&mut self, rpc: &str) -> HashMap<String, String> {
        let s = if self.cfg.secrets.is_empty() {
            HashMap::from([(CANARY_KEY.to_owned(), self.canary.clone())])
        } else {
            self.cfg.secrets.for_rpc(rpc)
        };
        self.sent_secrets.extend(s.values().filter(|v| !v.is_empty()).cloned());
        s
    }

    pub(crate) fn violations(&self, name: &str, v: &csikit::Violations) {
        for one in v.iter() {
            let path = crate::generated::plain(&one.path);
            let sentence = match one.rule {
                RuleId::MaxBytes | RuleId::MaxTotalBytes => general::RESPONSE_SIZE,
                RuleId::NonNegative => general::NON_NEGATIVE,
                RuleId::SecretKey => general::RESPONSE_SECRET_KEYS,
                RuleId::ControlChars => general::RESPONSE_CONTROL_CHARS,
                // Required, and the rules of a message as a whole.
                _ => general::REQUIRED,
            };
            self.problem(
                format!("{name}.{path}: {}", one.rule),
                format!("{name}: {one}"),
                sentence,
            );
        }
    }

    pub(crate) fn enums(&self, full_name: &str, name: &str, bytes: &[u8]) {
        for one in crate::generated::undeclared_enums(full_name, bytes) {
            let path = one.split(':').next().unwrap_or_default();
            let key = format!("{name}.{}: an undeclared enum value", crate::generated::plain(path));
            self.problem(key, format!("{name}: {one}"), general::DECLARED_ENUM);
        }
    }

    pub(crate) fn scan(&self, what: &str, bytes: &[u8]) {
        let leaked =
            self.sent_secrets.iter().any(|s| bytes.windows(s.len()).any(|w| w == s.as_bytes()));
        if leaked {
            // Say where, never the value.
            let key = format!("{what} holds a secret value the suite sent");
            self.problem(key.clone(), key, general::SECRETS);
        }
    }

    pub(crate) fn problem(&self, key: String, detail: String, sentence: Sentence) {
        self.problems.lock().unwrap_or_else(PoisonError::into_inner).push(Problem {
            key,
            detail,
            sentence,
        });
    }

    /// Runs answer checks ([`crate::answers`]) with the suite's memory of earlier answers,
    /// what the plugin advertises and the suite's standing publications; what they find is a
    /// problem of the running case.
    pub(crate) fn check_answer(
        &self,
        check: impl FnOnce(&mut Answers, Against<'_>, &mut Vec<Problem>),
    ) {
        let against = Against { plugin: &self.plugin, published: &self.published };
        let mut answers = self.answers.lock().unwrap_or_else(PoisonError::into_inner);
        let mut problems = self.problems.lock().unwrap_or_else(PoisonError::into_inner);
        check(&mut answers, against, &mut problems);
    }

    /// What the answers since the last call broke (REQUIRED response fields, limits, enum
    /// values, secrets).
    pub(crate) fn take_problems(&self) -> Vec<Problem> {
        std::mem::take(&mut *self.problems.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// The capability the suite asks for: a SINGLE_NODE_WRITER mount, or a block device for a
    /// block-only plugin (one that refused the mount fixture and took a block one).
    pub(crate) fn capability(&self) -> VolumeCapability {
        self.capability_with(Mode::SingleNodeWriter)
    }

    /// [`Suite::capability`] in another access mode.
    pub(crate) fn capability_with(&self, mode: Mode) -> VolumeCapability {
        self.capability_typed(mode, false)
    }

    /// [`Suite::capability_with`], a block device when `block` (else the suite's type).
    pub(crate) fn capability_typed(&self, mode: Mode, block: bool) -> VolumeCapability {
        let access_type = if block || self.block {
            AccessType::Block(BlockVolume::default())
        } else {
            AccessType::Mount(MountVolume::default())
        };
        VolumeCapability {
            access_type: Some(access_type),
            access_mode: Some(AccessMode { mode: mode as i32 }),
        }
    }

    /// The staging path to send to NodeStageVolume and NodePublishVolume: a fresh folder when
    /// the node stages, else empty.
    pub(crate) fn staging_for_publish(&mut self) -> Result<String, String> {
        if self.plugin.node_has(Nd::StageUnstageVolume) {
            Ok(self.staging_dir()?.display().to_string())
        } else {
            Ok(String::new())
        }
    }

    /// What a CO does before the node uses a volume: ControllerPublishVolume to the node when
    /// the plugin advertises PUBLISH_UNPUBLISH_VOLUME (remembered for the clean-up); its
    /// `publish_context`, empty otherwise.
    pub(crate) async fn publish_for_node(
        &mut self,
        volume: &str,
        cap: VolumeCapability,
    ) -> Result<HashMap<String, String>, String> {
        if !self.plugin.has(Ctl::PublishUnpublishVolume) {
            return Ok(HashMap::new());
        }
        let req = ControllerPublishVolumeRequest {
            volume_id: volume.into(),
            node_id: self.node_id.clone(),
            volume_capability: Some(cap),
            secrets: self.secrets("ControllerPublishVolume"),
            ..ControllerPublishVolumeRequest::default()
        };
        let r = self
            .ask(req)
            .await
            .map_err(|e| format!("ControllerPublishVolume: {}", show_status(&e)))?;
        self.published.push((volume.to_owned(), self.node_id.clone()));
        Ok(r.publish_context)
    }

    /// Undoes [`Suite::publish_for_node`].
    pub(crate) async fn unpublish_for_node(&mut self, volume: &str) -> Result<(), String> {
        if !self.plugin.has(Ctl::PublishUnpublishVolume) {
            return Ok(());
        }
        let req = ControllerUnpublishVolumeRequest {
            volume_id: volume.into(),
            node_id: self.node_id.clone(),
            secrets: self.secrets("ControllerUnpublishVolume"),
        };
        self.ask(req)
            .await
            .map_err(|e| format!("ControllerUnpublishVolume: {}", show_status(&e)))?;
        self.published.retain(|(v, _)| v != volume);
        Ok(())
    }

    /// A plain CreateVolume request: the capability, `--csi.testvolumeparameters`, the secrets.
    pub(crate) fn create_request(&mut self, name: &str, required: i64) -> CreateVolumeRequest {
        CreateVolumeRequest {
            name: name.to_owned(),
            capacity_range: (required > 0)
                .then_some(CapacityRange { required_bytes: required, limit_bytes: 0 }),
            volume_capabilities: vec![self.capability()],
            parameters: self.cfg.volume_parameters.clone(),
            secrets: self.secrets("CreateVolume"),
            ..CreateVolumeRequest::default()
        }
    }

    /// CreateVolume, the volume remembered for the clean-up.
    pub(crate) async fn create(&mut self, r: CreateVolumeRequest) -> Result<Volume, Status> {
        let v = self.ask(r).await?;
        let v = v.volume.ok_or_else(|| Status::internal("CreateVolume answered no volume"))?;
        self.adopt_volume(&v.volume_id);
        Ok(v)
    }

    /// Remembers a volume for the clean-up.
    pub(crate) fn adopt_volume(&mut self, id: &str) {
        if !id.is_empty() && !self.volumes.iter().any(|v| v == id) {
            self.volumes.push(id.to_owned());
        }
    }

    /// Remembers a snapshot for the clean-up.
    pub(crate) fn adopt_snapshot(&mut self, id: &str) {
        if !id.is_empty() && !self.snapshots.iter().any(|s| s == id) {
            self.snapshots.push(id.to_owned());
        }
    }

    /// A volume made for one case, or why not.
    pub(crate) async fn fresh_volume(&mut self, what: &str, bytes: i64) -> Result<Volume, String> {
        let name = self.name(what);
        let r = self.create_request(&name, bytes);
        self.create(r).await.map_err(|s| format!("CreateVolume: {}", show_status(&s)))
    }

    /// DeleteVolume; a volume gone is forgotten.
    pub(crate) async fn delete(&mut self, id: &str) -> Result<DeleteVolumeResponse, Status> {
        let secrets = self.secrets("DeleteVolume");
        let r = self.ask(DeleteVolumeRequest { volume_id: id.into(), secrets }).await;
        if r.is_ok() {
            self.volumes.retain(|v| v != id);
        }
        r
    }

    /// Every volume id ListVolumes gives, following its tokens.
    pub(crate) async fn list_all(&mut self, max_entries: i32) -> Result<Vec<String>, String> {
        let mut out = Vec::new();
        let mut token = String::new();
        for _ in 0..10_000 {
            let r = self
                .ask(ListVolumesRequest { max_entries, starting_token: token.clone() })
                .await
                .map_err(|s| format!("ListVolumes: {}", show_status(&s)))?;
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
}

/// The spec's name of a code: `NOT_FOUND`.
pub(crate) fn code_name(code: Code) -> &'static str {
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "CANCELLED",
        Code::Unknown => "UNKNOWN",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::NotFound => "NOT_FOUND",
        Code::AlreadyExists => "ALREADY_EXISTS",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::Aborted => "ABORTED",
        Code::OutOfRange => "OUT_OF_RANGE",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::Internal => "INTERNAL",
        Code::Unavailable => "UNAVAILABLE",
        Code::DataLoss => "DATA_LOSS",
        Code::Unauthenticated => "UNAUTHENTICATED",
    }
}

/// `NOT_FOUND: volume 'x' does not exist`.
pub(crate) fn show_status(s: &Status) -> String {
    format!("{}: {}", code_name(s.code()), s.message())
}

/// `OK`, or the status.
pub(crate) fn show<T>(result: &Result<T, Status>) -> String {
    match result {
        Ok(_) => "OK".into(),
        Err(s) => show_status(s),
    }
}

/// The one shape of a call's check: `what` must have answered `code` (`Code::Ok`: success).
pub(crate) fn expect<T>(result: &Result<T, Status>, code: Code, what: &str) -> Outcome {
    let got = match result {
        Ok(_) => Code::Ok,
        Err(s) => s.code(),
    };
    if got == code {
        Outcome::Passed
    } else {
        Outcome::Failed(format!("{what}: expected {}, got {}", code_name(code), show(result)))
    }
}

/// Checks a condition inside a case: the case fails with the words when it does not hold.
macro_rules! ensure {
    ($cond:expr, $($why:tt)+) => {
        if !$cond {
            return $crate::report::Outcome::Failed(format!($($why)+));
        }
    };
}
pub(crate) use ensure;

/// Ends a case with the outcome unless it passed.
macro_rules! check {
    ($outcome:expr) => {
        match $outcome {
            $crate::report::Outcome::Passed => {}
            other => return other,
        }
    };
}
pub(crate) use check;

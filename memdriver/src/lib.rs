//! memdriver: an in-memory CSI v1.13.0 plugin, the reference driver for csikit's server skeleton.
//!
//! It provisions nothing real: volumes, snapshots, publications, staging and target paths are
//! records in memory, gone when the process exits. What it does keep is the spec's behaviour for
//! each RPC: idempotent retries answer the same, `CreateVolume` with a known name and other
//! arguments is `ALREADY_EXISTS`, unknown ids are `NOT_FOUND` where the error tables say so,
//! `DeleteVolume` and the unpublish/unstage calls are `OK` when there is nothing to undo,
//! `NodePublishVolume` needs a staged path, and capacity comes out of a fixed pool. Group
//! snapshots (the GroupController service, with `MEMDRIVER_GROUP_CONTROLLER=1`) are one snapshot
//! per volume, deleted with the group only; the one node it serves has the topology `{memdriver.csikit.dev/node: <node id>}`, which
//! every volume reports and a `requisite` must name (VOLUME_ACCESSIBILITY_CONSTRAINTS).
//!
//! The skeleton (`csikit::server`) does the rest: Identity, capabilities derived from the RPCs
//! implemented here, required-field validation, per-volume serialisation (`ABORTED` for an
//! overlapping call), logging that never carries secret values, and graceful shutdown.
//!
//! # Configuration
//!
//! | variable | meaning |
//! |---|---|
//! | `CSI_ENDPOINT` | `unix:///path/csi.sock` or `tcp://host:port` (required) |
//! | `MEMDRIVER_NODE_ID` | the node id `NodeGetInfo` reports and `ControllerPublishVolume` accepts (default: the host name, else `memdriver-node`) |
//! | `MEMDRIVER_REQUIRE_SECRET` | `key=value`: every request with a `secrets` field must carry this secret, else `UNAUTHENTICATED` |
//! | `MEMDRIVER_FAULT` | one bug on purpose, for testing conformance suites (see [`fault::Fault`]): `no-validation`, `create-not-idempotent`, `internal-for-unknown`, `delete-not-found`, `log-secrets`, `ignore-token`, `accept-bad-token`, `no-target-path`, `ignore-capacity`, `unpublish-not-idempotent`, `no-already-exists`, `stats-any-path`, `snapshot-not-idempotent`, `leak-on-delete`, `accept-any-mutable`, `get-snapshot-other`, `single-writer-twice`, `list-shifts-under-creation`, `publish-any-node`, `missing-source-empty`, `validate-unknown-volume`, `stats-unknown-volume`, `list-snapshots-unknown-id-all`, `unpublish-unknown-ok`, `republish-incompatible-ok`; and those only a history of calls shows (csi-conformance explore finds them): `reuse-name-after-delete`, `list-snapshots-first-of-source`, `expand-not-listed`, `snapshot-dies-with-source`, `unpublish-keeps-node`, `unstage-keeps-path`, `node-unpublish-keeps-record`, `third-unpublish-keeps-node`, `restore-size-of-origin`, `create-retry-no-source`, `snapshot-retry-size-now`, `validate-unconfirmed-when-published`, `member-deleted-alone`, `list-token-stale-sizes`, `delete-in-use-forgets`, `unstage-any-path`, `unpublish-any-target`, `clone-limit-of-created-size`, `member-get-no-group-id`, `list-snapshots-time-now`, `read-source-of-origin`, `list-snapshots-token-stale`, `unstage-first-path`, `target-keeps-readonly`, `snapshot-retry-unready-after-restore`, `list-snapshots-two-paths`, `clone-chain-refused`, `group-delete-trusts-list`, `retry-sized-by-range`, `stats-lost-by-other-unpublish`, `member-restore-refused`, `clone-of-expanded-internal`, `block-target-folder`, `node-expand-shrinks`, `expand-past-saves`, `expand-rounds-past-limit`, `modify-refused-applies`, `group-keeps-partial`; and the health faults: `health-no-volume-health`, `health-other-volume-id`, `health-no-reason`, `health-unknown-status`, `health-duplicate-entry`, `storage-duplicate-backend`, `health-ignore-max-entries`, `health-token-never-ends`, `health-secret-in-message` |
//! | `MEMDRIVER_HEALTH` | on by default: memdriver serves the four health RPCs of CSI v1.13.0 and advertises their capabilities. `0` (or `false`) leaves them out, for CO tools still on CSI v1.12.0: csi-sanity (csi-test v5.5.0 and older) fails its ControllerGetCapabilities and NodeGetCapabilities cases on any capability it does not know ("Unknown capability": GET_VOLUME_HEALTH, LIST_VOLUME_HEALTH, GET_STORAGE_HEALTH); off, they answer `UNIMPLEMENTED` and are not advertised |
//! | `MEMDRIVER_STORAGE_HEALTH` | `<StorageHealthErrorType name>:<CamelCaseReason>` (e.g. `STORAGE_DEGRADED:PathDown`): the one backend entry `NodeGetStorageHealth` answers; unset: healthy, no entries; a bad value: memdriver refuses to start |
//! | `MEMDRIVER_MUTABLE_PARAMETERS` | the mutable parameter names `CreateVolume` and `ControllerModifyVolume` accept, comma-separated (as csi-driver-host-path's `--accepted-mutable-parameter-names`); others are refused with `INVALID_ARGUMENT` and nothing is applied. Unset: [`DEFAULT_MUTABLE_PARAMETERS`] (`iops`, `throughput`); set but empty: none |
//! | `MEMDRIVER_GROUP_CONTROLLER` | `1` (or `true`): serve the GroupController service (group snapshots). Off by default: csi-sanity v5.4.0 sends GetVolumeGroupSnapshot and DeleteVolumeGroupSnapshot without their REQUIRED `snapshot_ids` and expects NOT_FOUND and OK, where the skeleton answers the general table's INVALID_ARGUMENT, so a driver's CI running csi-sanity would fail two cases it should not |
//! | `MEMDRIVER_MAX_VOLUMES_PER_NODE` | how many volumes may be controller-published to the node at once (`NodeGetInfo`'s `max_volumes_per_node`; one more is `RESOURCE_EXHAUSTED`); unset or 0: no limit |
//! | `RUST_LOG` | log filter (default `info`); logs go to stderr |
//!
//! # The delay hook
//!
//! A `CreateVolume` parameter [`DELAY_KEY`] (`memdriver.csikit.dev/delay-ms`) holding a number
//! of milliseconds makes that `CreateVolume` sleep that long before it provisions. The key is
//! copied into the volume's `volume_context`, which the CO passes back to `NodeStageVolume` and
//! `NodePublishVolume`; they sleep too. Tests use it to hold a call in flight while a second call
//! for the same volume arrives (which the skeleton answers `ABORTED`). Delays are capped at 60 s.
//!
//! # Health (CSI v1.13.0, alpha)
//!
//! The four health RPCs are served and their capabilities derived: controller GET_VOLUME_HEALTH
//! and LIST_VOLUME_HEALTH, node GET_VOLUME_HEALTH and GET_STORAGE_HEALTH (with
//! `MEMDRIVER_HEALTH=0` they are left out of the derivation). A volume created with
//! the parameter [`HEALTH_KEY`] (`memdriver.csikit.dev/health=<VolumeHealthErrorType name>`,
//! and optionally [`HEALTH_REASON_KEY`], `memdriver.csikit.dev/health-reason=<CamelCase>`)
//! reports that condition from all three volume-health RPCs; `ControllerListVolumeHealth` lists
//! only such volumes, paged as `ListVolumes` is. A bad value of either parameter is
//! `INVALID_ARGUMENT` on `CreateVolume`.
//!
//! Modules: `driver` (the plugin's state and each RPC's semantics, by service), `service` (the
//! thin `#[csi_service]` trait impls handing requests to it) and `fault` (the planted bugs).

pub mod driver;
pub mod fault;
pub mod service;

pub use driver::{
    Config, DEFAULT_MUTABLE_PARAMETERS, DELAY_KEY, Driver, HEALTH_KEY, HEALTH_REASON_KEY,
    TOPOLOGY_KEY,
};

use std::sync::{Arc, OnceLock};

use csikit::server::Registration;
use csikit::v1::server::{Controller, Node, Spec};

use csikit::v1::controller_service_capability::rpc::Type as ControllerCapability;
use csikit::v1::node_service_capability::rpc::Type as NodeCapability;
use csikit::v1::plugin_capability::service::Type as ServiceType;
use csikit::v1::plugin_capability::volume_expansion::Type as ExpansionType;
use csikit::v1::plugin_capability::{Service, Type as PluginCapability, VolumeExpansion};

/// The plugin name reported by `GetPluginInfo`.
pub const PLUGIN_NAME: &str = "memdriver.csikit.dev";

impl Config {
    /// Reads `MEMDRIVER_NODE_ID`, `MEMDRIVER_REQUIRE_SECRET`, `MEMDRIVER_FAULT`,
    /// `MEMDRIVER_MUTABLE_PARAMETERS`, `MEMDRIVER_GROUP_CONTROLLER`,
    /// `MEMDRIVER_MAX_VOLUMES_PER_NODE`, `MEMDRIVER_HEALTH` and `MEMDRIVER_STORAGE_HEALTH`.
    ///
    /// # Errors
    ///
    /// When one of them is set to a value it cannot read (`MEMDRIVER_REQUIRE_SECRET` not
    /// `key=value`, `MEMDRIVER_STORAGE_HEALTH` not `<status>:<Reason>`, ...): the message names
    /// the variable and what it allows.
    pub fn from_env() -> Result<Config, String> {
        let node_id = std::env::var("MEMDRIVER_NODE_ID")
            .ok()
            .filter(|s| !s.is_empty())
            .or_else(host_name)
            .unwrap_or_else(|| "memdriver-node".to_owned());
        let required_secret =
            match std::env::var("MEMDRIVER_REQUIRE_SECRET") {
                Ok(spec) => match spec.split_once('=') {
                    Some((key, value)) if !key.is_empty() && !value.is_empty() => {
                        Some((key.to_owned(), value.to_owned()))
                    }
                    // The value is a secret: say what is wrong without echoing it.
                    _ => return Err(
                        "MEMDRIVER_REQUIRE_SECRET must be 'key=value' with both parts non-empty"
                            .to_owned(),
                    ),
                },
                Err(_) => None,
            };
        let fault = crate::fault::Fault::from_env()?;
        let mutable_parameters = match std::env::var("MEMDRIVER_MUTABLE_PARAMETERS") {
            Ok(names) => names
                .split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_owned)
                .collect(),
            Err(_) => Config::default().mutable_parameters,
        };
        let group_controller = match std::env::var("MEMDRIVER_GROUP_CONTROLLER") {
            Ok(v) => match v.trim() {
                "1" | "true" => true,
                "" | "0" | "false" => false,
                _ => {
                    return Err("MEMDRIVER_GROUP_CONTROLLER must be 1, true, 0 or false".to_owned());
                }
            },
            Err(_) => false,
        };
        let health = match std::env::var("MEMDRIVER_HEALTH") {
            Ok(v) => match v.trim() {
                "1" | "true" => true,
                "" | "0" | "false" => false,
                _ => return Err("MEMDRIVER_HEALTH must be 1, true, 0 or false".to_owned()),
            },
            Err(_) => true,
        };
        let storage_health = match std::env::var("MEMDRIVER_STORAGE_HEALTH") {
            Ok(v) if !v.is_empty() => Some(driver::StorageCondition::parse(&v)?),
            _ => None,
        };
        let max_volumes_per_node = match std::env::var("MEMDRIVER_MAX_VOLUMES_PER_NODE") {
            Ok(v) => v.trim().parse::<i64>().ok().filter(|n| *n >= 0).ok_or_else(|| {
                "MEMDRIVER_MAX_VOLUMES_PER_NODE must be a number of volumes, 0 or more".to_owned()
            })?,
            Err(_) => 0,
        };
        Ok(Config {
            node_id,
            required_secret,
            fault,
            mutable_parameters,
            group_controller,
            max_volumes_per_node,
            health,
            storage_health,
            ..Config::default()
        })
    }
}

/// The plugin as the binary serves it: the skeleton's builder with memdriver's services and the
/// capabilities that cannot be derived, for `serve_from_env` (the binary) or `build` and
/// `into_routes` (tests that serve it in process). Request validation is off only with the
/// `no-validation` fault; response validation (debug builds) only with a fault whose answers
/// break a REQUIRED field.
pub fn builder(driver: Arc<Driver>) -> csikit::server::Builder {
    let fault = driver.config().fault;
    let no_validation = fault == Some(fault::Fault::NoValidation);
    let bad_answers = fault.is_some_and(fault::Fault::breaks_required_answer_fields);
    let group_controller = driver.config().group_controller;
    let health = driver.config().health;
    let mut builder = csikit::server::Builder::new(PLUGIN_NAME, env!("CARGO_PKG_VERSION")).layers(
        csikit::server::Layers {
            validate_requests: !no_validation,
            validate_responses: csikit::server::Layers::default().validate_responses
                && !bad_answers,
            ..csikit::server::Layers::default()
        },
    );
    builder = if health {
        builder.controller(service::ControllerService(driver.clone()))
    } else {
        builder.register(controller_without_health(driver.clone()))
    };
    if group_controller {
        builder = builder.group_controller(service::GroupControllerService(driver.clone()));
    }
    builder = if health {
        builder.node(service::NodeService(driver))
    } else {
        builder.register(node_without_health(driver))
    };
    builder
        // What the RPCs implemented cannot tell: behaviour inside them.
        .controller_capability(ControllerCapability::CloneVolume)
        .controller_capability(ControllerCapability::PublishReadonly)
        .controller_capability(ControllerCapability::ListVolumesPublishedNodes)
        .controller_capability(ControllerCapability::SingleNodeMultiWriter)
        .node_capability(NodeCapability::SingleNodeMultiWriter)
        .plugin_capability(PluginCapability::VolumeExpansion(VolumeExpansion {
            r#type: ExpansionType::Online as i32,
        }))
        // NodeGetInfo and every volume name the node's topology (`TOPOLOGY_KEY`).
        .plugin_capability(PluginCapability::Service(Service {
            r#type: ServiceType::VolumeAccessibilityConstraints as i32,
        }))
}

/// `implemented` but the health RPCs, computed once into `cache` (a registration holds a
/// `'static` list).
fn without_health_rpcs(
    implemented: &'static [&'static str],
    cache: &'static OnceLock<Vec<&'static str>>,
) -> &'static [&'static str] {
    cache.get_or_init(|| {
        implemented.iter().copied().filter(|m| !driver::HEALTH_RPCS.contains(m)).collect()
    })
}

/// The Controller service registered with its health RPCs left out of what the skeleton derives
/// the capabilities from (they answer `UNIMPLEMENTED` without `MEMDRIVER_HEALTH`).
fn controller_without_health(driver: Arc<Driver>) -> Registration<Spec> {
    static METHODS: OnceLock<Vec<&'static str>> = OnceLock::new();
    let service = Arc::new(service::ControllerService(driver));
    let methods = without_health_rpcs(Controller::implemented(&*service), &METHODS);
    Registration::new("Controller", methods, move |routes, pipeline, derived| {
        routes.add_service(
            csikit::v1::server::ControllerService::new(
                service,
                Arc::clone(pipeline),
                Arc::clone(derived),
            )
            .into_server(),
        )
    })
}

/// The Node service as [`controller_without_health`] registers the Controller.
fn node_without_health(driver: Arc<Driver>) -> Registration<Spec> {
    static METHODS: OnceLock<Vec<&'static str>> = OnceLock::new();
    let service = Arc::new(service::NodeService(driver));
    let methods = without_health_rpcs(Node::implemented(&*service), &METHODS);
    Registration::new("Node", methods, move |routes, pipeline, derived| {
        routes.add_service(
            csikit::v1::server::NodeService::new(
                service,
                Arc::clone(pipeline),
                Arc::clone(derived),
            )
            .into_server(),
        )
    })
}

/// The host name from the kernel, without a libc call.
fn host_name() -> Option<String> {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").ok()?;
    let name = name.trim();
    (!name.is_empty()).then(|| name.to_owned())
}

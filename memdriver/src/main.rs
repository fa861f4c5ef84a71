//! The `memdriver` binary: reads its configuration from the environment, installs the log
//! subscriber and serves the in-memory plugin on `CSI_ENDPOINT` until SIGTERM or SIGINT.
//!
//! Exit codes: 0 after a clean shutdown, 1 when the configuration is bad or serving fails.

use std::process::ExitCode;
use std::sync::Arc;

use csikit::v1::controller_service_capability::rpc::Type as ControllerCapability;
use csikit::v1::node_service_capability::rpc::Type as NodeCapability;
use csikit::v1::plugin_capability::service::Type as ServiceType;
use csikit::v1::plugin_capability::volume_expansion::Type as ExpansionType;
use csikit::v1::plugin_capability::{Service, Type as PluginCapability, VolumeExpansion};
use memdriver::service::{ControllerService, GroupControllerService, NodeService};
use memdriver::{Config, Driver, PLUGIN_NAME};
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .init();

    let config = match Config::from_env() {
        Ok(config) => config,
        Err(e) => {
            tracing::error!("{e}");
            return ExitCode::FAILURE;
        }
    };
    tracing::info!(?config, "memdriver starting");
    let no_validation = config.fault == Some(memdriver::fault::Fault::NoValidation);
    if let Some(fault) = config.fault {
        tracing::warn!(fault = fault.name(), "running with a fault on purpose (MEMDRIVER_FAULT)");
    }
    let group_controller = config.group_controller;
    let driver = Arc::new(Driver::new(config));

    let mut builder = csikit::server::Builder::new(PLUGIN_NAME, env!("CARGO_PKG_VERSION"))
        .layers(csikit::server::Layers {
            validate_requests: !no_validation,
            ..csikit::server::Layers::default()
        })
        .controller(ControllerService(driver.clone()));
    if group_controller {
        builder = builder.group_controller(GroupControllerService(driver.clone()));
    }
    let served = builder
        .node(NodeService(driver))
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
        .serve_from_env()
        .await;
    match served {
        Ok(()) => {
            tracing::info!("memdriver stopped");
            ExitCode::SUCCESS
        }
        Err(e) => {
            tracing::error!("memdriver failed: {e}");
            ExitCode::FAILURE
        }
    }
}

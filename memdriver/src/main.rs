//! The `memdriver` binary: reads its configuration from the environment, installs the log
//! subscriber and serves the in-memory plugin on `CSI_ENDPOINT` until SIGTERM or SIGINT.
//!
//! Exit codes: 0 after a clean shutdown, 1 when the configuration is bad or serving fails.

use std::process::ExitCode;
use std::sync::Arc;

use memdriver::{Config, Driver};
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
    if let Some(fault) = config.fault {
        tracing::warn!(fault = fault.name(), "running with a fault on purpose (MEMDRIVER_FAULT)");
    }
    let served = memdriver::builder(Arc::new(Driver::new(config))).serve_from_env().await;
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

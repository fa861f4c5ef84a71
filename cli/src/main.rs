//! The `csikit` command: `new-driver` writes a CSI driver crate built on csikit's server
//! skeleton, `deploy` writes its Kubernetes manifests from what the running plugin says it is.
//!
//! Exit codes: 0 success (warnings may be printed), 1 the inputs have errors or the plugin
//! cannot be reached (nothing is written), 2 bad command line (nothing is written).

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "csikit",
    version,
    about = "Write a CSI driver crate, and its Kubernetes manifests"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write a new CSI driver crate built on csikit's server skeleton, with its deploy/ folder.
    NewDriver(csikit_cli::new_driver::NewDriverArgs),
    /// Write a kustomize folder deploying a plugin on Kubernetes, derived from what it says it
    /// is (GetPluginInfo and its capabilities) or from a capabilities file.
    Deploy(csikit_cli::deploy::DeployArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let run = match cli.command {
        Command::NewDriver(args) => csikit_cli::new_driver::new_driver(args),
        Command::Deploy(args) => csikit_cli::deploy::deploy(args),
    };
    match run {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(1)
        }
    }
}

//! `csi-conformance`: the conformance suite against a running plugin. Takes csi-sanity's flags it
//! can honour (`--csi.endpoint`, `--csi.secrets`, `--csi.testvolumeparameters`,
//! `--csi.testvolumemutableparameters`, `--csi.mountdir`, `--csi.stagingdir`, `--ginkgo.focus`),
//! so a driver's CI can swap one binary for the other.
//!
//! `csi-conformance explore` (module `explore_cli`) is the stateful explorer: random histories
//! of calls against the plugin, each answer judged against a reference model of its state.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use csikit_conformance::{Config, Endpoint, Outcome, Secrets};

/// Runs the CSI conformance suite (generated from the spec's facts, plus written lifecycle
/// cases) against a plugin; exit 0 when no case fails, 1 when one fails, 2 on a bad command
/// line. A case fails only for a plugin's MUST broken; what binds the sender and the plugin's
/// SHOULDs are printed as notes (`--strict`: failures).
#[derive(Parser, Debug)]
#[command(
    name = "csi-conformance",
    version,
    about,
    subcommand_negates_reqs = true,
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// The plugin: unix:///path.sock or tcp://host:port.
    #[arg(long, alias = "csi.endpoint", required_unless_present_any = ["list", "audit"])]
    endpoint: Option<String>,
    /// Print every case with the spec sentence it checks, and exit.
    #[arg(long)]
    list: bool,
    /// Print the audit's coverage of what the spec asks of a plugin (AUDIT.md), and exit.
    #[arg(long)]
    audit: bool,
    /// Notes (a sentence that binds the sender, a plugin's SHOULD) are failures.
    #[arg(long)]
    strict: bool,
    /// Write JUnit XML here.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    #[command(flatten)]
    inputs: Inputs,
    /// Where target paths are made (default: a temporary folder).
    #[arg(long, alias = "csi.mountdir", value_name = "DIR")]
    mount_dir: Option<PathBuf>,
    /// Where staging paths are made (default: a temporary folder).
    #[arg(long, alias = "csi.stagingdir", value_name = "DIR")]
    staging_dir: Option<PathBuf>,
    /// The plugin's log: no secret value the suite sent may appear in it.
    #[arg(long, value_name = "FILE")]
    driver_log: Option<PathBuf>,
    /// The deadline of every call, in seconds.
    #[arg(long, default_value_t = 10.0)]
    timeout: f64,
    /// Only the cases whose name contains this (`--ginkgo.focus` is read the same way).
    #[arg(long, alias = "ginkgo.focus")]
    filter: Option<String>,
}

/// The files of what the suite sends, in csi-sanity's formats: the suite's and explore's.
#[derive(clap::Args, Debug)]
struct Inputs {
    /// csi-sanity's secrets YAML (CreateVolumeSecret, NodePublishVolumeSecret, ...).
    #[arg(long, alias = "csi.secrets", value_name = "FILE")]
    secrets: Option<PathBuf>,
    /// A YAML mapping of `parameters` for every CreateVolume (csi-sanity's format).
    #[arg(long, alias = "csi.testvolumeparameters", value_name = "FILE")]
    volume_parameters: Option<PathBuf>,
    /// A YAML mapping of mutable parameters the plugin accepts (csi-sanity's format), sent in
    /// CreateVolume by the fixed cases and in ControllerModifyVolume (which explore walks only
    /// with it, on volumes it makes without them).
    #[arg(long, alias = "csi.testvolumemutableparameters", value_name = "FILE")]
    mutable_parameters: Option<PathBuf>,
}

impl Inputs {
    /// `config` with the files read into it.
    fn read_into(&self, config: Config) -> anyhow::Result<Config> {
        Ok(Config {
            secrets: read_secrets(self.secrets.as_ref())?,
            volume_parameters: read_parameters(
                self.volume_parameters.as_ref(),
                "--volume-parameters",
            )?,
            mutable_parameters: read_parameters(
                self.mutable_parameters.as_ref(),
                "--mutable-parameters",
            )?,
            ..config
        })
    }
}

/// What to run instead of the suite.
#[derive(Subcommand, Debug)]
enum Command {
    /// Stateful, model-based exploration: random histories of calls a CO may make, each answer
    /// judged against a reference model of the plugin's state; a rule broken in an RPC's answer
    /// is shrunk to the shortest history that ends in that breach, printed with its sentence and written as a capture
    /// `csi-view replay` sends again. Exit 0 with no finding, 1 with findings, 2 on bad input.
    Explore(explore_cli::Args),
}

mod explore_cli;

fn main() -> ExitCode {
    // clap prints help or the error, and exits 0 or 2 (a bad command line).
    let cli = Cli::parse();
    if let Some(Command::Explore(args)) = &cli.command {
        return explore_cli::run(args);
    }
    if cli.audit {
        print!("{}", csikit_conformance::audit_summary());
        return ExitCode::SUCCESS;
    }
    if cli.list {
        for (name, sentence) in csikit_conformance::list() {
            println!("{name}\n    {sentence}");
        }
        return ExitCode::SUCCESS;
    }
    let raw = cli.endpoint.clone().unwrap_or_default();
    let endpoint = match raw.parse::<Endpoint>() {
        Ok(e) => e,
        Err(why) => {
            eprintln!("error: --endpoint {why}");
            return ExitCode::from(2);
        }
    };
    if !(cli.timeout > 0.0 && cli.timeout.is_finite()) {
        eprintln!("error: --timeout must be a positive number of seconds");
        return ExitCode::from(2);
    }
    let config = match config(&cli) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e:#}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let report = runtime.block_on(csikit_conformance::run(&endpoint, &config, &mut |r| {
        let (mark, why) = match &r.outcome {
            Outcome::Passed => ("ok  ", String::new()),
            Outcome::Failed(w) => ("FAIL", format!(": {w}\n     {}", r.sentence)),
            Outcome::Note(w) => ("note", format!(": {w}\n     {}", r.sentence)),
            Outcome::Skipped(w) => ("skip", format!(" ({w})")),
        };
        println!("{mark} {}{why}", r.name);
        let _ = std::io::stdout().flush();
    }));
    if let Some(path) = &cli.junit
        && let Err(e) = csikit_runtime::fs::write_atomic(path, report.junit().as_bytes())
    {
        eprintln!("error: cannot write '{}': {e}", path.display());
        return ExitCode::from(2);
    }
    println!(
        "# {} cases in {:.1} s; REQUIRED fields covered: {} of {}",
        report.results.len(),
        report.duration.as_secs_f64(),
        report.required_covered,
        report.required_total
    );
    for why in &report.required_uncovered {
        println!("#   not covered: {why}");
    }
    println!("{}", report.summary());
    ExitCode::from(u8::from(!report.passed()))
}

fn config(cli: &Cli) -> anyhow::Result<Config> {
    cli.inputs.read_into(Config {
        timeout: Duration::from_secs_f64(cli.timeout),
        driver_log: cli.driver_log.clone(),
        filter: cli.filter.clone(),
        strict: cli.strict,
        staging_dir: cli.staging_dir.clone(),
        mount_dir: cli.mount_dir.clone(),
        ..Config::default()
    })
}

/// csi-sanity's secrets file, if given (`--secrets`).
fn read_secrets(path: Option<&PathBuf>) -> anyhow::Result<Secrets> {
    match path {
        Some(p) => Secrets::read(p).map_err(|e| anyhow::anyhow!("--secrets {e:#}")),
        None => Ok(Secrets::default()),
    }
}

/// A YAML mapping in csi-sanity's format, if given (`flag` names it in an error).
fn read_parameters(
    path: Option<&PathBuf>,
    flag: &str,
) -> anyhow::Result<std::collections::HashMap<String, String>> {
    match path {
        Some(p) => csikit_conformance::read_flat(p).map_err(|e| anyhow::anyhow!("{flag} {e:#}")),
        None => Ok(Default::default()),
    }
}

//! `csi-conformance`: the conformance suite against a running plugin.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use csikit_conformance::{Config, Endpoint, Outcome, Secrets};

/// Runs the CSI conformance suite (generated from the spec's facts, plus written lifecycle
/// cases) against a plugin; exit 0 when every case passes, 1 when one fails, 2 on a bad command
/// line.
#[derive(Parser, Debug)]
#[command(name = "csi-conformance", version, about)]
struct Cli {
    /// The plugin: unix:///path.sock or tcp://host:port.
    #[arg(long)]
    endpoint: String,
    /// Write JUnit XML here.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// csi-sanity's secrets YAML (CreateVolumeSecret, NodePublishVolumeSecret, ...).
    #[arg(long, value_name = "FILE")]
    secrets: Option<PathBuf>,
    /// The plugin's log: no secret value the suite sent may appear in it.
    #[arg(long, value_name = "FILE")]
    driver_log: Option<PathBuf>,
    /// The deadline of every call, in seconds.
    #[arg(long, default_value_t = 10.0)]
    timeout: f64,
    /// Only the cases whose name contains this.
    #[arg(long)]
    filter: Option<String>,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let endpoint = match Endpoint::parse(&cli.endpoint) {
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
    let secrets = match cli.secrets.as_deref().map(Secrets::read).transpose() {
        Ok(s) => s.unwrap_or_default(),
        Err(e) => {
            eprintln!("error: --secrets {e:#}");
            return ExitCode::from(2);
        }
    };
    let config = Config {
        timeout: Duration::from_secs_f64(cli.timeout),
        secrets,
        driver_log: cli.driver_log,
        filter: cli.filter,
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
            Outcome::Failed(w) => ("FAIL", format!(": {w}")),
            Outcome::Skipped(w) => ("skip", format!(" ({w})")),
        };
        println!("{mark} {}{why}", r.name);
        let _ = std::io::stdout().flush();
    }));
    if let Some(path) = &cli.junit
        && let Err(e) = write_whole(path, report.junit().as_bytes())
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
    println!("{}", report.summary());
    ExitCode::from(u8::from(!report.passed()))
}

/// Writes a file whole: a temporary file beside it, then a rename.
fn write_whole(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir =
        path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

//! `csi-conformance explore`: reads its flags, picks and prints the seed, runs the library's
//! explorer and prints each finding as it is shrunk, then the coverage and the summary; writes
//! the JSON report. Exit codes: 0 no finding, 1 findings, 2 bad input.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use csikit_conformance::explore::{self, Options};
use csikit_conformance::{Config, Endpoint};

/// The explorer's command line.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The plugin: unix:///path.sock or tcp://host:port.
    #[arg(long, alias = "csi.endpoint")]
    endpoint: String,
    /// The walk's seed (printed first when not given); the same seed, the same walk.
    #[arg(long)]
    seed: Option<u64>,
    /// Stop after this many calls of the walk (default: 20000, or 60 s, whichever first).
    #[arg(long)]
    steps: Option<u64>,
    /// Stop after this many seconds.
    #[arg(long, value_name = "S")]
    time: Option<f64>,
    /// Histories in flight at once, each on volumes of its own.
    #[arg(long, default_value_t = 1)]
    concurrency: usize,
    /// Stop once this many findings (a rule broken in one RPC's answers) are shrunk.
    #[arg(long, value_name = "N")]
    stop_after: Option<usize>,
    /// Notes (a plugin's SHOULD) are findings too.
    #[arg(long)]
    strict: bool,
    /// Write the report as JSON here.
    #[arg(long, value_name = "FILE.json")]
    report: Option<PathBuf>,
    /// Where each finding's capture goes: a folder, or a file name (then NAME-2.jsonl ...).
    #[arg(long, value_name = "FILE")]
    capture_out: Option<PathBuf>,
    #[command(flatten)]
    inputs: crate::Inputs,
    /// Where target paths are made (default: a temporary folder).
    #[arg(long, alias = "csi.mountdir", value_name = "D")]
    mount_dir: Option<PathBuf>,
    /// Where staging paths are made (default: a temporary folder).
    #[arg(long, alias = "csi.stagingdir", value_name = "D")]
    staging_dir: Option<PathBuf>,
    /// The deadline of every call, in seconds.
    #[arg(long, default_value_t = 10.0)]
    timeout: f64,
}

/// Runs the explorer as the command line says.
pub(crate) fn run(args: &Args) -> ExitCode {
    let options = match options(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e:#}");
            return ExitCode::from(2);
        }
    };
    let endpoint = match args.endpoint.parse::<Endpoint>() {
        Ok(e) => e,
        Err(why) => {
            eprintln!("error: --endpoint {why}");
            return ExitCode::from(2);
        }
    };
    println!("seed {} (--seed {} walks the same way again)", options.seed, options.seed);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let report = runtime.block_on(explore::explore(&endpoint, &options, &mut |l| {
        println!("{}", l.trim_end());
    }));
    let report = match report {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot explore: {e}");
            return ExitCode::from(2);
        }
    };
    print!("{}", report.coverage.text());
    for s in &report.skipped {
        println!("skipped: {s}");
    }
    for l in &report.left_over {
        println!("left over: {l}");
    }
    if let Some(path) = &args.report {
        let mut json = report.to_json().to_string();
        json.push('\n');
        if let Err(e) = csikit_runtime::fs::write_atomic(path, json.as_bytes()) {
            eprintln!("error: cannot write '{}': {e}", path.display());
            return ExitCode::from(2);
        }
    }
    println!("{}", report.summary());
    ExitCode::from(u8::from(report.failed()))
}

/// The explorer's options from the command line: the seed chosen when not given, the files
/// read, the numbers checked.
fn options(args: &Args) -> anyhow::Result<Options> {
    if !(args.timeout > 0.0 && args.timeout.is_finite()) {
        anyhow::bail!("--timeout must be a positive number of seconds");
    }
    let time = match args.time {
        Some(t) if t > 0.0 && t.is_finite() => Some(Duration::from_secs_f64(t)),
        Some(_) => anyhow::bail!("--time must be a positive number of seconds"),
        None => None,
    };
    if args.stop_after == Some(0) {
        anyhow::bail!("--stop-after must be at least 1");
    }
    if args.steps == Some(0) {
        anyhow::bail!("--steps must be at least 1");
    }
    if !(1..=64).contains(&args.concurrency) {
        anyhow::bail!("--concurrency must be from 1 to 64");
    }
    for (flag, path) in [("--report", &args.report), ("--capture-out", &args.capture_out)] {
        if let Some(p) = path {
            let dir = p.parent().filter(|d| !d.as_os_str().is_empty());
            if dir.is_some_and(|d| !d.is_dir()) {
                anyhow::bail!("{flag} '{}': its folder does not exist", p.display());
            }
        }
    }
    let config = args.inputs.read_into(Config {
        timeout: Duration::from_secs_f64(args.timeout),
        strict: args.strict,
        staging_dir: args.staging_dir.clone(),
        mount_dir: args.mount_dir.clone(),
        ..Config::default()
    })?;
    Ok(Options {
        seed: args.seed.unwrap_or_else(|| fastrand::u64(..)),
        steps: args.steps,
        time,
        concurrency: args.concurrency,
        stop_after: args.stop_after,
        capture_out: args.capture_out.clone(),
        config,
    })
}

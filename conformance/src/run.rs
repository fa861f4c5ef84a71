//! A run from start to end: connect and discover, make the volume most cases work on, the cases
//! built from the facts and from the error tables, the written table, the clean-up and its checks.

use std::collections::BTreeSet;
use std::time::Instant;

use csikit::v1::controller_service_capability::rpc::Type as Ctl;
use tonic::Code;

use crate::cases;
use crate::cleanup;
use crate::client::Endpoint;
use crate::config::Config;
use crate::record::Recorder;
use crate::report::{CaseResult, Outcome, Report};
use crate::sentence::{Sentence, general};
use crate::suite::{Suite, show_status};

/// The volume most cases work on: the plugin makes one as it is asked (in SINGLE_NODE_WRITER).
const SETUP: &str = "setup: a volume to work on";
const SETUP_SENTENCE: Sentence = Sentence::must(
    "CreateVolume",
    "A Controller Plugin MUST implement this RPC call if it has `CREATE_DELETE_VOLUME` controller capability.",
);

const CONNECT: Sentence = Sentence::must(
    "Error Scheme",
    "All CSI API calls defined in this spec MUST return a standard gRPC status.",
);

/// Runs every applicable case against the plugin at `endpoint`; `line` gets one line per case
/// as it ends.
pub async fn run(
    endpoint: &Endpoint,
    config: &Config,
    line: &mut dyn FnMut(&CaseResult),
) -> Report {
    let started = Instant::now();
    let mut suite = match Suite::connect(endpoint, config).await {
        Ok(s) => s,
        Err(why) => {
            let result = CaseResult {
                name: "connect: the plugin answers Identity".into(),
                sentence: CONNECT,
                outcome: Outcome::Failed(why),
                duration: started.elapsed(),
            };
            line(&result);
            return Report {
                results: vec![result],
                duration: started.elapsed(),
                ..Report::default()
            };
        }
    };
    let mut rec = Recorder::new(config.filter.clone(), config.strict, line);
    let coverage = run_all(&mut suite, &mut rec).await;
    Report {
        results: rec.results,
        required_total: coverage.total,
        required_covered: coverage.covered,
        required_uncovered: coverage.uncovered,
        duration: started.elapsed(),
    }
}

async fn run_all(s: &mut Suite, rec: &mut Recorder<'_>) -> cases::facts::Coverage {
    let before = if s.plugin.has(Ctl::ListVolumes) { s.list_all(0).await.ok() } else { None };
    let started = Instant::now();
    let creates = s.plugin.has(Ctl::CreateDeleteVolume);
    let outcome = if creates {
        make_fixture(s).await
    } else {
        Outcome::Skipped("no CREATE_DELETE_VOLUME".into())
    };
    rec.record(s, SETUP.into(), SETUP_SENTENCE, started, outcome);

    let coverage = cases::facts::run(s, rec).await;
    cases::capabilities::implications(s, rec).await;
    cases::errors::run(s, rec).await;

    for case in cases::table() {
        if !rec.wants(case.name) {
            continue;
        }
        let started = Instant::now();
        let outcome = match case.skip_reason(s) {
            Some(why) => Outcome::Skipped(why),
            None => (case.body)(s).await,
        };
        rec.record(s, case.name.into(), case.sentence, started, outcome);
    }

    // Clean-up, then the listing must read as before the run.
    let started = Instant::now();
    let leftovers = cleanup::clean_up(s).await;
    rec.record(
        s,
        "clean-up: every volume and snapshot the suite made is deleted".into(),
        general::DELETE_IDEMPOTENT,
        started,
        if leftovers.is_empty() { Outcome::Passed } else { Outcome::Failed(leftovers.join("; ")) },
    );
    if let Some(before) = before {
        let started = Instant::now();
        let outcome = match s.list_all(0).await {
            Ok(after) => {
                let (b, a): (BTreeSet<_>, BTreeSet<_>) =
                    (before.into_iter().collect(), after.into_iter().collect());
                if a == b {
                    Outcome::Passed
                } else {
                    Outcome::Failed(format!(
                        "ListVolumes differs after the run: {} left over, {} gone",
                        a.difference(&b).count(),
                        b.difference(&a).count()
                    ))
                }
            }
            Err(why) => Outcome::Failed(why),
        };
        rec.record(
            s,
            "clean-up: ListVolumes is the same after the run as before".into(),
            general::LIST_ALL,
            started,
            outcome,
        );
    }
    if let Some(log) = s.cfg.driver_log.clone() {
        let started = Instant::now();
        let outcome = cleanup::check_log(s, &log);
        rec.record(
            s,
            "secrets: no secret value the suite sent is in the driver's log".into(),
            general::SECRETS,
            started,
            outcome,
        );
    }
    coverage
}

/// The volume most cases work on: a mount, or for a block-only plugin (one that refuses the
/// mount as INVALID_ARGUMENT and takes a block device) a block device, which every later case
/// then asks for.
async fn make_fixture(s: &mut Suite) -> Outcome {
    let name = s.name("fixture");
    let r = s.create_request(&name, 0);
    let mount = match s.create(r).await {
        Ok(v) => {
            s.fixture = v.volume_id;
            return Outcome::Passed;
        }
        Err(e) => e,
    };
    if mount.code() == Code::InvalidArgument {
        s.block = true;
        let name = s.name("fixture-block");
        let r = s.create_request(&name, 0);
        if let Ok(v) = s.create(r).await {
            s.fixture = v.volume_id;
            return Outcome::Passed;
        }
        s.block = false;
    }
    Outcome::Failed(format!("CreateVolume of a plain volume: {}", show_status(&mount)))
}

/// Every case the suite has, with the sentence it checks: the written ones by name, the
/// generated ones by family (their names depend on the plugin's RPCs).
pub fn list() -> Vec<(String, Sentence)> {
    let mut out: Vec<(String, Sentence)> = vec![(SETUP.to_owned(), SETUP_SENTENCE)];
    out.extend(cases::facts::FAMILIES.iter().map(|(name, s)| ((*name).to_owned(), *s)));
    out.push((cases::capabilities::IMPLIED_FAMILY.to_owned(), cases::capabilities::IMPLIED));
    out.extend(cases::errors::list());
    out.extend(cases::table().map(|c| (c.name.to_owned(), c.sentence)));
    out.push((
        "clean-up: every volume and snapshot the suite made is deleted".into(),
        general::DELETE_IDEMPOTENT,
    ));
    out.push((
        "clean-up: ListVolumes is the same after the run as before".into(),
        general::LIST_ALL,
    ));
    out.push((
        "secrets: no secret value the suite sent is in the driver's log".into(),
        general::SECRETS,
    ));
    for (what, sentence) in [
        ("REQUIRED fields set", general::REQUIRED),
        ("within the size limits", general::RESPONSE_SIZE),
        ("no negative number where its field forbids one", general::NON_NEGATIVE),
        ("secret keys in the charset", general::RESPONSE_SECRET_KEYS),
        ("no banned character in a name", general::RESPONSE_CONTROL_CHARS),
        ("the RPC's response message", general::RESPONSE_DECODES),
        ("enum values the spec declares", general::DECLARED_ENUM),
        ("no secret value the suite sent", general::SECRETS),
    ] {
        out.push((format!("answers: every answer: {what}"), sentence));
    }
    for (what, sentence) in crate::answers::rule::ALL {
        out.push((format!("answers: every answer: {what}"), *sentence));
    }
    out.extend(crate::explore::list());
    out
}

/// Serves `routes` (a driver's tonic routes, e.g. from `csikit::server::Builder::into_routes`)
/// on a temporary unix socket, runs the suite against it, and stops the server.
///
/// # Errors
///
/// When the temporary socket cannot be made.
pub async fn run_in_process(
    routes: tonic::service::Routes,
    config: &Config,
) -> anyhow::Result<Report> {
    let (endpoint, server) = crate::in_process::serve(routes).await?;
    let report = run(&endpoint, config, &mut |_| {}).await;
    server.stop().await;
    Ok(report)
}

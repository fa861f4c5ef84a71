//! A CSI conformance suite for any driver, generated from the spec's facts (the `csikit` crate's
//! facts tables and descriptors) where the spec states the rule, and written by hand for the
//! behaviour the spec describes in prose.
//!
//! * Generated: for the request of every RPC the plugin advertises, one case per REQUIRED field
//!   and required oneof (cleared: INVALID_ARGUMENT expected); size limits at the limit and one
//!   byte over; a secret key outside the allowed charset; banned control characters in names; and
//!   every RPC the spec obliges the plugin to implement answering something other than
//!   UNIMPLEMENTED.
//! * Written: volume, snapshot, publish and stage lifecycles; idempotency of every mutating call;
//!   NOT_FOUND for unknown ids; ALREADY_EXISTS for incompatible re-creates; ListVolumes and
//!   ListSnapshots pagination (a token the plugin never issued: ABORTED); concurrent calls on one
//!   volume; target_path created and removed; NodeGetVolumeStats on an unpublished path;
//!   capacity accounting.
//!
//! Every volume and snapshot a case creates is deleted even when the case fails, and ListVolumes
//! must read the same after the run as before it. Every call has a deadline, so an unreachable
//! endpoint, a server that is not CSI or a hanging driver gives a clear line per case, never a
//! hang.
//!
//! From `cargo test`, [`run_in_process`] serves a driver's routes (for example
//! `csikit::server::Builder::into_routes`) on a temporary socket and runs the suite against it.

mod cases;
mod client;
mod generated;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use client::Endpoint;

/// How to run the suite.
#[derive(Debug, Clone)]
pub struct Config {
    /// The deadline of every call.
    pub timeout: Duration,
    /// Secrets to send, per kind of call (csi-sanity's secrets file: `CreateVolumeSecret`, ...).
    pub secrets: Secrets,
    /// The driver's log: no secret value the suite sent may appear in it.
    pub driver_log: Option<PathBuf>,
    /// Only cases whose name contains this.
    pub filter: Option<String>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            timeout: Duration::from_secs(10),
            secrets: Secrets::default(),
            driver_log: None,
            filter: None,
        }
    }
}

/// Secrets per kind of call, as csi-sanity's `--csi.secrets` YAML gives them.
#[derive(Debug, Clone, Default)]
pub struct Secrets {
    by_kind: HashMap<String, HashMap<String, String>>,
}

impl Secrets {
    /// The secrets for a kind (`CreateVolumeSecret`, `NodePublishVolumeSecret`, ...); empty when
    /// the file names none.
    pub fn get(&self, kind: &str) -> HashMap<String, String> {
        self.by_kind.get(kind).cloned().unwrap_or_default()
    }

    /// Every value, to look for in a driver's log.
    pub fn values(&self) -> Vec<String> {
        self.by_kind.values().flat_map(|m| m.values().cloned()).filter(|v| !v.is_empty()).collect()
    }

    /// Reads csi-sanity's secrets file: a YAML mapping of kinds to mappings of keys to values,
    /// as csi-sanity writes it (block style, plain or quoted scalars, `#` comments). Flow style
    /// and anchors are refused with the line.
    ///
    /// # Errors
    ///
    /// A line that is not `Kind:` or an indented `key: value`, with its number.
    pub fn parse(text: &str) -> anyhow::Result<Secrets> {
        let mut by_kind: HashMap<String, HashMap<String, String>> = HashMap::new();
        let mut current: Option<String> = None;
        for (i, raw) in text.lines().enumerate() {
            let line = strip_comment(raw);
            if line.trim().is_empty() || line.trim() == "---" {
                continue;
            }
            let indented = line.starts_with([' ', '\t']);
            let (key, value) = line
                .trim()
                .split_once(':')
                .ok_or_else(|| anyhow::anyhow!("line {}: expected 'key: value'", i + 1))?;
            let (key, value) = (unquote(key.trim()), unquote(value.trim()));
            if value.starts_with(['{', '[', '&', '*', '|', '>']) {
                anyhow::bail!(
                    "line {}: only block mappings of plain or quoted strings are read",
                    i + 1
                );
            }
            if indented {
                let kind = current
                    .clone()
                    .ok_or_else(|| anyhow::anyhow!("line {}: a value outside any kind", i + 1))?;
                by_kind.entry(kind).or_default().insert(key, value);
            } else {
                if !value.is_empty() {
                    anyhow::bail!("line {}: '{key}' must hold a mapping of secrets", i + 1);
                }
                by_kind.entry(key.clone()).or_default();
                current = Some(key);
            }
        }
        Ok(Secrets { by_kind })
    }

    /// Reads a secrets file.
    ///
    /// # Errors
    ///
    /// When the file cannot be read or does not parse (`path:line: why`).
    pub fn read(path: &Path) -> anyhow::Result<Secrets> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("cannot read '{}': {e}", path.display()))?;
        Secrets::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    }
}

fn strip_comment(line: &str) -> &str {
    // A `#` starts a comment outside quotes.
    let mut quote = None;
    for (i, c) in line.char_indices() {
        match (c, quote) {
            ('"' | '\'', None) => quote = Some(c),
            (q, Some(open)) if q == open => quote = None,
            ('#', None) => return &line[..i],
            _ => {}
        }
    }
    line
}

fn unquote(s: &str) -> String {
    let bytes = s.as_bytes();
    if s.len() >= 2 && (bytes[0] == b'"' || bytes[0] == b'\'') && bytes[s.len() - 1] == bytes[0] {
        s[1..s.len() - 1].to_owned()
    } else {
        s.to_owned()
    }
}

/// How a case ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// As the spec says.
    Passed,
    /// Not as the spec says; why.
    Failed(String),
    /// Not applicable to this plugin; why.
    Skipped(String),
}

/// One case's result.
#[derive(Debug, Clone)]
pub struct CaseResult {
    /// The case's name: `group: what`.
    pub name: String,
    /// How it ended.
    pub outcome: Outcome,
    /// How long it took.
    pub duration: Duration,
}

/// A whole run.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Every case, in the order run.
    pub results: Vec<CaseResult>,
    /// REQUIRED fields (and required oneofs) of the advertised RPCs' requests, and how many had
    /// a case.
    pub required_total: usize,
    /// See `required_total`.
    pub required_covered: usize,
    /// How long the run took.
    pub duration: Duration,
}

impl Report {
    /// Cases passed, failed and skipped.
    pub fn counts(&self) -> (usize, usize, usize) {
        let mut c = (0, 0, 0);
        for r in &self.results {
            match r.outcome {
                Outcome::Passed => c.0 += 1,
                Outcome::Failed(_) => c.1 += 1,
                Outcome::Skipped(_) => c.2 += 1,
            }
        }
        c
    }

    /// True when no case failed.
    pub fn passed(&self) -> bool {
        self.counts().1 == 0
    }

    /// The failed cases.
    pub fn failures(&self) -> Vec<&CaseResult> {
        self.results.iter().filter(|r| matches!(r.outcome, Outcome::Failed(_))).collect()
    }

    /// The summary line: `N passed, N failed, N skipped`.
    pub fn summary(&self) -> String {
        let (p, f, s) = self.counts();
        format!("{p} passed, {f} failed, {s} skipped")
    }

    /// JUnit XML, one testcase per case.
    pub fn junit(&self) -> String {
        let (_, failed, skipped) = self.counts();
        let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ = writeln!(
            out,
            "<testsuite name=\"csi-conformance\" tests=\"{}\" failures=\"{failed}\" skipped=\"{skipped}\" time=\"{:.3}\">",
            self.results.len(),
            self.duration.as_secs_f64()
        );
        for r in &self.results {
            let (class, name) = r.name.split_once(": ").unwrap_or(("csi", &r.name));
            let _ = write!(
                out,
                "  <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\"",
                xml(class),
                xml(name),
                r.duration.as_secs_f64()
            );
            match &r.outcome {
                Outcome::Passed => out.push_str("/>\n"),
                Outcome::Failed(why) => {
                    let _ = writeln!(out, "><failure message=\"{}\"/></testcase>", xml(why));
                }
                Outcome::Skipped(why) => {
                    let _ = writeln!(out, "><skipped message=\"{}\"/></testcase>", xml(why));
                }
            }
        }
        out.push_str("</testsuite>\n");
        out
    }
}

fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 has no place for other control characters.
            c if (c as u32) < 0x20 && !matches!(c, '\n' | '\t' | '\r') => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// Runs every applicable case against the plugin at `endpoint`; `line` gets one line per case
/// as it ends.
pub async fn run(
    endpoint: &Endpoint,
    config: &Config,
    line: &mut dyn FnMut(&CaseResult),
) -> Report {
    let started = Instant::now();
    let mut suite = match cases::Suite::connect(endpoint, config).await {
        Ok(s) => s,
        Err(why) => {
            let result = CaseResult {
                name: "connect: the plugin answers Identity".into(),
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
    suite.run_all(line).await;
    let mut report = suite.into_report();
    report.duration = started.elapsed();
    report
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
    let dir = tempfile::Builder::new().prefix("csi-conformance-").tempdir()?;
    let socket = dir.path().join("csi.sock");
    let listener = tokio::net::UnixListener::bind(&socket)?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(
        tonic::transport::Server::builder().add_routes(routes).serve_with_incoming_shutdown(
            tokio_stream::wrappers::UnixListenerStream::new(listener),
            async {
                let _ = stopped.await;
            },
        ),
    );
    let report = run(&Endpoint::Unix(socket), config, &mut |_| {}).await;
    let _ = stop.send(());
    let _ = server.await;
    Ok(report)
}

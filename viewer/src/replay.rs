//! `csi-view replay CAPTURE --endpoint E`: the calls of a capture sent again to a plugin and each
//! answer judged beside the recorded one. Everything judged is `csi_view_core::replay`'s (no
//! runtime there); this module reads the inputs, sends the calls on one connection as the plan
//! lets them start, and hands each answer to the judge in the order answers come.
//!
//! Bad input (the capture, the secrets file, the driver log's path, the endpoint) is an error
//! before anything is sent.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use csi_view_core::capture;
use csi_view_core::replay::ids::IdMap;
use csi_view_core::replay::plan::Plan;
use csi_view_core::replay::report::{
    Answer, CallReport, LogCheck, LogFinding, Outcome, Report, judge,
};
use csi_view_core::replay::{RecordedCall, prepare};
use csi_view_core::request::{secret_map_fields, secret_values};
use csi_view_core::schema::Schema;
use csikit_runtime::redact::{REDACTED, first_line_holding, scrub};
use csikit_runtime::secrets::Secrets;
use prost_reflect::{DynamicMessage, MapKey, ReflectMessage, Value};
use tokio::task::JoinSet;

use crate::send::{Outgoing, Plugin, Reply};

/// How to replay.
#[derive(Debug, Clone)]
pub struct Options {
    /// The capture, as `csi-view proxy --record` wrote it.
    pub capture: PathBuf,
    /// The plugin's endpoint, as `CSI_ENDPOINT` writes it.
    pub endpoint: String,
    /// One call at a time, even where the recording overlapped.
    pub serial: bool,
    /// On connecting and on every call.
    pub timeout: Duration,
    /// csi-sanity's secrets YAML, to refill the values a capture blanked.
    pub secrets: Option<PathBuf>,
    /// The plugin's log, read once the calls have ended for the secret values sent.
    pub driver_log: Option<PathBuf>,
}

/// Replays the capture on a runtime of its own; warnings go to `warnings`.
///
/// # Errors
///
/// Bad input: a capture that does not read (its line, and byte offset where the bytes are at
/// fault), a method the schema lacks, a secrets file that does not read, an endpoint that cannot
/// be read or where nothing answers.
pub fn run(schema: &Schema, options: &Options, warnings: &mut dyn Write) -> Result<Report> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the runtime")?;
    rt.block_on(replay(schema, options, warnings))
}

/// [`run`], on the caller's runtime.
///
/// # Errors
///
/// As [`run`].
pub async fn replay(
    schema: &Schema,
    options: &Options,
    warnings: &mut dyn Write,
) -> Result<Report> {
    let name = options.capture.display().to_string();
    let capture = capture::read(&options.capture)?;
    let calls = prepare(schema, &capture, &name)?;
    let secrets = Refill::new(&capture.header.secrets, options.secrets.as_deref())?;
    if let Some(log) = &options.driver_log {
        // Before anything is sent: a log that cannot be opened now is a mistyped path.
        std::fs::File::open(log)
            .with_context(|| format!("cannot read the driver log '{}'", log.display()))?;
    }
    // Every secret value sent, for the driver's log (the capture's own blank excepted).
    let mut sent_secrets: BTreeSet<String> = BTreeSet::new();
    let plugin = Plugin::new(options.endpoint.clone(), options.timeout);
    // Dialled before anything is sent: nothing answering there is bad input, not a verdict.
    plugin.connect().await?;
    let plan = Plan::new(&calls.iter().map(|c| c.timing).collect::<Vec<_>>(), options.serial);
    let mut schedule = plan.schedule();
    let mut ids = IdMap::default();
    let mut reports: Vec<Option<CallReport>> = vec![None; calls.len()];
    // Calls that differed, judged again at the end: a value the plugin generated may stand in a
    // field the spec does not mark (memdriver's and host-path's topology segment holds the node
    // id) before the call that pairs it (NodeGetInfo) has come back.
    let mut differed: Vec<Sent> = Vec::new();
    let mut running: JoinSet<Sent> = JoinSet::new();
    loop {
        let startable = schedule.startable();
        if startable.is_empty() {
            let Some(done) = running.join_next().await else { break };
            let sent = done.context("a replayed call's task failed")?;
            let call = &calls[sent.index];
            let judged = verdict(schema, &mut ids, call, &sent);
            schedule.ended(sent.index);
            let differs = matches!(judged.outcome, Outcome::Differs { .. });
            reports[sent.index] = Some(judged);
            if differs {
                differed.push(sent);
            }
            continue;
        }
        for index in startable {
            let call = &calls[index];
            let Some(request) = &call.request else {
                let reason = call.skip.clone().unwrap_or_default();
                reports[index] = Some(report(call, Outcome::NotReplayed { reason }, 0, 0, 0));
                schedule.ended(index);
                continue;
            };
            let mut request = request.clone();
            let rewritten = ids.rewrite(schema, &mut request);
            secrets.fill(schema, &call.descriptor, &mut request, warnings)?;
            // Recorded requests go as they were, rules broken or not: replay is not a check.
            let mut outgoing = Outgoing::new(schema, &call.descriptor, &request);
            sent_secrets.extend(outgoing.secrets().iter().filter(|v| *v != REDACTED).cloned());
            outgoing.also_hide(secrets.values());
            let plugin = plugin.clone();
            running.spawn(async move {
                let reply = plugin.send(outgoing).await;
                Sent { index, rewritten, reply }
            });
        }
    }
    for sent in &differed {
        reports[sent.index] = Some(verdict(schema, &mut ids, &calls[sent.index], sent));
    }
    let mut reports: Vec<CallReport> = reports
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            r.ok_or_else(|| {
                anyhow!("call #{} was never sent (a replay planning fault)", calls[i].call)
            })
        })
        .collect::<Result<_>>()?;
    // The capture lists calls as they ended; the report, as they were numbered (started).
    reports.sort_by_key(|r| r.call);
    let driver_log = options.driver_log.as_deref().map(|log| check_log(log, &sent_secrets));
    Ok(Report { calls: reports, values_mapped: ids.changed(), driver_log })
}

/// The driver's log read for `sent` (the runtime's one rule for finding a secret in text).
fn check_log(path: &Path, sent: &BTreeSet<String>) -> LogCheck {
    let finding = if sent.is_empty() {
        LogFinding::NoSecretSent
    } else {
        match std::fs::read(path) {
            Err(e) => LogFinding::Unreadable { reason: e.to_string() },
            Ok(bytes) => {
                let values: Vec<&String> = sent.iter().collect();
                match first_line_holding(&String::from_utf8_lossy(&bytes), &values) {
                    Some(line) => LogFinding::Leaked { line },
                    None => LogFinding::Clean { values: values.len() },
                }
            }
        }
    };
    LogCheck { path: path.display().to_string(), finding }
}

/// A call sent, and what came back.
struct Sent {
    index: usize,
    /// Request values replaced by what they became in this replay.
    rewritten: usize,
    reply: Reply,
}

fn report(
    call: &RecordedCall,
    outcome: Outcome,
    mapped: usize,
    rewritten: usize,
    ignored: usize,
) -> CallReport {
    CallReport { call: call.call, method: call.method.clone(), outcome, mapped, rewritten, ignored }
}

/// The verdict on a call from its recorded and replayed answers.
fn verdict(schema: &Schema, ids: &mut IdMap, call: &RecordedCall, sent: &Sent) -> CallReport {
    let recorded_secrets: Vec<String> =
        call.request.as_ref().map(|r| secret_values(schema, r)).unwrap_or_default();
    let recorded_message = scrub(&call.message, &recorded_secrets).into_owned();
    let reply = &sent.reply;
    let replayed_message = reply.message();
    let decoded = reply.response();
    if let Some(Err(e)) = &decoded {
        let d = csi_view_core::replay::compare::Difference {
            path: "<response>".into(),
            recorded: "a response".into(),
            replayed: e.clone(),
        };
        return report(call, Outcome::Differs { differences: vec![d] }, 0, sent.rewritten, 0);
    }
    let replayed = decoded.and_then(Result::ok);
    let (outcome, mapped, ignored) = judge(
        schema,
        ids,
        Answer {
            status: call.status,
            message: &recorded_message,
            response: call.response.as_ref(),
        },
        Answer { status: reply.code(), message: &replayed_message, response: replayed.as_ref() },
        // The judge asks only about the replayed code, the reply's own (and a status made here,
        // no answer in time, is not the plugin's: no row).
        &|_| reply.explain(schema),
    );
    report(call, outcome, mapped, sent.rewritten, ignored)
}

/// The secret values put back into requests whose capture blanked them.
struct Refill {
    /// csi-sanity's file, when the capture blanked its secrets and one was given.
    file: Option<(String, Secrets)>,
    /// The capture blanked its secrets and no file was given: warn once, send as recorded.
    warn_blanked: bool,
    /// Warnings already given, so each is given once.
    warned: std::cell::RefCell<Vec<String>>,
}

impl Refill {
    fn new(header_secrets: &str, file: Option<&Path>) -> Result<Refill> {
        let blanked = header_secrets != "kept";
        let file = match file {
            Some(path) if blanked => {
                let secrets = Secrets::read(path).map_err(|e| anyhow!("{e}"))?;
                Some((path.display().to_string(), secrets))
            }
            _ => None,
        };
        Ok(Refill { warn_blanked: blanked && file.is_none(), file, warned: Default::default() })
    }

    /// Every value of the file, to scrub from what is shown.
    fn values(&self) -> Vec<String> {
        self.file.as_ref().map(|(_, s)| s.values()).unwrap_or_default()
    }

    fn warn_once(&self, warnings: &mut dyn Write, text: String) -> Result<()> {
        let mut warned = self.warned.borrow_mut();
        if !warned.contains(&text) {
            writeln!(warnings, "warning: {text}")?;
            warned.push(text);
        }
        Ok(())
    }

    /// Puts the file's values for the RPC back into the secret maps of the request, key by key:
    /// the keys the recording holds, each with the file's value for it (a key the file lacks
    /// stays blanked, with a warning); no key is added.
    fn fill(
        &self,
        schema: &Schema,
        method: &prost_reflect::MethodDescriptor,
        request: &mut DynamicMessage,
        warnings: &mut dyn Write,
    ) -> Result<()> {
        let values = self.file.as_ref().map(|(_, s)| s.for_rpc(method.name())).unwrap_or_default();
        let (held, missing) = refill_keys(schema, request, &values);
        if held == 0 {
            return Ok(());
        }
        match &self.file {
            None if self.warn_blanked => self.warn_once(
                warnings,
                "the capture's secret values were blanked when it was recorded; they are sent as recorded (give --secrets FILE, csi-sanity's secrets YAML, to refill them)".into(),
            )?,
            None => {}
            Some((path, _)) => {
                for key in missing {
                    self.warn_once(
                        warnings,
                        format!(
                            "'{path}' has no value for the secret '{key}' of {} (kind {}); it is sent as recorded",
                            method.name(),
                            csikit_runtime::secrets::kind_of(method.name())
                        ),
                    )?;
                }
            }
        }
        Ok(())
    }
}

/// Replaces the value of every key of the request's secret maps (the fields
/// `request::secret_map_fields` names) with `values`' value for the key, when it has one.
/// Returns how many keys the maps hold, and those `values` lacks.
fn refill_keys(
    schema: &Schema,
    request: &mut DynamicMessage,
    values: &std::collections::HashMap<String, String>,
) -> (usize, Vec<String>) {
    let mut held = 0;
    let mut missing = Vec::new();
    for field in secret_map_fields(schema, &request.descriptor()) {
        if !request.has_field(&field) {
            continue;
        }
        if let Value::Map(map) = request.get_field_mut(&field) {
            for (key, value) in map.iter_mut() {
                held += 1;
                if let (MapKey::String(k), Value::String(v)) = (key, value) {
                    match values.get(k) {
                        Some(new) => *v = new.clone(),
                        None => missing.push(k.clone()),
                    }
                }
            }
        }
    }
    (held, missing)
}

#[cfg(test)]
mod tests {
    use prost::Message as _;

    use super::*;

    #[test]
    fn secret_maps_are_refilled_key_by_key() {
        let schema = Schema::builtin().expect("schema");
        let request = csikit::v1::CreateVolumeRequest {
            name: "v".into(),
            secrets: [("a".to_owned(), "<redacted>".to_owned()), ("b".into(), "<redacted>".into())]
                .into(),
            ..Default::default()
        };
        let desc = schema.find_message("csi.v1.CreateVolumeRequest").expect("type");
        let mut msg =
            DynamicMessage::decode(desc, request.encode_to_vec().as_slice()).expect("decodes");
        let values = [("a".to_owned(), "s3cret".to_owned()), ("c".into(), "unused".into())].into();
        let (held, missing) = refill_keys(&schema, &mut msg, &values);
        assert_eq!((held, missing), (2, vec!["b".to_owned()]));
        let out: csikit::v1::CreateVolumeRequest = msg.transcode_to().expect("transcodes");
        assert_eq!(out.secrets.len(), 2, "no key is added");
        assert_eq!(out.secrets["a"], "s3cret");
        assert_eq!(out.secrets["b"], "<redacted>");
        assert_eq!(out.name, "v");
        // A request without secrets holds none.
        let desc = schema.find_message("csi.v1.NodeGetInfoRequest").expect("type");
        assert_eq!(refill_keys(&schema, &mut DynamicMessage::new(desc), &values).0, 0);
    }
}

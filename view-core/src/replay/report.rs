//! What a replay found, per call and in sum: the verdict on each call ([`judge`]), the report's
//! data, and its two renderings (text lines, JSON).

use std::io::{self, Write};

use prost_reflect::DynamicMessage;
use serde::Serialize;

use crate::replay::compare::{Difference, compare};
use crate::replay::ids::IdMap;
use crate::rpcs::status_name;
use crate::schema::Schema;

/// The verdict on one call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// The same status, and for OK the same response once generated values are followed.
    Same,
    /// OK both times, with responses that differ in a way that matters.
    Differs {
        /// What differs.
        differences: Vec<Difference>,
    },
    /// Recorded OK, now an error.
    NewError {
        /// The status code's name.
        code: String,
        /// The status message, secrets scrubbed.
        message: String,
        /// What the spec's error tables say about this RPC and code, a line per row.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        spec: Vec<String>,
    },
    /// Recorded an error, now OK.
    ErrorGone {
        /// The recorded code's name.
        recorded_code: String,
        /// The recorded message, secrets scrubbed.
        recorded_message: String,
    },
    /// An error both times, with another code.
    OtherCode {
        /// The recorded code's name.
        recorded_code: String,
        /// The replayed code's name.
        code: String,
        /// The replayed message, secrets scrubbed.
        message: String,
        /// What the spec's error tables say about this RPC and the replayed code.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        spec: Vec<String>,
    },
    /// Not sent (a streaming call, a call the recording holds no request or status for).
    NotReplayed {
        /// Why.
        reason: String,
    },
}

impl Outcome {
    /// True when the call counts against the replay (exit 1).
    pub fn matters(&self) -> bool {
        !matches!(self, Outcome::Same | Outcome::NotReplayed { .. })
    }

    /// The outcome's name, as the text report spells it.
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Same => "same",
            Outcome::Differs { .. } => "differs",
            Outcome::NewError { .. } => "new error",
            Outcome::ErrorGone { .. } => "error gone",
            Outcome::OtherCode { .. } => "other code",
            Outcome::NotReplayed { .. } => "not replayed",
        }
    }
}

/// One call's part of the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CallReport {
    /// The call's number in the capture.
    pub call: u64,
    /// Its method path.
    pub method: String,
    /// The verdict.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// Generated values of the response that came back different and were followed.
    pub mapped: usize,
    /// Values of the request replaced by the values they became in this replay.
    pub rewritten: usize,
    /// Values left uncompared (timestamps).
    pub ignored: usize,
}

/// A status and the response that came with it.
#[derive(Debug, Clone, Copy)]
pub struct Answer<'a> {
    /// The gRPC status code; -1 when the recording has none.
    pub status: i32,
    /// The status message, secrets already scrubbed.
    pub message: &'a str,
    /// The response, for OK.
    pub response: Option<&'a DynamicMessage>,
}

/// The verdict on one call: its recorded answer beside the replayed one. Generated values of an
/// OK response are learned into `ids`; `spec_rows` gives what the spec's error tables say about
/// the call's RPC and a code, a line per row. Returns the outcome, how many values were followed and how many were ignored.
pub fn judge(
    schema: &Schema,
    ids: &mut IdMap,
    recorded: Answer<'_>,
    replayed: Answer<'_>,
    spec_rows: &dyn Fn(i32) -> Vec<String>,
) -> (Outcome, usize, usize) {
    match (recorded.status, replayed.status) {
        (r, _) if r < 0 => (
            Outcome::NotReplayed { reason: "the recording holds no status for this call".into() },
            0,
            0,
        ),
        (0, 0) => match (recorded.response, replayed.response) {
            (Some(a), Some(b)) => {
                let c = compare(schema, ids, a, b);
                let outcome = if c.differences.is_empty() {
                    Outcome::Same
                } else {
                    Outcome::Differs { differences: c.differences }
                };
                (outcome, c.mapped, c.ignored)
            }
            (a, b) => {
                let shown = |m: Option<&DynamicMessage>| {
                    if m.is_some() { "a response" } else { "(no response)" }.to_owned()
                };
                let d = Difference {
                    path: "<response>".into(),
                    recorded: shown(a),
                    replayed: shown(b),
                };
                (Outcome::Differs { differences: vec![d] }, 0, 0)
            }
        },
        (0, code) => (
            Outcome::NewError {
                code: status_name(code),
                message: replayed.message.to_owned(),
                spec: spec_rows(code),
            },
            0,
            0,
        ),
        (r, 0) => (
            Outcome::ErrorGone {
                recorded_code: status_name(r),
                recorded_message: recorded.message.to_owned(),
            },
            0,
            0,
        ),
        (r, code) if r == code => (Outcome::Same, 0, 0),
        (r, code) => (
            Outcome::OtherCode {
                recorded_code: status_name(r),
                code: status_name(code),
                message: replayed.message.to_owned(),
                spec: spec_rows(code),
            },
            0,
            0,
        ),
    }
}

/// The counts of a report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Calls in the capture.
    pub calls: usize,
    /// Calls the same.
    pub same: usize,
    /// Calls whose response differs.
    pub differs: usize,
    /// Calls recorded OK, now an error.
    pub new_errors: usize,
    /// Calls recorded as an error, now OK.
    pub errors_gone: usize,
    /// Calls with another error code.
    pub other_codes: usize,
    /// Calls not sent.
    pub not_replayed: usize,
    /// Generated values the replay followed (recorded value to a different replayed one).
    pub values_mapped: usize,
}

/// A whole replay's report, calls in the order they were numbered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// One per call.
    pub calls: Vec<CallReport>,
    /// How many generated values came back different (the id map's size).
    pub values_mapped: usize,
    /// What the plugin's log showed once the calls had ended (`--driver-log`), when one was given.
    pub driver_log: Option<LogCheck>,
}

/// The plugin's log, read for the secret values the replay sent: a secret never appears in a
/// log, and a replay refills the values a capture blanked, so it can look.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LogCheck {
    /// The log's path, as given.
    pub path: String,
    /// What it showed.
    #[serde(flatten)]
    pub finding: LogFinding,
}

/// What a plugin's log showed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "finding", rename_all = "snake_case")]
pub enum LogFinding {
    /// No secret value sent is in it.
    Clean {
        /// How many distinct values were looked for.
        values: usize,
    },
    /// A secret value sent is in it (the line is said, never the value).
    Leaked {
        /// The first line holding one, from 1.
        line: usize,
    },
    /// The replay sent no secret value: nothing to look for.
    NoSecretSent,
    /// The log could not be read once the calls had ended.
    Unreadable {
        /// Why.
        reason: String,
    },
}

impl LogCheck {
    /// True when it counts against the replay (exit 1): a secret in the log, or a log that
    /// could not be read.
    pub fn matters(&self) -> bool {
        matches!(self.finding, LogFinding::Leaked { .. } | LogFinding::Unreadable { .. })
    }

    /// One line for the text report.
    pub fn line(&self) -> String {
        let what = match &self.finding {
            LogFinding::Clean { values } => format!(
                "no secret value sent is in it ({values} value{} looked for)",
                plural(*values)
            ),
            LogFinding::Leaked { line } => {
                format!(
                    "a secret value sent is in it at line {line} (secrets never appear in logs)"
                )
            }
            LogFinding::NoSecretSent => "not looked at: no secret value was sent".to_owned(),
            LogFinding::Unreadable { reason } => format!("cannot be read: {reason}"),
        };
        format!("driver log '{}': {what}", self.path)
    }
}

impl Report {
    /// The counts.
    pub fn summary(&self) -> Summary {
        let mut s = Summary {
            calls: self.calls.len(),
            values_mapped: self.values_mapped,
            ..Summary::default()
        };
        for c in &self.calls {
            *match c.outcome {
                Outcome::Same => &mut s.same,
                Outcome::Differs { .. } => &mut s.differs,
                Outcome::NewError { .. } => &mut s.new_errors,
                Outcome::ErrorGone { .. } => &mut s.errors_gone,
                Outcome::OtherCode { .. } => &mut s.other_codes,
                Outcome::NotReplayed { .. } => &mut s.not_replayed,
            } += 1;
        }
        s
    }

    /// 0 when every call is the same once generated values are followed (and the driver's log,
    /// when given, holds no secret sent), 1 when not.
    pub fn exit_code(&self) -> u8 {
        u8::from(
            self.calls.iter().any(|c| c.outcome.matters())
                || self.driver_log.as_ref().is_some_and(LogCheck::matters),
        )
    }

    /// One line per call (details indented below it) and the summary line.
    ///
    /// # Errors
    ///
    /// When writing fails.
    pub fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        for c in &self.calls {
            write!(out, "#{} {}: {}", c.call, c.method, c.outcome.name())?;
            match &c.outcome {
                Outcome::Same if c.mapped > 0 => {
                    writeln!(out, " ({} generated value{} followed)", c.mapped, plural(c.mapped))?
                }
                Outcome::Same => writeln!(out)?,
                Outcome::Differs { differences } => {
                    writeln!(out)?;
                    for d in differences {
                        writeln!(out, "    {d}")?;
                    }
                }
                Outcome::NewError { code, message, spec } => {
                    writeln!(out, ": {code}: {message}")?;
                    for line in spec {
                        writeln!(out, "    {line}")?;
                    }
                }
                Outcome::ErrorGone { recorded_code, recorded_message } => {
                    writeln!(out, ": recorded {recorded_code} ({recorded_message}), now OK")?
                }
                Outcome::OtherCode { recorded_code, code, message, spec } => {
                    writeln!(out, ": recorded {recorded_code}, now {code}: {message}")?;
                    for line in spec {
                        writeln!(out, "    {line}")?;
                    }
                }
                Outcome::NotReplayed { reason } => writeln!(out, ": {reason}")?,
            }
        }
        if let Some(log) = &self.driver_log {
            writeln!(out, "{}", log.line())?;
        }
        writeln!(out, "{}", self.summary_line())
    }

    /// `replay: 679 calls: 679 same; 51 generated values followed`.
    pub fn summary_line(&self) -> String {
        let s = self.summary();
        let mut parts = vec![format!("{} same", s.same)];
        for (n, one, many) in [
            (s.differs, "differs", "differ"),
            (s.new_errors, "new error", "new errors"),
            (s.errors_gone, "error gone", "errors gone"),
            (s.other_codes, "other code", "other codes"),
            (s.not_replayed, "not replayed", "not replayed"),
        ] {
            if n > 0 {
                parts.push(format!("{n} {}", if n == 1 { one } else { many }));
            }
        }
        format!(
            "replay: {} call{}: {}; {} generated value{} followed",
            s.calls,
            plural(s.calls),
            parts.join(", "),
            s.values_mapped,
            plural(s.values_mapped)
        )
    }

    /// The report as JSON: `{"calls": [...], "summary": {...}}`, and `"driver_log": {"path",
    /// "finding", ...}` when a log was read.
    pub fn to_json(&self) -> serde_json::Value {
        let mut json = serde_json::json!({ "calls": self.calls, "summary": self.summary() });
        if let Some(log) = &self.driver_log {
            json["driver_log"] = serde_json::json!(log);
        }
        json
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: i32, message: &str) -> Answer<'_> {
        Answer { status, message, response: None }
    }

    fn verdict(recorded: Answer<'_>, replayed: Answer<'_>) -> Outcome {
        let schema = Schema::builtin().expect("schema");
        let row = |code: i32| {
            if code == 5 { vec!["spec: Volume does not exist".to_owned()] } else { Vec::new() }
        };
        judge(&schema, &mut IdMap::default(), recorded, replayed, &row).0
    }

    #[test]
    fn statuses_make_the_verdict() {
        assert_eq!(verdict(answer(5, "a"), answer(5, "b")), Outcome::Same);
        assert_eq!(
            verdict(answer(0, ""), answer(5, "gone")),
            Outcome::NewError {
                code: "NOT_FOUND".into(),
                message: "gone".into(),
                spec: vec!["spec: Volume does not exist".into()]
            }
        );
        assert_eq!(
            verdict(answer(6, "exists"), answer(0, "")),
            Outcome::ErrorGone {
                recorded_code: "ALREADY_EXISTS".into(),
                recorded_message: "exists".into()
            }
        );
        assert!(matches!(
            verdict(answer(5, ""), answer(13, "lookup failed")),
            Outcome::OtherCode { ref recorded_code, ref code, .. } if recorded_code == "NOT_FOUND" && code == "INTERNAL"
        ));
        assert!(matches!(verdict(answer(-1, ""), answer(0, "")), Outcome::NotReplayed { .. }));
        // OK with no response on one side is a difference, never a panic.
        assert!(matches!(verdict(answer(0, ""), answer(0, "")), Outcome::Differs { .. }));
    }

    #[test]
    fn the_exit_code_and_summary_count_what_matters() {
        let call = |n, outcome| CallReport {
            call: n,
            method: "/csi.v1.Controller/CreateVolume".into(),
            outcome,
            mapped: 1,
            rewritten: 0,
            ignored: 0,
        };
        let mut report =
            Report { calls: vec![call(1, Outcome::Same)], values_mapped: 1, driver_log: None };
        assert_eq!(report.exit_code(), 0);
        assert_eq!(report.summary_line(), "replay: 1 call: 1 same; 1 generated value followed");
        report.calls.push(call(2, Outcome::NotReplayed { reason: "streaming".into() }));
        assert_eq!(report.exit_code(), 0);
        report.calls.push(call(
            3,
            Outcome::Differs {
                differences: vec![Difference {
                    path: "volume.capacity_bytes".into(),
                    recorded: "1".into(),
                    replayed: "2".into(),
                }],
            },
        ));
        assert_eq!(report.exit_code(), 1);
        let mut text = Vec::new();
        report.write_text(&mut text).expect("writes");
        let text = String::from_utf8(text).expect("utf-8");
        assert!(
            text.contains(
                "#3 /csi.v1.Controller/CreateVolume: differs\n    volume.capacity_bytes: 1 -> 2\n"
            ),
            "{text}"
        );
        assert!(
            text.ends_with(
                "replay: 3 calls: 1 same, 1 differs, 1 not replayed; 1 generated value followed\n"
            ),
            "{text}"
        );
        let json = report.to_json();
        assert_eq!(json["calls"][2]["outcome"], "differs");
        assert_eq!(json["calls"][2]["differences"][0]["path"], "volume.capacity_bytes");
        assert_eq!(json["summary"]["differs"], 1);
        assert!(json.get("driver_log").is_none());
    }

    #[test]
    fn a_secret_in_the_driver_log_counts_and_names_its_line() {
        let mut report = Report::default();
        let log = |finding| Some(LogCheck { path: "plugin.log".into(), finding });
        report.driver_log = log(LogFinding::Clean { values: 2 });
        assert_eq!(report.exit_code(), 0);
        report.driver_log = log(LogFinding::NoSecretSent);
        assert_eq!(report.exit_code(), 0);
        report.driver_log = log(LogFinding::Leaked { line: 7 });
        assert_eq!(report.exit_code(), 1);
        let mut text = Vec::new();
        report.write_text(&mut text).expect("writes");
        let text = String::from_utf8(text).expect("utf-8");
        assert!(text.contains("driver log 'plugin.log': a secret value sent is in it at line 7"));
        let json = report.to_json();
        assert_eq!(json["driver_log"]["finding"], "leaked");
        assert_eq!(json["driver_log"]["line"], 7);
        report.driver_log = log(LogFinding::Unreadable { reason: "gone".into() });
        assert_eq!(report.exit_code(), 1);
    }
}

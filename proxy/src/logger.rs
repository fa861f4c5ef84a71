//! The logger: each completed call decoded with the types its method names, checked against the
//! spec's rules on both sides, its status message scrubbed, printed ([`crate::print`]) and
//! recorded (the capture format of `csi_view_core::capture`).

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::UNIX_EPOCH;

use anyhow::{Context as _, Result};
use csi_view_core::capture;
use csi_view_core::mask::{SecretMask, redact_bytes, secret_strings};
use csi_view_core::schema::Schema;
use csi_view_core::validate::validate_bytes;
use csikit_runtime::redact::scrub;
use prost_reflect::MethodDescriptor;

use crate::config::{Format, Options, Summary};
use crate::endpoint::shown;
use crate::grpc::messages;
use crate::print::{self, Seen, Side};
use crate::tracker::CallRecord;
use csi_view_core::timestamp::rfc3339;

/// Creates the recording and writes its header line (mode 0600 when it keeps secrets).
pub(crate) fn open_record(
    path: &Path,
    options: &Options,
) -> Result<std::io::BufWriter<std::fs::File>> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let mut open = std::fs::OpenOptions::new();
    open.write(true).create(true).truncate(true);
    if options.keep_secrets {
        open.mode(0o600);
    }
    let file = open.open(path).with_context(|| format!("cannot write '{}'", path.display()))?;
    if options.keep_secrets {
        // An existing file keeps its mode through `open`: narrow it.
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
            .with_context(|| format!("cannot set the mode of '{}'", path.display()))?;
    }
    let mut w = std::io::BufWriter::new(file);
    let header = capture::Header {
        csi_view_capture: capture::VERSION,
        secrets: if options.keep_secrets { "kept" } else { "blanked" }.into(),
        upstream: shown(&options.upstream),
    };
    serde_json::to_writer(&mut w, &header)?;
    w.write_all(b"\n")?;
    w.flush()?;
    Ok(w)
}

/// Prints and records completed calls; counts them for the [`Summary`].
pub(crate) struct Logger {
    schema: Arc<Schema>,
    out: Box<dyn Write + Send>,
    record: Option<std::io::BufWriter<std::fs::File>>,
    options: Options,
    summary: Summary,
    methods: HashMap<String, Option<MethodDescriptor>>,
    /// What the calls since the last flush printed, written in one piece when flushed.
    printed: Vec<u8>,
}

impl Logger {
    /// A logger printing to `out` and recording to `record`, as `options` say.
    pub(crate) fn new(
        schema: Arc<Schema>,
        out: Box<dyn Write + Send>,
        record: Option<std::io::BufWriter<std::fs::File>>,
        options: Options,
    ) -> Self {
        Self {
            schema,
            out,
            record,
            options,
            summary: Summary::default(),
            methods: HashMap::new(),
            printed: Vec::new(),
        }
    }

    /// Writes out what is printed so far.
    ///
    /// # Errors
    ///
    /// When the output cannot be written.
    pub(crate) fn flush(&mut self) -> std::io::Result<()> {
        if !self.printed.is_empty() {
            self.out.write_all(&self.printed)?;
            self.printed.clear();
            // A burst's room is not kept for ever.
            self.printed.shrink_to(1 << 20);
        }
        self.out.flush()
    }

    /// Flushes the output and the recording; what the run saw.
    ///
    /// # Errors
    ///
    /// When either cannot be written.
    pub(crate) fn finish(mut self) -> std::io::Result<Summary> {
        self.flush()?;
        if let Some(r) = self.record.as_mut() {
            r.flush()?;
        }
        Ok(self.summary)
    }

    /// Decodes, checks, prints and records one completed call.
    pub(crate) fn call(&mut self, call: CallRecord) -> Result<()> {
        let method = match self.methods.get(&call.method) {
            Some(m) => m.clone(),
            None => {
                let m = self.schema.find_method(&call.method);
                self.methods.insert(call.method.clone(), m.clone());
                m
            }
        };
        let requests = Side {
            desc: method.as_ref().map(MethodDescriptor::input),
            messages: messages(&call.request).collect(),
        };
        let responses = Side {
            desc: method.as_ref().map(MethodDescriptor::output),
            messages: messages(&call.response).collect(),
        };
        let status = call.status.unwrap_or(-1);
        // The request's secrets are only looked for when there is a status message to take
        // them out of.
        let message = if self.options.keep_secrets || call.message.is_empty() {
            call.message.clone()
        } else {
            // view-core's one reading of which bytes of a message are secret.
            let secrets: Vec<String> = requests.desc.as_ref().map_or_else(Vec::new, |desc| {
                let each = requests.messages.iter();
                each.flat_map(|m| secret_strings(&self.schema, desc, m)).collect()
            });
            scrub(&call.message, &secrets).into_owned()
        };
        let mut violations = Vec::new();
        for (side, s) in [("request", &requests), ("response", &responses)] {
            if let Some(desc) = &s.desc {
                for m in &s.messages {
                    match validate_bytes(&self.schema, desc, m) {
                        Some(vs) => {
                            violations.extend(vs.into_iter().map(|v| format!("{side}: {v}")));
                        }
                        None => {
                            violations.push(format!("{side}: not a valid {}", desc.full_name()))
                        }
                    }
                }
            }
        }
        self.summary.calls += 1;
        if !violations.is_empty() {
            self.summary.broke_rules += 1;
        }
        if !call.concurrent_with.is_empty() {
            self.summary.concurrent += 1;
        }
        let start = call.start.unwrap_or(UNIX_EPOCH);
        let seen = Seen {
            call: &call,
            start,
            status,
            message: &message,
            requests,
            responses,
            violations: &violations,
        };
        match self.options.format {
            Format::Text => print::text(&self.schema, &seen, &mut self.printed)?,
            Format::Json => print::json(&self.schema, &seen, &mut self.printed)?,
        }
        if let Some(w) = self.record.as_mut() {
            let keep = self.options.keep_secrets;
            let stored = |s: &Side| -> Vec<String> {
                s.messages
                    .iter()
                    .map(|m| match (&s.desc, keep) {
                        (Some(d), false) => {
                            let mask = SecretMask::of_types(&self.schema, m, [d]);
                            capture::encode(&redact_bytes(d, m, &mask))
                        }
                        _ => capture::encode(m),
                    })
                    .collect()
            };
            let line = capture::Call {
                call: call.id,
                method: call.method.clone(),
                start: rfc3339(start),
                start_unix_ns: start.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos()),
                duration_ns: u64::try_from(call.duration.as_nanos()).unwrap_or(u64::MAX),
                status,
                message: message.clone(),
                requests: stored(&seen.requests),
                responses: stored(&seen.responses),
            };
            let mut bytes = serde_json::to_vec(&line)?;
            bytes.push(b'\n');
            // Whole lines only: a line is written in one call once the buffer cannot hold it.
            if w.capacity() - w.buffer().len() < bytes.len() {
                w.flush()?;
            }
            w.write_all(&bytes)?;
        }
        Ok(())
    }
}

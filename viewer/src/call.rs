//! `csi-view call [ENDPOINT] METHOD [REQUEST]`: requests to a plugin, checked against the spec
//! before they go, on one connection, each answer printed annotated (or as JSON) with secrets
//! hidden, and a failed status shown beside the spec's error-table row for that RPC and code.
//!
//! The arguments: a first argument with a `:` (a scheme: `unix:`, `tcp:`) or an absolute path
//! that names no method is the endpoint; else the endpoint is `$CSI_ENDPOINT`. The request comes
//! from the REQUEST argument, `-d TEXT`, `-d @FILE`, `-d @-` (stdin), or stdin when it is not a
//! terminal; else it is empty (zero bytes, a valid message). Several requests (JSON values one
//! after another, or text separated by `---` lines) are sent in order on one connection, and
//! the first that fails ends the run. Secrets come from `--secrets FILE` or `$CSI_SECRETS`
//! (csi-sanity's YAML): the RPC's kind goes into the request's secret fields, and those values
//! are hidden in everything printed (the echoed request, responses, status messages).
//!
//! Exit code: 0 when every call answered OK, else the gRPC code of the call that failed (14
//! UNAVAILABLE when nothing answers at the endpoint, 4 DEADLINE_EXCEEDED past `--timeout`); 2 for
//! bad input (an unknown method, a request that does not read or breaks the spec's rules, a bad
//! endpoint or secrets file), which is also gRPC's UNKNOWN: stderr says which.

use std::io::{IsTerminal, Read, Write};

use anyhow::{Context, Result, anyhow, bail};
use csi_view::send::{Outgoing, Plugin, Reply};
use csi_view_core::method;
use csi_view_core::render::{self, RenderOptions};
use csi_view_core::request;
use csi_view_core::rpcs::{ErrorLookup, Table};
use csi_view_core::schema::Schema;
use csikit_runtime::endpoint::Flag;
use csikit_runtime::secrets::Secrets;
use prost_reflect::MethodDescriptor;

use crate::args::{CallArgs, OutFormat, timeout};
use crate::load::{load_schema, stdout};

/// The exit code of bad input.
const BAD_INPUT: u8 = 2;

pub(crate) fn call(a: CallArgs) -> Result<u8> {
    let schema = load_schema(&a.schema)?;
    let (endpoint, name, inline) = positionals(&schema, &a)?;
    let method = method::resolve(&schema, &name)?;
    if method.is_client_streaming() || method.is_server_streaming() {
        bail!("'{}' is a streaming RPC; call sends unary calls", method::path(&method));
    }
    let flag = Flag { name: "ENDPOINT", value: endpoint.as_deref() };
    let endpoint = csikit_runtime::endpoint::required(Some(flag))?;
    let timeout = timeout(a.timeout)?;
    let secrets = match &a.secrets {
        Some(p) => Secrets::read(p).map_err(|e| anyhow!("--secrets {e}"))?,
        None => Secrets::default(),
    };
    let (source, input) = request_input(a.data.as_deref(), inline)?;
    let requests =
        request::parse_all(&method.input(), &input).map_err(|e| anyhow!("{source}:{e}"))?;
    let sent = prepare(&schema, &method, &secrets, requests, !a.no_validate);
    let Some(sent) = sent else {
        return Ok(BAD_INPUT);
    };
    let options = RenderOptions {
        json: a.format == OutFormat::Json,
        defaults: a.defaults,
        plain: a.no_annotations,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let plugin = Plugin::new(endpoint.written, timeout);
    rt.block_on(send(&schema, &method, &plugin, sent, options, a.echo))
}

/// Whether a positional that may be an endpoint or a method is the endpoint: it has a ':' (a
/// scheme), or is an absolute path that names no method (`call`, `describe`).
pub(crate) fn names_endpoint(schema: &Schema, s: &str) -> bool {
    s.contains(':') || (s.starts_with('/') && method::resolve(schema, s).is_err())
}

/// ENDPOINT, METHOD and REQUEST from the one to three positionals.
fn positionals(schema: &Schema, a: &CallArgs) -> Result<(Option<String>, String, Option<String>)> {
    let is_endpoint = |s: &str| names_endpoint(schema, s);
    Ok(match (&a.first, &a.second, &a.third) {
        (e, Some(m), Some(r)) => (Some(e.clone()), m.clone(), Some(r.clone())),
        (e, Some(m), None) if is_endpoint(e) => (Some(e.clone()), m.clone(), None),
        (m, Some(r), None) => (None, m.clone(), Some(r.clone())),
        (m, None, _) if is_endpoint(m) => bail!("no METHOD after the endpoint '{m}'"),
        (m, None, _) => (None, m.clone(), None),
    })
}

/// Where the requests come from (named for errors) and their text.
fn request_input(data: Option<&str>, inline: Option<String>) -> Result<(String, String)> {
    let stdin = || -> Result<(String, String)> {
        let mut v = Vec::new();
        std::io::stdin().lock().read_to_end(&mut v).context("cannot read stdin")?;
        Ok(("stdin".to_owned(), utf8(v, "stdin")?))
    };
    match (data, inline) {
        (Some(_), Some(_)) => bail!("give the request once: as REQUEST or with -d, not both"),
        (None, Some(text)) => Ok(("REQUEST".to_owned(), text)),
        (Some("@-"), None) => stdin(),
        (Some(d), None) => match d.strip_prefix('@') {
            Some(path) => {
                let bytes = std::fs::read(path).with_context(|| format!("cannot read '{path}'"))?;
                Ok((path.to_owned(), utf8(bytes, path)?))
            }
            None => Ok(("-d".to_owned(), d.to_owned())),
        },
        (None, None) if !std::io::stdin().is_terminal() => stdin(),
        (None, None) => Ok(("REQUEST".to_owned(), String::new())),
    }
}

fn utf8(bytes: Vec<u8>, name: &str) -> Result<String> {
    String::from_utf8(bytes)
        .map_err(|e| anyhow!("{name}: not UTF-8 at byte {}", e.utf8_error().valid_up_to()))
}

/// A request ready to send, and the line of the input it was written at.
struct Prepared {
    line: usize,
    request: Outgoing,
}

/// Puts the secrets in and checks every request; `None` (after printing why) when a request
/// breaks the spec's rules and validation is on.
fn prepare(
    schema: &Schema,
    method: &MethodDescriptor,
    secrets: &Secrets,
    requests: Vec<request::Request>,
    validate: bool,
) -> Option<Vec<Prepared>> {
    let rpc_secrets = secrets.for_rpc(method.name());
    let secret_fields = request::secret_map_fields(schema, &method.input());
    if !secrets.is_empty() && !secret_fields.is_empty() && !secrets.has_rpc(method.name()) {
        eprintln!(
            "# the secrets file has no {} for {}; none added",
            csikit_runtime::secrets::kind_of(method.name()),
            method.name()
        );
    }
    let many = requests.len() > 1;
    let mut out = Vec::with_capacity(requests.len());
    let mut refused = false;
    for (i, r) in requests.into_iter().enumerate() {
        let mut message = r.message;
        request::fill_secrets(schema, &mut message, &rpc_secrets);
        let checked = if validate {
            Outgoing::checked(schema, method, &message)
        } else {
            Ok(Outgoing::new(schema, method, &message))
        };
        match checked {
            Ok(request) => out.push(Prepared { line: r.line, request }),
            Err(violations) => {
                let which = if many {
                    format!("request {} (line {}): ", i + 1, r.line)
                } else {
                    String::new()
                };
                for v in &violations {
                    eprintln!("violation: {which}{v}");
                }
                refused = true;
            }
        }
    }
    if refused {
        eprintln!(
            "error: not sent: the request breaks the spec's rules (--no-validate sends it anyway)"
        );
        return None;
    }
    Some(out)
}

async fn send(
    schema: &Schema,
    method: &MethodDescriptor,
    plugin: &Plugin,
    requests: Vec<Prepared>,
    options: RenderOptions,
    echo: bool,
) -> Result<u8> {
    let path = method::path(method);
    let count = requests.len();
    let mut out = stdout();
    for (i, r) in requests.into_iter().enumerate() {
        if echo {
            let text_options = RenderOptions { json: false, ..options };
            let sent = &r.request;
            let shown =
                render::render(schema, &method.input(), sent.bytes(), text_options, sent.secrets())
                    .map_err(|e| anyhow!("{e}"))?;
            eprint!("# request {} (line {}) to {path}\n{}", i + 1, r.line, shown.text);
        }
        let reply = plugin.send(r.request).await;
        if count > 1 && !options.json {
            writeln!(
                out,
                "# {} {}/{count}: {} in {:.1} ms",
                method.name(),
                i + 1,
                reply.status_name(),
                reply.answer.elapsed.as_secs_f64() * 1e3
            )?;
        }
        let code = print_reply(&mut out, schema, method, &reply, options)?;
        if code != 0 {
            out.flush()?;
            return Ok(code);
        }
    }
    out.flush()?;
    Ok(0)
}

/// Prints a response, or the status with what the spec says about it; returns the exit code.
fn print_reply(
    out: &mut impl Write,
    schema: &Schema,
    method: &MethodDescriptor,
    reply: &Reply,
    options: RenderOptions,
) -> Result<u8> {
    if let Some(bytes) = reply.response_bytes() {
        return match render::render(schema, &method.output(), bytes, options, reply.secrets()) {
            Ok(shown) => {
                out.write_all(shown.text.as_bytes())?;
                if shown.scrubbed {
                    eprintln!("# the response held a secret value sent with the request (hidden)");
                }
                Ok(0)
            }
            Err(e) => {
                eprintln!(
                    "error: INTERNAL: the response is not a valid {}: {e}",
                    method.output().full_name()
                );
                Ok(tonic::Code::Internal as u8)
            }
        };
    }
    let code = reply.code();
    let name = reply.status_name();
    let message = reply.message();
    let explained = reply.explain(schema);
    if options.json {
        let spec: Vec<serde_json::Value> = match reply.error_rows(schema) {
            Some(ErrorLookup::Rows { table, rows, carried_from }) => rows
                .iter()
                .map(|r| {
                    serde_json::json!({
                        "table": match table {
                            Table::Rpc => method.name(),
                            Table::General => "general",
                        },
                        "condition": r.condition,
                        "description": r.description,
                        "recovery": r.recovery,
                        "carried_from": carried_from,
                    })
                })
                .collect(),
            _ => Vec::new(),
        };
        let value = serde_json::json!({ "error": {
            "code": code, "status": name, "message": message, "spec": spec, "note": explained,
        }});
        serde_json::to_writer_pretty(&mut *out, &value)?;
        writeln!(out)?;
    } else {
        let message = message.replace('\n', " ");
        eprintln!("{name}: {message}");
        for line in explained {
            eprintln!("  {line}");
        }
    }
    Ok(u8::try_from(code).unwrap_or(2))
}

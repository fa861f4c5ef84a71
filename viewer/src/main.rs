//! `csi-view`: view, validate and edit binary CSI messages from the command line, run the proxy,
//! or serve the web page. This file is the command line's wiring; each command lives in the module
//! named for what it does.
//!
//! Exit codes: 0 success; 1 validation failed, the messages differ, an edit was refused or its
//! editor failed, or a replayed call answered otherwise than recorded; 2 bad input (not protobuf,
//! wrong type, empty, unknown type name, a capture that does not read) or a bad command line. Errors are one line on stderr, with the byte offset where the input is bad.
//!
//! `call` exits with 0 or the gRPC code of the call that failed (2 for bad input, as above, which
//! is also gRPC's UNKNOWN: stderr says which); `list` and `describe` likewise, `describe` with 1
//! when an RPC the spec obliges the plugin to implement answers UNIMPLEMENTED.
//!
//! Modules: `args` (the command line), `load` (the schema and messages every command starts from),
//! `view` (the read-only views), `check` (validate, diff, replay), `change` (encode, edit), `serve`
//! (the long-running `ui` and `proxy`), `call` (requests to a plugin), `describe` (`list` and
//! `describe`: what a plugin says it is) and `complete` (shell completion scripts).

mod args;
mod call;
mod change;
mod check;
mod complete;
mod describe;
mod load;
mod serve;
mod view;

use std::io;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

use crate::args::{
    CallArgs, CompletionArgs, DecodeArgs, DescribeArgs, DetectArgs, DiffArgs, EditArgs, EncodeArgs,
    ProxyArgs, RawArgs, ReplayArgs, UiArgs, ValidateArgs,
};

/// View, validate and edit binary CSI (or any protobuf) messages.
#[derive(Parser, Debug)]
#[command(
    name = "csi-view",
    version,
    about,
    after_help = "Exit codes: 0 ok, 1 validation failed / differences / edit refused / a replayed call differs, 2 bad input or usage; call, list and describe: the gRPC code of a failed call."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Print a message as protobuf text format annotated with the spec, or as JSON.
    Decode(DecodeArgs),
    /// Print the wire layout (offsets, tags, wire types, lengths), no schema needed.
    #[command(
        mut_arg("ty", |a| a.help("Message type, to name fields and redact secrets (the layout needs none)")),
        mut_arg("show_secrets", |a| a.help("Show secret values (only matters with --type)"))
    )]
    Raw(RawArgs),
    /// Rank every known message type by how well the bytes fit.
    Detect(DetectArgs),
    /// Encode text format or JSON to raw bytes, hex, base64 or a gRPC frame.
    Encode(EncodeArgs),
    /// Check the spec rules; exit 1 when any is broken.
    #[command(mut_arg("capture", |a| {
        a.help("Check every message of a capture written by `csi-view proxy --record`")
    }))]
    Validate(ValidateArgs),
    /// Field-level differences between two messages; exit 1 when they differ.
    #[command(mut_arg("ty", |a| a.help("Message type of both; detected when absent")))]
    Diff(DiffArgs),
    /// Edit a message in $EDITOR; re-encoded, validated and written atomically.
    #[command(mut_arg("show_secrets", |a| a.help("Show secret values in the editor")))]
    Edit(EditArgs),
    /// Browse a message as a tree with the spec docs beside it; edit scalars; save atomically.
    #[command(mut_arg("show_secrets", |a| a.help("Show secret values in the editor")))]
    Tui(EditArgs),
    /// A gRPC proxy between a CO and a plugin over unix sockets, printing every call decoded,
    /// checked and with secrets hidden; optionally recorded.
    Proxy(ProxyArgs),
    /// View and edit messages (files, captures, pasted hex or base64) in a local web page, and
    /// call a plugin from it (--endpoint).
    Ui(UiArgs),
    /// Send a capture's calls again to a plugin and compare each answer with the recorded one,
    /// following the ids and tokens the plugin generates; exit 1 when one differs.
    Replay(ReplayArgs),
    /// Send requests (JSON or text format) to a plugin, checked against the spec first; print
    /// each answer annotated, or the status with the spec's error-table row.
    Call(CallArgs),
    /// What a plugin says it is (identity, capabilities) beside what the spec obliges it to
    /// implement.
    List(DescribeArgs),
    /// As list, plus every RPC of each served service: obliged or not, and whether the plugin
    /// answers it (only RPCs that read are called).
    Describe(DescribeArgs),
    /// Print a shell completion script (commands, flags, the built-in schema's method names).
    Completions(CompletionArgs),
}

fn main() -> ExitCode {
    // clap prints help or the error, and exits 0 or 2 (a bad command line).
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            if e.downcast_ref::<io::Error>().is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
            {
                return ExitCode::SUCCESS;
            }
            let msg = format!("{e:#}").replace('\n', " ");
            eprintln!("error: {msg}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<u8> {
    match cli.command {
        Cmd::Decode(a) => view::decode(a),
        Cmd::Raw(a) => view::raw(a),
        Cmd::Detect(a) => view::detect(a),
        Cmd::Encode(a) => change::encode(a),
        Cmd::Validate(a) => check::validate(a),
        Cmd::Diff(a) => check::diff(a),
        Cmd::Edit(a) => change::edit(a),
        Cmd::Tui(a) => change::tui(a),
        Cmd::Proxy(a) => serve::proxy(a),
        Cmd::Ui(a) => serve::ui(a),
        Cmd::Replay(a) => check::replay(a),
        Cmd::Call(a) => call::call(a),
        Cmd::List(a) => describe::list(a),
        Cmd::Describe(a) => describe::describe(a),
        Cmd::Completions(a) => complete::completions(a),
    }
}

//! `csi-view`: view, validate and edit binary CSI messages from the command line, run the proxy,
//! or serve the web page. This file is the command line's wiring; each command lives in the module
//! named for what it does.
//!
//! Exit codes: 0 success; 1 validation failed, the messages differ, or an edit was refused or
//! its editor failed, or a replayed call answered otherwise than recorded; 2 bad input (not protobuf, wrong type, empty, unknown type name) or a bad
//! command line. Errors are one line on stderr, with the byte offset where the input is bad.
//!
//! Modules: `args` (the command line), `load` (the schema and messages every command starts from),
//! `view` (the read-only views), `check` (validate, diff, replay), `change` (encode, edit) and `serve`
//! (the long-running `ui` and `proxy`).

mod args;
mod change;
mod check;
mod load;
mod serve;
mod view;

use std::io;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

use crate::args::{
    DecodeArgs, DetectArgs, DiffArgs, EditArgs, EncodeArgs, ProxyArgs, RawArgs, ReplayArgs, UiArgs,
    ValidateArgs,
};

/// View, validate and edit binary CSI (or any protobuf) messages.
#[derive(Parser, Debug)]
#[command(
    name = "csi-view",
    version,
    about,
    after_help = "Exit codes: 0 ok, 1 validation failed / differences / edit refused / a replayed call differs, 2 bad input or usage."
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Print a message as protobuf text format annotated with the spec, or as JSON.
    Decode(DecodeArgs),
    /// Print the wire layout (offsets, tags, wire types, lengths), no schema needed.
    Raw(RawArgs),
    /// Rank every known message type by how well the bytes fit.
    Detect(DetectArgs),
    /// Encode text format or JSON to raw bytes, hex, base64 or a gRPC frame.
    Encode(EncodeArgs),
    /// Check the spec rules; exit 1 when any is broken.
    Validate(ValidateArgs),
    /// Field-level differences between two messages; exit 1 when they differ.
    Diff(DiffArgs),
    /// Edit a message in $EDITOR; re-encoded, validated and written atomically.
    Edit(EditArgs),
    /// Browse a message as a tree with the spec docs beside it; edit scalars; save atomically.
    Tui(EditArgs),
    /// A gRPC proxy between a CO and a plugin over unix sockets, printing every call decoded,
    /// checked and with secrets hidden; optionally recorded.
    Proxy(ProxyArgs),
    /// View and edit messages (files, captures, pasted hex or base64) in a local web page.
    Ui(UiArgs),
    /// Send a capture's calls again to a plugin and compare each answer with the recorded one,
    /// following the ids and tokens the plugin generates; exit 1 when one differs.
    Replay(ReplayArgs),
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
    }
}

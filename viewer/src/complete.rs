//! `csi-view completions SHELL`: the completion script clap's generator writes for the whole
//! command line (subcommands, flags, value lists), with the built-in schema's method names as
//! the candidates for `call`'s METHOD (see `args::MethodOrEndpoint`).

use anyhow::Result;
use clap::CommandFactory;

use crate::Cli;
use crate::args::CompletionArgs;

pub(crate) fn completions(a: CompletionArgs) -> Result<u8> {
    let mut command = Cli::command();
    let mut out = std::io::stdout().lock();
    clap_complete::generate(a.shell, &mut command, "csi-view", &mut out);
    Ok(0)
}

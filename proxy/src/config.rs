//! What the proxy is told to do ([`Options`], [`Format`]) and what it reports at the end ([`Summary`]).

use std::path::PathBuf;

/// How the proxy prints calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Annotated text, a block per call.
    Text,
    /// One JSON object per call, per line.
    Json,
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where COs connect.
    pub listen: PathBuf,
    /// Where the plugin listens.
    pub upstream: PathBuf,
    /// Record every call here.
    pub record: Option<PathBuf>,
    /// Keep secret values in the recording (mode 0600) and in status messages.
    pub keep_secrets: bool,
    /// Output format.
    pub format: Format,
}

/// What a run saw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Calls that completed.
    pub calls: u64,
    /// Calls whose request or response broke a spec rule.
    pub broke_rules: u64,
    /// Calls flagged as concurrent with another on the same volume.
    pub concurrent: u64,
}

//! An answer as the model reads it: the part of each RPC's reply a rule looks at, the
//! listings followed over their pages, and how an answer is shown in a finding.

use tonic::Code;

use super::super::call::Bounds;
use crate::suite::code_name;

/// What the plugin answered, as the model reads it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Reply {
    Ok(Body),
    Err { code: Code, message: String },
}

/// The part of an answer the model reads.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Body {
    /// Nothing the model reads (or an answer without its REQUIRED message, which the facts'
    /// checks report).
    Empty,
    /// CreateVolume: its id, capacity and content source (kind and id, as answered).
    Volume { id: String, capacity: i64, source: Option<(bool, String)> },
    /// CreateSnapshot: `created` is `creation_time` (seconds, nanos) when answered.
    Snapshot { id: String, source: String, size: i64, ready: bool, created: Option<(i64, i32)> },
    /// ValidateVolumeCapabilities: whether `confirmed` was set.
    Validated { confirmed: bool },
    /// GetCapacity's numbers.
    Bounds(Bounds),
    /// ControllerExpandVolume: `capacity_bytes` and `node_expansion_required`.
    Expanded { capacity: i64, node: bool },
    /// ListVolumes, every page.
    Volumes(Listing<Listed>),
    /// ListVolumes, its first page only: its entries, and whether it set `next_token`.
    Page { entries: Vec<Listed>, token: bool },
    /// ListSnapshots, every page.
    Snapshots(Listing<ListedSnapshot>),
    /// ListSnapshots, its first page only: its entries, and whether it set `next_token`.
    SnapPage { entries: Vec<ListedSnapshot>, token: bool },
    /// ControllerGetVolume.
    Got(Listed),
    /// GetSnapshot.
    GotSnapshot(ListedSnapshot),
    /// NodeExpandVolume.
    Capacity(i64),
    /// CreateVolumeGroupSnapshot, GetVolumeGroupSnapshot: the group's id and its snapshots
    /// (snapshot id, source volume id).
    /// `bound`: each snapshot's `group_snapshot_id` was set (it CAN NOT be deleted alone);
    /// `described`: each snapshot as the answer describes it.
    Group {
        id: String,
        members: Vec<(String, String)>,
        bound: Vec<bool>,
        described: Vec<ListedSnapshot>,
    },
    /// NodePublishVolume, NodeUnpublishVolume: whether something is at the target path after
    /// the call (`None`: the path is not this machine's to look at), and (NodeUnpublishVolume)
    /// which of the volume's other targets, published before the call, are gone after it.
    Target { exists: Option<bool>, gone: Vec<u8> },
}

/// A listing followed over its pages.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Listing<T> {
    pub(crate) entries: Vec<T>,
    pub(crate) end: End,
    /// How many entries the last page held.
    pub(crate) last_page: usize,
    /// When the listing was one full page and no `next_token`: the same listing asked again
    /// without `max_entries`, to tell a page that stopped early from entries never listed.
    pub(crate) unpaged: Option<Vec<T>>,
}

/// How a listing ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum End {
    /// A page without `next_token`.
    Complete,
    /// `next_token` was the token just sent: the same page again, for ever.
    Loop(String),
    /// A page answered an error (the spec allows it; what was listed is still read).
    Failed(Code),
}

/// A volume as ListVolumes or ControllerGetVolume describes it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Listed {
    pub(crate) id: String,
    pub(crate) capacity: i64,
    /// Its `content_source` (kind: a snapshot; id), when answered.
    pub(crate) source: Option<(bool, String)>,
    /// Whether `published_node_ids` holds the explorer's node (`None`: no status answered).
    pub(crate) on_node: Option<bool>,
}

/// A snapshot as ListSnapshots, GetSnapshot or a group snapshot describes it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ListedSnapshot {
    pub(crate) id: String,
    pub(crate) source: String,
    pub(crate) ready: bool,
    pub(crate) size: i64,
    /// `creation_time` (seconds, nanos), when answered.
    pub(crate) created: Option<(i64, i32)>,
    /// `group_snapshot_id` (empty: not set).
    pub(crate) group: String,
}

/// `OK`, or `NOT_FOUND: message`.
pub(crate) fn show(reply: &Reply) -> String {
    match reply {
        Reply::Ok(_) => "OK".to_owned(),
        Reply::Err { code, message } => format!("{}: {message}", code_name(*code)),
    }
}

pub(crate) fn code(reply: &Reply) -> Code {
    match reply {
        Reply::Ok(_) => Code::Ok,
        Reply::Err { code, .. } => *code,
    }
}

//! The symbolic calls of a history: what a step asks of the plugin in terms of the history's own
//! objects (volume name #n, its g-th volume, target path #t), never of concrete ids or paths, so
//! a history shrunk or replayed maps to fresh names, ids and folders each time it runs.

use std::fmt;

/// The mutable parameter key [`Call::ModifyUnsupported`] adds to the suite's for volume `v`:
/// no plugin takes it, so the call is the row "Parameters not supported" (INVALID_ARGUMENT), or
/// an OK of a plugin that ignores keys it does not know (no sentence makes it refuse them). It
/// sorts before the usual keys for even names and after them for odd ones: a plugin that
/// checks and applies keys one at a time in order has applied the others only when it meets
/// the unsupported one last.
pub(crate) fn unsupported_key(v: Vol) -> &'static str {
    if v.name.is_multiple_of(2) {
        "csi-explore-unsupported-1"
    } else {
        "zz-csi-explore-unsupported-1"
    }
}

/// A volume of the history: volume number `nth` made under volume name #`name` (a name deleted
/// and created again makes its next one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Vol {
    pub(crate) name: u16,
    pub(crate) nth: u16,
}

/// A snapshot of the history: snapshot number `nth` cut under snapshot name #`name`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Snap {
    pub(crate) name: u16,
    pub(crate) nth: u16,
}

/// A group snapshot of the history: group number `nth` cut under group name #`name`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Grp {
    pub(crate) name: u16,
    pub(crate) nth: u16,
}

/// What a GetCapacity with the walk's capability and parameters answered: the bounds of the
/// sizes the walk's CreateVolume and ControllerExpandVolume ask for next (`None`: not answered).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Bounds {
    pub(crate) available: i64,
    pub(crate) max: Option<i64>,
    pub(crate) min: Option<i64>,
}

/// A size far beyond any pool, in MiB: 2^50 bytes (a PiB), which the walk asks for where
/// GetCapacity gave no bound. In MiB it fits a `u32`, and in bytes an `i64` with room to grow.
pub(crate) const FAR: u32 = 1 << 30;

/// What a new volume is made from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Source {
    /// Restored from a snapshot.
    Snapshot(Snap),
    /// Cloned from a volume.
    Volume(Vol),
    /// Restored from a group snapshot's `nth` snapshot (the id its group's answer gave): a
    /// snapshot like one cut alone, to the spec and to the key of a finding.
    Member(Grp, u8),
}

/// Which snapshots a ListSnapshots asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Filter {
    /// Every snapshot.
    All,
    /// `snapshot_id` of this one.
    Id(Snap),
    /// `source_volume_id` of this volume.
    Source(Vol),
}

/// Where on the node a NodeGetVolumeStats looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum At {
    /// The volume's staging path.
    Staging,
    /// The volume's target path #t.
    Target(u8),
}

/// A node path a call names that is not where the volume is staged or published: the
/// volume's own staging path it is not staged at (its second), another volume's staging path or target path #0, or a
/// folder the CO made that belongs to no volume.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Elsewhere {
    SecondStaging,
    Staging(Vol),
    Target(Vol),
    Nowhere,
}

/// Staging paths a volume may be staged at, one at a time: #0, or #1 when staged again after
/// an unstage. [`Elsewhere::SecondStaging`] is the one it is not staged at.
pub(crate) const STAGINGS: u8 = 2;

/// The Node calls sent with a path of [`Elsewhere`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum NodeRpc {
    Stage,
    Unstage,
    Unpublish,
    Stats,
}

/// What a DeleteVolumeGroupSnapshot's `snapshot_ids` names that is not its group's snapshots
/// exactly: one more (a snapshot cut alone, or another group's first snapshot), or one fewer
/// (its last left out).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Mismatch {
    Lone(Snap),
    Other(Grp),
    Short,
}

/// One step of a history: an RPC with symbolic arguments. A CreateVolume or CreateSnapshot of
/// a name whose object is alive is a retry (the same arguments) or an incompatible repeat (a
/// larger size, another source).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Call {
    /// `required_bytes` of `mib` MiB and `limit_bytes` of `limit` MiB (0: not set; no
    /// `capacity_range` when neither is).
    CreateVolume {
        name: u16,
        mib: u32,
        limit: u32,
        source: Option<Source>,
    },
    DeleteVolume(Vol),
    /// To the node the plugin names (`own`), or to a node it never named.
    ControllerPublish {
        vol: Vol,
        readonly: bool,
        own: bool,
    },
    /// From the node the plugin names, or (`all`) without `node_id`: from every node.
    ControllerUnpublish {
        vol: Vol,
        all: bool,
    },
    Validate(Vol),
    /// Every page, `max_entries` each.
    ListVolumes {
        max_entries: i32,
    },
    GetVolume(Vol),
    /// `required_bytes` of `mib` MiB and `limit_bytes` of `limit` MiB (0: not set): no limit,
    /// an exact size (`limit` = `mib`), or a limit above.
    Expand {
        vol: Vol,
        mib: u32,
        limit: u32,
    },
    CreateSnapshot {
        name: u16,
        source: Vol,
    },
    DeleteSnapshot(Snap),
    /// Every page, `max_entries` each.
    ListSnapshots {
        filter: Filter,
        max_entries: i32,
    },
    GetSnapshot(Snap),
    /// NodeStageVolume at staging path #`path` of the volume (0 or 1, see [`STAGINGS`]): a
    /// retry goes to where it is staged; a CO may stage a volume unstaged again at another
    /// (a kubelet restarted with a new plugin folder).
    Stage {
        vol: Vol,
        path: u8,
    },
    Unstage(Vol),
    Publish {
        vol: Vol,
        target: u8,
        readonly: bool,
    },
    Unpublish {
        vol: Vol,
        target: u8,
    },
    Stats {
        vol: Vol,
        at: At,
    },
    /// `required_bytes` of `mib` MiB and `limit_bytes` of `limit` MiB (0: not set; no
    /// `capacity_range` when neither is).
    NodeExpand {
        vol: Vol,
        mib: u32,
        limit: u32,
    },
    /// ControllerModifyVolume with the suite's mutable parameters (`--mutable-parameters`).
    Modify(Vol),
    /// ControllerModifyVolume with the suite's mutable parameters and [`unsupported_key`], a
    /// key no plugin takes.
    ModifyUnsupported(Vol),
    /// CreateVolumeGroupSnapshot of two volumes.
    CreateGroup {
        name: u16,
        vols: [Vol; 2],
    },
    /// DeleteVolumeGroupSnapshot, with the group's snapshot ids.
    DeleteGroup(Grp),
    /// GetVolumeGroupSnapshot, with the group's snapshot ids.
    GetGroup(Grp),
    /// ListVolumes' (`snapshots`: ListSnapshots') first page of `max_entries`, its
    /// `next_token` held (by the attempt) for a later [`Call::ListResume`].
    ListHold {
        max_entries: i32,
        snapshots: bool,
    },
    /// ListVolumes (`snapshots`: ListSnapshots) from the token [`Call::ListHold`] held, after
    /// whatever came since, every page to the end.
    ListResume {
        snapshots: bool,
    },
    /// DeleteSnapshot (`delete`) or GetSnapshot of the group's `nth` snapshot alone, while the
    /// group stands or after it was deleted.
    Member {
        group: Grp,
        nth: u8,
        delete: bool,
    },
    /// A Node call on `vol` at a path that is not where it is staged or published.
    Elsewhere {
        vol: Vol,
        rpc: NodeRpc,
        at: Elsewhere,
    },
    /// GetCapacity, with the capability and parameters the walk creates volumes with, or with
    /// neither.
    GetCapacity {
        with: bool,
    },
    /// DeleteVolumeGroupSnapshot of `group` with `snapshot_ids` that are not its own.
    DeleteGroupMismatch {
        group: Grp,
        ids: Mismatch,
    },
}

impl Call {
    /// The request's shape, where a plugin answers shapes through code of its own, so a rule
    /// broken by one is a finding per shape:
    /// - a listing's: which of `snapshot_id`, `source_volume_id`, `starting_token` and
    ///   `max_entries` its first request sets (a paged listing's later pages add the token);
    ///   csi-driver-host-path's listing by source is not its unfiltered one;
    /// - a CreateVolume with a content source's: the source's kind, and whether it sets a
    ///   `capacity_range` (a plugin sizes a clone or a restore from the request or from its
    ///   source; csi-driver-host-path refuses every one without a size, and a bug in its sizing
    ///   from the source would hide behind that one finding).
    ///
    /// `None` for any other call.
    pub(crate) fn shape(&self) -> Option<&'static str> {
        let paged = |n: i32| n > 0;
        Some(match *self {
            Call::CreateVolume { source: Some(source), mib, limit, .. } => {
                match (source, mib > 0 || limit > 0) {
                    (Source::Snapshot(_) | Source::Member(..), false) => {
                        "from a snapshot, no capacity_range"
                    }
                    (Source::Snapshot(_) | Source::Member(..), true) => {
                        "from a snapshot, capacity_range"
                    }
                    (Source::Volume(_), false) => "from a volume, no capacity_range",
                    (Source::Volume(_), true) => "from a volume, capacity_range",
                }
            }
            Call::ListVolumes { max_entries } if paged(max_entries) => "max_entries",
            Call::ListVolumes { .. } => "no max_entries",
            Call::ListHold { .. } => "max_entries",
            Call::ListResume { .. } => "starting_token",
            Call::ListSnapshots { filter, max_entries } => match (filter, paged(max_entries)) {
                (Filter::All, false) => "no filter, no max_entries",
                (Filter::All, true) => "max_entries",
                (Filter::Id(_), false) => "snapshot_id",
                (Filter::Id(_), true) => "snapshot_id, max_entries",
                (Filter::Source(_), false) => "source_volume_id",
                (Filter::Source(_), true) => "source_volume_id, max_entries",
            },
            _ => return None,
        })
    }

    /// The RPC it makes.
    pub(crate) fn rpc(&self) -> &'static str {
        match self {
            Call::CreateVolume { .. } => "CreateVolume",
            Call::DeleteVolume(_) => "DeleteVolume",
            Call::ControllerPublish { .. } => "ControllerPublishVolume",
            Call::ControllerUnpublish { .. } => "ControllerUnpublishVolume",
            Call::Validate(_) => "ValidateVolumeCapabilities",
            Call::ListHold { snapshots: true, .. } | Call::ListResume { snapshots: true } => {
                "ListSnapshots"
            }
            Call::ListVolumes { .. } | Call::ListHold { .. } | Call::ListResume { .. } => {
                "ListVolumes"
            }
            Call::GetVolume(_) => "ControllerGetVolume",
            Call::Expand { .. } => "ControllerExpandVolume",
            Call::CreateSnapshot { .. } => "CreateSnapshot",
            Call::DeleteSnapshot(_) => "DeleteSnapshot",
            Call::ListSnapshots { .. } => "ListSnapshots",
            Call::GetSnapshot(_) => "GetSnapshot",
            Call::Stage { .. } => "NodeStageVolume",
            Call::Unstage(_) => "NodeUnstageVolume",
            Call::Publish { .. } => "NodePublishVolume",
            Call::Unpublish { .. } => "NodeUnpublishVolume",
            Call::Stats { .. } => "NodeGetVolumeStats",
            Call::NodeExpand { .. } => "NodeExpandVolume",
            Call::Modify(_) | Call::ModifyUnsupported(_) => "ControllerModifyVolume",
            Call::CreateGroup { .. } => "CreateVolumeGroupSnapshot",
            Call::DeleteGroup(_) | Call::DeleteGroupMismatch { .. } => "DeleteVolumeGroupSnapshot",
            Call::GetGroup(_) => "GetVolumeGroupSnapshot",
            Call::Member { delete: true, .. } => "DeleteSnapshot",
            Call::Member { delete: false, .. } => "GetSnapshot",
            Call::Elsewhere { rpc, .. } => match rpc {
                NodeRpc::Stage => "NodeStageVolume",
                NodeRpc::Unstage => "NodeUnstageVolume",
                NodeRpc::Unpublish => "NodeUnpublishVolume",
                NodeRpc::Stats => "NodeGetVolumeStats",
            },
            Call::GetCapacity { .. } => "GetCapacity",
        }
    }

    /// The volume the call is about, if one (for the coverage table and concurrency).
    pub(crate) fn volume(&self) -> Option<Vol> {
        match *self {
            Call::CreateSnapshot { source: v, .. }
            | Call::ListSnapshots { filter: Filter::Source(v), .. }
            | Call::CreateGroup { vols: [v, _], .. } => Some(v),
            mut c => c.volume_mut().copied(),
        }
    }

    /// The call may change what the plugin's pool holds (a volume or snapshot made, grown or
    /// deleted): a GetCapacity answered before it no longer binds what follows.
    pub(crate) fn changes_pool(&self) -> bool {
        matches!(
            self,
            Call::CreateVolume { .. }
                | Call::DeleteVolume(_)
                | Call::Expand { .. }
                | Call::CreateSnapshot { .. }
                | Call::DeleteSnapshot(_)
                | Call::CreateGroup { .. }
                | Call::DeleteGroup(_)
                | Call::DeleteGroupMismatch { .. }
                | Call::Member { delete: true, .. }
                | Call::Modify(_)
                | Call::ModifyUnsupported(_)
        )
    }

    /// The call may cut or delete a snapshot (a held ListSnapshots token's pages may shift).
    pub(crate) fn makes_or_deletes_snapshots(&self) -> bool {
        matches!(
            self,
            Call::CreateSnapshot { .. }
                | Call::DeleteSnapshot(_)
                | Call::CreateGroup { .. }
                | Call::DeleteGroup(_)
                | Call::DeleteGroupMismatch { .. }
                | Call::Member { delete: true, .. }
        )
    }

    /// A listing: it reads every lane's objects, so it goes alone (see `concurrent`).
    pub(crate) fn listing(&self) -> bool {
        matches!(
            self,
            Call::ListVolumes { .. }
                | Call::ListSnapshots { .. }
                | Call::ListHold { .. }
                | Call::ListResume { .. }
        )
    }

    /// Simpler forms of the call that may still show the same problem, for the shrinker: the
    /// first page size that lists everything at once (a held page: the whole listing, or a page
    /// of one entry), no size, no filter.
    pub(crate) fn simpler(&self) -> Vec<Call> {
        match *self {
            Call::ListVolumes { max_entries } if max_entries != 0 => {
                vec![Call::ListVolumes { max_entries: 0 }]
            }
            Call::ListSnapshots { filter, max_entries } if max_entries != 0 => {
                vec![Call::ListSnapshots { filter, max_entries: 0 }]
            }
            // A held first page is a listing made harder: the whole listing at once (the token
            // it held then goes unfollowed), or a page of one.
            Call::ListHold { max_entries, snapshots } => {
                let whole = if snapshots {
                    Call::ListSnapshots { filter: Filter::All, max_entries: 0 }
                } else {
                    Call::ListVolumes { max_entries: 0 }
                };
                let one = (max_entries > 1).then_some(Call::ListHold { max_entries: 1, snapshots });
                std::iter::once(whole).chain(one).collect()
            }
            Call::CreateVolume { name, mib, limit, source } => {
                let mut out = Vec::new();
                if limit != 0 && mib != 0 {
                    out.push(Call::CreateVolume { name, mib, limit: 0, source });
                }
                if (mib != 0 || limit != 0) && source.is_none() {
                    out.push(Call::CreateVolume { name, mib: 0, limit: 0, source });
                }
                out
            }
            _ => Vec::new(),
        }
    }
}

/// Which names a call uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Names {
    Volumes,
    Snapshots,
}

impl Call {
    /// The volume names (or snapshot names) the call uses.
    pub(crate) fn names(&self, kind: Names) -> Vec<u16> {
        let mut out = Vec::new();
        let mut c = *self;
        c.map_names(kind, &mut |n, nth| {
            out.push(n);
            (n, nth)
        });
        out
    }

    /// The call with every use of name `from` (of `kind`) made a use of `to`: for the shrinker,
    /// which tries one object where a history used two.
    pub(crate) fn renamed(&self, kind: Names, from: u16, to: u16) -> Call {
        let mut c = *self;
        c.map_names(kind, &mut |n, nth| if n == from { (to, nth) } else { (n, nth) });
        c
    }

    /// For the shrinker, which tries a history without the first object made under name
    /// `name` (of `kind`): `None` when the call names that object, else the call with each
    /// later object of the name one younger (its `nth` less one).
    pub(crate) fn without_first(&self, kind: Names, name: u16) -> Option<Call> {
        let mut c = *self;
        let mut first = false;
        c.map_names(kind, &mut |n, nth| match (n == name, nth) {
            (true, 0) => {
                first = true;
                (n, nth)
            }
            (true, k) => (n, k - 1),
            _ => (n, nth),
        });
        (!first).then_some(c)
    }

    /// Maps each (name, nth) of `kind` the call uses (a CreateVolume's or CreateSnapshot's own
    /// name is a name with no nth: given as `u16::MAX`, kept as it comes back).
    fn map_names(&mut self, kind: Names, f: &mut impl FnMut(u16, u16) -> (u16, u16)) {
        let vol = |v: &mut Vol, f: &mut dyn FnMut(u16, u16) -> (u16, u16)| {
            (v.name, v.nth) = f(v.name, v.nth);
        };
        let snap = |x: &mut Snap, f: &mut dyn FnMut(u16, u16) -> (u16, u16)| {
            (x.name, x.nth) = f(x.name, x.nth);
        };
        let own = |name: &mut u16, f: &mut dyn FnMut(u16, u16) -> (u16, u16)| {
            *name = f(*name, u16::MAX).0;
        };
        let source = |s: &mut Option<Source>, f: &mut dyn FnMut(u16, u16) -> (u16, u16)| match s {
            Some(Source::Volume(v)) if kind == Names::Volumes => vol(v, f),
            Some(Source::Snapshot(x)) if kind == Names::Snapshots => snap(x, f),
            _ => {}
        };
        match self {
            Call::CreateVolume { name, source: src, .. } => {
                if kind == Names::Volumes {
                    own(name, f);
                }
                source(src, f);
            }
            Call::CreateSnapshot { name, source: v } => {
                if kind == Names::Snapshots {
                    own(name, f);
                } else {
                    vol(v, f);
                }
            }
            Call::DeleteSnapshot(x) | Call::GetSnapshot(x) => {
                if kind == Names::Snapshots {
                    snap(x, f);
                }
            }
            Call::ListSnapshots { filter, .. } => match filter {
                Filter::Id(x) if kind == Names::Snapshots => snap(x, f),
                Filter::Source(v) if kind == Names::Volumes => vol(v, f),
                _ => {}
            },
            Call::CreateGroup { vols, .. } => {
                if kind == Names::Volumes {
                    vols.iter_mut().for_each(|v| vol(v, f));
                }
            }
            Call::DeleteGroupMismatch { ids: Mismatch::Lone(x), .. } => {
                if kind == Names::Snapshots {
                    snap(x, f);
                }
            }
            Call::Elsewhere { vol: v, at, .. } => {
                if kind == Names::Volumes {
                    vol(v, f);
                    if let Elsewhere::Staging(w) | Elsewhere::Target(w) = at {
                        vol(w, f);
                    }
                }
            }
            Call::ListVolumes { .. }
            | Call::ListHold { .. }
            | Call::ListResume { .. }
            | Call::GetCapacity { .. }
            | Call::DeleteGroup(_)
            | Call::DeleteGroupMismatch { .. }
            | Call::GetGroup(_)
            | Call::Member { .. } => {}
            other => {
                if kind == Names::Volumes
                    && let Some(v) = other.volume_mut()
                {
                    vol(v, f);
                }
            }
        }
    }

    /// The volume a call on one volume names (not a snapshot's source, nor a listing's filter).
    fn volume_mut(&mut self) -> Option<&mut Vol> {
        match self {
            Call::DeleteVolume(v)
            | Call::ControllerPublish { vol: v, .. }
            | Call::ControllerUnpublish { vol: v, .. }
            | Call::Validate(v)
            | Call::GetVolume(v)
            | Call::Expand { vol: v, .. }
            | Call::Stage { vol: v, .. }
            | Call::Unstage(v)
            | Call::Publish { vol: v, .. }
            | Call::Unpublish { vol: v, .. }
            | Call::Stats { vol: v, .. }
            | Call::NodeExpand { vol: v, .. }
            | Call::Modify(v)
            | Call::ModifyUnsupported(v)
            | Call::Elsewhere { vol: v, .. } => Some(v),
            _ => None,
        }
    }
}

impl fmt::Display for Vol {
    /// `v1.0`: name #1's first volume.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}.{}", self.name, self.nth)
    }
}

impl fmt::Display for Grp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "g{}.{}", self.name, self.nth)
    }
}

impl fmt::Display for Snap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "s{}.{}", self.name, self.nth)
    }
}

fn size(mib: u32) -> String {
    if mib == 0 { "no capacity_range".to_owned() } else { format!("{mib} MiB") }
}

/// A CreateVolume's (a NodeExpandVolume's) `capacity_range` in words.
fn range(mib: u32, limit: u32) -> String {
    match (mib, limit) {
        (0, 0) => size(0),
        (m, 0) => size(m),
        (0, l) => format!("at most {l} MiB"),
        (m, l) if m == l => format!("{m} MiB exactly"),
        (m, l) => format!("{m} to {l} MiB"),
    }
}

impl fmt::Display for Call {
    /// `CreateVolume name v1, 2 MiB, from s0.0`: the RPC and its arguments in the history's own
    /// terms.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rpc = self.rpc();
        match *self {
            Call::CreateVolume { name, mib, limit, source } => {
                write!(f, "{rpc} name v{name}, {}", range(mib, limit))?;
                match source {
                    Some(Source::Snapshot(s)) => write!(f, ", from snapshot {s}"),
                    Some(Source::Volume(v)) => write!(f, ", cloned from {v}"),
                    Some(Source::Member(g, n)) => write!(f, ", from {g}'s snapshot #{n}"),
                    None => Ok(()),
                }
            }
            Call::ControllerPublish { vol, readonly, own } => {
                let node = if own { "its node" } else { "a node it never named" };
                write!(f, "{rpc} {vol} to {node}, readonly {readonly}")
            }
            Call::ControllerUnpublish { vol, all } => {
                let node = if all { "every node (no node_id)" } else { "its node" };
                write!(f, "{rpc} {vol} from {node}")
            }
            Call::ListVolumes { max_entries } | Call::ListSnapshots { max_entries, .. } => {
                write!(f, "{rpc}")?;
                if let Call::ListSnapshots { filter, .. } = self {
                    match filter {
                        Filter::All => {}
                        Filter::Id(s) => write!(f, " snapshot_id {s}")?,
                        Filter::Source(v) => write!(f, " source_volume_id {v}")?,
                    }
                }
                if max_entries > 0 {
                    write!(f, ", every page of max_entries {max_entries}")?;
                }
                Ok(())
            }
            Call::Expand { vol, mib, limit } | Call::NodeExpand { vol, mib, limit } => {
                write!(f, "{rpc} {vol} to {}", range(mib, limit))
            }
            Call::CreateSnapshot { name, source } => write!(f, "{rpc} name s{name} of {source}"),
            Call::Publish { vol, target, readonly } => {
                write!(f, "{rpc} {vol} at target #{target}, readonly {readonly}")
            }
            Call::Unpublish { vol, target } => write!(f, "{rpc} {vol} at target #{target}"),
            Call::Stats { vol, at } => match at {
                At::Staging => write!(f, "{rpc} {vol} at its staging path"),
                At::Target(t) => write!(f, "{rpc} {vol} at target #{t}"),
            },
            Call::DeleteVolume(v)
            | Call::Validate(v)
            | Call::GetVolume(v)
            | Call::Unstage(v)
            | Call::Modify(v) => write!(f, "{rpc} {v}"),
            Call::ModifyUnsupported(v) => {
                write!(f, "{rpc} {v}, {} among the keys", unsupported_key(v))
            }
            Call::Stage { vol, path: 0 } => write!(f, "{rpc} {vol}"),
            Call::Stage { vol, path } => write!(f, "{rpc} {vol} at staging path #{path}"),
            Call::DeleteSnapshot(s) | Call::GetSnapshot(s) => write!(f, "{rpc} {s}"),
            Call::CreateGroup { name, vols: [a, b] } => write!(f, "{rpc} name g{name} of {a}, {b}"),
            Call::DeleteGroup(g) | Call::GetGroup(g) => write!(f, "{rpc} {g}"),
            Call::ListHold { max_entries, .. } => {
                write!(f, "{rpc}, the first page of max_entries {max_entries}, its next_token held")
            }
            Call::ListResume { .. } => write!(f, "{rpc} from the held next_token, every page"),
            Call::Member { group, nth, .. } => {
                write!(f, "{rpc} of {group}'s snapshot #{nth} alone")
            }
            Call::Elsewhere { vol, at, .. } => match at {
                Elsewhere::SecondStaging => write!(f, "{rpc} {vol} at a second staging path"),
                Elsewhere::Staging(w) => write!(f, "{rpc} {vol} at {w}'s staging path"),
                Elsewhere::Target(w) => write!(f, "{rpc} {vol} at {w}'s target #0"),
                Elsewhere::Nowhere => write!(f, "{rpc} {vol} at a folder of no volume"),
            },
            Call::GetCapacity { with: true } => {
                write!(f, "{rpc} with the walk's capability and parameters")
            }
            Call::GetCapacity { with: false } => write!(f, "{rpc} with no capability"),
            Call::DeleteGroupMismatch { group, ids } => match ids {
                Mismatch::Lone(s) => write!(f, "{rpc} {group}, snapshot_ids its own and {s}'s"),
                Mismatch::Other(o) => {
                    write!(f, "{rpc} {group}, snapshot_ids its own and {o}'s snapshot #0")
                }
                Mismatch::Short => write!(f, "{rpc} {group}, snapshot_ids without its last"),
            },
        }
    }
}

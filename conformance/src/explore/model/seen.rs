//! What the walk sees at the node's paths, beside the plugin's answers, and which of its volumes
//! are block devices. A plugin that serves both access types is walked with both: every fifth
//! name of a volume made empty asks for a block device, as long as the plugin took the first
//! such create (no capability says whether a plugin serves block; its answer does). Block
//! volumes are never a clone's, a snapshot's or a group's source: which sources of which
//! access type a plugin copies is its own to say, and a refusal is then no finding. What is
//! seen: the call's own target after a NodePublishVolume (a folder, a block device or another
//! file; a mount point, read-only or not), and the readonly mounts the history made, after
//! every later call.

use std::collections::BTreeSet;

use super::super::call::{Call, Source, Vol};
use super::marks::{Found, Marks};
use super::{Life, Model, VolState};

/// Every this many names, a volume made empty is a block device (where block is walked).
const BLOCK_EVERY: u16 = 5;

/// Whether block volumes are walked beside mount ones.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum BlockWalk {
    /// Not walked: the plugin has no Node service, makes no volumes, is walked with block
    /// devices only (the suite's block-only plugin), or refused the first block volume.
    #[default]
    Off,
    /// Walked; no block create answered yet.
    Unknown,
    /// A block create was answered OK.
    Served,
}

/// The model's part of what the walk sees at the node.
#[derive(Debug, Clone, Default)]
pub(crate) struct NodeSeen {
    pub(crate) block: BlockWalk,
    /// Targets (volume, target #) published readonly and seen mounted read-only: held to stay
    /// so after every later call, while published.
    pub(crate) readonly_mounts: BTreeSet<(Vol, u8)>,
    /// Targets (volume, target #) published read-write and seen a mount point: held to stay
    /// one after every later call, while published, but the volume's own out-of-order undos.
    pub(crate) rw_mounts: BTreeSet<(Vol, u8)>,
    /// What the workload wrote into the volumes (see `marks`).
    pub(crate) marks: Marks,
}

/// What is at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileKind {
    Folder,
    BlockDevice,
    /// A file, a link, a device of another kind.
    Other,
}

/// A path as seen after a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Placed {
    /// What is there (following a link); `None`: nothing.
    pub(crate) kind: Option<FileKind>,
    /// A mount point, read-only (`Some(true)`) or not; `None`: not a mount point, or the mount
    /// table cannot be read.
    pub(crate) mount: Option<bool>,
}

/// What was seen after one call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Seen {
    /// The call's own target (a NodePublishVolume's, where it is looked at).
    pub(crate) target: Option<Placed>,
    /// The mounts watched ([`NodeSeen::readonly_mounts`], [`NodeSeen::rw_mounts`]), each seen
    /// now: its mount's read-only flag, `None` when no longer a mount point.
    pub(crate) watched: Vec<(Vol, u8, Option<bool>)>,
    /// The marks found at the watched targets that are read-write mount points now, before
    /// anything was written after the call.
    pub(crate) marked: Vec<(Vol, u8, Found)>,
    /// The mark found at the call's own target, a mount point, before a new one was written.
    pub(crate) found: Option<Found>,
    /// The mark written there after (`Some(None)`: the write failed).
    pub(crate) wrote: Option<Option<u32>>,
    /// The marks written after the call into the volumes it copied, each at a read-write
    /// target (`None`: the write failed).
    pub(crate) rewrote: Vec<(Vol, Option<u32>)>,
}

impl Model {
    /// Whether volume name #`name`, made from nothing when `plain`, asks for a block device.
    pub(crate) fn block_for(&self, name: u16, plain: bool) -> bool {
        plain && self.seen.block != BlockWalk::Off && name % BLOCK_EVERY == BLOCK_EVERY - 1
    }

    /// Live volume `vol`, published at its target #`t` with `readonly`: a publication the model
    /// took and that stands.
    pub(crate) fn published_at(&self, vol: Vol, t: u8, readonly: bool) -> Option<&VolState> {
        self.vol(vol)
            .filter(|s| s.life == Life::Alive && s.targets[usize::from(t)] == Some(readonly))
    }

    /// [`Model::block_for`] of volume `v` (a volume the model does not know counts as plain).
    pub(crate) fn is_block(&self, v: Vol) -> bool {
        self.block_for(v.name, self.vol(v).is_none_or(|x| x.source.is_none()))
    }

    /// The pair of readonly flags a NodePublishVolume of live `vol` at a target it is not at
    /// makes, for the coverage table: beside a target standing with the other flag, or where
    /// one with the other flag stood (nothing standing); none otherwise.
    pub(crate) fn flag_pair(&self, vol: Vol, target: u8, readonly: bool) -> Vec<&'static str> {
        let Some(s) = self.vol(vol).filter(|s| s.life == Life::Alive) else { return Vec::new() };
        let t = usize::from(target);
        let other = Some(!readonly);
        let pair = if s.targets.get(t).is_none_or(Option::is_some) {
            None
        } else if s.targets.contains(&other) {
            Some(if readonly {
                "readonly beside a read-write target"
            } else {
                "read-write beside a readonly target"
            })
        } else if s.targets.iter().all(Option::is_none) && s.targets_used[t] == other {
            Some(if readonly {
                "readonly where a read-write one stood"
            } else {
                "read-write where a readonly one stood"
            })
        } else {
            None
        };
        pair.into_iter().collect()
    }

    /// `call` would use a block volume as a source (left out: see the module's words).
    pub(crate) fn block_source(&self, call: &Call) -> bool {
        if self.seen.block == BlockWalk::Off {
            return false;
        }
        match *call {
            Call::CreateVolume { source: Some(Source::Volume(v)), .. }
            | Call::CreateSnapshot { source: v, .. } => self.is_block(v),
            Call::CreateGroup { vols: [a, b], .. } => self.is_block(a) || self.is_block(b),
            _ => false,
        }
    }
}

//! What the walk's workload wrote into its mount volumes, and so what each must hold when it is
//! published again. A CO's workload writes; the walk plays one where it can look at the node's
//! paths (a unix socket), with one history in flight (with more, another lane's write may fall
//! inside a call), and only at a target that is a mount point (a plugin that makes folders and
//! mounts nothing holds no data to look at). At every read-write NodePublishVolume it reads
//! the mark file at the target, then writes a new mark; after a snapshot, a group snapshot or a
//! clone is made of a volume published read-write, it writes a new mark there, so that a copy
//! made later than the call holds another mark than the one the call saw. Each mark is written
//! whole and synced to the storage (a snapshot of a block device sees what reached it) before
//! the next call. Block volumes are not marked.

use std::collections::BTreeMap;

use super::super::call::{Source, Vol};

/// The file a mark is written to, at a target's root.
pub(crate) const MARK_FILE: &str = ".csi-explore-mark";

/// What a mark file holds: `mark n`.
pub(crate) fn mark_text(n: u32) -> String {
    format!("csi-conformance explore mark {n}\n")
}

/// What was found at a target, read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Found {
    /// No mark file.
    Nothing,
    Mark(u32),
    /// A file that is no mark of this walk's.
    Other,
    /// The file could not be read (permissions, an IO error): nothing is judged.
    Unreadable,
}

impl Found {
    /// Whether what was found is `mark` (`None`: no mark written); `None` when that cannot be
    /// told (the file could not be read).
    pub(crate) fn is(self, mark: Option<u32>) -> Option<bool> {
        match (self, mark) {
            (Found::Unreadable, _) => None,
            (Found::Nothing, None) => Some(true),
            (Found::Mark(n), Some(m)) => Some(n == m),
            _ => Some(false),
        }
    }
}

/// Where what a volume holds came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum From {
    /// Made empty, nothing written since.
    Empty,
    /// Made from this source, nothing written since.
    Source(Source),
    /// Written by the walk at a target of it.
    Written,
}

/// What a volume holds, as far as the walk knows: the last mark (`None`: none written).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Held {
    pub(crate) mark: Option<u32>,
    pub(crate) from: From,
}

/// The model's part of the workload's data.
#[derive(Debug, Clone, Default)]
pub(crate) struct Marks {
    /// Marks are written and read in this walk.
    pub(crate) on: bool,
    /// Every volume made with OK: what it holds (`None`: not known, never judged until a
    /// mark is written into it).
    pub(crate) vols: BTreeMap<Vol, Option<Held>>,
    /// Every snapshot cut with OK, by id: the mark its source held when it was cut (outer
    /// `None`: not known).
    pub(crate) snaps: BTreeMap<String, Option<Option<u32>>>,
    /// The next mark to write.
    pub(crate) next: u32,
}

impl Marks {
    /// What volume `v` holds, if known.
    pub(crate) fn held(&self, v: Vol) -> Option<Held> {
        self.vols.get(&v).copied().flatten()
    }

    /// What was written at last: `wrote` (`None`: the write failed, so what `v` holds is no
    /// longer known).
    pub(crate) fn wrote(&mut self, v: Vol, wrote: Option<u32>) {
        let held = wrote.map(|n| Held { mark: Some(n), from: From::Written });
        self.vols.insert(v, held);
        if let Some(n) = wrote {
            self.next = self.next.max(n.saturating_add(1));
        }
    }
}

/// A mark, a file or nothing, in a finding's words.
pub(crate) fn found_words(f: Found) -> String {
    match f {
        Found::Nothing => "no mark (no data of the walk's)".to_owned(),
        Found::Mark(n) => format!("mark {n}"),
        Found::Other => "a mark file that is none of the walk's".to_owned(),
        Found::Unreadable => "a mark file that cannot be read".to_owned(),
    }
}

/// What a volume should hold, in a finding's words.
pub(crate) fn held_words(mark: Option<u32>) -> String {
    mark.map_or_else(|| "no mark".to_owned(), |n| format!("mark {n}"))
}

/// The mark read from a file's text.
pub(crate) fn parse(text: &str) -> Found {
    text.strip_prefix("csi-conformance explore mark ")
        .and_then(|t| t.strip_suffix('\n'))
        .and_then(|n| n.parse().ok())
        .map_or(Found::Other, Found::Mark)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mark_reads_back_as_written_and_nothing_else_reads_as_one() {
        assert_eq!(parse(&mark_text(7)), Found::Mark(7));
        assert_eq!(parse("csi-conformance explore mark 7"), Found::Other);
        assert_eq!(parse("csi-conformance explore mark x\n"), Found::Other);
        assert_eq!(parse(""), Found::Other);
        let mut m = Marks::default();
        m.wrote(Vol { name: 1, nth: 0 }, Some(4));
        assert_eq!(m.next, 5);
        assert_eq!(m.held(Vol { name: 1, nth: 0 }).and_then(|h| h.mark), Some(4));
        m.wrote(Vol { name: 1, nth: 0 }, None);
        assert_eq!(m.held(Vol { name: 1, nth: 0 }), None);
        assert_eq!(m.next, 5);
    }
}

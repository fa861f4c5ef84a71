//! What the walk looks at on this machine around a call (the plugin's paths are this
//! machine's only on a unix socket): a NodePublishVolume's target, where the model judges it (a
//! readonly mount volume, a block volume, the data a mount volume holds), and the readonly
//! mounts the history made, after every call; and what the workload writes (`model/marks`):
//! a mark at a read-write target after a NodePublishVolume, and in the volumes a call copied.
//! The mount table is the suite's one reader (`workload::mounts_at`), read once a call and only
//! when there is something to look at.

use std::path::{Path, PathBuf};

use super::super::call::{Call, Source, Vol};
use super::super::model::marks::{Found, MARK_FILE, mark_text, parse};
use super::super::model::seen::{FileKind, Placed, Seen};
use super::super::model::{Life, Model};
use super::Exec;
use crate::workload::mounts_at;

/// The paths to look at after one call, chosen before it is sent.
#[derive(Debug, Default)]
pub(crate) struct Looks {
    target: Option<PathBuf>,
    watched: Vec<(Vol, u8, PathBuf)>,
    /// The target's mark is read (a mount volume, marks on); then, read-write, this mark is
    /// written.
    mark: Option<Option<u32>>,
    /// After an OK, these marks are written at these read-write targets of the volumes the
    /// call copied.
    rewrite: Vec<(Vol, PathBuf, u32)>,
    /// The marks at the watched targets that are read-write mount points are read (marks on).
    read: bool,
}

impl Exec {
    /// What to look at after `call`: its target when it is a NodePublishVolume, and every
    /// mount watched but the one `call` unpublishes; what the workload reads and writes.
    /// Nothing when the plugin's paths are not this machine's.
    pub(crate) fn looks(&self, m: &Model, call: &Call) -> Looks {
        if !m.caps.local {
            return Looks::default();
        }
        let marks = &m.seen.marks;
        let mark = match *call {
            Call::Publish { vol, readonly, .. } if marks.on && !m.is_block(vol) => {
                Some((!readonly).then_some(marks.next))
            }
            _ => None,
        };
        let target = match *call {
            Call::Publish { vol, target, .. } => Some(self.target_path(vol, target)),
            _ => None,
        };
        let copied: Vec<Vol> = match *call {
            _ if !marks.on => Vec::new(),
            Call::CreateSnapshot { source, .. }
            | Call::CreateVolume { source: Some(Source::Volume(source)), .. } => vec![source],
            Call::CreateGroup { vols, .. } => vols.to_vec(),
            _ => Vec::new(),
        };
        let mut next = marks.next.saturating_add(1);
        let mut rewrite = Vec::new();
        for vol in copied {
            let Some(s) = m.vol(vol).filter(|s| s.life == Life::Alive) else { continue };
            if let Some(t) = s.targets.iter().position(|t| *t == Some(false)) {
                let t = u8::try_from(t).unwrap_or(0);
                rewrite.push((vol, self.target_path(vol, t), next));
                next = next.saturating_add(1);
            }
        }
        let undone = match *call {
            Call::Unpublish { vol, target } => Some((vol, target)),
            _ => None,
        };
        let watched = m
            .seen
            .readonly_mounts
            .iter()
            .chain(&m.seen.rw_mounts)
            .filter(|w| Some(**w) != undone)
            .map(|(v, t)| (*v, *t, self.target_path(*v, *t)))
            .collect();
        Looks { target, watched, mark, rewrite, read: marks.on }
    }
}

impl Looks {
    /// Looks: what is at each path now; `ok`: the call was answered OK (the workload then
    /// writes what it writes).
    pub(crate) fn see(&self, ok: bool) -> Seen {
        let rewrite = if ok { self.rewrite.as_slice() } else { &[] };
        if self.target.is_none() && self.watched.is_empty() && rewrite.is_empty() {
            return Seen::default();
        }
        let mut paths: Vec<&Path> = self.watched.iter().map(|(_, _, p)| p.as_path()).collect();
        paths.extend(rewrite.iter().map(|(_, p, _)| p.as_path()));
        if let Some(t) = &self.target {
            paths.push(t);
        }
        // An unreadable table shows no mount point: nothing is judged of one.
        let mut mounts = mounts_at(&paths).unwrap_or_else(|_| vec![None; paths.len()]);
        let read_only = |i: usize| mounts.get(i).cloned().flatten().map(|m| m.read_only);
        let watched =
            self.watched.iter().enumerate().map(|(i, (v, t, _))| (*v, *t, read_only(i))).collect();
        // Read before anything is written this call.
        let marked = self
            .watched
            .iter()
            .enumerate()
            .filter(|(i, _)| self.read && read_only(*i) == Some(false))
            .map(|(_, (v, t, p))| (*v, *t, read_mark(p)))
            .collect();
        let rewrote = rewrite
            .iter()
            .enumerate()
            .filter(|(i, _)| read_only(self.watched.len() + i) == Some(false))
            .map(|(_, (v, p, n))| (*v, write_mark(p, *n).then_some(*n)))
            .collect();
        let target = self.target.as_ref().map(|t| Placed {
            kind: kind_at(t),
            mount: mounts.pop().flatten().map(|m| m.read_only),
        });
        let (mut found, mut wrote) = (None, None);
        if let (Some(path), Some(write), Some(Placed { mount: Some(read_only), .. }), true) =
            (&self.target, self.mark, target, ok)
        {
            found = Some(read_mark(path));
            if let (Some(n), false) = (write, read_only) {
                wrote = Some(write_mark(path, n).then_some(n));
            }
        }
        Seen { target, watched, marked, found, wrote, rewrote }
    }
}

/// The mark at a target's root.
fn read_mark(target: &Path) -> Found {
    match std::fs::read_to_string(target.join(MARK_FILE)) {
        Ok(text) => parse(&text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Found::Nothing,
        Err(_) => Found::Unreadable,
    }
}

/// Writes mark `n` at a target's root, whole and synced (the runtime's one atomic write), so
/// that a copy the storage makes next holds it; whether it was.
fn write_mark(target: &Path, n: u32) -> bool {
    csikit_runtime::fs::write_atomic(&target.join(MARK_FILE), mark_text(n).as_bytes()).is_ok()
}

/// What is at `path`, a link followed (a dangling link: another file).
fn kind_at(path: &Path) -> Option<FileKind> {
    use std::os::unix::fs::FileTypeExt as _;
    let Ok(meta) = std::fs::metadata(path) else {
        return std::fs::symlink_metadata(path).is_ok().then_some(FileKind::Other);
    };
    let kind = meta.file_type();
    Some(if kind.is_dir() {
        FileKind::Folder
    } else if kind.is_block_device() {
        FileKind::BlockDevice
    } else {
        FileKind::Other
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_at_a_path_is_told_apart() {
        let dir = std::env::temp_dir().join(format!("csi-look-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a folder");
        let file = dir.join("file");
        std::fs::write(&file, b"").expect("a file");
        assert_eq!(kind_at(&dir), Some(FileKind::Folder));
        assert_eq!(kind_at(&file), Some(FileKind::Other));
        assert_eq!(kind_at(&dir.join("nothing")), None);
        // A device of another kind than a block device.
        assert_eq!(kind_at(Path::new("/dev/null")), Some(FileKind::Other));
        std::fs::remove_dir_all(&dir).expect("removed");
    }
}

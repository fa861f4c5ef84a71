//! What the walk looks at on this machine around a call (the plugin's paths are this
//! machine's only on a unix socket): a NodePublishVolume's target, where the model judges it (a
//! readonly mount volume, a block volume), and the readonly mounts the history made, after
//! every call. The mount table is the suite's one reader (`workload::mounts_at`), read once a
//! call and only when there is something to look at.

use std::path::{Path, PathBuf};

use super::super::call::{Call, Vol};
use super::super::model::Model;
use super::super::model::seen::{FileKind, Placed, Seen};
use super::Exec;
use crate::workload::mounts_at;

/// The paths to look at after one call, chosen before it is sent.
#[derive(Debug, Default)]
pub(crate) struct Looks {
    target: Option<PathBuf>,
    watched: Vec<(Vol, u8, PathBuf)>,
}

impl Exec {
    /// What to look at after `call`: its target when it is a NodePublishVolume of a block
    /// volume or a readonly one of a mount volume, and every readonly mount watched but the
    /// one `call` unpublishes. Nothing when the plugin's paths are not this machine's.
    pub(crate) fn looks(&self, m: &Model, call: &Call) -> Looks {
        if !m.caps.local {
            return Looks::default();
        }
        let target = match *call {
            Call::Publish { vol, target, readonly } if readonly || m.is_block(vol) => {
                Some(self.target_path(vol, target))
            }
            _ => None,
        };
        let undone = match *call {
            Call::Unpublish { vol, target } => Some((vol, target)),
            _ => None,
        };
        let watched = m
            .seen
            .readonly_mounts
            .iter()
            .filter(|w| Some(**w) != undone)
            .map(|(v, t)| (*v, *t, self.target_path(*v, *t)))
            .collect();
        Looks { target, watched }
    }
}

impl Looks {
    /// Looks: what is at each path now.
    pub(crate) fn see(&self) -> Seen {
        if self.target.is_none() && self.watched.is_empty() {
            return Seen::default();
        }
        let mut paths: Vec<&Path> = self.watched.iter().map(|(_, _, p)| p.as_path()).collect();
        if let Some(t) = &self.target {
            paths.push(t);
        }
        // An unreadable table shows no mount point: nothing is judged of one.
        let mut mounts = mounts_at(&paths).unwrap_or_else(|_| vec![None; paths.len()]);
        let read_only = |i: usize| mounts.get(i).cloned().flatten().map(|m| m.read_only);
        let watched =
            self.watched.iter().enumerate().map(|(i, (v, t, _))| (*v, *t, read_only(i))).collect();
        let target = self.target.as_ref().map(|t| Placed {
            kind: kind_at(t),
            mount: mounts.pop().flatten().map(|m| m.read_only),
        });
        Seen { target, watched }
    }
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

//! What a CO does to give a workload a volume on the node and to take it back: publish to the
//! node (with PUBLISH_UNPUBLISH_VOLUME), stage (with STAGE_UNSTAGE_VOLUME), publish at a target
//! path, and the reverse; each step remembered for the run's clean-up until it is undone. And
//! what the suite can see of the result from outside the plugin: whether a path is a mount point
//! and whether that mount is read-only (`/proc/self/mountinfo`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use csikit::v1::{
    NodePublishVolumeRequest, NodeStageVolumeRequest, NodeUnpublishVolumeRequest,
    NodeUnstageVolumeRequest, VolumeCapability,
};

use tonic::Status;

use crate::suite::{Suite, show_status};

/// A volume in use on the node.
#[derive(Debug, Clone)]
pub(crate) struct InUse {
    pub(crate) volume: String,
    /// Where it is staged (empty: the node does not stage).
    pub(crate) staging: String,
    pub(crate) target: PathBuf,
    pub(crate) capability: VolumeCapability,
    pub(crate) publish_context: HashMap<String, String>,
}

/// Where to put it: fresh folders, or these.
#[derive(Debug, Clone, Default)]
pub(crate) struct Paths {
    pub(crate) staging: Option<String>,
    pub(crate) target: Option<PathBuf>,
}

/// ControllerPublishVolume, NodeStageVolume and NodePublishVolume of `volume`, as far as the
/// plugin advertises them; what failed, in the plugin's words.
pub(crate) async fn bring_up(
    s: &mut Suite,
    volume: &str,
    capability: VolumeCapability,
    readonly: bool,
    paths: Paths,
) -> Result<InUse, String> {
    let staging = match paths.staging {
        Some(p) => p,
        None => s.staging_for_publish()?,
    };
    let target = match paths.target {
        Some(t) => t,
        None => s.target_path()?,
    };
    let publish_context = s.publish_for_node(volume, capability.clone()).await?;
    if !staging.is_empty() {
        stage(s, volume, &staging, capability.clone(), &publish_context)
            .await
            .map_err(|e| format!("NodeStageVolume: {}", show_status(&e)))?;
    }
    let req = NodePublishVolumeRequest {
        volume_id: volume.into(),
        staging_target_path: staging.clone(),
        target_path: target.display().to_string(),
        volume_capability: Some(capability.clone()),
        publish_context: publish_context.clone(),
        readonly,
        secrets: s.secrets("NodePublishVolume"),
        ..NodePublishVolumeRequest::default()
    };
    s.ask(req).await.map_err(|e| format!("NodePublishVolume: {}", show_status(&e)))?;
    s.node_published.push((volume.to_owned(), target.clone()));
    Ok(InUse { volume: volume.to_owned(), staging, target, capability, publish_context })
}

/// Undoes [`bring_up`]: NodeUnpublishVolume, NodeUnstageVolume, ControllerUnpublishVolume.
pub(crate) async fn bring_down(s: &mut Suite, used: &InUse) -> Result<(), String> {
    let un = NodeUnpublishVolumeRequest {
        volume_id: used.volume.clone(),
        target_path: used.target.display().to_string(),
    };
    s.ask(un).await.map_err(|e| format!("NodeUnpublishVolume: {}", show_status(&e)))?;
    s.node_published.retain(|(_, p)| *p != used.target);
    if !used.staging.is_empty() {
        unstage(s, &used.volume, &used.staging)
            .await
            .map_err(|e| format!("NodeUnstageVolume: {}", show_status(&e)))?;
    }
    s.unpublish_for_node(&used.volume).await
}

/// NodeStageVolume of `volume` at `staging`, remembered for the clean-up once staged.
pub(crate) async fn stage(
    s: &mut Suite,
    volume: &str,
    staging: &str,
    capability: VolumeCapability,
    publish_context: &HashMap<String, String>,
) -> Result<(), Status> {
    let req = NodeStageVolumeRequest {
        volume_id: volume.into(),
        staging_target_path: staging.into(),
        volume_capability: Some(capability),
        publish_context: publish_context.clone(),
        secrets: s.secrets("NodeStageVolume"),
        ..NodeStageVolumeRequest::default()
    };
    s.ask(req).await?;
    let path = PathBuf::from(staging);
    if !s.staged.iter().any(|(v, p)| v == volume && *p == path) {
        s.staged.push((volume.to_owned(), path));
    }
    Ok(())
}

/// NodeUnstageVolume of `volume` at `staging`, forgotten by the clean-up once unstaged.
pub(crate) async fn unstage(s: &mut Suite, volume: &str, staging: &str) -> Result<(), Status> {
    let un =
        NodeUnstageVolumeRequest { volume_id: volume.into(), staging_target_path: staging.into() };
    s.ask(un).await?;
    s.staged.retain(|(v, p)| !(v == volume && p.as_os_str() == staging));
    Ok(())
}

/// A mount as `/proc/self/mountinfo` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mount {
    /// Read-only, per mount or per file system.
    pub(crate) read_only: bool,
}

/// The mount at `path`, if `path` is a mount point; `Err` when the mount table cannot be read
/// (not Linux, or no `/proc`), so that nothing can be seen.
pub(crate) fn mount_at(path: &Path) -> Result<Option<Mount>, String> {
    Ok(mounts_at(&[path])?.pop().flatten())
}

/// [`mount_at`] of each of `paths`, the mount table read once.
pub(crate) fn mounts_at(paths: &[&Path]) -> Result<Vec<Option<Mount>>, String> {
    let table = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| format!("cannot read /proc/self/mountinfo: {e}"))?;
    let wanted: Vec<String> = paths
        .iter()
        .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf()).display().to_string())
        .collect();
    // The last mount at a point is the one in effect.
    let mut found = vec![None; paths.len()];
    for line in table.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        let Some(point) = fields.get(4) else { continue };
        let point = unescape(point);
        let at: Vec<usize> = (0..wanted.len()).filter(|i| wanted[*i] == point).collect();
        if at.is_empty() {
            continue;
        }
        let per_mount = fields.get(5).copied().unwrap_or_default();
        let super_options =
            line.split(" - ").nth(1).and_then(|r| r.split(' ').nth(2)).unwrap_or("");
        let ro = |options: &str| options.split(',').any(|o| o == "ro");
        for i in at {
            found[i] = Some(Mount { read_only: ro(per_mount) || ro(super_options) });
        }
    }
    Ok(found)
}

/// mountinfo's octal escapes (`\040` for a space) undone.
fn unescape(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut rest = field;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let code = rest.get(at + 1..at + 4).and_then(|o| u8::from_str_radix(o, 8).ok());
        match code {
            Some(c) => {
                out.push(char::from(c));
                rest = &rest[at + 4..];
            }
            None => {
                out.push('\\');
                rest = &rest[at + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_escapes_and_the_root() {
        assert_eq!(unescape("/a\\040b"), "/a b");
        assert_eq!(unescape("/plain"), "/plain");
        // The root is a mount point wherever /proc is mounted.
        if let Ok(root) = mount_at(Path::new("/")) {
            assert!(root.is_some());
        }
        if let Ok(found) = mount_at(Path::new("/no/such/place/csi-conformance")) {
            assert_eq!(found, None);
        }
        // Several paths, the table read once: each in its place.
        let paths = [Path::new("/no/such/place/csi-conformance"), Path::new("/")];
        if let Ok(found) = mounts_at(&paths) {
            assert_eq!(found.len(), 2);
            assert!(found[0].is_none() && found[1].is_some());
        }
    }
}

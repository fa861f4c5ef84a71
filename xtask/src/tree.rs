//! Writing a tree of files so that no reader ever sees it half-written: everything goes into a
//! temporary sibling of the destination first, which then replaces it by rename.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;

/// Writes `files` (paths relative to the tree) into a fresh temporary sibling of `out` and
/// returns that folder.
pub fn stage(out: &Path, files: &BTreeMap<PathBuf, String>) -> anyhow::Result<PathBuf> {
    let parent = parent(out);
    std::fs::create_dir_all(parent).with_context(|| format!("creating '{}'", parent.display()))?;
    let tmp = sibling(out, "new");
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).with_context(|| format!("removing '{}'", tmp.display()))?;
    }
    for (path, text) in files {
        let dest = tmp.join(path);
        if let Some(dir) = dest.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("creating '{}'", dir.display()))?;
        }
        csikit_spec::fs::write_atomic(&dest, text.as_bytes())?;
    }
    Ok(tmp)
}

/// Puts the staged tree `tmp` in the place of `out`, whose old contents (if any) are moved
/// aside first and removed last.
pub fn swap_in(out: &Path, tmp: &Path) -> anyhow::Result<()> {
    let old = sibling(out, "old");
    let had_old = out.exists();
    if had_old {
        std::fs::rename(out, &old)
            .with_context(|| format!("moving the old '{}' aside", out.display()))?;
    }
    std::fs::rename(tmp, out)
        .with_context(|| format!("moving the new tree to '{}'", out.display()))?;
    if had_old {
        std::fs::remove_dir_all(&old).with_context(|| format!("removing '{}'", old.display()))?;
    }
    Ok(())
}

fn parent(out: &Path) -> &Path {
    out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// `.NAME.KIND-PID` beside `out`.
fn sibling(out: &Path, kind: &str) -> PathBuf {
    let name = out.file_name().map_or_else(|| "tree".into(), |n| n.to_string_lossy().into_owned());
    parent(out).join(format!(".{name}.{kind}-{}", std::process::id()))
}

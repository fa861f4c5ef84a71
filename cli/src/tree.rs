//! Writing a tree of files so that no reader ever sees it half-written: everything goes into a
//! temporary sibling of the destination first, which then replaces it by rename.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;

/// Writes `files` (paths relative to the tree) into a fresh temporary sibling of `out` and
/// returns that folder; every file is synced to disk before the folder can be swapped in.
pub fn stage(out: &Path, files: &BTreeMap<PathBuf, String>) -> anyhow::Result<PathBuf> {
    stage_with(out, files, |dest, text| {
        Ok(csikit_runtime::fs::write_atomic(dest, text.as_bytes())?)
    })
}

/// As [`stage`], without syncing each file: for build output such as the docs site (thousands
/// of files under `target/`, rebuilt at will), where a sync per file cost more than the render.
/// The swap is as atomic; only durability across a power loss is given up. Files are written by
/// a few threads, as creating a file costs a round trip to the disk that overlaps well.
pub fn stage_unsynced(out: &Path, files: &BTreeMap<PathBuf, String>) -> anyhow::Result<PathBuf> {
    let tmp = stage_with(out, &BTreeMap::new(), |_, _| Ok(()))?;
    let mut dirs: Vec<PathBuf> =
        files.keys().filter_map(|p| tmp.join(p).parent().map(Path::to_path_buf)).collect();
    dirs.dedup();
    for dir in &dirs {
        std::fs::create_dir_all(dir).with_context(|| format!("creating '{}'", dir.display()))?;
    }
    let files: Vec<(&PathBuf, &String)> = files.iter().collect();
    const WRITERS: usize = 4;
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..WRITERS)
            .map(|w| {
                let (files, tmp) = (&files, &tmp);
                scope.spawn(move || -> anyhow::Result<()> {
                    for (path, text) in files.iter().skip(w).step_by(WRITERS) {
                        let dest = tmp.join(path);
                        std::fs::write(&dest, text)
                            .with_context(|| format!("writing '{}'", dest.display()))?;
                    }
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .try_for_each(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
    })?;
    Ok(tmp)
}

fn stage_with(
    out: &Path,
    files: &BTreeMap<PathBuf, String>,
    write: impl Fn(&Path, &str) -> anyhow::Result<()>,
) -> anyhow::Result<PathBuf> {
    let parent = parent(out);
    std::fs::create_dir_all(parent).with_context(|| format!("creating '{}'", parent.display()))?;
    let tmp = sibling(out, "new");
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).with_context(|| format!("removing '{}'", tmp.display()))?;
    }
    let mut made = std::collections::HashSet::new();
    for (path, text) in files {
        let dest = tmp.join(path);
        if let Some(dir) = dest.parent()
            && made.insert(dir.to_path_buf())
        {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("creating '{}'", dir.display()))?;
        }
        write(&dest, text)?;
    }
    Ok(tmp)
}

/// Moves each of `paths` (relative) from the staged tree `tmp` into `out`, each rename replacing
/// one file (files of `out` not among them stay), then removes `tmp`.
pub fn move_files_in<'a>(
    out: &Path,
    tmp: &Path,
    paths: impl IntoIterator<Item = &'a PathBuf>,
) -> anyhow::Result<()> {
    for path in paths {
        let dest = out.join(path);
        if let Some(dir) = dest.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("creating '{}'", dir.display()))?;
        }
        std::fs::rename(tmp.join(path), &dest)
            .with_context(|| format!("replacing '{}'", dest.display()))?;
    }
    std::fs::remove_dir_all(tmp).with_context(|| format!("removing '{}'", tmp.display()))
}

/// Moves the folder `out/name`, if there is one, into the staged tree `tmp`, so that swapping
/// `tmp` in keeps it.
pub fn keep_folder(out: &Path, tmp: &Path, name: &str) -> anyhow::Result<()> {
    let folder = out.join(name);
    if folder.is_dir() {
        std::fs::rename(&folder, tmp.join(name))
            .with_context(|| format!("moving '{}'", folder.display()))?;
    }
    Ok(())
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

//! `cargo xtask changelog`: load the 16 csi-spec releases and csi-addons replication at its
//! v0.1.1 tag and at main, diff every consecutive pair and the replication pair, render the
//! markdown. Timed end to end as the built command (a process per call, writing its file), and
//! in process split into its two halves: loading, then diffing and rendering.
//!
//! Run: `cargo bench -p xtask --bench changelog`.

#![allow(missing_docs, reason = "criterion's macros generate undocumented items")]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;

use criterion::{Criterion, criterion_group, criterion_main};
use csikit_spec::diff::{diff, markdown};
use csikit_spec::{LoadOptions, Model};

/// The folders the changelog reads: the releases oldest first (by version number), then
/// replication's v0.1.1 tag and main.
fn folders(corpus: &Path) -> Vec<PathBuf> {
    let listed =
        csikit_spec::corpus::Corpus::read(corpus).expect("read the corpus's csi-spec folder");
    let mut out: Vec<PathBuf> = listed.releases.into_iter().map(|r| r.dir).collect();
    out.push(corpus.join("csi-addons/_tags/v0.1.1"));
    out.push(corpus.join("csi-addons/replication"));
    out
}

fn load_all(dirs: &[PathBuf]) -> Vec<Model> {
    dirs.iter()
        .map(|d| {
            let loaded = csikit_spec::load_source(d, &LoadOptions::default());
            loaded.model.unwrap_or_else(|| panic!("{}: {}", d.display(), loaded.diagnostics))
        })
        .collect()
}

/// The changelog's text from loaded models: consecutive releases newest first, then
/// replication (its last two models).
fn render(models: &[Model]) -> String {
    let (releases, replication) = models.split_at(models.len() - 2);
    let mut text = String::new();
    for i in (1..releases.len()).rev() {
        let report = diff(&releases[i - 1], &releases[i], "old", "new");
        text.push_str(&markdown(&report, "https://example.invalid/spec.md"));
    }
    let report = diff(&replication[0], &replication[1], "v0.1.1", "main");
    text.push_str(&markdown(&report, "https://example.invalid/README.md"));
    text
}

fn bench(c: &mut Criterion) {
    let corpus = csikit_spec::corpus_dir();
    if !corpus.join("csi-spec/v1.12.0/spec.md").is_file() {
        eprintln!("SKIPPED: no corpus at '{}' (set {})", corpus.display(), csikit_spec::CORPUS_ENV);
        return;
    }
    let dirs = folders(&corpus);
    let mut group = c.benchmark_group("changelog");
    group.sample_size(20);
    let out =
        std::env::temp_dir().join(format!("csikit-bench-changelog-{}.md", std::process::id()));
    group.bench_function("xtask changelog --out FILE (process, end to end)", |b| {
        b.iter(|| {
            let status = Command::new(env!("CARGO_BIN_EXE_xtask"))
                .arg("changelog")
                .arg("--out")
                .arg(&out)
                .status()
                .expect("run xtask changelog");
            assert!(status.success());
        })
    });
    let _ = std::fs::remove_file(&out);
    group.bench_function(format!("load the {} spec folders (in process)", dirs.len()), |b| {
        b.iter(|| load_all(black_box(&dirs)))
    });
    let models = load_all(&dirs);
    assert_eq!(render(&models).matches("\n## ").count() + 1, dirs.len() - 2, "one report per pair");
    group.bench_function("diff + markdown of every pair (in process)", |b| {
        b.iter(|| render(black_box(&models)))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

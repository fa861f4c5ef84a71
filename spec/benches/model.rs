//! Reading and lowering v1.12.0 (spec.md and csi.proto) in process, beside `protoc
//! --descriptor_set_out` on the same proto, in one criterion run.
//!
//! Run: `cargo bench -p csikit-spec --bench model`.

#![allow(missing_docs, reason = "criterion's macros generate undocumented items")]

use std::hint::black_box;
use std::process::Command;

use criterion::{Criterion, criterion_group, criterion_main};
use csikit_spec::LoadOptions;

fn bench(c: &mut Criterion) {
    let dir = csikit_spec::corpus_dir().join("csi-spec/v1.12.0");
    if !dir.join("spec.md").is_file() {
        eprintln!("SKIPPED: no corpus at '{}' (set {})", dir.display(), csikit_spec::CORPUS_ENV);
        return;
    }
    let mut group = c.benchmark_group("v1.12.0");
    group.bench_function("csikit load_dir (read + extract + compile + lower + check)", |b| {
        b.iter(|| {
            let loaded = csikit_spec::load_dir(black_box(&dir), &LoadOptions::default());
            assert!(loaded.model.is_some());
            loaded
        })
    });
    let out = std::env::temp_dir().join("csikit-bench-descriptor.pb");
    let protoc_ok =
        Command::new("protoc").arg("--version").output().is_ok_and(|o| o.status.success());
    if protoc_ok {
        group.bench_function("protoc --descriptor_set_out (process)", |b| {
            b.iter(|| {
                let status = Command::new("protoc")
                    .arg(format!("--descriptor_set_out={}", out.display()))
                    .arg("--include_source_info")
                    .arg(format!("-I{}", dir.display()))
                    .arg("-I/usr/include")
                    .arg("csi.proto")
                    .status()
                    .expect("run protoc");
                assert!(status.success());
            })
        });
    } else {
        eprintln!("SKIPPED protoc baseline: protoc is not installed");
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

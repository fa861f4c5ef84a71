//! Time to render the whole documentation site (`generate_site`: every CSI release from v1.0.0,
//! the ja and zh translations, the four csi-addons packages) from already loaded models, and to
//! load those models, in one criterion run.
//!
//! Run: `cargo bench -p csikit-site --bench site`.

#![allow(missing_docs, reason = "criterion's macros generate undocumented items")]

#[path = "../tests/support/site_inputs.rs"]
mod support;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use csikit_site::generate_site;

fn bench(c: &mut Criterion) {
    let Some((releases, options)) = support::site_inputs() else { return };
    let files = generate_site(&releases, &options);
    let bytes: usize = files.values().map(String::len).sum();
    eprintln!(
        "site: {} files, {:.1} MiB, {} releases, {} translations, {} csi-addons packages",
        files.len(),
        bytes as f64 / (1024.0 * 1024.0),
        releases.len(),
        options.translations.len(),
        options.addons.len()
    );
    let mut group = c.benchmark_group("site");
    group.sample_size(10);
    group
        .bench_function("generate_site: 13 releases + ja + zh + 4 csi-addons (render only)", |b| {
            b.iter(|| generate_site(black_box(&releases), black_box(&options)))
        });
    group.bench_function("load every model the site needs (20 spec folders)", |b| {
        b.iter(support::site_inputs)
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

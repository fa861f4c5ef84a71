//! Time to render the en/ja/zh documentation site (`generate_site`) from already loaded
//! models, and to load those models, in one criterion run.
//!
//! Run: `cargo bench -p csikit-codegen --bench site`.

#![allow(missing_docs, reason = "criterion's macros generate undocumented items")]

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use csikit_codegen::site::{SiteOptions, Translation, generate_site};
use csikit_spec::{LoadOptions, Model};

const TRANSLATIONS: &[(&str, &str, &str)] =
    &[("ja", "ja/spec.md", "v1.7.0"), ("zh", "zh/spec.md", "v1.6.0")];

fn load(corpus: &Path) -> Option<(Model, SiteOptions)> {
    let dir = |r: &str| corpus.join("csi-spec").join(r);
    let en = csikit_spec::load_dir(&dir("v1.12.0"), &LoadOptions::default()).model?;
    let mut translations = Vec::new();
    for (lang, file, release) in TRANSLATIONS {
        let options = LoadOptions {
            translation: Some(((*lang).to_owned(), corpus.join("translations").join(file))),
            ..LoadOptions::default()
        };
        let model = csikit_spec::load_dir(&dir(release), &options).model?;
        translations.push(Translation {
            lang: (*lang).to_owned(),
            release: (*release).to_owned(),
            model,
        });
    }
    Some((en, SiteOptions { release: "v1.12.0".to_owned(), translations }))
}

fn bench(c: &mut Criterion) {
    let corpus = csikit_spec::corpus_dir();
    let Some((en, options)) = load(&corpus) else {
        eprintln!(
            "SKIPPED: corpus incomplete at '{}' (set {})",
            corpus.display(),
            csikit_spec::CORPUS_ENV
        );
        return;
    };
    let mut group = c.benchmark_group("site");
    group.sample_size(20);
    group.bench_function("generate_site en+ja+zh (render only)", |b| {
        b.iter(|| generate_site(black_box(&en), black_box(&options)))
    });
    group.bench_function("load v1.12.0 + ja (v1.7.0) + zh (v1.6.0) models", |b| {
        b.iter(|| load(black_box(&corpus)))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

//! The upgrade tables (`spec/data/upgrading/`), held to the corpus: each release's table read
//! against that release and the one before it (every removal the diff engine finds has its row,
//! every row names a removed element, every replacement and every quoted element is in the new
//! release, every quote's words are in its element's comment), and a planted mistake of each kind
//! reported with its place in the file.

mod common;

use csikit_spec::corpus::Corpus;
use csikit_spec::diagnostic::SourceFile;
use csikit_spec::upgrade::{self, DATA};
use csikit_spec::{LoadOptions, Model};

/// A release of the corpus loaded as `cargo xtask generate` and the site load it.
fn load(corpus: &Corpus, release: &str) -> Model {
    let dir = &corpus.release(release).unwrap_or_else(|| panic!("{release} not in the corpus")).dir;
    let loaded = csikit_spec::load_source(dir, &LoadOptions::default());
    loaded.model.unwrap_or_else(|| panic!("{release} does not load: {:?}", loaded.diagnostics))
}

/// The release before `release` in the corpus, loaded, with its name.
fn before(corpus: &Corpus, release: &str) -> (String, Model) {
    let at = corpus.releases.iter().position(|r| r.name == release).expect("listed");
    let old = &corpus.releases[at.checked_sub(1).expect("a release before")].name;
    (old.clone(), load(corpus, old))
}

#[test]
fn every_table_holds_in_the_corpus() {
    let Some(root) = common::corpus() else { return };
    let corpus = Corpus::read(&root).expect("corpus");
    assert!(!DATA.is_empty());
    for (release, _) in DATA {
        let new = load(&corpus, release);
        let (old_name, old) = before(&corpus, release);
        let note = upgrade::note(&old, &new, &old_name, release)
            .unwrap_or_else(|e| panic!("{old_name} → {release}: {e:#?}"));
        let rows: Vec<_> = note.items.iter().filter_map(|i| i.replacement.as_ref()).collect();
        let data = upgrade::data_for(release).expect("listed").expect("reads");
        assert_eq!(rows.len(), data.replacements.len(), "{release}: every row meets its removal");
        // The checks below are not vacuous: the table quotes the proto and names readers.
        assert!(rows.iter().all(|r| !r.quotes.is_empty()), "{release}: a row quotes nothing");
        assert!(rows.iter().any(|r| !r.readers.is_empty()), "{release}: no reader");
    }
}

/// `text` with `from` replaced by `to` once, read as `release`'s table.
fn planted(release: &str, from: &str, to: &str) -> upgrade::UpgradeData {
    let (_, text) = DATA.iter().find(|(r, _)| *r == release).expect("listed");
    assert!(text.contains(from), "the table has no '{from}' to plant a mistake in");
    let file =
        SourceFile::new(format!("spec/data/upgrading/{release}.md"), text.replacen(from, to, 1));
    upgrade::parse_data(release, &file).expect("still reads")
}

#[test]
fn a_planted_mistake_is_reported_at_its_line() {
    let Some(root) = common::corpus() else { return };
    let corpus = Corpus::read(&root).expect("corpus");
    let release = "v1.13.0";
    let new = load(&corpus, release);
    let (old_name, old) = before(&corpus, release);
    let messages = |data: &upgrade::UpgradeData| -> Vec<String> {
        upgrade::check_data(data, &old, &new, &old_name).into_iter().map(|d| d.message).collect()
    };
    // A quoted word the comment does not hold.
    let data = planted(
        release,
        "List of abnormal volume health entries.",
        "List of all volume health entries.",
    );
    let got = messages(&data);
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0].starts_with("spec/data/upgrading/v1.13.0.md:")
            && got[0].contains("the comment of `ControllerListVolumeHealthResponse.entries` in v1.13.0 does not say 'List of all volume health entries.'"),
        "{got:?}"
    );
    // A replacement the release does not have.
    let data = planted(
        release,
        "`NodeGetVolumeHealth`, `NodeGetVolumeHealthResponse",
        "`NodeGetVolumeCondition`, `NodeGetVolumeHealthResponse",
    );
    let got = messages(&data);
    assert!(
        got.iter().any(
            |m| m.contains("replaced by `NodeGetVolumeCondition`, which v1.13.0 does not have")
        ),
        "{got:?}"
    );
    // A row renamed away from its readers and quotes: they are reported, not lost.
    let (_, text) = DATA.iter().find(|(r, _)| *r == release).expect("listed");
    let text = text.replacen(
        "| `NodeGetVolumeStatsResponse.volume_condition` | `NodeGetVolumeHealth`",
        "| `NodeGetVolumeStatsResponse.usage` | `NodeGetVolumeHealth`",
        1,
    );
    let data = upgrade::parse_data(release, &SourceFile::new("t.md", text));
    // The reader of the renamed row no longer has its row: a clear error, not a lost reader.
    let errors = data.expect_err("the reader's row is gone");
    assert!(
        errors.iter().any(|d| d.message.contains("the reader of `NodeGetVolumeStatsResponse.volume_condition`: the replacements table has no row")),
        "{errors:?}"
    );
}

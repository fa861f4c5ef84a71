//! The table of what replaces what (`csikit_site::replacements`), held to the corpus: every
//! element a row names exists in its release (the old one gone from the new release), every
//! removal the diff engine finds between the two releases has a row, and the words a row quotes
//! from a proto comment are in that element's comment in the new release.

use std::path::Path;

use csikit_site::replacements::{Source, UPGRADES};
use csikit_spec::diff::{Change, diff};
use csikit_spec::{LoadOptions, Model};

/// A release of the corpus loaded as the site loads it (a proto-only one with what it carries).
fn load(corpus: &Path, release: &str) -> Model {
    let dir = corpus.join("csi-spec").join(release);
    assert!(dir.is_dir(), "{release} is not in the corpus");
    let loaded = csikit_spec::load_source(&dir, &LoadOptions::default());
    loaded.model.unwrap_or_else(|| panic!("{release} does not load: {:?}", loaded.diagnostics))
}

/// The comment of the element `full` of `model` (a message, enum, field, enum value or RPC),
/// or `None` when the model has no such element.
fn comment_of(model: &Model, full: &str) -> Option<String> {
    if let Some(m) = model.message(full) {
        return Some(m.comment.clone());
    }
    if let Some(e) = model.enum_type(full) {
        return Some(e.comment.clone());
    }
    let (owner, last) = full.rsplit_once('.')?;
    if let Some(m) = model.message(owner) {
        return m.fields.iter().find(|f| f.name == last).map(|f| f.comment.clone());
    }
    if let Some(e) = model.enum_type(owner) {
        return e.values.iter().find(|v| v.name == last).map(|v| v.comment.clone());
    }
    let service = model.services.iter().find(|s| s.full_name == owner)?;
    service.methods.iter().find(|m| m.name == last).map(|m| m.comment.clone())
}

fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn every_replacement_row_holds_in_the_corpus() {
    let Some(corpus) = csikit_spec::corpus_or_skip() else { return };
    assert!(!UPGRADES.is_empty());
    for upgrade in UPGRADES {
        let (old, new) = (load(&corpus, upgrade.from), load(&corpus, upgrade.to));
        let pair = format!("{} → {}", upgrade.from, upgrade.to);
        for row in upgrade.rows {
            assert!(
                comment_of(&old, row.old).is_some(),
                "{pair}: {} not in {}",
                row.old,
                upgrade.from
            );
            assert!(
                comment_of(&new, row.old).is_none(),
                "{pair}: {} still in {}",
                row.old,
                upgrade.to
            );
            assert!(!row.new.is_empty(), "{pair}: {} replaced by nothing", row.old);
            for n in row.new {
                assert!(comment_of(&new, n).is_some(), "{pair}: {n} not in {}", upgrade.to);
            }
            assert!(!row.sources.is_empty(), "{pair}: {} has no source", row.old);
            let proto_sources = row.sources.iter().chain(row.reader.as_ref().map(|r| &r.source));
            for source in proto_sources {
                if let Source::Proto { element, says } = source {
                    let comment = comment_of(&new, element).unwrap_or_else(|| {
                        panic!("{pair}: source {element} not in {}", upgrade.to)
                    });
                    assert!(
                        words(&comment).contains(&words(says)),
                        "{pair}: {element}'s comment does not say '{says}'"
                    );
                }
            }
        }
        // Every element the diff engine finds removed has a row: its own, or one of a member.
        let report = diff(&old, &new, upgrade.from, upgrade.to);
        let removed: Vec<&str> = report
            .findings
            .iter()
            .filter(|f| f.change == Change::Removed)
            .filter(|f| ["rpc", "message", "field", "enum", "enum_value"].contains(&f.element))
            .map(|f| f.path.as_str())
            .collect();
        assert!(!removed.is_empty(), "{pair}: the diff engine finds nothing removed");
        for path in removed {
            let under = format!("{path}.");
            assert!(
                upgrade.rows.iter().any(|r| r.old == path || r.old.starts_with(&under)),
                "{pair}: no row for the removed {path}"
            );
        }
    }
}

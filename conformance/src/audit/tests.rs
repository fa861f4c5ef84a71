//! The audit held to the spec (the corpus's `spec.md`), to the Model's error rows and to the
//! suite's own cases and sentences: a sentence a release adds, a row the Model gains, a case
//! renamed or a case citing a sentence the audit does not hold each fail here.

use std::collections::BTreeSet;

use csikit_spec::normative::{Normative, Strength, read_sentences};

use super::*;
use crate::cases::errors::ROWS;

fn audit() -> Audit {
    read().unwrap_or_else(|e| panic!("{e}"))
}

fn norm(t: &str) -> String {
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn every_row_is_well_formed_and_names_cases_that_exist() {
    let a = audit();
    assert!(a.rows.len() > 600, "only {} rows", a.rows.len());
    let names: BTreeSet<String> = crate::list().into_iter().map(|(n, _)| n).collect();
    for r in &a.rows {
        let at = format!("§{}: {}", r.section, r.text);
        assert!(
            ["plugin", "CO", "both", "spec"].contains(&r.binds.as_str()),
            "{at}: binds '{}'",
            r.binds
        );
        assert!(
            ["MUST", "SHOULD", "—", "row"].contains(&r.level.as_str()),
            "{at}: level '{}'",
            r.level
        );
        match r.verdict {
            Verdict::Checked => {
                assert!(r.cases().next().is_some(), "{at}: checked by no case");
                for c in r.cases() {
                    assert!(names.contains(c), "{at}: names '{c}', which is no case of the suite");
                }
            }
            Verdict::Outside | Verdict::Left => assert!(!r.by.is_empty(), "{at}: says not why"),
            Verdict::NotThePlugins => assert_ne!(r.binds, "plugin", "{at}: binds the plugin"),
        }
    }
}

#[test]
fn the_coverage_table_counts_the_rows() {
    let a = audit();
    assert_eq!(
        a.coverage,
        count(&a.rows),
        "AUDIT.md's Coverage table is not the count of its rows"
    );
}

#[test]
fn every_error_row_of_the_model_is_audited_once_and_each_provoked_row_names_its_case() {
    let a = audit();
    let mut model: BTreeSet<(String, String)> = csikit::v1::errors::GENERAL
        .iter()
        .map(|r| ("Error Scheme".to_owned(), r.condition.to_owned()))
        .collect();
    for m in csikit::v1::facts::FACTS.methods.iter() {
        for r in crate::cases::errors::spec_rows(&m.name).unwrap_or_default() {
            model.insert((m.name.to_string(), r.condition.to_owned()));
        }
    }
    let audited: Vec<(String, String)> = a
        .rows
        .iter()
        .filter_map(|r| r.error_row().map(|(rpc, c)| (rpc.to_owned(), c.to_owned())))
        .collect();
    let set: BTreeSet<(String, String)> = audited.iter().cloned().collect();
    assert_eq!(set.len(), audited.len(), "an error row is audited twice");
    assert_eq!(set, model, "the audited error rows are not the Model's");
    for row in ROWS {
        let audited = a
            .rows
            .iter()
            .find(|r| r.error_row() == Some((row.rpc, row.condition)))
            .unwrap_or_else(|| panic!("{}: '{}' is not audited", row.rpc, row.condition));
        let name = row.name();
        assert!(
            audited.cases().any(|c| c == name),
            "{}: '{}' is provoked by '{name}', which its audit row does not name",
            row.rpc,
            row.condition
        );
    }
}

/// The part of the audit that holds what csikit's release says in its proto and the spec.md its
/// prose is carried from does not: for a release the corpus has as its proto alone (v1.13.0), the
/// sentences of the proto's comments that are new.
const NEW_IN_PROTO: &str = "New in the CSI v1.13.0 proto";

/// The sentences the audit holds: those of csikit's release's own spec.md or, for a release the
/// corpus has as its proto alone, of the spec.md its prose facts are carried from (the newest
/// older release with spec.md); and, then, the sentences of the release's proto comments that
/// spec.md does not hold (for [`NEW_IN_PROTO`]).
fn audited_sentences(corpus: &std::path::Path) -> (Vec<Normative>, Vec<Normative>) {
    let listing = csikit_spec::corpus::Corpus::read(corpus).unwrap_or_else(|d| panic!("{d:?}"));
    let release = listing.release(csikit::SPEC_RELEASE).expect("csikit's release in the corpus");
    let read = |path: std::path::PathBuf| {
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    let Some(full) = listing.carry_source(release) else {
        return (read_sentences(&read(release.dir.join("spec.md"))), Vec::new());
    };
    let spec = read_sentences(&read(full.dir.join("spec.md")));
    // The proto's comments read as spec.md's protobuf blocks are.
    let proto =
        read_sentences(&format!("```protobuf\n{}\n```\n", read(release.dir.join("csi.proto"))));
    let known: BTreeSet<(&str, &str)> =
        spec.iter().map(|s| (s.section.as_str(), s.text.as_str())).collect();
    let new = proto
        .iter()
        .filter(|p| !known.contains(&(p.section.as_str(), p.text.as_str())))
        .cloned()
        .collect();
    (spec, new)
}

/// The audit's rows against `sentences`: its MUST rows are their MUST sentences, as many times
/// as they say each; its other rows are among them and some case cites each.
fn hold(rows: &[&Row], sentences: &[Normative], whose: &str) {
    let mut must: Vec<(String, String)> = sentences
        .iter()
        .filter(|s| s.strength == Some(Strength::Must))
        .map(|s| (s.section.clone(), s.text.clone()))
        .collect();
    let all: BTreeSet<(String, String)> =
        sentences.iter().map(|s| (s.section.clone(), s.text.clone())).collect();
    let mut audited: Vec<(String, String)> = rows
        .iter()
        .filter(|r| r.level == "MUST")
        .map(|r| (r.section.clone(), r.text.clone()))
        .collect();
    must.sort();
    audited.sort();
    let missing: Vec<&(String, String)> = must.iter().filter(|m| !audited.contains(m)).collect();
    assert!(missing.is_empty(), "MUST sentences of {whose} the audit does not hold: {missing:#?}");
    let stale: Vec<&(String, String)> = audited.iter().filter(|m| !must.contains(m)).collect();
    assert!(stale.is_empty(), "audited MUST sentences {whose} does not hold: {stale:#?}");
    assert_eq!(audited, must, "a sentence is audited more or fewer times than {whose} says it");
    // The other sentences are the spec's, and some case cites each.
    let cited: Vec<String> = crate::list()
        .into_iter()
        .flat_map(|(_, s)| s.text.split(" / ").map(norm).collect::<Vec<_>>())
        .collect();
    for r in rows.iter().filter(|r| r.level == "SHOULD" || r.level == "—") {
        assert!(
            all.contains(&(r.section.clone(), r.text.clone())),
            "§{}: '{}' is not a sentence of {whose}",
            r.section,
            r.text
        );
        assert!(
            cited.iter().any(|c| norm(&r.text).contains(c.as_str())),
            "§{}: '{}' is cited by no case",
            r.section,
            r.text
        );
    }
}

#[test]
fn the_must_sentences_are_the_specs_and_the_others_are_cited_by_a_case() {
    let Some(corpus) = csikit_spec::corpus_or_skip() else { return };
    let (spec, new) = audited_sentences(&corpus);
    let a = audit();
    let (proto_rows, spec_rows): (Vec<&Row>, Vec<&Row>) =
        a.rows.iter().partition(|r| r.part == NEW_IN_PROTO);
    hold(&spec_rows, &spec, "the spec");
    hold(&proto_rows, &new, "the proto's new comments");
}

/// A sentence a case cites matches an audit row: a row of an error table by its condition
/// (`<condition> | <code> | ...`), a sentence by containment either way (a case may quote one
/// sentence, or two that follow each other); `<...>` stands for any words, and a part in
/// parentheses is the suite's own words (a note, never a failure).
#[test]
fn every_sentence_a_case_cites_is_audited() {
    let a = audit();
    let texts: Vec<String> = a.rows.iter().map(|r| norm(&r.text)).collect();
    for (name, sentence) in crate::list() {
        if let Some(row) = sentence.row {
            let rpc = row.rpc.unwrap_or("Error Scheme");
            assert!(
                a.rows.iter().any(|r| r.error_row() == Some((rpc, row.condition))),
                "'{name}': the row {rpc}: '{}' is not audited",
                row.condition
            );
            continue;
        }
        for part in sentence.text.split(" / ").map(norm) {
            if part.starts_with('(') {
                assert!(!sentence.fails_plugin(), "'{name}': its own words fail a plugin");
                continue;
            }
            if let Some((condition, _)) = part.split_once(" | ") {
                let rpc = sentence.section.strip_suffix(" Errors").unwrap_or(sentence.section);
                assert!(
                    a.rows.iter().any(|r| r.error_row() == Some((rpc, condition))),
                    "'{name}': the row {rpc}: '{condition}' is not audited"
                );
                continue;
            }
            let pieces: Vec<&str> =
                part.split('<').map(|p| p.split_once('>').map_or(p, |(_, rest)| rest)).collect();
            let found = texts.iter().any(|t| {
                if pieces.len() > 1 {
                    let mut at = 0;
                    pieces.iter().all(|p| match t[at..].find(p) {
                        Some(i) => {
                            at += i + p.len();
                            true
                        }
                        None => false,
                    })
                } else {
                    t.contains(&part) || part.contains(t.as_str())
                }
            });
            assert!(found, "'{name}' cites '{part}', which the audit does not hold");
        }
    }
}

#[test]
fn the_summary_prints_the_coverage_and_what_is_left() {
    let s = summary();
    assert!(s.contains("Controller service"), "{s}");
    assert!(s.lines().any(|l| l.starts_with("all ")), "{s}");
}

/// `SANITY_PARITY.md`: every csi-conformance case it names exists.
#[test]
fn the_csi_sanity_parity_table_names_cases_that_exist() {
    let names: BTreeSet<String> = crate::list().into_iter().map(|(n, _)| n).collect();
    let mut rows = 0;
    for line in include_str!("../../SANITY_PARITY.md").lines() {
        if !line.starts_with('|') || line.starts_with("|---") || line.starts_with("| csi-sanity") {
            continue;
        }
        let c = cells(line);
        assert_eq!(c.len(), 3, "not a row of three cells: {line}");
        rows += 1;
        for case in c[1].split("; ") {
            assert!(names.contains(case), "SANITY_PARITY.md: '{case}' is no case of the suite");
        }
    }
    assert!(rows >= 90, "only {rows} rows");
}

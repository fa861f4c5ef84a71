//! A release that is in the corpus as its `csi.proto` alone gets its own edition: pages from the
//! proto's comments, field tables with badges, a changes page, "since" badges, and on every
//! page a notice that the release's prose and error tables are not in the corpus; nothing of
//! another release's prose. The corpus is made at test time: v1.11.0 as it is (spec.md and
//! csi.proto) and v1.12.0 as its csi.proto alone, copied into a temporary folder.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use csikit_site::{Release, generate_site, load_corpus};
use csikit_spec::SourceKind;

struct Rendered {
    _corpus: tempfile::TempDir,
    releases: Vec<Release>,
    files: BTreeMap<PathBuf, String>,
}

/// The site of the made-up corpus, or `None` after a loud skip when the real corpus is absent.
fn rendered() -> Option<Rendered> {
    let real = csikit_spec::corpus_or_skip()?;
    let corpus = tempfile::tempdir().expect("temporary folder");
    let copy = |release: &str, file: &str| {
        let to = corpus.path().join("csi-spec").join(release);
        std::fs::create_dir_all(&to).expect("release folder");
        std::fs::copy(real.join("csi-spec").join(release).join(file), to.join(file))
            .unwrap_or_else(|e| panic!("copying {release}/{file}: {e}"));
    };
    copy("v1.11.0", "spec.md");
    copy("v1.11.0", "csi.proto");
    copy("v1.12.0", "csi.proto");
    let (releases, options) = load_corpus(corpus.path()).unwrap_or_else(|e| panic!("{e}"));
    assert!(options.translations.is_empty() && options.addons.is_empty());
    let files = generate_site(&releases, &options);
    Some(Rendered { _corpus: corpus, releases, files })
}

fn page<'s>(site: &'s Rendered, path: &str) -> &'s str {
    site.files.get(Path::new(path)).unwrap_or_else(|| panic!("no page '{path}'"))
}

/// The pages of an edition folder, by path relative to it.
fn edition<'s>(site: &'s Rendered, dir: &str) -> Vec<(String, &'s str)> {
    site.files
        .iter()
        .filter_map(|(p, text)| {
            let rest = p.strip_prefix(dir).ok()?;
            Some((rest.to_string_lossy().into_owned(), text.as_str()))
        })
        .collect()
}

const NOTICE: &str = "<div class=\"notice notice-proto-only\">Only the .proto of CSI v1.12.0 is in the corpus: this edition is made from its comments. The release&#39;s prose and error tables are not in the corpus, so they are not shown here.</div>";

#[test]
fn a_proto_only_release_has_its_own_edition_with_a_notice_on_every_page() {
    let Some(site) = rendered() else { return };
    let names: Vec<(&str, SourceKind)> =
        site.releases.iter().map(|r| (r.name.as_str(), r.model.source.kind)).collect();
    assert_eq!(names, [("v1.11.0", SourceKind::Spec), ("v1.12.0", SourceKind::Proto)]);

    let pages = edition(&site, "en/v1.12.0");
    let html: Vec<&(String, &str)> = pages.iter().filter(|(p, _)| p.ends_with(".html")).collect();
    assert!(html.len() > 100, "{} pages", html.len());
    for (path, text) in &html {
        assert!(text.contains(NOTICE), "no proto-only notice on en/v1.12.0/{path}");
        // Only pages the proto makes: contents, changes, RPCs and reference entries.
        assert!(
            ["index.html", "changes.html"].contains(&path.as_str())
                || path.starts_with("rpc/")
                || path.starts_with("ref/"),
            "en/v1.12.0/{path} is not made from the proto"
        );
    }
    for (path, text) in edition(&site, "en/v1.11.0") {
        assert!(!text.contains("notice-proto-only"), "a notice on the full release's {path}");
    }
}

#[test]
fn pages_come_from_the_proto_with_badges_and_no_prose_of_another_release() {
    let Some(site) = rendered() else { return };
    let model = &site.releases[1].model;
    let (_, get_snapshot) = model.method("GetSnapshot").expect("GetSnapshot in v1.12.0");
    let request = model.message(&get_snapshot.input).expect("GetSnapshotRequest");
    let rpc = page(&site, "en/v1.12.0/rpc/GetSnapshot.html");
    // The request's field comments from the proto, the RPC's lifecycle and field badges.
    let first_words: String =
        request.fields[0].comment.split_whitespace().take(4).collect::<Vec<_>>().join(" ");
    assert!(!first_words.is_empty() && rpc.contains(&first_words), "no comment: {first_words}");
    assert!(rpc.contains("<span class=\"badge badge-since\">since v1.12</span>"), "no since badge");
    assert!(rpc.contains("badge badge-required") && rpc.contains("badge badge-secret"));
    assert!(rpc.contains("The error table of this RPC is not in the corpus"));
    // Messages have their field tables with badges from the proto's comments.
    let request = page(&site, "en/v1.12.0/ref/csi.v1.CreateVolumeRequest.html");
    assert!(request.contains("badge badge-required") && request.contains("badge badge-size"));

    // No error row and no prose section of v1.11.0 appears anywhere in v1.12.0's edition.
    let old = &site.releases[0].model;
    let conditions: Vec<&str> = old
        .services
        .iter()
        .flat_map(|s| s.methods.iter().flat_map(|m| m.errors.iter()))
        .map(|r| r.condition.as_str())
        .filter(|c| c.len() > 12 && !c.contains(['`', '*', '&', '<', '\'', '"']))
        .collect();
    assert!(conditions.len() > 30, "{} conditions", conditions.len());
    // Prose headings: several words, none of them a name the proto declares.
    let declared = |t: &str| {
        t.split_whitespace().any(|w| {
            model.method(w).is_some()
                || model.messages.iter().any(|m| m.full_name.ends_with(&format!(".{w}")))
        })
    };
    let headings: Vec<&str> = old
        .sections
        .iter()
        .map(|s| s.title.as_str())
        .filter(|t| t.len() > 12 && t.contains(' ') && !declared(t))
        .filter(|t| !t.contains(['`', '*', '&', '<', '\'', '"']))
        .collect();
    // The same checks find them in v1.11.0's own edition.
    let full = edition(&site, "en/v1.11.0");
    let shown = |needle: &str| full.iter().any(|(_, text)| text.contains(needle));
    assert!(conditions.iter().all(|c| shown(c)), "a v1.11.0 error row not on its own pages");
    let is_heading = |text: &str, h: &str| {
        text.contains(&format!(">{h} <a class=\"anchor\"")) || text.contains(&format!(">{h}</h"))
    };
    // Those rendered as plain text (a heading with markup in it is left out).
    let headings: Vec<&str> =
        headings.into_iter().filter(|h| full.iter().any(|(_, text)| is_heading(text, h))).collect();
    assert!(headings.len() > 10, "{} headings in v1.11.0's edition", headings.len());
    for (path, text) in edition(&site, "en/v1.12.0") {
        for c in &conditions {
            assert!(!text.contains(c), "en/v1.12.0/{path} shows v1.11.0's error row '{c}'");
        }
        // Proto comments may name a section ("see the Secrets Requirements section"); none is a
        // heading here.
        for h in &headings {
            assert!(!is_heading(text, h), "en/v1.12.0/{path} shows v1.11.0's section '{h}'");
        }
    }
}

#[test]
fn the_changes_page_compares_what_both_sources_state() {
    let Some(site) = rendered() else { return };
    let changes = page(&site, "en/v1.12.0/changes.html");
    assert!(changes.contains("GetSnapshot"), "GetSnapshot is not listed as added");
    // Error tables are not compared, and are not reported as removed.
    assert!(changes.contains("<li data-what=\"errors\"><code>errors</code>: the source of v1.12.0 in the corpus does not state it</li>"));
    assert!(!changes.contains("data-element=\"error_row\""), "error rows reported as changes");
    // The contents page lists the proto's services and RPCs.
    let index = page(&site, "en/v1.12.0/index.html");
    assert!(index.contains("rpc/GetSnapshot.html") && index.contains(NOTICE));
}

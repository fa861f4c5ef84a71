//! A release that is in the corpus as its `csi.proto` alone gets its own edition: pages from the
//! proto's comments, field tables with badges, a changes page, "since" badges. Its loader
//! carries the prose of the newest older release with a spec.md (`csikit_spec::carry`): every
//! page that shows that text has a banner naming the release it comes from, and RPCs whose
//! schema changed or is new show their proto comments only, saying why. With no older release
//! to carry from, every page says that the release's prose is not in the corpus, and nothing of
//! another release's prose is shown. The corpora are made at test time: v1.11.0 as it is
//! (spec.md and csi.proto) and v1.12.0 as its csi.proto alone, copied into a temporary folder.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use csikit_site::{Release, generate_site, load_corpus};
use csikit_spec::SourceKind;

struct Rendered {
    _corpus: tempfile::TempDir,
    releases: Vec<Release>,
    files: BTreeMap<PathBuf, String>,
}

/// The site of a made-up corpus of `files` ((release, file) pairs copied from the real corpus),
/// or `None` after a loud skip when the real corpus is absent.
fn rendered_from(files: &[(&str, &str)]) -> Option<Rendered> {
    let real = csikit_spec::corpus_or_skip()?;
    let corpus = tempfile::tempdir().expect("temporary folder");
    for (release, file) in files {
        let to = corpus.path().join("csi-spec").join(release);
        std::fs::create_dir_all(&to).expect("release folder");
        std::fs::copy(real.join("csi-spec").join(release).join(file), to.join(file))
            .unwrap_or_else(|e| panic!("copying {release}/{file}: {e}"));
    }
    let (releases, options) = load_corpus(corpus.path()).unwrap_or_else(|e| panic!("{e}"));
    assert!(options.translations.is_empty() && options.addons.is_empty());
    let files = generate_site(&releases, &options);
    Some(Rendered { _corpus: corpus, releases, files })
}

/// v1.11.0 whole, v1.12.0 as its proto: v1.12.0 carries v1.11.0's prose.
fn rendered() -> Option<Rendered> {
    rendered_from(&[("v1.11.0", "spec.md"), ("v1.11.0", "csi.proto"), ("v1.12.0", "csi.proto")])
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

/// The banner of a page showing text carried from v1.11.0, as a named region.
const BANNER: &str = "<section class=\"notice notice-carried\" aria-label=\"Carried text\"><p>The prose and error tables on this page are v1.11.0&#39;s, carried from its spec.md because v1.12.0&#39;s own spec.md is not in the corpus;";

/// The region on the page of an RPC whose prose is not carried.
const NOT_CARRIED: &str =
    "<section class=\"notice notice-not-carried\" aria-label=\"Prose not available\"><p>";

/// Error conditions of `model`'s RPC tables plain enough to find in a page as written.
fn plain_conditions<'m>(rows: impl Iterator<Item = &'m csikit_spec::ErrorRow>) -> Vec<&'m str> {
    rows.map(|r| r.condition.as_str())
        .filter(|c| c.len() > 12 && !c.contains(['`', '*', '&', '<', '\'', '"']))
        .collect()
}

#[test]
fn with_nothing_to_carry_from_every_page_says_the_prose_is_not_in_the_corpus() {
    let Some(site) = rendered_from(&[("v1.12.0", "csi.proto")]) else { return };
    let names: Vec<(&str, SourceKind)> =
        site.releases.iter().map(|r| (r.name.as_str(), r.model.source.kind)).collect();
    assert_eq!(names, [("v1.12.0", SourceKind::Proto)]);
    assert!(site.releases[0].model.source.carried.is_none());
    let pages = edition(&site, "en/v1.12.0");
    let html: Vec<&(String, &str)> = pages.iter().filter(|(p, _)| p.ends_with(".html")).collect();
    assert!(html.len() > 100, "{} pages", html.len());
    for (path, text) in &html {
        assert!(text.contains(NOTICE), "no proto-only notice on en/v1.12.0/{path}");
        assert!(!text.contains("notice-carried"), "a carried banner on en/v1.12.0/{path}");
        // Only pages the proto makes: contents, changes, RPCs and reference entries.
        assert!(
            ["index.html", "changes.html"].contains(&path.as_str())
                || path.starts_with("rpc/")
                || path.starts_with("ref/"),
            "en/v1.12.0/{path} is not made from the proto"
        );
    }
    let rpc = page(&site, "en/v1.12.0/rpc/CreateVolume.html");
    assert!(rpc.contains("The error table of this RPC is not in the corpus"));
    assert!(!rpc.contains("<table class=\"errors\""));
}

#[test]
fn a_proto_only_release_shows_the_carried_prose_under_a_banner_naming_its_release() {
    let Some(site) = rendered() else { return };
    let names: Vec<(&str, SourceKind)> =
        site.releases.iter().map(|r| (r.name.as_str(), r.model.source.kind)).collect();
    assert_eq!(names, [("v1.11.0", SourceKind::Spec), ("v1.12.0", SourceKind::Proto)]);
    let (old, model) = (&site.releases[0].model, &site.releases[1].model);
    assert_eq!(model.source.carried.as_ref().map(|c| c.from.as_str()), Some("v1.11.0"));

    // A page has the banner exactly when it shows carried text: a carried section or table.
    let pages = edition(&site, "en/v1.12.0");
    let mut with_banner = 0;
    for (path, text) in pages.iter().filter(|(p, _)| p.ends_with(".html")) {
        assert!(!text.contains("notice-proto-only"), "the proto-only notice on {path}");
        let carried = text.contains("class=\"unit unit-carried\" data-carried-from=\"v1.11.0\"")
            || text.contains("<caption>Error rows carried from v1.11.0&#39;s spec.md</caption>");
        assert_eq!(text.contains(BANNER), carried, "en/v1.12.0/{path}: banner and carried text");
        if path.starts_with("ref/") || path == "changes.html" {
            assert!(!carried, "en/v1.12.0/{path} is the proto's own");
        }
        with_banner += usize::from(carried);
    }
    assert!(with_banner > 20, "only {with_banner} pages show carried text");
    for (path, text) in edition(&site, "en/v1.11.0") {
        assert!(!text.contains("notice-carried"), "a carried banner on the full release's {path}");
    }

    // A carried RPC shows v1.11.0's rows; a changed or new one its proto comment and why.
    let mut carried_rpcs = 0;
    for m in model.services.iter().flat_map(|s| &s.methods) {
        let rpc = page(&site, &format!("en/v1.12.0/rpc/{}.html", m.name));
        if m.carried_from.is_some() {
            carried_rpcs += 1;
            for c in plain_conditions(m.errors.iter()) {
                assert!(rpc.contains(c), "{}: the carried row '{c}' is not shown", m.name);
            }
            assert!(!rpc.contains(NOT_CARRIED), "{}: carried, yet said not", m.name);
            continue;
        }
        assert!(m.errors.is_empty(), "{}: rows without being carried", m.name);
        assert!(!rpc.contains("<table class=\"errors\""), "{}: an error table", m.name);
        let why = if old.method(&m.name).is_some() {
            "This RPC&#39;s request or response changed since v1.11.0"
        } else {
            "This RPC is new in v1.12.0"
        };
        assert!(rpc.contains(&format!("{NOT_CARRIED}{why}")), "{}: not '{why}'", m.name);
        // None of v1.11.0's rows of it, where that row is its own (not also another RPC's).
        let elsewhere: Vec<&str> = plain_conditions(
            old.services
                .iter()
                .flat_map(|s| &s.methods)
                .filter(|o| o.name != m.name)
                .flat_map(|o| &o.errors),
        );
        if let Some((_, o)) = old.method(&m.name) {
            for c in
                plain_conditions(o.errors.iter()).into_iter().filter(|c| !elsewhere.contains(c))
            {
                assert!(!rpc.contains(c), "{}: v1.11.0's row '{c}' shown", m.name);
            }
        }
    }
    assert!(carried_rpcs > 20, "only {carried_rpcs} carried RPCs");
    assert!(model.method("GetSnapshot").is_some_and(|(_, m)| m.carried_from.is_none()));
}

#[test]
fn pages_come_from_the_proto_with_badges() {
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
    assert!(rpc.contains("No error table is available for this RPC"));
    // Messages have their field tables with badges from the proto's comments.
    let request = page(&site, "en/v1.12.0/ref/csi.v1.CreateVolumeRequest.html");
    assert!(request.contains("badge badge-required") && request.contains("badge badge-size"));
}

#[test]
fn the_changes_page_compares_what_both_sources_state() {
    let Some(site) = rendered() else { return };
    let changes = page(&site, "en/v1.12.0/changes.html");
    assert!(changes.contains("GetSnapshot"), "GetSnapshot is not listed as added");
    // Carried error tables are compared RPC by RPC (the same rows: no finding); the rest is
    // said not to be compared, and no row is reported as removed.
    assert!(changes.contains("<li data-what=\"errors\"><code>errors</code>: the source of v1.12.0 in the corpus does not state it; carried from v1.11.0 for the RPCs whose schema is unchanged"));
    assert!(!changes.contains("data-element=\"error_row\""), "error rows reported as changes");
    // The contents page lists the proto's services and RPCs, under the banner.
    let index = page(&site, "en/v1.12.0/index.html");
    assert!(index.contains("rpc/GetSnapshot.html") && index.contains(BANNER));
}

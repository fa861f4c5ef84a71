//! Renders the documentation site from the real corpus and checks it: every internal link
//! and anchor resolves, anchors match across languages, the Japanese site shows its own
//! error conditions and falls back to English, with a notice, for RPCs newer than its release.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Component, Path, PathBuf};

use csikit_codegen::site::{SiteOptions, Translation, generate_site};
use csikit_spec::{LoadOptions, Model};

/// The English release, and each translation with the release it translates (as `cargo xtask docs`).
const RELEASE: &str = "v1.12.0";
const TRANSLATIONS: &[(&str, &str, &str)] =
    &[("ja", "ja/spec.md", "v1.7.0"), ("zh", "zh/spec.md", "v1.6.0")];

struct Site {
    en: Model,
    options: SiteOptions,
    files: BTreeMap<PathBuf, String>,
}

/// Loads the corpus and renders the site; `None` (after a loud message) when the corpus is
/// absent, unless `CSIKIT_REQUIRE_CORPUS=1` makes that a failure.
fn site() -> Option<Site> {
    let corpus = csikit_spec::corpus_dir();
    let mut needed = vec![corpus.join("csi-spec").join(RELEASE).join("spec.md")];
    for (_, file, release) in TRANSLATIONS {
        needed.push(corpus.join("translations").join(file));
        needed.push(corpus.join("csi-spec").join(release).join("spec.md"));
    }
    let missing: Vec<String> =
        needed.iter().filter(|p| !p.is_file()).map(|p| p.display().to_string()).collect();
    if !missing.is_empty() {
        csikit_spec::skip_missing(&format!(
            "corpus files missing (set CSIKIT_CORPUS): {}",
            missing.join(", ")
        ));
        return None;
    }
    let load = |dir: &Path, tr: Option<(String, PathBuf)>| {
        let loaded =
            csikit_spec::load_dir(dir, &LoadOptions { translation: tr, ..LoadOptions::default() });
        loaded.model.unwrap_or_else(|| panic!("'{}' did not load", dir.display()))
    };
    let en = load(&corpus.join("csi-spec").join(RELEASE), None);
    let translations = TRANSLATIONS
        .iter()
        .map(|(lang, file, release)| Translation {
            lang: (*lang).to_owned(),
            release: (*release).to_owned(),
            model: load(
                &corpus.join("csi-spec").join(release),
                Some(((*lang).to_owned(), corpus.join("translations").join(file))),
            ),
        })
        .collect();
    let options = SiteOptions { release: RELEASE.to_owned(), translations };
    let files = generate_site(&en, &options);
    Some(Site { en, options, files })
}

/// Values of `attr="..."` in an HTML text, entities for `&`, `"` and `'` undone.
fn attr_values<'a>(html: &'a str, attr: &'a str) -> impl Iterator<Item = String> + 'a {
    let needle = format!(" {attr}=\"");
    html.match_indices(needle.clone().leak() as &str).filter_map(move |(i, _)| {
        let rest = &html[i + needle.len()..];
        let end = rest.find('"')?;
        Some(rest[..end].replace("&quot;", "\"").replace("&#39;", "'").replace("&amp;", "&"))
    })
}

/// Joins a relative href to the folder of `from`, resolving `..`.
fn resolve(from: &Path, href: &str) -> PathBuf {
    let mut out: Vec<Component<'_>> =
        from.parent().map(|p| p.components().collect()).unwrap_or_default();
    for c in Path::new(href).components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out.iter().collect()
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = if bytes[i] == b'%' && i + 2 < bytes.len() {
            u8::from_str_radix(&s[i + 1..i + 3], 16).ok()
        } else {
            None
        };
        if let Some(b) = hex {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn every_internal_link_and_anchor_resolves() {
    let Some(site) = site() else { return };
    let ids: HashMap<&Path, BTreeSet<String>> = site
        .files
        .iter()
        .filter(|(p, _)| p.extension().is_some_and(|e| e == "html"))
        .map(|(p, text)| (p.as_path(), attr_values(text, "id").collect()))
        .collect();
    let (mut checked, mut anchors) = (0usize, 0usize);
    let mut broken = Vec::new();
    for (page, text) in &site.files {
        if page.extension().is_none_or(|e| e != "html") {
            continue;
        }
        for link in attr_values(text, "href").chain(attr_values(text, "src")) {
            if ["http://", "https://", "mailto:"].iter().any(|p| link.starts_with(p)) {
                continue;
            }
            assert!(
                !link.starts_with("//") && !link.contains("://"),
                "{}: external resource '{link}'",
                page.display()
            );
            checked += 1;
            let (path, frag) =
                link.split_once('#').map_or((link.as_str(), None), |(p, f)| (p, Some(f)));
            let target = if path.is_empty() { page.clone() } else { resolve(page, path) };
            if !site.files.contains_key(&target) {
                broken.push(format!(
                    "{}: '{link}' (no file '{}')",
                    page.display(),
                    target.display()
                ));
                continue;
            }
            if let Some(frag) = frag {
                anchors += 1;
                let frag = percent_decode(frag);
                if !ids.get(target.as_path()).is_some_and(|set| set.contains(&frag)) {
                    broken.push(format!("{}: '{link}' (no anchor '{frag}')", page.display()));
                }
            }
        }
    }
    eprintln!(
        "link check: {checked} internal links ({anchors} with anchors) in {} files",
        site.files.len()
    );
    assert!(checked > 10_000, "suspiciously few links: {checked}");
    assert!(
        broken.is_empty(),
        "{} broken links, first ones:\n{}",
        broken.len(),
        broken[..broken.len().min(20)].join("\n")
    );
}

#[test]
fn anchors_are_the_same_in_every_language() {
    let Some(site) = site() else { return };
    let mut compared = 0;
    for (path, text) in &site.files {
        let Ok(rest) = path.strip_prefix("en") else { continue };
        if path.extension().is_none_or(|e| e != "html") {
            continue;
        }
        let en: BTreeSet<String> = attr_values(text, "id").collect();
        for (lang, _, _) in TRANSLATIONS {
            let other = site
                .files
                .get(&Path::new(lang).join(rest))
                .unwrap_or_else(|| panic!("{lang} lacks {}", rest.display()));
            let ids: BTreeSet<String> = attr_values(other, "id").collect();
            assert_eq!(en, ids, "anchors of {} differ between en and {lang}", rest.display());
            compared += 1;
        }
    }
    assert!(compared > 200, "only {compared} pages compared");
}

fn error_conditions(html: &str) -> Vec<String> {
    html.match_indices("<td class=\"condition\">")
        .map(|(i, m)| {
            let rest = &html[i + m.len()..];
            rest[..rest.find("</td>").unwrap_or(0)].to_owned()
        })
        .collect()
}

#[test]
fn japanese_create_volume_shows_japanese_error_conditions() {
    let Some(site) = site() else { return };
    let page = &site.files[Path::new("ja/rpc/CreateVolume.html")];
    let conditions = error_conditions(page);
    assert!(conditions.len() >= 5, "too few error rows: {conditions:?}");
    let japanese =
        conditions.iter().filter(|c| c.chars().any(csikit_codegen::site::is_cjk)).count();
    assert_eq!(japanese, conditions.len(), "conditions not in Japanese: {conditions:?}");
    assert!(page.contains("ソースが存在しない"), "the 'source does not exist' row is missing");
    assert!(page.contains("v1.7.0"), "the page does not name the release it was translated from");
    let en = &site.files[Path::new("en/rpc/CreateVolume.html")];
    assert!(error_conditions(en).iter().any(|c| c.contains("Source does not exist")));
}

#[test]
fn rpcs_newer_than_the_translation_fall_back_to_english_with_a_notice() {
    let Some(site) = site() else { return };
    let ja = &site.options.translations[0].model;
    let newer: Vec<&str> = site
        .en
        .services
        .iter()
        .flat_map(|s| &s.methods)
        .filter(|m| ja.method(&m.name).is_none())
        .map(|m| m.name.as_str())
        .collect();
    assert!(
        newer.contains(&"ControllerModifyVolume") && newer.contains(&"GetSnapshot"),
        "{newer:?}"
    );
    for name in &newer {
        let page = &site.files[&PathBuf::from(format!("ja/rpc/{name}.html"))];
        assert!(page.contains("notice-fallback"), "ja/rpc/{name}.html has no fallback notice");
        assert!(
            page.contains("英語 (v1.12.0)"),
            "ja/rpc/{name}.html does not say it falls back to English"
        );
    }
    let translated = &site.files[Path::new("ja/rpc/CreateVolume.html")];
    assert!(
        !translated.contains("notice notice-fallback"),
        "CreateVolume is translated, yet falls back"
    );
}

#[test]
fn status_page_lists_every_section_per_language() {
    let Some(site) = site() else { return };
    let status = &site.files[Path::new("en/status.html")];
    for class in ["status-translated", "status-partly", "status-missing", "status-stale"] {
        assert!(status.contains(class), "no '{class}' on the status page");
    }
    let rows = status.matches("<tr><td class=\"level-").count();
    let sections = site.en.sections.len();
    assert_eq!(rows, sections, "status rows vs sections of {RELEASE}");
}

#[test]
fn search_index_and_ascii_diagrams() {
    let Some(site) = site() else { return };
    for (lang, probe) in [("en", "Volume Lifecycle"), ("ja", "ボリューム"), ("zh", "卷")] {
        let index = &site.files[&PathBuf::from(format!("{lang}/search-index.js"))];
        assert!(index.starts_with("window.CSIKIT_SEARCH = {"), "{lang} index shape");
        assert!(index.contains(probe), "{lang} index lacks '{probe}'");
        assert!(
            index.contains("CreateVolumeRequest.volume_capabilities"),
            "{lang} index lacks fields"
        );
    }
    // Every diagram of the spec (code blocks without a language) keeps every line, spaces included.
    let md = site.en.files[0].text();
    let mut diagrams = Vec::new();
    let mut rest = md;
    while let Some(i) = rest.find("\n```\n") {
        let body = &rest[i + 5..];
        let Some(end) = body.find("\n```") else { break };
        diagrams.push(format!("{}\n", &body[..end]));
        rest = &body[end + 4..];
    }
    let shown: BTreeSet<String> = site
        .files
        .iter()
        .filter(|(p, _)| p.starts_with("en"))
        .flat_map(|(_, t)| {
            t.split("<pre><code>")
                .skip(1)
                .map(|b| unescape(&b[..b.find("</code></pre>").unwrap_or(0)]))
        })
        .collect();
    let boxes: Vec<&String> = diagrams.iter().filter(|d| d.contains("+-")).collect();
    assert!(boxes.len() >= 3, "expected the spec's box diagrams, found {}", boxes.len());
    for d in boxes {
        assert!(shown.contains(d), "diagram not kept verbatim:\n{d}");
    }
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

#[test]
fn output_is_deterministic() {
    let Some(site) = site() else { return };
    let again = generate_site(&site.en, &site.options);
    assert!(site.files == again, "two renders differ");
}

//! Renders the documentation site from the real corpus (every release from v1.0.0, the ja and zh
//! translations, the csi-addons packages) and checks it: every internal link and anchor
//! resolves, anchors match between a translation and the English edition of its release, the
//! Japanese edition shows its own error conditions and falls back to English with a notice,
//! switching release keeps the page or says the target lacks it, the layout before releases
//! redirects, and the csi-addons packages have their reference pages.

#[path = "support/site_inputs.rs"]
mod support;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use csikit_site::{Release, SiteOptions, generate_site};

struct Site {
    releases: Vec<Release>,
    options: SiteOptions,
    files: BTreeMap<PathBuf, String>,
}

/// The rendered site, once for every test of this binary; `None` (after a loud message) when
/// the corpus is absent, unless `CSIKIT_REQUIRE_CORPUS=1` makes that a failure.
fn site() -> Option<&'static Site> {
    static SITE: OnceLock<Option<Site>> = OnceLock::new();
    SITE.get_or_init(|| {
        let (releases, options) = support::site_inputs()?;
        let files = generate_site(&releases, &options);
        Some(Site { releases, options, files })
    })
    .as_ref()
}

/// The corpus's CSI releases from v1.0.0 on, oldest first, from its listing (not named here, so a
/// release folder dropped into the corpus needs no edit of these tests).
fn listed_releases() -> Vec<String> {
    let corpus = csikit_spec::corpus::Corpus::open().expect("the corpus lists its releases");
    corpus.releases_from(csikit_site::FIRST_RELEASE).map(|r| r.name.clone()).collect()
}

/// The newest release of the corpus listing: the site's default edition.
fn newest(site: &Site) -> String {
    let newest = listed_releases().pop().expect("a release");
    assert_eq!(site.releases.last().map(|r| r.name.as_str()), Some(newest.as_str()));
    newest
}

fn page<'s>(site: &'s Site, path: &str) -> &'s str {
    site.files.get(Path::new(path)).unwrap_or_else(|| panic!("no page '{path}'"))
}

/// Values of `attr="..."` in an HTML text, entities for `&`, `"` and `'` undone.
fn attr_values<'a>(html: &'a str, attr: &'a str) -> impl Iterator<Item = String> + 'a {
    let needle = format!(" {attr}=\"");
    html.match_indices(needle.clone().leak() as &str).filter_map(move |(i, _)| {
        let rest = &html[i + needle.len()..];
        let end = rest.find('"')?;
        Some(
            rest[..end]
                .replace("&quot;", "\"")
                .replace("&#34;", "\"")
                .replace("&#39;", "'")
                .replace("&#38;", "&")
                .replace("&amp;", "&"),
        )
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
    let (mut checked, mut anchors, mut missing_links) = (0usize, 0usize, 0usize);
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
            let (rest, frag) =
                link.split_once('#').map_or((link.as_str(), None), |(p, f)| (p, Some(f)));
            let (path, query) = rest.split_once('?').map_or((rest, None), |(p, q)| (p, Some(q)));
            let target = if path.is_empty() { page.clone() } else { resolve(page, path) };
            if !site.files.contains_key(&target) {
                broken.push(format!(
                    "{}: '{link}' (no file '{}')",
                    page.display(),
                    target.display()
                ));
                continue;
            }
            // A link to a page another edition lacks goes to that edition's contents page.
            if let Some(q) = query {
                missing_links += 1;
                if !q.starts_with("missing=") || !target.ends_with("index.html") {
                    broken.push(format!(
                        "{}: '{link}' (query on a non-contents page)",
                        page.display()
                    ));
                }
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
        "link check: {checked} internal links ({anchors} with anchors, {missing_links} to a contents page with a notice) in {} files",
        site.files.len()
    );
    assert!(checked > 100_000, "suspiciously few links: {checked}");
    assert!(missing_links > 1_000, "suspiciously few links to missing pages: {missing_links}");
    assert!(
        broken.is_empty(),
        "{} broken links, first ones:\n{}",
        broken.len(),
        broken[..broken.len().min(20)].join("\n")
    );
}

#[test]
fn a_translation_has_the_anchors_of_its_english_release() {
    let Some(site) = site() else { return };
    let mut compared = 0;
    for (lang, release) in site.options.translations.iter().map(|t| (&t.lang, &t.release)) {
        let en_dir = PathBuf::from(format!("en/{release}"));
        for (path, text) in &site.files {
            let Ok(rest) = path.strip_prefix(&en_dir) else { continue };
            // Guides are written in English only: a translated edition has none.
            if path.extension().is_none_or(|e| e != "html") || rest.starts_with("guide") {
                continue;
            }
            let en: BTreeSet<String> = attr_values(text, "id").collect();
            let other = page(site, &format!("{lang}/{release}/{}", rest.display()));
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
    let ja = page(site, "ja/v1.7.0/rpc/CreateVolume.html");
    let conditions = error_conditions(ja);
    assert!(conditions.len() >= 5, "too few error rows: {conditions:?}");
    let japanese = conditions.iter().filter(|c| c.chars().any(csikit_site::is_cjk)).count();
    assert_eq!(japanese, conditions.len(), "conditions not in Japanese: {conditions:?}");
    assert!(ja.contains("ソースが存在しない"), "the 'source does not exist' row is missing");
    assert!(ja.contains("v1.7.0"), "the page does not name the release it was translated from");
    let en = page(site, "en/v1.12.0/rpc/CreateVolume.html");
    assert!(error_conditions(en).iter().any(|c| c.contains("Source does not exist")));
}

/// The Japanese edition is release v1.7.0: RPCs added later are not in it, and every link to
/// one (the language switcher, the layout before releases) goes to its contents page with the
/// notice's parameters; sections the translation lacks are v1.7.0's English, with a notice.
#[test]
fn translations_follow_their_release() {
    let Some(site) = site() else { return };
    let ja = &site.options.translations[0];
    assert_eq!((ja.lang.as_str(), ja.release.as_str()), ("ja", "v1.7.0"));
    assert!(!site.files.contains_key(Path::new("ja/v1.7.0/rpc/GetSnapshot.html")));
    assert!(!site.files.contains_key(Path::new("ja/v1.12.0/index.html")));
    let en = page(site, "en/v1.12.0/rpc/GetSnapshot.html");
    let to_ja = attr_values(en, "href")
        .find(|h| h.contains("/ja/"))
        .expect("a Japanese link on the English GetSnapshot page");
    assert_eq!(to_ja, "../../../ja/v1.7.0/index.html?missing=GetSnapshot&added=v1.12");
    let old = page(site, "ja/rpc/GetSnapshot.html");
    assert!(
        old.contains("url=../../ja/v1.7.0/index.html?missing=GetSnapshot&#38;added=v1.12"),
        "{old}"
    );
    // CreateVolume is translated; NodeStageVolume (after CreateSnapshot) is not.
    let create = page(site, "ja/v1.7.0/rpc/CreateVolume.html");
    assert!(
        !create.contains("notice notice-fallback"),
        "CreateVolume is translated, yet falls back"
    );
    let stage = page(site, "ja/v1.7.0/rpc/NodeStageVolume.html");
    assert!(stage.contains("notice-fallback"), "NodeStageVolume has no fallback notice");
    assert!(stage.contains("英語 (v1.7.0)"), "the fallback does not name the English release");
}

#[test]
fn status_page_lists_every_section_of_the_translated_release() {
    let Some(site) = site() else { return };
    for (lang, release) in site.options.translations.iter().map(|t| (&t.lang, &t.release)) {
        let status = page(site, &format!("{lang}/{release}/status.html"));
        for class in ["status-translated", "status-partly", "status-missing", "status-stale"] {
            assert!(status.contains(class), "no '{class}' on the {lang} status page");
        }
        let rows = status.matches("<tr><td class=\"level-").count();
        let sections = site
            .releases
            .iter()
            .find(|r| r.name == *release)
            .map(|r| r.model.sections.len())
            .expect("the translated release is rendered");
        assert_eq!(rows, sections, "{lang} status rows vs sections of {release}");
    }
    assert!(!site.files.contains_key(Path::new("en/v1.12.0/status.html")));
}

#[test]
fn search_index_and_ascii_diagrams() {
    let Some(site) = site() else { return };
    for (edition, probe, field) in [
        ("en/v1.12.0", "Volume Lifecycle", "CreateVolumeRequest.volume_capabilities"),
        ("en/v1.0.0", "Volume Lifecycle", "CreateVolumeRequest.volume_capabilities"),
        ("ja/v1.7.0", "ボリューム", "CreateVolumeRequest.volume_capabilities"),
        ("zh/v1.6.0", "卷", "CreateVolumeRequest.volume_capabilities"),
        (
            "addons/replication",
            "EnableVolumeReplication",
            "EnableVolumeReplicationRequest.replication_source",
        ),
    ] {
        let index = page(site, &format!("{edition}/search-index.js"));
        assert!(index.starts_with("window.CSIKIT_SEARCH = {"), "{edition} index shape");
        assert!(index.contains(probe), "{edition} index lacks '{probe}'");
        assert!(index.contains(field), "{edition} index lacks '{field}'");
    }
    // GetSnapshot is searchable from v1.12.0 only.
    assert!(page(site, "en/v1.12.0/search-index.js").contains("\"GetSnapshot\""));
    assert!(!page(site, "en/v1.11.0/search-index.js").contains("\"GetSnapshot\""));
    // Every diagram of the spec (code blocks without a language) keeps every line, spaces included:
    // in the edition of the newest release, whose markdown is its own or carried.
    let name = newest(site);
    let newest = site.releases.iter().find(|r| r.name == name).expect("the newest release");
    let markdown = match &newest.model.source.carried {
        _ if newest.model.source.kind == csikit_spec::SourceKind::Spec => 0,
        Some(carried) => carried.markdown,
        None => panic!("{name}: neither its own spec.md nor one carried"),
    };
    let md = newest.model.files[markdown].text();
    let mut diagrams = Vec::new();
    let mut rest = md;
    while let Some(i) = rest.find("\n```\n") {
        let body = &rest[i + 5..];
        let Some(end) = body.find("\n```") else { break };
        diagrams.push(format!("{}\n", &body[..end]));
        rest = &body[end + 4..];
    }
    let dir = format!("en/{}", newest.name);
    let shown: BTreeSet<String> = site
        .files
        .iter()
        .filter(|(p, _)| p.starts_with(&dir))
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

/// The entries of an edition's search index.
fn search_entries(site: &Site, edition: &str) -> Vec<serde_json::Value> {
    let js = page(site, &format!("{edition}/search-index.js"));
    let json = js
        .strip_prefix("window.CSIKIT_SEARCH = ")
        .and_then(|j| j.trim_end().strip_suffix(';'))
        .unwrap_or_else(|| panic!("{edition}: search index shape"));
    let index: serde_json::Value = serde_json::from_str(json).expect("the index is JSON");
    index["entries"].as_array().expect("entries").clone()
}

/// A condition's words as the site shows them: code spans unmarked, spaces collapsed.
fn plain(markdown: &str) -> String {
    markdown.replace('`', "").split_whitespace().collect::<Vec<_>>().join(" ")
}

/// One error-table row: its table (the RPC, empty for the general table), code and number.
type RowKey = (String, String, i64);

/// Every error-table row of a model, by table, with its condition's words.
fn model_rows(model: &csikit_spec::Model) -> Vec<(RowKey, String)> {
    let methods = model.services.iter().flat_map(|s| &s.methods);
    methods
        .flat_map(|m| m.errors.iter().map(move |r| (m.name.as_str(), r)))
        .chain(model.general_errors.iter().map(|r| ("", r)))
        .map(|(owner, r)| {
            ((owner.to_owned(), r.code.clone(), i64::from(r.code_number)), plain(&r.condition))
        })
        .collect()
}

/// The oracle is each edition's Model: every row of every RPC's error table and of the general
/// table is one search result of kind "error" (no row twice, none made up), with the row's
/// code, number and RPC, its condition as the edition shows it, and a link to that row of its
/// table. A translation's rows are its own where it has them (Japanese for the ja edition).
#[test]
fn every_error_table_row_is_a_search_result_linking_to_its_row() {
    let Some(site) = site() else { return };
    let mut editions: Vec<(String, &csikit_spec::Model, Option<&csikit_spec::Model>)> =
        site.releases.iter().map(|r| (format!("en/{}", r.name), &r.model, None)).collect();
    for t in &site.options.translations {
        let english = site.releases.iter().find(|r| r.name == t.release).map(|r| &r.model);
        editions.push((format!("{}/{}", t.lang, t.release), &t.model, english));
    }
    for a in &site.options.addons {
        editions.push((format!("addons/{}", a.name), &a.model, None));
    }
    let mut checked = 0;
    for (edition, model, english) in &editions {
        let mut expected = model_rows(model);
        let english_rows = english.map(model_rows);
        let mut found: Vec<(RowKey, String, String)> = Vec::new();
        for e in search_entries(site, edition) {
            if e[0] != "error" {
                continue;
            }
            let text = |i: usize| e[i].as_str().unwrap_or_default().to_owned();
            let key = (text(4), text(5), e[6].as_i64().unwrap_or(-1));
            // A row carried from an older release is marked with that release, and only then.
            let carried = model.source.carried.as_ref().map(|c| c.from.as_str());
            assert_eq!(e.get(7).and_then(|v| v.as_str()), carried, "{edition}: {key:?} carried");
            found.push((key, text(1), text(2)));
        }
        assert_eq!(
            found.len(),
            expected.len(),
            "{edition}: {} error rows in the search index, {} in the model",
            found.len(),
            expected.len()
        );
        for (i, (key, condition, url)) in found.iter().enumerate() {
            let at = expected.iter().position(|(k, _)| k == key);
            let Some(at) = at else { panic!("{edition}: index row {key:?} is not in the model") };
            let (_, own) = expected.remove(at);
            // A translation shows the English row where it lacks the section.
            let english = english_rows.as_ref().and_then(|rows| {
                rows.iter().filter(|(k, _)| k == key).map(|(_, c)| c).find(|c| *c == condition)
            });
            assert!(
                *condition == own || english.is_some(),
                "{edition}: row {i} {key:?} shows '{condition}', the model says '{own}'"
            );
            let (file, anchor) = url.split_once('#').expect("a row link has an anchor");
            let html = page(site, &format!("{edition}/{file}"));
            assert!(
                html.contains(&format!("<tr id=\"{anchor}\"")),
                "{edition}: {url} is not a table row"
            );
            checked += 1;
        }
        if model.source.kind == csikit_spec::SourceKind::Spec && !edition.starts_with("addons/") {
            assert!(!found.is_empty(), "{edition}: a spec with error tables, none in the index");
        }
    }
    // The Japanese edition's rows are Japanese wherever the translation has them.
    let ja = site.options.translations.iter().find(|t| t.lang == "ja").expect("ja");
    let japanese_rows = model_rows(&ja.model)
        .into_iter()
        .filter(|(_, c)| c.chars().any(csikit_site::is_cjk))
        .count();
    let japanese_entries = search_entries(site, &format!("ja/{}", ja.release))
        .iter()
        .filter(|e| {
            e[0] == "error" && e[1].as_str().is_some_and(|c| c.chars().any(csikit_site::is_cjk))
        })
        .count();
    assert!(japanese_rows >= 20, "only {japanese_rows} Japanese rows in the ja model");
    assert_eq!(japanese_entries, japanese_rows, "Japanese rows shown in English");
    eprintln!("search index: {checked} error rows in {} editions", editions.len());
    assert!(checked > 500, "suspiciously few error rows: {checked}");
}

/// The newest edition, read from the listing, against its Model and the diff engine's report
/// from the release before: a page showing text carried from an older release has the banner
/// naming it (and the contents page does), an RPC new in it shows its proto comment under a
/// notice saying so, with its "since" badge and its alpha badge when alpha; the changes page
/// links every element it adds; the release before marks every element it removes
/// "removed in"; and the upgrade guide of a release with an upgrade table is linked from every
/// page of the edition, names every row's elements and says what UPGRADING.md says of each row.
#[test]
fn the_newest_edition_marks_carried_text_new_elements_and_removals() {
    let Some(site) = site() else { return };
    let name = newest(site);
    let at = site.releases.iter().position(|r| r.name == name).expect("newest");
    let (model, before) = (&site.releases[at].model, &site.releases[at - 1]);
    let short = name.strip_suffix(".0").unwrap_or(&name);
    let dir = format!("en/{name}");
    let edition: Vec<(String, &str)> = site
        .files
        .iter()
        .filter_map(|(p, t)| Some((p.strip_prefix(&dir).ok()?.to_str()?.to_owned(), t.as_str())))
        .filter(|(p, _)| p.ends_with(".html"))
        .collect();
    let in_edition = |p: &str| {
        edition.iter().find(|(q, _)| q == p).map(|(_, t)| *t).unwrap_or_else(|| panic!("{dir}/{p}"))
    };
    if let Some(carried) = &model.source.carried {
        let banner = "<section class=\"notice notice-carried\" aria-label=\"Carried text\"><p>";
        let from = format!("are {}&#39;s, carried from its spec.md", carried.from);
        let mut shown = 0;
        for (path, text) in &edition {
            let carried_text = text.contains("class=\"unit unit-carried\"")
                || text.contains("<caption>Error rows carried from");
            assert_eq!(text.contains(banner), carried_text, "{dir}/{path}: banner, carried text");
            if carried_text {
                let i = text.find(banner).expect("banner");
                assert!(
                    text[i..].contains(&from),
                    "{dir}/{path}: the banner names another release"
                );
                shown += 1;
            }
        }
        assert!(shown > 20, "{dir}: only {shown} pages with carried text");
        assert!(in_edition("index.html").contains(banner), "{dir}: no banner on the contents page");
    }
    let report = csikit_spec::diff::diff(&before.model, model, &before.name, &name);
    let changes = in_edition("changes.html");
    let mut new_rpcs = 0;
    for f in &report.findings {
        use csikit_spec::diff::Change;
        let (owner, last) = f.path.rsplit_once('.').expect("a full name");
        let target = match f.element {
            "rpc" => format!("rpc/{last}.html"),
            "message" | "enum" => format!("ref/{}.html", f.path),
            "field" | "enum_value" => format!("ref/{owner}.html#{last}"),
            _ => continue,
        };
        match f.change {
            Change::Added => {
                let href = format!("href=\"{target}\"");
                assert!(changes.contains(&href), "{dir}/changes.html: {} not linked", f.path);
            }
            Change::Removed => {
                let file = target.split('#').next().unwrap_or(&target);
                let old = page(site, &format!("en/{}/{file}", before.name));
                assert!(old.contains(&format!("removed in {short}")), "{}: not removed", f.path);
            }
            _ => {}
        }
        if f.change != Change::Added || f.element != "rpc" {
            continue;
        }
        new_rpcs += 1;
        let (_, m) = model.method(last).expect("an added RPC is in the model");
        let html = in_edition(&target);
        assert!(html.contains(&format!("badge-since\">since {short}<")), "{last}: since");
        assert_eq!(html.contains("badge badge-alpha"), m.alpha, "{last}: alpha badge");
        if model.source.carried.is_some() {
            let notice = format!("Prose not available\"><p>This RPC is new in {name}");
            assert!(html.contains(&notice), "{last}: no notice that it is new");
        }
    }
    eprintln!("{dir}: {new_rpcs} new RPCs");
    // The upgrade guide of each release with an upgrade table, in that release's edition: it
    // names every row's elements and says what the `csikit` crate's UPGRADING.md says of each row
    // (both are made from the one table, `csikit_spec::upgrade`).
    let upgrading = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../generated/UPGRADING.md"),
    )
    .expect("generated/UPGRADING.md");
    for (release, _) in csikit_spec::upgrade::DATA {
        let Some(edition) = site.releases.iter().find(|r| &r.name == release) else { continue };
        let model = &edition.model;
        let data = csikit_spec::upgrade::data_for(release).expect("listed").expect("reads");
        let Some(guide) = site.files.get(Path::new(&format!("en/{release}/guide/upgrading.html")))
        else {
            panic!("en/{release}: no upgrade guide")
        };
        let guide_text = text_of(guide);
        // UPGRADING.md is the note of the release the crate carries: the newest table's.
        let in_note = upgrading
            .lines()
            .any(|l| l.starts_with("# Upgrading to") && l.ends_with(&format!("CSI {release}")));
        let newest_table = csikit_spec::upgrade::DATA.last().map(|(r, _)| *r);
        assert!(in_note || newest_table != Some(*release), "UPGRADING.md is not {release}'s");
        for row in &data.replacements {
            for name in std::iter::once(&row.removed).chain(&row.replaced_by) {
                // Named as the changes page names it: relative to the package, an RPC by its
                // service.
                let shown = csikit_spec::upgrade::element(model, name)
                    .map_or_else(|| name.clone(), |(full, _)| model.relative(&full).to_owned());
                assert!(guide.contains(&format!("<code>{shown}</code>")), "guide: {name}");
            }
            let mut said: Vec<&str> = vec![&row.how];
            said.extend(row.readers.iter().map(|r| r.does.as_str()));
            said.extend(row.quotes.iter().map(|q| q.says.as_str()));
            for text in said {
                let words = text.replace('`', "").split_whitespace().collect::<Vec<_>>().join(" ");
                assert!(guide_text.contains(&words), "en/{release} guide does not say: {words}");
                if in_note {
                    let note = upgrading.replace('`', "");
                    assert!(
                        note.split_whitespace().collect::<Vec<_>>().join(" ").contains(&words),
                        "generated/UPGRADING.md does not say: {words}"
                    );
                }
            }
        }
        for (path, text) in site.files.iter().filter(|(p, _)| {
            p.starts_with(format!("en/{release}")) && p.extension().is_some_and(|e| e == "html")
        }) {
            assert!(
                text.contains("guide/upgrading.html\""),
                "{}: no link to the guide",
                path.display()
            );
        }
    }
}

/// The text of an HTML page: tags dropped, entities read, whitespace collapsed.
fn text_of(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    unescape(&out).split_whitespace().collect::<Vec<_>>().join(" ")
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The release menu of a page: edition folder → href.
fn release_menu(html: &str) -> BTreeMap<String, String> {
    html.match_indices("<a href=\"")
        .filter_map(|(i, m)| {
            let rest = &html[i + m.len()..];
            let href = &rest[..rest.find('"')?];
            let tag = &rest[..rest.find('>')?];
            let switch = tag.split("data-release-switch=\"").nth(1)?;
            Some((switch[..switch.find('"')?].to_owned(), href.replace("&#38;", "&")))
        })
        .collect()
}

#[test]
fn the_release_menu_keeps_the_page_or_says_the_release_lacks_it() {
    let Some(site) = site() else { return };
    let names: Vec<&str> = site.releases.iter().map(|r| r.name.as_str()).collect();
    let listed = listed_releases();
    assert_eq!(names.first(), Some(&"v1.0.0"));
    assert_eq!(names, listed, "one edition per corpus release from v1.0.0, oldest first");
    let newest = newest(site);
    let menu = release_menu(page(site, "en/v1.12.0/rpc/CreateVolume.html"));
    assert_eq!(menu.len(), listed.len(), "{menu:?}");
    assert_eq!(menu["en/v1.10.0"], "../../../en/v1.10.0/rpc/CreateVolume.html");
    let menu = release_menu(page(site, "en/v1.12.0/rpc/GetSnapshot.html"));
    assert_eq!(
        menu["en/v1.10.0"],
        "../../../en/v1.10.0/index.html?missing=GetSnapshot&added=v1.12"
    );
    assert_eq!(menu["en/v1.12.0"], "../../../en/v1.12.0/rpc/GetSnapshot.html");
    // A Japanese page lists its own release, then the English ones.
    let menu = release_menu(page(site, "ja/v1.7.0/rpc/CreateVolume.html"));
    assert!(
        menu.contains_key("ja/v1.7.0") && menu.contains_key(&format!("en/{newest}")),
        "{menu:?}"
    );
    // Every edition has a changes page; v1.12.0's names what v1.12.0 added.
    let changes = page(site, "en/v1.12.0/changes.html");
    assert!(
        changes.contains("href=\"rpc/GetSnapshot.html\""),
        "GetSnapshot not in the v1.12.0 changes"
    );
    assert!(changes.contains("What changed from v1.11.0 to v1.12.0"));
    for r in &site.releases {
        page(site, &format!("en/{}/changes.html", r.name));
    }
}

#[test]
fn the_layout_before_releases_redirects_to_the_newest() {
    let Some(site) = site() else { return };
    let newest = newest(site);
    let old = page(site, "en/rpc/CreateVolume.html");
    assert!(
        old.contains(&format!(
            "location.replace(\"../../en/{newest}/rpc/CreateVolume.html\" + location.hash)"
        )),
        "{old}"
    );
    assert!(page(site, "en/index.html").contains(&format!("url=../en/{newest}/index.html")));
    assert!(
        page(site, "ja/rpc/CreateVolume.html")
            .contains("url=../../ja/v1.7.0/rpc/CreateVolume.html")
    );
    assert!(
        page(site, "zh/ref/csi.v1.Volume.html")
            .contains("url=../../zh/v1.6.0/ref/csi.v1.Volume.html")
    );
    // csi-view's links name en/ref/FULL_NAME.html for csi-addons types too.
    assert!(page(site, "en/ref/replication.EnableVolumeReplicationRequest.html").contains(
        "url=../../addons/replication/ref/replication.EnableVolumeReplicationRequest.html"
    ));
    let root = page(site, "index.html");
    assert!(root.contains(&format!("href=\"en/{newest}/index.html\"")), "the front page's default");
}

#[test]
fn csi_addons_have_their_own_part() {
    let Some(site) = site() else { return };
    let enable = page(site, "addons/replication/rpc/EnableVolumeReplication.html");
    assert!(enable.contains("<table class=\"errors\">"), "no error table");
    assert!(
        enable.contains("id=\"EnableVolumeReplicationRequest.secrets\""),
        "no request field table"
    );
    assert!(enable.contains("badge badge-secret"), "no secret badge");
    // replication has an earlier version (v0.1.1): badges and a changes page from it.
    assert!(enable.contains("since v0.1.1") && enable.contains("since main"), "no since badges");
    assert!(page(site, "addons/replication/changes.html").contains("GetVolumeReplicationInfo"));
    // csi.v1 types link into the newest CSI release.
    let newest = newest(site);
    let reclaim = page(site, "addons/reclaimspace/ref/reclaimspace.NodeReclaimSpaceRequest.html");
    assert!(
        reclaim
            .contains(&format!("href=\"../../../en/{newest}/ref/csi.v1.VolumeCapability.html\"")),
        "no link to csi.v1"
    );
    assert_eq!(site.options.addons.len(), 4, "the four csi-addons packages");
    for name in site.options.addons.iter().map(|a| &a.name) {
        page(site, &format!("addons/{name}/index.html"));
    }
}

#[test]
fn output_is_deterministic() {
    let Some(site) = site() else { return };
    let again = generate_site(&site.releases, &site.options);
    assert!(site.files == again, "two renders differ");
}

#[test]
fn the_deploying_guide_is_in_every_english_csi_edition_with_its_headings() {
    let Some(site) = site() else { return };
    let guide = &site.options.guides[0];
    let headings: Vec<&str> =
        guide.markdown.lines().filter_map(|l| l.strip_prefix("## ")).map(str::trim).collect();
    assert!(headings.len() > 3, "the guide's sections: {headings:?}");
    let title = guide.markdown.lines().next().and_then(|l| l.strip_prefix("# ")).expect("a title");
    for release in &site.releases {
        let path = format!("en/{}/guide/deploying.html", release.name);
        let html = page(site, &path);
        assert!(html.contains("<h1") && html.contains(title), "{path}: no title");
        for h in &headings {
            assert!(html.contains(&unescape_free(h)), "{path}: no heading '{h}'");
        }
        let contents = page(site, &format!("en/{}/index.html", release.name));
        assert!(
            attr_values(contents, "href").any(|h| h.ends_with("guide/deploying.html")),
            "{}: the contents page does not link the guide",
            release.name
        );
    }
    let newest = newest(site);
    let search = search_entries(site, &format!("en/{newest}"));
    assert!(
        search.iter().any(|e| e.to_string().contains("guide/deploying.html")),
        "the search index of en/{newest} has no entry for the guide"
    );
    // The guide's words are English: no translated edition and no csi-addons package has it.
    let mut editions: Vec<String> =
        site.options.translations.iter().map(|t| format!("{}/{}", t.lang, t.release)).collect();
    editions.extend(site.options.addons.iter().map(|a| format!("addons/{}", a.name)));
    assert!(editions.len() > 2, "{editions:?}");
    for edition in editions {
        let path = PathBuf::from(format!("{edition}/guide/deploying.html"));
        assert!(!site.files.contains_key(&path), "{} is written", path.display());
    }
}

/// A heading's text as the page shows it: backticks become code, not literal.
fn unescape_free(heading: &str) -> String {
    heading.replace('`', "")
}

//! Facts carried across releases, measured over the corpus's own history: for every
//! consecutive pair of releases from v1.0.0, the newer release is read from its `csi.proto` alone,
//! carried from the older one with its spec.md, and compared with the newer release's real
//! Model. The ceiling: of the 290 RPCs whose schema did not change, 285 kept their error
//! table and obligation; the other 5 tables changed while nothing in the proto did. The table
//! this prints is in `BENCHMARKS.md`:
//!
//! `CSIKIT_REQUIRE_CORPUS=1 cargo test -p csikit-spec --test carry -- --nocapture`
//!
//! Which RPCs count as unchanged is checked against an oracle computed from `protoc`'s descriptor
//! sets alone; the loaders (the corpus default, `Carry::From`, `Carry::None`) and the diff of a
//! carried Model against the real one are checked here too.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use csikit_spec::carry::{carry_facts, is_carry_notice};
use csikit_spec::corpus::{Corpus, Form};
use csikit_spec::source::is_source_notice;
use csikit_spec::{Carry, ErrorRow, LoadOptions, Method, Model, NotAvailable, SourceKind};

/// The five RPCs whose error table changed while their proto did not, not even a
/// comment: no carry can be right for them.
const PROTO_SILENT: [(&str, &str); 5] = [
    ("v1.2.0", "ControllerUnpublishVolume"),
    ("v1.8.0", "DeleteSnapshot"),
    ("v1.9.0", "ControllerExpandVolume"),
    ("v1.9.0", "NodeExpandVolume"),
    ("v1.12.0", "GetMetadataDelta"),
];

fn strict() -> LoadOptions {
    LoadOptions { carry: Carry::None, ..LoadOptions::default() }
}

fn full(dir: &Path) -> Model {
    let loaded = csikit_spec::load_dir(dir, &LoadOptions::default());
    assert!(!loaded.diagnostics.has_errors(), "{}: {}", dir.display(), loaded.diagnostics);
    loaded.model.unwrap_or_else(|| panic!("{} loads", dir.display()))
}

fn proto_alone(dir: &Path) -> Model {
    let loaded = csikit_spec::load_source(&dir.join("csi.proto"), &strict());
    assert!(!loaded.diagnostics.has_errors(), "{}: {}", dir.display(), loaded.diagnostics);
    loaded.model.unwrap_or_else(|| panic!("{} loads", dir.display()))
}

/// The corpus's releases from v1.0.0 that have their spec.md: name and folder, oldest first.
fn full_releases(root: &Path) -> Vec<(String, std::path::PathBuf)> {
    let corpus = Corpus::read(root).expect("corpus");
    corpus
        .releases_from("v1.0.0")
        .filter(|r| r.form == Form::Full)
        .map(|r| (r.name.clone(), r.dir.clone()))
        .collect()
}

/// The rows as the tables list them: condition, code name and number, in order.
fn table(rows: &[ErrorRow]) -> Vec<(&str, &str, i32)> {
    rows.iter().map(|r| (r.condition.as_str(), r.code.as_str(), r.code_number)).collect()
}

/// The rows word for word: description and recovery too.
fn words(rows: &[ErrorRow]) -> Vec<(&str, &str, i32, &str, &str)> {
    rows.iter()
        .map(|r| {
            (r.condition.as_str(), r.code.as_str(), r.code_number, &*r.description, &*r.recovery)
        })
        .collect()
}

/// Everything the proto says of an RPC beyond its schema: its comment and those of its request
/// and response messages, their fields and oneofs. Equal when the proto shows no change at all.
fn proto_words(model: &Model, m: &Method) -> Vec<String> {
    let mut out = vec![m.comment.clone()];
    for name in [&m.input, &m.output] {
        let message = model.message(name).expect("request and response are declared");
        out.push(message.comment.clone());
        out.extend(message.fields.iter().map(|f| f.comment.clone()));
        out.extend(message.oneofs.iter().map(|o| o.comment.clone()));
    }
    out
}

/// How a carried RPC compares with the real release's.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    /// The same rows (condition, code), obligation and section, word for word.
    Right,
    /// Right, but a row's description or recovery is worded differently.
    Reworded,
    /// A row, code, the obligation or the section differs.
    Wrong,
}

fn verdict(carried: &Method, real: &Method) -> Verdict {
    let same_obligation =
        csikit_spec::Obligation::same_rules(carried.obligation.as_ref(), real.obligation.as_ref());
    if table(&carried.errors) != table(&real.errors)
        || !same_obligation
        || carried.section != real.section
    {
        Verdict::Wrong
    } else if words(&carried.errors) != words(&real.errors) {
        Verdict::Reworded
    } else {
        Verdict::Right
    }
}

/// One pair's figures.
#[derive(Default)]
struct Pair {
    carried: usize,
    /// Error rows (condition, code), obligation and section anchor as the real release's.
    right: usize,
    /// Of those, the rows' descriptions and recoveries word for word too.
    word_for_word: usize,
    /// The RPCs carried wrong.
    wrong: Vec<String>,
    /// The RPCs carried right whose rows are reworded.
    reworded: Vec<String>,
    not_carried: usize,
}

#[test]
fn carrying_every_release_from_the_one_before_reaches_the_ceiling() {
    let Some(root) = common::corpus() else { return };
    let releases = full_releases(&root);
    assert!(releases.len() >= 13, "v1.0.0 … v1.12.0 with spec.md: {}", releases.len());
    let models: Vec<Model> = releases.iter().map(|(_, dir)| full(dir)).collect();
    let mut rows = Vec::new();
    let mut silent = BTreeSet::new();
    for i in 1..releases.len() {
        let (old_name, new_name) = (&releases[i - 1].0, &releases[i].0);
        let (old, real) = (&models[i - 1], &models[i]);
        let mut carried = proto_alone(&releases[i].1);
        let report = carry_facts(&mut carried, old, old_name).expect("carries");
        let mut pair = Pair {
            carried: report.carried.len(),
            not_carried: report.changed.len() + report.new.len(),
            ..Pair::default()
        };
        assert_eq!(
            pair.carried + pair.not_carried,
            real.services.iter().map(|s| s.methods.len()).sum::<usize>(),
            "{new_name}: every RPC is carried or not"
        );
        for name in &report.carried {
            let (_, got) = carried.method(name).expect("carried RPC");
            let (_, want) = real.method(name).expect("real RPC");
            assert_eq!(got.carried_from.as_deref(), Some(old_name.as_str()));
            let verdict = verdict(got, want);
            if verdict != Verdict::Right {
                // The ceiling: a carry can only be wrong, or reworded, where the proto shows no
                // change at all.
                let (_, before) = old.method(name).expect("old RPC");
                assert_eq!(
                    proto_words(old, before),
                    proto_words(real, want),
                    "{new_name} {name}: {verdict:?} although its proto's words changed"
                );
            }
            match verdict {
                Verdict::Wrong => {
                    pair.wrong.push(name.clone());
                    silent.insert((new_name.clone(), name.clone()));
                }
                Verdict::Reworded => {
                    pair.right += 1;
                    pair.reworded.push(name.clone());
                }
                Verdict::Right => {
                    pair.right += 1;
                    pair.word_for_word += 1;
                }
            }
        }
        rows.push((format!("{old_name} → {new_name}"), pair));
    }

    println!("| pair | carried | right | of which word for word | wrong | not carried |");
    println!("|---|---:|---:|---:|---|---:|");
    let mut total = Pair::default();
    for (name, p) in &rows {
        let wrong = if p.wrong.is_empty() { "0".to_owned() } else { p.wrong.join(", ") };
        let reworded = if p.reworded.is_empty() {
            String::new()
        } else {
            format!(" (reworded: {})", p.reworded.join(", "))
        };
        println!(
            "| {name} | {} | {} | {}{reworded} | {wrong} | {} |",
            p.carried, p.right, p.word_for_word, p.not_carried
        );
        total.carried += p.carried;
        total.right += p.right;
        total.word_for_word += p.word_for_word;
        total.wrong.extend(p.wrong.iter().cloned());
        total.not_carried += p.not_carried;
    }
    println!(
        "| all | {} | {} | {} | {} | {} |",
        total.carried,
        total.right,
        total.word_for_word,
        total.wrong.len(),
        total.not_carried
    );

    // The ceiling, and wrong only where the proto shows no change: the five.
    assert!(total.right >= 285, "{} right of {}", total.right, total.carried);
    let expected: BTreeSet<(String, String)> =
        PROTO_SILENT.iter().map(|(r, m)| ((*r).to_owned(), (*m).to_owned())).collect();
    assert_eq!(silent, expected);
}

/// The RPCs whose schema is unchanged, from `protoc`'s descriptor sets alone: the method's
/// request and response type names relative to the package, streaming and options (encoded,
/// extensions included), and the request's and response's fields (name, number, type, label,
/// oneof, proto3 `optional` and options, encoded).
fn unchanged_by_descriptors(old: &[u8], new: &[u8]) -> BTreeSet<String> {
    use prost_reflect::{Cardinality, DescriptorPool, Kind, MessageDescriptor};
    let pool = |bytes: &[u8]| DescriptorPool::decode(bytes).expect("protoc's descriptor set");
    let (old, new) = (pool(old), pool(new));
    let package = |p: &DescriptorPool| {
        p.files().find(|f| f.name() == "csi.proto").expect("csi.proto").package_name().to_owned()
    };
    let (old_package, new_package) = (package(&old), package(&new));
    let relative = |package: &str, full: &str| {
        full.strip_prefix(package).and_then(|r| r.strip_prefix('.')).unwrap_or(full).to_owned()
    };
    let fields = |package: &str, m: &MessageDescriptor| {
        m.fields()
            .map(|f| {
                let ty = match f.kind() {
                    Kind::Message(m) => relative(package, m.full_name()),
                    Kind::Enum(e) => relative(package, e.full_name()),
                    other => format!("{other:?}"),
                };
                (
                    f.name().to_owned(),
                    f.number(),
                    ty,
                    f.cardinality() == Cardinality::Repeated,
                    f.containing_oneof().map(|o| o.name().to_owned()),
                    f.field_descriptor_proto().proto3_optional(),
                    prost::Message::encode_to_vec(&f.options()),
                )
            })
            .collect::<Vec<_>>()
    };
    let mut out = BTreeSet::new();
    for service in new.services() {
        let Some(old_service) = old.get_service_by_name(&format!(
            "{old_package}.{}",
            relative(&new_package, service.full_name())
        )) else {
            continue;
        };
        for m in service.methods() {
            let Some(o) = old_service.methods().find(|o| o.name() == m.name()) else { continue };
            let same = relative(&old_package, o.input().full_name())
                == relative(&new_package, m.input().full_name())
                && relative(&old_package, o.output().full_name())
                    == relative(&new_package, m.output().full_name())
                && o.is_client_streaming() == m.is_client_streaming()
                && o.is_server_streaming() == m.is_server_streaming()
                && prost::Message::encode_to_vec(&o.options())
                    == prost::Message::encode_to_vec(&m.options())
                && fields(&old_package, &o.input()) == fields(&new_package, &m.input())
                && fields(&old_package, &o.output()) == fields(&new_package, &m.output());
            if same {
                out.insert(m.name().to_owned());
            }
        }
    }
    out
}

#[test]
fn the_rpcs_carried_are_those_protoc_says_kept_their_schema() {
    let Some(root) = common::corpus() else { return };
    let Some(protoc) = common::protoc() else { return };
    let corpus = Corpus::read(&root).expect("corpus");
    // Every consecutive pair from v1.0.0, the proto-only v1.13.0 included.
    let releases: Vec<_> = corpus.releases_from("v1.0.0").collect();
    let sets: Vec<Vec<u8>> = releases
        .iter()
        .map(|r| common::protoc_descriptor_bytes(&protoc, &[&r.dir], "csi.proto"))
        .collect();
    let mut counts = Vec::new();
    for i in 1..releases.len() {
        let old = full(&releases[i - 1].dir);
        let mut new = proto_alone(&releases[i].dir);
        let report = carry_facts(&mut new, &old, &releases[i - 1].name).expect("carries");
        let carried: BTreeSet<String> = report.carried.into_iter().collect();
        let want = unchanged_by_descriptors(&sets[i - 1], &sets[i]);
        assert_eq!(carried, want, "{}: the carry and protoc disagree", releases[i].name);
        counts.push(want.len());
    }
    println!("RPCs with an unchanged schema, pair by pair: {counts:?}");
    assert!(counts.len() >= 13, "{counts:?}");
}

/// The corpus's proto-only v1.13.0 carries from v1.12.0 by default, says so once with the counts,
/// and marks each carried fact; `Carry::None` reads it alone; a changed or new RPC gets only what
/// its proto states.
#[test]
fn the_corpus_carries_a_proto_only_release_by_default() {
    let Some(root) = common::corpus() else { return };
    let corpus = Corpus::read(&root).expect("corpus");
    let Some(release) = corpus.releases.iter().rev().find(|r| r.form == Form::ProtoOnly) else {
        csikit_spec::skip_missing("a proto-only release in the corpus");
        return;
    };
    let from = corpus.carry_source(release).expect("an older release with spec.md");
    let loaded = csikit_spec::load_source(&release.dir, &LoadOptions::default());
    assert!(!loaded.diagnostics.has_errors(), "{}", loaded.diagnostics);
    let carry_notices: Vec<_> =
        loaded.diagnostics.0.iter().filter(|d| is_carry_notice(d)).collect();
    assert_eq!(carry_notices.len(), 1, "{}", loaded.diagnostics);
    assert_eq!(loaded.diagnostics.0.iter().filter(|d| is_source_notice(d)).count(), 1);
    let model = loaded.model.expect("model");
    assert_eq!(model.source.kind, SourceKind::Proto);
    let carried = model.source.carried.as_ref().expect("carried");
    assert_eq!(carried.from, from.name);
    assert_eq!(carried.parts, NotAvailable::PROSE);
    // The source still does not state them: the carry stands in.
    assert_eq!(model.source.not_available, carried.parts);

    let old = full(&from.dir);
    let methods: Vec<&Method> = model.services.iter().flat_map(|s| &s.methods).collect();
    let n_carried = methods.iter().filter(|m| m.carried_from.is_some()).count();
    assert!(
        carry_notices[0].message.contains(&format!("{n_carried} of its {} RPCs", methods.len())),
        "{}",
        carry_notices[0].message
    );
    for m in &methods {
        match (&m.carried_from, old.method(&m.name)) {
            (Some(f), Some((_, o))) => {
                assert_eq!(f, &from.name);
                assert_eq!(table(&m.errors), table(&o.errors), "{}", m.name);
                assert_eq!(m.section, o.section, "{}", m.name);
                assert!(model.states_errors(m) && model.states_obligation(m));
            }
            (Some(_), None) => panic!("{} carried from a release without it", m.name),
            (None, _) => {
                // Only what the proto states: no table, no section, no prose obligation.
                assert!(m.errors.is_empty() && m.section.is_none(), "{}", m.name);
                assert!(m.obligation.as_ref().is_none_or(|o| o.from_comment), "{}", m.name);
                assert!(!model.states_errors(m), "{}", m.name);
            }
        }
    }
    assert!(n_carried > 0 && n_carried < methods.len(), "{n_carried}");
    assert_eq!(table(&model.general_errors), table(&old.general_errors));
    assert_eq!(model.sections.len(), old.sections.len());
    // Carried rows point into the carried markdown, whose prose is there for the docs.
    let md = &model.files[carried.markdown];
    // The carry finds the older release through the release's canonical folder, so a corpus
    // reached through a symlink (`../shared` beside a clone) names it by its real path.
    let real = |name: &str| std::fs::canonicalize(name).expect("the spec.md read");
    assert_eq!(real(md.name()), real(old.files[0].name()));
    let (_, create) = model.method("CreateVolume").expect("CreateVolume");
    assert!(create.errors.iter().all(|r| r.span.file == carried.markdown));
    let anchor = create.section.as_deref().expect("a carried section");
    assert!(model.section_prose(anchor).is_none(), "its own prose: none");
    let (prose, said) = model.carried_section_prose(anchor).expect("the carried prose");
    assert_eq!((said, prose), (from.name.as_str(), old.section_prose(anchor).expect("old")));

    // The JSON says it: on the source and on each carried method.
    let json: serde_json::Value = serde_json::from_str(&model.to_json()).expect("json");
    assert_eq!(json["source"]["carried_from"], from.name.as_str());
    assert_eq!(json["source"]["carried"][0], "errors");
    let json_carried = json["services"]
        .as_array()
        .expect("services")
        .iter()
        .flat_map(|s| s["methods"].as_array().expect("methods"))
        .filter(|m| m["carried_from"] == from.name.as_str())
        .count();
    assert_eq!(json_carried, n_carried);

    // The strict view: nothing carried.
    let alone = csikit_spec::load_source(&release.dir, &strict()).model.expect("model");
    assert!(alone.source.carried.is_none());
    assert!(alone.services.iter().flat_map(|s| &s.methods).all(|m| m.carried_from.is_none()
        && m.errors.is_empty()
        && m.obligation.as_ref().is_none_or(|o| o.from_comment)));
    // A full release carries nothing by default, and refuses an explicit carry.
    let full_release = csikit_spec::load_source(&from.dir, &LoadOptions::default());
    assert!(full_release.model.expect("model").source.carried.is_none());
    let refused = csikit_spec::load_source(
        &from.dir,
        &LoadOptions { carry: Carry::From(from.dir.clone()), ..LoadOptions::default() },
    );
    assert!(refused.model.is_none() && refused.diagnostics.has_errors());
    assert!(refused.diagnostics.0[0].message.contains("has its own spec markdown"));
}

/// A carry source that is not a spec folder with markdown is an error with no model, and a
/// model cannot be carried into twice.
#[test]
fn a_carry_needs_a_spec_folder_and_happens_once() {
    let Some(root) = common::corpus() else { return };
    let v12 = root.join("csi-spec/v1.12.0");
    let v11 = root.join("csi-spec/v1.11.0");
    let tmp = tempfile::tempdir().expect("tempdir");
    let only_proto = tmp.path().join("v1.11.0");
    std::fs::create_dir_all(&only_proto).expect("mkdir");
    std::fs::copy(v11.join("csi.proto"), only_proto.join("csi.proto")).expect("copy");
    for bad in [only_proto.clone(), tmp.path().join("missing")] {
        let loaded = csikit_spec::load_source(
            &v12.join("csi.proto"),
            &LoadOptions { carry: Carry::From(bad.clone()), ..LoadOptions::default() },
        );
        assert!(loaded.model.is_none(), "{}", bad.display());
        let first = loaded.diagnostics.0.iter().find(|d| d.is_error()).expect("an error");
        assert!(first.message.contains("cannot carry facts from"), "{}", first.message);
    }
    let old = full(&v11);
    let mut new = proto_alone(&v12);
    carry_facts(&mut new, &old, "v1.11.0").expect("carries once");
    assert!(carry_facts(&mut new, &old, "v1.11.0").is_err());
    let mut into_full = full(&v12);
    assert!(carry_facts(&mut into_full, &old, "v1.11.0").is_err());
    let mut new = proto_alone(&v12);
    assert!(carry_facts(&mut new, &proto_alone(&v11), "v1.11.0").is_err());
    // Another spec's prose: a csi-addons package (one has an Identity service too) is not an
    // older CSI release.
    for addon in common::addons(&root) {
        let refused = carry_facts(&mut new, &full(&addon.main.dir), &addon.name);
        assert!(refused.is_err_and(|d| d.message.contains("not an older release of 'csi.v1'")));
    }
    assert!(
        new.source.carried.is_none()
            && new.services.iter().flat_map(|s| &s.methods).all(|m| m.carried_from.is_none())
    );
}

/// "When the real spec.md arrives, `xtask diff` between the two Models shows what the carry got
/// wrong": for every pair, the diff of the carried Model against the real one reports exactly
/// the RPCs the measurement counts wrong (error rows, obligation or section) and reworded
/// (`error_text`), and nothing else about RPCs.
#[test]
fn the_diff_of_a_carried_model_and_the_real_one_shows_what_the_carry_got_wrong() {
    let Some(root) = common::corpus() else { return };
    let releases = full_releases(&root);
    let models: Vec<Model> = releases.iter().map(|(_, dir)| full(dir)).collect();
    let mut wrong_seen = 0;
    for i in 1..releases.len() {
        let (old_name, new_name) = (&releases[i - 1].0, &releases[i].0);
        let real = &models[i];
        let mut carried = proto_alone(&releases[i].1);
        carry_facts(&mut carried, &models[i - 1], old_name).expect("carries");
        let report = csikit_spec::diff::diff(&carried, real, "carried", new_name);
        let rpc_of = |path: &str| path.rsplit('.').next().unwrap_or_default().to_owned();
        let found = |elements: &[&str]| -> BTreeSet<String> {
            report
                .findings
                .iter()
                .filter(|f| elements.contains(&f.element))
                .map(|f| rpc_of(&f.path))
                .collect()
        };
        let mut wrong = BTreeSet::new();
        let mut reworded = BTreeSet::new();
        for m in
            carried.services.iter().flat_map(|s| &s.methods).filter(|m| m.carried_from.is_some())
        {
            let (_, want) = real.method(&m.name).expect("real RPC");
            match verdict(m, want) {
                Verdict::Wrong => wrong.insert(m.name.clone()),
                Verdict::Reworded => reworded.insert(m.name.clone()),
                Verdict::Right => false,
            };
        }
        wrong_seen += wrong.len();
        assert_eq!(found(&["error_row", "obligation", "section"]), wrong, "{new_name}");
        let texts = found(&["error_text"]);
        assert!(reworded.is_subset(&texts), "{new_name}: {reworded:?} not in {texts:?}");
        assert!(texts.iter().all(|t| reworded.contains(t) || wrong.contains(t)), "{new_name}");
        // Nothing else is reported of the carried RPCs' prose, and the rest is not comparable.
        let errors = report.not_comparable.iter().find(|n| n.what == NotAvailable::Errors);
        let errors = errors.expect("errors not comparable beyond the carry");
        assert_eq!(errors.carried_from.as_deref(), Some(old_name.as_str()));
        let uncarried_rows: usize = real
            .services
            .iter()
            .flat_map(|s| &s.methods)
            .filter(|m| carried.method(&m.name).is_none_or(|(_, c)| c.carried_from.is_none()))
            .map(|m| m.errors.len())
            .sum();
        assert_eq!(errors.items, uncarried_rows, "{new_name}");
    }
    assert_eq!(wrong_seen, PROTO_SILENT.len());
}

/// A release carried from its predecessor and that predecessor compare as before: the carried
/// facts are the old ones, so the diff has no error-row, obligation or section finding.
#[test]
fn a_carried_release_diffed_with_its_source_adds_no_prose_findings() {
    let Some(root) = common::corpus() else { return };
    let releases = full_releases(&root);
    for pair in releases.windows(2) {
        let old = full(&pair[0].1);
        let mut carried = proto_alone(&pair[1].1);
        carry_facts(&mut carried, &old, &pair[0].0).expect("carries");
        let report = csikit_spec::diff::diff(&old, &carried, &pair[0].0, &pair[1].0);
        let prose: Vec<_> = report
            .findings
            .iter()
            .filter(|f| ["error_row", "error_text", "section", "obligation"].contains(&f.element))
            .collect();
        assert!(prose.is_empty(), "{}: {prose:#?}", pair[1].0);
    }
}

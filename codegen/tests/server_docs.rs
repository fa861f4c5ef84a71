//! Every generated server-trait method carries its docs, read against the Model (not a hand
//! list): the spec's section prose where the source has it (the obligation sentence is in it),
//! what obliges a plugin to implement the RPC, the serialisation key, the REQUIRED request
//! fields the skeleton checks, and the error enum to answer with. Checked on the committed
//! `csikit` crate (v1.13.0 with v1.12.0's prose carried, and the csi-addons packages, which `cargo xtask generate --check`
//! keeps fresh) and on csikit-build's output for a `.proto` alone, whose docs must say the prose
//! is not in the source.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use csikit_codegen::{Gate, Package, Parts};
use csikit_spec::{
    CSI_GO_IMPORT, FieldType, ImportMap, Label, LoadOptions, Method, Model, Presence, SourceFile,
};

/// The docs of each method of each `pub trait` in a server module: trait name → method → text.
fn trait_method_docs(src: &str) -> HashMap<String, HashMap<String, String>> {
    let mut out: HashMap<String, HashMap<String, String>> = HashMap::new();
    let mut current: Option<String> = None;
    let mut doc: Vec<&str> = Vec::new();
    for line in src.lines() {
        let trimmed = line.trim_start();
        if let Some(name) = trimmed.strip_prefix("pub trait ") {
            current = name.split([':', ' ']).next().map(str::to_owned);
            doc.clear();
            continue;
        }
        if trimmed == "}" && line.len() - trimmed.len() <= 4 && !line.starts_with("    ") {
            current = None;
        }
        let Some(t) = &current else { continue };
        if let Some(text) = trimmed.strip_prefix("///") {
            doc.push(text.strip_prefix(' ').unwrap_or(text));
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("fn ") {
            let name = rest.split('(').next().unwrap_or("").to_owned();
            out.entry(t.clone()).or_default().insert(name, doc.join("\n"));
        }
        doc.clear();
    }
    out
}

fn snake(name: &str) -> String {
    heck::ToSnakeCase::to_snake_case(name)
}

/// The part of `doc` under the heading `# name`, up to the next heading.
fn part<'a>(doc: &'a str, name: &str) -> &'a str {
    let start =
        doc.find(&format!("# {name}\n")).unwrap_or_else(|| panic!("no '# {name}' in:\n{doc}"));
    let rest = &doc[start + name.len() + 3..];
    let end = rest.find("\n# ").unwrap_or(rest.len());
    &rest[..end]
}

/// Checks the docs of every method of `model` in the server module `src`.
fn check(model: &Model, src: &str, prose_available: bool) -> usize {
    let docs = trait_method_docs(src);
    let mut checked = 0;
    for s in &model.services {
        let methods =
            docs.get(&s.name).unwrap_or_else(|| panic!("no trait {} in the server module", s.name));
        for m in s.methods.iter().filter(|m| !m.client_streaming) {
            let doc =
                methods.get(&snake(&m.name)).unwrap_or_else(|| panic!("no method for {}", m.name));
            assert!(
                doc.starts_with(&format!("The `{}` RPC", m.name)),
                "{}: the docs are missing or do not name the RPC:\n{doc}",
                m.name
            );
            check_spec_text(model, m, part(doc, "The spec"), prose_available);
            check_obligation(model, m, part(doc, "Who must implement it"));
            check_checks(model, m, part(doc, "Checked before it runs"));
            let errors = part(doc, "Errors");
            let link = format!("[`{0}Error`](super::errors::{0}Error)", m.name);
            assert!(errors.contains(&link), "{}: no link to its error enum:\n{errors}", m.name);
            checked += 1;
        }
    }
    checked
}

fn check_spec_text(model: &Model, m: &Method, text: &str, prose_available: bool) {
    if !prose_available {
        assert!(
            text.contains("the spec's prose for this RPC is not in this source"),
            "{}: a proto-only source must say the prose is not in it:\n{text}",
            m.name
        );
        assert!(!text.contains("From the section"), "{}: prose borrowed:\n{text}", m.name);
        return;
    }
    // A release read from its proto with an older release's prose carried: an RPC unchanged since
    // has that release's section, saying where it is from; a new or changed one has none.
    if let Some(carried) = &model.source.carried
        && m.carried_from.is_none()
    {
        assert!(
            text.contains("the spec's prose for this RPC is not in this source")
                && text.contains(&format!("new or changed since {}", carried.from)),
            "{}: a new or changed RPC must say no prose is carried for it:\n{text}",
            m.name
        );
        assert!(!text.contains("From the section"), "{}: prose borrowed:\n{text}", m.name);
        return;
    }
    match &m.section {
        Some(anchor) => {
            let title =
                &model.sections.iter().find(|s| &s.anchor == anchor).expect("section").title;
            let from = match &m.carried_from {
                Some(from) => format!("From the section \"{title}\" of {from}'s spec.md, carried"),
                None => format!("From the section \"{title}\""),
            };
            assert!(text.contains(&from), "{}: not the section's prose:\n{text}", m.name);
            // The obligation was read from a sentence of this section: the prose holds it. One
            // stated for the whole service is said in "Who must implement it" with its line.
            if m.obligation.as_ref().is_some_and(|o| !o.service_wide) {
                let named = format!("MUST implement this `{}` RPC call", m.name);
                assert!(
                    text.contains("MUST implement this RPC call") || text.contains(&named),
                    "{}: the section's obligation sentence is missing:\n{text}",
                    m.name
                );
            }
            assert!(!text.contains("```protobuf"), "{}: a protobuf block was kept", m.name);
        }
        None => {
            assert!(text.contains("from the proto's comment"), "{}:\n{text}", m.name);
            let first = m.comment.lines().map(str::trim).find(|l| !l.is_empty());
            if let Some(first) = first {
                let plain = text.replace('\\', "");
                assert!(plain.contains(first), "{}: the comment is missing:\n{text}", m.name);
            }
        }
    }
}

fn check_obligation(model: &Model, m: &Method, text: &str) {
    match &m.obligation {
        Some(o) => {
            assert!(text.contains("MUST implement it"), "{}:\n{text}", m.name);
            assert!(!text.contains("No obligation"), "{}:\n{text}", m.name);
            for c in &o.if_any {
                assert!(
                    text.contains(&format!("`{}`", c.name)),
                    "{}: the obliging capability {} is not named:\n{text}",
                    m.name,
                    c.name
                );
            }
            if o.service_wide {
                // The service's line, quoted as the spec writes it.
                let quoted = text.split('"').nth(3).unwrap_or_default();
                assert!(quoted.contains("MUST implement this sets of RPCs"), "{}:\n{text}", m.name);
                assert!(
                    model.files.iter().any(|f| f.text().contains(quoted)),
                    "{}: the quoted line is not the spec's:\n{text}",
                    m.name
                );
            }
            if o.if_any.is_empty() {
                assert!(text.contains("Every "), "{}:\n{text}", m.name);
                assert!(!text.contains(" if it has "), "{}:\n{text}", m.name);
            }
            // No capability of the release other than the obliging ones is named as a condition.
            let sentence = text.trim_start().lines().next().unwrap_or("");
            for e in model.enums.iter().filter(|e| e.full_name.ends_with("Capability.RPC.Type")) {
                for v in &e.values {
                    let named = sentence.contains(&format!("`{}`", v.name));
                    let obliging = o.if_any.iter().any(|c| c.name == v.name);
                    assert!(!named || obliging, "{}: wrongly names {}:\n{text}", m.name, v.name);
                }
            }
        }
        None if model.states_obligation(m) => {
            assert!(text.contains("No obligation: optional"), "{}:\n{text}", m.name);
        }
        None => assert!(text.contains("Not known from this source"), "{}:\n{text}", m.name),
    }
    // Whose word it is, where not this release's own prose.
    match (&m.carried_from, m.obligation.as_ref().is_some_and(|o| o.from_comment)) {
        (_, true) => {
            assert!(text.contains("This is the proto's comment"), "{}:\n{text}", m.name);
        }
        (Some(from), false) => assert!(
            text.contains(&format!("Carried from {from}'s spec.md")),
            "{}: the carried obligation does not say so:\n{text}",
            m.name
        ),
        (None, false) => assert!(!text.contains("Carried from"), "{}:\n{text}", m.name),
    }
}

fn check_checks(model: &Model, m: &Method, text: &str) {
    match model.serialisation_key(m) {
        Some(key) => assert!(
            text.contains(&format!("**Serialised per {}** on `{}`", key.kind, key.field)),
            "{}: not the Model's serialisation key ({} on {}):\n{text}",
            m.name,
            key.kind,
            key.field
        ),
        None => assert!(text.contains("**Not serialised**"), "{}:\n{text}", m.name),
    }
    // Every top-level REQUIRED field the validator can check is listed as checked.
    let input = model.message(&m.input).expect("request type");
    let required_line = text.lines().find(|l| l.trim_start().starts_with("- REQUIRED:"));
    for f in &input.fields {
        let checkable = f.label != Label::Singular
            || f.ty.is_scalar("string")
            || f.ty.is_scalar("bytes")
            || matches!(f.ty, FieldType::Message(_) | FieldType::Enum(_));
        if f.presence == Presence::Required && f.oneof.is_none() && checkable {
            let listed = required_line.is_some_and(|l| l.contains(&format!("`{}`", f.name)));
            assert!(listed, "{}: REQUIRED `{}` is not listed as checked:\n{text}", m.name, f.name);
        }
    }
    if input.fields.iter().any(|f| f.secret) {
        assert!(text.contains("**Secrets**"), "{}: secrets not said to be scrubbed", m.name);
    }
    if m.alpha {
        assert!(text.contains("**Alpha**"), "{}: alpha policy not said", m.name);
    }
    assert!(text.contains("**Response checked** in debug builds"), "{}", m.name);
}

fn generated(path: &str) -> String {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../generated/src").join(path);
    std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("reading {}: {e}", file.display()))
}

fn csi_release_dir(corpus: &Path) -> PathBuf {
    corpus.join("csi-spec").join(csikit::SPEC_RELEASE)
}

#[test]
fn csi_v1_methods_carry_their_docs() {
    let Some(corpus) = csikit_spec::corpus_or_skip() else { return };
    let dir = csi_release_dir(&corpus);
    let model = csikit_spec::load_source(&dir, &LoadOptions::default()).model.expect("model");
    let checked = check(&model, &generated("v1/server.rs"), true);
    let rpcs = model.services.iter().map(|s| s.methods.len()).sum::<usize>();
    assert_eq!(checked, rpcs);
}

#[test]
fn addon_methods_carry_their_docs() {
    let Some(corpus) = csikit_spec::corpus_or_skip() else { return };
    let csi_proto = csi_release_dir(&corpus).join("csi.proto");
    let text = std::fs::read_to_string(&csi_proto).expect("csi.proto");
    for name in ["identity", "reclaimspace", "replication", "volumegroup"] {
        let mut imports = ImportMap::new();
        imports
            .insert(CSI_GO_IMPORT, SourceFile::new(csi_proto.display().to_string(), text.clone()));
        let options = LoadOptions { imports, ..LoadOptions::default() };
        let loaded = csikit_spec::load_dir(&corpus.join("csi-addons").join(name), &options);
        let model = loaded.model.expect("model");
        let checked = check(&model, &generated(&format!("addons/{name}/server.rs")), true);
        assert!(checked > 0, "{name}");
    }
}

#[test]
fn a_proto_alone_says_its_prose_is_missing() {
    let Some(corpus) = csikit_spec::corpus_or_skip() else { return };
    let proto = csi_release_dir(&corpus).join("csi.proto");
    let loaded = csikit_spec::load_source(&proto, &LoadOptions::default());
    let (model, compiled) = (loaded.model.expect("model"), loaded.compiled.expect("compiled"));
    let package = Package {
        model: &model,
        descriptor_set: &compiled.encoded,
        proto_file: &compiled.name,
        module: model.package.clone(),
        source: "csi.proto".to_owned(),
        extern_paths: Vec::new(),
        translation: None,
        feature: None,
    };
    let parts = Parts {
        types: true,
        validation: true,
        facts: true,
        errors: true,
        server: Gate::On,
        client: Gate::Off,
        reflect: Gate::Off,
    };
    let file = csikit_codegen::package_file(&package, &parts, "test").expect("generated");
    let server = &file[file.find("mod server {").expect("server module")..];
    let checked = check(&model, server, false);
    assert_eq!(checked, model.services.iter().map(|s| s.methods.len()).sum::<usize>());
}

//! The spec-facts table of a package as `static` data: [`csikit_spec::Model::facts`] printed,
//! so a generated table and a spec read at run time hold the same facts.

use std::fmt::Write as _;

use csikit_spec::Model;
use csikit_spec::facts::{FieldFacts, KeyFacts, Label, PackageFacts, Presence, SizeLimit};

/// The body of `<package>/facts.rs`.
pub fn generate_facts(model: &Model, release: &str) -> String {
    print_facts(&model.facts(release))
}

/// `facts` as the items of a facts module: `pub static FACTS: PackageFacts`.
pub fn print_facts(facts: &PackageFacts) -> String {
    let mut out = String::new();
    let oneof =
        if facts.messages.iter().any(|m| !m.oneofs.is_empty()) { "OneofFacts, " } else { "" };
    let key = if facts.methods.iter().any(|m| m.key.is_some()) { "KeyFacts, " } else { "" };
    let _ = writeln!(out, "use ::std::borrow::Cow::Borrowed;\n");
    let _ = writeln!(
        out,
        "use ::csikit::facts::{{FieldFacts, {key}Label, MessageFacts, MethodFacts, {oneof}PackageFacts, Presence, SizeLimit}};\n"
    );
    let _ = writeln!(out, "/// The facts of `{}` as stated by {}.", facts.package, facts.release);
    let _ = writeln!(out, "pub static FACTS: PackageFacts = PackageFacts {{");
    let _ = writeln!(out, "    package: Borrowed({:?}),", &*facts.package);
    let _ = writeln!(out, "    release: Borrowed({:?}),", &*facts.release);
    let _ = writeln!(out, "    messages: Borrowed(MESSAGES),");
    let _ = writeln!(out, "    methods: Borrowed(METHODS),");
    let _ = writeln!(out, "}};\n");
    let _ = writeln!(out, "static MESSAGES: &[MessageFacts] = &[");
    for m in facts.messages.iter() {
        let _ = writeln!(out, "    MessageFacts {{");
        let _ = writeln!(out, "        full_name: Borrowed({:?}),", &*m.full_name);
        let _ = writeln!(out, "        alpha: {},", m.alpha);
        let _ = writeln!(out, "        fields: Borrowed(&[");
        for f in m.fields.iter() {
            let _ = writeln!(out, "            {},", field(f));
        }
        let _ = writeln!(out, "        ]),");
        let _ = writeln!(out, "        oneofs: Borrowed(&[");
        for o in m.oneofs.iter() {
            let _ = writeln!(
                out,
                "            OneofFacts {{ name: Borrowed({:?}), required: {} }},",
                &*o.name, o.required
            );
        }
        let _ = writeln!(out, "        ]),");
        let _ = writeln!(out, "    }},");
    }
    let _ = writeln!(out, "];\n");
    let _ = writeln!(out, "static METHODS: &[MethodFacts] = &[");
    for m in facts.methods.iter() {
        let _ = writeln!(
            out,
            "    MethodFacts {{ service: Borrowed({:?}), name: Borrowed({:?}), path: Borrowed({:?}), input: Borrowed({:?}), output: Borrowed({:?}), alpha: {}, key: {} }},",
            &*m.service,
            &*m.name,
            &*m.path,
            &*m.input,
            &*m.output,
            m.alpha,
            key_facts(m.key.as_ref()),
        );
    }
    let _ = writeln!(out, "];");
    out
}

fn field(f: &FieldFacts) -> String {
    let presence = match f.presence {
        Presence::Required => "Required",
        Presence::Optional => "Optional",
        Presence::Unspecified => "Unspecified",
        Presence::Unknown => "Unknown",
    };
    let label = match f.label {
        Label::Singular => "Singular",
        Label::Repeated => "Repeated",
        Label::Map => "Map",
    };
    let size = match f.size_limit {
        SizeLimit::None => "None".to_owned(),
        SizeLimit::General { bytes } => format!("General {{ bytes: {bytes} }}"),
        SizeLimit::Max { bytes } => format!("Max {{ bytes: {bytes} }}"),
        SizeLimit::MaxTotal { bytes } => format!("MaxTotal {{ bytes: {bytes} }}"),
        SizeLimit::AtLeast { bytes } => format!("AtLeast {{ bytes: {bytes} }}"),
    };
    let oneof = match &f.oneof {
        Some(o) => format!("Some(Borrowed({:?}))", &**o),
        None => "None".to_owned(),
    };
    format!(
        "FieldFacts {{ name: Borrowed({:?}), number: {}, type_name: Borrowed({:?}), label: Label::{label}, oneof: {oneof}, presence: Presence::{presence}, secret: {}, alpha: {}, size_limit: SizeLimit::{size}, non_negative: {}, no_control_chars: {}, plugin_generated: {} }}",
        &*f.name,
        f.number,
        &*f.type_name,
        f.secret,
        f.alpha,
        f.non_negative,
        f.no_control_chars,
        f.plugin_generated
    )
}

fn key_facts(key: Option<&KeyFacts>) -> String {
    match key {
        Some(k) => format!(
            "Some(KeyFacts {{ kind: Borrowed({:?}), field: Borrowed({:?}), number: {} }})",
            &*k.kind, &*k.field, k.number
        ),
        None => "None".to_owned(),
    }
}

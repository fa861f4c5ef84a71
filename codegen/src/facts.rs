//! The spec-facts table of a package: per message, each field's presence, secret, alpha and
//! size limit, and per RPC its path and alpha flag, as `static` data for tools.

use std::fmt::Write as _;

use csikit_spec::{Label, Model, Presence, SizeLimit};

/// The body of `<package>/facts.rs`.
pub fn generate_facts(model: &Model, release: &str) -> String {
    let mut out = String::new();
    let oneof =
        if model.messages.iter().any(|m| !m.oneofs.is_empty()) { "OneofFacts, " } else { "" };
    let _ = writeln!(
        out,
        "use ::csikit::facts::{{FieldFacts, Label, MessageFacts, MethodFacts, {oneof}PackageFacts, Presence, SizeLimit}};\n"
    );
    let _ = writeln!(out, "/// The facts of `{}` as stated by {release}.", model.package);
    let _ = writeln!(out, "pub static FACTS: PackageFacts = PackageFacts {{");
    let _ = writeln!(out, "    package: {:?},", model.package);
    let _ = writeln!(out, "    release: {release:?},");
    let _ = writeln!(out, "    messages: MESSAGES,");
    let _ = writeln!(out, "    methods: METHODS,");
    let _ = writeln!(out, "}};\n");
    let _ = writeln!(out, "static MESSAGES: &[MessageFacts] = &[");
    for m in &model.messages {
        let _ = writeln!(out, "    MessageFacts {{");
        let _ = writeln!(out, "        full_name: {:?},", m.full_name);
        let _ = writeln!(out, "        alpha: {},", m.alpha);
        let _ = writeln!(out, "        fields: &[");
        for f in &m.fields {
            let presence = match f.presence {
                Presence::Required => "Required",
                Presence::Optional => "Optional",
                // The runtime's facts have no `Unknown` yet (the facts types are being unified);
                // a field whose presence is unknown is checked as one the spec says nothing of.
                Presence::Unspecified | Presence::Unknown => "Unspecified",
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
            let _ = writeln!(
                out,
                "            FieldFacts {{ name: {:?}, number: {}, type_name: {:?}, label: Label::{label}, oneof: {:?}, presence: Presence::{presence}, secret: {}, alpha: {}, size_limit: SizeLimit::{size}, non_negative: {}, no_control_chars: {} }},",
                f.name,
                f.number,
                f.ty.to_string(),
                f.oneof,
                f.secret,
                f.alpha,
                f.non_negative,
                f.no_control_chars
            );
        }
        let _ = writeln!(out, "        ],");
        let _ = writeln!(out, "        oneofs: &[");
        for o in &m.oneofs {
            let _ = writeln!(
                out,
                "            OneofFacts {{ name: {:?}, required: {} }},",
                o.name, o.required
            );
        }
        let _ = writeln!(out, "        ],");
        let _ = writeln!(out, "    }},");
    }
    let _ = writeln!(out, "];\n");
    let _ = writeln!(out, "static METHODS: &[MethodFacts] = &[");
    for s in &model.services {
        for m in &s.methods {
            let _ = writeln!(
                out,
                "    MethodFacts {{ service: {:?}, name: {:?}, path: {:?}, input: {:?}, output: {:?}, alpha: {} }},",
                s.full_name,
                m.name,
                format!("/{}/{}", s.full_name, m.name),
                m.input,
                m.output,
                m.alpha || s.alpha
            );
        }
    }
    let _ = writeln!(out, "];");
    out
}

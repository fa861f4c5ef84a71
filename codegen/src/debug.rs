//! `Debug` impls that never print a secret value: prost's derive is skipped for every message
//! holding a secret (transitively) and replaced by these, which print map keys but not values.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use csikit_spec::{Label, Message, Model};

use crate::names::{camel, relative_type_path, snake};

/// Messages with a secret field, and messages holding those, transitively.
pub fn secret_holders(model: &Model) -> BTreeSet<&str> {
    let mut holders: BTreeSet<&str> = model
        .messages
        .iter()
        .filter(|m| m.fields.iter().any(|f| f.secret))
        .map(|m| m.full_name.as_str())
        .collect();
    loop {
        let before = holders.len();
        for m in &model.messages {
            if m.fields.iter().any(|f| holders.contains(f.ty.value_name())) {
                holders.insert(&m.full_name);
            }
        }
        if holders.len() == before {
            return holders;
        }
    }
}

/// The proto paths prost-build must skip `Debug` for: every secret holder (prost also skips
/// the types nested inside each, which [`generate_debug`] therefore covers too).
pub fn skip_debug_paths(model: &Model) -> Vec<String> {
    secret_holders(model).into_iter().map(|n| format!(".{n}")).collect()
}

fn nested_in(name: &str, holders: &BTreeSet<&str>) -> bool {
    holders
        .iter()
        .any(|h| name == *h || name.strip_prefix(h).is_some_and(|rest| rest.starts_with('.')))
}

/// The `Debug` impls for one package, as the body of a child module of the package module.
pub fn generate_debug(model: &Model) -> String {
    let holders = secret_holders(model);
    let pkg = &model.package;
    let mut out = String::new();
    for m in model.messages.iter().filter(|m| nested_in(&m.full_name, &holders)) {
        let Some(path) = relative_type_path(pkg, &m.full_name) else { continue };
        message_debug(model, m, &path, &mut out);
        for o in &m.oneofs {
            oneof_debug(m, &o.name, &path, &mut out);
        }
    }
    for e in model.enums.iter().filter(|e| nested_in(&e.full_name, &holders)) {
        let Some(path) = relative_type_path(pkg, &e.full_name) else { continue };
        let _ = writeln!(
            out,
            "impl ::core::fmt::Debug for super::{path} {{\n    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {{\n        f.write_str(self.as_str_name())\n    }}\n}}\n"
        );
    }
    out
}

fn message_debug(model: &Model, m: &Message, path: &str, out: &mut String) {
    let simple = m.full_name.rsplit('.').next().unwrap_or(&m.full_name);
    let _ = writeln!(out, "impl ::core::fmt::Debug for super::{path} {{");
    let _ = writeln!(
        out,
        "    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {{"
    );
    let _ = writeln!(out, "        let mut s = f.debug_struct({simple:?});");
    let mut oneofs_done = BTreeSet::new();
    for field in &m.fields {
        if let Some(oneof) = &field.oneof {
            if oneofs_done.insert(oneof.clone()) {
                let _ = writeln!(out, "        s.field({oneof:?}, &self.{});", snake(oneof));
            }
            continue;
        }
        let ident = snake(&field.name);
        let value = if field.secret {
            match field.label {
                Label::Map => format!("&::csikit::redact::RedactedMap(&self.{ident})"),
                Label::Repeated => format!("&::csikit::redact::RedactedList(self.{ident}.len())"),
                Label::Singular => "&::csikit::redact::Redacted".to_owned(),
            }
        } else {
            match (model.enum_type(field.ty.value_name()), field.label, field.proto3_optional) {
                (Some(e), Label::Singular, false) => {
                    match relative_type_path(&model.package, &e.full_name) {
                        Some(epath) => format!(
                            "&::csikit::redact::EnumValue(self.{ident}, |v| super::{epath}::try_from(v).ok().map(|e| e.as_str_name()))"
                        ),
                        None => format!("&self.{ident}"),
                    }
                }
                _ => format!("&self.{ident}"),
            }
        };
        let _ = writeln!(out, "        s.field({:?}, {value});", field.name);
    }
    let _ = writeln!(out, "        s.finish()\n    }}\n}}\n");
}

fn oneof_debug(m: &Message, oneof: &str, msg_path: &str, out: &mut String) {
    // The oneof enum lives in the message's module: `a::b::Msg` -> `a::b::msg::Oneof`.
    let parent = msg_path.rsplit_once("::").map(|(p, _)| format!("{p}::")).unwrap_or_default();
    let module = snake(m.full_name.rsplit('.').next().unwrap_or(&m.full_name));
    let path = format!("{parent}{module}::{}", camel(oneof));
    let _ = writeln!(out, "impl ::core::fmt::Debug for super::{path} {{");
    let _ = writeln!(
        out,
        "    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {{"
    );
    let _ = writeln!(out, "        match self {{");
    for field in m.fields.iter().filter(|f| f.oneof.as_deref() == Some(oneof)) {
        let variant = camel(&field.name);
        let value = if field.secret { "&::csikit::redact::Redacted" } else { "v" };
        let binding = if field.secret { "_" } else { "v" };
        let _ = writeln!(
            out,
            "            Self::{variant}({binding}) => f.debug_tuple({variant:?}).field({value}).finish(),"
        );
    }
    let _ = writeln!(out, "        }}\n    }}\n}}\n");
}

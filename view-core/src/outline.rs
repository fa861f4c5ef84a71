//! An RPC as the schema states it, offline (`csi-view describe METHOD`): its request and response
//! and every message type under them, each field with its number, type and facts (presence,
//! alpha, secret, limits; a field an older release named, marked), who must implement it, and its
//! error tables, each obligation and table saying whose word it is (the release's prose, an older
//! release's carried, or a comment in the proto) or that the source does not state it.

use std::collections::HashSet;
use std::fmt::Write as _;

use prost_reflect::{FieldDescriptor, Kind, MessageDescriptor, MethodDescriptor};

use crate::rpcs::Table;
use crate::schema::Schema;

/// The outline of `method` as text, one line per item.
pub fn outline(schema: &Schema, method: &MethodDescriptor) -> String {
    let mut out = String::new();
    let service = method.parent_service();
    let path = crate::method::path(method);
    let alpha = schema.method_facts(&path).is_some_and(|m| m.alpha);
    let _ =
        writeln!(out, "rpc {}{}", path.trim_start_matches('/'), if alpha { "  alpha" } else { "" });
    obligation(
        &mut out,
        schema,
        service.parent_file().package_name(),
        service.name(),
        method.name(),
    );
    let mut shown = HashSet::new();
    let mut queue = vec![("request", method.input()), ("response", method.output())];
    let mut i = 0;
    while i < queue.len() {
        let (role, message) = queue[i].clone();
        i += 1;
        if !shown.insert(message.full_name().to_owned()) {
            continue;
        }
        message_lines(&mut out, schema, role, &message);
        for field in message.fields() {
            if let Kind::Message(m) = field.kind()
                && !m.is_map_entry()
                && !m.full_name().starts_with("google.protobuf.")
            {
                queue.push(("message", m));
            }
        }
    }
    errors(&mut out, schema, method);
    out
}

fn obligation(out: &mut String, schema: &Schema, package: &str, service: &str, rpc: &str) {
    let Some(all) = schema.obligations(package) else {
        let _ = writeln!(out, "  obliged: not stated by this source");
        return;
    };
    match all.iter().find(|o| o.service == service && o.rpc == rpc) {
        None => {
            let _ = writeln!(out, "  obliged: no sentence obliges it (optional)");
        }
        Some(o) if o.obligation.if_any.is_empty() => {
            let _ = writeln!(out, "  obliged: always, for a {} plugin ({})", o.service, o.stated());
        }
        Some(o) => {
            let caps: Vec<String> =
                o.obligation.if_any.iter().map(|c| format!("{} {}", c.service, c.name)).collect();
            let _ = writeln!(
                out,
                "  obliged: when the plugin advertises {} ({})",
                caps.join(" or "),
                o.stated()
            );
        }
    }
}

fn message_lines(out: &mut String, schema: &Schema, role: &str, message: &MessageDescriptor) {
    let facts = schema.message_facts(message);
    let mut head = format!("  {role} {}", message.full_name());
    if facts.is_some_and(|f| f.alpha) {
        head.push_str("  alpha");
    }
    if let Some(former) = schema.former_type(message.full_name()) {
        let _ = write!(head, "  ({former})");
    }
    let _ = writeln!(out, "{head}");
    if message.fields().len() == 0 {
        let _ = writeln!(out, "    (no fields)");
    }
    let rows: Vec<(String, String, String)> = message
        .fields()
        .map(|f| {
            let mut note = schema.field_note(&f, false);
            if let Some(o) = f.containing_oneof().filter(|o| !o.is_synthetic()) {
                let required = facts
                    .is_some_and(|m| m.oneofs.iter().any(|x| x.name == o.name() && x.required));
                if !note.is_empty() {
                    note.push_str("; ");
                }
                let _ =
                    write!(note, "oneof {}{}", o.name(), if required { " (REQUIRED)" } else { "" });
            }
            (format!("{} {}", f.name(), f.number()), type_of(&f), note)
        })
        .collect();
    let name_width = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    let type_width = rows.iter().map(|r| r.1.len()).max().unwrap_or(0);
    for (name, ty, note) in rows {
        let line = format!("    {name:<name_width$}  {ty:<type_width$}  {note}");
        let _ = writeln!(out, "{}", line.trim_end());
    }
}

/// A field's type as a proto file writes it: `repeated csi.v1.Topology`, `map<string, string>`.
fn type_of(field: &FieldDescriptor) -> String {
    let name = |k: &Kind| crate::text::kind_name(k);
    if field.is_map()
        && let Kind::Message(entry) = field.kind()
    {
        let (k, v) = (entry.map_entry_key_field(), entry.map_entry_value_field());
        return format!("map<{}, {}>", name(&k.kind()), name(&v.kind()));
    }
    let ty = name(&field.kind());
    if field.is_list() { format!("repeated {ty}") } else { ty }
}

fn errors(out: &mut String, schema: &Schema, method: &MethodDescriptor) {
    let Some(tables) = schema.error_tables(method) else {
        let _ = writeln!(out, "  errors: no error table in this source");
        return;
    };
    for (table, rows, carried_from) in tables {
        let which = match table {
            Table::Rpc => format!("{}'s error table", method.name()),
            Table::General => "the general error table".to_owned(),
        };
        let whose = carried_from
            .map_or_else(String::new, |from| format!(", carried from {from}'s spec.md"));
        if rows.is_empty() {
            let why = if table == Table::Rpc { "none stated by this source" } else { "none" };
            let _ = writeln!(out, "  errors ({which}): {why}");
            continue;
        }
        let _ = writeln!(out, "  errors ({which}{whose}):");
        for r in rows {
            let _ = writeln!(out, "    {} {}  {}", r.code_number, r.code, r.condition);
        }
    }
}

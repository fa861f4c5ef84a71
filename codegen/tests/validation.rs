//! The generated validators against the Model, over every v1.12.0 request message: a fully
//! populated valid message passes; removing each REQUIRED field (or emptying each required
//! oneof) yields exactly one violation naming it; at each size limit the boundary passes and
//! one byte more fails.
//!
//! Messages are built with prost-reflect from the descriptors the crate embeds, encoded, and
//! checked through `csikit::validate_encoded`, so decode and validation are tested together.

use std::collections::HashMap;

use csikit::{RuleId, ValidateEncodedError};
use csikit_spec::{FieldType, Label, LoadOptions, Model, Presence, SizeLimit};
use prost::Message as _;
use prost_reflect::{
    DynamicMessage, FieldDescriptor, Kind, MapKey, MessageDescriptor, ReflectMessage as _, Value,
};

fn corpus_model() -> Option<Model> {
    let dir = csikit_spec::corpus_or_skip()?.join("csi-spec/v1.12.0");
    csikit_spec::load_dir(&dir, &LoadOptions::default()).model
}

/// How many fillings to try: each sets a different variant of every oneof.
const CHOICES: usize = 3;

/// A valid value for every field: strings short and clean, enums non-zero, one variant per
/// oneof (the `choice`-th, wrapping), two elements per repeated field, one entry per map.
fn fill(desc: &MessageDescriptor, depth: usize, choice: usize) -> DynamicMessage {
    let mut msg = DynamicMessage::new(desc.clone());
    if depth > 6 {
        return msg;
    }
    for f in desc.fields() {
        if let Some(o) = f.containing_oneof() {
            let members: Vec<u32> = o.fields().map(|m| m.number()).collect();
            if members[choice % members.len()] != f.number() {
                continue;
            }
        }
        msg.set_field(&f, field_value(&f, depth, choice));
    }
    msg
}

fn single_value(f: &FieldDescriptor, kind: &Kind, depth: usize, choice: usize) -> Value {
    match kind {
        Kind::String => Value::String(format!("{}-1", f.name())),
        Kind::Bytes => Value::Bytes(b"x".to_vec().into()),
        Kind::Bool => Value::Bool(true),
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => Value::I32(1),
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => Value::I64(1),
        Kind::Uint32 | Kind::Fixed32 => Value::U32(1),
        Kind::Uint64 | Kind::Fixed64 => Value::U64(1),
        Kind::Float => Value::F32(1.0),
        Kind::Double => Value::F64(1.0),
        Kind::Enum(e) => {
            Value::EnumNumber(e.values().map(|v| v.number()).find(|n| *n != 0).unwrap_or(0))
        }
        Kind::Message(m) => Value::Message(fill(m, depth + 1, choice)),
    }
}

fn field_value(f: &FieldDescriptor, depth: usize, choice: usize) -> Value {
    if f.is_map() {
        let Kind::Message(entry) = f.kind() else { unreachable!("map entry") };
        let v = single_value(
            &entry.map_entry_value_field(),
            &entry.map_entry_value_field().kind(),
            depth,
            choice,
        );
        return Value::Map(HashMap::from([(MapKey::String("key.1".into()), v)]));
    }
    if f.is_list() {
        return Value::List(vec![
            single_value(f, &f.kind(), depth, choice),
            single_value(f, &f.kind(), depth, choice),
        ]);
    }
    single_value(f, &f.kind(), depth, choice)
}

/// A step into a message: a field, and for repeated fields element 0.
type Step = (String, bool);

fn at_path<'a>(msg: &'a mut DynamicMessage, path: &[Step]) -> &'a mut DynamicMessage {
    let mut cur = msg;
    for (name, list) in path {
        let v = cur.get_field_by_name_mut(name).expect("field on path");
        cur = match (v, list) {
            (Value::Message(m), false) => m,
            (Value::List(l), true) => match &mut l[0] {
                Value::Message(m) => m,
                _ => panic!("list of messages"),
            },
            _ => panic!("path step {name}"),
        };
    }
    cur
}

fn path_text(path: &[Step], last: &str) -> String {
    let mut out = String::new();
    for (name, list) in path {
        if !out.is_empty() {
            out.push('.');
        }
        out.push_str(name);
        if *list {
            out.push_str("[0]");
        }
    }
    if !out.is_empty() {
        out.push('.');
    }
    out.push_str(last);
    out
}

fn validate(full_name: &str, msg: &DynamicMessage) -> Vec<(String, RuleId)> {
    match csikit::validate_encoded(full_name, &msg.encode_to_vec()) {
        Ok(()) => Vec::new(),
        Err(ValidateEncodedError::Invalid(v)) => v.into_iter().map(|v| (v.path, v.rule)).collect(),
        Err(e) => panic!("{full_name}: {e}"),
    }
}

/// Every position reachable in a filled message, with the Model's field facts.
fn walk<'m>(
    model: &'m Model,
    msg: &DynamicMessage,
    path: Vec<Step>,
    out: &mut Vec<(Vec<Step>, &'m csikit_spec::Field, &'m csikit_spec::Message)>,
) {
    let Some(m) = model.message(msg.descriptor().full_name()) else { return };
    for f in &m.fields {
        if !msg.has_field_by_name(&f.name) {
            continue;
        }
        out.push((path.clone(), f, m));
        if let Some(Value::Message(inner)) = msg.get_field_by_name(&f.name).as_deref() {
            let mut p = path.clone();
            p.push((f.name.clone(), false));
            walk(model, inner, p, out);
        }
        if let Some(Value::List(items)) = msg.get_field_by_name(&f.name).as_deref()
            && let Some(Value::Message(inner)) = items.first()
        {
            let mut p = path.clone();
            p.push((f.name.clone(), true));
            walk(model, inner, p, out);
        }
    }
}

fn requests(model: &Model) -> Vec<&csikit_spec::Message> {
    model
        .messages
        .iter()
        .filter(|m| m.full_name.ends_with("Request") && m.full_name.matches('.').count() == 2)
        .collect()
}

#[test]
fn filled_requests_are_valid() {
    let Some(model) = corpus_model() else { return };
    let pool = csikit::v1::descriptor_pool();
    let reqs = requests(&model);
    assert!(reqs.len() >= 30, "{} request messages", reqs.len());
    for m in reqs {
        let desc = pool.get_message_by_name(&m.full_name).expect("descriptor");
        for choice in 0..CHOICES {
            let msg = fill(&desc, 0, choice);
            assert_eq!(validate(&m.full_name, &msg), [], "{} (oneof choice {choice})", m.full_name);
        }
    }
}

#[test]
fn each_missing_required_field_is_exactly_one_violation() {
    let Some(model) = corpus_model() else { return };
    let pool = csikit::v1::descriptor_pool();
    let mut checked = std::collections::BTreeSet::new();
    for (m, choice) in requests(&model).into_iter().flat_map(|m| (0..CHOICES).map(move |c| (m, c)))
    {
        let desc = pool.get_message_by_name(&m.full_name).expect("descriptor");
        let base = fill(&desc, 0, choice);
        let mut positions = Vec::new();
        walk(&model, &base, Vec::new(), &mut positions);
        for (path, f, owner) in positions {
            // proto3 cannot tell a zero bool or number from an unset one; the spec says so too
            // ("Scalar fields, even REQUIRED ones, will be defaulted").
            let scalar_number = f.label == Label::Singular
                && matches!(&f.ty, FieldType::Scalar(s) if s != "string" && s != "bytes");
            if f.presence != Presence::Required || f.oneof.is_some() || scalar_number {
                continue;
            }
            let mut msg = base.clone();
            at_path(&mut msg, &path).clear_field_by_name(&f.name);
            let expected = path_text(&path, &f.name);
            assert_eq!(
                validate(&m.full_name, &msg),
                [(expected.clone(), RuleId::Required)],
                "{}: removing '{expected}' ({}.{})",
                m.full_name,
                owner.full_name,
                f.name
            );
            checked.insert((m.full_name.clone(), expected));
        }
        // Required oneofs: empty the oneof.
        let mut positions = Vec::new();
        walk(&model, &base, Vec::new(), &mut positions);
        for (path, f, owner) in positions {
            let Some(oneof) = &f.oneof else { continue };
            if !owner.oneofs.iter().any(|o| &o.name == oneof && o.required) {
                continue;
            }
            let mut msg = base.clone();
            at_path(&mut msg, &path).clear_field_by_name(&f.name);
            let expected = path_text(&path, oneof);
            assert_eq!(
                validate(&m.full_name, &msg),
                [(expected.clone(), RuleId::Required)],
                "{}: emptying '{expected}'",
                m.full_name
            );
            checked.insert((m.full_name.clone(), expected));
        }
    }
    // Counted once per request and path; the figure is what v1.12.0 holds, so a change in
    // the model's reading of REQUIRED shows here.
    assert!(checked.len() >= 60, "only {} required positions checked", checked.len());
    eprintln!("{} required positions checked", checked.len());
}

#[test]
fn size_limits_hold_at_the_boundary() {
    let Some(model) = corpus_model() else { return };
    let pool = csikit::v1::descriptor_pool();
    let (mut strings, mut maps, mut at_least) = (0, 0, 0);
    let mut node_id_256 = false;
    for (m, choice) in requests(&model).into_iter().flat_map(|m| (0..CHOICES).map(move |c| (m, c)))
    {
        let desc = pool.get_message_by_name(&m.full_name).expect("descriptor");
        let base = fill(&desc, 0, choice);
        let mut positions = Vec::new();
        walk(&model, &base, Vec::new(), &mut positions);
        for (path, f, _) in positions {
            let name = path_text(&path, &f.name);
            let set = |msg: &mut DynamicMessage, bytes: usize| {
                let target = at_path(msg, &path);
                let value = match f.label {
                    Label::Map => {
                        // Keys plus values, as the spec counts: one 8-byte key and the rest in its value.
                        Value::Map(HashMap::from([(
                            MapKey::String("key.abc".into()),
                            Value::String("v".repeat(bytes - 7)),
                        )]))
                    }
                    Label::Repeated => Value::List(vec![Value::String("a".repeat(bytes))]),
                    Label::Singular => Value::String("a".repeat(bytes)),
                };
                target.set_field_by_name(&f.name, value);
            };
            let is_string_map = f.ty.is_string_map();
            if !f.ty.is_scalar("string") && !is_string_map {
                continue;
            }
            match f.size_limit {
                SizeLimit::General { bytes }
                | SizeLimit::Max { bytes }
                | SizeLimit::MaxTotal { bytes } => {
                    let n = bytes as usize;
                    let mut ok = base.clone();
                    set(&mut ok, n);
                    assert_eq!(
                        validate(&m.full_name, &ok),
                        [],
                        "{}: '{name}' at {n} bytes",
                        m.full_name
                    );
                    let mut over = base.clone();
                    set(&mut over, n + 1);
                    let got = validate(&m.full_name, &over);
                    let rule = if f.label == Label::Map
                        || matches!(f.size_limit, SizeLimit::MaxTotal { .. })
                    {
                        RuleId::MaxTotalBytes
                    } else {
                        RuleId::MaxBytes
                    };
                    let expected_path = if f.label == Label::Repeated && rule == RuleId::MaxBytes {
                        format!("{name}[0]")
                    } else {
                        name.clone()
                    };
                    assert_eq!(
                        got,
                        [(expected_path, rule)],
                        "{}: '{name}' at {} bytes",
                        m.full_name,
                        n + 1
                    );
                    if is_string_map {
                        maps += 1
                    } else {
                        strings += 1
                    }
                    if f.name == "node_id" && n == 256 {
                        node_id_256 = true;
                    }
                }
                SizeLimit::AtLeast { bytes } => {
                    // The receiver must accept at least this much, and the spec sets no maximum.
                    for n in [bytes as usize, 4096] {
                        let mut ok = base.clone();
                        set(&mut ok, n);
                        assert_eq!(
                            validate(&m.full_name, &ok),
                            [],
                            "{}: '{name}' at {n} bytes",
                            m.full_name
                        );
                    }
                    at_least += 1;
                }
                SizeLimit::None => {}
            }
        }
    }
    eprintln!("size limits checked: strings {strings}, maps {maps}, at-least paths {at_least}");
    assert!(
        strings >= 100 && maps >= 100 && at_least >= 27,
        "strings {strings}, maps {maps}, paths {at_least}"
    );
    assert!(node_id_256, "node_id at 256 bytes was checked");
}

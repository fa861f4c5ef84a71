//! Descriptor oracle: the model agrees with `protoc`'s descriptor set (Debian's
//! protobuf-compiler) on every message, field, number, type, label, enum and RPC.

mod common;

use std::collections::BTreeSet;

use csikit_spec::{Label, LoadOptions, Model};
use prost_types::field_descriptor_proto::{Label as PLabel, Type};
use prost_types::{DescriptorProto, FileDescriptorProto, FileDescriptorSet};

/// Lines describing a schema, one per fact, so two schemas compare as sets of lines.
fn protoc_facts(set: &FileDescriptorSet, file_name: &str) -> BTreeSet<String> {
    let file: &FileDescriptorProto =
        set.file.iter().find(|f| f.name() == file_name).expect("protoc output holds the file");
    let pkg = file.package();
    let mut out = BTreeSet::new();
    for m in &file.message_type {
        message_facts(set, pkg, m, &mut out);
    }
    for e in &file.enum_type {
        enum_facts(&format!("{pkg}.{}", e.name()), e, &mut out);
    }
    for s in &file.service {
        out.insert(format!("service {pkg}.{}", s.name()));
        for m in &s.method {
            out.insert(format!(
                "rpc {pkg}.{}.{} ({}{}) -> ({}{})",
                s.name(),
                m.name(),
                if m.client_streaming() { "stream " } else { "" },
                m.input_type().trim_start_matches('.'),
                if m.server_streaming() { "stream " } else { "" },
                m.output_type().trim_start_matches('.'),
            ));
        }
    }
    out
}

fn find_message<'a>(set: &'a FileDescriptorSet, full: &str) -> Option<&'a DescriptorProto> {
    fn walk<'a>(
        prefix: &str,
        ms: &'a [DescriptorProto],
        full: &str,
    ) -> Option<&'a DescriptorProto> {
        for m in ms {
            let name = format!("{prefix}.{}", m.name());
            if name == full {
                return Some(m);
            }
            if let Some(found) = walk(&name, &m.nested_type, full) {
                return Some(found);
            }
        }
        None
    }
    set.file.iter().find_map(|f| walk(f.package(), &f.message_type, full))
}

fn scalar(t: Type) -> &'static str {
    match t {
        Type::Double => "double",
        Type::Float => "float",
        Type::Int64 => "int64",
        Type::Uint64 => "uint64",
        Type::Int32 => "int32",
        Type::Fixed64 => "fixed64",
        Type::Fixed32 => "fixed32",
        Type::Bool => "bool",
        Type::String => "string",
        Type::Bytes => "bytes",
        Type::Uint32 => "uint32",
        Type::Sfixed32 => "sfixed32",
        Type::Sfixed64 => "sfixed64",
        Type::Sint32 => "sint32",
        Type::Sint64 => "sint64",
        Type::Group | Type::Message | Type::Enum => "",
    }
}

fn type_of(f: &prost_types::FieldDescriptorProto) -> String {
    match f.r#type() {
        Type::Message | Type::Enum | Type::Group => {
            f.type_name().trim_start_matches('.').to_owned()
        }
        t => scalar(t).to_owned(),
    }
}

fn message_facts(
    set: &FileDescriptorSet,
    prefix: &str,
    m: &DescriptorProto,
    out: &mut BTreeSet<String>,
) {
    let full = format!("{prefix}.{}", m.name());
    if m.options.as_ref().is_some_and(|o| o.map_entry()) {
        return;
    }
    out.insert(format!("message {full}"));
    for f in &m.field {
        let entry = (f.r#type() == Type::Message)
            .then(|| find_message(set, f.type_name().trim_start_matches('.')))
            .flatten()
            .filter(|e| e.options.as_ref().is_some_and(|o| o.map_entry()));
        let (label, ty) = match entry {
            Some(e) => ("map", format!("map<{}, {}>", type_of(&e.field[0]), type_of(&e.field[1]))),
            None if f.label() == PLabel::Repeated => ("repeated", type_of(f)),
            None => ("singular", type_of(f)),
        };
        let oneof = f
            .oneof_index
            .filter(|_| !f.proto3_optional())
            .map(|i| m.oneof_decl[i as usize].name().to_owned())
            .unwrap_or_default();
        out.insert(format!(
            "field {full}.{} = {} {label} {ty} oneof={oneof}",
            f.name(),
            f.number()
        ));
    }
    for e in &m.enum_type {
        enum_facts(&format!("{full}.{}", e.name()), e, out);
    }
    for n in &m.nested_type {
        message_facts(set, &full, n, out);
    }
}

fn enum_facts(full: &str, e: &prost_types::EnumDescriptorProto, out: &mut BTreeSet<String>) {
    out.insert(format!("enum {full}"));
    for v in &e.value {
        out.insert(format!("value {full}.{} = {}", v.name(), v.number()));
    }
}

/// The same facts read from the model.
fn model_facts(model: &Model) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for m in &model.messages {
        out.insert(format!("message {}", m.full_name));
        for f in &m.fields {
            let label = match f.label {
                Label::Singular => "singular",
                Label::Repeated => "repeated",
                Label::Map => "map",
            };
            out.insert(format!(
                "field {}.{} = {} {label} {} oneof={}",
                m.full_name,
                f.name,
                f.number,
                f.ty,
                f.oneof.as_deref().unwrap_or("")
            ));
        }
    }
    for e in &model.enums {
        out.insert(format!("enum {}", e.full_name));
        for v in &e.values {
            out.insert(format!("value {}.{} = {}", e.full_name, v.name, v.number));
        }
    }
    for s in &model.services {
        out.insert(format!("service {}", s.full_name));
        for m in &s.methods {
            out.insert(format!(
                "rpc {}.{} ({}{}) -> ({}{})",
                s.full_name,
                m.name,
                if m.client_streaming { "stream " } else { "" },
                m.input,
                if m.server_streaming { "stream " } else { "" },
                m.output,
            ));
        }
    }
    out
}

fn assert_same(what: &str, model: &BTreeSet<String>, protoc: &BTreeSet<String>) {
    let only_model: Vec<_> = model.difference(protoc).collect();
    let only_protoc: Vec<_> = protoc.difference(model).collect();
    assert!(
        only_model.is_empty() && only_protoc.is_empty(),
        "{what}: model and protoc disagree\nonly in model: {only_model:#?}\nonly in protoc: {only_protoc:#?}"
    );
}

#[test]
fn every_release_agrees_with_protoc() {
    let Some(corpus) = common::corpus() else { return };
    let Some(protoc) = common::protoc() else { return };
    for (tag, dir) in common::releases(&corpus) {
        let loaded = csikit_spec::load_dir(&dir, &LoadOptions::default());
        let model = loaded.model.unwrap_or_else(|| panic!("{tag}: {}", loaded.diagnostics));
        let set = common::protoc_descriptor_set(&protoc, &[&dir], "csi.proto");
        let facts = protoc_facts(&set, "csi.proto");
        assert!(facts.len() > 100, "{tag}: protoc gave {} facts", facts.len());
        assert_same(&tag, &model_facts(&model), &facts);
    }
}

#[test]
fn addons_agree_with_protoc() {
    let Some(corpus) = common::corpus() else { return };
    let Some(protoc) = common::protoc() else { return };
    // protoc resolves the csi-addons import of the CSI proto through an include folder laid
    // out like the import path.
    let tmp = std::env::temp_dir().join(format!("csikit-imports-{}", std::process::id()));
    let import = tmp.join(csikit_spec::CSI_GO_IMPORT);
    std::fs::create_dir_all(import.parent().expect("parent")).expect("mkdir");
    std::fs::copy(corpus.join("csi-spec/v1.12.0/csi.proto"), &import).expect("copy csi.proto");
    for addon in common::addons(&corpus) {
        let (name, dir) = (addon.name.as_str(), &addon.main.dir);
        let loaded = csikit_spec::load_dir(dir, &LoadOptions::default());
        let model = loaded.model.unwrap_or_else(|| panic!("{name}: {}", loaded.diagnostics));
        let file = format!("{name}.proto");
        let set = common::protoc_descriptor_set(&protoc, &[dir, &tmp], &file);
        assert_same(name, &model_facts(&model), &protoc_facts(&set, &file));
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

//! An oracle for the diff engine: the structural changes between two releases computed from
//! `protoc`'s descriptor sets alone, with none of `csikit_spec`'s code (no Model, no diff).
//!
//! Matching rules, as the engine documents them: the package is compared once; services,
//! RPCs, messages (nested ones included, map entries not) and enums match by full name relative
//! to the package, so elements are compared across a package rename; fields and enum values
//! match by number inside their message or enum, a new name at the same number being a rename,
//! and among those left unmatched on both sides, one keeping its name under a new number is a
//! `field_number` change. The fields of an added or removed message and the values of an added
//! or removed enum are not listed on their own. Types are compared relative to each side's
//! package, so a type that only moved with the package has not changed.

use std::collections::{BTreeMap, BTreeSet};

use prost_types::field_descriptor_proto::{Label, Type};
use prost_types::{DescriptorProto, EnumDescriptorProto, FieldDescriptorProto, FileDescriptorSet};

/// One structural finding: what the engine's `Finding` says in `change`, `element`, `path`
/// and `old_path`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Expected {
    /// `added`, `removed`, `renamed` or `changed`.
    pub change: &'static str,
    /// `package`, `service`, `rpc`, `message`, `field`, `enum`, `enum_value`, `field_type` or
    /// `field_number`.
    pub element: &'static str,
    /// The full name in the new release (the old one for removals).
    pub path: String,
    /// The old full name, for renames.
    pub old_path: Option<String>,
}

/// The elements this oracle speaks about.
pub const STRUCTURAL: [&str; 9] = [
    "package",
    "service",
    "rpc",
    "message",
    "field",
    "enum",
    "enum_value",
    "field_type",
    "field_number",
];

/// What one proto file declares, as the rules above compare it.
#[derive(Debug)]
pub struct Schema {
    package: String,
    services: Vec<ServiceFacts>,
    /// Every message, nested ones included, map entries left out.
    messages: Vec<MessageFacts>,
    /// Every enum, nested ones included.
    enums: Vec<EnumFacts>,
}

#[derive(Debug)]
struct ServiceFacts {
    name: String,
    full: String,
    methods: Vec<MethodFacts>,
}

#[derive(Debug, PartialEq)]
struct MethodFacts {
    name: String,
    /// Relative to the package, with the streaming flags: the RPC's signature.
    signature: (String, String, bool, bool),
}

#[derive(Debug)]
struct MessageFacts {
    full: String,
    relative: String,
    fields: Vec<Member>,
}

#[derive(Debug)]
struct EnumFacts {
    full: String,
    relative: String,
    values: Vec<Member>,
}

/// A field or an enum value.
#[derive(Debug)]
struct Member {
    name: String,
    number: i32,
    /// A field's label and type (relative to the package); `None` for enum values.
    shape: Option<(&'static str, String)>,
}

impl Schema {
    /// Reads `file_name` out of a descriptor set made with `--include_imports`.
    pub fn read(set: &FileDescriptorSet, file_name: &str) -> Schema {
        let file = set
            .file
            .iter()
            .find(|f| f.name() == file_name)
            .unwrap_or_else(|| panic!("the descriptor set holds no '{file_name}'"));
        let package = file.package().to_owned();
        let mut all = BTreeMap::new();
        for f in &set.file {
            index(f.package(), &f.message_type, &mut all);
        }
        let reader = Reader { package: &package, all: &all };
        let mut schema = Schema {
            package: package.clone(),
            services: Vec::new(),
            messages: Vec::new(),
            enums: Vec::new(),
        };
        for s in &file.service {
            schema.services.push(ServiceFacts {
                name: s.name().to_owned(),
                full: format!("{package}.{}", s.name()),
                methods: s
                    .method
                    .iter()
                    .map(|m| MethodFacts {
                        name: m.name().to_owned(),
                        signature: (
                            reader.relative(m.input_type()),
                            reader.relative(m.output_type()),
                            m.client_streaming(),
                            m.server_streaming(),
                        ),
                    })
                    .collect(),
            });
        }
        for e in &file.enum_type {
            schema.enums.push(reader.enumeration(&package, e));
        }
        for m in &file.message_type {
            reader.message(&package, m, &mut schema);
        }
        schema
    }
}

/// Every message of a file by full name, nested ones included.
fn index<'a>(
    prefix: &str,
    ms: &'a [DescriptorProto],
    out: &mut BTreeMap<String, &'a DescriptorProto>,
) {
    for m in ms {
        let full = format!("{prefix}.{}", m.name());
        index(&full, &m.nested_type, out);
        out.insert(full, m);
    }
}

struct Reader<'a> {
    package: &'a str,
    all: &'a BTreeMap<String, &'a DescriptorProto>,
}

impl Reader<'_> {
    /// `.csi.v1.Volume` → `Volume`; names outside the package stay whole.
    fn relative(&self, type_name: &str) -> String {
        let full = type_name.trim_start_matches('.');
        full.strip_prefix(self.package).and_then(|r| r.strip_prefix('.')).unwrap_or(full).to_owned()
    }

    fn map_entry(&self, f: &FieldDescriptorProto) -> Option<&DescriptorProto> {
        if f.r#type() != Type::Message {
            return None;
        }
        self.all
            .get(f.type_name().trim_start_matches('.'))
            .copied()
            .filter(|m| m.options.as_ref().is_some_and(|o| o.map_entry()))
    }

    fn type_name(&self, f: &FieldDescriptorProto) -> String {
        match f.r#type() {
            Type::Message | Type::Enum | Type::Group => self.relative(f.type_name()),
            // TYPE_STRING → string, TYPE_UINT64 → uint64, ...
            t => t.as_str_name().trim_start_matches("TYPE_").to_lowercase(),
        }
    }

    fn message(&self, prefix: &str, m: &DescriptorProto, schema: &mut Schema) {
        if m.options.as_ref().is_some_and(|o| o.map_entry()) {
            return;
        }
        let full = format!("{prefix}.{}", m.name());
        let fields = m
            .field
            .iter()
            .map(|f| {
                let shape = match self.map_entry(f) {
                    Some(entry) => {
                        let [key, value] = &entry.field[..] else {
                            panic!("map entry '{}' has two fields", entry.name())
                        };
                        ("map", format!("map<{}, {}>", self.type_name(key), self.type_name(value)))
                    }
                    None if f.label() == Label::Repeated => ("repeated", self.type_name(f)),
                    None => ("singular", self.type_name(f)),
                };
                Member { name: f.name().to_owned(), number: f.number(), shape: Some(shape) }
            })
            .collect();
        schema.messages.push(MessageFacts {
            relative: self.relative(&full),
            full: full.clone(),
            fields,
        });
        for e in &m.enum_type {
            schema.enums.push(self.enumeration(&full, e));
        }
        for n in &m.nested_type {
            self.message(&full, n, schema);
        }
    }

    fn enumeration(&self, prefix: &str, e: &EnumDescriptorProto) -> EnumFacts {
        let full = format!("{prefix}.{}", e.name());
        EnumFacts {
            relative: self.relative(&full),
            full,
            values: e
                .value
                .iter()
                .map(|v| Member { name: v.name().to_owned(), number: v.number(), shape: None })
                .collect(),
        }
    }
}

/// Every structural change from `old` to `new`.
pub fn expected(old: &Schema, new: &Schema) -> BTreeSet<Expected> {
    let mut out = Out(BTreeSet::new());
    if old.package != new.package {
        out.push("changed", "package", &new.package, None);
    }
    for s in &new.services {
        match old.services.iter().find(|o| o.name == s.name) {
            None => out.push("added", "service", &s.full, None),
            Some(o) => {
                for m in &s.methods {
                    let path = format!("{}.{}", s.full, m.name);
                    match o.methods.iter().find(|x| x.name == m.name) {
                        None => out.push("added", "rpc", &path, None),
                        Some(x) if x.signature != m.signature => {
                            out.push("changed", "rpc", &path, None)
                        }
                        Some(_) => {}
                    }
                }
                for x in &o.methods {
                    if !s.methods.iter().any(|m| m.name == x.name) {
                        out.push("removed", "rpc", &format!("{}.{}", o.full, x.name), None);
                    }
                }
            }
        }
    }
    for o in &old.services {
        if !new.services.iter().any(|s| s.name == o.name) {
            out.push("removed", "service", &o.full, None);
        }
    }
    for m in &new.messages {
        match old.messages.iter().find(|o| o.relative == m.relative) {
            None => out.push("added", "message", &m.full, None),
            Some(o) => out.members("field", &o.full, &o.fields, &m.full, &m.fields),
        }
    }
    for o in &old.messages {
        if !new.messages.iter().any(|m| m.relative == o.relative) {
            out.push("removed", "message", &o.full, None);
        }
    }
    for e in &new.enums {
        match old.enums.iter().find(|o| o.relative == e.relative) {
            None => out.push("added", "enum", &e.full, None),
            Some(o) => out.members("enum_value", &o.full, &o.values, &e.full, &e.values),
        }
    }
    for o in &old.enums {
        if !new.enums.iter().any(|e| e.relative == o.relative) {
            out.push("removed", "enum", &o.full, None);
        }
    }
    out.0
}

struct Out(BTreeSet<Expected>);

impl Out {
    fn push(
        &mut self,
        change: &'static str,
        element: &'static str,
        path: &str,
        old_path: Option<String>,
    ) {
        let e = Expected { change, element, path: path.to_owned(), old_path };
        assert!(self.0.insert(e.clone()), "the oracle found {e:?} twice");
    }

    /// Fields (or enum values) of a message (or enum) on both sides: by number first, then,
    /// among those left on both sides, by name.
    fn members(
        &mut self,
        element: &'static str,
        old_parent: &str,
        old: &[Member],
        new_parent: &str,
        new: &[Member],
    ) {
        let by_number = |ms: &[Member], n: i32| ms.iter().any(|m| m.number == n);
        let old_left: Vec<&Member> = old.iter().filter(|o| !by_number(new, o.number)).collect();
        let new_left: Vec<&Member> = new.iter().filter(|n| !by_number(old, n.number)).collect();
        for n in new {
            let path = format!("{new_parent}.{}", n.name);
            let counterpart = match old.iter().find(|o| o.number == n.number) {
                Some(o) => {
                    if o.name != n.name {
                        self.push(
                            "renamed",
                            element,
                            &path,
                            Some(format!("{old_parent}.{}", o.name)),
                        );
                    }
                    o
                }
                None => match old_left.iter().find(|o| o.name == n.name) {
                    Some(o) => {
                        self.push("changed", "field_number", &path, None);
                        o
                    }
                    None => {
                        self.push("added", element, &path, None);
                        continue;
                    }
                },
            };
            if counterpart.shape != n.shape {
                self.push("changed", "field_type", &path, None);
            }
        }
        for o in &old_left {
            if !new_left.iter().any(|n| n.name == o.name) {
                self.push("removed", element, &format!("{old_parent}.{}", o.name), None);
            }
        }
    }
}

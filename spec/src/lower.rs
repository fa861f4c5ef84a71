//! Lowers the parsed markdown and the compiled descriptors into one [`Model`].

use std::collections::HashMap;

use prost_reflect::{
    Cardinality, DynamicMessage, EnumDescriptor, FieldDescriptor, Kind, MessageDescriptor, Value,
};
use prost_types::source_code_info::Location;

use crate::comment::{self, SizeWords};
use crate::compile::Compiled;
use crate::diagnostic::{Diagnostic, Severity, SourceFile};
use crate::extract::Extracted;
use crate::markdown::{Doc, Table};
use crate::model::*;

/// Maps protobuf source positions to the file a reader should be shown.
pub struct ProtoOrigin<'a> {
    /// The compiled proto text.
    pub proto: &'a SourceFile,
    /// Index of `proto` in the model's files.
    pub proto_file: usize,
    /// When the compiled text is the one extracted from the markdown: the markdown, its
    /// index, and the extraction's line map, so spans point into the markdown.
    pub markdown: Option<(&'a SourceFile, usize, &'a Extracted)>,
}

impl ProtoOrigin<'_> {
    /// The span of a source-info location.
    pub fn span(&self, loc: Option<&Location>) -> Span {
        let Some(loc) = loc else {
            return Span { file: self.proto_file, offset: 0, len: 0 };
        };
        let s = &loc.span;
        let (l0, c0) =
            (s.first().copied().unwrap_or(0) as usize, s.get(1).copied().unwrap_or(0) as usize);
        let (l1, c1) = if s.len() >= 4 {
            (s[2] as usize, s[3] as usize)
        } else {
            (l0, s.get(2).copied().unwrap_or(0) as usize)
        };
        let start = self.proto.offset_of(l0, c0);
        let end = self.proto.offset_of(l1, c1).max(start);
        self.map(start, end - start)
    }

    /// Maps a byte range of the proto to the file it should be reported in.
    pub fn map(&self, offset: usize, len: usize) -> Span {
        if let Some((md, idx, ex)) = self.markdown
            && let Some(md_off) = ex.markdown_offset(self.proto, md, offset)
        {
            return Span { file: idx, offset: md_off, len };
        }
        Span { file: self.proto_file, offset, len }
    }
}

/// Everything lowering reads.
pub struct LowerInput<'a> {
    /// The compiled proto.
    pub compiled: &'a Compiled,
    /// Where proto positions point.
    pub origin: ProtoOrigin<'a>,
    /// The English markdown, parsed.
    pub doc: &'a Doc,
    /// Index of the English markdown in `files`.
    pub doc_file: usize,
    /// A translation, parsed: language, document, and its index in `files`.
    pub translation: Option<(&'a str, &'a Doc, usize)>,
    /// Every input file; spans index into this.
    pub files: Vec<SourceFile>,
}

/// Builds the model.
pub fn lower_model(input: LowerInput<'_>, diags: &mut Vec<Diagnostic>) -> Model {
    let pool = &input.compiled.pool;
    let file = pool.get_file_by_name(&input.compiled.name);
    let locations: HashMap<Vec<i32>, Location> = file
        .as_ref()
        .and_then(|f| f.file_descriptor_proto().source_code_info.clone())
        .map(|info| info.location.into_iter().map(|l| (l.path.clone(), l)).collect())
        .unwrap_or_default();
    let mut cx = Lower { origin: &input.origin, locations, files: &input.files, diags };
    let package = file.as_ref().map(|f| f.package_name().to_owned()).unwrap_or_default();

    let mut messages = Vec::new();
    let mut enums = Vec::new();
    if let Some(f) = &file {
        for m in f.messages() {
            cx.lower_message_tree(&m, &mut messages, &mut enums);
        }
        for e in f.enums() {
            enums.push(cx.lower_enum(&e));
        }
    }

    let mut services = Vec::new();
    if let Some(f) = &file {
        for s in f.services() {
            let methods = s
                .methods()
                .map(|m| Method {
                    name: m.name().to_owned(),
                    input: m.input().full_name().to_owned(),
                    output: m.output().full_name().to_owned(),
                    alpha: has_flag(&m.options(), is_alpha_option),
                    deprecated: is_deprecated(&m.options()),
                    client_streaming: m.is_client_streaming(),
                    server_streaming: m.is_server_streaming(),
                    comment: cx.comment(m.path()),
                    errors: Vec::new(),
                    section: None,
                    obligation: None,
                    carried_from: None,
                    span: cx.span(m.path()),
                })
                .collect();
            services.push(Service {
                name: s.name().to_owned(),
                full_name: s.full_name().to_owned(),
                alpha: has_flag(&s.options(), is_alpha_option),
                deprecated: is_deprecated(&s.options()),
                comment: cx.comment(s.path()),
                methods,
                span: cx.span(s.path()),
            });
        }
    }

    let mut model = Model {
        package,
        lang: "en".to_owned(),
        services,
        messages,
        enums,
        general_errors: Vec::new(),
        size_limits: SizeLimits { string: 128, map: 4096 },
        sections: Vec::new(),
        implications: Vec::new(),
        source: crate::provenance::SourceInfo::spec(),
        files: input.files.clone(),
    };
    let en = attach_prose(&mut model, input.doc, input.doc_file, "en", diags);
    // What the capabilities' comments oblige first, so the sections' sentences, read next,
    // are checked against it and win.
    crate::obligation::attach_capability_statements(&mut model, diags);
    crate::obligation::attach_obligations(&mut model, input.doc, input.doc_file, diags);
    if let Some((lang, doc, idx)) = input.translation {
        let tr = attach_prose(&mut model, doc, idx, lang, diags);
        for service in &mut model.services {
            for method in &mut service.methods {
                match tr.rpc_errors.get(&method.name) {
                    Some(rows) => method.errors = rows.clone(),
                    None => {
                        method.errors =
                            en.rpc_errors.get(&method.name).cloned().unwrap_or_default();
                        if !method.errors.is_empty() {
                            diags.push(Diagnostic::global(
                                Severity::Advice,
                                format!("rpc '{}' has no error table in the '{lang}' translation; English is used", method.name),
                            ));
                        }
                    }
                }
            }
        }
        model.general_errors = tr.general.unwrap_or_else(|| en.general.clone().unwrap_or_default());
        model.lang = lang.to_owned();
    } else {
        for service in &mut model.services {
            for method in &mut service.methods {
                method.errors = en.rpc_errors.get(&method.name).cloned().unwrap_or_default();
            }
        }
        model.general_errors = en.general.clone().unwrap_or_default();
    }
    if let Some(limits) = en.size_limits {
        model.size_limits = limits;
    }
    apply_general_limits(&mut model);
    propagate_node_id_limit(&mut model);
    model
}

/// Node IDs travel from `NodeGetInfoResponse.node_id` into every `node_id` and
/// `published_node_ids` field. The spec raises the limit on the first only, but the others
/// carry the same values ("SHALL set this field to match the node ID returned by
/// `NodeGetInfo`"), so they get its limit; otherwise a 256-byte node ID the spec allows would
/// fail `ControllerPublishVolumeRequest`.
fn propagate_node_id_limit(model: &mut Model) {
    let source = model
        .messages
        .iter()
        .find(|m| m.full_name.ends_with(".NodeGetInfoResponse"))
        .and_then(|m| m.fields.iter().find(|f| f.name == "node_id"))
        .map(|f| f.size_limit);
    let Some(limit @ SizeLimit::Max { .. }) = source else { return };
    for m in &mut model.messages {
        for f in &mut m.fields {
            if matches!(f.name.as_str(), "node_id" | "published_node_ids")
                && f.ty.is_scalar("string")
                && matches!(f.size_limit, SizeLimit::General { .. })
            {
                f.size_limit = limit;
            }
        }
    }
}

struct Lower<'a, 'd> {
    origin: &'a ProtoOrigin<'a>,
    locations: HashMap<Vec<i32>, Location>,
    files: &'a [SourceFile],
    diags: &'d mut Vec<Diagnostic>,
}

impl Lower<'_, '_> {
    fn comment(&self, path: &[i32]) -> String {
        self.locations
            .get(path)
            .and_then(|l| l.leading_comments.as_deref())
            .map(comment::clean_comment)
            .unwrap_or_default()
    }

    fn trailing(&self, path: &[i32]) -> String {
        self.locations
            .get(path)
            .and_then(|l| l.trailing_comments.as_deref())
            .map(comment::clean_comment)
            .unwrap_or_default()
    }

    fn span(&self, path: &[i32]) -> Span {
        self.origin.span(self.locations.get(path))
    }

    fn lower_message_tree(
        &mut self,
        m: &MessageDescriptor,
        out: &mut Vec<Message>,
        enums: &mut Vec<Enum>,
    ) {
        if m.is_map_entry() {
            return;
        }
        out.push(self.lower_message(m));
        for e in m.child_enums() {
            enums.push(self.lower_enum(&e));
        }
        for child in m.child_messages() {
            self.lower_message_tree(&child, out, enums);
        }
    }

    fn lower_message(&mut self, m: &MessageDescriptor) -> Message {
        let oneofs = m
            .oneofs()
            .filter(|o| !o.is_synthetic())
            .map(|o| {
                let comment = self.comment(o.path());
                Oneof {
                    name: o.name().to_owned(),
                    required: comment::oneof_required(&comment::normalise(&comment)),
                    comment,
                    span: self.span(o.path()),
                }
            })
            .collect();
        let fields = m.fields().map(|f| self.lower_field(m, &f)).collect();
        Message {
            full_name: m.full_name().to_owned(),
            alpha: has_flag(&m.options(), is_alpha_option),
            deprecated: is_deprecated(&m.options()),
            comment: self.comment(m.path()),
            fields,
            oneofs,
            span: self.span(m.path()),
        }
    }

    fn lower_field(&mut self, m: &MessageDescriptor, f: &FieldDescriptor) -> Field {
        let leading = self.comment(f.path());
        let trailing = self.trailing(f.path());
        let comment = match (leading.is_empty(), trailing.is_empty()) {
            (_, true) => leading,
            (true, false) => trailing,
            (false, false) => format!("{leading}\n{trailing}"),
        };
        let text = comment::normalise(&comment);
        let words = comment::presence_words(&text);
        let span = self.span(f.path());
        let presence = match (words.required, words.optional) {
            (Some(_), Some(_)) => {
                self.warn(
                    &span,
                    format!("field '{}.{}' is both REQUIRED and OPTIONAL", m.full_name(), f.name()),
                    "its comment says both",
                    "keep one of the two statements; the model reads it as REQUIRED",
                );
                Presence::Required
            }
            (Some(_), None) => Presence::Required,
            (None, Some(_)) => Presence::Optional,
            (None, None) => Presence::Unspecified,
        };
        let label = if f.is_map() {
            Label::Map
        } else if f.cardinality() == Cardinality::Repeated {
            Label::Repeated
        } else {
            Label::Singular
        };
        let size_limit = match comment::size_words(&text) {
            Some(SizeWords::Max(n)) => SizeLimit::Max { bytes: n },
            Some(SizeWords::MaxTotal(n)) => SizeLimit::MaxTotal { bytes: n },
            Some(SizeWords::AtLeast(n)) => SizeLimit::AtLeast { bytes: n },
            Some(SizeWords::Lifted) => {
                self.warn(
                    &span,
                    format!(
                        "field '{}.{}' overrides the general size limit without a number",
                        m.full_name(),
                        f.name()
                    ),
                    "no size is stated",
                    "state the limit in bytes; the model sets no limit",
                );
                SizeLimit::None
            }
            // Filled from the general table once it is known.
            None => SizeLimit::None,
        };
        let options = f.options();
        Field {
            name: f.name().to_owned(),
            number: f.number(),
            ty: field_type(f),
            label,
            oneof: f.containing_oneof().filter(|o| !o.is_synthetic()).map(|o| o.name().to_owned()),
            proto3_optional: f.field_descriptor_proto().proto3_optional(),
            presence,
            secret: has_flag(&options, |n| n.ends_with("_secret")),
            alpha: has_flag(&options, is_alpha_option),
            deprecated: is_deprecated(&options),
            size_limit,
            non_negative: comment::non_negative(&text),
            no_control_chars: comment::no_control_chars(&text),
            plugin_generated: comment::plugin_generated(&text),
            comment,
            span,
        }
    }

    fn lower_enum(&mut self, e: &EnumDescriptor) -> Enum {
        Enum {
            full_name: e.full_name().to_owned(),
            alpha: has_flag(&e.options(), is_alpha_option),
            deprecated: is_deprecated(&e.options()),
            comment: self.comment(e.path()),
            values: e
                .values()
                .map(|v| EnumValue {
                    name: v.name().to_owned(),
                    number: v.number(),
                    alpha: has_flag(&v.options(), is_alpha_option),
                    deprecated: is_deprecated(&v.options()),
                    comment: self.comment(v.path()),
                })
                .collect(),
            span: self.span(e.path()),
        }
    }

    fn warn(&mut self, span: &Span, message: String, label: &str, help: &str) {
        if let Some(src) = self.files.get(span.file) {
            self.diags.push(
                Diagnostic::at(Severity::Warning, src, (span.offset, span.len), message, label)
                    .with_help(help),
            );
        }
    }
}

fn is_alpha_option(name: &str) -> bool {
    name.starts_with("alpha_")
}

/// True when an options message (of a service, RPC, message, field, enum or enum value) sets the
/// standard `deprecated` option: the only mark of deprecation a proto carries.
fn is_deprecated(options: &DynamicMessage) -> bool {
    options.get_field_by_name("deprecated").is_some_and(|v| matches!(*v, Value::Bool(true)))
}

/// True when an options message sets a bool extension whose name satisfies `pred` to true.
fn has_flag(options: &DynamicMessage, pred: impl Fn(&str) -> bool) -> bool {
    options.extensions().any(|(ext, value)| pred(ext.name()) && matches!(value, Value::Bool(true)))
}

fn kind_type(kind: &Kind) -> FieldType {
    let scalar = |name: &str| FieldType::Scalar(name.to_owned());
    match kind {
        Kind::Double => scalar("double"),
        Kind::Float => scalar("float"),
        Kind::Int32 => scalar("int32"),
        Kind::Int64 => scalar("int64"),
        Kind::Uint32 => scalar("uint32"),
        Kind::Uint64 => scalar("uint64"),
        Kind::Sint32 => scalar("sint32"),
        Kind::Sint64 => scalar("sint64"),
        Kind::Fixed32 => scalar("fixed32"),
        Kind::Fixed64 => scalar("fixed64"),
        Kind::Sfixed32 => scalar("sfixed32"),
        Kind::Sfixed64 => scalar("sfixed64"),
        Kind::Bool => scalar("bool"),
        Kind::String => scalar("string"),
        Kind::Bytes => scalar("bytes"),
        Kind::Message(m) => FieldType::Message(m.full_name().to_owned()),
        Kind::Enum(e) => FieldType::Enum(e.full_name().to_owned()),
    }
}

fn field_type(f: &FieldDescriptor) -> FieldType {
    if f.is_map()
        && let Kind::Message(entry) = f.kind()
    {
        let key = kind_type(&entry.map_entry_key_field().kind()).to_string();
        let value = kind_type(&entry.map_entry_value_field().kind());
        return FieldType::Map { key, value: Box::new(value) };
    }
    kind_type(&f.kind())
}

/// Gives every string and string map without an override the general limit.
fn apply_general_limits(model: &mut Model) {
    let limits = model.size_limits;
    for m in &mut model.messages {
        for f in &mut m.fields {
            if f.size_limit != SizeLimit::None
                || f.comment.contains("overrides the general CSI size limit")
            {
                continue;
            }
            if let Some(bytes) = general_limit(limits, f) {
                f.size_limit = SizeLimit::General { bytes };
            }
        }
    }
}

/// The general limit the table `limits` sets on `field`: strings (per value) and string maps;
/// `None` for other types.
pub fn general_limit(limits: SizeLimits, field: &Field) -> Option<u32> {
    match field.label {
        Label::Map if field.ty.is_string_map() => Some(limits.map),
        Label::Singular | Label::Repeated if field.ty.is_scalar("string") => Some(limits.string),
        _ => None,
    }
}

/// Error tables, size limits and sections read from one document.
#[derive(Default)]
struct Prose {
    rpc_errors: HashMap<String, Vec<ErrorRow>>,
    general: Option<Vec<ErrorRow>>,
    size_limits: Option<SizeLimits>,
}

/// Reads one document's headings and tables against the model's RPC names.
fn attach_prose(
    model: &mut Model,
    doc: &Doc,
    file: usize,
    lang: &str,
    diags: &mut Vec<Diagnostic>,
) -> Prose {
    let rpc_names: Vec<String> =
        model.services.iter().flat_map(|s| s.methods.iter().map(|m| m.name.clone())).collect();
    let names_rpc = |title: &str| -> Option<String> {
        let first = title.split_whitespace().next()?.trim_matches('`');
        rpc_names.iter().find(|n| n.as_str() == first).cloned()
    };
    let mut prose = Prose::default();
    model.sections = doc
        .headings
        .iter()
        .map(|h| Section {
            level: h.level,
            title: h.title.clone(),
            anchor: h.anchor.clone(),
            line: model.files[file].line_col(h.span.start).0,
        })
        .collect();
    for h in &doc.headings {
        if let Some(name) = &h.code_only {
            for s in &mut model.services {
                for m in &mut s.methods {
                    if &m.name == name && m.section.is_none() {
                        m.section = Some(h.anchor.clone());
                    }
                }
            }
        }
    }
    // Walk headings and tables in document order, remembering which RPC's section we are in.
    let mut current: Option<(String, u8)> = None;
    let mut hi = 0;
    for table in &doc.tables {
        while hi < doc.headings.len() && doc.headings[hi].span.start < table.span.start {
            let h = &doc.headings[hi];
            match names_rpc(&h.title) {
                Some(name) => {
                    // "CreateVolume Errors" below "`CreateVolume`" keeps the RPC's level.
                    let level = match &current {
                        Some((cur, lvl)) if *cur == name => (*lvl).min(h.level),
                        _ => h.level,
                    };
                    current = Some((name, level));
                }
                None => {
                    if current.as_ref().is_some_and(|(_, lvl)| h.level <= *lvl) {
                        current = None;
                    }
                }
            }
            hi += 1;
        }
        let src = &model.files[file];
        if let Some(rows) = error_rows(table, file, lang) {
            match &current {
                Some((name, _)) => {
                    if prose.rpc_errors.contains_key(name) {
                        diags.push(Diagnostic::at(
                            Severity::Warning,
                            src,
                            (table.span.start, 0),
                            format!("rpc '{name}' has a second error table"),
                            "rows of this table are appended to the first",
                        ));
                    }
                    prose.rpc_errors.entry(name.clone()).or_default().extend(rows);
                }
                None if prose.general.is_none() => prose.general = Some(rows),
                None => diags.push(Diagnostic::at(
                    Severity::Advice,
                    src,
                    (table.span.start, 0),
                    "error table outside any rpc section",
                    "not attached to an rpc",
                )),
            }
        } else if prose.size_limits.is_none() {
            prose.size_limits = size_table(table);
        }
    }
    prose
}

/// The gRPC code column: every body cell reads `<number> <NAME>`.
fn parse_code(cell: &str) -> Option<(i32, String)> {
    let cell = cell.trim().trim_matches('`');
    let (num, name) = cell.split_once(char::is_whitespace)?;
    let num: i32 = num.parse().ok()?;
    // Kept as written ("NOT FOUND" appears in several releases); the checker reports it.
    let name = name.trim().trim_matches('`');
    let valid = name.starts_with(|c: char| c.is_ascii_uppercase())
        && name.chars().all(|c| c.is_ascii_uppercase() || c == '_' || c == ' ');
    valid.then(|| (num, name.to_owned()))
}

/// Reads a table as an error table if it has the shape of one: a column in which every row
/// holds a gRPC code (`5 NOT_FOUND`), the condition before it, the description and recovery after.
fn error_rows(table: &Table, file: usize, lang: &str) -> Option<Vec<ErrorRow>> {
    if table.rows.is_empty() || table.header.len() < 3 {
        return None;
    }
    let code_col = (1..table.header.len()).find(|&c| {
        table.rows.iter().all(|r| r.cells.get(c).is_some_and(|cell| parse_code(cell).is_some()))
    })?;
    Some(
        table
            .rows
            .iter()
            .filter_map(|r| {
                let (code_number, code) = parse_code(r.cells.get(code_col)?)?;
                let cell = |i: usize| r.cells.get(i).cloned().unwrap_or_default();
                Some(ErrorRow {
                    condition: cell(code_col - 1),
                    code,
                    code_number,
                    description: cell(code_col + 1),
                    recovery: cell(code_col + 2),
                    lang: row_lang(&r.cells, lang),
                    span: Span { file, offset: r.span.start, len: r.span.len() },
                })
            })
            .collect(),
    )
}

/// The language of a row: a translation keeps some rows in English, and says so only by
/// their script.
fn row_lang(cells: &[String], lang: &str) -> String {
    let cjk = |c: char| matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xFF00..=0xFFEF);
    if lang == "en" || cells.iter().any(|c| c.chars().any(cjk)) {
        lang.to_owned()
    } else {
        "en".to_owned()
    }
}

/// Reads the general size-limit table: a size column (`128 bytes`, `4 KiB`) beside a type column.
fn size_table(table: &Table) -> Option<SizeLimits> {
    if table.header.len() != 2 || table.rows.is_empty() {
        return None;
    }
    let mut limits = SizeLimits { string: 0, map: 0 };
    for row in &table.rows {
        let (size, ty) = (row.cells.first()?, row.cells.get(1)?);
        let digits: String = size.chars().take_while(char::is_ascii_digit).collect();
        let n: u32 = digits.parse().ok()?;
        let unit = size[digits.len()..].trim();
        let bytes = if unit.starts_with("Ki") || unit.starts_with('K') { n * 1024 } else { n };
        if ty.contains("map") {
            limits.map = bytes;
        } else if ty.contains("string") {
            limits.string = bytes;
        } else {
            return None;
        }
    }
    (limits.string > 0 && limits.map > 0).then_some(limits)
}

//! Protobuf text format straight from the wire bytes and a schema, annotated with the spec's
//! facts; records are printed in wire order, so nothing is merged, reordered or dropped.
//!
//! [`check_typed`] walks the bytes first, so a message that does not fit its type is refused
//! before any output is written.

use std::io::{self, Write};

use prost_reflect::{DynamicMessage, FieldDescriptor, Kind, MessageDescriptor};

use crate::former::Former;
use crate::mask::SecretMask;
use crate::redact::REDACTED;
use crate::schema::{Note, Schema, field_wire_type, is_packable, wire_type_of};
use crate::wire::{self, MAX_DEPTH, Record, Records, WireError, WireType, WireValue};
use csikit::facts::FieldFacts;

/// How to print.
#[derive(Debug, Clone, Copy, Default)]
pub struct TextOptions {
    /// Add the spec facts as `#` comments.
    pub annotate: bool,
    /// Add each field's comment above its first value.
    pub explain: bool,
    /// Print secret values.
    pub show_secrets: bool,
}

/// Secret values kept aside while their placeholders are edited, so they can be put back.
#[derive(Debug, Clone, Default)]
pub struct Redactions {
    /// Wire type and payload bytes of each redacted value, by placeholder number.
    pub values: Vec<(WireType, Vec<u8>)>,
}

impl Redactions {
    /// The placeholder text for value `n`.
    pub fn placeholder(n: usize) -> String {
        format!("<redacted:{n}>")
    }

    /// The value a placeholder stands for.
    pub fn lookup(&self, text: &[u8]) -> Option<&(WireType, Vec<u8>)> {
        let s = std::str::from_utf8(text).ok()?;
        let n: usize = s.strip_prefix("<redacted:")?.strip_suffix('>')?.parse().ok()?;
        self.values.get(n)
    }
}

/// Why a message could not be printed.
#[derive(Debug)]
pub enum PrintError {
    /// The bytes do not fit the type.
    Wire(WireError),
    /// Writing failed.
    Io(io::Error),
}

impl From<WireError> for PrintError {
    fn from(e: WireError) -> Self {
        PrintError::Wire(e)
    }
}

impl From<io::Error> for PrintError {
    fn from(e: io::Error) -> Self {
        PrintError::Io(e)
    }
}

impl std::fmt::Display for PrintError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PrintError::Wire(e) => e.fmt(f),
            PrintError::Io(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for PrintError {}

/// `bytes` decoded as a message of type `desc`, once [`check_typed`] has found them valid, so a
/// bad message is refused with the offset of the problem (`base`: where `bytes` start in the
/// input) rather than prost's words alone.
///
/// # Errors
///
/// The first problem, at its absolute offset.
pub fn decode_checked(
    desc: &MessageDescriptor,
    bytes: &[u8],
    base: usize,
) -> Result<DynamicMessage, WireError> {
    check_typed(desc, bytes, base, 0)?;
    DynamicMessage::decode(desc.clone(), bytes)
        .map_err(|e| WireError::new(base, format!("does not decode as {}: {e}", desc.full_name())))
}

/// Checks that `bytes` is a valid message of type `desc`: valid records, the wire type each
/// known field needs, UTF-8 strings, nested messages likewise.
///
/// # Errors
///
/// The first problem, at its absolute offset.
pub fn check_typed(
    desc: &MessageDescriptor,
    bytes: &[u8],
    base: usize,
    depth: usize,
) -> Result<(), WireError> {
    if depth > MAX_DEPTH {
        return Err(WireError::new(base, "messages nested too deeply"));
    }
    for r in Records::new(bytes, base, depth) {
        let r = r?;
        let Some(field) = desc.get_field(r.number) else {
            continue;
        };
        check_field(&field, &r, depth)?;
    }
    Ok(())
}

fn check_field(field: &FieldDescriptor, r: &Record<'_>, depth: usize) -> Result<(), WireError> {
    let kind = field.kind();
    let expected = field_wire_type(field);
    if r.wire_type != expected {
        if field.is_list()
            && is_packable(&kind)
            && let WireValue::Len(data) = r.value
        {
            return check_packed(field, &kind, data, r.value_offset);
        }
        return Err(WireError::new(
            r.offset,
            format!(
                "field '{}' ({}) of {} is {}, so wire type {}, but the bytes have wire type {}",
                field.name(),
                r.number,
                field.parent_message().full_name(),
                kind_name(&kind),
                expected,
                r.wire_type
            ),
        ));
    }
    match (&kind, r.value) {
        (Kind::String, WireValue::Len(data)) => {
            if let Err(e) = std::str::from_utf8(data) {
                return Err(WireError::new(
                    r.value_offset + e.valid_up_to(),
                    format!("invalid UTF-8 in string field '{}' ({})", field.name(), r.number),
                ));
            }
        }
        (Kind::Message(m), WireValue::Len(data) | WireValue::Group(data)) => {
            check_typed(m, data, r.value_offset, depth + 1)?;
        }
        _ => {}
    }
    Ok(())
}

fn check_packed(
    field: &FieldDescriptor,
    kind: &Kind,
    data: &[u8],
    base: usize,
) -> Result<(), WireError> {
    match wire_type_of(kind) {
        WireType::Varint => {
            let mut pos = 0;
            while pos < data.len() {
                pos = wire::read_varint(data, pos, base)?.1;
            }
        }
        wt => {
            let size = if wt == WireType::I32 { 4 } else { 8 };
            if !data.len().is_multiple_of(size) {
                return Err(WireError::new(
                    base,
                    format!(
                        "packed field '{}' holds {} bytes, not a multiple of {size}",
                        field.name(),
                        data.len()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The proto name of a field type.
pub fn kind_name(kind: &Kind) -> String {
    match kind {
        Kind::Message(m) => m.full_name().to_owned(),
        Kind::Enum(e) => e.full_name().to_owned(),
        k => format!("{k:?}").to_lowercase(),
    }
}

/// What a line's note says besides the field's facts.
#[derive(Debug, Clone)]
enum Mark<'s> {
    None,
    /// A field or value named as an older release named it, its number reserved here.
    Former(&'s Former),
    /// An enum number the type does not name; the enum's short name.
    UnknownValue(String),
}

impl<'s> Mark<'s> {
    fn or(self, other: impl FnOnce() -> Mark<'s>) -> Mark<'s> {
        match self {
            Mark::None => other(),
            m => m,
        }
    }
}

impl std::fmt::Display for Mark<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Mark::None => Ok(()),
            Mark::Former(former) => former.fmt(f),
            Mark::UnknownValue(e) => write!(f, "unknown {e} value"),
        }
    }
}

/// Prints messages as annotated text.
pub struct TextPrinter<'s, W> {
    schema: &'s Schema,
    out: W,
    options: TextOptions,
    redactions: Option<&'s mut Redactions>,
    mask: Option<&'s SecretMask>,
    /// Levels of indentation before every line.
    indent: usize,
}

impl<'s, W: Write> TextPrinter<'s, W> {
    /// A printer writing to `out`; with `redactions`, secret values print as numbered
    /// placeholders kept in it (for editing).
    pub fn new(
        schema: &'s Schema,
        out: W,
        options: TextOptions,
        redactions: Option<&'s mut Redactions>,
    ) -> Self {
        TextPrinter { schema, out, options, redactions, mask: None, indent: 0 }
    }

    /// Indents every line by `levels` more levels (two spaces each), to print a message inside
    /// another text.
    #[must_use]
    pub fn indented(mut self, levels: usize) -> Self {
        self.indent = levels;
        self
    }

    /// Also hides every value whose bytes the mask covers (the positions any type that could
    /// have produced the bytes marks secret), for when the type printed is not certain.
    #[must_use]
    pub fn with_mask(mut self, mask: &'s SecretMask) -> Self {
        if !self.options.show_secrets {
            self.mask = Some(mask);
        }
        self
    }

    /// Checks, then prints `bytes` as a message of type `desc` (nothing is printed when the check fails).
    ///
    /// # Errors
    ///
    /// When the bytes do not fit the type, or writing fails.
    pub fn print(
        &mut self,
        desc: &MessageDescriptor,
        bytes: &[u8],
        base: usize,
    ) -> Result<(), PrintError> {
        self.checked(desc, bytes, base, self.options.annotate)
    }

    /// Like [`TextPrinter::print`], without the first line (the `# type (N bytes)` comment): the
    /// fields alone, for a text that names the type itself.
    ///
    /// # Errors
    ///
    /// As [`TextPrinter::print`].
    pub fn print_fields(
        &mut self,
        desc: &MessageDescriptor,
        bytes: &[u8],
        base: usize,
    ) -> Result<(), PrintError> {
        self.checked(desc, bytes, base, false)
    }

    fn checked(
        &mut self,
        desc: &MessageDescriptor,
        bytes: &[u8],
        base: usize,
        header: bool,
    ) -> Result<(), PrintError> {
        check_typed(desc, bytes, base, 0)?;
        if header {
            self.indent(0)?;
            write!(self.out, "# {} ({} bytes)", desc.full_name(), bytes.len())?;
            if let Some(f) = self.schema.message_facts(desc)
                && f.alpha
            {
                self.out.write_all(b" alpha")?;
            }
            self.out.write_all(b"\n")?;
        }
        self.message(desc, bytes, 0, 0, false)
    }

    fn indent(&mut self, depth: usize) -> io::Result<()> {
        const SPACES: &[u8] = &[b' '; 128];
        let mut n = (self.indent + depth) * 2;
        while n > 0 {
            let k = n.min(SPACES.len());
            self.out.write_all(&SPACES[..k])?;
            n -= k;
        }
        Ok(())
    }

    /// `at`: the offset of `bytes` in the whole message (for the mask).
    fn message(
        &mut self,
        desc: &MessageDescriptor,
        bytes: &[u8],
        at: usize,
        depth: usize,
        secret: bool,
    ) -> Result<(), PrintError> {
        let track = self.options.annotate || self.options.explain;
        let mut seen: Vec<u32> = Vec::new();
        let is_map_entry = desc.is_map_entry();
        let message_facts = self.schema.message_facts(desc);
        for r in Records::new(bytes, 0, depth) {
            let r = r?;
            let Some(field) = desc.get_field(r.number) else {
                self.unknown(&r, depth)?;
                continue;
            };
            // A field the source's facts do not state may be one an older release named
            // (its number reserved here): its facts and a mark saying so.
            let (facts, former) = match message_facts.and_then(|m| m.field_by_number(r.number)) {
                Some(f) => (f, None),
                None => (self.schema.field_facts(&field), self.schema.former_field(&field)),
            };
            let field_mark = former.map_or(Mark::None, Mark::Former);
            let comment = if self.options.explain { self.schema.field_comment(&field) } else { "" };
            if !seen.contains(&r.number) && !comment.is_empty() {
                for line in comment.lines() {
                    self.indent(depth)?;
                    writeln!(self.out, "# {line}")?;
                }
            }
            if track && !seen.contains(&r.number) {
                seen.push(r.number);
            }
            let value = match r.value {
                WireValue::Len(d) | WireValue::Group(d) => {
                    at + r.value_offset..at + r.value_offset + d.len()
                }
                _ => at + r.value_offset..at + r.end,
            };
            let masked = self.mask.is_some_and(|m| m.overlaps(value.clone()));
            let wholly_masked = masked && self.mask.is_some_and(|m| m.covers(value.clone()));
            let secret_here =
                secret || (facts.secret && !self.options.show_secrets) || wholly_masked;
            // A map's key stays visible; its value, and everything else under a secret, does not.
            let redact = (secret_here && !(is_map_entry && r.number == 1 && !facts.secret))
                || (masked && !matches!(field.kind(), Kind::Message(_)));
            let kind = field.kind();
            let name = match &kind {
                Kind::Message(m) if field.is_group() => m.name(),
                _ => field.name(),
            };
            match (&kind, r.value) {
                (Kind::Message(m), WireValue::Len(data) | WireValue::Group(data)) => {
                    self.indent(depth)?;
                    self.out.write_all(name.as_bytes())?;
                    self.out.write_all(b" {")?;
                    self.annotation(facts, secret_here, field_mark)?;
                    self.out.write_all(b"\n")?;
                    self.message(m, data, at + r.value_offset, depth + 1, secret_here)?;
                    self.indent(depth)?;
                    self.out.write_all(b"}\n")?;
                }
                (_, WireValue::Len(data)) if field.is_list() && is_packable(&kind) => {
                    self.packed(&field, &kind, name, data, r.value_offset, depth, facts, redact)?;
                }
                (_, value) => {
                    self.indent(depth)?;
                    self.out.write_all(name.as_bytes())?;
                    self.out.write_all(b": ")?;
                    let mark = if redact {
                        self.redacted(&r)?;
                        field_mark
                    } else {
                        self.scalar(&kind, value)?;
                        field_mark.or(|| self.value_mark(&kind, value))
                    };
                    self.annotation(facts, secret_here, mark)?;
                    self.out.write_all(b"\n")?;
                }
            }
        }
        if self.options.annotate
            && let Some(mf) = message_facts
        {
            for f in desc.fields() {
                let ff = mf.field_by_number(f.number());
                if ff.is_some_and(|ff| ff.presence == csikit_spec::Presence::Required)
                    && f.containing_oneof().is_none_or(|o| o.is_synthetic())
                    && !seen.contains(&f.number())
                {
                    self.indent(depth)?;
                    writeln!(self.out, "# missing: {} (REQUIRED)", f.name())?;
                }
            }
            for o in mf.oneofs.iter().filter(|o| o.required).map(|o| &*o.name) {
                let Some(oneof) = desc.oneofs().find(|x| x.name() == o) else {
                    continue;
                };
                if !oneof.fields().any(|f| seen.contains(&f.number())) {
                    self.indent(depth)?;
                    writeln!(self.out, "# missing: one of '{o}' (REQUIRED)")?;
                }
            }
        }
        Ok(())
    }

    #[allow(
        clippy::too_many_arguments,
        reason = "one call site; the values are all needed per line"
    )]
    fn packed(
        &mut self,
        field: &FieldDescriptor,
        kind: &Kind,
        name: &str,
        data: &[u8],
        base: usize,
        depth: usize,
        facts: &FieldFacts,
        redact: bool,
    ) -> Result<(), PrintError> {
        let mut pos = 0;
        while pos < data.len() {
            let (value, next) = match wire_type_of(kind) {
                WireType::Varint => {
                    let (v, next) = wire::read_varint(data, pos, base)?;
                    (WireValue::Varint(v), next)
                }
                WireType::I32 => {
                    let b = data
                        .get(pos..pos + 4)
                        .ok_or_else(|| WireError::new(base + pos, "truncated packed value"))?;
                    (WireValue::I32(u32::from_le_bytes([b[0], b[1], b[2], b[3]])), pos + 4)
                }
                _ => {
                    let b = data
                        .get(pos..pos + 8)
                        .ok_or_else(|| WireError::new(base + pos, "truncated packed value"))?;
                    let mut a = [0u8; 8];
                    a.copy_from_slice(b);
                    (WireValue::I64(u64::from_le_bytes(a)), pos + 8)
                }
            };
            self.indent(depth)?;
            self.out.write_all(name.as_bytes())?;
            self.out.write_all(b": ")?;
            let mark = if redact {
                let r = Record {
                    offset: base + pos,
                    value_offset: base + pos,
                    end: base + next,
                    number: field.number(),
                    wire_type: wire_type_of(kind),
                    value,
                };
                self.redacted(&r)?;
                Mark::None
            } else {
                self.scalar(kind, value)?;
                self.value_mark(kind, value)
            };
            self.annotation(facts, redact, mark)?;
            self.out.write_all(b"\n")?;
            pos = next;
        }
        Ok(())
    }

    fn redacted(&mut self, r: &Record<'_>) -> io::Result<()> {
        match self.redactions.as_deref_mut() {
            Some(table) => {
                let payload = match r.value {
                    WireValue::Varint(v) => {
                        let mut b = Vec::new();
                        wire::put_varint(&mut b, v);
                        b
                    }
                    WireValue::I32(v) => v.to_le_bytes().to_vec(),
                    WireValue::I64(v) => v.to_le_bytes().to_vec(),
                    WireValue::Len(d) | WireValue::Group(d) => d.to_vec(),
                };
                table.values.push((r.wire_type, payload));
                write!(self.out, "\"{}\"", Redactions::placeholder(table.values.len() - 1))
            }
            None => write!(self.out, "\"{REDACTED}\""),
        }
    }

    /// What a value itself says beyond its field's facts: an enum number the type does not
    /// name (shown as the number: a reader MUST ignore values it does not know, as CSI says of
    /// `VolumeHealthErrorType`, so it is never an error), or a value named as an older release
    /// named it.
    fn value_mark(&self, kind: &Kind, value: WireValue<'_>) -> Mark<'s> {
        if !self.options.annotate {
            return Mark::None;
        }
        match (kind, value) {
            (Kind::Enum(e), WireValue::Varint(v)) => match e.get_value(v as i32) {
                None => {
                    // Named within its package: `ControllerServiceCapability.RPC.Type`.
                    let within = e.full_name().strip_prefix(e.package_name());
                    let name = within.map_or(e.full_name(), |n| n.trim_start_matches('.'));
                    Mark::UnknownValue(name.to_owned())
                }
                Some(known) => self.schema.former_value(&known).map_or(Mark::None, Mark::Former),
            },
            _ => Mark::None,
        }
    }

    fn annotation(&mut self, facts: &FieldFacts, secret: bool, mark: Mark<'_>) -> io::Result<()> {
        if !self.options.annotate {
            return Ok(());
        }
        let note = Note { facts, redacted: secret };
        match (note.is_empty(), &mark) {
            (true, Mark::None) => {}
            (false, Mark::None) => write!(self.out, "  # {note}")?,
            (true, mark) => write!(self.out, "  # {mark}")?,
            (false, mark) => write!(self.out, "  # {note}; {mark}")?,
        }
        Ok(())
    }

    fn scalar(&mut self, kind: &Kind, value: WireValue<'_>) -> io::Result<()> {
        let out = &mut self.out;
        match (kind, value) {
            (Kind::Int32, WireValue::Varint(v)) => write!(out, "{}", v as i32),
            (Kind::Int64, WireValue::Varint(v)) => write!(out, "{}", v as i64),
            (Kind::Uint32, WireValue::Varint(v)) => write!(out, "{}", v as u32),
            (Kind::Uint64, WireValue::Varint(v)) => write!(out, "{v}"),
            (Kind::Sint32, WireValue::Varint(v)) => write!(out, "{}", zigzag(v) as i32),
            (Kind::Sint64, WireValue::Varint(v)) => write!(out, "{}", zigzag(v)),
            (Kind::Bool, WireValue::Varint(v)) => {
                out.write_all(if v != 0 { b"true" } else { b"false" })
            }
            (Kind::Enum(e), WireValue::Varint(v)) => match e.get_value(v as i32) {
                Some(ev) => out.write_all(ev.name().as_bytes()),
                None => write!(out, "{}", v as i32),
            },
            (Kind::Fixed32, WireValue::I32(v)) => write!(out, "{v}"),
            (Kind::Sfixed32, WireValue::I32(v)) => write!(out, "{}", v as i32),
            (Kind::Float, WireValue::I32(v)) => {
                write_float(out, f64::from(f32::from_bits(v)), Some(f32::from_bits(v)))
            }
            (Kind::Fixed64, WireValue::I64(v)) => write!(out, "{v}"),
            (Kind::Sfixed64, WireValue::I64(v)) => write!(out, "{}", v as i64),
            (Kind::Double, WireValue::I64(v)) => write_float(out, f64::from_bits(v), None),
            (Kind::String, WireValue::Len(d)) => write_string(out, d, true),
            (_, WireValue::Len(d)) => write_string(out, d, false),
            (_, v) => write_unknown_scalar(out, v),
        }
    }

    fn unknown(&mut self, r: &Record<'_>, depth: usize) -> Result<(), PrintError> {
        self.indent(depth)?;
        match r.value {
            WireValue::Len(d) | WireValue::Group(d)
                if matches!(r.value, WireValue::Group(_))
                    || wire::is_canonical_message(d, depth + 1) =>
            {
                write!(self.out, "{} {{", r.number)?;
                if self.options.annotate {
                    write!(self.out, "  # unknown field ({})", r.wire_type)?;
                }
                self.out.write_all(b"\n")?;
                for inner in Records::new(d, 0, depth + 1) {
                    self.unknown(&inner?, depth + 1)?;
                }
                self.indent(depth)?;
                self.out.write_all(b"}\n")?;
                return Ok(());
            }
            WireValue::Len(d) => {
                write!(self.out, "{}: ", r.number)?;
                write_string(&mut self.out, d, false)?;
            }
            v => {
                write!(self.out, "{}: ", r.number)?;
                write_unknown_scalar(&mut self.out, v)?;
            }
        }
        if self.options.annotate {
            write!(self.out, "  # unknown field ({})", r.wire_type)?;
        }
        self.out.write_all(b"\n")?;
        Ok(())
    }
}

fn zigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Unknown scalars as protoc prints them: varints in decimal, fixed values in hex with all digits.
fn write_unknown_scalar<W: Write>(out: &mut W, v: WireValue<'_>) -> io::Result<()> {
    match v {
        WireValue::Varint(v) => write!(out, "{v}"),
        WireValue::I32(v) => write!(out, "0x{v:08x}"),
        WireValue::I64(v) => write!(out, "0x{v:016x}"),
        WireValue::Len(d) | WireValue::Group(d) => write_string(out, d, false),
    }
}

/// A float in the shortest form that reads back to the same value.
fn write_float<W: Write>(out: &mut W, v: f64, single: Option<f32>) -> io::Result<()> {
    if v.is_nan() {
        out.write_all(if v.is_sign_negative() { b"-nan" } else { b"nan" })
    } else if v.is_infinite() {
        out.write_all(if v > 0.0 { b"inf" } else { b"-inf" })
    } else if let Some(f) = single {
        write!(out, "{f:?}")
    } else {
        write!(out, "{v:?}")
    }
}

/// A quoted string: valid UTF-8 text kept as is (when `utf8`), other bytes as octal escapes.
pub fn write_string<W: Write>(out: &mut W, data: &[u8], utf8: bool) -> io::Result<()> {
    out.write_all(b"\"")?;
    let mut start = 0;
    for (i, &b) in data.iter().enumerate() {
        let plain = match b {
            b'"' | b'\\' => false,
            0x20..=0x7e => true,
            0x80..=0xff => utf8,
            _ => false,
        };
        if plain {
            continue;
        }
        out.write_all(&data[start..i])?;
        match b {
            b'"' => out.write_all(b"\\\"")?,
            b'\\' => out.write_all(b"\\\\")?,
            b'\n' => out.write_all(b"\\n")?,
            b'\r' => out.write_all(b"\\r")?,
            b'\t' => out.write_all(b"\\t")?,
            _ => write!(out, "\\{b:03o}")?,
        }
        start = i + 1;
    }
    out.write_all(&data[start..])?;
    out.write_all(b"\"")
}

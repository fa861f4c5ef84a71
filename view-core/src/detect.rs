//! Guessing the type of a message. Every known type reads the bytes the way a protobuf runtime
//! would, and a type *reads them exactly* when every record lands in a field of its number and
//! wire type, strings are UTF-8, and encoding what it read would give the same fields back:
//! nothing unknown, dropped (a default value where only a non-default is sent), merged (a
//! singular field twice, two members of one oneof, a map key twice), truncated (an `int32` out
//! of range) or re-packed, at any depth. Field order and map entry order are not counted, as
//! parsers accept any. Among exact readers, those with every REQUIRED field set are preferred,
//! then those whose enum values are all declared; a type is named only when it is alone at the
//! top, otherwise the tie is reported. When no type reads the bytes exactly (another version
//! of the schema, damaged bytes), an evidence score orders the candidates and the closest is
//! named only when it clears the next one.

use std::collections::HashSet;

use prost_reflect::{FieldDescriptor, Kind, MessageDescriptor, Syntax};

use crate::schema::{Schema, field_wire_type, is_packable, wire_type_of};
use crate::wire::{
    MAX_DEPTH, Record, Records, WireError, WireType, WireValue, read_varint, varint_len,
};

/// How many records are looked at per candidate, so huge inputs are ranked on a prefix.
const RECORD_BUDGET: usize = 20_000;

/// When no type reads the bytes exactly, scores closer than this are a tie.
const TIE_MARGIN: f64 = 1.01;

/// How one type reads the bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Fit {
    /// Records the type reads wrongly or loses on re-encoding: unknown field numbers, wrong
    /// wire types, invalid UTF-8, default values, repeats of a singular field, out-of-range
    /// numbers, unpacked values of a packed field; zero when the type reads the bytes exactly.
    pub misread: u32,
    /// REQUIRED fields and required oneofs left unset, in the message and every nested one.
    pub missing_required: u32,
    /// Enum values their (open) enum does not declare.
    pub undeclared_enums: u32,
    /// Evidence for the reading (known fields, text-like strings, declared enum values); orders
    /// candidates that fit equally and is the only guide when no type reads the bytes exactly.
    pub score: f64,
}

impl Fit {
    /// True when the type reads the bytes exactly.
    pub fn is_exact(&self) -> bool {
        self.misread == 0
    }

    /// The preferences in order: reads exactly, every REQUIRED field set, enum values declared.
    fn level(&self) -> (bool, bool, bool) {
        (self.misread == 0, self.missing_required == 0, self.undeclared_enums == 0)
    }

    /// What the fit amounts to, for people: `exact`, `exact, 2 REQUIRED unset`, `3 misread`.
    pub fn verdict(&self) -> String {
        if !self.is_exact() {
            return format!("{} misread", self.misread);
        }
        let mut s = String::from("exact");
        if self.missing_required > 0 {
            s.push_str(&format!(", {} REQUIRED unset", self.missing_required));
        }
        if self.undeclared_enums > 0 {
            s.push_str(&format!(
                ", {} undeclared enum value{}",
                self.undeclared_enums,
                if self.undeclared_enums == 1 { "" } else { "s" }
            ));
        }
        s
    }

    fn add(&mut self, nested: Fit) {
        self.misread += nested.misread;
        self.missing_required += nested.missing_required;
        self.undeclared_enums += nested.undeclared_enums;
        self.score += nested.score;
    }
}

/// One candidate type and how it reads the bytes.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// The type.
    pub desc: MessageDescriptor,
    /// How it reads the bytes.
    pub fit: Fit,
}

/// The ranking of every candidate type.
#[derive(Debug, Clone)]
pub struct Ranking {
    /// Candidates, best first (exact readers by preference, then by score; ties keep the
    /// schema's order).
    pub candidates: Vec<Candidate>,
}

impl Ranking {
    /// The type to use: the only exact reader at the best preference, or when no type reads
    /// the bytes exactly, the closest if it clears the next by the margin. `None` on a tie.
    pub fn best(&self) -> Option<&Candidate> {
        match self.tied().as_slice() {
            [only] => Some(only),
            _ => None,
        }
    }

    /// True when the best candidate reads the bytes exactly (otherwise it is only the closest).
    pub fn is_exact(&self) -> bool {
        self.candidates.first().is_some_and(|c| c.fit.is_exact())
    }

    /// The names of the tied types, at most `max` of them and a count of the rest.
    pub fn tied_names(&self, max: usize) -> String {
        let tied = self.tied();
        let mut s =
            tied.iter().take(max).map(|c| c.desc.full_name()).collect::<Vec<_>>().join(", ");
        if tied.len() > max {
            s.push_str(&format!(" and {} more", tied.len() - max));
        }
        s
    }

    /// The types that fit as well as the first: the same preferences when it reads the bytes
    /// exactly, otherwise a score within the margin.
    pub fn tied(&self) -> Vec<&Candidate> {
        let Some(first) = self.candidates.first() else {
            return Vec::new();
        };
        self.candidates
            .iter()
            .take_while(|c| {
                if first.fit.is_exact() {
                    c.fit.level() == first.fit.level()
                } else {
                    (first.fit.score - c.fit.score).abs() < TIE_MARGIN
                }
            })
            .collect()
    }
}

/// Ranks every candidate type of `schema` for `bytes`.
///
/// # Errors
///
/// When the bytes are not protobuf at all.
pub fn rank(schema: &Schema, bytes: &[u8]) -> Result<Ranking, WireError> {
    // Bytes that are not protobuf fit no type; say where they break.
    for r in Records::new(bytes, 0, 0).take(RECORD_BUDGET) {
        r?;
    }
    let mut candidates: Vec<Candidate> = schema
        .candidates()
        .into_iter()
        .map(|desc| {
            let mut reader = Reader { schema, budget: RECORD_BUDGET };
            // The records parse (checked above), so every type reads a message.
            let fit = reader.message(&desc, bytes, 0).unwrap_or(Fit {
                misread: 1,
                score: f64::NEG_INFINITY,
                ..Fit::default()
            });
            Candidate { desc, fit }
        })
        .collect();
    candidates.sort_by(|a, b| {
        b.fit.level().cmp(&a.fit.level()).then(b.fit.score.total_cmp(&a.fit.score))
    });
    Ok(Ranking { candidates })
}

/// Points for each piece of evidence, for the score. Unknown fields and wire-type mismatches
/// weigh most; a nested payload that parses as its message type counts as much as a top-level
/// field.
mod points {
    pub const KNOWN_FIELD: f64 = 2.0;
    pub const SINGULAR_REPEATED: f64 = -3.0;
    pub const UNKNOWN_FIELD: f64 = -10.0;
    pub const WRONG_WIRE_TYPE: f64 = -20.0;
    pub const TEXT_STRING: f64 = 0.5;
    pub const CONTROL_CHARS: f64 = -3.0;
    pub const INVALID_UTF8: f64 = -20.0;
    pub const NESTED_MESSAGE: f64 = 1.0;
    pub const BAD_NESTED_MESSAGE: f64 = -20.0;
    pub const ENUM_KNOWN: f64 = 1.0;
    pub const ENUM_UNKNOWN: f64 = -3.0;
    pub const BOOL_OK: f64 = 0.5;
    pub const BOOL_ODD: f64 = -3.0;
    pub const OUT_OF_RANGE: f64 = -2.0;
    pub const LOST_ON_ENCODING: f64 = -2.0;
    pub const ABSENT: f64 = -0.5;
    pub const REQUIRED_PRESENT: f64 = 1.0;
    pub const REQUIRED_MISSING: f64 = -2.0;
}

/// One type's reading of the bytes, within the record budget.
struct Reader<'a> {
    schema: &'a Schema,
    budget: usize,
}

/// A map key, to find keys given twice.
#[derive(Debug, PartialEq, Eq, Hash)]
enum MapKey<'a> {
    Number(u64),
    Bytes(&'a [u8]),
}

/// How a field's value is written alone, outside a packed run or map entry.
#[derive(Debug, Clone, Copy)]
struct Slot {
    /// The encoder leaves the default value out (proto3 scalars without presence), so a default
    /// on the wire would be lost.
    implicit: bool,
    /// Strings must be UTF-8 (proto3).
    utf8: bool,
}

impl Reader<'_> {
    /// How `desc` reads `bytes`; `None` when they are not records at all.
    fn message(&mut self, desc: &MessageDescriptor, bytes: &[u8], depth: usize) -> Option<Fit> {
        use points::*;
        if depth > MAX_DEPTH {
            return None;
        }
        let utf8 = desc.parent_file().syntax() == Syntax::Proto3;
        let mut fit = Fit::default();
        // (field number, records seen, packed records seen)
        let mut seen: Vec<(u32, u32, u32)> = Vec::new();
        // (oneof name, the member seen)
        let mut oneofs: Vec<(String, u32)> = Vec::new();
        let mut keys: HashSet<(u32, MapKey<'_>)> = HashSet::new();
        for r in Records::new(bytes, 0, depth) {
            if self.budget == 0 {
                break;
            }
            self.budget -= 1;
            let r = r.ok()?;
            if !is_shortest(&r) {
                fit.misread += 1;
            }
            let Some(field) = desc.get_field(r.number) else {
                fit.misread += 1;
                fit.score += UNKNOWN_FIELD;
                continue;
            };
            let kind = field.kind();
            let packable = field.is_list() && is_packable(&kind);
            let packed = packable && r.wire_type == WireType::Len;
            if !packed && r.wire_type != field_wire_type(&field) {
                fit.misread += 1;
                fit.score += WRONG_WIRE_TYPE;
                continue;
            }
            let i = match seen.iter().position(|s| s.0 == r.number) {
                Some(i) => i,
                None => {
                    fit.score += KNOWN_FIELD;
                    seen.push((r.number, 0, 0));
                    seen.len() - 1
                }
            };
            if field.is_list() || field.is_map() {
                // A packed field is written as one run; an unpacked value of it, or a second
                // run, is re-encoded differently (and the other way round).
                if packable && (packed != field.is_packed() || (packed && seen[i].2 > 0)) {
                    fit.misread += 1;
                }
            } else if seen[i].1 > 0 {
                // A singular field given twice keeps the last value (messages merge).
                fit.misread += 1;
                fit.score += SINGULAR_REPEATED;
            }
            if let Some(o) = field.containing_oneof().filter(|o| !o.is_synthetic()) {
                match oneofs.iter().find(|(name, _)| name == o.name()) {
                    // Setting one member of a oneof clears the others.
                    Some((_, member)) if *member != r.number => fit.misread += 1,
                    Some(_) => {}
                    None => oneofs.push((o.name().to_owned(), r.number)),
                }
            }
            seen[i].1 += 1;
            if packed {
                seen[i].2 += 1;
            }
            match r.value {
                WireValue::Len(d) if packed => self.packed(&mut fit, &kind, d),
                WireValue::Len(d) if field.is_map() => {
                    self.map_entry(&mut fit, &field, d, depth, &mut keys);
                }
                value => {
                    let slot =
                        Slot { implicit: !field.supports_presence() && !field.is_list(), utf8 };
                    self.value(&mut fit, &kind, value, slot, depth);
                }
            }
        }
        let facts = self.schema.message_facts(desc);
        for f in desc.fields() {
            let present = seen.iter().any(|s| s.0 == f.number());
            if f.is_required() && !present {
                // proto2 `required`: parsers reject the message.
                fit.misread += 1;
            }
            let required = facts
                .and_then(|m| m.field_by_number(f.number()))
                .is_some_and(|ff| ff.presence == csikit_spec::Presence::Required)
                && f.containing_oneof().is_none_or(|o| o.is_synthetic());
            fit.score += match (required, present) {
                (true, true) => REQUIRED_PRESENT,
                (true, false) => {
                    fit.missing_required += 1;
                    REQUIRED_MISSING
                }
                (false, false) => ABSENT,
                (false, true) => 0.0,
            };
        }
        if let Some(facts) = facts {
            for o in facts.oneofs.iter().filter(|o| o.required).map(|o| &*o.name) {
                if let Some(oneof) = desc.oneofs().find(|x| x.name() == o) {
                    if oneof.fields().any(|f| seen.iter().any(|s| s.0 == f.number())) {
                        fit.score += REQUIRED_PRESENT;
                    } else {
                        fit.missing_required += 1;
                        fit.score += REQUIRED_MISSING;
                    }
                }
            }
        }
        Some(fit)
    }

    /// One value of a field of `kind`.
    fn value(
        &mut self,
        fit: &mut Fit,
        kind: &Kind,
        value: WireValue<'_>,
        slot: Slot,
        depth: usize,
    ) {
        use points::*;
        let default = match value {
            WireValue::Varint(v) | WireValue::I64(v) => v == 0,
            WireValue::I32(v) => v == 0,
            WireValue::Len(d) => d.is_empty() && !matches!(kind, Kind::Message(_)),
            WireValue::Group(_) => false,
        };
        if slot.implicit && default {
            // Never sent: the encoder leaves default values out.
            fit.misread += 1;
            fit.score += LOST_ON_ENCODING;
        }
        match (kind, value) {
            (Kind::String, WireValue::Len(d)) => match std::str::from_utf8(d) {
                Err(_) => {
                    if slot.utf8 {
                        fit.misread += 1;
                    }
                    fit.score += INVALID_UTF8;
                }
                Ok(s) if s.bytes().any(|b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r')) => {
                    fit.score += CONTROL_CHARS;
                }
                Ok(_) => fit.score += TEXT_STRING,
            },
            (Kind::Message(m), WireValue::Len(d) | WireValue::Group(d)) => {
                match self.message(m, d, depth + 1) {
                    Some(nested) => {
                        fit.score += NESTED_MESSAGE;
                        fit.add(nested);
                    }
                    None => {
                        fit.misread += 1;
                        fit.score += BAD_NESTED_MESSAGE;
                    }
                }
            }
            (_, WireValue::Varint(v)) => self.number(fit, kind, v),
            _ => {}
        }
    }

    /// A varint read as a number of `kind`: out of range (truncated on reading) or an enum
    /// value the enum does not declare.
    fn number(&mut self, fit: &mut Fit, kind: &Kind, v: u64) {
        use points::*;
        // An int32 is sign-extended to 64 bits on the wire; a u32 is not.
        let int32 = !(1 << 31..0xffff_ffff_8000_0000).contains(&v);
        match kind {
            Kind::Enum(e) => {
                if !int32 {
                    fit.misread += 1;
                    fit.score += OUT_OF_RANGE;
                } else if e.get_value(v as i32).is_some() {
                    fit.score += ENUM_KNOWN;
                } else {
                    // proto2 enums are closed: an undeclared value is an unknown field.
                    if e.parent_file().syntax() == Syntax::Proto2 {
                        fit.misread += 1;
                    } else {
                        fit.undeclared_enums += 1;
                    }
                    fit.score += ENUM_UNKNOWN;
                }
            }
            Kind::Bool if v > 1 => {
                fit.misread += 1;
                fit.score += BOOL_ODD;
            }
            Kind::Bool => fit.score += BOOL_OK,
            Kind::Int32 if !int32 => {
                fit.misread += 1;
                fit.score += OUT_OF_RANGE;
            }
            Kind::Uint32 | Kind::Sint32 if v > u64::from(u32::MAX) => {
                fit.misread += 1;
                fit.score += OUT_OF_RANGE;
            }
            _ => {}
        }
    }

    /// A packed run of `kind` values: one or more whole values, each in range.
    fn packed(&mut self, fit: &mut Fit, kind: &Kind, payload: &[u8]) {
        let whole = match wire_type_of(kind) {
            _ if payload.is_empty() => false,
            WireType::I32 => payload.len().is_multiple_of(4),
            WireType::I64 => payload.len().is_multiple_of(8),
            _ => {
                let mut pos = 0;
                let mut ok = true;
                while ok && pos < payload.len() {
                    match read_varint(payload, pos, 0) {
                        Ok((v, next)) => {
                            ok = next - pos == varint_len(v);
                            self.number(fit, kind, v);
                            pos = next;
                        }
                        Err(_) => ok = false,
                    }
                }
                ok
            }
        };
        if !whole {
            fit.misread += 1;
            fit.score += points::BAD_NESTED_MESSAGE;
        }
    }

    /// One map entry: its key then its value, each once (as every encoder writes them), and a
    /// key not given before.
    fn map_entry<'b>(
        &mut self,
        fit: &mut Fit,
        field: &FieldDescriptor,
        payload: &'b [u8],
        depth: usize,
        keys: &mut HashSet<(u32, MapKey<'b>)>,
    ) {
        use points::*;
        let Kind::Message(entry) = field.kind() else {
            return;
        };
        let records: Result<Vec<Record<'b>>, WireError> =
            Records::new(payload, 0, depth + 1).take(3).collect();
        let (key_field, value_field) = (entry.map_entry_key_field(), entry.map_entry_value_field());
        let [key, value] = match records.as_deref() {
            Ok([k, v])
                if k.number == 1
                    && v.number == 2
                    && k.wire_type == field_wire_type(&key_field)
                    && v.wire_type == field_wire_type(&value_field)
                    && is_shortest(k)
                    && is_shortest(v) =>
            {
                [*k, *v]
            }
            _ => {
                fit.misread += 1;
                fit.score += BAD_NESTED_MESSAGE;
                return;
            }
        };
        fit.score += NESTED_MESSAGE + 2.0 * KNOWN_FIELD;
        let slot = Slot { implicit: false, utf8: entry.parent_file().syntax() == Syntax::Proto3 };
        self.value(fit, &key_field.kind(), key.value, slot, depth + 1);
        self.value(fit, &value_field.kind(), value.value, slot, depth + 1);
        let k = match key.value {
            WireValue::Varint(v) | WireValue::I64(v) => MapKey::Number(v),
            WireValue::I32(v) => MapKey::Number(u64::from(v)),
            WireValue::Len(d) | WireValue::Group(d) => MapKey::Bytes(d),
        };
        if !keys.insert((field.number(), k)) {
            // A key given twice keeps only its last value.
            fit.misread += 1;
        }
    }
}

/// True when the record's tag, length and varint value are in their shortest form, as every
/// encoder writes them.
fn is_shortest(r: &Record<'_>) -> bool {
    let tag = (u64::from(r.number) << 3) | u64::from(r.wire_type.bits());
    let header = match r.value {
        WireValue::Len(d) => varint_len(tag) + varint_len(d.len() as u64),
        _ => varint_len(tag),
    };
    r.value_offset - r.offset == header
        && match r.value {
            WireValue::Varint(v) => r.end - r.value_offset == varint_len(v),
            _ => true,
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranking(proto: &str, hex: &str) -> Ranking {
        let dir = tempfile::tempdir().expect("tmp");
        let file = dir.path().join("t.proto");
        std::fs::write(&file, proto).expect("write");
        let mut schema = Schema::default();
        crate::schema::load_proto(&mut schema, &file, &[]).expect("compile");
        let bytes: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
            .collect();
        rank(&schema, &bytes).expect("rank")
    }

    fn fit(r: &Ranking, name: &str) -> Fit {
        r.candidates.iter().find(|c| c.desc.full_name() == name).map(|c| c.fit).expect("candidate")
    }

    const PROTO: &str = r#"syntax = "proto3";
package t;
message Str { string a = 1; }
message Byt { bytes a = 1; }
message Rep { repeated string a = 1; }
message Num { int32 a = 1; }
message U32 { uint32 a = 1; }
message Flag { bool a = 1; }
message Nums { repeated int32 a = 1; }
message Color { enum C { RED = 0; BLUE = 1; } C a = 1; }
message Sub { Str a = 1; }
message Pair { oneof o { string a = 1; string b = 2; } }
message Map { map<string, string> a = 1; }
"#;

    #[test]
    fn values_lost_on_encoding_are_misread() {
        // An empty string: a proto3 string field would not send it; a message field would.
        let r = ranking(PROTO, "0a00");
        assert!(!fit(&r, "t.Str").is_exact());
        assert!(fit(&r, "t.Sub").is_exact());
        assert!(fit(&r, "t.Rep").is_exact());
        // A field twice: only repeated fields keep both.
        let r = ranking(PROTO, "0a01610a0162");
        assert!(!fit(&r, "t.Str").is_exact());
        assert!(fit(&r, "t.Rep").is_exact());
        // Invalid UTF-8: bytes only.
        let r = ranking(PROTO, "0a01ff");
        assert!(!fit(&r, "t.Str").is_exact());
        assert!(fit(&r, "t.Byt").is_exact());
    }

    #[test]
    fn numbers_out_of_range_and_packing() {
        // 2^31 as a 5-byte varint: a uint32, not an int32 (which would be sign-extended).
        let r = ranking(PROTO, "088080808008");
        assert!(!fit(&r, "t.Num").is_exact());
        assert!(fit(&r, "t.U32").is_exact());
        // -1 as int32 takes ten bytes; a uint32 cannot hold it.
        let r = ranking(PROTO, "08ffffffffffffffffff01");
        assert!(fit(&r, "t.Num").is_exact());
        assert!(!fit(&r, "t.U32").is_exact());
        // 2 is no bool.
        let r = ranking(PROTO, "0802");
        assert!(!fit(&r, "t.Flag").is_exact());
        // An unpacked repeated int32 would be re-encoded packed; a packed run is fine.
        let r = ranking(PROTO, "0801");
        assert!(!fit(&r, "t.Nums").is_exact());
        let r = ranking(PROTO, "0a020102");
        assert!(fit(&r, "t.Nums").is_exact());
    }

    #[test]
    fn enums_oneofs_and_maps() {
        let r = ranking(PROTO, "0807");
        let c = fit(&r, "t.Color");
        assert!(c.is_exact());
        assert_eq!(c.undeclared_enums, 1);
        assert_eq!(c.verdict(), "exact, 1 undeclared enum value");
        // Two members of one oneof: the second clears the first.
        let r = ranking(PROTO, "0a0161120162");
        assert!(!fit(&r, "t.Pair").is_exact());
        // Map entries: key then value; a key twice loses a value; entry order does not count.
        let r = ranking(PROTO, "0a060a016212017a0a060a0161120179");
        assert!(fit(&r, "t.Map").is_exact());
        let r = ranking(PROTO, "0a060a016112017a0a060a0161120179");
        assert!(!fit(&r, "t.Map").is_exact());
        let r = ranking(PROTO, "0a03120179");
        assert!(!fit(&r, "t.Map").is_exact());
    }

    #[test]
    fn ties_are_reported_and_the_only_exact_reader_named() {
        // A uint32 beyond int32: only U32 reads it exactly.
        let r = ranking(PROTO, "088080808008");
        assert_eq!(r.best().map(|c| c.desc.full_name()), Some("t.U32"));
        // A small number fits several types equally.
        let r = ranking(PROTO, "0801");
        assert!(r.best().is_none());
        assert!(r.tied().iter().any(|c| c.desc.full_name() == "t.Num"));
        // A non-shortest varint is read exactly by no type: the closest is named.
        let r = ranking(PROTO, "088100");
        assert!(!r.is_exact());
    }
}

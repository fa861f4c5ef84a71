//! Guessing the type of a message: every known message type is scored by how well the bytes
//! fit it (known field numbers, wire types, valid UTF-8, enum values, required fields present),
//! and the best is used only when no other type scores the same.

use prost_reflect::{Kind, MessageDescriptor};

use crate::schema::{Schema, is_packable};
use crate::text::field_wire_type;
use crate::wire::{MAX_DEPTH, Records, WireError, WireValue};

/// How many records are looked at per candidate, so huge inputs are ranked on a prefix.
const RECORD_BUDGET: usize = 20_000;

/// Scores closer than this are a tie: the evidence between them (one REQUIRED field, say) is
/// too thin to name one type over the other.
const TIE_MARGIN: f64 = 1.01;

/// One candidate type and its score.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// The type.
    pub desc: MessageDescriptor,
    /// Higher is a better fit.
    pub score: f64,
}

/// The ranking of every candidate type.
#[derive(Debug, Clone)]
pub struct Ranking {
    /// Candidates, best first (ties keep the schema's order).
    pub candidates: Vec<Candidate>,
}

impl Ranking {
    /// The best type, unless another type has the same score.
    pub fn best(&self) -> Option<&Candidate> {
        let first = self.candidates.first()?;
        match self.candidates.get(1) {
            Some(second) if (first.score - second.score).abs() < TIE_MARGIN => None,
            _ => Some(first),
        }
    }

    /// The names of the tied types, at most `max` of them and a count of the rest.
    pub fn tied_names(&self, max: usize) -> String {
        let tied = self.tied();
        let mut s = tied
            .iter()
            .take(max)
            .map(|c| c.desc.full_name())
            .collect::<Vec<_>>()
            .join(", ");
        if tied.len() > max {
            s.push_str(&format!(" and {} more", tied.len() - max));
        }
        s
    }

    /// The types that share the top score.
    pub fn tied(&self) -> Vec<&Candidate> {
        let Some(first) = self.candidates.first() else {
            return Vec::new();
        };
        self.candidates
            .iter()
            .take_while(|c| (first.score - c.score).abs() < TIE_MARGIN)
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
    let mut budget = RECORD_BUDGET;
    for r in Records::new(bytes, 0, 0) {
        r?;
        budget -= 1;
        if budget == 0 {
            break;
        }
    }
    let mut candidates: Vec<Candidate> = schema
        .candidates()
        .into_iter()
        .map(|desc| {
            let mut budget = RECORD_BUDGET;
            let score = score(schema, &desc, bytes, 0, &mut budget).unwrap_or(f64::NEG_INFINITY);
            Candidate { desc, score }
        })
        .collect();
    candidates.sort_by(|a, b| b.score.total_cmp(&a.score));
    Ok(Ranking { candidates })
}

/// Points for each piece of evidence. Unknown fields and wire-type mismatches weigh most; a
/// nested payload that parses as its message type counts as much as a top-level field.
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
    pub const ABSENT: f64 = -0.5;
    pub const REQUIRED_PRESENT: f64 = 1.0;
    pub const REQUIRED_MISSING: f64 = -2.0;
}

/// How well `bytes` fit `desc`; `None` when the bytes are not a message at all.
fn score(
    schema: &Schema,
    desc: &MessageDescriptor,
    bytes: &[u8],
    depth: usize,
    budget: &mut usize,
) -> Option<f64> {
    use points::*;
    if depth > MAX_DEPTH {
        return None;
    }
    let mut total = 0.0;
    let mut seen: Vec<u32> = Vec::new();
    for r in Records::new(bytes, 0, depth) {
        if *budget == 0 {
            break;
        }
        *budget -= 1;
        let r = r.ok()?;
        let Some(field) = desc.get_field(r.number) else {
            total += UNKNOWN_FIELD;
            continue;
        };
        let kind = field.kind();
        let wire_ok = r.wire_type == field_wire_type(&field)
            || (field.is_list() && is_packable(&kind) && matches!(r.value, WireValue::Len(_)));
        if !wire_ok {
            total += WRONG_WIRE_TYPE;
            continue;
        }
        if seen.contains(&r.number) {
            if !field.is_list() {
                total += SINGULAR_REPEATED;
            }
        } else {
            seen.push(r.number);
            total += KNOWN_FIELD;
        }
        match (&kind, r.value) {
            (Kind::String, WireValue::Len(d)) => {
                total += match std::str::from_utf8(d) {
                    Err(_) => INVALID_UTF8,
                    Ok(s)
                        if s.bytes()
                            .any(|b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r')) =>
                    {
                        CONTROL_CHARS
                    }
                    Ok(_) => TEXT_STRING,
                };
            }
            (Kind::Message(m), WireValue::Len(d) | WireValue::Group(d)) => {
                match score(schema, m, d, depth + 1, budget) {
                    Some(s) => total += NESTED_MESSAGE + s,
                    None => total += BAD_NESTED_MESSAGE,
                }
            }
            (Kind::Enum(e), WireValue::Varint(v)) => {
                total += if e.get_value(v as i32).is_some() {
                    ENUM_KNOWN
                } else {
                    ENUM_UNKNOWN
                };
            }
            (Kind::Bool, WireValue::Varint(v)) => total += if v <= 1 { BOOL_OK } else { BOOL_ODD },
            (Kind::Int32 | Kind::Uint32 | Kind::Sint32, WireValue::Varint(v)) => {
                let fits = match kind {
                    Kind::Int32 => i32::try_from(v as i64).is_ok(),
                    _ => u32::try_from(v).is_ok(),
                };
                if !fits {
                    total += OUT_OF_RANGE;
                }
            }
            _ => {}
        }
    }
    let facts = schema.message_facts(desc);
    for f in desc.fields() {
        let present = seen.contains(&f.number());
        let required = facts
            .and_then(|m| m.fields.get(&f.number()))
            .is_some_and(|ff| ff.presence == csikit_spec::Presence::Required)
            && f.containing_oneof().is_none_or(|o| o.is_synthetic());
        total += match (required, present) {
            (true, true) => REQUIRED_PRESENT,
            (true, false) => REQUIRED_MISSING,
            (false, false) => ABSENT,
            (false, true) => 0.0,
        };
    }
    if let Some(facts) = facts {
        for o in &facts.required_oneofs {
            if let Some(oneof) = desc.oneofs().find(|x| x.name() == o) {
                total += if oneof.fields().any(|f| seen.contains(&f.number())) {
                    REQUIRED_PRESENT
                } else {
                    REQUIRED_MISSING
                };
            }
        }
    }
    Some(total)
}

//! Redaction that never depends on a guess. When the type of a message is not certain (no
//! `--type`, and the bytes did not come with a method that names it), the positions to hide are
//! not those of the detected type but those that *any* type that could have produced the bytes
//! marks secret: a value is shown only when no such type puts a secret there.
//!
//! The types that could have produced the bytes are the ones that read them exactly (an encoder
//! of that type writes nothing else); when no type does (damaged bytes, another version of the
//! schema), every type in the schema counts. Each one walks the bytes, and the byte ranges of
//! the values it would hide (secret fields, a secret map's values but not its keys) are pooled
//! into a [`SecretMask`]. The printers hide every value whose bytes overlap the mask, whatever
//! type they print the message as; [`redact_bytes`] rewrites a message so the decoders that do
//! not walk the bytes themselves (JSON, diffs) hide them too.

use std::ops::Range;

use prost_reflect::{Kind, MessageDescriptor};

use crate::detect;
use crate::redact::REDACTED;
use crate::schema::Schema;
use crate::wire::{self, MAX_DEPTH, Records, WireError, WireType, WireValue};

/// Byte ranges of a message (offsets from its first byte) that hold a secret value under some
/// type that could have produced it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SecretMask {
    ranges: Vec<Range<usize>>,
}

impl SecretMask {
    /// The mask of the types that could have produced `bytes`: those reading them exactly, or
    /// every type of the schema when none does. Empty input holds no value, so its mask is empty.
    ///
    /// # Errors
    ///
    /// When the bytes are not protobuf at all (then nothing is printed from them either).
    pub fn uncertain(schema: &Schema, bytes: &[u8]) -> Result<SecretMask, WireError> {
        if bytes.is_empty() {
            return Ok(SecretMask::default());
        }
        let ranking = detect::rank(schema, bytes)?;
        let exact: Vec<&MessageDescriptor> =
            ranking.candidates.iter().filter(|c| c.fit.is_exact()).map(|c| &c.desc).collect();
        let all;
        let types: Vec<&MessageDescriptor> = if exact.is_empty() {
            all = schema.candidates();
            all.iter().collect()
        } else {
            exact
        };
        Ok(SecretMask::of_types(schema, bytes, types))
    }

    /// The mask of exactly these types.
    pub fn of_types<'a>(
        schema: &Schema,
        bytes: &[u8],
        types: impl IntoIterator<Item = &'a MessageDescriptor>,
    ) -> SecretMask {
        let mut ranges = Vec::new();
        for desc in types {
            collect(schema, desc, bytes, 0, 0, &mut ranges);
        }
        ranges.sort_by_key(|r| (r.start, r.end));
        // Merge overlapping and touching ranges.
        let mut merged: Vec<Range<usize>> = Vec::with_capacity(ranges.len());
        for r in ranges {
            match merged.last_mut() {
                Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
                _ => merged.push(r),
            }
        }
        SecretMask { ranges: merged }
    }

    /// True when no position is hidden.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// True when some byte of `range` is hidden.
    pub fn overlaps(&self, range: Range<usize>) -> bool {
        // The first range ending after `range.start`, if it starts before `range.end`.
        let i = self.ranges.partition_point(|r| r.end <= range.start);
        !range.is_empty() && self.ranges.get(i).is_some_and(|r| r.start < range.end)
    }

    /// True when every byte of `range` is hidden (ranges are merged, so one holds it all).
    pub fn covers(&self, range: Range<usize>) -> bool {
        let i = self.ranges.partition_point(|r| r.end <= range.start);
        self.ranges.get(i).is_some_and(|r| r.start <= range.start && range.end <= r.end)
    }

    /// The hidden ranges, sorted and disjoint.
    pub fn ranges(&self) -> &[Range<usize>] {
        &self.ranges
    }
}

/// The secret values `bytes` holds as a message of type `desc`, as text (values that are not
/// UTF-8 left out), sorted, each once: what must be scrubbed from anything printed about a call
/// that sent them (the runtime's `redact::scrub`).
pub fn secret_strings(schema: &Schema, desc: &MessageDescriptor, bytes: &[u8]) -> Vec<String> {
    let mask = SecretMask::of_types(schema, bytes, [desc]);
    let mut out: Vec<String> = mask
        .ranges()
        .iter()
        .filter_map(|r| std::str::from_utf8(bytes.get(r.clone())?).ok())
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The value range of a record, from the first byte of the message at `at`.
fn value_range(r: &wire::Record<'_>) -> Range<usize> {
    match r.value {
        WireValue::Len(d) | WireValue::Group(d) => r.value_offset..r.value_offset + d.len(),
        _ => r.value_offset..r.end,
    }
}

/// The ranges `desc` would hide in `bytes` (which start at offset `at` of the whole message).
fn collect(
    schema: &Schema,
    desc: &MessageDescriptor,
    bytes: &[u8],
    at: usize,
    depth: usize,
    out: &mut Vec<Range<usize>>,
) {
    if depth >= MAX_DEPTH {
        return;
    }
    for r in Records::new(bytes, at, depth) {
        let Ok(r) = r else {
            // The type cannot read the rest as a message: it puts no field there.
            return;
        };
        let Some(field) = desc.get_field(r.number) else { continue };
        let nested = match (&r.value, field.kind()) {
            (WireValue::Len(d) | WireValue::Group(d), Kind::Message(m)) => Some((*d, m)),
            _ => None,
        };
        if schema.is_secret(&field) {
            match nested {
                // A secret map: its values are hidden, its keys stay visible.
                Some((d, entry)) if entry.is_map_entry() => {
                    let start = out.len();
                    let mut whole = false;
                    for e in Records::new(d, r.value_offset, depth + 1) {
                        match e {
                            Ok(e) if e.number == 1 => {}
                            Ok(e) => out.push(value_range(&e)),
                            Err(_) => whole = true,
                        }
                    }
                    if whole {
                        out.truncate(start);
                        out.push(value_range(&r));
                    }
                }
                _ => out.push(value_range(&r)),
            }
        } else if let Some((d, m)) = nested {
            collect(schema, &m, d, r.value_offset, depth + 1, out);
        }
    }
}

/// `bytes` read as `desc`, with every value the mask hides replaced: strings and bytes by
/// `<redacted>`, numbers by zero; the structure around them is rewritten with the new lengths.
/// A nested message only partly hidden is rewritten inside; one wholly hidden is emptied.
/// Unknown fields are hidden like the rest when they overlap the mask.
pub fn redact_bytes(desc: &MessageDescriptor, bytes: &[u8], mask: &SecretMask) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    rewrite(Some(desc), bytes, 0, 0, mask, &mut out);
    out
}

fn rewrite(
    desc: Option<&MessageDescriptor>,
    bytes: &[u8],
    at: usize,
    depth: usize,
    mask: &SecretMask,
    out: &mut Vec<u8>,
) {
    let mut copied = 0;
    for r in Records::new(bytes, at, depth) {
        let Ok(r) = r else {
            // Bytes that do not parse are hidden when the mask touches them, else kept.
            if !mask.overlaps(at + copied..at + bytes.len()) {
                out.extend_from_slice(&bytes[copied..]);
            }
            return;
        };
        let (start, end) = (r.offset - at, r.end - at);
        let range = value_range(&r);
        if !mask.overlaps(range.clone()) {
            out.extend_from_slice(&bytes[start..end]);
            copied = end;
            continue;
        }
        let tag = |out: &mut Vec<u8>, wt: WireType| {
            wire::put_varint(out, u64::from(r.number) << 3 | wt as u64);
        };
        let kind = desc.and_then(|d| d.get_field(r.number)).map(|f| f.kind());
        let sub = match &kind {
            Some(Kind::Message(m)) => Some(m.clone()),
            _ => None,
        };
        match r.value {
            WireValue::Varint(_) => {
                tag(out, WireType::Varint);
                out.push(0);
            }
            WireValue::I32(_) => {
                tag(out, WireType::I32);
                out.extend_from_slice(&[0; 4]);
            }
            WireValue::I64(_) => {
                tag(out, WireType::I64);
                out.extend_from_slice(&[0; 8]);
            }
            WireValue::Len(d) => {
                tag(out, WireType::Len);
                let inner = match &sub {
                    Some(m) if !mask.covers(range.clone()) => {
                        let mut inner = Vec::new();
                        rewrite(Some(m), d, r.value_offset, depth + 1, mask, &mut inner);
                        inner
                    }
                    Some(_) => Vec::new(),
                    // Text where text may be; a packed list of numbers is emptied instead.
                    None if matches!(kind, None | Some(Kind::String | Kind::Bytes)) => {
                        REDACTED.as_bytes().to_vec()
                    }
                    None => Vec::new(),
                };
                wire::put_varint(out, inner.len() as u64);
                out.extend_from_slice(&inner);
            }
            WireValue::Group(d) => {
                tag(out, WireType::StartGroup);
                if let Some(m) = &sub
                    && !mask.covers(range.clone())
                {
                    rewrite(Some(m), d, r.value_offset, depth + 1, mask, out);
                }
                tag(out, WireType::EndGroup);
            }
        }
        copied = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlaps_and_covers_follow_merged_ranges() {
        let mut ranges = vec![10..12, 4..6, 5..8, 12..14];
        ranges.sort_by_key(|r| r.start);
        let mut merged: Vec<Range<usize>> = Vec::new();
        for r in ranges {
            match merged.last_mut() {
                Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
                _ => merged.push(r),
            }
        }
        let mask = SecretMask { ranges: merged };
        assert_eq!(mask.ranges(), &[4..8, 10..14]);
        assert!(mask.overlaps(7..9) && mask.overlaps(0..5) && mask.overlaps(13..20));
        assert!(!mask.overlaps(8..10) && !mask.overlaps(0..4) && !mask.overlaps(14..20));
        assert!(!mask.overlaps(5..5), "an empty value holds nothing");
        assert!(mask.covers(4..8) && mask.covers(10..14) && mask.covers(11..12));
        assert!(!mask.covers(3..8) && !mask.covers(6..11));
        assert!(SecretMask::default().is_empty() && !SecretMask::default().overlaps(0..100));
    }
}

//! What the call's thread does with an event: its time, its metadata and its fields' values
//! copied into a [`Batch`] as they are, numbers as numbers and strings as bytes, so the text is
//! made on the writer's thread. Only a `Debug` value (the message's format arguments, a `?field`)
//! has to become text here, since it borrows from the event.

use std::fmt;
use std::io::Write as _;
use std::time::SystemTime;

use tracing::Metadata;
use tracing::field::{Field, Visit};

/// How a value was recorded, the byte before its payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Kind {
    /// Eight bytes, little-endian.
    U64 = 0,
    /// Eight bytes, little-endian.
    I64 = 1,
    /// Eight bytes, little-endian bits.
    F64 = 2,
    /// One byte, 0 or 1.
    Bool = 3,
    /// A length (four bytes) and the string's bytes: printed quoted, as `Debug` prints a `str`.
    Str = 4,
    /// A length and the text the value's `Debug` wrote: printed as it is.
    Text = 5,
}

impl Kind {
    pub(crate) fn from_byte(b: u8) -> Option<Kind> {
        Some(match b {
            0 => Kind::U64,
            1 => Kind::I64,
            2 => Kind::F64,
            3 => Kind::Bool,
            4 => Kind::Str,
            5 => Kind::Text,
            _ => return None,
        })
    }
}

/// One span of an event's scope, or the event itself: its metadata (names, level, target) and
/// its values, `bytes[start..end]` of the batch.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Part {
    pub(crate) meta: &'static Metadata<'static>,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// One event: when, and its parts (`parts[start..end]` of the batch): the spans it is in from
/// the outermost, then the event.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Line {
    pub(crate) time: SystemTime,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// Events as captured, one after another. Its `Debug` shows counts only: values may be anything
/// a driver logged.
#[derive(Default)]
pub(crate) struct Batch {
    pub(crate) lines: Vec<Line>,
    pub(crate) parts: Vec<Part>,
    pub(crate) bytes: Vec<u8>,
}

impl fmt::Debug for Batch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Batch")
            .field("lines", &self.lines.len())
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

/// What a batch keeps of its room once emptied: a burst's worth; beyond that it is given back.
pub(crate) const KEPT_BYTES: usize = 1 << 20;

impl Batch {
    pub(crate) fn len(&self) -> usize {
        self.lines.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Empties it, keeping its room up to [`KEPT_BYTES`].
    pub(crate) fn clear(&mut self) {
        self.clear_keeping(KEPT_BYTES);
    }

    /// Empties it, keeping at most `kept` bytes of room for values.
    pub(crate) fn clear_keeping(&mut self, kept: usize) {
        self.lines.clear();
        self.parts.clear();
        self.bytes.clear();
        if self.bytes.capacity() > kept {
            self.bytes.shrink_to(kept);
        }
    }

    /// Starts a line at `time`; its parts follow.
    pub(crate) fn begin(&mut self, time: SystemTime) {
        let at = self.parts.len();
        self.lines.push(Line { time, start: at, end: at });
    }

    /// Adds a part to the line begun last: `meta` and the values `record` writes.
    pub(crate) fn part(
        &mut self,
        meta: &'static Metadata<'static>,
        record: impl FnOnce(&mut Vec<u8>),
    ) {
        let start = self.bytes.len();
        record(&mut self.bytes);
        self.parts.push(Part { meta, start, end: self.bytes.len() });
        if let Some(line) = self.lines.last_mut() {
            line.end = self.parts.len();
        }
    }

    /// Turns the last `n` parts of the line begun last around (a scope is walked from the
    /// innermost span; a line lists spans from the outermost).
    pub(crate) fn reverse_last_parts(&mut self, n: usize) {
        let end = self.parts.len();
        self.parts[end - n.min(end)..].reverse();
    }

    /// Appends every line of `other`; `other` is left as it was.
    pub(crate) fn append(&mut self, other: &Batch) {
        let (parts_at, bytes_at) = (self.parts.len(), self.bytes.len());
        self.bytes.extend_from_slice(&other.bytes);
        self.parts.extend(other.parts.iter().map(|p| Part {
            meta: p.meta,
            start: p.start + bytes_at,
            end: p.end + bytes_at,
        }));
        self.lines.extend(other.lines.iter().map(|l| Line {
            time: l.time,
            start: l.start + parts_at,
            end: l.end + parts_at,
        }));
    }
}

/// Writes the values a `tracing` visitor is shown into a part's bytes: per value, the field's
/// index in its metadata, the [`Kind`], the payload.
pub(crate) struct Encoder<'a>(pub(crate) &'a mut Vec<u8>);

impl Encoder<'_> {
    fn head(&mut self, field: &Field, kind: Kind) {
        // A callsite has at most 32 fields (tracing's limit), so the index fits a byte.
        self.0.push(u8::try_from(field.index()).unwrap_or(u8::MAX));
        self.0.push(kind as u8);
    }

    /// A length-prefixed run of bytes written by `write`.
    fn sized(&mut self, field: &Field, kind: Kind, write: impl FnOnce(&mut Vec<u8>)) {
        self.head(field, kind);
        let at = self.0.len();
        self.0.extend_from_slice(&[0; 4]);
        write(self.0);
        let len = u32::try_from(self.0.len() - at - 4).unwrap_or(u32::MAX);
        self.0[at..at + 4].copy_from_slice(&len.to_le_bytes());
    }
}

impl Visit for Encoder<'_> {
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.head(field, Kind::U64);
        self.0.extend_from_slice(&value.to_le_bytes());
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.head(field, Kind::I64);
        self.0.extend_from_slice(&value.to_le_bytes());
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.head(field, Kind::F64);
        self.0.extend_from_slice(&value.to_bits().to_le_bytes());
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.head(field, Kind::Bool);
        self.0.push(u8::from(value));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.sized(field, Kind::Str, |out| out.extend_from_slice(value.as_bytes()));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        // Writing into a Vec cannot fail; a Debug impl that returns an error leaves what it
        // wrote.
        self.sized(field, Kind::Text, |out| drop(write!(out, "{value:?}")));
    }
}

/// One value read back from a part's bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Value<'a> {
    U64(u64),
    I64(i64),
    F64(f64),
    Bool(bool),
    Str(&'a [u8]),
    Text(&'a [u8]),
}

/// Reads back what [`Encoder`] wrote: (field index, value) pairs. Stops at the first byte it
/// cannot read (none, unless the bytes were not an encoder's).
pub(crate) struct Values<'a> {
    bytes: &'a [u8],
}

impl<'a> Values<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Self { bytes }
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = self.bytes.split_at_checked(n)?;
        self.bytes = rest;
        Some(head)
    }

    fn word(&mut self) -> Option<[u8; 8]> {
        self.take(8)?.try_into().ok()
    }

    fn sized(&mut self) -> Option<&'a [u8]> {
        let len: [u8; 4] = self.take(4)?.try_into().ok()?;
        self.take(usize::try_from(u32::from_le_bytes(len)).ok()?)
    }
}

impl<'a> Iterator for Values<'a> {
    type Item = (usize, Value<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        let head = self.take(2)?;
        let index = usize::from(head[0]);
        let value = match Kind::from_byte(head[1])? {
            Kind::U64 => Value::U64(u64::from_le_bytes(self.word()?)),
            Kind::I64 => Value::I64(i64::from_le_bytes(self.word()?)),
            Kind::F64 => Value::F64(f64::from_bits(u64::from_le_bytes(self.word()?))),
            Kind::Bool => Value::Bool(self.take(1)?[0] != 0),
            Kind::Str => Value::Str(self.sized()?),
            Kind::Text => Value::Text(self.sized()?),
        };
        Some((index, value))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
pub(crate) mod tests {
    use super::*;

    /// A callsite of its own, for metadata and fields the tests can record.
    pub(crate) fn metadata() -> &'static Metadata<'static> {
        static SITE: tracing::callsite::DefaultCallsite =
            tracing::callsite::DefaultCallsite::new(&META);
        static META: Metadata<'static> = tracing::metadata! {
            name: "test",
            target: "capture",
            level: tracing::Level::INFO,
            fields: &["message", "n", "s", "d", "neg", "f", "b"],
            callsite: &SITE,
            kind: tracing::metadata::Kind::EVENT,
        };
        &META
    }

    #[test]
    fn values_read_back_as_they_were_recorded() {
        let meta = metadata();
        let field = |name: &str| meta.fields().field(name).unwrap();
        let mut bytes = Vec::new();
        let mut enc = Encoder(&mut bytes);
        enc.record_u64(&field("n"), 42);
        enc.record_str(&field("s"), "vol\n1");
        enc.record_debug(&field("d"), &Some(7));
        enc.record_i64(&field("neg"), -3);
        enc.record_f64(&field("f"), 1.5);
        enc.record_bool(&field("b"), true);
        let read: Vec<_> = Values::new(&bytes).collect();
        assert_eq!(
            read,
            [
                (1, Value::U64(42)),
                (2, Value::Str(b"vol\n1")),
                (3, Value::Text(b"Some(7)")),
                (4, Value::I64(-3)),
                (5, Value::F64(1.5)),
                (6, Value::Bool(true)),
            ]
        );
        // Cut anywhere, the reader stops at the last whole value, never past the bytes.
        for cut in 0..bytes.len() {
            assert!(Values::new(&bytes[..cut]).count() < read.len());
        }
    }

    #[test]
    fn appended_lines_keep_their_parts_and_values() {
        let meta = metadata();
        let n = meta.fields().field("n").unwrap();
        let mut one = Batch::default();
        one.begin(SystemTime::UNIX_EPOCH);
        one.part(meta, |out| Encoder(out).record_u64(&n, 1));
        one.part(meta, |out| Encoder(out).record_u64(&n, 2));
        one.reverse_last_parts(2);
        let mut all = Batch::default();
        all.append(&one);
        all.append(&one);
        assert_eq!(all.len(), 2);
        let second = all.lines[1];
        let values: Vec<_> = all.parts[second.start..second.end]
            .iter()
            .map(|p| Values::new(&all.bytes[p.start..p.end]).next().unwrap().1)
            .collect();
        assert_eq!(values, [Value::U64(2), Value::U64(1)]);
        assert_eq!(format!("{all:?}"), "Batch { lines: 2, bytes: 40 }");
        all.clear();
        assert!(all.is_empty());
    }
}

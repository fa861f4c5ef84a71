//! The wire layout without a schema, like protoscope: one line per record with its byte offset,
//! field number, wire type and length, nested where a payload parses as a message.
//!
//! With a type, the layout is the same but field names are added as comments and secret values
//! are redacted.

use std::io::{self, Write};

use prost_reflect::{Kind, MessageDescriptor};

use crate::mask::SecretMask;
use crate::redact::REDACTED;
use crate::schema::Schema;
use crate::text::write_string;
use crate::wire::{self, Records, WireError, WireValue};

/// Prints the layout of `bytes` (starting at absolute offset `base`).
pub struct RawPrinter<'s, W> {
    out: W,
    schema: Option<&'s Schema>,
    show_secrets: bool,
    mask: Option<&'s SecretMask>,
    /// The offset of the message being printed (the mask counts from its first byte).
    base: usize,
}

/// Why the layout could not be printed.
#[derive(Debug)]
pub enum RawError {
    /// The bytes are not protobuf.
    Wire(WireError),
    /// Writing failed.
    Io(io::Error),
}

impl From<io::Error> for RawError {
    fn from(e: io::Error) -> Self {
        RawError::Io(e)
    }
}

impl From<WireError> for RawError {
    fn from(e: WireError) -> Self {
        RawError::Wire(e)
    }
}

impl std::fmt::Display for RawError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RawError::Wire(e) => e.fmt(f),
            RawError::Io(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for RawError {}

impl<'s, W: Write> RawPrinter<'s, W> {
    /// A printer; with a schema and a type, names are shown and secrets redacted.
    pub fn new(out: W, schema: Option<&'s Schema>, show_secrets: bool) -> Self {
        RawPrinter { out, schema, show_secrets, mask: None, base: 0 }
    }

    /// Also hides every value whose bytes the mask covers (the positions any type that could
    /// have produced the bytes marks secret): what `raw` does when the type is not certain.
    #[must_use]
    pub fn with_mask(mut self, mask: &'s SecretMask) -> Self {
        if !self.show_secrets {
            self.mask = Some(mask);
        }
        self
    }

    /// Checks the whole message, then prints it (nothing is printed when the bytes are bad).
    ///
    /// # Errors
    ///
    /// The first bad record, at its absolute offset; or a write error.
    pub fn print(
        &mut self,
        bytes: &[u8],
        base: usize,
        desc: Option<&MessageDescriptor>,
    ) -> Result<(), RawError> {
        wire::check_message(bytes, base, 0)?;
        self.base = base;
        self.records(bytes, base, 0, desc, false)
    }

    fn line_start(&mut self, offset: Option<usize>, depth: usize) -> io::Result<()> {
        // Hand-rolled number formatting: `write!` dominates the time on large inputs.
        let mut buf = [b' '; 10 + 2 * 64];
        if let Some(o) = offset {
            let mut digits = [0u8; 20];
            let d = decimal(o as u64, &mut digits);
            let width = d.len().max(8);
            buf[width - d.len()..width].copy_from_slice(d);
        }
        let indent = 10 + 2 * depth.min(64);
        self.out.write_all(&buf[..indent.min(buf.len())])?;
        for _ in 64..depth {
            self.out.write_all(b"  ")?;
        }
        Ok(())
    }

    fn number(&mut self, v: u64) -> io::Result<()> {
        let mut digits = [0u8; 20];
        self.out.write_all(decimal(v, &mut digits))
    }

    /// A group or message value: ` {`, its note, its records one level deeper, `}`.
    fn nested(
        &mut self,
        bytes: &[u8],
        base: usize,
        depth: usize,
        desc: Option<&MessageDescriptor>,
        note: Option<&str>,
        secret: bool,
    ) -> Result<(), RawError> {
        self.out.write_all(b" {")?;
        self.note(note)?;
        self.records(bytes, base, depth + 1, desc, secret)?;
        self.line_start(None, depth)?;
        self.out.write_all(b"}\n")?;
        Ok(())
    }

    fn records(
        &mut self,
        bytes: &[u8],
        base: usize,
        depth: usize,
        desc: Option<&MessageDescriptor>,
        secret: bool,
    ) -> Result<(), RawError> {
        for r in Records::new(bytes, base, depth) {
            let r = r?;
            let field = desc.and_then(|d| d.get_field(r.number));
            let field_secret = match (self.schema, &field) {
                (Some(s), Some(f)) => s.is_secret(f) && !self.show_secrets,
                _ => false,
            };
            let is_key =
                desc.is_some_and(MessageDescriptor::is_map_entry) && r.number == 1 && !field_secret;
            let value = match r.value {
                WireValue::Len(d) | WireValue::Group(d) => {
                    r.value_offset - self.base..r.value_offset - self.base + d.len()
                }
                _ => r.value_offset - self.base..r.end - self.base,
            };
            let masked = self.mask.is_some_and(|m| m.overlaps(value.clone()));
            let wholly_masked = masked && self.mask.is_some_and(|m| m.covers(value));
            // A value partly hidden is shown nested when it parses (its parts are checked one by
            // one), else hidden whole.
            // Whether a payload would be printed as a nested message (then a value partly
            // hidden is checked part by part), as the `Len` arm below decides.
            let would_nest = match r.value {
                WireValue::Group(_) => true,
                WireValue::Len(d) => {
                    let typed = match &field {
                        Some(f) => matches!(f.kind(), Kind::Message(_)) && !d.is_empty(),
                        None => true,
                    };
                    typed && wire::looks_like_message(d, depth + 1)
                }
                _ => false,
            };
            let redact =
                ((secret || field_secret) && !is_key) || wholly_masked || (masked && !would_nest);
            let sub = field.as_ref().and_then(|f| match f.kind() {
                Kind::Message(m) => Some(m),
                _ => None,
            });
            self.line_start(Some(r.offset), depth)?;
            self.number(u64::from(r.number))?;
            self.out.write_all(b":")?;
            self.out.write_all(r.wire_type.name().as_bytes())?;
            let note = field.as_ref().map(|f| f.name().to_owned());
            match r.value {
                WireValue::Varint(v) if redact => {
                    let _ = v;
                    write!(self.out, " {REDACTED}")?;
                }
                WireValue::Varint(v) => {
                    self.out.write_all(b" ")?;
                    self.number(v)?;
                    if v >= 1 << 63 {
                        write!(self.out, "  # int64 {}", v as i64)?;
                    }
                }
                WireValue::I32(_) | WireValue::I64(_) if redact => write!(self.out, " {REDACTED}")?,
                WireValue::I32(v) => {
                    write!(self.out, " 0x{v:08x}  # float {:?}", f32::from_bits(v))?
                }
                WireValue::I64(v) => {
                    write!(self.out, " 0x{v:016x}  # double {:?}", f64::from_bits(v))?
                }
                WireValue::Group(d) => {
                    self.nested(d, r.value_offset, depth, sub.as_ref(), note.as_deref(), redact)?;
                    continue;
                }
                WireValue::Len(d) => {
                    self.out.write_all(b" len=")?;
                    self.number(d.len() as u64)?;
                    if would_nest && !redact {
                        self.nested(
                            d,
                            r.value_offset,
                            depth,
                            sub.as_ref(),
                            note.as_deref(),
                            redact,
                        )?;
                        continue;
                    }
                    if redact {
                        write!(self.out, " {REDACTED}")?;
                    } else if std::str::from_utf8(d).is_ok() {
                        self.out.write_all(b" ")?;
                        write_string(&mut self.out, d, true)?;
                    } else {
                        self.out.write_all(b" x\"")?;
                        for b in d {
                            write!(self.out, "{b:02x}")?;
                        }
                        self.out.write_all(b"\"")?;
                    }
                }
            }
            self.note(note.as_deref())?;
        }
        Ok(())
    }

    fn note(&mut self, name: Option<&str>) -> io::Result<()> {
        match name {
            Some(n) => writeln!(self.out, "  # {n}"),
            None => self.out.write_all(b"\n"),
        }
    }
}

/// Writes `v` in decimal into the end of `buf`; returns the digits.
fn decimal(mut v: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    &buf[i..]
}

//! Protobuf text format back to wire bytes, driven by a schema: fields are encoded in the
//! order they are written (so decode then encode gives the same bytes), unknown fields written
//! by number (`99: 5`, `99 { ... }`) are kept, and secret placeholders are put back.

use std::collections::HashMap;
use std::fmt;

use prost_reflect::{FieldDescriptor, Kind, MessageDescriptor};

use crate::schema::{field_wire_type, is_packable};
use crate::text::Redactions;
use crate::wire::{self, MAX_DEPTH, WireType};

/// Text that is not valid for the type, with where it went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub col: usize,
    /// Byte offset in the text.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for TextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at line {} col {} (byte {})", self.message, self.line, self.col, self.offset)
    }
}

impl std::error::Error for TextError {}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Number(String),
    Str(Vec<u8>),
    Punct(u8),
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    offset: usize,
}

fn lex(text: &str) -> Result<Vec<Token>, (usize, String)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'#' {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
                i += 1;
            }
            out.push(Token { tok: Tok::Ident(text[s..i].to_owned()), offset: s });
        } else if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            let s = i;
            if c == b'0' && matches!(b.get(i + 1), Some(b'x' | b'X')) {
                i += 2;
                while i < b.len() && b[i].is_ascii_hexdigit() {
                    i += 1;
                }
            } else {
                while i < b.len() {
                    let d = b[i];
                    let exp_sign = (d == b'+' || d == b'-') && matches!(b[i - 1], b'e' | b'E');
                    if d.is_ascii_digit() || d == b'.' || d == b'e' || d == b'E' || exp_sign {
                        i += 1;
                    } else {
                        break;
                    }
                }
                if i < b.len() && (b[i] == b'f' || b[i] == b'F') {
                    i += 1;
                }
            }
            if i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                return Err((s, format!("invalid number '{}'", &text[s..=i])));
            }
            out.push(Token { tok: Tok::Number(text[s..i].to_owned()), offset: s });
        } else if c == b'"' || c == b'\'' {
            let s = i;
            i += 1;
            let mut v = Vec::new();
            loop {
                let Some(&d) = b.get(i) else {
                    return Err((s, "unterminated string".into()));
                };
                i += 1;
                if d == c {
                    break;
                }
                if d == b'\n' {
                    return Err((s, "unterminated string".into()));
                }
                if d != b'\\' {
                    v.push(d);
                    continue;
                }
                let Some(&e) = b.get(i) else {
                    return Err((s, "unterminated string".into()));
                };
                i += 1;
                match e {
                    b'n' => v.push(b'\n'),
                    b't' => v.push(b'\t'),
                    b'r' => v.push(b'\r'),
                    b'a' => v.push(7),
                    b'b' => v.push(8),
                    b'f' => v.push(12),
                    b'v' => v.push(11),
                    b'\\' | b'\'' | b'"' | b'?' => v.push(e),
                    b'0'..=b'7' => {
                        let mut n = u32::from(e - b'0');
                        for _ in 0..2 {
                            match b.get(i) {
                                Some(&d @ b'0'..=b'7') => {
                                    n = n * 8 + u32::from(d - b'0');
                                    i += 1;
                                }
                                _ => break,
                            }
                        }
                        if n > 255 {
                            return Err((i, "octal escape above \\377".into()));
                        }
                        v.push(n as u8);
                    }
                    b'x' | b'X' => {
                        let mut n = 0u32;
                        let mut k = 0;
                        while k < 2 && b.get(i).is_some_and(u8::is_ascii_hexdigit) {
                            n = n * 16 + (b[i] as char).to_digit(16).unwrap_or(0);
                            i += 1;
                            k += 1;
                        }
                        if k == 0 {
                            return Err((i, "\\x without hex digits".into()));
                        }
                        v.push(n as u8);
                    }
                    b'u' | b'U' => {
                        let len = if e == b'u' { 4 } else { 8 };
                        let hex = text
                            .get(i..i + len)
                            .ok_or((i, "truncated unicode escape".to_owned()))?;
                        let n = u32::from_str_radix(hex, 16)
                            .map_err(|_| (i, "invalid unicode escape".to_owned()))?;
                        let ch =
                            char::from_u32(n).ok_or((i, "invalid unicode escape".to_owned()))?;
                        let mut buf = [0u8; 4];
                        v.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        i += len;
                    }
                    _ => return Err((i - 1, format!("unknown escape '\\{}'", e as char))),
                }
            }
            // Adjacent strings are one value (only whitespace and comments can sit between two
            // tokens, so a string right after a string is a continuation).
            if let Some(Token { tok: Tok::Str(prev), .. }) = out.last_mut() {
                prev.extend_from_slice(&v);
                continue;
            }
            out.push(Token { tok: Tok::Str(v), offset: s });
        } else if b"{}<>[]:,;-".contains(&c) {
            out.push(Token { tok: Tok::Punct(c), offset: i });
            i += 1;
        } else {
            return Err((
                i,
                format!("unexpected character '{}'", text[i..].chars().next().unwrap_or('?')),
            ));
        }
    }
    Ok(out)
}

/// Encodes text-format `text` as a message of type `desc`.
///
/// # Errors
///
/// The first problem, with its line and column.
pub fn encode_text(
    desc: &MessageDescriptor,
    text: &str,
    redactions: Option<&Redactions>,
) -> Result<Vec<u8>, TextError> {
    let at = |offset: usize, message: String| {
        let before = &text[..offset.min(text.len())];
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        TextError { line, col, offset, message }
    };
    let tokens = lex(text).map_err(|(o, m)| at(o, m))?;
    let mut p = Parser { toks: &tokens, pos: 0, redactions, end: text.len() };
    p.message(Some(desc), None, 0).map_err(|(o, m)| at(o, m))
}

type PResult<T> = Result<T, (usize, String)>;

struct Parser<'a> {
    toks: &'a [Token],
    pos: usize,
    redactions: Option<&'a Redactions>,
    end: usize,
}

enum Part {
    Bytes(Vec<u8>),
    Packed(u32),
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }

    fn offset(&self) -> usize {
        self.toks.get(self.pos).map_or(self.end, |t| t.offset)
    }

    fn next(&mut self) -> PResult<Tok> {
        let t = self.toks.get(self.pos).ok_or((self.end, "unexpected end of text".to_owned()))?;
        self.pos += 1;
        Ok(t.tok.clone())
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(&Tok::Punct(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn message(
        &mut self,
        desc: Option<&MessageDescriptor>,
        close: Option<u8>,
        depth: usize,
    ) -> PResult<Vec<u8>> {
        if depth > MAX_DEPTH {
            return Err((self.offset(), "messages nested too deeply".into()));
        }
        let mut parts: Vec<Part> = Vec::new();
        let mut packed: HashMap<u32, Vec<u8>> = HashMap::new();
        let mut seen: Vec<u32> = Vec::new();
        loop {
            let start = self.offset();
            match self.peek() {
                None if close.is_none() => break,
                None => {
                    return Err((start, format!("expected '{}'", close.map_or('}', char::from))));
                }
                Some(Tok::Punct(c)) if Some(*c) == close => {
                    self.pos += 1;
                    break;
                }
                _ => {}
            }
            let name_tok = self.next()?;
            let field: Option<FieldDescriptor> = match (&name_tok, desc) {
                (Tok::Ident(name), Some(d)) => Some(
                    d.get_field_by_name(name)
                        .or_else(|| {
                            d.fields().find(|f| {
                                f.is_group()
                                    && matches!(f.kind(), Kind::Message(m) if m.name() == name)
                            })
                        })
                        .ok_or((start, format!("no field '{name}' in {}", d.full_name())))?,
                ),
                (Tok::Ident(name), None) => {
                    return Err((
                        start,
                        format!("field '{name}' inside an unknown field; use numbers"),
                    ));
                }
                (Tok::Number(n), _) => {
                    let num: u32 =
                        n.parse().map_err(|_| (start, format!("invalid field number '{n}'")))?;
                    if num == 0 || u64::from(num) > wire::MAX_FIELD_NUMBER {
                        return Err((start, format!("field number {num} is out of range")));
                    }
                    if let Some(f) = desc.and_then(|d| d.get_field(num)) {
                        return Err((
                            start,
                            format!("field {num} is known as '{}'; use its name", f.name()),
                        ));
                    }
                    let mut out = Vec::new();
                    self.eat(b':');
                    self.unknown_value(num, &mut out, depth)?;
                    parts.push(Part::Bytes(out));
                    self.separator();
                    continue;
                }
                (Tok::Punct(b'['), _) => {
                    return Err((start, "extensions and Any ('[...]') are not supported".into()));
                }
                _ => return Err((start, "expected a field name".into())),
            };
            let Some(field) = field else { continue };
            if !(field.is_list() || field.is_map()) {
                if seen.contains(&field.number()) {
                    return Err((
                        start,
                        format!("field '{}' is given more than once", field.name()),
                    ));
                }
                seen.push(field.number());
            }
            let colon = self.eat(b':');
            if self.peek() == Some(&Tok::Punct(b'[')) {
                if !(field.is_list() || field.is_map()) {
                    return Err((
                        self.offset(),
                        format!("field '{}' is not repeated", field.name()),
                    ));
                }
                self.pos += 1;
                if !self.eat(b']') {
                    loop {
                        self.value(&field, &mut parts, &mut packed, depth)?;
                        if self.eat(b']') {
                            break;
                        }
                        if !self.eat(b',') {
                            return Err((self.offset(), "expected ',' or ']'".into()));
                        }
                    }
                }
            } else {
                if !colon && !matches!(field.kind(), Kind::Message(_)) {
                    return Err((self.offset(), format!("expected ':' after '{}'", field.name())));
                }
                self.value(&field, &mut parts, &mut packed, depth)?;
            }
            self.separator();
        }
        let mut out = Vec::new();
        for part in parts {
            match part {
                Part::Bytes(b) => out.extend_from_slice(&b),
                Part::Packed(n) => {
                    if let Some(data) = packed.get(&n) {
                        wire::put_len(&mut out, n, data);
                    }
                }
            }
        }
        Ok(out)
    }

    fn separator(&mut self) {
        let _ = self.eat(b',') || self.eat(b';');
    }

    fn value(
        &mut self,
        field: &FieldDescriptor,
        parts: &mut Vec<Part>,
        packed: &mut HashMap<u32, Vec<u8>>,
        depth: usize,
    ) -> PResult<()> {
        let start = self.offset();
        let number = field.number();
        let kind = field.kind();
        // A placeholder for a redacted secret puts the original value back.
        if let (Some(Tok::Str(s)), Some(table)) = (self.peek(), self.redactions)
            && let Some((wt, payload)) = table.lookup(s)
        {
            let mut out = Vec::new();
            wire::put_tag(&mut out, number, *wt);
            match wt {
                WireType::Len => {
                    wire::put_varint(&mut out, payload.len() as u64);
                    out.extend_from_slice(payload);
                }
                WireType::StartGroup => {
                    out.extend_from_slice(payload);
                    wire::put_tag(&mut out, number, WireType::EndGroup);
                }
                _ => out.extend_from_slice(payload),
            }
            self.pos += 1;
            parts.push(Part::Bytes(out));
            return Ok(());
        }
        if let Kind::Message(m) = &kind {
            let close = match self.next()? {
                Tok::Punct(b'{') => b'}',
                Tok::Punct(b'<') => b'>',
                _ => {
                    return Err((
                        start,
                        format!("expected '{{' for message field '{}'", field.name()),
                    ));
                }
            };
            let body = self.message(Some(m), Some(close), depth + 1)?;
            let mut out = Vec::new();
            if field.is_group() {
                wire::put_tag(&mut out, number, WireType::StartGroup);
                out.extend_from_slice(&body);
                wire::put_tag(&mut out, number, WireType::EndGroup);
            } else {
                wire::put_len(&mut out, number, &body);
            }
            parts.push(Part::Bytes(out));
            return Ok(());
        }
        let mut payload = Vec::new();
        self.scalar(field, &kind, &mut payload)?;
        if field.is_list() && field.is_packed() && is_packable(&kind) {
            match packed.get_mut(&number) {
                Some(buf) => buf.extend_from_slice(&payload),
                None => {
                    packed.insert(number, payload);
                    parts.push(Part::Packed(number));
                }
            }
            return Ok(());
        }
        let mut out = Vec::new();
        let wt = field_wire_type(field);
        wire::put_tag(&mut out, number, wt);
        if wt == WireType::Len {
            wire::put_varint(&mut out, payload.len() as u64);
        }
        out.extend_from_slice(&payload);
        parts.push(Part::Bytes(out));
        Ok(())
    }

    /// A signed or unsigned number token, with a leading '-' taken in.
    fn number(&mut self) -> PResult<(bool, String, usize)> {
        let start = self.offset();
        let neg = self.eat(b'-');
        match self.next()? {
            Tok::Number(n) => Ok((neg, n, start)),
            Tok::Ident(n) => Ok((neg, n, start)),
            _ => Err((start, "expected a number".into())),
        }
    }

    fn integer(&mut self, min: i128, max: i128) -> PResult<i128> {
        let (neg, n, start) = self.number()?;
        let mag = parse_uint(&n).ok_or((start, format!("invalid integer '{n}'")))?;
        let v = if neg { -(mag as i128) } else { mag as i128 };
        if v < min || v > max {
            return Err((start, format!("integer {v} is out of range")));
        }
        Ok(v)
    }

    fn float(&mut self) -> PResult<f64> {
        let (neg, n, start) = self.number()?;
        let lower = n.to_ascii_lowercase();
        let v = match lower.as_str() {
            "inf" | "infinity" => f64::INFINITY,
            "nan" => f64::NAN,
            _ => {
                let t = lower.trim_end_matches('f');
                if let Some(u) = parse_uint(t).filter(|_| lower.starts_with("0x")) {
                    u as f64
                } else {
                    t.parse::<f64>().map_err(|_| (start, format!("invalid number '{n}'")))?
                }
            }
        };
        Ok(if neg { -v } else { v })
    }

    fn scalar(&mut self, field: &FieldDescriptor, kind: &Kind, out: &mut Vec<u8>) -> PResult<()> {
        match kind {
            Kind::Int32 => {
                wire::put_varint(out, self.integer(i32::MIN.into(), i32::MAX.into())? as i64 as u64)
            }
            Kind::Int64 => {
                wire::put_varint(out, self.integer(i64::MIN.into(), i64::MAX.into())? as i64 as u64)
            }
            Kind::Uint32 => wire::put_varint(out, self.integer(0, u32::MAX.into())? as u64),
            Kind::Uint64 => wire::put_varint(out, self.integer(0, u64::MAX.into())? as u64),
            Kind::Sint32 => {
                let v = self.integer(i32::MIN.into(), i32::MAX.into())? as i32;
                wire::put_varint(out, u64::from(((v << 1) ^ (v >> 31)) as u32));
            }
            Kind::Sint64 => {
                let v = self.integer(i64::MIN.into(), i64::MAX.into())? as i64;
                wire::put_varint(out, ((v << 1) ^ (v >> 63)) as u64);
            }
            Kind::Fixed32 => {
                out.extend_from_slice(&(self.integer(0, u32::MAX.into())? as u32).to_le_bytes())
            }
            Kind::Sfixed32 => out.extend_from_slice(
                &(self.integer(i32::MIN.into(), i32::MAX.into())? as i32).to_le_bytes(),
            ),
            Kind::Fixed64 => {
                out.extend_from_slice(&(self.integer(0, u64::MAX.into())? as u64).to_le_bytes())
            }
            Kind::Sfixed64 => out.extend_from_slice(
                &(self.integer(i64::MIN.into(), i64::MAX.into())? as i64).to_le_bytes(),
            ),
            Kind::Float => out.extend_from_slice(&(self.float()? as f32).to_le_bytes()),
            Kind::Double => out.extend_from_slice(&self.float()?.to_le_bytes()),
            Kind::Bool => {
                let start = self.offset();
                let v = match self.next()? {
                    Tok::Ident(s) if matches!(s.as_str(), "true" | "True" | "t") => 1,
                    Tok::Ident(s) if matches!(s.as_str(), "false" | "False" | "f") => 0,
                    Tok::Number(s) if s == "1" => 1,
                    Tok::Number(s) if s == "0" => 0,
                    _ => {
                        return Err((
                            start,
                            format!("expected true or false for '{}'", field.name()),
                        ));
                    }
                };
                out.push(v);
            }
            Kind::Enum(e) => {
                let start = self.offset();
                match self.peek() {
                    Some(Tok::Ident(name)) => {
                        let v = e.get_value_by_name(name).ok_or((
                            start,
                            format!("no value '{name}' in enum {}", e.full_name()),
                        ))?;
                        self.pos += 1;
                        wire::put_varint(out, i64::from(v.number()) as u64);
                    }
                    _ => wire::put_varint(
                        out,
                        self.integer(i32::MIN.into(), i32::MAX.into())? as i64 as u64,
                    ),
                }
            }
            Kind::String | Kind::Bytes => {
                let start = self.offset();
                match self.next()? {
                    Tok::Str(s) => {
                        if matches!(kind, Kind::String) && std::str::from_utf8(&s).is_err() {
                            return Err((
                                start,
                                format!("string field '{}' is not valid UTF-8", field.name()),
                            ));
                        }
                        out.extend_from_slice(&s);
                    }
                    _ => {
                        return Err((
                            start,
                            format!("expected a quoted string for '{}'", field.name()),
                        ));
                    }
                }
            }
            Kind::Message(_) => return Err((self.offset(), "expected '{'".into())),
        }
        Ok(())
    }

    fn unknown_value(&mut self, number: u32, out: &mut Vec<u8>, depth: usize) -> PResult<()> {
        let start = self.offset();
        match self.peek() {
            Some(Tok::Punct(c @ (b'{' | b'<'))) => {
                let close = if *c == b'{' { b'}' } else { b'>' };
                self.pos += 1;
                let body = self.message(None, Some(close), depth + 1)?;
                wire::put_len(out, number, &body);
            }
            Some(Tok::Str(s)) => {
                let s = s.clone();
                self.pos += 1;
                wire::put_len(out, number, &s);
            }
            _ => {
                let (neg, n, _) = self.number()?;
                let hex_digits =
                    n.strip_prefix("0x").or_else(|| n.strip_prefix("0X")).map(str::len);
                let mag = parse_uint(&n)
                    .ok_or((start, format!("invalid value '{n}' for unknown field {number}")))?;
                let v = if neg { (mag as i64).wrapping_neg() as u64 } else { mag };
                match hex_digits {
                    Some(8) if !neg => {
                        wire::put_tag(out, number, WireType::I32);
                        out.extend_from_slice(&(v as u32).to_le_bytes());
                    }
                    Some(16) if !neg => {
                        wire::put_tag(out, number, WireType::I64);
                        out.extend_from_slice(&v.to_le_bytes());
                    }
                    _ => {
                        wire::put_tag(out, number, WireType::Varint);
                        wire::put_varint(out, v);
                    }
                }
            }
        }
        Ok(())
    }
}

fn parse_uint(s: &str) -> Option<u64> {
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else if s.len() > 1 && s.starts_with('0') {
        u64::from_str_radix(&s[1..], 8).ok()
    } else {
        s.parse().ok()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]
mod tests {
    use super::*;
    use crate::schema::Schema;
    use crate::text::{TextOptions, TextPrinter};

    fn round_trip(schema: &Schema, desc: &MessageDescriptor, text: &str) -> Vec<u8> {
        let bytes = encode_text(desc, text, None).unwrap();
        let mut printed = Vec::new();
        let opts = TextOptions { annotate: false, explain: false, show_secrets: true };
        TextPrinter::new(schema, &mut printed, opts, None).print(desc, &bytes, 0).unwrap();
        let again = encode_text(desc, std::str::from_utf8(&printed).unwrap(), None).unwrap();
        assert_eq!(again, bytes, "{}", String::from_utf8_lossy(&printed));
        bytes
    }

    #[test]
    fn text_round_trips() {
        let schema = Schema::builtin().unwrap();
        let desc = schema.find_message("CreateVolumeRequest").unwrap();
        round_trip(
            &schema,
            &desc,
            r#"name: "a\n\"b\"" capacity_range { required_bytes: -1 } 99: 0x0000002a 98: 0x000000000000002a 97: -3 96 { 1: 2 } parameters [{ key: "k" value: "v" }] parameters { key: "k2" value: "v2" }"#,
        );
        // Found by fuzzing: an unknown string whose bytes parse as a message only with an
        // overlong varint must stay a string, or the text would not encode back to it.
        round_trip(&schema, &desc, "70: '\u{54b}\\000\\010\\010\\010\\010'");
        let e = encode_text(&desc, "name: \"a\"\nname: \"b\"", None).unwrap_err();
        assert_eq!((e.line, e.col), (2, 1));
        assert!(encode_text(&desc, "capacity_range { required_bytes: 1x }", None).is_err());
        assert!(encode_text(&desc, "name: \"\\xff\"", None).unwrap_err().message.contains("UTF-8"));
    }
}

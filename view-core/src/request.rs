//! Requests as a person writes them for `csi-view call` (and `replay`, the page): canonical
//! proto3 JSON or protobuf text format, one or several in one input, read through the schema
//! into messages, with csi-sanity's secrets put into the request's secret fields.
//!
//! Several requests in one input: JSON values one after another (JSON Lines is one way to write
//! them), or text-format messages separated by lines holding only `---`. An input whose first
//! character (after blanks) is `{` is JSON, else text. An empty input is one empty request
//! (zero bytes is a valid message). Every error names its line and column in the whole input.

use std::collections::HashMap;
use std::fmt;

use prost_reflect::{DynamicMessage, MapKey, MessageDescriptor, ReflectMessage, Value};

use crate::schema::Schema;

/// How requests are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// Canonical proto3 JSON (field names as in the proto or in lowerCamelCase).
    Json,
    /// Protobuf text format.
    Text,
}

impl Syntax {
    /// JSON when the first character after blanks is `{`, else text format.
    pub fn detect(input: &str) -> Syntax {
        if input.trim_start().starts_with('{') { Syntax::Json } else { Syntax::Text }
    }
}

/// A request that could not be read, with where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestError {
    /// 1-based line in the whole input.
    pub line: usize,
    /// 1-based column (in characters).
    pub col: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)
    }
}

impl std::error::Error for RequestError {}

/// One request read from an input.
#[derive(Debug, Clone)]
pub struct Request {
    /// Where it starts in the input (1-based line).
    pub line: usize,
    /// The message.
    pub message: DynamicMessage,
}

/// The line and column of byte `offset` in `text`.
fn position(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// Reads every request of `input` as messages of type `desc`.
///
/// # Errors
///
/// The first request that is not valid JSON or text format for the type, or names a field the
/// type lacks, with its line and column.
pub fn parse_all(desc: &MessageDescriptor, input: &str) -> Result<Vec<Request>, RequestError> {
    match Syntax::detect(input) {
        Syntax::Json => parse_json_stream(desc, input),
        Syntax::Text => split_text(input)
            .into_iter()
            .map(|(start, chunk)| {
                let (line, col) = position(input, start);
                let message = parse_text(desc, chunk).map_err(|mut e| {
                    if e.line == 1 {
                        e.col += col - 1;
                    }
                    e.line += line - 1;
                    e
                })?;
                Ok(Request { line, message })
            })
            .collect(),
    }
}

/// Reads one request (JSON or text format, as [`Syntax::detect`] says).
///
/// # Errors
///
/// As [`parse_all`]; more than one request is an error too.
pub fn parse_one(desc: &MessageDescriptor, input: &str) -> Result<DynamicMessage, RequestError> {
    let mut all = parse_all(desc, input)?;
    match all.len() {
        1 => Ok(all.remove(0).message),
        n => {
            let line = all.get(1).map_or(1, |r| r.line);
            Err(RequestError {
                line,
                col: 1,
                message: format!("{n} requests where one was expected"),
            })
        }
    }
}

/// Reads one text-format message.
///
/// # Errors
///
/// Text that is not valid for the type, with its line and column.
pub fn parse_text(desc: &MessageDescriptor, text: &str) -> Result<DynamicMessage, RequestError> {
    let bytes = crate::textparse::encode_text(desc, text, None).map_err(|e| RequestError {
        line: e.line,
        col: e.col,
        message: e.message,
    })?;
    DynamicMessage::decode(desc.clone(), bytes.as_slice()).map_err(|e| RequestError {
        line: 1,
        col: 1,
        message: format!("the text does not make a valid {}: {e}", desc.full_name()),
    })
}

/// Text-format requests: the chunks between lines holding only `---`, each with its byte offset;
/// an empty last chunk after a final `---` is not a request.
fn split_text(input: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut at = 0;
    for line in input.split_inclusive('\n') {
        if line.trim() == "---" {
            out.push((start, &input[start..at]));
            start = at + line.len();
        }
        at += line.len();
    }
    let last = &input[start..];
    if out.is_empty() || !last.trim().is_empty() {
        out.push((start, last));
    }
    out
}

/// JSON requests: values one after another, each read through the schema.
fn parse_json_stream(desc: &MessageDescriptor, input: &str) -> Result<Vec<Request>, RequestError> {
    let mut out = Vec::new();
    let json_error = |e: serde_json::Error, base: usize| {
        let (line, col) = position(input, base);
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        let text = e.to_string();
        let message = text.strip_suffix(&suffix).unwrap_or(&text);
        // serde_json counts from the chunk; the chunk starts at `base`.
        let (l, c) = (e.line().max(1), e.column().max(1));
        RequestError {
            line: line + l - 1,
            col: if l == 1 { col + c - 1 } else { c },
            message: format!("invalid JSON: {message}"),
        }
    };
    // The values' extents first (syntax errors name their place in the whole input) ...
    let mut extents = Vec::new();
    let mut stream = serde_json::Deserializer::from_str(input).into_iter::<serde::de::IgnoredAny>();
    let mut start = 0;
    while let Some(value) = stream.next() {
        value.map_err(|e| json_error(e, 0))?;
        let end = stream.byte_offset();
        extents.push((start, end));
        start = end;
    }
    // ... then each read as the type, its errors moved to where the value starts.
    for (start, end) in extents {
        let chunk = &input[start..end];
        let mut de = serde_json::Deserializer::from_str(chunk);
        let message = DynamicMessage::deserialize(desc.clone(), &mut de)
            .and_then(|m| de.end().map(|()| m))
            .map_err(|e| json_error(e, start))?;
        let lead = chunk.len() - chunk.trim_start().len();
        out.push(Request { line: position(input, start + lead).0, message });
    }
    Ok(out)
}

/// The top-level secret fields of `desc` that hold a map of strings (the `secrets` field of the
/// CSI requests that have one), from the schema's facts: never guessed from a field's name.
pub fn secret_map_fields(
    schema: &Schema,
    desc: &MessageDescriptor,
) -> Vec<prost_reflect::FieldDescriptor> {
    desc.fields()
        .filter(|f| schema.is_secret(f) && f.is_map())
        .filter(|f| {
            matches!(f.kind(), prost_reflect::Kind::Message(entry)
                if entry.map_entry_key_field().kind() == prost_reflect::Kind::String
                    && entry.map_entry_value_field().kind() == prost_reflect::Kind::String)
        })
        .collect()
}

/// Puts `secrets` into every secret map field of `request` ([`secret_map_fields`]); a key the
/// request already sets keeps its value. Returns the names of the fields filled.
pub fn fill_secrets(
    schema: &Schema,
    request: &mut DynamicMessage,
    secrets: &HashMap<String, String>,
) -> Vec<String> {
    if secrets.is_empty() {
        return Vec::new();
    }
    let mut filled = Vec::new();
    for field in secret_map_fields(schema, &request.descriptor()) {
        if let Value::Map(map) = request.get_field_mut(&field) {
            for (k, v) in secrets {
                map.entry(MapKey::String(k.clone())).or_insert_with(|| Value::String(v.clone()));
            }
            filled.push(field.name().to_owned());
        }
    }
    filled
}

/// Every secret value `msg` holds (strings of fields the facts mark secret, values of secret
/// maps), recursively: what must be scrubbed from anything printed about the call. The byte
/// ranges are [`crate::mask`]'s, the one reading of which bytes are secret.
pub fn secret_values(schema: &Schema, msg: &DynamicMessage) -> Vec<String> {
    let bytes = prost::Message::encode_to_vec(msg);
    crate::mask::secret_strings(schema, &msg.descriptor(), &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desc(name: &str) -> (Schema, MessageDescriptor) {
        let s = Schema::builtin().expect("built in");
        let d = s.find_message(name).expect("type");
        (s, d)
    }

    #[test]
    fn json_and_text_read_the_same_message() {
        let (_, d) = desc("csi.v1.CreateVolumeRequest");
        let json = parse_one(&d, r#"{"name": "v1", "capacityRange": {"required_bytes": "10"}}"#)
            .expect("json");
        let text =
            parse_one(&d, "name: \"v1\"\ncapacity_range { required_bytes: 10 }\n").expect("text");
        assert_eq!(json, text);
        let empty = parse_all(&d, "  \n").expect("empty");
        assert_eq!(empty.len(), 1);
        assert_eq!(prost::Message::encoded_len(&empty[0].message), 0);
    }

    #[test]
    fn several_requests_keep_their_lines() {
        let (_, d) = desc("csi.v1.DeleteVolumeRequest");
        let all = parse_all(&d, "{\"volume_id\": \"a\"}\n{\"volume_id\": \"b\"}\n\n{}\n")
            .expect("json lines");
        assert_eq!(all.iter().map(|r| r.line).collect::<Vec<_>>(), [1, 2, 4]);
        let all =
            parse_all(&d, "volume_id: \"a\"\n---\n# b\nvolume_id: \"b\"\n---\n").expect("text");
        assert_eq!(all.iter().map(|r| r.line).collect::<Vec<_>>(), [1, 3]);
        let all = parse_all(&d, "---\n").expect("two empty");
        assert_eq!(all.len(), 1);
    }

    #[test]
    fn errors_name_their_place_in_the_whole_input() {
        let (_, d) = desc("csi.v1.DeleteVolumeRequest");
        let e =
            parse_all(&d, "{\"volume_id\": \"a\"}\n{\"volume_id\": 5}\n").expect_err("bad type");
        assert_eq!((e.line, e.col > 1), (2, true), "{e}");
        let e = parse_all(&d, "{\"volume_id\": \"a\"}\n  {\"volume_idd\": \"b\"}")
            .expect_err("unknown");
        assert_eq!(e.line, 2, "{e}");
        assert!(e.message.contains("volume_idd"), "{e}");
        let e = parse_all(&d, "{\"volume_id\": \"a\",\n  \"x\" 1}").expect_err("syntax");
        assert_eq!((e.line, e.col), (2, 7), "{e}");
        let e = parse_all(&d, "volume_id: \"a\"\n---\nvolume_id: 5\n").expect_err("text");
        assert_eq!(e.line, 3, "{e}");
    }

    #[test]
    fn secrets_go_into_the_fields_the_facts_mark_secret() {
        let (s, d) = desc("csi.v1.NodePublishVolumeRequest");
        let mut m = parse_one(&d, "volume_id: \"v\" secrets { key: \"mine\" value: \"kept\" }")
            .expect("text");
        let secrets = HashMap::from([
            ("mine".to_owned(), "from-file".to_owned()),
            ("user".to_owned(), "s3cr3t".to_owned()),
        ]);
        assert_eq!(fill_secrets(&s, &mut m, &secrets), ["secrets"]);
        assert_eq!(secret_values(&s, &m), ["kept", "s3cr3t"]);
        // A request with no secret field takes none.
        let (_, d) = desc("csi.v1.NodeGetInfoRequest");
        let mut m = DynamicMessage::new(d);
        assert!(fill_secrets(&s, &mut m, &secrets).is_empty());
    }
}

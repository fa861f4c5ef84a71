//! The page's server-side pieces: field paths, scalar parsing, the display tree and its
//! agreement with the validation.

use prost_reflect::{DynamicMessage, Kind, Value};
use serde_json::{Value as Json, json};

use super::documents::{Document, Entry};
use super::edit::{self, parse_scalar, steps};
use super::routes::{query_pairs, token_route};
use super::*;

#[test]
fn paths_step_through_fields_lists_and_quoted_keys() {
    let s = steps(r#"a.b[2].c["k.]\"x"].d"#).expect("parses");
    assert_eq!(
        s,
        vec![
            ("a".into(), None),
            ("b".into(), Some("2".into())),
            ("c".into(), Some(r#""k.]\"x""#.into())),
            ("d".into(), None)
        ]
    );
    assert!(steps("a[").is_err() && steps("a[\"x").is_err() && steps(".a").is_err());
}

#[test]
fn tokens_are_random_hex() {
    let (a, b) = (token().expect("a token"), token().expect("another"));
    assert_eq!(a.len(), 32);
    assert!(a.bytes().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()), "{a}");
    assert_ne!(a, b);
}

#[test]
fn routes_need_the_whole_token() {
    let token = "0123456789abcdef0123456789abcdef";
    assert_eq!(token_route(&format!("/{token}/api/state"), token), Some("api/state"));
    assert_eq!(token_route(&format!("/{token}/"), token), Some(""));
    assert_eq!(token_route(&format!("/{token}"), token), None);
    assert_eq!(token_route("/0123456789abcdef0123456789abcdee/api/state", token), None);
    assert_eq!(token_route("/0123/api/state", token), None);
    assert_eq!(token_route("/", token), None);
    // A path with a multi-byte character where the token would end is refused, not a panic.
    assert_eq!(token_route("/0123456789abcdef0123456789abcde\u{e9}/x", token), None);
}

#[test]
fn query_strings_are_percent_decoded() {
    let q = query_pairs(Some("doc=1&msg=%32&name=a+b%2Fc&flag"));
    assert_eq!(q.get("doc").map(String::as_str), Some("1"));
    assert_eq!(q.get("msg").map(String::as_str), Some("2"));
    assert_eq!(q.get("name").map(String::as_str), Some("a b/c"));
    assert_eq!(q.get("flag").map(String::as_str), Some(""));
    assert!(query_pairs(None).is_empty());
}

/// The state of one message of `ty` read from protobuf text, with the built-in schema.
fn one_message(ty: &str, text: &str) -> State {
    let schema = Schema::builtin().expect("the built-in schema");
    let desc = schema.find_message(ty).expect("a CSI type");
    let message = DynamicMessage::parse_text_format(desc, text).expect("text format");
    let doc = Document {
        path: None,
        name: "test".into(),
        kind: "pasted",
        format: InputFormat::Raw,
        grpc: false,
        trailing_newline: false,
        entries: vec![Entry { label: "message".into(), message, certain: true }],
        dirty: false,
    };
    State::new(schema, vec![doc], &Options::default()).expect("a state")
}

/// The `key` strings of the objects in the array `list` (paths, names, conditions).
pub(super) fn strings<'a>(list: &'a Json, key: &str) -> Vec<&'a str> {
    list.as_array().into_iter().flatten().filter_map(|o| o[key].as_str()).collect()
}

fn field<'a>(tree: &'a Json, name: &str) -> Option<&'a Json> {
    tree["fields"].as_array()?.iter().find(|f| f["name"] == name)
}

#[test]
fn the_tree_marks_missing_exactly_what_the_validation_reports() {
    // `readonly` is REQUIRED, but a proto3 bool cannot be told from unset: `false` is a value,
    // shown and editable, and no rule is broken; `volume_id` unset is missing in both.
    let state = one_message(
        "csi.v1.NodePublishVolumeRequest",
        r#"target_path: "/t" volume_capability { mount {} access_mode { mode: SINGLE_NODE_WRITER } }"#,
    );
    let tree = state.tree(0, 0).expect("a tree");
    let readonly = field(&tree, "readonly").expect("readonly shown");
    assert_eq!(readonly.get("missing"), None, "{readonly}");
    assert_eq!(readonly["value"], "false");
    let missing: Vec<&str> = tree["fields"]
        .as_array()
        .expect("fields")
        .iter()
        .filter(|f| f["missing"] == true)
        .filter_map(|f| f["path"].as_str())
        .collect();
    assert_eq!(missing, ["volume_id"]);
    assert_eq!(strings(&tree["violations"], "path"), ["volume_id"]);
    // With `readonly: true` and `volume_id` set, nothing is missing and nothing broken.
    let state = one_message(
        "csi.v1.NodePublishVolumeRequest",
        r#"volume_id: "v" target_path: "/t" readonly: true volume_capability { mount {} access_mode { mode: SINGLE_NODE_WRITER } }"#,
    );
    let tree = state.tree(0, 0).expect("a tree");
    assert_eq!(field(&tree, "readonly").expect("readonly")["value"], "true");
    assert_eq!(tree["violations"], json!([]));
    assert!(tree["fields"].as_array().expect("fields").iter().all(|f| f.get("missing").is_none()));
}

#[test]
fn scalars_parse_by_kind() {
    assert!(matches!(parse_scalar(&Kind::Int64, " 42 "), Ok(Value::I64(42))));
    assert!(parse_scalar(&Kind::Int32, "x").is_err());
    assert!(matches!(parse_scalar(&Kind::Bool, "true"), Ok(Value::Bool(true))));
    assert!(parse_scalar(&Kind::Bytes, "zz").is_err());
}

#[test]
fn a_value_typed_into_a_secret_field_is_not_in_the_error() {
    // No CSI secret is a number; the rule is the same for any field the facts mark secret.
    let schema = Schema::builtin().expect("the built-in schema");
    let desc = schema.find_message("csi.v1.CreateVolumeRequest").expect("a CSI type");
    let mut msg = DynamicMessage::new(desc);
    let change = edit::Change::Set { path: "capacity_range.required_bytes", text: "hunter2-typed" };
    let secret = |f: &prost_reflect::FieldDescriptor| f.name() == "required_bytes";
    let err =
        format!("{:#}", edit::apply_with(&secret, &mut msg, &change).expect_err("not a number"));
    assert!(!err.contains("hunter2-typed"), "{err}");
    assert!(err.contains("capacity_range.required_bytes") && err.contains("secret"), "{err}");
    // Not secret: the text is named, to say what was wrong with it.
    let err = format!("{:#}", edit::apply(&schema, &mut msg, &change).expect_err("not a number"));
    assert!(err.contains("'hunter2-typed' is not a 64-bit integer"), "{err}");
}

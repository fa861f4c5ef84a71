//! End-to-end tests of the `csi-view` binary: bad input, every command, editing, and (when
//! Python protobuf and protoc are installed) the oracle script.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_csi-view");

/// A small schema of our own, so most tests need no corpus.
const PROTO: &str = r#"syntax = "proto3";
package demo;
import "google/protobuf/descriptor.proto";
extend google.protobuf.FieldOptions { bool demo_secret = 60000; bool alpha_field = 60001; }
message Req {
  // The name. This field is REQUIRED.
  string name = 1;
  // Count. This field is OPTIONAL.
  int64 count = 2;
  // Secrets. This field is OPTIONAL.
  map<string, string> secrets = 3 [(demo_secret) = true];
  Inner inner = 4;
  repeated int32 nums = 5;
  // A token.
  string token = 6 [(demo_secret) = true];
  double ratio = 7;
  Kind kind = 8;
  bytes blob = 9;
}
message Inner { string a = 1; bool b = 2; }
enum Kind { KIND_UNKNOWN = 0; KIND_A = 1; }
"#;

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("demo.proto"), PROTO).expect("write proto");
        Env { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, bytes).expect("write");
        p
    }

    fn run(&self, args: &[&str], stdin: Option<&[u8]>) -> Output {
        run_with(args, stdin, &[], self.dir.path())
    }

    /// `args` with `--proto demo.proto` appended.
    fn demo(&self, args: &[&str], stdin: Option<&[u8]>) -> Output {
        let proto = self.path("demo.proto");
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--proto", proto.to_str().expect("utf-8 path")]);
        self.run(&all, stdin)
    }

    /// Encodes demo text.
    fn encode(&self, ty: &str, text: &str) -> Vec<u8> {
        let out = self.demo(&["encode", "--type", ty], Some(text.as_bytes()));
        assert!(out.status.success(), "encode failed: {}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    }
}

fn run_with(args: &[&str], stdin: Option<&[u8]>, env: &[(&str, &str)], dir: &Path) -> Output {
    use std::io::Write as _;
    let mut cmd = Command::new(BIN);
    cmd.args(args).current_dir(dir).envs(env.iter().copied());
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("spawn csi-view");
    if let Some(mut s) = child.stdin.take() {
        let _ = s.write_all(stdin.unwrap_or_default());
    }
    child.wait_with_output().expect("wait")
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts exit code 2 with one error line naming the byte.
fn assert_bad_input(o: &Output, byte: usize, words: &str) {
    let e = err(o);
    assert_eq!(o.status.code(), Some(2), "stderr: {e}");
    assert_eq!(e.trim_end().lines().count(), 1, "one line: {e}");
    assert!(e.contains(&format!("at byte {byte}")), "offset {byte} in: {e}");
    assert!(e.contains(words), "'{words}' in: {e}");
    assert!(!e.contains("panicked"), "{e}");
}

#[test]
fn bad_input_is_one_line_with_offset_and_exit_2() {
    let env = Env::new();
    let cases: &[(&[u8], usize, &str)] = &[
        (b"\x08\x96", 1, "truncated varint"),
        (b"\x10\x01\x0a\x05ab", 3, "exceeds"),
        (b"\x0a\x7f\xff\xff\xff\x0f", 1, "exceeds"),
        (b"\x10\x01\x00", 2, "field number 0"),
        (b"\x0f", 0, "wire type"),
    ];
    for (bytes, byte, words) in cases {
        let f = env.write("bad.bin", bytes);
        assert_bad_input(
            &env.run(&["raw", "--input-format", "raw", f.to_str().unwrap_or_default()], None),
            *byte,
            words,
        );
        assert_bad_input(
            &env.demo(
                &[
                    "decode",
                    "--type",
                    "Req",
                    "--input-format",
                    "raw",
                    f.to_str().unwrap_or_default(),
                ],
                None,
            ),
            *byte,
            words,
        );
    }
    // Empty input, from a file and from stdin.
    // Zero bytes is a message (every field unset), not bad input.
    let f = env.write("empty.bin", b"");
    let raw = env.run(&["raw", f.to_str().unwrap_or_default()], None);
    assert_eq!(raw.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&raw.stdout).contains("0 bytes: an empty message"));
    let empty = f.to_str().unwrap_or_default();
    let decoded = env.run(&["decode", "--type", "csi.v1.GetPluginInfoRequest", empty], None);
    assert_eq!(decoded.status.code(), Some(0), "{}", String::from_utf8_lossy(&decoded.stderr));
    let validated = env.run(&["validate", "--type", "csi.v1.CreateVolumeRequest", empty], None);
    let text = String::from_utf8_lossy(&validated.stdout);
    assert_eq!(validated.status.code(), Some(1), "REQUIRED fields are missing: {text}");
    assert!(
        text.contains("name: is REQUIRED") && text.contains("volume_capabilities: is REQUIRED")
    );
    let detected = env.run(&["detect", empty], None);
    assert_eq!(detected.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&detected.stdout).starts_with("empty: 0 bytes"));
    // Invalid UTF-8 in a string field: the offset of the bad byte.
    let f = env.write("utf8.bin", b"\x0a\x03a\xffb");
    assert_bad_input(
        &env.demo(
            &["decode", "--type", "Req", "--input-format", "raw", f.to_str().unwrap_or_default()],
            None,
        ),
        3,
        "UTF-8",
    );
    // The wrong type: field 1 of Req is a string, here a varint.
    let f = env.write("wrong.bin", b"\x22\x00\x08\x05");
    assert_bad_input(
        &env.demo(
            &["decode", "--type", "Req", "--input-format", "raw", f.to_str().unwrap_or_default()],
            None,
        ),
        2,
        "wire type",
    );
    // A gRPC frame length far past the end.
    let f = env.write("frame.bin", b"\x00\xff\xff\xff\xf0\x08\x01");
    assert_bad_input(
        &env.run(&["raw", "--grpc", "--input-format", "raw", f.to_str().unwrap_or_default()], None),
        1,
        "frame length",
    );
    // Bad hex when forced.
    assert_bad_input(&env.run(&["raw", "--input-format", "hex"], Some(b"0a0z")), 3, "hex digit");
    // Usage errors exit 2 too.
    assert_eq!(env.run(&["decode", "--bogus"], None).status.code(), Some(2));
    assert_eq!(
        env.demo(&["decode", "--type", "NoSuchType"], Some(b"\x08\x01")).status.code(),
        Some(2)
    );
}

#[test]
fn decode_annotates_redacts_and_keeps_unknown_fields() {
    let env = Env::new();
    let mut bytes = env.encode(
        "demo.Req",
        r#"name: "vol" count: 3 secrets { key: "pw" value: "hunter2" } token: "tok-secret" nums: [1, -2] kind: KIND_A"#,
    );
    bytes.extend_from_slice(b"\xb8\x06\x2a"); // unknown field 103 = 42
    let f = env.write("req.bin", &bytes);
    let f = f.to_str().unwrap_or_default();
    let out = env.demo(&["decode", "--type", "Req", f], None);
    let t = text(&out);
    assert!(out.status.success(), "{}", err(&out));
    assert!(t.contains("name: \"vol\"  # REQUIRED"), "{t}");
    assert!(t.contains("key: \"pw\""), "{t}");
    assert!(!t.contains("hunter2") && !t.contains("tok-secret"), "secrets leaked: {t}");
    assert!(t.contains("<redacted>"), "{t}");
    assert!(t.contains("103: 42  # unknown field"), "{t}");
    assert!(t.contains("nums: -2"), "{t}");
    // --explain adds the comments; --no-annotations drops every comment.
    let t = text(&env.demo(&["decode", "--type", "demo.Req", "--explain", f], None));
    assert!(t.contains("# The name. This field is REQUIRED."), "{t}");
    let t = text(
        &env.demo(&["decode", "--type", "Req", "--no-annotations", "--show-secrets", f], None),
    );
    assert!(!t.contains('#'), "{t}");
    assert!(t.contains("hunter2") && t.contains("103: 42"), "{t}");
    // The plain text encodes back to the same bytes, unknown field included.
    assert_eq!(env.encode("Req", &t), bytes);
    // JSON: canonical, redacted, unknown fields named on stderr.
    let out = env.demo(&["decode", "--type", "Req", "--format", "json", f], None);
    let t = text(&out);
    assert!(t.contains("\"name\": \"vol\"") && t.contains("\"count\": \"3\""), "{t}");
    assert!(!t.contains("hunter2") && !t.contains("tok-secret"), "{t}");
    assert!(err(&out).contains("103"), "{}", err(&out));
    // Raw with a type redacts too; without one, --show-secrets shows the layout.
    let t = text(&env.demo(&["raw", "--type", "Req", f], None));
    assert!(!t.contains("hunter2") && t.contains("# secrets"), "{t}");
    let t = text(&env.run(&["raw", "--show-secrets", f], None));
    assert!(
        t.contains("3:LEN len=13 {") && t.contains("\"hunter2\"") && t.contains("103:VARINT 42"),
        "{t}"
    );
}

#[test]
fn input_formats_and_grpc_frames() {
    let env = Env::new();
    let bytes = env.encode("Req", r#"name: "a""#);
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    for input in [hex.clone(), format!("{hex}\n"), "CgFh\n".to_owned()] {
        let out =
            env.demo(&["decode", "--type", "Req", "--no-annotations"], Some(input.as_bytes()));
        assert_eq!(text(&out), "name: \"a\"\n", "{input}: {}", err(&out));
    }
    // Many frames, one of them empty.
    let framed = env.demo(&["encode", "--type", "Req", "--to", "grpc"], Some(b"name: \"a\""));
    let mut data = framed.stdout.clone();
    data.extend_from_slice(&[0, 0, 0, 0, 0]);
    let out = env.demo(&["decode", "--type", "Req", "--grpc", "--no-annotations"], Some(&data));
    assert_eq!(
        text(&out),
        "# frame 1 at byte 5\nname: \"a\"\n# frame 2 at byte 13\n",
        "{}",
        err(&out)
    );
    // encode --to hex / base64
    assert_eq!(
        text(&env.demo(&["encode", "--type", "Req", "--to", "hex"], Some(b"name: \"a\""))),
        "0a0161\n"
    );
    assert_eq!(
        text(&env.demo(&["encode", "--type", "Req", "--to", "base64"], Some(b"name: \"a\""))),
        "CgFh\n"
    );
    // JSON in.
    let out = env.demo(
        &["encode", "--type", "Req", "--from", "json", "--to", "hex"],
        Some(br#"{"name":"a","count":"2"}"#),
    );
    assert_eq!(text(&out), "0a01611002\n", "{}", err(&out));
    // Text errors name the line and column.
    let out = env.demo(&["encode", "--type", "Req"], Some(b"name: \"a\"\ncount: x"));
    assert_eq!(out.status.code(), Some(2));
    assert!(err(&out).contains("line 2 col 8"), "{}", err(&out));
}

#[test]
fn descriptor_set_works_like_proto() {
    let env = Env::new();
    let proto = env.path("demo.proto");
    let pool = protox::compile([&proto], [env.dir.path()]).expect("compile");
    let set = prost::Message::encode_to_vec(&pool);
    let ds = env.write("demo.pb", &set);
    let decode = |flag: &str, source: &Path| {
        env.run(
            &[
                "decode",
                flag,
                source.to_str().unwrap_or_default(),
                "--type",
                "Inner",
                "--input-format",
                "hex",
            ],
            Some(b"0a01781001"),
        )
    };
    let (from_set, from_proto) = (decode("--descriptor-set", &ds), decode("--proto", &proto));
    // Both go through the same Model: the same fields with the same facts.
    assert!(text(&from_set).starts_with("# demo.Inner (5 bytes)\na: \"x\""), "{}", err(&from_set));
    assert!(text(&from_set).contains("\nb: true\n"), "{}", text(&from_set));
    assert_eq!(text(&from_set), text(&from_proto), "{}", err(&from_proto));
}

#[test]
fn validate_and_diff_exit_codes() {
    let env = Env::new();
    let good = env.write("good.bin", &env.encode("Req", r#"name: "a""#));
    let bad = env
        .write("bad.bin", &env.encode("Req", r#"count: 1 secrets { key: "bad key!" value: "v" }"#));
    let out = env.demo(&["validate", "--type", "Req", good.to_str().unwrap_or_default()], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = env.demo(&["validate", "--type", "Req", bad.to_str().unwrap_or_default()], None);
    assert_eq!(out.status.code(), Some(1));
    let t = text(&out);
    assert!(t.contains("name: is REQUIRED"), "{t}");
    assert!(t.contains("secrets[\"bad key!\"]") && !t.contains("\"v\""), "{t}");
    let out = env.demo(
        &[
            "diff",
            "--type",
            "Req",
            good.to_str().unwrap_or_default(),
            bad.to_str().unwrap_or_default(),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let t = text(&out);
    assert!(t.contains("- name: \"a\"") && t.contains("+ count: 1"), "{t}");
    assert!(t.contains("+ secrets: <redacted>"), "{t}");
    let out = env.demo(
        &[
            "diff",
            "--type",
            "Req",
            good.to_str().unwrap_or_default(),
            good.to_str().unwrap_or_default(),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0));
}

fn edit(env: &Env, file: &Path, script: &str, extra: &[&str]) -> Output {
    let ed = env.write("editor.sh", format!("#!/bin/sh\n{script}\n").as_bytes());
    let proto = env.path("demo.proto");
    let mut args = vec!["edit", "--type", "Req", "--proto", proto.to_str().unwrap_or_default()];
    args.extend_from_slice(extra);
    args.push(file.to_str().unwrap_or_default());
    let editor = format!("sh {}", ed.display());
    run_with(&args, None, &[("EDITOR", &editor), ("VISUAL", "")], env.dir.path())
}

#[test]
fn edit_writes_atomically_and_refuses_bad_results() {
    let env = Env::new();
    let mut original = env.encode("Req", r#"name: "a" secrets { key: "pw" value: "hunter2" }"#);
    original.extend_from_slice(b"\xb8\x06\x2a");
    let hex: String = original.iter().map(|b| format!("{b:02x}")).collect::<String>() + "\n";
    let file = env.write("msg.hex", hex.as_bytes());
    let bak = env.path("msg.hex.bak");

    // No change, or a failing editor: untouched.
    let out = edit(&env, &file, "true", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", err(&out));
    assert!(err(&out).contains("no changes"));
    let out = edit(&env, &file, "sed -i 's/\"a\"/\"b\"/' \"$1\"; exit 3", &[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&file).unwrap_or_default(), hex);
    assert!(!bak.exists());

    // The editor sees a placeholder, never the secret; the secret survives the edit.
    let out = edit(
        &env,
        &file,
        "grep -q hunter2 \"$1\" && exit 9; sed -i 's/name: \"a\"/name: \"b\"/' \"$1\"",
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", err(&out));
    assert!(text(&out).contains("~ name: \"a\" -> \"b\""), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&bak).unwrap_or_default(), hex);
    let new = std::fs::read_to_string(&file).unwrap_or_default();
    assert!(new.ends_with('\n'));
    let out = env.demo(
        &["decode", "--type", "Req", "--show-secrets", "--no-annotations"],
        Some(new.as_bytes()),
    );
    assert_eq!(
        text(&out),
        "name: \"b\"\nsecrets {\n  key: \"pw\"\n  value: \"hunter2\"\n}\n103: 42\n"
    );

    // Removing a REQUIRED field is refused unless forced.
    let before = std::fs::read(&file).unwrap_or_default();
    let out = edit(&env, &file, "sed -i '/^name:/d' \"$1\"", &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        err(&out).contains("refused") && err(&out).contains("name: is REQUIRED"),
        "{}",
        err(&out)
    );
    assert_eq!(std::fs::read(&file).unwrap_or_default(), before);
    let out = edit(&env, &file, "sed -i '/^name:/d' \"$1\"", &["--force"]);
    assert_eq!(out.status.code(), Some(0), "{}", err(&out));
    assert_ne!(std::fs::read(&file).unwrap_or_default(), before);

    // Text that does not parse: exit 2, nothing written.
    let before = std::fs::read(&file).unwrap_or_default();
    let out = edit(&env, &file, "echo 'count: notanumber' >> \"$1\"", &[]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read(&file).unwrap_or_default(), before);
}

/// Two types read the same bytes exactly; only one puts secrets in them, and detection prefers
/// the other (the first lacks a REQUIRED field). The second's reading shows strings where the
/// first has a secret and a message holding one.
const TIE_PROTO: &str = r#"syntax = "proto3";
package tie;
import "google/protobuf/descriptor.proto";
extend google.protobuf.FieldOptions { bool tie_secret = 60000; }
message Login {
  string user = 1;
  string password = 2 [(tie_secret) = true];
  Creds creds = 4;
  // The mode. This field is REQUIRED.
  string mode = 5;
}
message Creds { string pw = 1 [(tie_secret) = true]; }
message Note { string user = 1; string text = 2; string blob = 4; }
"#;

#[test]
fn redaction_never_depends_on_a_guess() {
    let env = Env::new();
    let proto = env.write("tie.proto", TIE_PROTO.as_bytes());
    let proto = proto.to_str().unwrap_or_default();
    let tie = |args: &[&str], stdin: Option<&[u8]>| {
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--proto", proto]);
        env.run(&all, stdin)
    };
    let encode = |text: &str| {
        let out = tie(&["encode", "--type", "tie.Login"], Some(text.as_bytes()));
        assert!(out.status.success(), "{}", err(&out));
        out.stdout
    };
    let a =
        env.write("a.bin", &encode(r#"user: "alice" password: "hunter2" creds { pw: "s3cr3t" }"#));
    let b =
        env.write("b.bin", &encode(r#"user: "alice" password: "hunter3" creds { pw: "s3cr3t" }"#));
    let (a, b) = (a.to_str().unwrap_or_default(), b.to_str().unwrap_or_default());
    let leaks = |o: &Output| {
        let all = format!("{}{}", text(o), err(o));
        ["hunter", "s3cr3t"].iter().any(|s| all.contains(s))
    };

    // Detection names Note (Login lacks its REQUIRED mode), but Login reads the bytes exactly too.
    let out = tie(&["detect", a], None);
    assert!(text(&out).contains("tie.Note"), "{}", text(&out));
    assert!(!leaks(&out), "{}", text(&out));

    for args in [
        vec!["raw", a],
        vec!["decode", a],
        vec!["decode", "--format", "json", a],
        vec!["decode", "--no-annotations", a],
    ] {
        let out = tie(&args, None);
        assert!(out.status.success(), "{args:?}: {}", err(&out));
        assert!(!leaks(&out), "{args:?} shows a secret:\n{}{}", text(&out), err(&out));
        assert!(text(&out).contains("alice"), "{args:?} hides too much:\n{}", text(&out));
    }
    // Read as Note, the fields are strings: hidden whole, the field names still shown.
    let t = text(&tie(&["decode", "--no-annotations", a], None));
    assert!(t.contains("text: \"<redacted>\"") && t.contains("blob: \"<redacted>\""), "{t}");

    // A diff says a hidden value changed, and not what it was.
    let out = tie(&["diff", a, b], None);
    assert_eq!(out.status.code(), Some(1), "{}", err(&out));
    assert!(!leaks(&out), "{}", text(&out));
    assert!(text(&out).contains("~ text: a hidden value changed"), "{}", text(&out));

    // Named, the type is certain: Note has no secret, so its values are shown.
    let t = text(&tie(&["decode", "--type", "tie.Note", "--no-annotations", a], None));
    assert!(t.contains("text: \"hunter2\""), "{t}");
    // Asked for, secrets are shown.
    let out = tie(&["raw", "--show-secrets", a], None);
    assert!(text(&out).contains("hunter2"), "{}", text(&out));

    // The editor never sees them, and they survive the edit.
    let ed = env.write(
        "tie-editor.sh",
        b"#!/bin/sh\ngrep -q -e hunter -e s3cr3t \"$1\" && exit 9\nsed -i 's/alice/bob/' \"$1\"\n",
    );
    let editor = format!("sh {}", ed.display());
    let out = run_with(
        &["edit", "--proto", proto, a],
        None,
        &[("EDITOR", &editor), ("VISUAL", "")],
        env.dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", err(&out));
    assert!(!leaks(&out), "{}{}", text(&out), err(&out));
    let t = text(&tie(&["decode", "--type", "tie.Login", "--show-secrets", a], None));
    assert!(t.contains("bob") && t.contains("hunter2") && t.contains("s3cr3t"), "{t}");
}

/// The corpus (real CSI specs) when present; loud skip, or failure under CSIKIT_REQUIRE_CORPUS.
fn need(what: &str, present: bool) -> bool {
    if present {
        return true;
    }
    csikit_spec::skip_missing(&format!("{what} is missing; this test did not run"));
    false
}

#[test]
fn csi_types_are_found_by_short_name_and_detected() {
    // The built-in schema (csikit's embedded descriptors and facts): no files needed.
    let dir = tempfile::tempdir().expect("tmp");
    let text = "name: \"pvc-1\"\ncapacity_range { required_bytes: 1024 }\nvolume_capabilities { mount { } access_mode { mode: SINGLE_NODE_WRITER } }\nsecrets { key: \"k\" value: \"v\" }\n";
    let out = run_with(
        &["encode", "--type", "CreateVolumeRequest", "--to", "hex"],
        Some(text.as_bytes()),
        &[],
        dir.path(),
    );
    assert!(out.status.success(), "{}", err(&out));
    let hex = out.stdout;
    let out = run_with(&["decode"], Some(&hex), &[], dir.path());
    assert!(out.status.success(), "{}", err(&out));
    assert!(err(&out).contains("csi.v1.CreateVolumeRequest"), "{}", err(&out));
    let t = text_of(&out);
    assert!(t.starts_with("# csi.v1.CreateVolumeRequest"), "{t}");
    assert!(t.contains("secrets {  # OPTIONAL, secret, redacted, max 4096 bytes"), "{t}");
    assert!(!t.contains("\"v\""), "{t}");
    let out = run_with(&["validate"], Some(&hex), &[], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text_of(&out));
    // Without a name, the generated validator reports the REQUIRED field by path.
    let bad = run_with(
        &["encode", "--type", "CreateVolumeRequest", "--to", "hex"],
        Some(b"volume_capabilities { mount { } }"),
        &[],
        dir.path(),
    )
    .stdout;
    let out = run_with(&["validate", "--type", "CreateVolumeRequest"], Some(&bad), &[], dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", text_of(&out));
    assert!(text_of(&out).contains("name: is REQUIRED"), "{}", text_of(&out));
    assert!(text_of(&out).contains("volume_capabilities[0].access_mode"), "{}", text_of(&out));
    // An addon type by full name.
    let out = run_with(
        &["encode", "--type", "replication.EnableVolumeReplicationRequest", "--to", "hex"],
        Some(b"replication_id: \"r\""),
        &[],
        dir.path(),
    );
    assert!(out.status.success(), "{}", err(&out));
    // Two types of one shape are ambiguous, not guessed.
    let out = run_with(&["detect", "--input-format", "hex"], Some(b"0a0176"), &[], dir.path());
    assert!(text_of(&out).starts_with("ambiguous: "), "{}", text_of(&out));
}

fn text_of(o: &Output) -> String {
    text(o)
}

/// What the spec says must be set, for every type the built-in schema ranks: `{type: {"fields":
/// [REQUIRED field numbers outside oneofs], "oneofs": [oneofs one of whose fields MUST be set]}}`,
/// read from `csikit`'s facts tables (made from the spec model).
fn required_facts_json() -> String {
    use csikit::facts::{PackageFacts, Presence};
    let tables: [&PackageFacts; 5] = [
        &csikit::v1::facts::FACTS,
        &csikit::addons::identity::facts::FACTS,
        &csikit::addons::reclaimspace::facts::FACTS,
        &csikit::addons::replication::facts::FACTS,
        &csikit::addons::volumegroup::facts::FACTS,
    ];
    let mut out = serde_json::Map::new();
    for m in tables.iter().flat_map(|t| t.messages.iter()) {
        let fields: Vec<u32> = m
            .fields
            .iter()
            .filter(|f| f.presence == Presence::Required && f.oneof.is_none())
            .map(|f| f.number)
            .collect();
        let oneofs: Vec<&str> = m.oneofs.iter().filter(|o| o.required).map(|o| &*o.name).collect();
        out.insert(
            m.full_name.to_string(),
            serde_json::json!({ "fields": fields, "oneofs": oneofs }),
        );
    }
    serde_json::Value::Object(out).to_string()
}

/// Runs `oracle.py` with `args` and returns its JSON summary; fails the test when the script
/// reports a broken check (printed on stderr).
fn run_oracle(proto: &Path, work: &Path, args: &[&str]) -> serde_json::Value {
    let corpus = csikit_spec::corpus_dir();
    let facts = work.join("required.json");
    std::fs::write(&facts, required_facts_json()).expect("write facts");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle.py");
    let mut cmd = Command::new("python3");
    cmd.arg(script).arg(BIN).arg(proto).arg(work).arg("--facts").arg(&facts);
    for addon in ["identity", "reclaimspace", "replication", "volumegroup"] {
        cmd.arg("--addon")
            .arg(corpus.join("csi-addons").join(addon).join(format!("{addon}.proto")));
    }
    let out = cmd.args(args).output().expect("run oracle.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    eprintln!("oracle summary ({}): {stdout}", args.join(" "));
    let summary = stdout.lines().last().unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(summary).expect("summary JSON");
    assert!(out.status.success(), "oracle.py {}: {summary}", args.join(" "));
    v
}

/// The invariants of detection no correct detector breaks, whatever the bytes.
fn assert_detection_sound(v: &serde_json::Value) {
    let n = |k: &str| v[k].as_u64().unwrap_or(u64::MAX);
    // Every message the oracle finds only one best reader for is named right.
    assert_eq!(n("detect_right_of_identifiable"), n("ceiling"), "{v}");
    assert_eq!(n("missed_identifiable"), 0, "{v}");
    // Never a wrong type where the right one reads the bytes at least as well.
    assert_eq!(n("wrong_where_right_reads_best"), 0, "{v}");
    assert_eq!(n("detect_wrong_of_spec_valid"), 0, "{v}");
    assert_eq!(n("tie_without_right"), 0, "{v}");
}

#[test]
fn oracle_python_protobuf_and_protoc() {
    let corpus = csikit_spec::corpus_dir();
    let proto = corpus.join("csi-spec").join(csikit::SPEC_RELEASE).join("csi.proto");
    if !need(&format!("the corpus at '{}'", corpus.display()), proto.is_file()) {
        return;
    }
    let protoc = Command::new("protoc").arg("--version").output().is_ok_and(|o| o.status.success());
    let python = Command::new("python3")
        .args(["-c", "import google.protobuf, grpc_tools"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !need("protoc", protoc) || !need("python3 with protobuf and grpcio-tools", python) {
        return;
    }
    // Every check, on 6 random messages of each csi.v1 type, each field set with chance 0.65.
    let work = tempfile::tempdir().expect("tmp");
    let v = run_oracle(&proto, work.path(), &["--per-type", "6"]);
    let n = |k: &str| v[k].as_u64().unwrap_or(0);
    assert!(n("messages") >= 500, "{v}");
    assert_eq!(n("encode_equal_bytes") + n("encode_equal_parsed"), n("messages"), "{v}");
    assert_eq!(n("raw_agree"), n("raw_compared"), "{v}");
    assert_detection_sound(&v);

    // Detection alone on more messages: the same random mode, and messages whose REQUIRED
    // fields are all set, as a real CO or plugin sends them. `CSI_VIEW_ORACLE_PER_TYPE` raises
    // the count (BENCHMARKS.md records a run with 500).
    let per_type = std::env::var("CSI_VIEW_ORACLE_PER_TYPE").unwrap_or_else(|_| "20".into());
    for mode in [&[][..], &["--required-always"][..]] {
        let work = tempfile::tempdir().expect("tmp");
        let mut args = vec!["--detect-only", "--seed", "11", "--per-type", &per_type];
        args.extend_from_slice(mode);
        let v = run_oracle(&proto, work.path(), &args);
        assert_detection_sound(&v);
        if !mode.is_empty() {
            // Spec-valid messages: no wrong guess at all.
            assert_eq!(v["spec_valid"], v["messages"], "{v}");
            assert_eq!(v["detect_wrong"].as_u64(), Some(0), "{v}");
        }
    }
}

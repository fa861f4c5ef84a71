//! The secrets file reader against an independent one: PyYAML's composer reading each file as
//! csi-sanity's go-yaml v2 reads it into strings (`secrets_yaml.py`). Files are made from every
//! way of writing a key and a value (plain, single- and double-quoted with escapes, numbers and
//! booleans that stay text, nulls, `#` inside values, trailing comments) at two indentations;
//! what both read must be the same, and what YAML itself refuses this reader refuses too.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use csikit_runtime::secrets::Secrets;

/// Ways to write a value.
const VALUES: &[&str] = &[
    "abc",
    "123",
    "true",
    "yes",
    "0x1F",
    "~",
    "null",
    "NULL",
    "",
    "pa#ss",
    "http://x:80/y",
    "a b  c",
    "it's",
    "say\"hi\"",
    "ünï-cödé",
    "v # trailing comment",
    "'single ''quoted'' # not a comment'",
    "''",
    "'null'",
    "\"\"",
    "\"double \\\"esc\\\" \\\\ \\t \\u00e9 \\x41 # not a comment\"",
    "\"null\"",
    "'a: b'",
];

/// Ways to write a key.
const KEYS: &[&str] = &["secretKey", "a.b-c_d", "\"key with space\"", "'k:ey'", "k:ey2"];

/// Files both readers must refuse (YAML does not allow them).
const REFUSED_BY_BOTH: &[&str] = &[
    "CreateVolumeSecret:\n\tkey: value\n",
    "CreateVolumeSecret:\n  key: a: b\n",
    "CreateVolumeSecret:\n  key: \"open\n",
    "CreateVolumeSecret:\n  key: @x\n",
    "- CreateVolumeSecret\n",
    "CreateVolumeSecret:\n  key: 'x' y\n",
];

/// Files YAML reads but this reader refuses on purpose (its subset), each with its line.
const REFUSED_HERE: &[(&str, usize)] = &[
    ("CreateVolumeSecret: {key: v}\n", 1),
    ("CreateVolumeSecret:\n  key: [v]\n", 2),
    ("CreateVolumeSecret:\n  key: &a v\n  other: *a\n", 2),
    ("CreateVolumeSecret:\n  key: !!str v\n", 2),
    ("CreateVolumeSecret:\n  key: |\n    v\n", 2),
    ("CreateVolumeSecret:\n  key:\n    nested: v\n", 3),
];

fn files() -> Vec<String> {
    let mut out = Vec::new();
    for (i, value) in VALUES.iter().enumerate() {
        let key = KEYS[i % KEYS.len()];
        let indent = if i % 2 == 0 { "  " } else { "    " };
        out.push(format!(
            "# csi-sanity secrets\n---\nCreateVolumeSecret:\n{indent}{key}: {value}\n{indent}other: plain # c\n\n# between kinds\nNodePublishVolumeSecret:  # kind comment\n{indent}x: {value}\nListSnapshotsSecret:\n"
        ));
    }
    out.push(String::new());
    out.push("# only a comment\n".to_owned());
    out
}

fn ours(text: &str) -> Option<BTreeMap<String, BTreeMap<String, String>>> {
    let s = Secrets::parse(text).ok()?;
    Some(s.kinds().map(|k| (k.to_owned(), s.get(k).into_iter().collect())).collect())
}

fn python_reads(dir: &std::path::Path, texts: &[String]) -> Option<Vec<serde_json::Value>> {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let probe = Command::new(&python).args(["-c", "import yaml"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        csikit_spec::skip_missing(
            "python3 with PyYAML is missing; pip install -r .ci/requirements.txt",
        );
        return None;
    }
    let paths: Vec<PathBuf> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let p = dir.join(format!("{i}.yaml"));
            std::fs::write(&p, t).expect("write");
            p
        })
        .collect();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/secrets_yaml.py");
    let out = Command::new(&python).arg(script).args(&paths).output().expect("run python");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines.len(), texts.len());
    Some(lines)
}

#[test]
fn reads_what_pyyaml_reads_as_go_yaml_would() {
    let dir = tempfile::tempdir().expect("dir");
    let texts = files();
    let mut all: Vec<String> = texts.clone();
    all.extend(REFUSED_BY_BOTH.iter().map(|s| (*s).to_owned()));
    let Some(theirs) = python_reads(dir.path(), &all) else {
        return;
    };
    for (text, theirs) in texts.iter().zip(&theirs) {
        let ours = ours(text).unwrap_or_else(|| {
            panic!("refused: {text}\n{}", Secrets::parse(text).expect_err("refused"))
        });
        assert!(theirs.get("error").is_none(), "PyYAML refused:\n{text}\n{theirs}");
        let theirs: BTreeMap<String, BTreeMap<String, String>> =
            serde_json::from_value(theirs.clone()).expect("a mapping of mappings");
        assert_eq!(ours, theirs, "\n{text}");
    }
    // The files are not trivially alike: every value came through.
    assert!(texts.len() > 20);
    for (text, theirs) in REFUSED_BY_BOTH.iter().zip(&theirs[texts.len()..]) {
        assert!(theirs.get("error").is_some(), "PyYAML read {text:?} as {theirs}");
        assert!(Secrets::parse(text).is_err(), "read {text:?}");
    }
}

#[test]
fn the_subset_refuses_the_rest_with_its_line() {
    for (text, line) in REFUSED_HERE {
        let e = Secrets::parse(text).expect_err(text);
        assert_eq!(e.line, *line, "{text:?}: {e}");
    }
}

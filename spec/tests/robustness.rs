//! Bad input of any kind yields diagnostics, never a panic: the v1.12.0 spec cut short at many
//! points, with lines dropped, duplicated or scrambled, fed through the whole pipeline.

mod common;

use csikit_spec::{LoadOptions, Severity};

/// A small deterministic generator, so a failure names a reproducible case.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % below.max(1)
    }
}

fn load_text(dir: &std::path::Path, text: &str) -> csikit_spec::Loaded {
    std::fs::write(dir.join("spec.md"), text).expect("write case");
    csikit_spec::load_dir(dir, &LoadOptions::default())
}

#[test]
fn mangled_specs_never_panic() {
    let Some(corpus) = common::corpus() else { return };
    let original =
        std::fs::read_to_string(corpus.join("csi-spec/v1.12.0/spec.md")).expect("read spec");
    let dir = std::env::temp_dir().join(format!("csikit-robust-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let mut rng = Lcg(0x5eed);
    let lines: Vec<&str> = original.split_inclusive('\n').collect();
    let mut with_errors = 0;
    for case in 0..120 {
        let text = match case % 4 {
            // Cut short at a character boundary.
            0 => {
                let mut at = rng.next(original.len());
                while !original.is_char_boundary(at) {
                    at -= 1;
                }
                original[..at].to_owned()
            }
            // Drop a run of lines.
            1 => {
                let start = rng.next(lines.len());
                let end = (start + 1 + rng.next(40)).min(lines.len());
                [&lines[..start], &lines[end..]].concat().concat()
            }
            // Duplicate a run of lines.
            2 => {
                let start = rng.next(lines.len());
                let end = (start + 1 + rng.next(40)).min(lines.len());
                [&lines[..end], &lines[start..]].concat().concat()
            }
            // Swap two lines.
            _ => {
                let mut l = lines.clone();
                let (a, b) = (rng.next(l.len()), rng.next(l.len()));
                l.swap(a, b);
                l.concat()
            }
        };
        let loaded = load_text(&dir, &text);
        if loaded.diagnostics.has_errors() {
            with_errors += 1;
            assert!(loaded.model.is_none(), "case {case}: errors but a model");
            // Every error says where it is, unless it concerns no file at all.
            for d in loaded.diagnostics.0.iter().filter(|d| d.severity == Severity::Error) {
                assert!(d.source.is_some() || !d.message.is_empty(), "case {case}: {d:?}");
            }
        }
    }
    // Empty, whitespace-only and non-markdown inputs.
    for text in [
        "",
        "\n\n",
        "```protobuf\n",
        "| a | b |\n|---|---|\n| 1 |\n",
        "\u{feff}# x\n```protobuf\nsyntax = \"proto3\";\n```\n",
    ] {
        let _ = load_text(&dir, text);
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(with_errors > 10, "only {with_errors} of 120 mangled specs were reported as errors");
}

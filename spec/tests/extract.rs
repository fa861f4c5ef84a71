//! Extraction oracle: the proto built from each release's spec.md is byte-identical to the
//! `csi.proto` that release shipped, which its Makefile produced.

mod common;

use csikit_spec::SourceFile;
use csikit_spec::extract::{Rule, extract_proto};

fn extract(path: &std::path::Path, rule: Rule) -> (String, Vec<csikit_spec::Diagnostic>) {
    let src = SourceFile::new(
        path.display().to_string(),
        std::fs::read_to_string(path).expect("read spec"),
    );
    let mut diags = Vec::new();
    let ex = extract_proto(&src, rule, &mut diags);
    (ex.proto, diags)
}

#[test]
fn every_release_extracts_byte_identical() {
    let Some(corpus) = common::corpus() else { return };
    let releases = common::releases(&corpus);
    assert_eq!(releases.len(), 16, "the corpus holds 16 releases");
    for (tag, dir) in releases {
        let (proto, diags) = extract(&dir.join("spec.md"), Rule::for_release(&tag));
        let shipped = std::fs::read_to_string(dir.join("csi.proto")).expect("read csi.proto");
        assert!(diags.is_empty(), "{tag}: unexpected diagnostics {diags:?}");
        assert!(proto == shipped, "{tag}: extraction differs from the shipped csi.proto");
    }
}

#[test]
fn addons_extract_byte_identical_with_the_default_rule() {
    let Some(corpus) = common::corpus() else { return };
    for addon in common::addons(&corpus) {
        let (name, dir) = (&addon.name, &addon.main.dir);
        let (proto, diags) = extract(&dir.join("README.md"), Rule::default());
        let shipped =
            std::fs::read_to_string(dir.join(format!("{name}.proto"))).expect("read proto");
        assert!(diags.is_empty(), "{name}: unexpected diagnostics {diags:?}");
        assert!(proto == shipped, "{name}: extraction differs from the shipped proto");
    }
}

/// The Makefile rules, written out as the line machine `sed` runs:
/// `sed -n '/```protobuf$/,/^```$/ p' | sed '/^```/d'` (v0.2.0 on; v0.3.0 on prepends the
/// header), and v0.1.0's `sed -n '/```protobuf$/,/```$/ p' | sed 's@^```.*$@////////@'`.
fn sed_rule(text: &str, rule: Rule) -> String {
    let mut out = String::new();
    if rule == Rule::Makefile {
        out.push_str(csikit_spec::extract::GENERATED_HEADER);
    }
    let mut inside = false;
    for line in text.split_inclusive('\n') {
        let bare = line.strip_suffix('\n').unwrap_or(line);
        let printed = if !inside {
            if bare.ends_with("```protobuf") {
                inside = true;
                true
            } else {
                false
            }
        } else {
            let ends = match rule {
                Rule::MakefileV0_1 => bare.ends_with("```"),
                _ => bare == "```",
            };
            if ends {
                inside = false;
            }
            true
        };
        if !printed {
            continue;
        }
        if bare.starts_with("```") {
            if rule == Rule::MakefileV0_1 {
                out.push_str(csikit_spec::extract::V0_1_FENCE);
            }
            continue;
        }
        out.push_str(bare);
        out.push('\n');
    }
    out
}

/// Why reading with pulldown-cmark still gives the sed rule's bytes: the extractor takes the
/// raw source lines strictly between each block's opening and closing fence, so the text is
/// never re-rendered; and it reports every fence where the two readings could part (an
/// opening line not ending in ```protobuf, or not starting with it; a closing line other than
/// exactly ```; a block that never closes). Over every markdown in the corpus — releases,
/// csi-addons and both translations — no such fence exists, so markdown's blocks are exactly
/// sed's ranges and the outputs agree byte for byte. This test checks both halves.
#[test]
fn pulldown_reading_agrees_with_the_sed_rule() {
    let Some(corpus) = common::corpus() else { return };
    let mut files: Vec<(std::path::PathBuf, Rule)> = common::releases(&corpus)
        .into_iter()
        .map(|(tag, dir)| (dir.join("spec.md"), Rule::for_release(&tag)))
        .collect();
    let listed = csikit_spec::corpus::Corpus::read(&corpus).expect("corpus");
    for addon in &listed.addons {
        files.push((addon.main.dir.join("README.md"), Rule::Makefile));
    }
    for translation in &listed.translations {
        files.push((translation.markdown.clone(), Rule::Makefile));
    }
    for (path, rule) in files {
        let text = std::fs::read_to_string(&path).expect("read markdown");
        let (proto, diags) = extract(&path, rule);
        assert!(
            diags.is_empty(),
            "{}: fences the sed rule would read differently: {diags:?}",
            path.display()
        );
        assert!(
            proto == sed_rule(&text, rule),
            "{}: pulldown reading differs from the sed rule",
            path.display()
        );
    }
}

#[test]
fn fences_sed_would_misread_are_reported() {
    let text = "# t\n\n  ```protobuf\nmessage A {}\n  ```\n\n~~~protobuf\nmessage B {}\n~~~\n";
    let src = SourceFile::new("t.md", text);
    let mut diags = Vec::new();
    let ex = extract_proto(&src, Rule::Makefile, &mut diags);
    assert!(ex.proto.contains("message A {}") && ex.proto.contains("message B {}"));
    let msgs: Vec<String> =
        diags.iter().map(|d| format!("{} {}", d.location(), d.message)).collect();
    assert_eq!(
        msgs,
        vec![
            "t.md:3:1 fence '  ```protobuf' is not read by the Makefile rule",
            "t.md:5:1 closing fence is not read by the Makefile rule",
            "t.md:7:1 fence '~~~protobuf' is not read by the Makefile rule",
            "t.md:9:1 closing fence is not read by the Makefile rule",
        ]
    );
}

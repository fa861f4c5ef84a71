//! Rendered diagnostics for broken inputs, one case per folder under `tests/data/diagnostics`.
//!
//! Each case holds a `spec.md` written for the test and the expected rendering in
//! `diagnostics.txt`. Bless with `UPDATE_EXPECT=1 cargo test -p csikit-spec --test diagnostics`.

use std::path::Path;

use csikit_spec::LoadOptions;

fn render(dir: &Path) -> (String, bool, bool) {
    let loaded = csikit_spec::load_dir(dir, &LoadOptions::default());
    let handler =
        miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
            .with_width(100);
    let mut out = String::new();
    for d in &loaded.diagnostics.0 {
        out.push_str(&format!("{}: {:?}: {}\n", d.location(), d.severity, d.message));
        handler.render_report(&mut out, d).expect("render");
        out.push('\n');
    }
    (out, loaded.diagnostics.has_errors(), loaded.model.is_some())
}

fn check(case: &str, expect_error: bool) {
    let dir = Path::new("tests/data/diagnostics").join(case);
    let (text, has_errors, has_model) = render(&dir);
    assert!(!text.is_empty(), "{case}: no diagnostics");
    assert_eq!(has_errors, expect_error, "{case}: error severity");
    // Invalid input never yields a model (and so never an output file).
    assert_eq!(has_model, !expect_error, "{case}: model presence");
    let expected = Path::new(env!("CARGO_MANIFEST_DIR")).join(&dir).join("diagnostics.txt");
    expect_test::expect_file![expected].assert_eq(&text);
}

#[test]
fn code_number_mismatch() {
    check("code-number-mismatch", false);
}

#[test]
fn code_name_spelling() {
    check("code-name-spelling", false);
}

#[test]
fn required_and_optional() {
    check("required-and-optional", false);
}

#[test]
fn broken_table_row() {
    check("broken-table-row", false);
}

#[test]
fn unterminated_fence() {
    check("unterminated-fence", true);
}

#[test]
fn proto_syntax_error() {
    check("proto-syntax-error", true);
}

#[test]
fn missing_import() {
    check("missing-import", true);
}

#[test]
fn indented_fence() {
    check("indented-fence", false);
}

#[test]
fn many_problems_are_all_collected() {
    check("many-problems", false);
    let loaded = csikit_spec::load_dir(
        Path::new("tests/data/diagnostics/many-problems"),
        &LoadOptions::default(),
    );
    let messages: Vec<&str> = loaded.diagnostics.0.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(messages.len(), 4, "{messages:?}");
}

#[test]
fn missing_spec_dir_is_one_clear_error() {
    let loaded =
        csikit_spec::load_dir(Path::new("tests/data/no-such-dir"), &LoadOptions::default());
    assert!(loaded.model.is_none());
    assert_eq!(loaded.diagnostics.0.len(), 1);
    assert!(loaded.diagnostics.0[0].message.contains("no spec.md or README.md"));
}

//! The terminal UI driven through ratatui's test backend: the tree and docs render, a scalar
//! is edited in place, a bad value is refused, and the save is atomic with a backup.

use csi_view::tui::App;
use csi_view_core::input::InputFormat;
use csi_view_core::schema::{Schema, load_proto};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

const PROTO: &str = r#"syntax = "proto3";
package demo;
import "google/protobuf/descriptor.proto";
extend google.protobuf.FieldOptions { bool demo_secret = 60000; }
message Req {
  // The name. This field is REQUIRED.
  string name = 1;
  // How many. This field is OPTIONAL.
  int64 count = 2;
  // A token.
  string token = 3 [(demo_secret) = true];
}
"#;

fn key(app: &mut App<'_>, code: KeyCode) {
    app.handle_key(KeyEvent::new(code, KeyModifiers::NONE));
}

fn screen(terminal: &Terminal<TestBackend>) -> String {
    let buf = terminal.backend().buffer();
    let mut s = String::new();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            s.push_str(buf[(x, y)].symbol());
        }
        s.push('\n');
    }
    s
}

#[test]
fn browse_edit_and_save() {
    let dir = tempfile::tempdir().expect("tmp");
    let proto = dir.path().join("demo.proto");
    std::fs::write(&proto, PROTO).expect("write");
    let mut schema = Schema::default();
    load_proto(&mut schema, &proto, &[]).expect("compile");
    let desc = schema.find_message("Req").expect("type");
    let bytes = b"\x0a\x01a\x10\x05\x1a\x03tok".to_vec();
    let file = dir.path().join("req.bin");
    std::fs::write(&file, &bytes).expect("write");

    let mut app =
        App::new(&schema, desc.clone(), &bytes, &file, InputFormat::Raw, false, false, false, None)
            .expect("app");
    assert_eq!(app.lines(), ["name: \"a\"", "count: 5", "token: \"<redacted:0>\""]);
    let mut terminal = Terminal::new(TestBackend::new(100, 12)).expect("terminal");
    terminal.draw(|f| app.render(f)).expect("draw");
    let s = screen(&terminal);
    assert!(s.contains("demo.Req") && s.contains("name: \"a\""), "{s}");
    assert!(
        s.contains("demo.Req.name") && s.contains("REQUIRED") && s.contains("The name."),
        "{s}"
    );
    assert!(!s.contains("tok\""), "secret shown: {s}");

    // Move to count, edit it to 42.
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Backspace);
    for c in "42".chars() {
        key(&mut app, KeyCode::Char(c));
    }
    terminal.draw(|f| app.render(f)).expect("draw");
    assert!(screen(&terminal).contains("count: 42▏"), "{}", screen(&terminal));
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.lines()[1], "count: 42");

    // A value that does not encode is refused and the line kept.
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Char('x'));
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.lines()[1], "count: 42");
    assert!(app.status.starts_with("refused"), "{}", app.status);

    // Emptying the REQUIRED name is refused on save unless forced.
    key(&mut app, KeyCode::Up);
    key(&mut app, KeyCode::Enter);
    for _ in 0..3 {
        key(&mut app, KeyCode::Backspace);
    }
    for c in "\"\"".chars() {
        key(&mut app, KeyCode::Char(c));
    }
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Char('s'));
    assert!(app.status.contains("not saved"), "{}", app.status);
    assert_eq!(std::fs::read(&file).expect("read"), bytes);

    // Put a name back and save: atomic write, backup kept, the secret kept.
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Backspace);
    key(&mut app, KeyCode::Backspace);
    for c in "\"b\"".chars() {
        key(&mut app, KeyCode::Char(c));
    }
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Char('s'));
    assert!(app.status.starts_with("saved"), "{}", app.status);
    assert_eq!(std::fs::read(&file).expect("read"), b"\x0a\x01b\x10\x2a\x1a\x03tok");
    assert_eq!(std::fs::read(dir.path().join("req.bin.bak")).expect("backup"), bytes);
    key(&mut app, KeyCode::Char('q'));
    assert!(app.quit);
}

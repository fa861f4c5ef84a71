//! `csi-view tui`: the message as a tree of text-format lines, the selected field's spec
//! documentation beside it, in-place editing of scalar values and an atomic save.
//!
//! The tree is the text form the other commands print, so editing reuses the same encoder:
//! every committed edit is re-encoded at once and a value that does not encode is refused.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use prost_reflect::{DynamicMessage, FieldDescriptor, Kind, MessageDescriptor};
use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind};
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, List, ListItem, ListState, Paragraph, Wrap};

use csi_view_core::edit::{encode_like, write_atomically};
use csi_view_core::input::InputFormat;
use csi_view_core::mask::SecretMask;
use csi_view_core::schema::Schema;
use csi_view_core::text::{Redactions, TextOptions, TextPrinter, kind_name};

/// The state of the terminal UI.
pub struct App<'s> {
    schema: &'s Schema,
    desc: MessageDescriptor,
    lines: Vec<String>,
    fields: Vec<Option<FieldDescriptor>>,
    selected: usize,
    editing: Option<String>,
    redactions: Redactions,
    path: PathBuf,
    format: InputFormat,
    grpc: bool,
    trailing_newline: bool,
    dirty: bool,
    /// The last message for the status line.
    pub status: String,
    /// Set when the user asked to leave.
    pub quit: bool,
}

impl<'s> App<'s> {
    /// Opens `bytes` (read from `path` in `format`) as a message of type `desc`.
    ///
    /// # Errors
    ///
    /// When the bytes do not fit the type.
    #[allow(clippy::too_many_arguments, reason = "the file's identity: path, format, framing")]
    pub fn new(
        schema: &'s Schema,
        desc: MessageDescriptor,
        bytes: &[u8],
        path: &Path,
        format: InputFormat,
        grpc: bool,
        trailing_newline: bool,
        show_secrets: bool,
        mask: Option<&SecretMask>,
    ) -> Result<App<'s>> {
        let mut redactions = Redactions::default();
        let mut out = Vec::new();
        {
            let options = TextOptions { annotate: false, explain: false, show_secrets };
            let table = if show_secrets { None } else { Some(&mut redactions) };
            let mut printer = TextPrinter::new(schema, &mut out, options, table);
            if let Some(mask) = mask {
                printer = printer.with_mask(mask);
            }
            printer.print(&desc, bytes, 0).map_err(|e| anyhow!("{e}"))?;
        }
        let text = String::from_utf8(out).context("the text form is not UTF-8")?;
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let mut app = App {
            schema,
            desc,
            fields: Vec::new(),
            lines,
            selected: 0,
            editing: None,
            redactions,
            path: path.to_path_buf(),
            format,
            grpc,
            trailing_newline,
            dirty: false,
            status: "↑/↓ move · Enter edit · s save · F save despite violations · q quit".into(),
            quit: false,
        };
        app.map_fields();
        Ok(app)
    }

    /// The text lines of the tree.
    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    /// Works out which field each line shows.
    fn map_fields(&mut self) {
        let mut stack: Vec<Option<MessageDescriptor>> = vec![Some(self.desc.clone())];
        self.fields = self
            .lines
            .iter()
            .map(|line| {
                let t = line.trim();
                let current = stack.last().cloned().flatten();
                if t == "}" {
                    stack.pop();
                    return None;
                }
                if let Some(name) = t.strip_suffix(" {") {
                    let f = current.as_ref().and_then(|d| d.get_field_by_name(name));
                    stack.push(f.as_ref().and_then(|f| match f.kind() {
                        Kind::Message(m) => Some(m),
                        _ => None,
                    }));
                    return f;
                }
                let name = t.split(':').next().unwrap_or_default();
                current.and_then(|d| d.get_field_by_name(name))
            })
            .collect();
    }

    fn editable(&self, i: usize) -> bool {
        self.fields
            .get(i)
            .and_then(Option::as_ref)
            .is_some_and(|f| !matches!(f.kind(), Kind::Message(_)))
            && self.lines[i].contains(": ")
    }

    fn text(&self) -> String {
        let mut t = self.lines.join("\n");
        t.push('\n');
        t
    }

    fn encode(&self) -> Result<Vec<u8>> {
        csi_view_core::textparse::encode_text(&self.desc, &self.text(), Some(&self.redactions))
            .map_err(|e| anyhow!("{e}"))
    }

    /// Handles one key press.
    pub fn handle_key(&mut self, key: KeyEvent) {
        if key.kind != KeyEventKind::Press {
            return;
        }
        if let Some(buf) = self.editing.as_mut() {
            match key.code {
                KeyCode::Char(c) => buf.push(c),
                KeyCode::Backspace => {
                    buf.pop();
                }
                KeyCode::Esc => {
                    self.editing = None;
                    self.status = "edit cancelled".into();
                }
                KeyCode::Enter => self.commit(),
                _ => {}
            }
            return;
        }
        let last = self.lines.len().saturating_sub(1);
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => self.selected = (self.selected + 1).min(last),
            KeyCode::PageUp => self.selected = self.selected.saturating_sub(10),
            KeyCode::PageDown => self.selected = (self.selected + 10).min(last),
            KeyCode::Home => self.selected = 0,
            KeyCode::End => self.selected = last,
            KeyCode::Enter | KeyCode::Char('e') => {
                if self.editable(self.selected) {
                    let line = &self.lines[self.selected];
                    let value =
                        line.split_once(": ").map(|(_, v)| v.to_owned()).unwrap_or_default();
                    self.editing = Some(value);
                    self.status = "editing: Enter to keep, Esc to cancel".into();
                } else {
                    self.status = "only scalar values can be edited here".into();
                }
            }
            KeyCode::Char('s') => self.save(false),
            KeyCode::Char('F') => self.save(true),
            KeyCode::Char('q') | KeyCode::Esc => {
                if self.dirty && !self.status.starts_with("unsaved") {
                    self.status = "unsaved changes: press q again to quit without saving".into();
                } else {
                    self.quit = true;
                }
            }
            _ => {}
        }
    }

    fn commit(&mut self) {
        let Some(value) = self.editing.take() else {
            return;
        };
        let i = self.selected;
        let old = self.lines[i].clone();
        let Some((name, _)) = old.split_once(": ") else {
            return;
        };
        self.lines[i] = format!("{name}: {value}");
        match self.encode() {
            Ok(_) => {
                self.dirty = self.dirty || self.lines[i] != old;
                self.status = format!("{}: changed (not saved yet)", name.trim());
            }
            Err(e) => {
                self.lines[i] = old;
                self.status = format!("refused: {e}");
            }
        }
    }

    fn save(&mut self, force: bool) {
        let result = (|| -> Result<String> {
            let bytes = self.encode()?;
            let msg = DynamicMessage::decode(self.desc.clone(), bytes.as_slice())
                .context("cannot decode the result")?;
            let violations = csi_view_core::validate::validate(self.schema, &msg);
            if !violations.is_empty() && !force {
                return Err(anyhow!(
                    "not saved: {} violation(s), first: {} (F saves anyway)",
                    violations.len(),
                    violations[0]
                ));
            }
            let out = encode_like(&bytes, self.format, self.grpc, self.trailing_newline)?;
            let backup = write_atomically(&self.path, &out)?;
            Ok(format!("saved '{}' (original kept as '{}')", self.path.display(), backup.display()))
        })();
        match result {
            Ok(s) => {
                self.dirty = false;
                self.status = s;
            }
            Err(e) => self.status = format!("{e:#}"),
        }
    }

    /// Draws the tree, the documentation pane and the status line.
    pub fn render(&self, frame: &mut Frame<'_>) {
        let [main, status] =
            Layout::vertical([Constraint::Min(3), Constraint::Length(1)]).areas(frame.area());
        let [tree, docs] =
            Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)])
                .areas(main);
        let items: Vec<ListItem<'_>> = self
            .lines
            .iter()
            .enumerate()
            .map(|(i, l)| match (&self.editing, i == self.selected) {
                (Some(buf), true) => {
                    let name = l.split_once(": ").map_or(l.as_str(), |(n, _)| n);
                    ListItem::new(format!("{name}: {buf}▏"))
                }
                _ => ListItem::new(l.as_str()),
            })
            .collect();
        let title =
            format!(" {} {} ", self.desc.full_name(), if self.dirty { "(modified)" } else { "" });
        let list = List::new(items)
            .block(Block::default().borders(Borders::ALL).title(title))
            .highlight_style(Style::default().add_modifier(Modifier::REVERSED));
        let mut state = ListState::default().with_selected(Some(self.selected));
        frame.render_stateful_widget(list, tree, &mut state);
        let doc = Paragraph::new(self.docs())
            .wrap(Wrap { trim: false })
            .block(Block::default().borders(Borders::ALL).title(" field "));
        frame.render_widget(doc, docs);
        frame.render_widget(Paragraph::new(self.status.as_str()), status);
    }

    fn docs(&self) -> Vec<Line<'static>> {
        let Some(Some(field)) = self.fields.get(self.selected) else {
            let line =
                self.lines.get(self.selected).map(|l| l.trim().to_owned()).unwrap_or_default();
            let what = if line.chars().next().is_some_and(|c| c.is_ascii_digit()) {
                "unknown field: not in the schema, kept as it is"
            } else {
                ""
            };
            return vec![Line::from(what)];
        };
        let facts = self.schema.field_facts(field);
        let label = if field.is_map() {
            "map"
        } else if field.is_list() {
            "repeated"
        } else {
            "singular"
        };
        let mut out = vec![
            Line::from(Span::styled(
                field.full_name().to_owned(),
                Style::default().add_modifier(Modifier::BOLD),
            )),
            Line::from(format!("#{} {} {}", field.number(), label, kind_name(&field.kind()))),
        ];
        let mut tags = vec![format!("{:?}", facts.presence).to_uppercase()];
        if facts.secret {
            tags.push("secret".into());
        }
        if facts.alpha {
            tags.push("alpha".into());
        }
        if let Some(max) = facts.size_limit.max_bytes() {
            tags.push(format!("max {max} bytes"));
        }
        if facts.non_negative {
            tags.push("non-negative".into());
        }
        out.push(Line::from(tags.join(", ")));
        out.push(Line::from(""));
        out.extend(self.schema.field_comment(field).lines().map(|l| Line::from(l.to_owned())));
        out
    }
}

/// Runs the UI on the terminal until the user quits.
///
/// # Errors
///
/// When the terminal cannot be used.
pub fn run(app: &mut App<'_>) -> Result<()> {
    let mut terminal = ratatui::init();
    let result = (|| -> Result<()> {
        while !app.quit {
            terminal.draw(|f| app.render(f))?;
            if let ratatui::crossterm::event::Event::Key(k) = ratatui::crossterm::event::read()? {
                app.handle_key(k);
            }
        }
        Ok(())
    })();
    ratatui::restore();
    result
}

//! Problems found in the inputs, each with a location and a label, rendered by miette.

use std::fmt;
use std::sync::Arc;

use miette::{LabeledSpan, NamedSource, SourceCode};

/// One input text, shared by every diagnostic that points into it.
#[derive(Debug, Clone)]
pub struct SourceFile {
    inner: Arc<NamedSource<String>>,
    line_starts: Arc<Vec<usize>>,
}

impl SourceFile {
    /// Wraps `text` under the display `name` (usually the path as given).
    pub fn new(name: impl AsRef<str>, text: impl Into<String>) -> Self {
        let text = text.into();
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        SourceFile {
            inner: Arc::new(NamedSource::new(name, text).with_language("markdown")),
            line_starts: Arc::new(line_starts),
        }
    }

    /// The display name.
    pub fn name(&self) -> &str {
        self.inner.name()
    }

    /// The whole text.
    pub fn text(&self) -> &str {
        self.inner.inner()
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (u32, u32) {
        let line = self.line_starts.partition_point(|&s| s <= offset).max(1) - 1;
        let start = self.line_starts[line];
        let col = self.text().get(start..offset).map_or(offset - start, |s| s.chars().count());
        (line as u32 + 1, col as u32 + 1)
    }

    /// Byte offset of the start of a 1-based line (the end of the text past the last line).
    pub fn line_offset(&self, line: u32) -> usize {
        self.line_starts
            .get((line as usize).saturating_sub(1))
            .copied()
            .unwrap_or(self.text().len())
    }

    /// Byte offset of a 1-based line and 0-based character column, as protobuf source info counts.
    pub fn offset_of(&self, line0: usize, col0: usize) -> usize {
        let start = self.line_offset(line0 as u32 + 1);
        let rest = &self.text()[start..];
        start + rest.char_indices().nth(col0).map_or(rest.len(), |(i, _)| i)
    }
}

/// How bad a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Worth knowing; output is still right.
    Advice,
    /// The input is inconsistent; output is produced with a stated choice.
    Warning,
    /// The input cannot be used; no output is produced.
    Error,
}

/// A problem in an input, pointing at the text that shows it.
#[derive(Debug, Clone)]
pub struct Diagnostic {
    /// How bad it is.
    pub severity: Severity,
    /// Lowercase, no trailing period, names quoted.
    pub message: String,
    /// The file it is in, if it is in one.
    pub source: Option<SourceFile>,
    /// Byte offset and length in `source`.
    pub span: (usize, usize),
    /// What the pointed-at text is.
    pub label: String,
    /// How to fix it, if there is a known way.
    pub help: Option<String>,
}

impl Diagnostic {
    /// A problem at `span` in `source`.
    pub fn at(
        severity: Severity,
        source: &SourceFile,
        span: (usize, usize),
        message: impl Into<String>,
        label: impl Into<String>,
    ) -> Self {
        Diagnostic {
            severity,
            message: message.into(),
            source: Some(source.clone()),
            span,
            label: label.into(),
            help: None,
        }
    }

    /// A problem that belongs to no file (a missing input, say).
    pub fn global(severity: Severity, message: impl Into<String>) -> Self {
        Diagnostic {
            severity,
            message: message.into(),
            source: None,
            span: (0, 0),
            label: String::new(),
            help: None,
        }
    }

    /// Adds a help line.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// `file:line:col` of the start, or the empty string for global problems.
    pub fn location(&self) -> String {
        match &self.source {
            Some(src) => {
                let (line, col) = src.line_col(self.span.0);
                format!("{}:{line}:{col}", src.name())
            }
            None => String::new(),
        }
    }

    /// True for [`Severity::Error`].
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The pointed-at source line with the label under its span, as compilers print it, for
    /// places that show a diagnostic without miette's graphical handler (a build script's
    /// output: csikit-build leaves that handler and its text-layout dependencies out of users'
    /// builds). Empty for a global problem.
    ///
    /// ```text
    ///    --> spec/README.md:12:5
    ///     |
    ///  12 |     strng address = 1;
    ///     |     ^^^^^ unknown type
    /// ```
    pub fn snippet(&self) -> String {
        let Some(src) = &self.source else { return String::new() };
        let (line, col) = src.line_col(self.span.0);
        let start = src.line_offset(line);
        let text = src.text();
        let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        let source_line = text[start..end].trim_end_matches('\r');
        // The caret run covers the span's characters on this line, at least one.
        let span_end = (self.span.0 + self.span.1).min(end);
        let width = text.get(self.span.0..span_end).map_or(1, |s| s.chars().count()).max(1);
        let gutter = " ".repeat(line.to_string().len());
        let pad = " ".repeat(col as usize - 1);
        let mut out = format!(
            "{gutter}--> {}:{line}:{col}\n{gutter} |\n{line} | {source_line}\n",
            src.name()
        );
        out.push_str(&format!("{gutter} | {pad}{} {}\n", "^".repeat(width), self.label));
        if let Some(help) = &self.help {
            out.push_str(&format!("{gutter} = help: {help}\n"));
        }
        out
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Diagnostic {}

impl miette::Diagnostic for Diagnostic {
    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.severity {
            Severity::Advice => miette::Severity::Advice,
            Severity::Warning => miette::Severity::Warning,
            Severity::Error => miette::Severity::Error,
        })
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help.as_ref().map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.source.as_ref().map(|s| &*s.inner as &dyn SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        self.source.as_ref()?;
        Some(Box::new(std::iter::once(LabeledSpan::new(
            Some(self.label.clone()),
            self.span.0,
            self.span.1,
        ))))
    }
}

/// Every problem found in one run, in the order found.
#[derive(Debug, Clone, Default)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// True when any problem is an error.
    pub fn has_errors(&self) -> bool {
        self.0.iter().any(Diagnostic::is_error)
    }

    /// Adds one.
    pub fn push(&mut self, d: Diagnostic) {
        self.0.push(d);
    }

    /// Adds many.
    pub fn extend(&mut self, ds: impl IntoIterator<Item = Diagnostic>) {
        self.0.extend(ds);
    }

    /// True when nothing was found.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Problems sorted by file and position, for stable output.
    pub fn sorted(mut self) -> Self {
        self.0.sort_by(|a, b| {
            let ka = (a.source.as_ref().map(|s| s.name().to_owned()), a.span.0);
            let kb = (b.source.as_ref().map(|s| s.name().to_owned()), b.span.0);
            ka.cmp(&kb)
        });
        self
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for d in &self.0 {
            let loc = d.location();
            if loc.is_empty() {
                writeln!(f, "{:?}: {}", d.severity, d.message)?;
            } else {
                writeln!(f, "{loc}: {:?}: {}", d.severity, d.message)?;
            }
        }
        Ok(())
    }
}

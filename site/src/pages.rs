//! The askama templates of the site (in `templates/docs/`) and the plain data they show.

use askama::Template;

use crate::i18n::Catalog;
use crate::prose::escape;

/// A page rendered: templates write into a String, and the only failure is a template's own
/// Display error, which ours never return.
pub(crate) fn render<T: Template>(t: &T) -> String {
    t.render().unwrap_or_else(|e| format!("<!-- template error: {} -->", escape(&e.to_string())))
}

/// A link to the same page in another language.
#[derive(Debug, Clone)]
pub struct LangLink {
    /// Language code.
    pub code: String,
    /// The language's own name.
    pub name: String,
    /// Href from the current page.
    pub href: String,
    /// The language shown.
    pub current: bool,
    /// That language's edition lacks the page: the link goes to its contents page.
    pub missing: bool,
}

/// An entry of the release menu.
#[derive(Debug, Clone)]
pub struct MenuEntry {
    /// The release (or package) name.
    pub label: String,
    /// Href from the current page.
    pub href: String,
    /// The edition shown.
    pub current: bool,
    /// The edition lacks the page: the link goes to its contents page.
    pub missing: bool,
    /// The edition folder, for a switch that keeps the reader's anchor.
    pub switch: Option<String>,
    /// A note after the entry, e.g. "latest".
    pub note: String,
}

/// A group of the release menu.
#[derive(Debug, Clone)]
pub struct MenuGroup {
    /// Its heading, empty for none.
    pub title: String,
    /// Its entries.
    pub entries: Vec<MenuEntry>,
}

/// The site navigation of one language: (title, page) pairs, pages relative to the language folder.
#[derive(Debug, Clone, Default)]
pub struct Nav {
    /// Guides (`crate::guides`) the edition has.
    pub guides: Vec<(String, String)>,
    /// Chapters of the spec.
    pub chapters: Vec<(String, String)>,
    /// Services, each with its RPCs.
    pub services: Vec<(String, Vec<(String, String)>)>,
}

/// What every page shares.
pub struct Layout<'a> {
    /// Language code of the page.
    pub lang: &'a str,
    /// Interface strings.
    pub cat: &'a Catalog,
    /// Page title.
    pub title: String,
    /// The page, relative to the language folder.
    pub page: String,
    /// From the page up to the edition folder (`""` or `"../"`).
    pub up: String,
    /// From the page up to the site root.
    pub root_up: String,
    /// The release (or package version) the edition shows.
    pub release: &'a str,
    /// What the header calls the edition, e.g. `v1.12.0` or `replication · main`.
    pub edition_label: String,
    /// The site's title in the header.
    pub site_title: String,
    /// The heading of the release menu.
    pub menu_title: String,
    /// The release menu.
    pub menu: Vec<MenuGroup>,
    /// The text of the link to the edition's changes page.
    pub changes: String,
    /// Whether the edition has a translation status page.
    pub status: bool,
    /// The language switcher.
    pub langs: Vec<LangLink>,
    /// Navigation.
    pub nav: &'a Nav,
    /// Notices at the top of the content.
    pub notices: Vec<Notice>,
    /// The footer line.
    pub footer: String,
}

/// A notice at the top of a page's content.
#[derive(Debug, Clone)]
pub struct Notice {
    /// Its kind: the CSS class `notice-KIND`.
    pub kind: &'static str,
    /// What it says.
    pub text: String,
    /// For a notice about where the whole page's text comes from: the name of the region it is,
    /// so a screen reader lists it among the page's landmarks; `None` for a plain notice.
    pub region: Option<String>,
}

impl Notice {
    /// A plain notice.
    pub fn plain(kind: &'static str, text: String) -> Notice {
        Notice { kind, text, region: None }
    }
}

/// A badge next to a field, RPC or type.
#[derive(Debug, Clone)]
pub struct Badge {
    /// CSS class suffix.
    pub class: &'static str,
    /// Text shown.
    pub text: String,
}

impl Badge {
    /// A badge of class `badge-CLASS` saying `text`.
    pub fn new(class: &'static str, text: String) -> Badge {
        Badge { class, text }
    }
}

/// One row of a field table.
#[derive(Debug, Clone)]
pub struct FieldRow {
    /// Anchor of the row.
    pub id: String,
    /// Field number (or enum value number).
    pub number: String,
    /// Field or value name.
    pub name: String,
    /// The type, as HTML with links.
    pub type_html: String,
    /// The label text.
    pub label: String,
    /// Badges.
    pub badges: Vec<Badge>,
    /// The comment, as HTML.
    pub comment_html: String,
}

/// A field table (messages) or value table (enums).
#[derive(Template)]
#[template(path = "docs/field_table.html")]
pub struct FieldTable<'a> {
    /// Interface strings.
    pub cat: &'a Catalog,
    /// Rows.
    pub rows: &'a [FieldRow],
    /// Enum values: no type and label columns.
    pub values: bool,
}

/// One row of an error table, cells as HTML.
#[derive(Debug, Clone)]
pub struct ErrorRowHtml {
    /// The row's anchor.
    pub id: String,
    /// Condition.
    pub condition: String,
    /// Code, e.g. `5 NOT_FOUND`.
    pub code: String,
    /// Description.
    pub description: String,
    /// Recovery.
    pub recovery: String,
    /// `lang` attribute when the row's language is not the page's.
    pub lang: Option<String>,
}

/// An error table.
#[derive(Template)]
#[template(path = "docs/error_table.html")]
pub struct ErrorTable<'a> {
    /// Interface strings.
    pub cat: &'a Catalog,
    /// Rows.
    pub rows: &'a [ErrorRowHtml],
    /// Whether any row has a recovery cell.
    pub recovery: bool,
    /// The table's caption, saying where its rows come from when they are carried from an
    /// older release; empty for none.
    pub caption: String,
}

/// A page of prose: the contents page or a chapter.
#[derive(Template)]
#[template(path = "docs/page.html")]
pub struct ProsePage<'a> {
    /// Shared parts.
    pub l: Layout<'a>,
    /// Rendered sections.
    pub body: String,
    /// The contents listing, on the contents page only.
    pub contents: Option<Contents>,
    /// The release line (HTML) at the top of the contents page; empty elsewhere.
    pub release_line: String,
}

/// The changes page of an edition.
#[derive(Template)]
#[template(path = "docs/changes.html")]
pub struct ChangesPage<'a> {
    /// Shared parts.
    pub l: Layout<'a>,
    /// The heading.
    pub heading: String,
    /// The paragraph under it.
    pub intro: String,
    /// The findings as HTML.
    pub body: String,
}

/// A page of the layout before releases, sending the reader on.
#[derive(Template)]
#[template(path = "docs/redirect.html")]
pub struct RedirectPage {
    /// Href of the new page, relative to this one.
    pub target: String,
    /// The same as a JavaScript string literal.
    pub target_js: String,
    /// Whether the reader's anchor goes along (not when the target is a contents page with a
    /// notice).
    pub keep_hash: bool,
}

/// An RPC on the contents page: name, href, badges.
pub type RpcEntry = (String, String, Vec<Badge>);

/// The reference listing on the contents page.
#[derive(Debug, Clone, Default)]
pub struct Contents {
    /// Guides: (title, href).
    pub guides: Vec<(String, String)>,
    /// Chapters: (title, href).
    pub chapters: Vec<(String, String)>,
    /// Services: (name, rpcs).
    pub services: Vec<(String, Vec<RpcEntry>)>,
    /// Messages: (full name, href).
    pub messages: Vec<(String, String)>,
    /// Enums: (full name, href).
    pub enums: Vec<(String, String)>,
}

/// The page of one RPC.
#[derive(Template)]
#[template(path = "docs/rpc.html")]
pub struct RpcPage<'a> {
    /// Shared parts.
    pub l: Layout<'a>,
    /// RPC name.
    pub name: String,
    /// Service name.
    pub service: String,
    /// Badges.
    pub badges: Vec<Badge>,
    /// Request: (full name, href to the ref page, anchor id on this page).
    pub request: (String, String, String),
    /// Response: (full name, href, anchor id).
    pub response: (String, String, String),
    /// Rendered prose.
    pub body: String,
    /// Request field table HTML.
    pub request_table: String,
    /// Response field table HTML.
    pub response_table: String,
    /// Error table HTML when the prose did not hold one.
    pub errors: Option<String>,
}

/// A guide page (`crate::guides`).
#[derive(Template)]
#[template(path = "docs/guide.html")]
pub struct GuidePage<'a> {
    /// Shared parts.
    pub l: Layout<'a>,
    /// The heading.
    pub heading: String,
    /// The body as HTML.
    pub body: String,
}

/// A "Used in" entry: (text, href).
pub type UseLink = (String, String);

/// The reference page of a message or enum.
#[derive(Template)]
#[template(path = "docs/type.html")]
pub struct TypePage<'a> {
    /// Shared parts.
    pub l: Layout<'a>,
    /// Full name.
    pub full_name: String,
    /// Message or enum (localised).
    pub kind: String,
    /// Badges.
    pub badges: Vec<Badge>,
    /// The comment as HTML.
    pub comment_html: String,
    /// The field or value table HTML.
    pub table: String,
    /// Oneofs: (name, required badge).
    pub oneofs: Vec<(String, Option<Badge>)>,
    /// Back-references.
    pub used_in: Vec<UseLink>,
    /// Heading of the table.
    pub table_heading: String,
}

/// One row of the status page.
#[derive(Debug, Clone)]
pub struct StatusRow {
    /// Heading level, for indentation.
    pub level: u8,
    /// Section title.
    pub title: String,
    /// Href to the section.
    pub href: String,
    /// Per translation: (class, text).
    pub cells: Vec<(String, String)>,
}

/// The translation status page.
#[derive(Template)]
#[template(path = "docs/status.html")]
pub struct StatusPage<'a> {
    /// Shared parts.
    pub l: Layout<'a>,
    /// Intro text.
    pub intro: String,
    /// Column heads: (language name, source release).
    pub columns: Vec<(String, String)>,
    /// Summary per column: (class, text, count).
    pub summary: Vec<Vec<(String, String, usize)>>,
    /// Rows.
    pub rows: Vec<StatusRow>,
}

/// A CSI release on the front page.
#[derive(Debug, Clone)]
pub struct RootRelease {
    /// Its name.
    pub name: String,
    /// Its edition folder.
    pub dir: String,
    /// The newest release, the default.
    pub latest: bool,
    /// The first release of the history (its changes page has no diff).
    pub first: bool,
}

/// A translation on the front page.
#[derive(Debug, Clone)]
pub struct RootTranslation {
    /// Language code.
    pub lang: String,
    /// The language's own name.
    pub name: String,
    /// The site title in that language.
    pub title: String,
    /// The release it follows.
    pub release: String,
    /// Its edition folder.
    pub dir: String,
}

/// A csi-addons package on the front page.
#[derive(Debug, Clone)]
pub struct RootAddon {
    /// Its name.
    pub name: String,
    /// The version shown.
    pub version: String,
    /// Where it comes from.
    pub source: String,
    /// Its edition folder.
    pub dir: String,
    /// Whether it has an earlier version to compare with.
    pub changes: bool,
}

/// The site's front door: every release, translation and csi-addons package.
#[derive(Template)]
#[template(path = "docs/root.html")]
pub struct RootPage {
    /// The default edition's folder.
    pub latest: String,
    /// English releases, newest first.
    pub releases: Vec<RootRelease>,
    /// Translations.
    pub translations: Vec<RootTranslation>,
    /// csi-addons packages.
    pub addons: Vec<RootAddon>,
}

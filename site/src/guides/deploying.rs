//! "Deploying a csikit driver": the csikit CLI's own guide (`cli/DEPLOYING.md`, which
//! `cargo xtask docs` reads and hands to the site as a [`GuideText`] named `deploying`), in every
//! English edition of a CSI release: what `csikit deploy` writes for each capability, and why.
//! The markdown is the one home of the text; the site only frames it.

use super::{Guide, Render, Scope};
use crate::input::GuideText;

/// The guide.
pub(super) const GUIDE: Guide = Guide { path: "guide/deploying.html", applies, title, body };

/// The name its text is given under.
const NAME: &str = "deploying";

fn text<'a>(scope: &Scope<'a>) -> Option<&'a GuideText> {
    scope.texts.iter().find(|t| t.name == NAME)
}

fn applies(scope: &Scope<'_>) -> bool {
    // The text is English, and about deploying a CSI plugin, not a csi-addons package.
    scope.csi && scope.lang == "en" && text(scope).is_some()
}

/// The markdown's first line, `# Title`, and the rest.
fn split(markdown: &str) -> (&str, &str) {
    let (first, rest) = markdown.split_once('\n').unwrap_or((markdown, ""));
    match first.strip_prefix("# ") {
        Some(title) => (title.trim(), rest),
        None => ("", markdown),
    }
}

fn title(scope: &Scope<'_>) -> String {
    text(scope).map(|t| split(&t.markdown).0.to_owned()).unwrap_or_default()
}

fn body(scope: &Scope<'_>, render: &Render<'_>) -> String {
    let Some(t) = text(scope) else { return String::new() };
    let (_, rest) = split(&t.markdown);
    render.prose.render(rest, 0, None, &|_| None).html
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn the_first_line_is_the_title() {
        assert_eq!(split("# Deploying\n\nText.\n"), ("Deploying", "\nText.\n"));
        assert_eq!(split("No title\nText"), ("", "No title\nText"));
    }
}

//! An edition's guide pages (`crate::guides`): each in the edition's frame, its names linked to
//! this edition and to the edition of the version before, its text in the search index.

use super::changes_page::EditionLinks;
use super::search::SearchIndex;
use super::version::{Lang, Site};
use crate::directory::{Directory, PageIdentity};
use crate::guides::{Guide, Render};
use crate::pages::{GuidePage, Nav, render};
use crate::prose::{Prose, text_of};

impl Site<'_> {
    pub(super) fn render_guide(
        &self,
        lang: &Lang<'_>,
        dir: &Directory<'_>,
        guide: &Guide,
        nav: &Nav,
        search: &mut SearchIndex,
    ) -> String {
        let scope = self.guide_scope(lang);
        let title = (guide.title)(&scope);
        let path = guide.path;
        let none = Vec::new();
        let prose = Prose {
            index: &self.index,
            page: path,
            inline: &none,
            context: &[],
            anchors: &lang.anchors,
        };
        let previous = dir.find(&lang.dir).and_then(|e| dir.previous(e));
        let links = EditionLinks { site: self, dir, previous, page: path };
        let body = (guide.body)(&scope, &Render { prose: &prose, links: &links });
        search.push("section", &title, path, &text_of(&body));
        let identity = PageIdentity { page: path, label: &title, element: None };
        let l = self.layout(lang, dir, &identity, title.clone(), nav);
        render(&GuidePage { l, heading: title, body })
    }
}

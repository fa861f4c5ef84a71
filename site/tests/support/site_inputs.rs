//! The site's inputs from the corpus, loaded as `cargo xtask docs` loads them
//! ([`csikit_site::load_corpus`] and [`csikit_site::load_guides`]): shared by the site tests and the site benchmark.

use csikit_site::{Release, SiteOptions};

/// The inputs, or `None` (after a loud message) when the corpus is absent, unless
/// `CSIKIT_REQUIRE_CORPUS=1` makes that a failure.
pub fn site_inputs() -> Option<(Vec<Release>, SiteOptions)> {
    let corpus = csikit_spec::corpus_or_skip()?;
    match csikit_site::load_corpus(&corpus) {
        Ok((releases, mut options)) => {
            let workspace = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
            options.guides = csikit_site::load_guides(&workspace).unwrap_or_else(|e| panic!("{e}"));
            Some((releases, options))
        }
        Err(csikit_site::LoadError::Spec { dir, errors }) => {
            panic!("{}: {errors}", dir.display())
        }
        Err(e) => {
            csikit_spec::skip_missing(&e.to_string());
            None
        }
    }
}

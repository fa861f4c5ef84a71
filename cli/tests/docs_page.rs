//! The docs page "Deploying a csikit driver" (`cli/DEPLOYING.md`) holds the sidecar table as
//! `csikit_cli::deploy::explain::markdown` writes it, so the page cannot drift from the data.
//! `UPDATE_EXPECT=1` rewrites the generated section.

use std::path::Path;

const START: &str = "<!-- generated from cli/data/sidecars.toml";
const END: &str = "<!-- end of the generated table -->";

#[test]
fn the_page_holds_the_table() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("DEPLOYING.md");
    let page = std::fs::read_to_string(&path).expect("read DEPLOYING.md");
    let start = page.find(START).expect("the page marks where the table starts");
    let start = start + page[start..].find('\n').expect("a line") + 1;
    let end = page.find(END).expect("the page marks where the table ends");
    let table = csikit_cli::deploy::table::Table::builtin().expect("the table");
    let generated = csikit_cli::deploy::explain::markdown(&table);
    let wanted = format!("\n{generated}\n");
    if page[start..end] == wanted {
        return;
    }
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        let updated = format!("{}{wanted}{}", &page[..start], &page[end..]);
        std::fs::write(&path, updated).expect("write DEPLOYING.md");
        return;
    }
    panic!(
        "cli/DEPLOYING.md's table differs from cli/data/sidecars.toml; run \
         `UPDATE_EXPECT=1 cargo test -p csikit-cli --test docs_page`"
    );
}

//! Generates the bindings of `tests/data/myaddon` into `OUT_DIR`, as a user's build script does.

fn main() {
    if let Err(e) = csikit_build::configure().compile("tests/data/myaddon") {
        // The diagnostics are on stderr already; cargo shows them with this line.
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

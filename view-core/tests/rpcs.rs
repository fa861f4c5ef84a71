//! The error tables and obligations a schema holds, from each kind of source: the built-in schema
//! (csikit's generated tables) and the same release read from its spec folder (the Model) give the
//! same row for every RPC and code; the release's `.proto` alone states none and says so.

use csi_view_core::method;
use csi_view_core::rpcs::ErrorLookup;
use csi_view_core::schema::{self, Schema};

#[test]
fn the_models_rows_are_the_generated_ones_and_a_proto_alone_has_none() {
    let Some(corpus) = csikit_spec::corpus_or_skip() else {
        return;
    };
    let dir = corpus.join("csi-spec").join(csikit::SPEC_RELEASE);
    let builtin = Schema::builtin().expect("built in");
    let mut loaded = Schema::default();
    schema::load_spec_dirs(&mut loaded, std::slice::from_ref(&dir)).expect("spec folder");
    let mut compared = 0;
    for m in method::all(&loaded) {
        let b = method::resolve(&builtin, &method::path(&m)).expect("same RPC built in");
        for code in 0..=16 {
            let (x, y) = (loaded.error_rows(&m, code), builtin.error_rows(&b, code));
            let key = |l: &ErrorLookup| -> Vec<(String, String, String)> {
                l.rows()
                    .iter()
                    .map(|r| (r.condition.clone(), r.code.clone(), r.recovery.clone()))
                    .collect()
            };
            assert_eq!(key(&x), key(&y), "{} code {code}", m.name());
            compared += x.rows().len();
        }
    }
    assert!(compared > 100, "only {compared} rows compared");

    // Obligations: stated by the spec folder, not by the built-in schema until set.
    let obliged = loaded.obligations("csi.v1").expect("the spec states obligations");
    assert!(obliged.iter().any(|o| o.rpc == "CreateVolume"
        && o.obligation.if_any.iter().any(|c| c.name == "CREATE_DELETE_VOLUME")));
    assert!(builtin.obligations("csi.v1").is_none());

    let mut proto = Schema::default();
    schema::load_proto(&mut proto, &dir.join("csi.proto"), &[]).expect("proto alone");
    let m = method::resolve(&proto, "CreateVolume").expect("CreateVolume");
    assert!(matches!(proto.error_rows(&m, 5), ErrorLookup::NoTables));
    assert_eq!(
        proto.error_rows(&m, 5).explain("CreateVolume", "NOT_FOUND"),
        ["spec: no error table in this source"]
    );
    assert!(proto.obligations("csi.v1").is_none());
}

/// `describe METHOD`'s outline: the built-in schema (csikit's generated facts and catalog) and the
/// same release read from its corpus folder (the Model, carried facts included) set out every RPC
/// alike, obligations aside (the built-in schema takes those from csikit's server tables, which
/// this crate does not compile); a new RPC of a release read from its proto alone has no table of
/// its own, and the general table says where it is carried from.
#[test]
fn an_outline_reads_the_same_from_the_generated_tables_and_the_model() {
    let Some(corpus) = csikit_spec::corpus_or_skip() else {
        return;
    };
    let dir = corpus.join("csi-spec").join(csikit::SPEC_RELEASE);
    let builtin = Schema::builtin().expect("built in");
    let mut loaded = Schema::default();
    schema::load_spec_dirs(&mut loaded, std::slice::from_ref(&dir)).expect("spec folder");
    let without_obligation = |text: String| -> String {
        text.lines().filter(|l| !l.starts_with("  obliged:")).collect::<Vec<_>>().join("\n")
    };
    for m in method::all(&loaded) {
        let b = method::resolve(&builtin, &method::path(&m)).expect("same RPC built in");
        assert_eq!(
            without_obligation(csi_view_core::outline::outline(&loaded, &m)),
            without_obligation(csi_view_core::outline::outline(&builtin, &b)),
            "{}",
            m.name()
        );
    }
    let m = method::resolve(&loaded, "ControllerListVolumeHealth").expect("v1.13.0's RPC");
    let text = csi_view_core::outline::outline(&loaded, &m);
    let carried = csikit::v1::errors::GENERAL[0].carried_from.expect("carried general table");
    for line in [
        "rpc csi.v1.Controller/ControllerListVolumeHealth  alpha",
        "  obliged: when the plugin advertises Controller LIST_VOLUME_HEALTH (the proto's comment)",
        "  request csi.v1.ControllerListVolumeHealthRequest  alpha",
        "  errors (ControllerListVolumeHealth's error table): none stated by this source",
    ] {
        assert!(text.lines().any(|l| l == line), "{line:?} in:\n{text}");
    }
    assert!(
        text.contains(&format!("(the general error table, carried from {carried}'s spec.md):"))
    );
    assert!(
        text.lines().any(|l| l.starts_with("    secrets 3 ") && l.contains("secret")),
        "{text}"
    );
    let create = method::resolve(&loaded, "CreateVolume").expect("CreateVolume");
    let text = csi_view_core::outline::outline(&loaded, &create);
    assert!(
        text.contains(&format!("CREATE_DELETE_VOLUME ({carried}'s spec.md, carried)")),
        "{text}"
    );
    // A field the release reserved, named as the release before named it.
    let get = method::resolve(&builtin, "ControllerGetVolume").expect("ControllerGetVolume");
    let text = csi_view_core::outline::outline(&builtin, &get);
    assert!(
        text.lines().any(|l| l.starts_with("    volume_condition 2 ")
            && l.ends_with(&format!("reserved in {}", csikit::SPEC_RELEASE))),
        "{text}"
    );
}

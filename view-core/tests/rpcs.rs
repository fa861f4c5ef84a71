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

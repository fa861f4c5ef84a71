//! The tables the skeleton's start-up report reads (`csikit::v1::server::Spec`'s `OBLIGATIONS`
//! and `IMPLICATIONS`) against the Model of the release `csikit::v1` is generated from, loaded
//! with the carry: one row per obligation and implication the Model holds, none of its own, and
//! each saying whose word it is (the release's prose, an older release's prose carried, or the
//! proto's comment).

use csikit::runtime::server::{PluginSpec as _, Stated};
use csikit::v1::server::Spec;
use csikit_spec::LoadOptions;

fn capability(service: &str, name: &str) -> (String, String) {
    (service.to_owned(), name.to_owned())
}

/// Whose word a row is, owned, to compare the tables' `Stated` with the Model's provenance.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Said {
    Prose,
    Carried(String),
    Comment,
}

impl From<Stated> for Said {
    fn from(s: Stated) -> Self {
        match s {
            Stated::Prose => Said::Prose,
            Stated::Carried(from) => Said::Carried(from.to_owned()),
            Stated::Comment => Said::Comment,
        }
    }
}

#[test]
fn obligations_and_implications_are_the_models() {
    let Some(corpus) = csikit_spec::corpus_or_skip() else { return };
    let dir = corpus.join("csi-spec").join(csikit::SPEC_RELEASE);
    let model = csikit_spec::load_source(&dir, &LoadOptions::default()).model.expect("model");
    let carried = model.source.carried.as_ref().map(|c| c.from.clone());

    let mut expected = Vec::new();
    for s in &model.services {
        for m in &s.methods {
            let Some(o) = &m.obligation else { continue };
            let stated = match (&m.carried_from, o.from_comment) {
                (_, true) => Said::Comment,
                (Some(from), false) => Said::Carried(from.clone()),
                (None, false) => Said::Prose,
            };
            let if_any: Vec<_> = o.if_any.iter().map(|c| capability(&c.service, &c.name)).collect();
            expected.push((s.name.clone(), m.name.clone(), if_any, stated));
        }
    }
    let got: Vec<_> = Spec::OBLIGATIONS
        .iter()
        .map(|o| {
            let if_any: Vec<_> = o.if_any.iter().map(|c| capability(c.0, c.1)).collect();
            (o.service.to_owned(), o.rpc.to_owned(), if_any, Said::from(o.stated))
        })
        .collect();
    let (mut expected, mut got) = (expected, got);
    expected.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    got.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    assert_eq!(got, expected);

    // The four health RPCs are obliged by their capabilities, as the proto's comments say.
    for rpc in [
        "ControllerListVolumeHealth",
        "ControllerGetVolumeHealth",
        "NodeGetVolumeHealth",
        "NodeGetStorageHealth",
    ] {
        let o = Spec::OBLIGATIONS.iter().find(|o| o.rpc == rpc);
        let o = o.unwrap_or_else(|| panic!("{rpc}: no obligation"));
        assert_eq!((o.stated, o.if_any.len()), (Stated::Comment, 1), "{rpc}");
    }
    // An RPC whose schema is unchanged since the carried release says so.
    if let Some(from) = carried {
        let o = Spec::OBLIGATIONS.iter().find(|o| o.rpc == "ValidateVolumeCapabilities");
        assert_eq!(o.map(|o| Said::from(o.stated)), Some(Said::Carried(from)));
    }

    // Implications: the Model's, every one, each the proto's comment.
    let expected: Vec<_> = model
        .implications
        .iter()
        .map(|i| {
            (
                capability(&i.capability.service, &i.capability.name),
                capability(&i.requires.service, &i.requires.name),
            )
        })
        .collect();
    let got: Vec<_> = Spec::IMPLICATIONS
        .iter()
        .map(|i| {
            (capability(i.capability.0, i.capability.1), capability(i.requires.0, i.requires.1))
        })
        .collect();
    assert_eq!(got, expected);
    assert!(
        got.contains(&(
            capability("Controller", "LIST_VOLUME_HEALTH"),
            capability("Controller", "GET_VOLUME_HEALTH")
        )),
        "{got:?}"
    );
    assert!(Spec::IMPLICATIONS.iter().all(|i| i.stated == Stated::Comment));
    // The numbers are the enum's.
    for i in Spec::IMPLICATIONS {
        for (service, name, number) in [i.capability, i.requires] {
            let e = model
                .enums
                .iter()
                .find(|e| e.full_name == format!("csi.v1.{service}ServiceCapability.RPC.Type"))
                .unwrap_or_else(|| panic!("{service}: no capability enum"));
            let value = e.values.iter().find(|v| v.name == name).expect("value");
            assert_eq!(number, value.number, "{name}");
        }
    }
}

//! Controller service cases on mutable parameters: CreateVolume and ControllerModifyVolume accept
//! the ones the plugin supports (`--mutable-parameters`) and refuse a key it cannot know with
//! INVALID_ARGUMENT, as csi-sanity's `XXX_FakeKey` does.

use std::collections::HashMap;

use csikit::v1::ControllerModifyVolumeRequest;
use csikit::v1::controller_service_capability::rpc::Type as Ctl;
use tonic::Code;

use crate::case::{Case, Need, body};
use crate::report::Outcome;
use crate::sentence::Sentence;
use crate::suite::{Suite, check, expect};

const CREATE: Need = Need::Ctl(Ctl::CreateDeleteVolume);
const MODIFY: Need = Need::Ctl(Ctl::ModifyVolume);

/// A mutable parameter no plugin supports (csi-sanity's).
const FAKE_KEY: &str = "XXX_FakeKey";

const NOT_SUPPORTED: Sentence = Sentence::must(
    "ControllerModifyVolume Errors",
    "Parameters not supported | 3 INVALID_ARGUMENT | Indicates that the CO has specified invalid mutable parameter keys or values, or the specified volume cannot support the specified parameters. The SP MUST NOT have applied any modification to the volume as part of this specific call.",
);

pub(crate) const CASES: &[Case] = &[
    Case {
        name: "modify: CreateVolume with accepted mutable_parameters is OK",
        needs: &[CREATE, MODIFY, Need::MutableParameters],
        sentence: Sentence::must(
            "CreateVolume",
            "The `mutable_parameters` field SHALL contain opaque volume attributes that are defined at creation time but MAY also be changed during the lifetime of the volume via a subsequent `ControllerModifyVolume` RPC.",
        ),
        body: body!(create_accepted),
    },
    Case {
        name: "modify: CreateVolume with an unsupported mutable parameter is INVALID_ARGUMENT",
        needs: &[CREATE, MODIFY],
        sentence: Sentence::must(
            "Error Scheme",
            "Invalid or unsupported field in the request | 3 INVALID_ARGUMENT | Indicates that the one or more fields in this field is either not allowed by the Plugin or has an invalid value.",
        ),
        body: body!(create_fake_key),
    },
    Case {
        name: "modify: ControllerModifyVolume with accepted parameters is OK, twice (idempotent)",
        needs: &[CREATE, MODIFY, Need::MutableParameters],
        sentence: Sentence::must("ControllerModifyVolume", "This operation MUST be idempotent."),
        body: body!(modify_accepted),
    },
    Case {
        name: "modify: ControllerModifyVolume with an unsupported key is INVALID_ARGUMENT",
        needs: &[CREATE, MODIFY],
        sentence: NOT_SUPPORTED,
        body: body!(modify_fake_key),
    },
];

async fn modify(
    s: &mut Suite,
    volume: &str,
    mutable_parameters: HashMap<String, String>,
) -> Result<(), tonic::Status> {
    let req = ControllerModifyVolumeRequest {
        volume_id: volume.into(),
        secrets: s.secrets("ControllerModifyVolume"),
        mutable_parameters,
    };
    s.ask(req).await.map(drop)
}

fn with_fake_key(s: &Suite) -> HashMap<String, String> {
    let mut p = s.cfg.mutable_parameters.clone();
    p.insert(FAKE_KEY.into(), "csi-conformance".into());
    p
}

async fn create_accepted(s: &mut Suite) -> Outcome {
    let name = s.name("mutable");
    let mut r = s.create_request(&name, 0);
    r.mutable_parameters = s.cfg.mutable_parameters.clone();
    let v = s.create(r).await;
    expect(&v, Code::Ok, "CreateVolume with the accepted mutable_parameters")
}

async fn create_fake_key(s: &mut Suite) -> Outcome {
    let name = s.name("mutable-fake");
    let mut r = s.create_request(&name, 0);
    r.mutable_parameters = with_fake_key(s);
    let v = s.create(r).await;
    expect(
        &v,
        Code::InvalidArgument,
        &format!("CreateVolume with the mutable parameter '{FAKE_KEY}'"),
    )
}

async fn modify_accepted(s: &mut Suite) -> Outcome {
    let fixture = s.fixture.clone();
    let params = s.cfg.mutable_parameters.clone();
    for what in ["ControllerModifyVolume", "ControllerModifyVolume again"] {
        let r = modify(s, &fixture, params.clone()).await;
        check!(expect(&r, Code::Ok, what));
    }
    Outcome::Passed
}

async fn modify_fake_key(s: &mut Suite) -> Outcome {
    let fixture = s.fixture.clone();
    let params = with_fake_key(s);
    let r = modify(s, &fixture, params).await;
    expect(&r, Code::InvalidArgument, &format!("ControllerModifyVolume with '{FAKE_KEY}'"))
}

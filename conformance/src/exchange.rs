//! Every call the suite makes goes through here, typed ([`Suite::ask`]) or built by reflection
//! ([`Suite::raw`]): the request is sent as bytes on its method's path (the path from the spec's
//! facts), and what comes back is checked the same way for both: the answer against the facts
//! (REQUIRED fields, limits, non-negative numbers, declared enums), for the secret values the
//! suite sent, against the request that produced it and what the plugin advertises
//! ([`crate::answers`]), and an error's status against the Error Scheme.

use bytes::Bytes;
use csikit::Validate;
use csikit::facts::MethodFacts;
use prost::Message;
use tonic::{Code, Status};

use crate::answers::{Rpc, check_status};
use crate::client::raw_call;
use crate::sentence::general;
use crate::suite::Suite;

/// The facts of the RPC named `name`.
pub(crate) fn method(name: &str) -> Option<&'static MethodFacts> {
    csikit::v1::facts::FACTS.methods.iter().find(|m| m.name == name)
}

impl Suite {
    /// A typed call: `request` sent to its RPC within the deadline, the answer decoded (once)
    /// and checked (see the module's words). A deadline passed is DEADLINE_EXCEEDED, whatever
    /// the plugin does.
    pub(crate) async fn ask<Q: Rpc>(&self, request: Q) -> Result<Q::Response, Status> {
        let Some(method) = method(Q::METHOD) else {
            return Err(Status::internal(format!(
                "no facts for the RPC {} (a suite bug)",
                Q::METHOD
            )));
        };
        let bytes = self.send(method, Bytes::from(request.encode_to_vec())).await?;
        let name = short(&method.output);
        let answer = match Q::Response::decode(bytes.as_slice()) {
            Ok(answer) => answer,
            Err(e) => {
                self.undecodable(name, &csikit::ValidateEncodedError::Decode(e.clone()));
                self.answered(method, &bytes);
                return Err(Status::new(
                    Code::Unknown,
                    format!("the answer does not decode as {}: {e}", method.output),
                ));
            }
        };
        if let Err(v) = answer.validate() {
            self.violations(name, &v);
        }
        self.v1_12_conditions(method, &bytes);
        self.answered(method, &bytes);
        self.check_answer(|answers, against, out| {
            answers.check(against, &request, &answer, &bytes, out);
        });
        Ok(answer)
    }

    /// A call of `method` with encoded `request` (built by reflection), its answer checked as
    /// [`Suite::ask`] checks one.
    pub(crate) async fn raw(
        &self,
        method: &MethodFacts,
        request: Vec<u8>,
    ) -> Result<Vec<u8>, Status> {
        let request = Bytes::from(request);
        let answer = self.send(method, request.clone()).await?;
        let name = short(&method.output);
        match csikit::validate_encoded(&method.output, &answer) {
            Ok(()) => {}
            Err(csikit::ValidateEncodedError::Invalid(v)) => self.violations(name, &v),
            Err(e) => self.undecodable(name, &e),
        }
        self.v1_12_conditions(method, &answer);
        self.answered(method, &answer);
        // An RPC the table does not hold (a test holds it to the facts) or bytes that do not
        // decode (a problem already, when it is the answer) leave nothing more to check.
        self.check_answer(|answers, against, out| {
            let _ = answers.check_encoded(against, &method.name, &request, &answer, out);
        });
        Ok(answer)
    }

    /// Sends the bytes; an error's status is checked against the Error Scheme and for secrets.
    async fn send(&self, method: &MethodFacts, request: Bytes) -> Result<Vec<u8>, Status> {
        let answer = raw_call(&self.ch, &method.path, request, self.t).await;
        if let Err(s) = &answer {
            let what = status_of(short(&method.output));
            self.scan(&what, s.message().as_bytes());
            self.check_answer(|_, _, out| check_status(&what, s, out));
        }
        answer
    }

    /// A plugin still on CSI v1.12.0 answers `volume_condition` (field 2 of three responses,
    /// reserved in v1.13.0, so `csikit::v1` reads past it): each one present is held to v1.12.0's
    /// rules (`csikit::v1_12`: `abnormal` and `message` REQUIRED, `message` within 128 bytes), as
    /// the suite held it before csikit moved to v1.13.0. A v1.13.0 plugin never sends it.
    fn v1_12_conditions(&self, method: &MethodFacts, bytes: &[u8]) {
        use csikit::FieldPath;
        let root = FieldPath::ROOT;
        let mut out = csikit::Violations::new();
        match &*method.output {
            "csi.v1.ListVolumesResponse" => {
                let Ok(r) = csikit::v1_12::ListVolumesResponse::decode(bytes) else { return };
                let entries = root.field("entries");
                for (i, e) in r.entries.iter().enumerate() {
                    if let Some(c) = e.status.as_ref().and_then(|s| s.volume_condition.as_ref()) {
                        let entry = entries.index(i);
                        let status = entry.field("status");
                        c.validate_at(&status.field("volume_condition"), &mut out);
                    }
                }
            }
            "csi.v1.ControllerGetVolumeResponse" => {
                let Ok(r) = csikit::v1_12::ControllerGetVolumeResponse::decode(bytes) else {
                    return;
                };
                if let Some(c) = r.status.as_ref().and_then(|s| s.volume_condition.as_ref()) {
                    let status = root.field("status");
                    c.validate_at(&status.field("volume_condition"), &mut out);
                }
            }
            "csi.v1.NodeGetVolumeStatsResponse" => {
                let Ok(r) = csikit::v1_12::NodeGetVolumeStatsResponse::decode(bytes) else {
                    return;
                };
                if let Some(c) = &r.volume_condition {
                    c.validate_at(&root.field("volume_condition"), &mut out);
                }
            }
            _ => return,
        }
        if !out.is_empty() {
            self.violations(short(&method.output), &out);
        }
    }

    /// The checks of an answer's bytes: declared enum values and the secrets sent.
    fn answered(&self, method: &MethodFacts, bytes: &[u8]) {
        let name = short(&method.output);
        self.enums(&method.output, name, bytes);
        self.scan(name, bytes);
    }

    /// An answer that does not decode as the RPC's response.
    fn undecodable(&self, name: &str, e: &csikit::ValidateEncodedError) {
        self.problem(format!("{name}: does not decode"), e.to_string(), general::RESPONSE_DECODES);
    }
}

/// A message's name without its package: `CreateVolumeResponse`.
fn short(full_name: &str) -> &str {
    full_name.rsplit('.').next().unwrap_or(full_name)
}

/// Where a status message answering a call whose answer would be `name` stands.
fn status_of(name: &str) -> String {
    format!("the status message of {}", name.strip_suffix("Response").unwrap_or(name))
}

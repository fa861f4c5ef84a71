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
use crate::v1_12::Conditions;

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
        let old = self.v1_12_conditions(method, &bytes);
        self.answered(method, &bytes);
        self.check_answer(|answers, against, out| {
            answers.check(against, &request, &answer, &old, out);
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
        let old = self.v1_12_conditions(method, &answer);
        self.answered(method, &answer);
        // An RPC the table does not hold (a test holds it to the facts) or bytes that do not
        // decode (a problem already, when it is the answer) leave nothing more to check.
        self.check_answer(|answers, against, out| {
            let _ = answers.check_encoded(against, &method.name, &request, &answer, &old, out);
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

    /// A v1.12.0 plugin's `volume_condition`s in the answer, read once: held to v1.12.0's
    /// rules here, and handed to the answer checks.
    fn v1_12_conditions(&self, method: &MethodFacts, bytes: &[u8]) -> Conditions {
        let old = Conditions::read(&method.output, bytes);
        if !old.violations.is_empty() {
            self.violations(short(&method.output), &old.violations);
        }
        old
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

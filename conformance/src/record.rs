//! Where each case's result goes: the name filter, the verdict (a broken sentence that does not
//! bind the plugin with MUST is a note; `--strict` makes notes failures; an answer that broke the
//! spec fails the case), and the line printed as each case ends.

use std::time::Instant;

use crate::report::{CaseResult, Outcome};
use crate::sentence::{Sentence, general};
use crate::suite::Suite;

pub(crate) struct Recorder<'l> {
    pub(crate) results: Vec<CaseResult>,
    filter: Option<String>,
    strict: bool,
    line: &'l mut dyn FnMut(&CaseResult),
}

impl<'l> Recorder<'l> {
    pub(crate) fn new(
        filter: Option<String>,
        strict: bool,
        line: &'l mut dyn FnMut(&CaseResult),
    ) -> Recorder<'l> {
        Recorder { results: Vec::new(), filter, strict, line }
    }

    /// Whether the case named `name` is to run (`--filter`).
    pub(crate) fn wants(&self, name: &str) -> bool {
        self.filter.as_deref().is_none_or(|f| name.contains(f))
    }

    /// Records a case that ran (or was skipped): its verdict from its sentence, then from what the
    /// answers it got broke.
    pub(crate) fn record(
        &mut self,
        suite: &Suite,
        name: String,
        sentence: Sentence,
        started: Instant,
        outcome: Outcome,
    ) {
        let outcome = verdict(sentence, outcome, &suite.take_problems(), self.strict);
        let r = CaseResult { name, sentence, outcome, duration: started.elapsed() };
        (self.line)(&r);
        self.results.push(r);
    }
}

/// A case's verdict: a broken sentence that does not bind the plugin with MUST is a note; what
/// the answers broke (`problems`) fails a case that did not fail already; `strict` makes notes
/// failures.
pub(crate) fn verdict(
    sentence: Sentence,
    outcome: Outcome,
    problems: &[String],
    strict: bool,
) -> Outcome {
    let outcome = match outcome {
        Outcome::Failed(why) if !sentence.fails_plugin() => Outcome::Note(why),
        other => other,
    };
    let outcome = if problems.is_empty() || matches!(outcome, Outcome::Failed(_)) {
        outcome
    } else {
        Outcome::Failed(format!(
            "an answer broke the spec ({}): {}",
            general::RESPONSES,
            problems.join("; ")
        ))
    };
    match outcome {
        Outcome::Note(why) if strict => Outcome::Failed(why),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_plugin_must_fails_and_strict_makes_notes_failures() {
        let failed = || Outcome::Failed("x".into());
        assert_eq!(verdict(general::MISSING_REQUIRED, failed(), &[], false), failed());
        for sentence in [general::SIZE_LIMITS, general::SECRET_KEYS, Sentence::should("s", "t")] {
            assert_eq!(verdict(sentence, failed(), &[], false), Outcome::Note("x".into()));
            assert_eq!(verdict(sentence, failed(), &[], true), failed());
        }
        // A broken answer fails a case that passed, whatever the case's own sentence.
        let broken = ["GetPluginInfoResponse: name: is REQUIRED".to_owned()];
        let v = verdict(general::SIZE_LIMITS, Outcome::Passed, &broken, false);
        assert!(matches!(&v, Outcome::Failed(w) if w.contains("name: is REQUIRED")), "{v:?}");
        assert_eq!(
            verdict(general::MISSING_REQUIRED, Outcome::Skipped("no".into()), &[], true),
            Outcome::Skipped("no".into())
        );
    }
}

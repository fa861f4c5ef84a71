//! Where each case's result goes: the name filter, the verdict (a broken sentence that does not
//! bind the plugin with MUST is a note; `--strict` makes notes failures; an answer that broke the
//! spec fails the case), and the line printed as each case ends.

use std::time::Instant;

use crate::report::{CaseResult, Outcome};
use crate::sentence::Sentence;
use crate::suite::Suite;

pub(crate) struct Recorder<'l> {
    pub(crate) results: Vec<CaseResult>,
    filter: Option<String>,
    strict: bool,
    line: &'l mut dyn FnMut(&CaseResult),
    /// The answers' broken rules already reported.
    seen: std::collections::BTreeSet<String>,
}

impl<'l> Recorder<'l> {
    pub(crate) fn new(
        filter: Option<String>,
        strict: bool,
        line: &'l mut dyn FnMut(&CaseResult),
    ) -> Recorder<'l> {
        Recorder { results: Vec::new(), filter, strict, line, seen: Default::default() }
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
        let problems = suite.take_problems();
        let outcome = verdict(sentence, outcome, self.strict);
        let r = CaseResult { name: name.clone(), sentence, outcome, duration: started.elapsed() };
        (self.line)(&r);
        self.results.push(r);
        // Each rule an answer broke is a result of its own, the first time it is broken.
        for p in problems {
            if !self.seen.insert(p.key.clone()) {
                continue;
            }
            let r = CaseResult {
                name: format!("answers: {}", p.key),
                sentence: p.sentence,
                outcome: verdict(
                    p.sentence,
                    Outcome::Failed(format!("{} (first in '{name}')", p.detail)),
                    self.strict,
                ),
                duration: std::time::Duration::ZERO,
            };
            (self.line)(&r);
            self.results.push(r);
        }
    }
}

/// A case's verdict: a broken sentence that does not bind the plugin with MUST is a note;
/// `strict` makes notes failures.
pub(crate) fn verdict(sentence: Sentence, outcome: Outcome, strict: bool) -> Outcome {
    match outcome {
        Outcome::Failed(why) if !sentence.fails_plugin() && !strict => Outcome::Note(why),
        Outcome::Note(why) if strict => Outcome::Failed(why),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sentence::general;

    #[test]
    fn only_a_plugin_must_fails_and_strict_makes_notes_failures() {
        let failed = || Outcome::Failed("x".into());
        assert_eq!(verdict(general::MISSING_REQUIRED, failed(), false), failed());
        for sentence in [general::SIZE_LIMITS, general::SECRET_KEYS, Sentence::should("s", "t")] {
            assert_eq!(verdict(sentence, failed(), false), Outcome::Note("x".into()));
            assert_eq!(verdict(sentence, failed(), true), failed());
        }
        assert_eq!(
            verdict(general::SIZE_LIMITS, Outcome::Note("y".into()), true),
            Outcome::Failed("y".into())
        );
        assert_eq!(
            verdict(general::MISSING_REQUIRED, Outcome::Skipped("no".into()), true),
            Outcome::Skipped("no".into())
        );
    }
}

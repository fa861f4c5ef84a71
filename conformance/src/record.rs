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
        let outcome = match outcome {
            Outcome::Failed(why) if !sentence.fails_plugin() => Outcome::Note(why),
            other => other,
        };
        let problems = suite.take_problems();
        let outcome = if problems.is_empty() || matches!(outcome, Outcome::Failed(_)) {
            outcome
        } else {
            Outcome::Failed(format!(
                "an answer broke the spec ({}): {}",
                general::RESPONSES,
                problems.join("; ")
            ))
        };
        let outcome = match outcome {
            Outcome::Note(why) if self.strict => Outcome::Failed(why),
            other => other,
        };
        let r = CaseResult { name, sentence, outcome, duration: started.elapsed() };
        (self.line)(&r);
        self.results.push(r);
    }
}

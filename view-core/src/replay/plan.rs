//! When each call of a replay may start: the recorded calls in the order they started, each one
//! held until every call that had ended before it started (in the recording) has ended in the
//! replay. Calls whose recorded intervals overlapped may therefore run at once, and no call runs
//! ahead of one whose result it may have depended on (an id created, a volume staged).
//!
//! Serial replays hold each call until every call before it has ended.
//!
//! The plan is data and the schedule a state machine, so both are tested without a runtime.

/// When one recorded call ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// Its start, nanoseconds since the Unix epoch.
    pub start_ns: u128,
    /// How long it took.
    pub duration_ns: u64,
}

impl Timing {
    fn end_ns(self) -> u128 {
        self.start_ns.saturating_add(u128::from(self.duration_ns))
    }
}

/// The order calls start in and what each waits for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Indices of the calls (as given to [`Plan::new`]) in the order they started.
    order: Vec<usize>,
    /// Positions in `order`, sorted by when the call ended in the recording.
    by_end: Vec<usize>,
    /// For each position in `order`: how many calls of `by_end`, from its start, must have
    /// ended before it starts.
    waits_for: Vec<usize>,
    /// For each call (as given): its position in `order`.
    position: Vec<usize>,
}

impl Plan {
    /// The plan of `calls`, in the order given (ties in start time keep that order); `serial`
    /// makes each call wait for every call before it.
    pub fn new(calls: &[Timing], serial: bool) -> Plan {
        let mut order: Vec<usize> = (0..calls.len()).collect();
        order.sort_by_key(|&i| (calls[i].start_ns, i));
        let mut position = vec![0; order.len()];
        for (pos, &call) in order.iter().enumerate() {
            position[call] = pos;
        }
        if serial {
            let n = order.len();
            return Plan { order, by_end: (0..n).collect(), waits_for: (0..n).collect(), position };
        }
        let timing = |pos: usize| calls[order[pos]];
        let mut by_end: Vec<usize> = (0..order.len()).collect();
        by_end.sort_by_key(|&pos| (timing(pos).end_ns(), pos));
        // A call that ended strictly before another started also started before it, so it is
        // earlier in `order`, and the sets only grow along `order`: a prefix of `by_end` each.
        let ends: Vec<u128> = by_end.iter().map(|&pos| timing(pos).end_ns()).collect();
        let waits_for = (0..order.len())
            .map(|pos| ends.partition_point(|&e| e < timing(pos).start_ns))
            .collect();
        Plan { order, by_end, waits_for, position }
    }

    /// How many calls the plan holds.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// True when it holds none.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The index of the call at `pos` of the start order.
    pub fn call_at(&self, pos: usize) -> usize {
        self.order[pos]
    }

    /// A schedule that walks the plan.
    pub fn schedule(&self) -> Schedule<'_> {
        Schedule { plan: self, next: 0, ended: vec![false; self.len()], ended_prefix: 0 }
    }
}

/// The state of a replay in progress: which calls have started and which have ended.
#[derive(Debug)]
pub struct Schedule<'p> {
    plan: &'p Plan,
    /// The next position of the start order to start.
    next: usize,
    /// By position in the start order.
    ended: Vec<bool>,
    /// How many calls of `by_end`, from its start, have all ended.
    ended_prefix: usize,
}

impl Schedule<'_> {
    /// The calls (indices as given to [`Plan::new`]) that may start now, in start order; each is
    /// returned once.
    pub fn startable(&mut self) -> Vec<usize> {
        let mut out = Vec::new();
        while self.next < self.plan.len() && self.ended_prefix >= self.plan.waits_for[self.next] {
            out.push(self.plan.order[self.next]);
            self.next += 1;
        }
        out
    }

    /// Marks the call (index as given to [`Plan::new`]) ended.
    pub fn ended(&mut self, call: usize) {
        if let Some(&pos) = self.plan.position.get(call) {
            self.ended[pos] = true;
        }
        while self.ended_prefix < self.plan.len() && self.ended[self.plan.by_end[self.ended_prefix]]
        {
            self.ended_prefix += 1;
        }
    }

    /// True when every call has started.
    pub fn all_started(&self) -> bool {
        self.next == self.plan.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(start_ns: u128, duration_ns: u64) -> Timing {
        Timing { start_ns, duration_ns }
    }

    /// Runs the schedule, ending calls in the order `finish` picks among those running, and
    /// returns the batches that started together.
    fn run(plan: &Plan, mut finish: impl FnMut(&[usize]) -> usize) -> Vec<Vec<usize>> {
        let mut s = plan.schedule();
        let mut running: Vec<usize> = Vec::new();
        let mut batches = Vec::new();
        loop {
            let now = s.startable();
            if !now.is_empty() {
                batches.push(now.clone());
                running.extend(now);
            }
            if running.is_empty() {
                assert!(s.all_started(), "the schedule stalled");
                return batches;
            }
            let i = finish(&running);
            let call = running.remove(i);
            s.ended(call);
        }
    }

    #[test]
    fn calls_that_did_not_overlap_run_one_after_another() {
        let plan = Plan::new(&[t(0, 10), t(20, 10), t(40, 10)], false);
        assert_eq!(run(&plan, |_| 0), [vec![0], vec![1], vec![2]]);
    }

    #[test]
    fn overlapping_calls_start_together_and_a_later_call_waits_for_both() {
        // 0 and 1 overlap; 2 started after both had ended; 3 started while 2 ran.
        let plan = Plan::new(&[t(0, 10), t(5, 10), t(20, 10), t(25, 1)], false);
        assert_eq!(run(&plan, |_| 0), [vec![0, 1], vec![2, 3]]);
        // Whichever of 0 and 1 ends first, 2 waits for the other.
        assert_eq!(run(&plan, |r| r.len() - 1), [vec![0, 1], vec![2, 3]]);
    }

    #[test]
    fn a_call_waits_only_for_calls_that_had_ended_before_it_started() {
        // 0 is long; 1 starts and ends inside it; 2 starts after 1 ended but while 0 runs.
        let plan = Plan::new(&[t(0, 100), t(10, 5), t(20, 5)], false);
        let batches = run(&plan, |r| {
            if r.contains(&1) { r.iter().position(|&c| c == 1).unwrap_or(0) } else { 0 }
        });
        assert_eq!(batches, [vec![0, 1], vec![2]]);
    }

    #[test]
    fn the_start_order_is_the_recorded_one_whatever_the_input_order() {
        let plan = Plan::new(&[t(30, 1), t(10, 1), t(20, 1)], false);
        assert_eq!(run(&plan, |_| 0), [vec![1], vec![2], vec![0]]);
        assert_eq!((0..3).map(|p| plan.call_at(p)).collect::<Vec<_>>(), [1, 2, 0]);
    }

    #[test]
    fn serial_runs_one_at_a_time_even_where_the_recording_overlapped() {
        let plan = Plan::new(&[t(0, 10), t(5, 10), t(6, 1)], true);
        assert_eq!(run(&plan, |_| 0), [vec![0], vec![1], vec![2]]);
    }

    #[test]
    fn an_empty_plan_is_done_at_once() {
        let plan = Plan::new(&[], false);
        assert!(plan.is_empty());
        let mut s = plan.schedule();
        assert!(s.startable().is_empty());
        assert!(s.all_started());
    }

    #[test]
    fn a_call_of_no_duration_at_the_same_instant_does_not_wait_for_itself() {
        let plan = Plan::new(&[t(5, 0), t(5, 0)], false);
        assert_eq!(run(&plan, |_| 0), [vec![0, 1]]);
    }
}

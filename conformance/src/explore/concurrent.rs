//! The walk: C histories in flight at once (`--concurrency C`; one without it), each a lane with
//! its own generator, model and names (so on volumes of its own). A round takes the next call of every lane and sends
//! them together; listings go alone after the round's other calls, as a listing checks every
//! lane's objects and a creation or deletion between its pages would move them. Each lane is
//! judged by its own model; a broken rule is shrunk on that lane's history alone (replayed one
//! call at a time) while the other lanes' objects stay as they are; after a failure the lane
//! starts again from a clean state, after notes only its history goes on.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use super::call::Call;
use super::generate::Generator;
use super::judge::Reply;
use super::session::{Attempt, Made, Session};
use super::{Broken, Options, Report, report};

/// One history in flight.
struct Lane {
    generator: Generator,
    attempt: Attempt,
    history: Vec<Call>,
    /// The generator has no call left (the model allows none).
    done: bool,
}

/// The seed of lane `i`: lane 0 walks as a run of one history does.
fn lane_seed(seed: u64, i: usize) -> u64 {
    seed.wrapping_add((i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// Walks `options.concurrency` histories at once (one, the walk of a run without
/// `--concurrency`) until the budget is spent.
pub(crate) async fn walk(
    s: &mut Session,
    options: &Options,
    report: &mut Report,
    line: &mut dyn FnMut(&str),
) -> Result<(), String> {
    let budget = options.budget();
    // With other lanes making and deleting volumes, a listing's pages may shift under any call.
    s.caps.alone = options.concurrency <= 1;
    let mut lanes: Vec<Lane> = (0..options.concurrency.max(1))
        .map(|i| Lane {
            generator: Generator::new(lane_seed(options.seed, i)),
            attempt: s.attempt(None),
            history: Vec::new(),
            done: false,
        })
        .collect();
    'rounds: while budget.left(report.steps) && lanes.iter().any(|l| !l.done) {
        // Each lane's next call; fewer at the end of the budget.
        let mut round: Vec<(usize, Call)> = Vec::new();
        for (i, lane) in lanes.iter_mut().enumerate() {
            if lane.done || report.steps + round.len() as u64 >= budget.steps {
                continue;
            }
            if lane.generator.epoch_over(lane.history.len()) {
                report.left_over.extend(s.clean_up(&lane.attempt).await);
                lane.attempt = s.attempt(None);
                lane.history.clear();
                lane.generator.start_epoch();
            }
            match lane.generator.next(&lane.attempt.model) {
                Some(call) => {
                    round.push((i, call));
                    // With several lanes, now and then the same call twice at once on one
                    // volume: a CO's retry before the first answer. Calls on one volume at
                    // once may be answered ABORTED (the general table's "Operation pending
                    // for volume"); the other is judged as the call, then as its retry.
                    let listing = call.listing();
                    let room = report.steps + (round.len() as u64) < budget.steps;
                    if options.concurrency > 1 && !listing && room && lane.generator.twice() {
                        round.push((i, call));
                    }
                }
                None => lane.done = true,
            }
        }
        let (lists, others): (Vec<_>, Vec<_>) = round.into_iter().partition(|(_, c)| c.listing());
        let mut made: Vec<(usize, Made)> = together(s, &mut lanes, &others).await?;
        for (i, call) in &lists {
            made.extend(together(s, &mut lanes, &[(*i, *call)]).await?);
        }
        for (i, m) in made {
            let lane = &mut lanes[i];
            lane.history.push(m.call);
            report.steps += 1;
            if m.broken.is_empty() {
                continue;
            }
            // Notes only (a SHOULD the plugin does otherwise, as a second target published): the
            // model took the answer, so the history goes on from there (its undos, in any order,
            // are what comes next).
            if !m.broken.iter().any(|b| report::fails(b, options)) {
                report::found(s, options, report, &lane.history, &m.broken, line).await?;
                if options.stop_after.is_some_and(|n| report.findings.len() >= n) {
                    break 'rounds;
                }
                continue;
            }
            report.left_over.extend(s.clean_up(&lane.attempt).await);
            report::found(s, options, report, &lane.history, &m.broken, line).await?;
            lane.attempt = s.attempt(None);
            lane.history.clear();
            lane.generator.start_epoch();
            if options.stop_after.is_some_and(|n| report.findings.len() >= n) {
                break 'rounds;
            }
        }
    }
    for lane in &lanes {
        report.left_over.extend(s.clean_up(&lane.attempt).await);
    }
    Ok(())
}

/// Prepares `calls` (lane, call), sends them at once and judges each answer by its lane's
/// model, in order; a call sent twice at once answered ABORTED is not judged (it did nothing). The suite's answer checks of the round are given to the lane whose answer they
/// name (by its response type and, when two lanes made the same RPC, an id of the lane's).
async fn together(
    s: &mut Session,
    lanes: &mut [Lane],
    calls: &[(usize, Call)],
) -> Result<Vec<(usize, Made)>, String> {
    // The publications of every lane: a listing or a ControllerGetVolume answer is held to them.
    let mut published = Vec::new();
    for lane in lanes.iter() {
        published.extend(lane.attempt.model.publications(&s.suite.node_id));
    }
    s.suite.published = published;
    let mut states = Vec::with_capacity(calls.len());
    let mut requests = Vec::with_capacity(calls.len());
    let mut looks = Vec::with_capacity(calls.len());
    for (i, call) in calls {
        let a = &lanes[*i].attempt;
        states.push((a.model.state_of(call), a.model.kinds_of(call)));
        requests.push(a.exec.prepare(&mut s.suite, &a.model, call)?);
        looks.push(a.exec.looks(&a.model, call));
    }
    let suite = &s.suite;
    let sends: Vec<Pin<Box<dyn Future<Output = Reply> + '_>>> = calls
        .iter()
        .zip(requests)
        .map(|((i, _), p)| {
            let exec = &lanes[*i].attempt.exec;
            Box::pin(exec.send(suite, p)) as Pin<Box<dyn Future<Output = Reply> + '_>>
        })
        .collect();
    let replies = join_all(sends).await;
    s.calls += calls.len() as u64;
    let mut problems: Vec<Vec<Broken>> = vec![Vec::new(); calls.len()];
    for p in s.suite.take_problems() {
        let owner = owner(lanes, calls, &p.key, &p.detail);
        problems[owner].push(Broken::from_problem(p));
    }
    let twice = |k: usize| calls.iter().filter(|c| **c == calls[k]).count() > 1;
    let mut out = Vec::with_capacity(calls.len());
    for (k, ((((i, call), state), reply), extra)) in
        calls.iter().zip(states).zip(replies).zip(problems).enumerate()
    {
        if twice(k) && matches!(&reply, Reply::Err { code: tonic::Code::Aborted, .. }) {
            continue;
        }
        let model = &mut lanes[*i].attempt.model;
        let mut verdicts = model.judge(call, &reply);
        let seen = model.judge_seen(
            &mut verdicts,
            call,
            &reply,
            &looks[k].see(matches!(reply, Reply::Ok(_))),
        );
        let mut broken: Vec<Broken> = verdicts.broken.iter().map(Broken::from_violation).collect();
        broken.extend(extra);
        s.coverage.record(call.rpc(), (state.0, &state.1), &verdicts.checked);
        s.coverage.seen(call.rpc(), seen);
        for b in &broken {
            s.coverage.broke(&b.id);
        }
        out.push((*i, Made { call: *call, reply, broken }));
    }
    Ok(out)
}

/// Which of `calls` an answer check of the round is about: the call whose RPC's response the
/// check names and one of whose lane's ids the words name; else the first of that RPC; else the
/// first call.
fn owner(lanes: &[Lane], calls: &[(usize, Call)], key: &str, detail: &str) -> usize {
    let of_rpc: Vec<usize> = (0..calls.len())
        .filter(|k| {
            let rpc = calls[*k].1.rpc();
            key.starts_with(rpc) && key[rpc.len()..].starts_with("Response")
        })
        .collect();
    of_rpc
        .iter()
        .copied()
        .find(|k| lanes[calls[*k].0].attempt.model.names_an_id(detail))
        .or_else(|| of_rpc.first().copied())
        .unwrap_or(0)
}

/// Polls every future until all are ready; the answers in the futures' order.
async fn join_all<'a>(mut futures: Vec<Pin<Box<dyn Future<Output = Reply> + 'a>>>) -> Vec<Reply> {
    let mut out: Vec<Option<Reply>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (f, slot) in futures.iter_mut().zip(out.iter_mut()) {
            if slot.is_some() {
                continue;
            }
            match f.as_mut().poll(cx) {
                Poll::Ready(r) => *slot = Some(r),
                Poll::Pending => pending = true,
            }
        }
        if pending { Poll::Pending } else { Poll::Ready(()) }
    })
    .await;
    // Every slot is filled once nothing is pending.
    out.into_iter().flatten().collect()
}

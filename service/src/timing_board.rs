//! Timings a tuning hands to an agent of the host it tunes for: the board
//! where a `Tune` call posts schedules to time, and where the agents of
//! that host find them (`LeaseWork` offers them before the training
//! store's queue), renew their leases (`Heartbeat`) and answer them
//! (`ReportTimings`).
//!
//! A job lives in memory as long as its tuning waits for it (a server
//! restart ends the tuning too, so nothing is worth keeping): it is not in
//! the store's queue, and its times are recorded by the tuning, with the
//! round's samples, under the agent's host. A job whose lease lapses (its
//! agent died or was stopped) is offered again to any agent of the host; a
//! tuning that stops waiting (its budget spent, its client gone) withdraws
//! its job, and a report for it is then `NOT_FOUND`.
//!
//! The board also remembers when an agent of each host last asked for
//! work: a tuning is sent to a host's agents only while one of them is
//! asking ([`TimingBoard::serves`]).

use benchmark_agent::measure::Timer;
use benchmark_agent::{AgentError, Workload};
use compiler::Schedule;
use data::Outcome;
use proto::v1;
use proto::FromWireError;
use std::collections::HashMap;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use thiserror::Error;

/// Why a timing report was not taken.
#[derive(Debug, Error)]
pub enum BoardError {
    /// No such job waits (never posted, answered already, or withdrawn).
    #[error("no tuning waits for the timings of {0} (it was answered, or its tuning ended)")]
    Unknown(String),
    /// The job is not leased to the reporting agent.
    #[error("the timings of {0} are not leased to this agent")]
    NotLeased(String),
    /// The timings are not measurements.
    #[error(transparent)]
    Invalid(#[from] FromWireError),
}

/// One job: schedules of a pipeline to time on an agent of a host.
struct Job {
    work_id: String,
    host_key: String,
    work: v1::TimingWork,
    /// The agent holding it and when its lease lapses.
    lease: Option<(i64, Instant)>,
    attempts: u32,
    /// The agent's timings, once reported.
    timed: Option<Vec<(Option<f64>, Outcome)>>,
}

#[derive(Default)]
struct State {
    jobs: Vec<Job>,
    /// When an agent of each host last asked for work.
    asked: HashMap<String, Instant>,
    posted: u64,
}

/// The jobs of the tunings that time on agents (see the module documentation).
#[derive(Default)]
pub struct TimingBoard {
    state: Mutex<State>,
    answered: Condvar,
}

/// A job leased to an agent.
#[derive(Clone, Debug, PartialEq)]
pub struct LeasedTiming {
    /// The job's work id.
    pub work_id: String,
    /// What to time.
    pub work: v1::TimingWork,
    /// 1 for the first lease, 2 after one lapsed, ...
    pub attempt: u32,
    /// When the lease lapses without a heartbeat.
    pub expires: Instant,
}

impl TimingBoard {
    fn locked(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves the jobs consistent (every
        // change is one assignment), so a poisoned lock is used as it is.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Records that an agent of `host_key` is asking for work.
    pub fn asked(&self, host_key: &str) {
        self.locked().asked.insert(host_key.to_string(), Instant::now());
    }

    /// Whether an agent of `host_key` asked for work within `within`.
    pub fn serves(&self, host_key: &str, within: Duration) -> bool {
        self.locked().asked.get(host_key).is_some_and(|at| at.elapsed() <= within)
    }

    /// The hosts whose agents asked for work within `within`.
    pub fn hosts_served(&self, within: Duration) -> Vec<String> {
        let mut hosts: Vec<String> = self.locked().asked.iter().filter(|(_, at)| at.elapsed() <= within).map(|(h, _)| h.clone()).collect();
        hosts.sort();
        hosts
    }

    /// Posts `work` for the agents of `host_key` under an id starting with
    /// `prefix`; returns the id.
    pub fn post(&self, host_key: &str, prefix: &str, work: v1::TimingWork) -> String {
        let mut state = self.locked();
        state.posted += 1;
        let work_id = format!("{prefix}/timing{}", state.posted);
        state.jobs.push(Job { work_id: work_id.clone(), host_key: host_key.to_string(), work, lease: None, attempts: 0, timed: None });
        work_id
    }

    /// Leases the oldest unanswered job of `host_key` that no agent holds
    /// (or whose lease lapsed) to `agent_id` for `lease`.
    pub fn lease(&self, host_key: &str, agent_id: i64, lease: Duration) -> Option<LeasedTiming> {
        let now = Instant::now();
        let mut state = self.locked();
        let job = state
            .jobs
            .iter_mut()
            .find(|j| j.host_key == host_key && j.timed.is_none() && j.lease.is_none_or(|(_, expires)| expires <= now))?;
        job.attempts += 1;
        job.lease = Some((agent_id, now + lease));
        Some(LeasedTiming { work_id: job.work_id.clone(), work: job.work.clone(), attempt: job.attempts, expires: now + lease })
    }

    /// Whether `work_id` is a job of the board.
    pub fn holds(&self, work_id: &str) -> bool {
        self.locked().jobs.iter().any(|j| j.work_id == work_id)
    }

    /// Extends `agent_id`'s live lease of `work_id` by `lease`: when it
    /// now lapses, or `None` when the agent does not hold it.
    pub fn renew(&self, work_id: &str, agent_id: i64, lease: Duration) -> Option<Instant> {
        let now = Instant::now();
        let mut state = self.locked();
        let job = state.jobs.iter_mut().find(|j| j.work_id == work_id && j.timed.is_none())?;
        match job.lease {
            Some((holder, expires)) if holder == agent_id && expires > now => {
                job.lease = Some((agent_id, now + lease));
                Some(now + lease)
            }
            _ => None,
        }
    }

    /// Answers `work_id` with the timings `convert` reads from the report,
    /// given how many schedules the job has; the agent must hold the job
    /// (a lapsed lease still counts when no other agent took it since).
    pub fn answer(
        &self,
        work_id: &str,
        agent_id: i64,
        convert: impl FnOnce(usize) -> Result<Vec<(Option<f64>, Outcome)>, FromWireError>,
    ) -> Result<(), BoardError> {
        let mut state = self.locked();
        let job = state
            .jobs
            .iter_mut()
            .find(|j| j.work_id == work_id && j.timed.is_none())
            .ok_or_else(|| BoardError::Unknown(work_id.to_string()))?;
        if job.lease.is_none_or(|(holder, _)| holder != agent_id) {
            return Err(BoardError::NotLeased(work_id.to_string()));
        }
        job.timed = Some(convert(job.work.schedules.len())?);
        drop(state);
        self.answered.notify_all();
        Ok(())
    }

    /// Waits for `work_id`'s timings until `stop` says so (asked every
    /// 50 ms); the job is taken off the board either way. `None`: stopped
    /// before an answer.
    pub fn wait(&self, work_id: &str, stop: &dyn Fn() -> bool) -> Option<Vec<(Option<f64>, Outcome)>> {
        let mut state = self.locked();
        loop {
            let at = state.jobs.iter().position(|j| j.work_id == work_id)?;
            if state.jobs[at].timed.is_some() || stop() {
                return state.jobs.remove(at).timed;
            }
            state = self.answered.wait_timeout(state, Duration::from_millis(50)).unwrap_or_else(|poisoned| poisoned.into_inner()).0;
        }
    }
}

/// Times a tuning's schedules on an agent of its host, through the board:
/// each call posts one job (the pipeline as the client sent it, the
/// schedules' texts) and waits for its answer. Stopped before it comes,
/// it returns no timings (the tuning then ends its rounds).
pub struct AgentTimer<'a> {
    board: &'a TimingBoard,
    host_key: String,
    pipeline: v1::Pipeline,
    prefix: String,
}

impl<'a> AgentTimer<'a> {
    /// Timings of `pipeline` (as the client sent it) by agents of
    /// `host_key`, under work ids starting with `prefix`.
    pub fn new(board: &'a TimingBoard, host_key: String, pipeline: v1::Pipeline, prefix: String) -> AgentTimer<'a> {
        AgentTimer { board, host_key, pipeline, prefix }
    }
}

impl Timer for AgentTimer<'_> {
    fn time(
        &mut self,
        _workload: &Workload,
        schedules: &[&Schedule],
        passes: usize,
        stop: &dyn Fn() -> bool,
    ) -> Result<Vec<(Option<f64>, Outcome)>, AgentError> {
        if schedules.is_empty() || stop() {
            return Ok(vec![]);
        }
        let work = v1::TimingWork {
            pipeline: Some(self.pipeline.clone()),
            schedules: schedules.iter().map(|s| compiler::schedule::text::schedule_to_text(s)).collect(),
            passes: u32::try_from(passes).unwrap_or(u32::MAX),
        };
        let work_id = self.board.post(&self.host_key, &self.prefix, work);
        Ok(self.board.wait(&work_id, stop).unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use data::Runtime;

    fn work(n: usize) -> v1::TimingWork {
        v1::TimingWork { pipeline: None, schedules: vec!["s".to_string(); n], passes: 1 }
    }

    fn measured(s: f64) -> (Option<f64>, Outcome) {
        (Some(0.1), Outcome::Measured(Runtime { min_s: s, median_s: s, samples: 3 }))
    }

    #[test]
    fn a_job_goes_to_an_agent_of_its_host_only_and_is_answered_once() {
        let board = TimingBoard::default();
        let id = board.post("hostA", "tune/abc", work(2));
        assert_eq!(board.lease("hostB", 1, Duration::from_secs(10)), None, "another host's agent");
        let leased = board.lease("hostA", 1, Duration::from_secs(10)).expect("an agent of the host");
        assert_eq!((leased.work_id.as_str(), leased.attempt), (id.as_str(), 1));
        assert_eq!(board.lease("hostA", 2, Duration::from_secs(10)), None, "leased already");
        assert!(matches!(board.answer(&id, 2, |_| Ok(vec![])), Err(BoardError::NotLeased(_))));
        board.answer(&id, 1, |n| Ok(vec![measured(1e-3); n])).expect("answered");
        assert!(matches!(board.answer(&id, 1, |_| Ok(vec![])), Err(BoardError::Unknown(_))), "answered once");
        assert_eq!(board.wait(&id, &|| false), Some(vec![measured(1e-3); 2]));
        assert!(!board.holds(&id), "taken off the board");
    }

    #[test]
    fn a_lapsed_lease_is_offered_again_and_a_renewal_keeps_it() {
        let board = TimingBoard::default();
        let id = board.post("h", "t", work(1));
        board.lease("h", 1, Duration::ZERO).expect("leased");
        assert_eq!(board.renew(&id, 1, Duration::from_secs(10)), None, "lapsed");
        let again = board.lease("h", 2, Duration::from_secs(10)).expect("offered again");
        assert_eq!(again.attempt, 2);
        assert!(board.renew(&id, 2, Duration::from_secs(10)).is_some());
        assert_eq!(board.renew(&id, 1, Duration::from_secs(10)), None, "no longer the first agent's");
    }

    #[test]
    fn a_tuning_that_stops_waiting_withdraws_its_job() {
        let board = TimingBoard::default();
        let id = board.post("h", "t", work(1));
        let started = Instant::now();
        assert_eq!(board.wait(&id, &|| started.elapsed() > Duration::from_millis(120)), None);
        assert!(!board.holds(&id));
        assert_eq!(board.lease("h", 1, Duration::from_secs(1)), None);
    }

    #[test]
    fn a_waiting_tuning_wakes_when_the_agent_answers() {
        let board = std::sync::Arc::new(TimingBoard::default());
        let id = board.post("h", "t", work(1));
        let answering = {
            let (board, id) = (board.clone(), id.clone());
            std::thread::spawn(move || {
                board.lease("h", 7, Duration::from_secs(10)).expect("leased");
                board.answer(&id, 7, |_| Ok(vec![measured(2e-3)])).expect("answered");
            })
        };
        assert_eq!(board.wait(&id, &|| false), Some(vec![measured(2e-3)]));
        answering.join().unwrap();
    }

    #[test]
    fn hosts_are_served_while_their_agents_ask() {
        let board = TimingBoard::default();
        board.asked("h");
        assert!(board.serves("h", Duration::from_secs(5)));
        assert!(!board.serves("other", Duration::from_secs(5)));
        assert_eq!(board.hosts_served(Duration::from_secs(5)), vec!["h".to_string()]);
        std::thread::sleep(Duration::from_millis(20));
        assert!(!board.serves("h", Duration::from_millis(10)));
    }
}

//! The agents' work queue: registered agents and their sessions, work items
//! (a generator seed of a round with its sampling settings), leases, and the
//! completion of an item by its report.
//!
//! Leases work like a message queue's visibility timeout: an item leased to
//! an agent is hidden from the others until its lease expires; the holder
//! extends it by heartbeats; once it has expired it is leased again (the
//! next attempt) to whoever asks, unless it has used up its attempts. Everything is in
//! the store, so a restarted server keeps its queue and its leases.
//!
//! Exactly-once effect: an item is completed by the first report that
//! arrives for it from an agent it was ever leased to, expired lease or
//! not, in one `BEGIN IMMEDIATE` transaction with the report's samples;
//! every later report of the item (the same one retried, or another
//! agent's) stores nothing and says so. Within the first report, samples
//! are unique by work id, host and schedule hash ([`Store::record_report`]).

use std::time::Duration;

use rusqlite::{params, OptionalExtension, Transaction, TransactionBehavior};
use serde::{Deserialize, Serialize};

use crate::store::{narrow, unix_now};
use crate::write::{record_in, upsert_host};
use crate::{
    CacheInfo, Features, HostFingerprint, PipelineRecord, PipelineSource, Report, ReportOutcome, SampleRecord, ScheduleRecord, Store,
    StoreError,
};

/// How an agent samples a work item's schedules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SamplingSettings {
    /// Schedules per pipeline.
    pub schedules: u32,
    /// Beam of the first, deterministic search.
    pub beam: u32,
    /// Dropout of the random probes (percent chance to survive a pass).
    pub random_dropout: u32,
    /// Budget of the deterministic search, in milliseconds.
    pub budget_ms: u64,
    /// Offer sliding placements (line buffers) to the searches. Items
    /// queued before the field existed read as `false`.
    #[serde(default)]
    pub sliding: bool,
}

/// A work item to queue: one generator seed of a round.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewWork {
    /// The bootstrap round it belongs to.
    pub round: u32,
    /// The generator seed.
    pub seed: u64,
    /// The generator's parameters (opaque to the store), seed included.
    pub generator: serde_json::Value,
    /// How to sample its schedules.
    pub sampling: SamplingSettings,
}

impl NewWork {
    /// The item's work id: `round{round}/seed{seed}`.
    pub fn work_id(&self) -> String {
        format!("round{}/seed{}", self.round, self.seed)
    }
}

/// A registered agent's session, as a server keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentSession {
    /// The hash of the session token (the store never sees the token).
    pub token_hash: String,
    /// The agent's id in the store (one per name and host).
    pub agent_id: i64,
    /// The agent's name.
    pub agent: String,
    /// The key of the agent's host.
    pub host_key: String,
}

/// A work item leased to an agent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkLease {
    /// The item's id (`round{round}/seed{seed}`).
    pub work_id: String,
    /// The bootstrap round it belongs to.
    pub round: u32,
    /// The generator seed.
    pub seed: u64,
    /// The generator's parameters, seed included.
    pub generator: serde_json::Value,
    /// How to sample its schedules.
    pub sampling: SamplingSettings,
    /// The promoted weights for the agent's host when leased; `None`: the analytical model.
    pub weights_version: Option<u32>,
    /// 1 for the first lease of the item, 2 after one expired, ...
    pub attempt: u32,
    /// Unix milliseconds.
    pub expires_ms: i64,
}

/// What a heartbeat did to one lease.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LeaseState {
    /// Still the agent's, until `expires_ms` (Unix milliseconds).
    Renewed {
        /// When the renewed lease expires.
        expires_ms: i64,
    },
    /// Leased to another agent, completed, or never the agent's.
    Lost,
}

/// An agent's results for one work item (the pipeline's source and the
/// round come from the item, the host and the agent from the session).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkResult {
    /// The id of the leased work item.
    pub work_id: String,
    /// The content hash of the generated pipeline.
    pub pipeline_hash: String,
    /// Per-stage features of the pipeline.
    pub pipeline_features: Features,
    /// The schedules sampled.
    pub schedules: Vec<ScheduleRecord>,
    /// One result (a runtime or a failure) per schedule.
    pub samples: Vec<SampleRecord>,
}

/// What reporting a work item did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Completion {
    /// What recording the samples did (all duplicates when `already_done`).
    pub outcome: ReportOutcome,
    /// The item had been completed before: nothing was stored.
    pub already_done: bool,
}

/// How many items are in each state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkCounts {
    /// Never leased, or their lease expired, with attempts left.
    pub waiting: u64,
    /// Leased and not expired.
    pub leased: u64,
    /// Completed by a report.
    pub done: u64,
    /// Not done, lease expired, no attempts left.
    pub exhausted: u64,
    /// Leased more than once (in any state).
    pub reissued: u64,
}

/// A work item as the queue holds it now.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkItemState {
    /// The item's id.
    pub work_id: String,
    /// The bootstrap round it belongs to.
    pub round: u32,
    /// The generator seed.
    pub seed: u64,
    /// Leases given so far.
    pub attempts: u32,
    /// The weights version of its last lease (`None`: never leased, or
    /// leased when its agent's host had no promoted weights).
    pub weights_version: Option<u32>,
    /// Completed by a report.
    pub done: bool,
}

/// Unix time in milliseconds.
fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// The oldest item neither done, nor under a live lease (`?1`: now in ms),
/// nor out of attempts (`?2`). It reads the open items in queue order from a
/// partial index and stops at the first free one: a lease costs the same with
/// ten items queued or a million.
const NEXT_FREE_ITEM: &str = "SELECT id, work_id, round, seed, generator, sampling, attempts FROM work_items
     WHERE done_report IS NULL AND (lease_expires_ms IS NULL OR lease_expires_ms <= ?1) AND attempts < ?2
     ORDER BY id LIMIT 1";

impl Store {
    /// Registers an agent (the same name on the same host is the same
    /// agent, its capabilities updated) with a new session whose token
    /// hashes to `token_hash`, which replaces the agent's earlier sessions
    /// (one session per agent). The name is 1 to [`MAX_AGENT_NAME_BYTES`]
    /// bytes without control characters ([`StoreError::AgentName`]).
    pub fn register_agent(
        &mut self,
        name: &str,
        host: &HostFingerprint,
        capabilities: &serde_json::Value,
        token_hash: &str,
    ) -> Result<AgentSession, StoreError> {
        check_agent_name(name)?;
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let host_id = upsert_host(&tx, host)?;
        let capabilities = serde_json::to_string(capabilities)?;
        tx.execute(
            "INSERT INTO agents (name, host_id, capabilities, registered_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (name, host_id) DO UPDATE SET capabilities = excluded.capabilities",
            params![name, host_id, capabilities, unix_now()],
        )?;
        let agent_id: i64 = tx.query_row("SELECT id FROM agents WHERE name = ?1 AND host_id = ?2", params![name, host_id], |r| r.get(0))?;
        tx.execute("DELETE FROM agent_sessions WHERE agent_id = ?1", [agent_id])?;
        tx.execute(
            "INSERT INTO agent_sessions (token_hash, agent_id, created_at, last_used) VALUES (?1, ?2, ?3, ?3)",
            params![token_hash, agent_id, unix_now()],
        )?;
        tx.commit()?;
        Ok(AgentSession { token_hash: token_hash.to_string(), agent_id, agent: name.to_string(), host_key: host.key() })
    }

    /// Deletes the sessions unused for longer than `unused_for`; how many.
    pub fn expire_sessions(&mut self, unused_for: Duration) -> Result<usize, StoreError> {
        let cutoff = unix_now().saturating_sub(i64::try_from(unused_for.as_secs()).unwrap_or(i64::MAX));
        Ok(self.conn.execute("DELETE FROM agent_sessions WHERE last_used < ?1", [cutoff])?)
    }

    /// Records that the session of `token_hash` was used now.
    pub fn touch_session(&mut self, token_hash: &str) -> Result<(), StoreError> {
        self.conn.execute("UPDATE agent_sessions SET last_used = ?2 WHERE token_hash = ?1", params![token_hash, unix_now()])?;
        Ok(())
    }

    /// Every session of every agent.
    pub fn agent_sessions(&self) -> Result<Vec<AgentSession>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT s.token_hash, a.id, a.name, h.key FROM agent_sessions s
             JOIN agents a ON a.id = s.agent_id JOIN hosts h ON h.id = a.host_id ORDER BY a.id",
        )?;
        let rows =
            stmt.query_map([], |r| Ok(AgentSession { token_hash: r.get(0)?, agent_id: r.get(1)?, agent: r.get(2)?, host_key: r.get(3)? }))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Queues the items not queued before (by work id); returns how many are new.
    pub fn enqueue_work(&mut self, items: &[NewWork]) -> Result<usize, StoreError> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut added = 0;
        for item in items {
            added += tx
                .prepare_cached(
                    "INSERT INTO work_items (work_id, round, seed, generator, sampling, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                     ON CONFLICT DO NOTHING",
                )?
                .execute(params![
                    item.work_id(),
                    item.round,
                    item.seed as i64,
                    serde_json::to_string(&item.generator)?,
                    serde_json::to_string(&item.sampling)?,
                    unix_now()
                ])?;
        }
        tx.commit()?;
        Ok(added)
    }

    /// Leases the oldest item that is neither done, nor leased, nor out of
    /// its `max_attempts` to `agent_id` for `lease`; `None` when there is none.
    pub fn lease_work(&mut self, agent_id: i64, lease: Duration, max_attempts: u32) -> Result<Option<WorkLease>, StoreError> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let host_key = agent_host_key(&tx, agent_id)?;
        let now = now_ms();
        let found = tx
            .prepare_cached(NEXT_FREE_ITEM)?
            .query_row(params![now, max_attempts], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, i64>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                    r.get::<_, i64>(6)?,
                ))
            })
            .optional()?;
        let Some((id, work_id, round, seed, generator, sampling, attempts)) = found else {
            return Ok(None);
        };
        let weights_version: Option<i64> = tx
            .prepare_cached("SELECT version FROM weights WHERE promoted = 1 AND host_key = ?1")?
            .query_row([&host_key], |r| r.get(0))
            .optional()?;
        let attempt = attempts + 1;
        let expires_ms = now.saturating_add(millis(lease));
        tx.prepare_cached(
            "UPDATE work_items SET attempts = ?2, lease_agent = ?3, lease_expires_ms = ?4, weights_version = ?5 WHERE id = ?1",
        )?
        .execute(params![id, attempt, agent_id, expires_ms, weights_version])?;
        tx.prepare_cached("INSERT INTO work_leases (work_item, attempt, agent_id, leased_at_ms) VALUES (?1, ?2, ?3, ?4)")?
            .execute(params![id, attempt, agent_id, now])?;
        tx.commit()?;
        Ok(Some(WorkLease {
            work_id,
            round: narrow(round, "round")?,
            seed: seed as u64,
            generator: serde_json::from_str(&generator)?,
            sampling: serde_json::from_str(&sampling)?,
            weights_version: weights_version.map(|v| narrow(v, "weights version")).transpose()?,
            attempt: narrow(attempt, "attempt")?,
            expires_ms,
        }))
    }

    /// Extends by `lease` (from now) each of `work_ids` that is still
    /// leased to `agent_id` and not done; the others are lost.
    pub fn heartbeat(&mut self, agent_id: i64, work_ids: &[String], lease: Duration) -> Result<Vec<(String, LeaseState)>, StoreError> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let expires_ms = now_ms().saturating_add(millis(lease));
        let mut states = Vec::with_capacity(work_ids.len());
        for work_id in work_ids {
            let renewed = tx
                .prepare_cached(
                    "UPDATE work_items SET lease_expires_ms = ?3 WHERE work_id = ?1 AND lease_agent = ?2 AND done_report IS NULL",
                )?
                .execute(params![work_id, agent_id, expires_ms])?;
            let state = if renewed == 1 { LeaseState::Renewed { expires_ms } } else { LeaseState::Lost };
            states.push((work_id.clone(), state));
        }
        tx.commit()?;
        Ok(states)
    }

    /// Records an agent's results for a work item it was leased (its lease
    /// may have expired since) and completes the item, in one transaction;
    /// an item completed before stores nothing (`already_done`).
    ///
    /// Errors: [`StoreError::UnknownWork`], [`StoreError::NotLeased`] when
    /// the item was never leased to this agent, and those of
    /// [`Store::record_report`] (nothing is stored then).
    pub fn complete_work(&mut self, agent_id: i64, result: &WorkResult) -> Result<Completion, StoreError> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let item = tx
            .prepare_cached("SELECT id, round, generator, seed, done_report FROM work_items WHERE work_id = ?1")?
            .query_row([&result.work_id], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, String>(2)?, r.get::<_, i64>(3)?, r.get::<_, Option<i64>>(4)?))
            })
            .optional()?;
        let (id, round, generator, seed, done_report) = item.ok_or_else(|| StoreError::UnknownWork(result.work_id.clone()))?;
        let leased: bool = tx
            .prepare_cached("SELECT EXISTS (SELECT 1 FROM work_leases WHERE work_item = ?1 AND agent_id = ?2)")?
            .query_row(params![id, agent_id], |r| r.get(0))?;
        if !leased {
            return Err(StoreError::NotLeased { work_id: result.work_id.clone(), agent_id });
        }
        if done_report.is_some() {
            let outcome = ReportOutcome { inserted: 0, duplicates: result.samples.len() };
            return Ok(Completion { outcome, already_done: true });
        }
        let (agent, host_id): (String, i64) =
            tx.prepare_cached("SELECT name, host_id FROM agents WHERE id = ?1")?.query_row([agent_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        let report = Report {
            work_id: result.work_id.clone(),
            host: host_of(&tx, host_id)?,
            agent,
            round: narrow(round, "round")?,
            pipeline: PipelineRecord {
                hash: result.pipeline_hash.clone(),
                source: PipelineSource::Generated { seed: seed as u64, params: serde_json::from_str(&generator)? },
                features: result.pipeline_features.clone(),
            },
            schedules: result.schedules.clone(),
            samples: result.samples.clone(),
        };
        let (outcome, report_id) = record_in(&tx, &report)?;
        tx.prepare_cached("UPDATE work_items SET done_report = ?2, lease_agent = NULL, lease_expires_ms = NULL WHERE id = ?1")?
            .execute(params![id, report_id])?;
        tx.commit()?;
        Ok(Completion { outcome, already_done: false })
    }

    /// The generator parameters (as queued) of work item `work_id`.
    pub fn work_generator(&self, work_id: &str) -> Result<serde_json::Value, StoreError> {
        let generator: Option<String> = self
            .conn
            .prepare_cached("SELECT generator FROM work_items WHERE work_id = ?1")?
            .query_row([work_id], |r| r.get(0))
            .optional()?;
        Ok(serde_json::from_str(&generator.ok_or_else(|| StoreError::UnknownWork(work_id.to_string()))?)?)
    }

    /// How many items are in each state now, with `max_attempts` per item.
    pub fn work_counts(&self, max_attempts: u32) -> Result<WorkCounts, StoreError> {
        let (waiting, leased, done, exhausted, reissued): (i64, i64, i64, i64, i64) = self.conn.query_row(
            "SELECT
                COALESCE(SUM(done_report IS NULL AND (lease_expires_ms IS NULL OR lease_expires_ms <= ?1) AND attempts < ?2), 0),
                COALESCE(SUM(done_report IS NULL AND lease_expires_ms > ?1), 0),
                COALESCE(SUM(done_report IS NOT NULL), 0),
                COALESCE(SUM(done_report IS NULL AND (lease_expires_ms IS NULL OR lease_expires_ms <= ?1) AND attempts >= ?2), 0),
                COALESCE(SUM(attempts > 1), 0)
             FROM work_items",
            params![now_ms(), max_attempts],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )?;
        Ok(WorkCounts {
            waiting: narrow(waiting, "count")?,
            leased: narrow(leased, "count")?,
            done: narrow(done, "count")?,
            exhausted: narrow(exhausted, "count")?,
            reissued: narrow(reissued, "count")?,
        })
    }

    /// The items of `round` as they are now, by seed.
    pub fn work_items(&self, round: u32) -> Result<Vec<WorkItemState>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT work_id, seed, attempts, weights_version, done_report IS NOT NULL FROM work_items WHERE round = ?1 ORDER BY seed",
        )?;
        let rows = stmt.query_map([round], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?, r.get::<_, Option<i64>>(3)?, r.get::<_, bool>(4)?))
        })?;
        rows.map(|row| {
            let (work_id, seed, attempts, weights_version, done) = row?;
            Ok(WorkItemState {
                work_id,
                round,
                seed: seed as u64,
                attempts: narrow(attempts, "attempts")?,
                weights_version: weights_version.map(|v| narrow(v, "weights version")).transpose()?,
                done,
            })
        })
        .collect()
    }
}

/// The longest agent name.
pub const MAX_AGENT_NAME_BYTES: usize = 128;

/// An agent name is 1 to [`MAX_AGENT_NAME_BYTES`] bytes without control characters.
pub(crate) fn check_agent_name(name: &str) -> Result<(), StoreError> {
    if name.is_empty() || name.len() > MAX_AGENT_NAME_BYTES {
        return Err(StoreError::AgentName(format!("must have 1 to {MAX_AGENT_NAME_BYTES} bytes, not {}", name.len())));
    }
    if name.chars().any(char::is_control) {
        return Err(StoreError::AgentName("must not hold control characters".into()));
    }
    Ok(())
}

/// The host key of a registered agent.
fn agent_host_key(tx: &Transaction<'_>, agent_id: i64) -> Result<String, StoreError> {
    tx.prepare_cached("SELECT h.key FROM agents a JOIN hosts h ON h.id = a.host_id WHERE a.id = ?1")?
        .query_row([agent_id], |r| r.get(0))
        .optional()?
        .ok_or(StoreError::UnknownAgent(agent_id))
}

/// The fingerprint of a stored host, read back exactly (its key is checked).
pub(crate) fn host_of(conn: &rusqlite::Connection, host_id: i64) -> Result<HostFingerprint, StoreError> {
    let (key, cpu_model, isa, logical, physical, caches, gpu): (String, String, String, i64, i64, String, Option<String>) = conn
        .prepare_cached("SELECT key, cpu_model, isa_features, logical_cores, physical_cores, caches, gpu FROM hosts WHERE id = ?1")?
        .query_row([host_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?)))?;
    let host = HostFingerprint {
        cpu_model,
        isa_features: isa.split_whitespace().map(str::to_string).collect(),
        logical_cores: narrow(logical, "logical cores")?,
        physical_cores: narrow(physical, "physical cores")?,
        caches: serde_json::from_str::<Vec<CacheInfo>>(&caches)?,
        gpu,
    };
    if host.key() != key {
        return Err(StoreError::Corrupt(format!("host {key} reads back as {}", host.key())));
    }
    Ok(host)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FailureClass, LayoutId, Outcome, Runtime};

    const LAYOUT: LayoutId = LayoutId { version: 1, names_hash: 42, len: 2 };
    const SAMPLING: SamplingSettings = SamplingSettings { schedules: 3, beam: 4, random_dropout: 1, budget_ms: 100, sliding: false };
    const LONG: Duration = Duration::from_secs(600);

    fn host(name: &str) -> HostFingerprint {
        HostFingerprint {
            cpu_model: name.to_string(),
            isa_features: vec!["avx2".into(), "fma".into()],
            logical_cores: 2,
            physical_cores: 1,
            caches: vec![CacheInfo { level: 1, kind: "Data".into(), size_bytes: 32 << 10 }],
            gpu: None,
        }
    }

    fn items(round: u32, seeds: std::ops::Range<u64>) -> Vec<NewWork> {
        seeds
            .map(|seed| NewWork { round, seed, generator: serde_json::json!({ "seed": seed, "max_stages": 3 }), sampling: SAMPLING })
            .collect()
    }

    fn features(values: Vec<f32>) -> Features {
        Features { layout: LAYOUT, stages: values.len() as u32 / 2, values }
    }

    /// `schedules` schedules named by `tag`, the last one failing.
    fn result(work_id: &str, tag: &str, schedules: usize) -> WorkResult {
        let hash = |s: usize| format!("{tag}-{s}");
        WorkResult {
            work_id: work_id.to_string(),
            pipeline_hash: format!("pipeline-{work_id}"),
            pipeline_features: features(vec![1.0, 2.0]),
            schedules: (0..schedules)
                .map(|s| ScheduleRecord { hash: hash(s), source: format!("f.split({s})"), features: features(vec![s as f32, 0.5]) })
                .collect(),
            samples: (0..schedules)
                .map(|s| SampleRecord {
                    schedule_hash: hash(s),
                    compile_time_s: Some(0.01),
                    outcome: if s + 1 == schedules {
                        Outcome::Failed(FailureClass::Timeout)
                    } else {
                        Outcome::Measured(Runtime { min_s: 1e-3, median_s: 2e-3, samples: 3 })
                    },
                })
                .collect(),
        }
    }

    fn agent(store: &mut Store, name: &str, cpu: &str) -> i64 {
        store.register_agent(name, &host(cpu), &serde_json::json!({"gpus": []}), &format!("hash-{name}-{cpu}")).unwrap().agent_id
    }

    #[test]
    fn settings_queued_before_sliding_existed_read_as_not_sliding() {
        let stored = r#"{"schedules":3,"beam":4,"random_dropout":1,"budget_ms":100}"#;
        assert_eq!(serde_json::from_str::<SamplingSettings>(stored).unwrap(), SAMPLING);
        let sliding = SamplingSettings { sliding: true, ..SAMPLING };
        assert_eq!(serde_json::from_str::<SamplingSettings>(&serde_json::to_string(&sliding).unwrap()).unwrap(), sliding);
    }

    #[test]
    fn a_lease_reads_the_open_items_in_order_without_sorting_them() {
        let store = Store::open_in_memory().unwrap();
        let mut plan = store.conn.prepare(&format!("EXPLAIN QUERY PLAN {NEXT_FREE_ITEM}")).unwrap();
        let steps: Vec<String> = plan.query_map(params![0, 3], |r| r.get(3)).unwrap().map(Result::unwrap).collect();
        assert!(steps.iter().any(|s| s.contains("work_items_open_in_order")), "{steps:?}");
        assert!(!steps.iter().any(|s| s.contains("TEMP B-TREE")), "{steps:?}");
    }

    #[test]
    fn items_are_queued_once_and_leased_oldest_first_to_one_agent_at_a_time() {
        let mut store = Store::open_in_memory().unwrap();
        assert_eq!(store.enqueue_work(&items(0, 0..3)).unwrap(), 3);
        assert_eq!(store.enqueue_work(&items(0, 0..4)).unwrap(), 1, "queuing again adds only the new seed");
        let (a, b) = (agent(&mut store, "a", "cpu"), agent(&mut store, "b", "cpu"));
        let first = store.lease_work(a, LONG, 3).unwrap().unwrap();
        assert_eq!((first.work_id.as_str(), first.seed, first.attempt, first.sampling), ("round0/seed0", 0, 1, SAMPLING));
        assert_eq!(first.generator["max_stages"], 3);
        assert_eq!(first.weights_version, None);
        let leased: Vec<String> =
            (0..3).map(|i| store.lease_work(if i % 2 == 0 { b } else { a }, LONG, 3).unwrap().unwrap().work_id).collect();
        assert_eq!(leased, ["round0/seed1", "round0/seed2", "round0/seed3"]);
        assert_eq!(store.lease_work(a, LONG, 3).unwrap(), None, "every item is leased");
        assert_eq!(store.work_counts(3).unwrap(), WorkCounts { waiting: 0, leased: 4, done: 0, exhausted: 0, reissued: 0 });
        assert!(matches!(store.lease_work(99, LONG, 3), Err(StoreError::UnknownAgent(99))));
    }

    #[test]
    fn an_expired_lease_is_leased_again_and_its_holder_loses_it() {
        let mut store = Store::open_in_memory().unwrap();
        store.enqueue_work(&items(1, 5..6)).unwrap();
        let (a, b) = (agent(&mut store, "a", "cpu"), agent(&mut store, "b", "cpu"));
        let first = store.lease_work(a, Duration::ZERO, 3).unwrap().unwrap();
        let id = vec![first.work_id.clone()];
        // Not re-issued yet: the holder may still extend it.
        assert!(matches!(store.heartbeat(a, &id, Duration::ZERO).unwrap()[0].1, LeaseState::Renewed { .. }));
        let second = store.lease_work(b, LONG, 3).unwrap().unwrap();
        assert_eq!((second.work_id.as_str(), second.attempt), ("round1/seed5", 2));
        assert_eq!(store.heartbeat(a, &id, LONG).unwrap(), [(id[0].clone(), LeaseState::Lost)]);
        assert!(
            matches!(store.heartbeat(b, &id, LONG).unwrap()[0].1, LeaseState::Renewed { expires_ms } if expires_ms >= second.expires_ms)
        );
        assert_eq!(store.heartbeat(b, &["nowhere".to_string()], LONG).unwrap()[0].1, LeaseState::Lost);
    }

    #[test]
    fn an_item_out_of_attempts_is_not_leased_again() {
        let mut store = Store::open_in_memory().unwrap();
        store.enqueue_work(&items(0, 0..1)).unwrap();
        let a = agent(&mut store, "a", "cpu");
        assert!(store.lease_work(a, Duration::ZERO, 2).unwrap().is_some());
        assert!(store.lease_work(a, Duration::ZERO, 2).unwrap().is_some());
        assert_eq!(store.lease_work(a, Duration::ZERO, 2).unwrap(), None);
        assert_eq!(store.work_counts(2).unwrap(), WorkCounts { waiting: 0, leased: 0, done: 0, exhausted: 1, reissued: 1 });
    }

    #[test]
    fn a_late_report_and_the_next_holders_store_one_set_of_samples() {
        let mut store = Store::open_in_memory().unwrap();
        store.enqueue_work(&items(2, 9..10)).unwrap();
        // Two agents on different hosts: the host is part of a report's identity,
        // so only the queue keeps the second report out.
        let (a, b) = (agent(&mut store, "a", "cpu-1"), agent(&mut store, "b", "cpu-2"));
        let work_id = store.lease_work(a, Duration::ZERO, 3).unwrap().unwrap().work_id;
        store.lease_work(b, LONG, 3).unwrap().unwrap();

        let late = store.complete_work(a, &result(&work_id, "a", 3)).unwrap();
        assert_eq!(late, Completion { outcome: ReportOutcome { inserted: 3, duplicates: 0 }, already_done: false });
        let next = store.complete_work(b, &result(&work_id, "b", 4)).unwrap();
        assert_eq!(next, Completion { outcome: ReportOutcome { inserted: 0, duplicates: 4 }, already_done: true });
        let again = store.complete_work(a, &result(&work_id, "a", 3)).unwrap();
        assert!(again.already_done);
        let summary = store.summary().unwrap();
        assert_eq!((summary.reports, summary.samples, summary.pipelines), (1, 3, 1));
        assert_eq!(summary.samples_per_round, [(2, 3)]);
        assert_eq!(store.work_counts(3).unwrap(), WorkCounts { waiting: 0, leased: 0, done: 1, exhausted: 0, reissued: 1 });
        assert_eq!(store.heartbeat(b, std::slice::from_ref(&work_id), LONG).unwrap()[0].1, LeaseState::Lost, "a done item's lease is gone");
        assert_eq!(store.lease_work(b, LONG, 3).unwrap(), None);
        let p = &store.pipelines().unwrap()[0];
        assert_eq!(p.source, PipelineSource::Generated { seed: 9, params: serde_json::json!({ "seed": 9, "max_stages": 3 }) });
    }

    #[test]
    fn reports_of_unknown_or_unleased_work_or_bad_reports_store_nothing() {
        let mut store = Store::open_in_memory().unwrap();
        store.enqueue_work(&items(0, 0..1)).unwrap();
        let (a, b) = (agent(&mut store, "a", "cpu"), agent(&mut store, "b", "cpu"));
        assert!(matches!(store.complete_work(a, &result("round0/seed7", "a", 2)), Err(StoreError::UnknownWork(_))));
        let work_id = store.lease_work(a, LONG, 3).unwrap().unwrap().work_id;
        let err = store.complete_work(b, &result(&work_id, "b", 2)).unwrap_err();
        assert!(matches!(err, StoreError::NotLeased { agent_id, .. } if agent_id == b), "{err}");
        let mut bad = result(&work_id, "a", 2);
        bad.samples[0].schedule_hash = "elsewhere".into();
        assert!(matches!(store.complete_work(a, &bad), Err(StoreError::UnknownSchedule { .. })));
        assert_eq!(store.summary().unwrap().samples, 0);
        assert_eq!(store.work_counts(3).unwrap().leased, 1, "a refused report leaves the lease as it was");
        assert_eq!(store.complete_work(a, &result(&work_id, "a", 2)).unwrap().outcome.inserted, 2);
    }

    #[test]
    fn leases_carry_the_promoted_weights_of_the_agents_host_and_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("queue.sqlite");
        let mut store = Store::open(&path).unwrap();
        store.enqueue_work(&items(0, 0..2)).unwrap();
        let session = store.register_agent("a", &host("cpu"), &serde_json::json!({}), "token-hash").unwrap();
        let version = store
            .insert_weights(&crate::NewWeights {
                parent: None,
                blob: vec![1, 2, 3],
                pipeline_layout: LAYOUT,
                schedule_layout: LAYOUT,
                training_set: String::new(),
                metrics: serde_json::json!({}),
                host_key: Some(host("cpu").key()),
            })
            .unwrap();
        store.promote(version).unwrap();
        let lease = store.lease_work(session.agent_id, LONG, 3).unwrap().unwrap();
        assert_eq!(lease.weights_version, Some(version));
        drop(store);

        let mut store = Store::open(&path).unwrap();
        assert_eq!(store.path(), Some(path.as_path()));
        let states = store.work_items(0).unwrap();
        assert_eq!(
            states.iter().map(|s| (s.work_id.as_str(), s.attempts, s.weights_version, s.done)).collect::<Vec<_>>(),
            [("round0/seed0", 1, Some(version), false), ("round0/seed1", 0, None, false)]
        );
        assert!(store.work_items(1).unwrap().is_empty());
        assert_eq!(Store::open_in_memory().unwrap().path(), None);
        assert_eq!(store.agent_sessions().unwrap(), std::slice::from_ref(&session));
        assert_eq!(store.work_counts(3).unwrap(), WorkCounts { waiting: 1, leased: 1, done: 0, exhausted: 0, reissued: 0 });
        assert_eq!(store.lease_work(session.agent_id, LONG, 3).unwrap().unwrap().work_id, "round0/seed1");
        // The same agent registering again gets the same id and a session
        // that replaces its first.
        let again = store.register_agent("a", &host("cpu"), &serde_json::json!({"gpus": 1}), "token-hash-2").unwrap();
        assert_eq!(again.agent_id, session.agent_id);
        assert_eq!(store.agent_sessions().unwrap(), [again]);
    }

    #[test]
    fn sessions_are_one_per_agent_and_expire_unused() {
        let mut store = Store::open_in_memory().unwrap();
        for i in 0..500 {
            store.register_agent("a", &host("cpu"), &serde_json::json!({}), &format!("token-{i}")).unwrap();
        }
        store.register_agent("b", &host("cpu"), &serde_json::json!({}), "token-b").unwrap();
        assert_eq!(store.agent_sessions().unwrap().len(), 2);
        store.conn.execute("UPDATE agent_sessions SET last_used = 0 WHERE token_hash = 'token-b'", []).unwrap();
        assert_eq!(store.expire_sessions(Duration::from_secs(60)).unwrap(), 1);
        assert_eq!(store.agent_sessions().unwrap().iter().map(|s| s.agent.as_str()).collect::<Vec<_>>(), ["a"]);
        store.touch_session("token-499").unwrap();
        assert_eq!(store.expire_sessions(Duration::from_secs(60)).unwrap(), 0);
        for bad in ["", "a\nb", &"n".repeat(MAX_AGENT_NAME_BYTES + 1)] {
            let err = store.register_agent(bad, &host("cpu"), &serde_json::json!({}), "t").unwrap_err();
            assert!(matches!(err, StoreError::AgentName(_)), "{bad:?}: {err}");
        }
    }
}

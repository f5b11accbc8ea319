//! The schema, built by numbered migrations.
//!
//! `PRAGMA user_version` holds the number of migrations applied. Opening a
//! store applies the missing ones in order, each in its own transaction with
//! the version bump, so a file is always at exactly one version. A file whose
//! version is above [`SCHEMA_VERSION`] was written by a newer build and is
//! refused ([`StoreError::NewerSchema`]) rather than misread. Migrations are
//! never edited once released; a change is a new migration at the end.

use rusqlite::{Connection, TransactionBehavior};

use crate::StoreError;

/// Migration `i` (from 0) takes the schema from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    // 1: the training samples.
    "
    CREATE TABLE hosts (
        id INTEGER PRIMARY KEY,
        key TEXT NOT NULL UNIQUE,
        cpu_model TEXT NOT NULL,
        isa_features TEXT NOT NULL,
        logical_cores INTEGER NOT NULL,
        physical_cores INTEGER NOT NULL,
        caches TEXT NOT NULL,
        gpu TEXT,
        first_seen INTEGER NOT NULL
    );
    CREATE TABLE pipelines (
        id INTEGER PRIMARY KEY,
        hash TEXT NOT NULL UNIQUE,
        source TEXT NOT NULL
    );
    CREATE TABLE pipeline_features (
        pipeline_id INTEGER NOT NULL REFERENCES pipelines(id),
        layout_version INTEGER NOT NULL,
        layout_hash INTEGER NOT NULL,
        layout_len INTEGER NOT NULL,
        stages INTEGER NOT NULL,
        features BLOB NOT NULL,
        PRIMARY KEY (pipeline_id, layout_version, layout_hash)
    ) WITHOUT ROWID;
    CREATE TABLE schedules (
        id INTEGER PRIMARY KEY,
        pipeline_id INTEGER NOT NULL REFERENCES pipelines(id),
        hash TEXT NOT NULL,
        source TEXT NOT NULL,
        UNIQUE (pipeline_id, hash)
    );
    CREATE TABLE schedule_features (
        schedule_id INTEGER NOT NULL REFERENCES schedules(id),
        layout_version INTEGER NOT NULL,
        layout_hash INTEGER NOT NULL,
        layout_len INTEGER NOT NULL,
        stages INTEGER NOT NULL,
        features BLOB NOT NULL,
        PRIMARY KEY (schedule_id, layout_version, layout_hash)
    ) WITHOUT ROWID;
    CREATE TABLE reports (
        id INTEGER PRIMARY KEY,
        work_id TEXT NOT NULL,
        host_id INTEGER NOT NULL REFERENCES hosts(id),
        pipeline_id INTEGER NOT NULL REFERENCES pipelines(id),
        agent TEXT NOT NULL,
        round INTEGER NOT NULL,
        recorded_at INTEGER NOT NULL,
        UNIQUE (work_id, host_id)
    );
    CREATE INDEX reports_by_host_pipeline ON reports(host_id, pipeline_id);
    CREATE INDEX reports_by_round ON reports(round);
    CREATE TABLE samples (
        id INTEGER PRIMARY KEY,
        report_id INTEGER NOT NULL REFERENCES reports(id),
        schedule_id INTEGER NOT NULL REFERENCES schedules(id),
        compile_time_s REAL,
        runtime_min_s REAL,
        runtime_median_s REAL,
        runtime_samples INTEGER,
        failure TEXT CHECK (failure IN ('compile_error', 'crash', 'timeout', 'wrong_output', 'other')),
        CHECK ((failure IS NULL) = (runtime_min_s IS NOT NULL AND runtime_median_s IS NOT NULL AND runtime_samples IS NOT NULL)),
        UNIQUE (report_id, schedule_id)
    );
    CREATE INDEX samples_by_schedule ON samples(schedule_id);
    CREATE INDEX samples_by_failure ON samples(failure);
    ",
    // 2: cost-model weights, at most one promoted version per host key.
    "
    CREATE TABLE weights (
        version INTEGER PRIMARY KEY AUTOINCREMENT,
        parent_version INTEGER REFERENCES weights(version),
        blob BLOB NOT NULL,
        pipeline_layout_version INTEGER NOT NULL,
        pipeline_layout_hash INTEGER NOT NULL,
        pipeline_layout_len INTEGER NOT NULL,
        schedule_layout_version INTEGER NOT NULL,
        schedule_layout_hash INTEGER NOT NULL,
        schedule_layout_len INTEGER NOT NULL,
        training_set TEXT NOT NULL,
        metrics TEXT NOT NULL,
        host_key TEXT,
        promoted INTEGER NOT NULL DEFAULT 0 CHECK (promoted IN (0, 1)),
        created_at INTEGER NOT NULL
    );
    CREATE UNIQUE INDEX weights_one_promoted_per_host ON weights(COALESCE(host_key, '')) WHERE promoted = 1;
    CREATE INDEX weights_by_parent ON weights(parent_version);
    ",
    // 3: the agents' work queue: registered agents and their sessions, work
    // items with their current lease, and every lease ever given.
    "
    CREATE TABLE agents (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        host_id INTEGER NOT NULL REFERENCES hosts(id),
        capabilities TEXT NOT NULL,
        registered_at INTEGER NOT NULL,
        UNIQUE (name, host_id)
    );
    CREATE TABLE agent_sessions (
        token_hash TEXT PRIMARY KEY,
        agent_id INTEGER NOT NULL REFERENCES agents(id),
        created_at INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE work_items (
        id INTEGER PRIMARY KEY,
        work_id TEXT NOT NULL UNIQUE,
        round INTEGER NOT NULL,
        seed INTEGER NOT NULL,
        generator TEXT NOT NULL,
        sampling TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        lease_agent INTEGER REFERENCES agents(id),
        lease_expires_ms INTEGER,
        weights_version INTEGER REFERENCES weights(version),
        done_report INTEGER REFERENCES reports(id),
        created_at INTEGER NOT NULL,
        CHECK ((lease_agent IS NULL) = (lease_expires_ms IS NULL))
    );
    CREATE INDEX work_items_open ON work_items(done_report, lease_expires_ms);
    CREATE TABLE work_leases (
        work_item INTEGER NOT NULL REFERENCES work_items(id),
        attempt INTEGER NOT NULL,
        agent_id INTEGER NOT NULL REFERENCES agents(id),
        leased_at_ms INTEGER NOT NULL,
        PRIMARY KEY (work_item, attempt)
    ) WITHOUT ROWID;
    CREATE INDEX work_leases_by_agent ON work_leases(agent_id, work_item);
    ",
    // 4: open work items in queue order, so a lease reads the first free
    // one instead of sorting every open item (40,000 queued: 520 -> 108
    // leases a second with the old index).
    "
    DROP INDEX work_items_open;
    CREATE INDEX work_items_open_in_order ON work_items(id) WHERE done_report IS NULL;
    ",
    // 5: sessions expire when unused: when each was last used (seconds
    // since the epoch; its creation until the server records a use).
    "
    ALTER TABLE agent_sessions ADD COLUMN last_used INTEGER;
    UPDATE agent_sessions SET last_used = created_at;
    ",
    // 6: per-agent tokens an operator issues and revokes (their hashes).
    "
    CREATE TABLE agent_tokens (
        name TEXT PRIMARY KEY,
        token_hash TEXT NOT NULL UNIQUE,
        issued_at INTEGER NOT NULL,
        revoked_at INTEGER
    ) WITHOUT ROWID;
    ",
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// The file's schema version (`PRAGMA user_version`).
pub(crate) fn version(conn: &Connection) -> Result<i64, StoreError> {
    Ok(conn.pragma_query_value(None, "user_version", |r| r.get(0))?)
}

/// Applies the migrations the file lacks, up to `target`; refuses a file newer than this build.
pub(crate) fn migrate_to(conn: &mut Connection, target: i64) -> Result<(), StoreError> {
    let found = version(conn)?;
    if found > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema { found, supported: SCHEMA_VERSION });
    }
    let Ok(start) = usize::try_from(found) else {
        return Err(StoreError::Corrupt(format!("schema version {found}")));
    };
    for (v, sql) in (found..target).zip(&MIGRATIONS[start..]) {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        if version(&tx)? != v {
            // Another process migrated in the meantime.
            continue;
        }
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", v + 1)?;
        tx.commit()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FailureClass, Store};

    #[test]
    fn a_version_1_file_is_upgraded_and_keeps_its_data() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.sqlite");
        {
            let mut conn = Connection::open(&path).unwrap();
            migrate_to(&mut conn, 1).unwrap();
            assert_eq!(version(&conn).unwrap(), 1);
            conn.execute_batch(
                "INSERT INTO hosts VALUES (1, 'h', 'cpu', 'avx2', 2, 1, '[]', NULL, 0);
                 INSERT INTO pipelines VALUES (1, 'p', '{\"kind\":\"definition\",\"json\":\"{}\"}');
                 INSERT INTO schedules VALUES (1, 1, 's', 'f.parallel(y)');
                 INSERT INTO reports VALUES (1, 'w1', 1, 1, 'agent', 0, 0);
                 INSERT INTO samples VALUES (1, 1, 1, 0.5, NULL, NULL, NULL, 'crash');",
            )
            .unwrap();
        }
        let store = Store::open(&path).unwrap();
        assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
        let summary = store.summary().unwrap();
        assert_eq!((summary.hosts, summary.pipelines, summary.samples, summary.weights), (1, 1, 1, 0));
        assert_eq!(summary.samples_per_outcome, [(FailureClass::Crash.to_string(), 1)]);
        assert!(store.weights_list().unwrap().is_empty());
    }

    #[test]
    fn a_file_from_a_newer_schema_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.sqlite");
        Connection::open(&path).unwrap().pragma_update(None, "user_version", SCHEMA_VERSION + 1).unwrap();
        let err = Store::open(&path).err().expect("a newer schema must not open");
        assert!(matches!(err, StoreError::NewerSchema { found, supported } if found == SCHEMA_VERSION + 1 && supported == SCHEMA_VERSION));
        assert!(err.to_string().contains("newer"), "{err}");
    }
}

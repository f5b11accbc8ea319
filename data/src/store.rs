//! Opening the store: the connection, its durability settings, the schema.

use std::path::Path;
use std::time::Duration;

use rusqlite::Connection;

use crate::schema::{self, SCHEMA_VERSION};
use crate::StoreError;

/// How long a statement waits for another connection's write lock before failing with `SQLITE_BUSY`.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The training store: one SQLite connection.
///
/// Any number of processes may open the same file; SQLite lets one write at
/// a time (every write here is a `BEGIN IMMEDIATE` transaction, which waits
/// up to [`BUSY_TIMEOUT`] for the lock) while readers go on. All processes
/// must be on one host: no network file systems. The `-wal` file beside the
/// database holds committed data: never delete or copy the two separately.
pub struct Store {
    pub(crate) conn: Connection,
}

impl Store {
    /// Opens (creating if needed) the store at `path` and brings its schema up to date.
    ///
    /// Durability: the file is in WAL mode with `synchronous = NORMAL`. A
    /// commit appends the transaction to the `-wal` file with a `write()`
    /// before `COMMIT` returns, so it is in the operating system's page cache
    /// and survives the writer process being killed at any instruction
    /// (SIGKILL, a panic, an abort): the next opener replays the WAL. What
    /// NORMAL gives up against FULL is the `fsync` on every commit, so a
    /// power loss or kernel crash may roll back the last few commits (never
    /// corrupt the file: WAL frames carry checksums and the WAL is synced
    /// before each checkpoint). Samples are re-measurable and agents retry
    /// unacknowledged reports, so losing seconds of work to a power cut is
    /// acceptable, and a commit costs no disk flush. The kill test
    /// (`tests/kill.rs`) checks the process-kill half of this.
    pub fn open(path: impl AsRef<Path>) -> Result<Store, StoreError> {
        let conn = Connection::open(path)?;
        conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0))?;
        Store::init(conn)
    }

    /// A store in memory (tests, dry runs); gone when dropped.
    pub fn open_in_memory() -> Result<Store, StoreError> {
        Store::init(Connection::open_in_memory()?)
    }

    fn init(mut conn: Connection) -> Result<Store, StoreError> {
        conn.busy_timeout(BUSY_TIMEOUT)?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", true)?;
        schema::migrate_to(&mut conn, SCHEMA_VERSION)?;
        Ok(Store { conn })
    }

    /// The file the store is in; `None` for a store in memory.
    pub fn path(&self) -> Option<&Path> {
        self.conn.path().filter(|p| !p.is_empty()).map(Path::new)
    }

    /// The schema version of the file (after opening, always [`SCHEMA_VERSION`]).
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        schema::version(&self.conn)
    }

    /// `PRAGMA integrity_check`: `["ok"]` for a sound file, else up to 100 problems.
    pub fn integrity_check(&self) -> Result<Vec<String>, StoreError> {
        let mut stmt = self.conn.prepare("PRAGMA integrity_check")?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// Seconds since the Unix epoch (0 for a clock set before it).
pub(crate) fn unix_now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// An integer column read back into a narrower type; out of range is corruption.
pub(crate) fn narrow<T: TryFrom<i64>>(value: i64, what: &str) -> Result<T, StoreError> {
    T::try_from(value).map_err(|_| StoreError::Corrupt(format!("{what} = {value}")))
}

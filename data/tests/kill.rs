//! Killing the writer at random moments loses no committed report and leaves a sound file.
//!
//! The test binary re-invokes itself (`std::env::current_exe`) to run the
//! ignored `writer_child` test, which records reports in a loop on a file and
//! prints each work id once its transaction has committed. The parent kills
//! it with SIGKILL after a random delay, many times over, then checks the file.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use data::Store;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use test_support::reports::{host, report, PIPELINE_LAYOUT, SCHEDULE_LAYOUT};

const DB_ENV: &str = "DATA_KILL_TEST_DB";
const ROUND_ENV: &str = "DATA_KILL_TEST_ROUND";
const SCHEDULES: usize = 8;
const KILLS: u32 = 30;
/// A writer stops by itself after this many reports, should its parent die before killing it.
const MAX_REPORTS: u32 = 20_000;

#[test]
#[ignore = "the writer process of killing_the_writer_loses_no_committed_report, which runs it"]
fn writer_child() {
    let (Ok(path), Ok(round)) = (std::env::var(DB_ENV), std::env::var(ROUND_ENV)) else { return };
    let round: u32 = round.parse().unwrap();
    let mut store = Store::open(path).unwrap();
    let h = host("cpu-a");
    let mut out = std::io::stdout().lock();
    for n in 0..MAX_REPORTS {
        let r = report(&format!("k{round}-{n}"), &h, u64::from(n % 7), SCHEDULES, round);
        store.record_report(&r).unwrap();
        writeln!(out, "committed {}", r.work_id).unwrap();
        out.flush().unwrap();
        if n % 4 == 3 {
            // An agent retrying a report whose acknowledgement it lost.
            assert_eq!(store.record_report(&r).unwrap().duplicates, SCHEDULES);
        }
    }
}

#[test]
fn killing_the_writer_loses_no_committed_report() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("killed.sqlite");
    let exe = std::env::current_exe().unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(20_261_123);
    let mut committed = Vec::new();
    for round in 0..KILLS {
        let mut child = Command::new(&exe)
            .args(["writer_child", "--exact", "--ignored", "--nocapture", "--test-threads=1"])
            .env(DB_ENV, &path)
            .env(ROUND_ENV, round.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
                .filter_map(|l| l.strip_prefix("committed ").map(str::to_string))
                .collect::<Vec<_>>()
        });
        std::thread::sleep(Duration::from_millis(rng.random_range(5..250)));
        child.kill().unwrap();
        let status = child.wait().unwrap();
        assert!(!status.success(), "round {round}: the writer ended by itself before it was killed");
        committed.extend(reader.join().unwrap());
    }
    assert!(committed.len() > 100, "only {} reports committed in {KILLS} runs", committed.len());

    let store = Store::open(&path).unwrap();
    assert_eq!(store.integrity_check().unwrap(), ["ok"]);
    let h = host("cpu-a");
    for id in &committed {
        assert!(store.has_report(id, &h.key()).unwrap(), "committed report {id} is missing");
    }
    let rows = store.export_rows().unwrap();
    let mut per_report: HashMap<&str, usize> = HashMap::new();
    let mut seen = HashSet::new();
    for row in &rows {
        assert!(
            seen.insert((row.work_id.as_str(), row.schedule_hash.as_str())),
            "sample {} of {} stored twice",
            row.schedule_hash,
            row.work_id
        );
        *per_report.entry(row.work_id.as_str()).or_default() += 1;
    }
    // Every stored report is whole: a kill mid-report leaves none of it.
    assert!(per_report.values().all(|&n| n == SCHEDULES), "a report was stored in part");
    let summary = store.summary().unwrap();
    assert_eq!(summary.samples, summary.reports * SCHEDULES as u64);
    assert!(summary.reports as usize >= committed.len());
    let measured: usize =
        store.samples_for_training(&h.key(), PIPELINE_LAYOUT, SCHEDULE_LAYOUT).unwrap().iter().map(|p| p.samples.len()).sum();
    // Reports of one pipeline in one round time the same schedules: each trains once, as its newest sample.
    let timed: HashSet<(&str, u32)> = rows.iter().map(|row| (row.pipeline_hash.as_str(), row.round)).collect();
    assert_eq!(measured, timed.len() * (SCHEDULES - SCHEDULES / 3));
    eprintln!("{} reports committed before {KILLS} kills; {} stored", committed.len(), summary.reports);
}

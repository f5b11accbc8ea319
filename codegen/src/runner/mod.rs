//! The isolated runner: schedules are lowered, compiled and timed in a
//! child process (the `hl-runner` binary), so that a schedule that crashes,
//! hangs or exhausts memory never takes the caller down.
//!
//! A [`Runner`] keeps one warm child for many requests (the child's bounded
//! compile cache keeps its memory bounded) and starts a new one after a
//! crash or a timeout. Each request has a wall-clock limit; the child's
//! address space can be capped (`setrlimit`), and its peak resident set is
//! reported ([`Runner::child_peak_rss`]). Requests and outcomes are
//! frames on the child's stdin and stdout ([`protocol`]); every failure is
//! classified ([`Outcome`]).

pub mod child;
pub mod protocol;

pub use protocol::{Fault, Outcome, RunRequest};

use std::io::{BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How a [`Runner`] starts and limits its child.
#[derive(Clone, Debug)]
pub struct RunnerOptions {
    /// The `hl-runner` executable.
    pub program: PathBuf,
    /// The longest a request may take (lowering, compiling and timing).
    pub timeout: Duration,
    /// The child's address-space limit in bytes (`None`: unlimited).
    pub memory_limit: Option<u64>,
    /// Compiled pipelines the child keeps.
    pub cache_capacity: usize,
}

impl RunnerOptions {
    /// The `hl-runner` next to the running executable (or one directory up,
    /// for test binaries under `deps/`), a 60 s limit, 8 GiB of address
    /// space and the default cache.
    pub fn beside_current_exe() -> RunnerOptions {
        let exe = std::env::current_exe().unwrap_or_default();
        let dir = exe.parent().map(PathBuf::from).unwrap_or_default();
        let candidates = [dir.join("hl-runner"), dir.parent().map(|d| d.join("hl-runner")).unwrap_or_default()];
        let program = candidates.iter().find(|p| p.exists()).cloned().unwrap_or_else(|| candidates[0].clone());
        RunnerOptions {
            program,
            timeout: Duration::from_secs(60),
            memory_limit: Some(8 << 30),
            cache_capacity: crate::cache::DEFAULT_CAPACITY,
        }
    }
}

/// A running child.
struct Worker {
    process: Child,
    stdin: ChildStdin,
    answers: Receiver<Outcome>,
    /// The end of what the child wrote to stderr.
    stderr: Arc<Mutex<String>>,
}

/// Most bytes of a child's stderr kept (to classify how it died).
const STDERR_TAIL: usize = 4096;

/// Runs requests in a warm child process.
pub struct Runner {
    options: RunnerOptions,
    worker: Option<Worker>,
    started: usize,
}

impl Runner {
    /// A runner with `options`; its child starts with the first request.
    pub fn new(options: RunnerOptions) -> Runner {
        Runner { options, worker: None, started: 0 }
    }

    /// How many children this runner has started.
    pub fn children_started(&self) -> usize {
        self.started
    }

    /// The process id of the current child, if one is running.
    pub fn child_id(&self) -> Option<u32> {
        self.worker.as_ref().map(|w| w.process.id())
    }

    /// The peak resident set size of the current child in bytes (its
    /// `VmHWM` in `/proc/<pid>/status`), if one is running and the system
    /// reports it.
    pub fn child_peak_rss(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child_id()?)).ok()?;
        let kib: u64 = status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?.trim().strip_suffix("kB")?.trim().parse().ok()?;
        Some(kib << 10)
    }

    fn start(&mut self) -> std::io::Result<&mut Worker> {
        if self.worker.is_none() {
            let mut command = Command::new(&self.options.program);
            command.arg("--cache-capacity").arg(self.options.cache_capacity.to_string());
            if let Some(limit) = self.options.memory_limit {
                command.arg("--memory-limit").arg(limit.to_string());
            }
            let mut process = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
            let stdin = process.stdin.take().expect("piped");
            let stdout = process.stdout.take().expect("piped");
            let mut stderr_pipe = process.stderr.take().expect("piped");
            let (send, answers) = mpsc::channel();
            std::thread::spawn(move || {
                let mut stdout = BufReader::new(stdout);
                while let Ok(Some(outcome)) = protocol::read_frame::<Outcome>(&mut stdout) {
                    if send.send(outcome).is_err() {
                        break;
                    }
                }
            });
            let stderr = Arc::new(Mutex::new(String::new()));
            let tail = stderr.clone();
            std::thread::spawn(move || {
                let mut chunk = [0u8; 1024];
                while let Ok(n) = stderr_pipe.read(&mut chunk) {
                    if n == 0 {
                        break;
                    }
                    let mut t = tail.lock().unwrap_or_else(|e| e.into_inner());
                    t.push_str(&String::from_utf8_lossy(&chunk[..n]));
                    if t.len() > STDERR_TAIL {
                        let cut = t.len() - STDERR_TAIL;
                        let cut = (cut..t.len()).find(|&i| t.is_char_boundary(i)).unwrap_or(t.len());
                        t.drain(..cut);
                    }
                }
            });
            self.started += 1;
            self.worker = Some(Worker { process, stdin, answers, stderr });
        }
        Ok(self.worker.as_mut().expect("started above"))
    }

    /// Runs one request; never fails: a child that cannot be started, dies
    /// or does not answer in time is an [`Outcome`] too.
    pub fn run(&mut self, request: &RunRequest) -> Outcome {
        let timeout = self.options.timeout;
        let worker = match self.start() {
            Ok(w) => w,
            Err(e) => return Outcome::RunFailed { message: format!("cannot start {}: {e}", self.options.program.display()) },
        };
        let answer = match protocol::write_frame(&mut worker.stdin, request) {
            Ok(()) => worker.answers.recv_timeout(timeout),
            Err(_) => Err(RecvTimeoutError::Disconnected),
        };
        match answer {
            Ok(outcome) => outcome,
            Err(RecvTimeoutError::Timeout) => {
                self.stop();
                Outcome::Timeout
            }
            Err(RecvTimeoutError::Disconnected) => self.died(),
        }
    }

    /// Classifies how the child died, and forgets it.
    fn died(&mut self) -> Outcome {
        let Some(mut worker) = self.worker.take() else { return Outcome::Crash { signal: None } };
        let status = worker.process.wait().ok();
        // Let the stderr reader drain what the child wrote last.
        std::thread::sleep(Duration::from_millis(20));
        let stderr = worker.stderr.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if stderr.contains("memory allocation of") || stderr.contains("out of memory") {
            return Outcome::OutOfMemory;
        }
        use std::os::unix::process::ExitStatusExt;
        Outcome::Crash { signal: status.and_then(|s| s.signal()) }
    }

    /// Kills the current child (a new one starts with the next request).
    pub fn stop(&mut self) {
        if let Some(mut worker) = self.worker.take() {
            let _ = worker.process.kill();
            let _ = worker.process.wait();
        }
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        self.stop();
    }
}

//! Building an unpacked version in the sandbox ([`build`]).
//!
//! The build runs under `referee`'s sandbox (bubblewrap, seccomp, a pids cgroup and a
//! memory cgroup without swap), as the sandbox's unprivileged user when `hus` is root,
//! never as root: no network (a network namespace of its own), its sources read-only,
//! and one writable place, its build directory, a memory file system (tmpfs) of
//! [`BuildLimits::disk`] bytes mounted at the very path where the built tree will live
//! (`VERSION/tree`), so that absolute paths a build writes stay true. A tmpfs is a
//! bound that holds: a write past it fails ("no space left on device"), and its pages
//! count against the sandbox's memory cgroup too (docs/security.md, on tmpfs and memory
//! cgroups); a quota checked now and then would let a fast writer past it.
//!
//! The sandbox runs a small shell script ([`SCRIPT`]): copy the sources into the build
//! directory, run the build command there with its stdout sent to its stderr, and, if it
//! succeeded, write the built directory as a tar to stdout (links replaced by what they
//! point to, as seen inside the sandbox). `hus` keeps that tar in a file beside the
//! version (bounded by the disk bound) and unpacks it with the same checks as an upload
//! ([`crate::unpack_tar_file`]) into `VERSION/tree`. The build's output (stdout and
//! stderr together) is kept up to [`BuildLimits::output`] bytes, the rest counted and
//! left out, and returned for its author whatever happened.
//!
//! Every bound stops the build with its own cause ([`BuildFailure`]): wall time (the
//! sandbox killed), memory (the cgroup's out-of-memory kills), processes (the pids
//! cgroup's refused forks), disk (the build directory found full when the build failed).

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use referee::{BotSpec, Create, Dir, Limits, OnceProcess, Sandbox, SandboxError};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use crate::bounds::{human_bytes, Bounds};
use crate::manifest::{Commands, Manifest, ManifestError};
use crate::unpack::{unpack_tar_file, UnpackError, Unpacked, SOURCES};

/// The built tree's directory, in a version's directory.
pub const TREE: &str = "tree";
/// The tar of the built tree while it is read from the sandbox, in a version's
/// directory (removed once unpacked).
const TREE_TAR: &str = "tree.tar";
/// Default wall time of a build: 5 minutes.
pub const DEFAULT_BUILD_TIME: Duration = Duration::from_secs(300);
/// Default memory of a build's sandbox (its build directory's pages included): 2 GiB.
pub const DEFAULT_BUILD_MEMORY: u64 = 2 << 30;
/// Default bound on a build's processes and threads.
pub const DEFAULT_BUILD_PROCESSES: u32 = 256;
/// Default size of a build's directory (sources, build products, everything): 512 MiB.
pub const DEFAULT_BUILD_DISK: u64 = 512 << 20;
/// Default output of a build kept for its author: 256 KiB.
pub const DEFAULT_BUILD_OUTPUT: u64 = 256 << 10;
/// The exit status by which [`SCRIPT`] says the build directory is full.
const DISK_FULL_STATUS: i32 = 86;
/// The exit status by which [`SCRIPT`] says the sources could not be copied.
const COPY_FAILED_STATUS: i32 = 87;
/// What the build's output readers are given once the sandbox is gone (its processes
/// all die with its pid namespace, so end of file comes at once).
const DRAIN_WAIT: Duration = Duration::from_secs(5);

/// The script run in the sandbox: `$0` is the build directory, `$1` the build command
/// (empty: none). Its exit status is 0 (built, tar on stdout), [`DISK_FULL_STATUS`],
/// [`COPY_FAILED_STATUS`], or the failed build's own status (1 for a build that
/// exits with one of those two itself), also said on stderr.
pub const SCRIPT: &str = r#"tree=$0
full() { set -- $(stat -f -c '%a %S' "$tree"); [ $(( $1 * $2 )) -lt 65536 ]; }
cp -R ./. "$tree"/ || { full && exit 86; echo "hus: cannot copy the sources into the build directory" >&2; exit 87; }
cd "$tree" || exit 87
if [ -n "$1" ]; then
  sh -c "$1" >&2 </dev/null
  s=$?
  if [ "$s" -ne 0 ]; then
    full && exit 86
    echo "hus: the build command ended with exit status $s" >&2
    case $s in 86|87) exit 1;; esac
    exit "$s"
  fi
fi
exec tar -c -h --hard-dereference --format=gnu -f - ."#;

/// The bounds of a build.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildLimits {
    /// Wall time, from the sandbox's start to its end.
    pub wall: Duration,
    /// The sandbox's memory budget (its processes, its `/tmp`, and its build
    /// directory's files, which are in memory): more than `disk`.
    pub memory: u64,
    /// Processes and threads.
    pub processes: u32,
    /// The size of the build directory.
    pub disk: u64,
    /// Bytes of output kept for the author.
    pub output: u64,
    /// What the built tree may hold (its `unpacked_bytes` is at most `disk` anyway).
    pub tree: Bounds,
    /// The sandbox's user when `hus` runs as root (`None`: the sandbox's default).
    pub user: Option<String>,
    /// Paths shown read-only besides the system's (a toolchain outside `/usr`).
    pub read_only: Vec<PathBuf>,
}

impl Default for BuildLimits {
    fn default() -> BuildLimits {
        BuildLimits {
            wall: DEFAULT_BUILD_TIME,
            memory: DEFAULT_BUILD_MEMORY,
            processes: DEFAULT_BUILD_PROCESSES,
            disk: DEFAULT_BUILD_DISK,
            output: DEFAULT_BUILD_OUTPUT,
            tree: Bounds {
                unpacked_bytes: DEFAULT_BUILD_DISK,
                files: 50_000,
                depth: 64,
                path_bytes: 4096,
                ..Bounds::default()
            },
            user: None,
            read_only: Vec::new(),
        }
    }
}

/// Why a build failed or was stopped: the cause its author is shown, beside its output.
#[derive(Debug, thiserror::Error)]
pub enum BuildFailure {
    /// The manifest is missing or wrong.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    /// The sandbox cannot be set up here (no bubblewrap, no cgroups, ...).
    #[error("the build's sandbox cannot be set up: {0}")]
    Sandbox(SandboxError),
    /// The build ran past its wall time and was stopped.
    #[error("the build was stopped after {}, its bound on time", referee::show_duration(*after))]
    TimedOut {
        /// The bound.
        after: Duration,
    },
    /// The kernel killed a process of the build for its memory budget.
    #[error("the build went over its memory budget of {} (its processes, /tmp and build directory count) and was killed", human_bytes(*budget))]
    OverMemory {
        /// The budget.
        budget: u64,
    },
    /// The build failed after forks were refused at its bound on processes.
    #[error("the build hit its bound of {bound} processes and threads ({hits} forks refused) and failed")]
    TooManyProcesses {
        /// The bound.
        bound: u32,
        /// Forks refused.
        hits: u64,
    },
    /// The build directory was full when the build failed.
    #[error("the build filled its directory, {} (sources, build products and everything else written there)", human_bytes(*bound))]
    DiskFull {
        /// The bound.
        bound: u64,
    },
    /// The build command failed (its status is in the output).
    #[error("the build failed ({0}); its output says why")]
    Failed(String),
    /// The built tree was refused (a device it left, too many files...).
    #[error("the built tree was refused: {0}")]
    Tree(UnpackError),
    /// The build could not be run or its tree kept.
    #[error("the build could not be run: {0}")]
    Io(io::Error),
}

// The messages hold their causes, so the causes are not `source`s (each said once).
impl From<SandboxError> for BuildFailure {
    fn from(e: SandboxError) -> BuildFailure {
        BuildFailure::Sandbox(e)
    }
}

impl From<io::Error> for BuildFailure {
    fn from(e: io::Error) -> BuildFailure {
        BuildFailure::Io(e)
    }
}

/// What a build did, for its author: always its output, then the built tree or why not.
#[derive(Debug)]
pub struct BuildReport {
    /// The build's stdout and stderr, the first [`BuildLimits::output`] bytes (lossy
    /// UTF-8), with a last line saying how much was left out, if any.
    pub output: String,
    /// All the bytes of output, kept or not.
    pub output_bytes: u64,
    /// The whole build: the sandbox's check, the build, and the tree's unpacking.
    pub took: Duration,
    /// The built tree, or why there is none.
    pub result: Result<Built, BuildFailure>,
}

/// A built version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Built {
    /// The built tree (`VERSION/tree`): the directory the bot runs in, read-only.
    pub tree: PathBuf,
    /// Its build and run commands.
    pub commands: Commands,
    /// What the tree holds.
    pub unpacked: Unpacked,
}

impl Built {
    /// The bot's command, to run in a sandbox whose directory is [`Built::tree`]: its
    /// `run` split into words, a program written as a relative path (`./bot`) made
    /// absolute in the tree (a sandboxed bot runs in its directory, but its program is
    /// found before that).
    pub fn run_spec(&self) -> Result<BotSpec, ManifestError> {
        let mut spec = BotSpec::parse(&self.commands.run)
            .map_err(|_| ManifestError::BadRun(self.commands.run.clone()))?;
        if spec.argv[0].contains('/') && Path::new(&spec.argv[0]).is_relative() {
            let rel: PathBuf = Path::new(&spec.argv[0])
                .components()
                .filter(|part| !matches!(part, std::path::Component::CurDir))
                .collect();
            spec.argv[0] = self.tree.join(rel).display().to_string();
        }
        Ok(spec)
    }
}

/// Builds the version in `version_dir` (its sources in `version_dir/src`, from
/// [`crate::unpack_archive`]) in the sandbox, within `limits`, into
/// `version_dir/tree`. A tree is there only if the build succeeded.
pub async fn build(version_dir: &Path, limits: &BuildLimits) -> BuildReport {
    let started = Instant::now();
    let mut output = Output::new(limits.output);
    let result = run(version_dir, limits, &mut output).await;
    BuildReport {
        output_bytes: output.total,
        output: output.text(),
        took: started.elapsed(),
        result,
    }
}

/// The build's output, kept up to its bound.
struct Output {
    kept: Vec<u8>,
    total: u64,
    bound: u64,
}

impl Output {
    fn new(bound: u64) -> Output {
        Output {
            kept: Vec::new(),
            total: 0,
            bound,
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        let room = self.bound.saturating_sub(self.kept.len() as u64) as usize;
        self.kept.extend_from_slice(&bytes[..bytes.len().min(room)]);
        self.total += bytes.len() as u64;
    }

    fn text(&self) -> String {
        let mut text = String::from_utf8_lossy(&self.kept).into_owned();
        let left = self.total - self.kept.len() as u64;
        if left > 0 {
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!(
                "[hus: {left} more bytes of output left out: {} are kept]\n",
                human_bytes(self.bound)
            ));
        }
        text
    }
}

async fn run(
    version_dir: &Path,
    limits: &BuildLimits,
    output: &mut Output,
) -> Result<Built, BuildFailure> {
    // The tree's path inside the sandbox is the one it has on the host when the bot
    // runs (a sandbox shows its directory at its real path).
    let version_dir = &std::fs::canonicalize(version_dir)?;
    let sources = version_dir.join(SOURCES);
    let commands = Manifest::read(&sources)?.commands(&sources)?;
    let tree = version_dir.join(TREE);
    let version = Dir::open(version_dir)?;
    if version.exists(Path::new(TREE))? {
        return Err(io::Error::other(format!(
            "{} exists already: a version is built once",
            tree.display()
        ))
        .into());
    }
    let mut sandbox = Sandbox::new(&sources)?
        .max_processes(limits.processes)?
        .memory(limits.memory)?
        .scratch(&tree, limits.disk)?;
    for path in &limits.read_only {
        sandbox = sandbox.read_only(path)?;
    }
    if let Some(user) = &limits.user {
        sandbox = sandbox.user(user)?;
    }
    let spec = BotSpec {
        command: commands.build.clone().unwrap_or_default(),
        argv: vec![
            "/bin/sh".into(),
            "-c".into(),
            SCRIPT.into(),
            tree.display().to_string(),
            commands.build.clone().unwrap_or_default(),
        ],
    };
    let run_limits = Limits {
        sandbox: Some(sandbox.clone()),
        ..Limits::default()
    };
    {
        let (sandbox, spec, limits) = (sandbox.clone(), spec.clone(), run_limits.clone());
        tokio::task::spawn_blocking(move || sandbox.probe(&spec, &limits))
            .await
            .map_err(io::Error::other)??;
    }
    let tar_file = version.create_file(Path::new(TREE_TAR), Create::New, Some(0o600))?;
    let _tar_goes = RemoveOnDrop(&version, TREE_TAR);
    let mut child = run_limits.spawn_once(&spec).await?;
    let (Some(stdout), Some(stderr)) = (child.take_stdout(), child.take_stderr()) else {
        return Err(io::Error::other("the build's pipes could not be set up").into());
    };
    let tar_bound = limits
        .tree
        .unpacked_bytes
        .min(limits.disk)
        .saturating_add(limits.tree.files.saturating_mul(1024) + 1024);
    let mut spool = tokio::spawn(spool(stdout, tar_file, tar_bound));
    let (out_tx, mut out_rx) = tokio::sync::mpsc::channel::<Vec<u8>>(16);
    let reader = tokio::spawn(read_chunks(stderr, out_tx));
    let mut outcome = supervise(&mut child, &mut spool, &mut out_rx, output, limits.wall).await;
    // The sandbox is gone: its output ends at once.
    let _ = tokio::time::timeout(DRAIN_WAIT, async {
        while let Some(chunk) = out_rx.recv().await {
            output.push(&chunk);
        }
    })
    .await;
    reader.abort();
    let spooled = match outcome.spooled.take() {
        Some(spooled) => Some(spooled),
        None => tokio::time::timeout(DRAIN_WAIT, &mut spool)
            .await
            .ok()
            .map(|joined| joined.unwrap_or_else(|e| Err(io::Error::other(e)))),
    };
    spool.abort();
    let cause = cause(&child, &outcome, spooled.as_ref(), limits);
    let result = match cause {
        Some(failure) => Err(failure),
        None => {
            let tar_path = version_dir.join(TREE_TAR);
            let bounds = limits.tree;
            let made = version.create_dir(Path::new(TREE))?;
            tokio::task::spawn_blocking(move || unpack_tar_file(&tar_path, &made, &bounds))
                .await
                .map_err(io::Error::other)?
                .map_err(|refused| {
                    // Refused before anything was written: the empty directory goes.
                    let _ = version.remove_dir(Path::new(TREE));
                    BuildFailure::Tree(refused)
                })
                .map(|unpacked| Built {
                    tree: tree.clone(),
                    commands,
                    unpacked,
                })
        }
    };
    result
}

/// Removes a file of a directory when dropped, whichever way a build ends.
struct RemoveOnDrop<'a>(&'a Dir, &'static str);

impl Drop for RemoveOnDrop<'_> {
    fn drop(&mut self) {
        let _ = self.0.remove_file(Path::new(self.1));
    }
}

/// How the sandbox ended.
struct Outcome {
    /// Its status, `None` if it was stopped at its wall time.
    status: Option<std::process::ExitStatus>,
    /// What the tree's spool said, if it ended while the sandbox ran.
    spooled: Option<io::Result<u64>>,
}

/// Waits for the sandbox to end, keeping its output meanwhile; kills it at its wall
/// time, or as soon as its tar passes its bound.
async fn supervise(
    child: &mut OnceProcess,
    spool: &mut tokio::task::JoinHandle<io::Result<u64>>,
    out_rx: &mut tokio::sync::mpsc::Receiver<Vec<u8>>,
    output: &mut Output,
    wall: Duration,
) -> Outcome {
    let deadline = tokio::time::sleep(wall);
    tokio::pin!(deadline);
    let mut spooled: Option<io::Result<u64>> = None;
    let mut output_open = true;
    let status = loop {
        tokio::select! {
            status = child.wait() => break status.ok(),
            () = &mut deadline => {
                child.kill();
                let _ = child.wait().await;
                break None;
            }
            joined = &mut *spool, if spooled.is_none() => {
                let result = joined.unwrap_or_else(|e| Err(io::Error::other(e)));
                if result.is_err() {
                    child.kill();
                }
                spooled = Some(result);
            }
            chunk = out_rx.recv(), if output_open => match chunk {
                Some(chunk) => output.push(&chunk),
                None => output_open = false,
            },
        }
    };
    Outcome { status, spooled }
}

/// Why the build failed, if it did.
fn cause(
    child: &OnceProcess,
    outcome: &Outcome,
    spooled: Option<&io::Result<u64>>,
    limits: &BuildLimits,
) -> Option<BuildFailure> {
    let succeeded = outcome.status.is_some_and(|s| s.success()) && matches!(spooled, Some(Ok(_)));
    if succeeded {
        return None;
    }
    if let Some(memory) = child.memory_events().filter(|m| m.oom_kills > 0) {
        return Some(BuildFailure::OverMemory {
            budget: memory.budget,
        });
    }
    if let Some(hits) = child.process_bound_hits().filter(|&hits| hits > 0) {
        return Some(BuildFailure::TooManyProcesses {
            bound: limits.processes,
            hits,
        });
    }
    let Some(status) = outcome.status else {
        return Some(BuildFailure::TimedOut { after: limits.wall });
    };
    if let Some(Err(e)) = spooled {
        if is_tree_too_big(e) {
            return Some(BuildFailure::Tree(UnpackError::UnpackedTooBig {
                bound: limits.tree.unpacked_bytes.min(limits.disk),
            }));
        }
    }
    Some(match status.code() {
        Some(DISK_FULL_STATUS) => BuildFailure::DiskFull { bound: limits.disk },
        Some(COPY_FAILED_STATUS) => {
            BuildFailure::Failed("its sources could not be copied into the build directory".into())
        }
        Some(0) => BuildFailure::Io(io::Error::other(match spooled {
            Some(Err(e)) => format!("the built tree could not be kept: {e}"),
            _ => "the built tree could not be kept".to_string(),
        })),
        _ => BuildFailure::Failed(referee::describe_status(status)),
    })
}

/// The message of the spool's error past its bound.
const TREE_TOO_BIG: &str = "hus-upload: the built tree is past its bound";

fn is_tree_too_big(e: &io::Error) -> bool {
    e.get_ref()
        .is_some_and(|inner| inner.to_string() == TREE_TOO_BIG)
}

/// Copies the sandbox's stdout (the built tree's tar) into `file`, failing past
/// `bound` bytes.
async fn spool(from: impl AsyncRead + Unpin, file: std::fs::File, bound: u64) -> io::Result<u64> {
    let mut to = tokio::fs::File::from_std(file);
    let mut limited = from.take(bound.saturating_add(1));
    let n = tokio::io::copy(&mut limited, &mut to).await?;
    to.flush().await?;
    if n > bound {
        return Err(io::Error::other(TREE_TOO_BIG));
    }
    Ok(n)
}

/// Sends what `from` gives, in chunks, until its end (or until no one listens).
async fn read_chunks(mut from: impl AsyncRead + Unpin, to: tokio::sync::mpsc::Sender<Vec<u8>>) {
    let mut buffer = vec![0u8; 16 * 1024];
    loop {
        match from.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if to.send(buffer[..n].to_vec()).await.is_err() {
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_kept_to_its_bound_and_the_rest_counted() {
        let mut output = Output::new(10);
        output.push(b"0123456");
        output.push(b"789abcdef");
        assert_eq!(output.total, 16);
        assert_eq!(
            output.text(),
            "0123456789\n[hus: 6 more bytes of output left out: 10 bytes are kept]\n"
        );
        let mut small = Output::new(100);
        small.push(b"ok\n");
        assert_eq!(small.text(), "ok\n");
    }
}

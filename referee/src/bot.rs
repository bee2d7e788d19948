//! One bot process: spawning it in its own process group, writing lines to its stdin,
//! reading timestamped lines from its stdout, capturing its stderr, and making sure
//! that nothing it started outlives it.
//!
//! Three tasks per process, so that a dying or flooding bot can never block the
//! referee on a full pipe:
//! - the stdout reader turns the stream into [`Output`]s (bounded lines, stamped with
//!   the instant they were read) on a small bounded channel: a bot that floods stdout
//!   fills the channel and then its own pipe, and blocks, while the referee's memory
//!   stays bounded;
//! - the stderr drain (`stderr.rs`) copies up to [`STDERR_CAP`](crate::stderr::STDERR_CAP) bytes to the bot's
//!   stderr file and discards the rest (an undrained stderr pipe would block the bot
//!   mid-write);
//! - the reaper waits for the exit status and publishes it.

use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use protocol::{LineError, LineReader};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::process::Command;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::config::BotSpec;
use crate::files::{Create, FilePlace};
use crate::lifetime::{self, Marks, Stray};
use crate::limits::Limits;
use crate::link::{Link, RttProbe};
use crate::records::StoppedBy;
use crate::sandbox::{BotCgroup, MemoryEvents};
use crate::stderr::{Drain, StderrBudget, Tail};
/// Lines buffered between the stdout reader and the referee.
const OUTPUT_QUEUE: usize = 16;
/// After the process exits, how long its pipes may stay open before a descendant that
/// still holds them is reported.
const PIPE_CLOSE_WAIT: Duration = Duration::from_millis(200);

/// How often the referee looks at the clock while it waits for a bot's answer: a
/// wake-up that comes later than due by [`STALL_MIN`] or more is a stall of the
/// referee (PROTOCOL.md, "Timing": "A stopped referee").
pub const STALL_TICK: Duration = Duration::from_millis(100);
/// The least lateness of a wake-up that counts as a stall of the referee: 15 times the
/// worst lateness of a time-out measured with both cores kept busy (6.3 ms, PROTOCOL.md,
/// "Timing"), so that a merely busy machine credits nothing.
pub const STALL_MIN: Duration = Duration::from_millis(100);

/// Something read from a bot's stdout.
#[derive(Debug)]
pub enum Output {
    /// A complete line (trimmed, non-blank, at most the line limit), and when it was read.
    Line { bytes: Vec<u8>, at: Instant },
    /// More than the line limit arrived without a newline; nothing more is read.
    TooLong { limit: usize, at: Instant },
    /// Stdout closed; `partial` holds the start of an unfinished last line, if any.
    Closed {
        partial: Option<Vec<u8>>,
        at: Instant,
    },
    /// Reading failed.
    ReadError { message: String, at: Instant },
    /// The process exited while its stdout stayed open (a process it started still
    /// holds the pipe) and nothing more came within a moment.
    Exited { status: ExitStatus, at: Instant },
}

impl Output {
    /// When it was read (or seen).
    pub fn at(&self) -> Instant {
        match self {
            Output::Line { at, .. }
            | Output::TooLong { at, .. }
            | Output::Closed { at, .. }
            | Output::ReadError { at, .. }
            | Output::Exited { at, .. } => *at,
        }
    }
}

/// How a process ended, as far as the referee could tell.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ending {
    /// Exit status, when it was reaped.
    pub status: Option<String>,
    /// `itself` (exited on its own after its stdin closed), `sigterm` or `sigkill`; a
    /// link `itself` or `closed`.
    pub stopped_by: StoppedBy,
    /// A descendant kept the bot's pipes open after the group was killed.
    pub leaked: bool,
    /// The pids of the processes of [`Ending::strays`] that had left the bot's process
    /// group (`setsid`, `setpgid`).
    pub escaped: Vec<i32>,
    /// The processes the bot started that were still running after it had exited (or
    /// been stopped): found and killed by the referee.
    pub strays: Vec<Stray>,
    /// Bytes the bot wrote to stderr, and whether the file was cut at [`STDERR_CAP`](crate::stderr::STDERR_CAP).
    pub stderr_bytes: u64,
    pub stderr_cut: bool,
}

/// A running bot: a process the referee started, or a [`Link`] to a remote one. Both
/// are driven the same way (lines in, stamped lines out); what differs is only how the
/// bot is stopped and how its end is described.
pub struct BotProcess {
    /// The process id, read once at spawn; it is also the process group id. `None`
    /// for a link.
    pgid: Option<i32>,
    /// The bot's stdin (or the link's write half).
    stdin: Option<Box<dyn AsyncWrite + Send + Unpin>>,
    output: mpsc::Receiver<Output>,
    exit: watch::Receiver<Option<ExitStatus>>,
    /// A link has no exit status: its sender is kept so that `exit` never resolves.
    _exit_tx: Option<watch::Sender<Option<ExitStatus>>>,
    reader: JoinHandle<()>,
    /// The stderr drain; `None` for a link.
    stderr: Option<Drain>,
    /// The inode of the stderr pipe, to tell whether something still holds it.
    stderr_inode: Option<u64>,
    started: Instant,
    /// Set once the process group has been killed and reaped.
    finished: bool,
    /// Inodes of the three pipes, to find processes that still hold them.
    pipe_inodes: Vec<u64>,
    /// What tells the processes the bot started from the others'.
    marks: Marks,
    /// The bot's cgroups (pids, memory), removed once the bot is gone (fields drop
    /// after `Drop::drop` has killed the group).
    cgroup: Option<BotCgroup>,
    /// For a link: where the bot is and how its round-trip time is measured.
    link: Option<LinkState>,
}

struct LinkState {
    peer: String,
    connect_rtt: Option<Duration>,
    probe: Option<Box<dyn RttProbe>>,
    lag_cap: Duration,
}

/// The network time of a turn on a link: the round-trip time measured before it, and
/// the lag allowance credited to the bot.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Lag {
    /// The round-trip time measured before the turn, when it could be.
    pub rtt: Option<Duration>,
    /// Added to the turn's deadline and taken off the time charged.
    pub allowance: Duration,
}

impl BotProcess {
    /// Drives a bot over `link` (a TCP connection, an in-memory duplex) instead of a
    /// process: the same reader task turns its stream into [`Output`]s. A disconnect is
    /// read as a closed stdout, which the set calls a crash.
    pub fn from_link(link: Link) -> Self {
        let Link {
            reader,
            writer,
            peer,
            connect_rtt,
            probe,
            lag_cap,
        } = link;
        let (exit_tx, exit) = watch::channel(None);
        let (tx, output) = mpsc::channel(OUTPUT_QUEUE);
        let reader = tokio::spawn(read_stdout(LineReader::new(reader), tx));
        BotProcess {
            pgid: None,
            stdin: Some(writer),
            output,
            exit,
            _exit_tx: Some(exit_tx),
            reader,
            stderr: None,
            stderr_inode: None,
            started: Instant::now(),
            finished: false,
            pipe_inodes: Vec::new(),
            marks: Marks::default(),
            cgroup: None,
            link: Some(LinkState {
                peer,
                connect_rtt,
                probe,
                lag_cap,
            }),
        }
    }

    /// Whether this bot is reached over a link rather than run as a process.
    pub fn is_link(&self) -> bool {
        self.link.is_some()
    }

    /// For a link, its peer's address and the round-trip time measured at connect.
    pub fn link_info(&self) -> Option<(String, Option<Duration>)> {
        self.link.as_ref().map(|l| (l.peer.clone(), l.connect_rtt))
    }

    /// The network time to credit the next turn: nothing for a process; for a link,
    /// the round-trip time measured now, up to its cap.
    pub fn lag(&self) -> Option<Lag> {
        let link = self.link.as_ref()?;
        let rtt = link.probe.as_ref().and_then(|p| p.rtt());
        Some(Lag {
            rtt,
            allowance: rtt.unwrap_or(Duration::ZERO).min(link.lag_cap),
        })
    }

    /// What the bot's input is called in fault details: its `stdin`, or the link.
    pub fn input_name(&self) -> &'static str {
        if self.is_link() {
            "connection"
        } else {
            "stdin"
        }
    }

    /// Starts `spec` under `limits` (sandboxed or not) in a process group of its own,
    /// stdin/stdout piped, stderr appended to the file `stderr` as far as `stderr_budget` (the
    /// bot's for the set) allows.
    pub async fn spawn(
        spec: &BotSpec,
        stderr: &FilePlace,
        stderr_budget: &StderrBudget,
        limits: &Limits,
    ) -> io::Result<Self> {
        let stderr_path = &stderr.path();
        let stderr_file = stderr.create(Create::Append, None).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot open {}: {e}", stderr_path.display()),
            )
        })?;
        // Where this process's part of the file starts (earlier processes of the bot
        // wrote before it).
        let stderr_from = stderr_file.metadata()?.len();
        let prepared = limits.command(spec).map_err(io::Error::other)?;
        let sandboxed = prepared.sandboxed;
        let mut command = Command::from(prepared.command);
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut leader = lifetime::spawn(command).await?;
        let started = Instant::now();
        let pgid = leader.pid();
        let child = leader.child();
        let (stdin, stdout, stderr) =
            match (child.stdin.take(), child.stdout.take(), child.stderr.take()) {
                (Some(i), Some(o), Some(e)) => (i, o, e),
                _ => {
                    let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
                    return Err(io::Error::other("the bot's pipes could not be set up"));
                }
            };

        let inode = |fd| nix::sys::stat::fstat(fd).ok().map(|st| st.st_ino);
        let stderr_inode = inode(stderr.as_raw_fd());
        let pipe_inodes = [stdin.as_raw_fd(), stdout.as_raw_fd(), stderr.as_raw_fd()]
            .into_iter()
            .filter_map(inode)
            .collect();
        let (exit_tx, exit) = watch::channel(None);
        tokio::spawn(async move {
            // The reaper owns the Child: once it is reaped, the pid is never used again
            // except as a process group id, which Linux does not recycle while any
            // member of the group lives. Cancelled (its runtime dropped), the leader
            // still leaves the table of leaders as it drops.
            let status = leader.wait().await;
            let _ =
                exit_tx.send(status.map(|s| if sandboxed { unwrap_bwrap_status(s) } else { s }));
        });

        let (tx, output) = mpsc::channel(OUTPUT_QUEUE);
        let reader = tokio::spawn(read_stdout(LineReader::new(stdout), tx));
        let stderr = Drain::start(
            stderr,
            stderr_file,
            stderr_path,
            stderr_from,
            stderr_budget.clone(),
        );
        Ok(BotProcess {
            pgid: Some(pgid),
            stdin: Some(Box::new(stdin)),
            output,
            exit,
            _exit_tx: None,
            reader,
            stderr: Some(stderr),
            stderr_inode,
            started,
            finished: false,
            pipe_inodes,
            marks: Marks {
                pgid,
                tag: prepared.tag,
                cgroup_procs: prepared.cgroup.as_ref().map(|c| c.procs_path()),
                since: lifetime::start_time(pgid),
            },
            cgroup: prepared.cgroup,
            link: None,
        })
    }

    /// What its sandbox's memory cgroup counted (`None`: not sandboxed, or no memory
    /// cgroup): whether it went over its memory budget.
    pub fn memory_events(&self) -> Option<MemoryEvents> {
        self.cgroup.as_ref().and_then(|c| c.memory_events())
    }

    /// When the process was started.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// Writes one line (which must end in `\n`) and returns the instant the write
    /// completed: the start of the bot's time for a turn. A bot that does not read its
    /// stdin fills the pipe and would block the write for ever: past `deadline` the
    /// write gives up with `ErrorKind::TimedOut`.
    pub async fn send(&mut self, line: &str, deadline: Instant) -> io::Result<Instant> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| io::Error::new(io::ErrorKind::BrokenPipe, "stdin already closed"))?;
        let write = async {
            stdin.write_all(line.as_bytes()).await?;
            stdin.flush().await
        };
        match tokio::time::timeout_at(deadline, write).await {
            Ok(result) => result.map(|()| Instant::now()),
            Err(_) => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the bot is not reading its stdin (the pipe is full)",
            )),
        }
    }

    /// Closes the bot's stdin, so that it reads end-of-file, and leaves it running:
    /// what it writes next (a line it had buffered and flushes when it exits, say) is
    /// still read. `hus check-bot` uses this to tell an unflushed answer from none.
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Something the stdout reader has already read, without waiting.
    pub fn pending(&mut self) -> Option<Output> {
        self.output.try_recv().ok()
    }

    /// The next thing read from stdout, or `None` if `deadline` passes first. Once the
    /// deadline has passed, what the reader already queued is still returned, so a move
    /// read just before the deadline is never lost to the race between the two. If the
    /// process exits while its stdout stays open (a process it started holds the pipe),
    /// that is reported after a moment's wait for lines still in flight.
    pub async fn next_output(&mut self, deadline: Instant) -> Option<Output> {
        let mut exit = self.exit.clone();
        tokio::select! {
            biased;
            out = self.output.recv() => Some(out.unwrap_or_else(closed_now)),
            status = async { exit.wait_for(|s| s.is_some()).await.ok().and_then(|s| *s) } => {
                let late = tokio::time::timeout(EXIT_FLUSH_WAIT, self.output.recv()).await;
                match (late, status) {
                    (Ok(Some(out)), _) => Some(out),
                    (_, Some(status)) => Some(Output::Exited { status, at: Instant::now() }),
                    _ => Some(closed_now()),
                }
            }
            _ = tokio::time::sleep_until(deadline) => {
                tokio::task::yield_now().await;
                self.output.try_recv().ok()
            }
        }
    }

    /// [`next_output`](Self::next_output) with `deadline` moved later by every stall of
    /// the referee since `since`; also the total stall, credited to the bot.
    ///
    /// A stall is time in which the referee did not run: its process stopped (SIGSTOP,
    /// a debugger), frozen with its cgroup, swapped out, or its runtime held up. It is
    /// seen on the referee's own clock, never on the bot's: the wait wakes up every
    /// [`STALL_TICK`], and a wake-up (or a line read) that comes [`STALL_MIN`] or more
    /// after it was due is a stall as long as that lateness. A stopped process sees the
    /// whole gap as it resumes, whatever it was doing. A stall is credited only when it
    /// runs past the (moved) deadline: the referee could not see then whether the line
    /// had come in time, and gives the bot the benefit of the doubt. One that ends
    /// before the deadline is not: the bot was not stopped with the referee and
    /// computed on, and the referee is awake again at the deadline. The credit is never
    /// more than the stall (the process ran until the wake-up was due), and at most
    /// `STALL_TICK` less. A bot that is merely slow is timed out at its deadline as
    /// before: the referee that waits for it is awake, and its wake-ups come on time.
    pub async fn next_output_unstalled(
        &mut self,
        since: Instant,
        deadline: Instant,
    ) -> (Option<Output>, Duration) {
        let mut stalled = Duration::ZERO;
        // From `since` (when the turn was written), not from now: a stop between the
        // two is a late first wake-up like any other.
        let mut due = since + STALL_TICK;
        loop {
            let wake = due.min(deadline + stalled);
            let out = self.next_output(wake).await;
            let seen = out.as_ref().map_or_else(Instant::now, Output::at);
            let late = seen.saturating_duration_since(wake);
            // Only a stall that runs past the deadline is credited: during one that ends
            // before it, the bot computed on, and the referee is awake again to see
            // whether the line came by the deadline.
            if late >= STALL_MIN && seen > deadline + stalled {
                stalled += late;
            }
            match out {
                Some(out) => return (Some(out), stalled),
                None if seen >= deadline + stalled => return (None, stalled),
                None => due = seen + STALL_TICK,
            }
        }
    }

    /// Whether the process has exited (been reaped).
    pub fn has_exited(&self) -> bool {
        self.exit.borrow().is_some()
    }

    /// Waits up to `within` for the process to exit (a link has no exit status: `None`
    /// at once).
    pub async fn wait_exit(&mut self, within: Duration) -> Option<ExitStatus> {
        if self.is_link() {
            return None;
        }
        let mut exit = self.exit.clone();
        let waited = tokio::time::timeout(within, exit.wait_for(|s| s.is_some())).await;
        match waited {
            Ok(Ok(status)) => *status,
            _ => None,
        }
    }

    /// Closes stdin (the bot's signal to exit), waits `grace` for it to exit, then
    /// SIGTERM to the group, a short wait, SIGKILL to the group. Reports how it ended
    /// and whether a descendant kept its pipes open.
    ///
    /// A link is closed instead: its write half is shut down (the bot reads end of
    /// file), and if the bot closes its end within `grace` it stopped by `itself`,
    /// otherwise the referee closes the connection (`closed`).
    pub async fn shutdown(mut self, grace: Duration) -> Ending {
        if self.is_link() {
            return self.close_link(grace).await;
        }
        self.stdin = None;
        let mut stopped_by = StoppedBy::Itself;
        let mut status = self.wait_exit(grace).await;
        if status.is_none() {
            stopped_by = StoppedBy::Sigterm;
            self.signal(Signal::SIGTERM);
            status = self.wait_exit(TERM_GRACE).await;
        }
        if status.is_none() {
            stopped_by = StoppedBy::Sigkill;
            self.signal(Signal::SIGKILL);
            status = self.wait_exit(Duration::from_secs(5)).await;
        }
        // The leader is gone; whatever it left, in its group or not, goes too (after a
        // moment to exit by itself).
        let mut strays = lifetime::end_strays(&self.marks).await;
        self.finished = true;
        if let Some(cgroup) = self.cgroup.take() {
            cgroup.remove(CGROUP_EMPTY_WAIT).await;
        }
        if !self.pipes_closed().await {
            // Something that is not the bot's by its marks (it left the group and its
            // cgroup-less environment behind) still holds the bot's pipes: find it
            // through /proc and kill it.
            let known: Vec<i32> = strays.iter().map(|s| s.pid).collect();
            for pid in pipe_holders(&self.pipe_inodes) {
                if known.contains(&pid) {
                    // Killed already, and not yet gone.
                    continue;
                }
                strays.push(Stray {
                    pid,
                    command: lifetime::command_of(pid),
                    left_group: true,
                });
                let _ = nix::sys::signal::kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
        }
        let closed = self.pipes_closed().await;
        let escaped = strays
            .iter()
            .filter(|s| s.left_group)
            .map(|s| s.pid)
            .collect();
        // The drain ends now (at once if something still holds the pipe) and writes its
        // notes before the set goes on: a restart's process appends only after them.
        let drained = match self.stderr.as_mut() {
            Some(stderr) => stderr.finish().await,
            None => Default::default(),
        };
        self.reader.abort();
        Ending {
            status: status.map(describe_status),
            stopped_by,
            leaked: !closed || !strays.is_empty(),
            escaped,
            strays,
            stderr_bytes: drained.total,
            stderr_cut: drained.cut,
        }
    }

    /// Closes a link: shuts its write half down, waits up to `grace` for the bot to
    /// close its end (the reader sees end of file), then drops the whole connection.
    async fn close_link(mut self, grace: Duration) -> Ending {
        if let Some(mut writer) = self.stdin.take() {
            // A peer that reads nothing cannot hold the referee: the shutdown is bounded.
            let _ = tokio::time::timeout(WRITE_GRACE, writer.shutdown()).await;
        }
        let by_itself = self.reader.is_finished()
            || tokio::time::timeout(grace, &mut self.reader).await.is_ok();
        self.reader.abort();
        self.finished = true;
        Ending {
            status: None,
            stopped_by: if by_itself {
                StoppedBy::Itself
            } else {
                StoppedBy::Closed
            },
            leaked: false,
            escaped: Vec::new(),
            strays: Vec::new(),
            stderr_bytes: 0,
            stderr_cut: false,
        }
    }

    /// Waits a moment for the stdout reader and the stderr drain to see end-of-file
    /// (the drain's writing to its file may take longer: that is not a held pipe).
    async fn pipes_closed(&mut self) -> bool {
        let reader = &mut self.reader;
        let stderr = &mut self.stderr;
        tokio::time::timeout(PIPE_CLOSE_WAIT, async {
            if !reader.is_finished() {
                let _ = reader.await;
            }
            if let Some(stderr) = stderr.as_mut() {
                stderr.wait_eof(PIPE_CLOSE_WAIT).await;
            }
        })
        .await
        .is_ok_and(|()| self.stderr.as_ref().is_none_or(|s| s.drained().eof))
    }

    /// The last line the process wrote on its stderr, for a fault's detail; `None` for
    /// a link, or when it wrote none. Once the process has exited, its stderr is read
    /// complete: the drain's end of file is waited for unless something the bot started
    /// still holds the pipe (then, as while the process runs, what the file holds now).
    pub async fn stderr_tail(&mut self) -> Option<Tail> {
        let exited = self.has_exited();
        let inode = self.stderr_inode;
        let drain = self.stderr.as_mut()?;
        if exited && !drain.wait_eof(PIPE_CLOSE_WAIT).await {
            let held = inode.is_some_and(|i| !pipe_holders(&[i]).is_empty());
            if !held {
                // Nothing holds it: its end of file is on its way (a busy machine).
                drain.wait_eof(STDERR_EOF_WAIT).await;
            }
        }
        drain.tail().await
    }

    fn signal(&self, signal: Signal) {
        // ESRCH (no such group) just means everything is already gone.
        if let Some(pgid) = self.pgid {
            let _ = killpg(Pid::from_raw(pgid), signal);
        }
    }
}

/// Between SIGTERM and SIGKILL.
pub const TERM_GRACE: Duration = Duration::from_millis(300);
/// How long a message other than `turn` may take to be written: a bot that leaves this
/// much of its input unread has stopped reading it.
pub const WRITE_GRACE: Duration = Duration::from_secs(2);
/// After a sandboxed bot is stopped, how long its pids cgroup may take to empty (its
/// pid namespace's last processes die a moment after bubblewrap) before it is left to
/// be removed in the background.
const CGROUP_EMPTY_WAIT: Duration = Duration::from_secs(1);
/// After the process exits and nothing holds its stderr pipe any more, how long the
/// drain may take to read the pipe's end of file.
const STDERR_EOF_WAIT: Duration = Duration::from_secs(5);
/// After the process exits, how long lines it wrote just before may take to arrive.
const EXIT_FLUSH_WAIT: Duration = Duration::from_millis(100);

fn closed_now() -> Output {
    Output::Closed {
        partial: None,
        at: Instant::now(),
    }
}

/// Processes other than this one that hold any of the pipes with these inodes open,
/// found by reading `/proc/*/fd`.
fn pipe_holders(inodes: &[u64]) -> Vec<i32> {
    let me = std::process::id() as i32;
    let targets: Vec<String> = inodes.iter().map(|i| format!("pipe:[{i}]")).collect();
    let mut holders = Vec::new();
    let Ok(proc_dir) = std::fs::read_dir("/proc") else {
        return holders;
    };
    for entry in proc_dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else {
            continue;
        };
        let holds = fds.flatten().any(|fd| {
            std::fs::read_link(fd.path())
                .is_ok_and(|link| targets.iter().any(|t| link.as_os_str() == t.as_str()))
        });
        if holds {
            holders.push(pid);
        }
    }
    holders
}

impl Drop for BotProcess {
    fn drop(&mut self) {
        // The safety net for every path that does not reach `shutdown` (an error, a
        // cancelled set, Ctrl-C): no bot outlives the referee's interest in it.
        if !self.finished {
            self.signal(Signal::SIGKILL);
            if self.link.is_none() {
                lifetime::kill_marked(&self.marks);
            }
        }
        // The stderr drain, if any, is aborted as it drops.
        self.reader.abort();
    }
}

/// The bot's own status from bubblewrap's: bubblewrap exits with 128 + N when the
/// process it ran was killed by signal N, and that is shown as the signal, as a shell
/// would (a bot that exits with such a status itself is shown the same way).
pub(crate) fn unwrap_bwrap_status(status: ExitStatus) -> ExitStatus {
    match status.code() {
        Some(code @ 129..=192) => ExitStatus::from_raw(code - 128),
        _ => status,
    }
}

/// What to try when a bot command cannot be started: said the same way by every
/// command that starts bots.
pub fn spawn_hint(e: &io::Error) -> &'static str {
    match e.kind() {
        io::ErrorKind::NotFound => {
            " (is the program installed and on PATH? A script needs its interpreter: \"python3 my_bot.py\")"
        }
        io::ErrorKind::PermissionDenied => {
            " (is the file executable? Try chmod +x, or run it through its interpreter)"
        }
        _ => "",
    }
}

/// A process's exit status in words: `exit status 3`, `killed by signal 9 (SIGKILL)`.
pub fn describe_status(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        format!("exit status {code}")
    } else if let Some(sig) = status.signal() {
        match Signal::try_from(sig) {
            Ok(s) => format!("killed by signal {sig} ({})", s.as_str()),
            Err(_) => format!("killed by signal {sig}"),
        }
    } else {
        "unknown exit".to_string()
    }
}

async fn read_stdout<R: tokio::io::AsyncRead + Unpin>(
    mut reader: LineReader<R>,
    tx: mpsc::Sender<Output>,
) {
    loop {
        let (out, last) = match reader.next_line().await {
            Ok(Some(line)) => (
                Output::Line {
                    bytes: line.into_bytes(),
                    at: Instant::now(),
                },
                false,
            ),
            Ok(None) => (
                Output::Closed {
                    partial: None,
                    at: Instant::now(),
                },
                true,
            ),
            Err(LineError::TooLong { limit }) => (
                Output::TooLong {
                    limit,
                    at: Instant::now(),
                },
                true,
            ),
            Err(LineError::EofMidLine { partial, .. }) => (
                Output::Closed {
                    partial: Some(partial),
                    at: Instant::now(),
                },
                true,
            ),
            Err(LineError::Io(e)) => (
                Output::ReadError {
                    message: e.to_string(),
                    at: Instant::now(),
                },
                true,
            ),
        };
        if tx.send(out).await.is_err() || last {
            break;
        }
    }
    // Dropping the reader closes our end of the pipe: a bot still writing gets EPIPE.
    // Keep nothing: after an oversized line the stream is not trusted any more.
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
    }

    /// A bot that never reads its stdin fills the pipe: the write gives up at its
    /// deadline instead of blocking the referee for ever.
    #[test]
    fn a_write_to_a_bot_that_does_not_read_gives_up_at_the_deadline() {
        runtime().block_on(async {
            let dir = tempfile::tempdir().expect("temp dir");
            let spec = BotSpec::parse("sleep 30").expect("spec");
            let mut bot = BotProcess::spawn(
                &spec,
                &dir.path().join("err").into(),
                &StderrBudget::default(),
                &Limits::default(),
            )
            .await
            .expect("spawns");
            let line = format!("{}\n", "x".repeat(1 << 20));
            let asked = Instant::now();
            let result = bot.send(&line, asked + Duration::from_millis(200)).await;
            let waited = asked.elapsed();
            assert_eq!(result.map_err(|e| e.kind()), Err(io::ErrorKind::TimedOut));
            assert!(waited >= Duration::from_millis(200), "{waited:?}");
            // Not held much past it (what is tested is that it gives up at all).
            assert!(waited < Duration::from_secs(10), "{waited:?}");
            let ending = bot.shutdown(Duration::ZERO).await;
            assert_eq!(ending.stopped_by, StoppedBy::Sigterm);
            assert_eq!(
                ending.status.as_deref(),
                Some("killed by signal 15 (SIGTERM)")
            );
        });
    }

    #[test]
    fn exit_statuses_are_described_in_words() {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            describe_status(ExitStatus::from_raw(3 << 8)),
            "exit status 3"
        );
        assert_eq!(
            describe_status(ExitStatus::from_raw(9)),
            "killed by signal 9 (SIGKILL)"
        );
    }
}

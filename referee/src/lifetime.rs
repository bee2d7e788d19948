//! How long a bot's processes live: no longer than the referee, and no longer than the
//! bot itself.
//!
//! - Every bot is forked by one thread that lives as long as the referee
//!   ([`spawn`]): the bot's parent-death signal (SIGKILL, set between fork and exec in
//!   `limits.rs`) fires when the *thread* that forked it ends, so a bot forked by a
//!   runtime's worker thread, which may end while the bot plays, would be killed with
//!   it; forked by this thread, it is killed exactly when the referee dies, however
//!   it dies (SIGKILL included).
//! - The referee is a child subreaper: a process a bot started whose parent exits is
//!   re-parented to the referee, not to init, and the referee reaps it.
//! - The guardian ([`start_guardian`]) ends what unsandboxed bots started when the
//!   referee dies without ending it (the parent-death signal binds the bot alone).
//! - After a bot has exited, [`end_strays`] finds every process it left behind,
//!   whatever group or session it moved to, ends it and reaps it. A process is the
//!   bot's when it is in the bot's process group, carries the bot's tag in its
//!   environment ([`TAG_VAR`], unsandboxed bots only), or is in a sandboxed bot's pids
//!   cgroup. Orphans of different bots all come to the one referee; these say whose
//!   they are, so a league that runs many sets at once ends only the finished bot's.
//!   An unsandboxed bot's process that left the group *and* cleared its environment
//!   is not found this way (no cgroup is made for an unsandboxed bot: joining one
//!   waits for the kernel, on cgroup v1 milliseconds, on the one spawner thread); if
//!   it holds the bot's pipes it is still found (bot.rs).

use std::collections::{HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Mutex, OnceLock};
use std::time::Duration;

use nix::sys::signal::{kill, killpg, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use tokio::process::{Child, Command};
use tokio::sync::oneshot;
use tokio::time::Instant;

/// The environment variable that tags an unsandboxed bot's processes as its own.
pub const TAG_VAR: &str = "HUS_BOT_TAG";
/// How long what a bot left behind may take to exit by itself after the bot exited
/// (a helper that reads the bot's pipe ends at its end of file) before it counts as
/// left behind.
pub(crate) const STRAY_GRACE: Duration = Duration::from_millis(200);
/// How long ending what was left behind may take (killed processes must die and be
/// reaped; a process in uninterruptible sleep dies when it wakes).
const STRAY_END_WAIT: Duration = Duration::from_secs(2);
/// A zombie of the referee's that no one claims (an orphan that exited by itself and
/// could not be told apart) is reaped once it has been one for this long: no `wait`
/// of the referee's own (std's, tokio's) leaves a child a zombie that long.
const ZOMBIE_AGE: Duration = Duration::from_secs(1);
/// Most characters of a left-behind process's command kept for the report.
const COMMAND_CHARS: usize = 120;
/// How long an empty environment is read again (a process in `execve`; see `has_tag`).
const EXEC_WAIT: Duration = Duration::from_millis(100);

/// One spawn asked of the spawner thread.
struct Request {
    command: Command,
    runtime: tokio::runtime::Handle,
    reply: oneshot::Sender<io::Result<Leader>>,
}

/// The process ids of the bots alive now (spawned, and their [`Leader`] not yet
/// dropped): never reaped by anything here. A pid enters with its `Leader` and leaves
/// when the `Leader` is dropped, however that happens (reaped, or cancelled with its
/// runtime), so the table holds what runs, never what ran.
static LEADERS: Mutex<Option<HashSet<i32>>> = Mutex::new(None);

fn leaders<T>(f: impl FnOnce(&mut HashSet<i32>) -> T) -> T {
    let mut guard = LEADERS.lock().unwrap_or_else(|e| e.into_inner());
    f(guard.get_or_insert_with(HashSet::new))
}

/// The sender to the spawner thread, started (and the referee made a subreaper) on
/// first use. `None` if the thread could not be started.
fn spawner() -> Option<&'static mpsc::Sender<Request>> {
    static SPAWNER: OnceLock<Option<mpsc::Sender<Request>>> = OnceLock::new();
    SPAWNER
        .get_or_init(|| {
            // SAFETY: prctl with integer arguments on this process.
            unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
            start_guardian();
            let (tx, rx) = mpsc::channel::<Request>();
            std::thread::Builder::new()
                .name("hus-spawner".to_string())
                .spawn(move || {
                    for request in rx {
                        serve(request);
                    }
                })
                .ok()
                .map(|_| tx)
        })
        .as_ref()
}

/// Forks the guardian: a process that outlives the referee to end what an unsandboxed
/// bot started when the referee dies without ending it (SIGKILL, say). The bot itself
/// dies with the referee (its parent-death signal), but not its children: an orphan of
/// a dead subreaper goes to init. The guardian waits on a pipe whose other end only
/// the referee holds (close-on-exec: no bot inherits it), so it reads end of file
/// exactly when the referee is gone, however it went; then it kills every process
/// that carries one of this referee's tags ([`TAG_VAR`]`=PID-...`: tags are inherited
/// through the environment) and exits. While the referee lives it only waits. It is
/// a session of its own that ignores the terminal's signals, so a Ctrl-C that stops
/// the referee does not stop it first. Without it (the fork failed) nothing else
/// changes.
fn start_guardian() {
    let referee = std::process::id();
    // Everything the child needs is made before the fork: it may only make system
    // calls (the referee has other threads, whose locks the child would inherit held).
    let needle = format!("\0{TAG_VAR}={referee}-").into_bytes();
    let command_line = own_command_line();
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 fills the two descriptors it is given.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return;
    }
    let [read_end, write_end] = fds;
    // SAFETY: the child runs only `guard`, which makes async-signal-safe system calls
    // on memory allocated before the fork, and ends with `_exit`.
    match unsafe { libc::fork() } {
        0 => unsafe { guard(read_end, &needle, command_line) },
        -1 => unsafe {
            libc::close(read_end);
            libc::close(write_end);
        },
        _ => {
            // The write end stays open as long as the referee: its close is the signal.
            // SAFETY: closing the descriptor this function opened.
            unsafe { libc::close(read_end) };
        }
    }
}

/// Where this process's command line is in its memory (`/proc/self/stat`'s
/// `arg_start` and `arg_end`), if it can be read.
fn own_command_line() -> Option<(usize, usize)> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the name (in parentheses, which may hold anything) start with
    // the third, `state`; `arg_start` and `arg_end` are the 48th and 49th.
    let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
    let start: usize = fields.get(48 - 3)?.parse().ok()?;
    let end: usize = fields.get(49 - 3)?.parse().ok()?;
    (start > 0 && end > start).then_some((start, end))
}

/// The guardian's life (see [`start_guardian`]), in the forked child: system calls
/// only, on the stack and on `needle`, never returning.
///
/// # Safety
/// To be called only in a freshly forked child, with `read_end` the pipe's read end.
unsafe fn guard(read_end: libc::c_int, needle: &[u8], command_line: Option<(usize, usize)>) -> ! {
    libc::setsid();
    // Its name in `ps` and /proc/PID/comm; and its command line, the referee's copied,
    // overwritten with it (a search for the bot's command must not find the guardian).
    libc::prctl(libc::PR_SET_NAME, c"hus-guardian".as_ptr(), 0, 0, 0);
    if let Some((start, end)) = command_line {
        let name = b"hus-guardian";
        let area = std::slice::from_raw_parts_mut(start as *mut u8, end - start);
        area.fill(0);
        let n = name.len().min(area.len().saturating_sub(1));
        area[..n].copy_from_slice(&name[..n]);
    }
    for signal in [
        libc::SIGINT,
        libc::SIGTERM,
        libc::SIGHUP,
        libc::SIGQUIT,
        libc::SIGPIPE,
    ] {
        libc::signal(signal, libc::SIG_IGN);
    }
    // Nothing of the referee's (listening sockets, the store, logs) stays open here.
    if read_end > 0 {
        libc::syscall(
            libc::SYS_close_range,
            0 as libc::c_uint,
            (read_end - 1) as libc::c_uint,
            0,
        );
    }
    libc::syscall(
        libc::SYS_close_range,
        (read_end + 1) as libc::c_uint,
        libc::c_uint::MAX,
        0,
    );
    let mut byte = [0u8; 1];
    loop {
        let n = libc::read(read_end, byte.as_mut_ptr().cast(), 1);
        if n == 0 || (n < 0 && *libc::__errno_location() != libc::EINTR) {
            break;
        }
    }
    // A process may start another while the first scan runs: scan until one finds
    // nothing, a few times at most.
    for _ in 0..4 {
        if kill_tagged(needle) == 0 {
            break;
        }
    }
    libc::_exit(0)
}

/// Kills every process whose environment holds `needle` (`\0NAME=VALUE`: a variable
/// that is not the first; the first is matched without its `\0`); how many. System
/// calls only, on the stack.
///
/// # Safety
/// Async-signal-safe; for the guardian's forked child.
unsafe fn kill_tagged(needle: &[u8]) -> usize {
    let me = libc::getpid();
    let proc_dir = libc::open(
        c"/proc".as_ptr(),
        libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
    );
    if proc_dir < 0 {
        return 0;
    }
    let mut killed = 0;
    let mut entries = [0u8; 4096];
    loop {
        let n = libc::syscall(
            libc::SYS_getdents64,
            proc_dir,
            entries.as_mut_ptr(),
            entries.len(),
        );
        if n <= 0 {
            break;
        }
        let mut at = 0usize;
        while at + 19 < n as usize {
            // struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name.
            let reclen = u16::from_ne_bytes([entries[at + 16], entries[at + 17]]) as usize;
            if reclen == 0 {
                break;
            }
            let name = &entries[at + 19..(at + reclen).min(n as usize)];
            let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
            at += reclen;
            let mut pid: libc::pid_t = 0;
            if name.is_empty() || !name.iter().all(u8::is_ascii_digit) || name.len() > 9 {
                continue;
            }
            for &digit in name {
                pid = pid * 10 + libc::pid_t::from(digit - b'0');
            }
            if pid == me {
                continue;
            }
            if environ_holds(name, needle) {
                libc::kill(pid, libc::SIGKILL);
                killed += 1;
            }
        }
    }
    libc::close(proc_dir);
    killed
}

/// Whether `/proc/PID/environ` (`pid` its digits) holds `needle` (see [`kill_tagged`]).
///
/// # Safety
/// Async-signal-safe; for the guardian's forked child.
unsafe fn environ_holds(pid: &[u8], needle: &[u8]) -> bool {
    let mut path = [0u8; 32];
    let parts: [&[u8]; 3] = [b"/proc/", pid, b"/environ\0"];
    let mut len = 0;
    for part in parts {
        path[len..len + part.len()].copy_from_slice(part);
        len += part.len();
    }
    let fd = libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
    if fd < 0 {
        return false;
    }
    // Read in chunks, keeping the last `needle.len()` bytes before each new chunk, so
    // a match across two reads is seen; the zeros before the first chunk stand for
    // its start (the needle's leading `\0`).
    let keep = needle.len();
    let mut buffer = [0u8; 8192];
    let mut filled = keep;
    let mut found = false;
    loop {
        let n = libc::read(
            fd,
            buffer[filled..].as_mut_ptr().cast(),
            buffer.len() - filled,
        );
        if n <= 0 {
            break;
        }
        filled += n as usize;
        if buffer[..filled].windows(keep).any(|w| w == needle) {
            found = true;
            break;
        }
        buffer.copy_within(filled - keep..filled, 0);
        filled = keep;
    }
    libc::close(fd);
    found
}

fn serve(request: Request) {
    let Request {
        mut command,
        runtime,
        reply,
    } = request;
    // The child's pipes and its exit are registered with the caller's runtime.
    let _entered = runtime.enter();
    let spawned = command.spawn().and_then(Leader::new);
    if let Err(Ok(leader)) = reply.send(spawned) {
        // The caller gave up waiting (its set was cancelled): nothing may outlive it.
        // The leader leaves the table as it drops here.
        let _ = killpg(Pid::from_raw(leader.pid), Signal::SIGKILL);
    }
}

/// A bot's process, held by whoever waits for its exit (its reaper): its pid is in
/// the table of leaders exactly as long as this lives. Dropping it unreaped (its
/// runtime dropped with the set, the reaper task cancelled) takes the pid out of the
/// table all the same: the process is then killed by its `BotProcess`'s drop and
/// reaped by tokio's orphan queue or, once a zombie for [`ZOMBIE_AGE`], by
/// [`reap_old_zombies`]; a stale pid left in the table would grow it with every such
/// set and keep a recycled pid's zombie from being reaped.
pub(crate) struct Leader {
    pid: i32,
    child: Child,
}

impl Leader {
    /// Enters `child` into the table of leaders.
    fn new(child: Child) -> io::Result<Leader> {
        let pid = child
            .id()
            .map(|id| id as i32)
            .ok_or_else(|| io::Error::other("the bot exited before its pid could be read"))?;
        leaders(|l| l.insert(pid));
        Ok(Leader { pid, child })
    }

    /// Its process id, also its process group's.
    pub(crate) fn pid(&self) -> i32 {
        self.pid
    }

    /// The process, for its pipes.
    pub(crate) fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Waits for the process to exit and reaps it; it leaves the table as this returns.
    pub(crate) async fn wait(mut self) -> Option<std::process::ExitStatus> {
        self.child.wait().await.ok()
    }
}

impl Drop for Leader {
    fn drop(&mut self) {
        // Before `child` drops: a `Child` dropped unreaped goes to tokio's orphan
        // queue, which may reap it and free its pid for a new bot at once.
        leaders(|l| l.remove(&self.pid));
    }
}

/// Spawns `command` (a bot: in a process group or session of its own) from the
/// spawner thread, within the calling task's runtime.
pub(crate) async fn spawn(command: Command) -> io::Result<Leader> {
    let sender = spawner().ok_or_else(|| io::Error::other("cannot start the spawner thread"))?;
    let (reply, answer) = oneshot::channel();
    let request = Request {
        command,
        runtime: tokio::runtime::Handle::current(),
        reply,
    };
    sender
        .send(request)
        .map_err(|_| io::Error::other("the spawner thread is gone"))?;
    answer
        .await
        .map_err(|_| io::Error::other("the spawner thread is gone"))?
}

/// A new tag for a bot's processes, unique on this machine while this referee runs.
pub(crate) fn new_tag() -> String {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    )
}

/// What tells a bot's processes from the others'.
#[derive(Clone, Debug, Default)]
pub(crate) struct Marks {
    /// The bot's process id, also its process group's.
    pub(crate) pgid: i32,
    /// The value of [`TAG_VAR`] in its environment, if it was given one.
    pub(crate) tag: Option<String>,
    /// Its pids cgroup's `cgroup.procs`, if it has one.
    pub(crate) cgroup_procs: Option<PathBuf>,
    /// When the bot started (`/proc/PID/stat`'s start time, in clock ticks since boot):
    /// a process that started before cannot be its, whatever its group (a recycled
    /// pid) or environment; and only the younger ones' environments are read.
    pub(crate) since: Option<u64>,
}

/// The start time of `pid`, for [`Marks::since`], read right after the spawn (the
/// process cannot have been reaped yet: its reaper has not run).
pub(crate) fn start_time(pid: i32) -> Option<u64> {
    stat(pid).map(|st| st.start)
}

/// A process the bot left running after it exited: ended by the referee.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Stray {
    pub(crate) pid: i32,
    /// Its command line (cut), or its name when that cannot be read.
    pub(crate) command: String,
    /// Whether it had left the bot's process group (`setsid`, `setpgid`).
    pub(crate) left_group: bool,
}

/// What `/proc/PID/stat` says of a process.
#[derive(Clone, Copy, Debug)]
struct Stat {
    state: u8,
    ppid: i32,
    pgrp: i32,
    start: u64,
    flags: u64,
}

impl Stat {
    /// A kernel thread (`PF_KTHREAD`): no bot's, and without an environment.
    fn kernel_thread(&self) -> bool {
        const PF_KTHREAD: u64 = 0x0020_0000;
        self.flags & PF_KTHREAD != 0
    }
}

fn stat(pid: i32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The name is in parentheses and may hold anything: the fields follow the last ')'.
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some(Stat {
        state: *fields.first()?.as_bytes().first()?,
        ppid: fields.get(1)?.parse().ok()?,
        pgrp: fields.get(2)?.parse().ok()?,
        start: fields.get(19)?.parse().ok()?,
        flags: fields.get(6)?.parse().ok()?,
    })
}

fn all_pids() -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse().ok()))
        .collect()
}

/// Whether `pid`'s environment holds `tag`.
///
/// A process caught in `execve` reads as an empty environment (the kernel hands out the
/// old memory, already released): a bot's child that `exec`s as the bot ends would then
/// be missed by a scan and outlive it. A user process's environment is never empty
/// here (the tag itself is in it), so an empty one is read again, for as long as
/// [`EXEC_WAIT`], while the process still lives; a kernel thread has none and is
/// never looked at.
fn has_tag(pid: i32, tag: &str) -> bool {
    let wanted = format!("{TAG_VAR}={tag}");
    let give_up = std::time::Instant::now() + EXEC_WAIT;
    loop {
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
            return false;
        };
        if !environ.is_empty() {
            return environ
                .split(|&b| b == 0)
                .any(|var| var == wanted.as_bytes());
        }
        let running = stat(pid).is_some_and(|st| st.state != b'Z' && !st.kernel_thread());
        if !running || std::time::Instant::now() >= give_up {
            return false;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// The members of a cgroup, when its `cgroup.procs` can be read.
fn cgroup_members(procs: Option<&Path>) -> Option<HashSet<i32>> {
    procs
        .and_then(|p| std::fs::read_to_string(p).ok())
        .map(|text| text.lines().filter_map(|l| l.trim().parse().ok()).collect())
}

/// `sleep 7`: a process's command line, or its name, cut, without control characters.
pub(crate) fn command_of(pid: i32) -> String {
    let line = std::fs::read(format!("/proc/{pid}/cmdline"))
        .ok()
        .map(|bytes| {
            bytes
                .split(|&b| b == 0)
                .filter(|a| !a.is_empty())
                .map(String::from_utf8_lossy)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|l| !l.is_empty())
        .or_else(|| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .ok()
                .map(|c| c.trim().to_string())
        })
        .unwrap_or_default();
    let mut cut: String = line
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(COMMAND_CHARS)
        .collect();
    if line.chars().count() > COMMAND_CHARS {
        cut.push_str("...");
    }
    cut
}

/// The living processes (not zombies) that are the bot's by `marks`, and whether each
/// is still in its group; also every zombie child of the referee's in the bot's group.
///
/// With a cgroup, only its members are looked at: everything the bot started is in it,
/// whatever group or session it moved to (a process cannot leave a cgroup whose files
/// are root's without being root), so the machine's other processes need not be read;
/// the group's zombies, which a cgroup no longer lists, are reaped as strays that were
/// seen alive or by [`reap_old_zombies`]. Without one, every process of the machine.
fn scan(marks: &Marks, me: i32) -> (Vec<(i32, Stat)>, Vec<i32>) {
    let in_cgroup = cgroup_members(marks.cgroup_procs.as_deref());
    let candidates = match &in_cgroup {
        Some(members) => members.iter().copied().collect(),
        None => all_pids(),
    };
    let in_cgroup = in_cgroup.unwrap_or_default();
    let mut alive = Vec::new();
    let mut zombies = Vec::new();
    for pid in candidates {
        if pid == me {
            continue;
        }
        let Some(st) = stat(pid).filter(|st| !st.kernel_thread()) else {
            continue;
        };
        if marks.since.is_some_and(|since| st.start < since) {
            continue;
        }
        if pid == marks.pgid && leaders(|l| l.contains(&pid)) {
            // The bot itself, not yet reaped by its own reaper: killed with its group,
            // never reaped here.
            continue;
        }
        if st.state == b'Z' {
            if st.ppid == me && st.pgrp == marks.pgid {
                zombies.push(pid);
            }
            continue;
        }
        let ours = st.pgrp == marks.pgid
            || in_cgroup.contains(&pid)
            || marks.tag.as_deref().is_some_and(|tag| has_tag(pid, tag));
        if ours {
            alive.push((pid, st));
        }
    }
    (alive, zombies)
}

/// Reaps `pid` if it is a zombie child of the referee's; true when it is gone.
fn reap(pid: i32) -> bool {
    match waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG)) {
        Ok(WaitStatus::StillAlive) => false,
        // Reaped now, or not the referee's child (someone else reaps it).
        _ => true,
    }
}

/// After the bot (process group `marks.pgid`) has exited and been reaped: waits up to
/// [`STRAY_GRACE`] for what it left to exit by itself, then kills and reaps whatever is
/// still there, and returns it. Nothing of another bot is touched (see the module's
/// documentation for what is the bot's).
pub(crate) async fn end_strays(marks: &Marks) -> Vec<Stray> {
    let me = std::process::id() as i32;
    let grace = Instant::now() + STRAY_GRACE;
    let mut seen: HashSet<i32> = HashSet::new();
    let (mut alive, mut zombies) = scan(marks, me);
    while !alive.is_empty() && Instant::now() < grace {
        seen.extend(alive.iter().map(|(pid, _)| *pid));
        zombies.retain(|&pid| !reap(pid));
        tokio::time::sleep(Duration::from_millis(10)).await;
        (alive, zombies) = scan(marks, me);
    }
    let mut strays = Vec::new();
    let mut reported: HashSet<i32> = HashSet::new();
    let deadline = Instant::now() + STRAY_END_WAIT;
    loop {
        for &(pid, st) in &alive {
            seen.insert(pid);
            if pid != marks.pgid && reported.insert(pid) {
                strays.push(Stray {
                    pid,
                    command: command_of(pid),
                    left_group: st.pgrp != marks.pgid,
                });
            }
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
        let _ = killpg(Pid::from_raw(marks.pgid), Signal::SIGKILL);
        // The referee's own children among them (adopted orphans) are its to reap.
        zombies.retain(|&pid| !reap(pid));
        seen.retain(|&pid| stat(pid).is_some_and(|st| st.ppid == me) && !reap(pid));
        if (alive.is_empty() && zombies.is_empty() && seen.is_empty()) || Instant::now() >= deadline
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
        (alive, zombies) = scan(marks, me);
    }
    reap_old_zombies(me);
    strays
}

/// Kills at once whatever is the bot's by `marks` (no wait, no report): for a bot
/// dropped without its shutdown (a set cut off). Its zombies are reaped later.
pub(crate) fn kill_marked(marks: &Marks) {
    let me = std::process::id() as i32;
    for (pid, _) in scan(marks, me).0 {
        let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
    }
}

/// Reaps the referee's zombie children that no bot claimed (an orphan that exited
/// before its bot's end, having left its group) once they have been zombies for
/// [`ZOMBIE_AGE`]; never a live bot, whose own reaper waits for it.
///
/// It reads every process of the machine, so it runs at most twice per [`ZOMBIE_AGE`]
/// however many bots end: a league of instant bots ends dozens a second.
fn reap_old_zombies(me: i32) {
    static FIRST_SEEN: Mutex<Option<HashMap<(i32, u64), std::time::Instant>>> = Mutex::new(None);
    static LAST_RUN: Mutex<Option<std::time::Instant>> = Mutex::new(None);
    let now = std::time::Instant::now();
    {
        let mut last = LAST_RUN.lock().unwrap_or_else(|e| e.into_inner());
        if last.is_some_and(|at| now.duration_since(at) < ZOMBIE_AGE / 2) {
            return;
        }
        *last = Some(now);
    }
    let live = leaders(|l| l.clone());
    let mut zombies = HashMap::new();
    for pid in all_pids() {
        if live.contains(&pid) {
            continue;
        }
        if let Some(st) = stat(pid).filter(|st| st.state == b'Z' && st.ppid == me) {
            zombies.insert((pid, st.start), ());
        }
    }
    let mut guard = FIRST_SEEN.lock().unwrap_or_else(|e| e.into_inner());
    let first_seen = guard.get_or_insert_with(HashMap::new);
    first_seen.retain(|key, _| zombies.contains_key(key));
    for key in zombies.into_keys() {
        let since = *first_seen.entry(key).or_insert(now);
        if now.duration_since(since) >= ZOMBIE_AGE && reap(key.0) {
            first_seen.remove(&key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
    }

    fn alive(pid: i32) -> bool {
        stat(pid).is_some_and(|st| st.state != b'Z')
    }

    /// Of two bots' left-behind processes, each in a session of its own and tagged,
    /// ending one bot's ends only its own; the other's is ended with its own bot.
    #[test]
    fn only_the_finished_bots_processes_are_ended() {
        runtime().block_on(async {
            let start = |tag: &str| {
                let mut command = Command::new("sh");
                command
                    .args(["-c", "setsid sleep 30 >/dev/null 2>&1 </dev/null & echo $!"])
                    .env(TAG_VAR, tag)
                    .process_group(0)
                    .stdout(std::process::Stdio::piped());
                command
            };
            let mut pids = Vec::new();
            let mut marks = Vec::new();
            for _ in 0..2 {
                let tag = new_tag();
                let mut leader = spawn(start(&tag)).await.expect("spawns");
                let pgid = leader.pid();
                let since = start_time(pgid);
                assert!(since.is_some());
                let mut stdout = leader.child().stdout.take().expect("stdout");
                let mut output = Vec::new();
                tokio::io::AsyncReadExt::read_to_end(&mut stdout, &mut output)
                    .await
                    .expect("reads");
                assert!(leader.wait().await.is_some_and(|s| s.success()));
                let sleeper: i32 = String::from_utf8_lossy(&output)
                    .trim()
                    .parse()
                    .expect("the sleeper's pid");
                pids.push(sleeper);
                marks.push(Marks {
                    pgid,
                    tag: Some(tag),
                    cgroup_procs: None,
                    since,
                });
            }
            // Both sleepers were re-parented to this process, the subreaper.
            for &pid in &pids {
                assert_eq!(stat(pid).map(|s| s.ppid), Some(std::process::id() as i32));
            }
            let strays = end_strays(&marks[0]).await;
            assert_eq!(
                strays,
                [Stray {
                    pid: pids[0],
                    command: "sleep 30".to_string(),
                    left_group: true,
                }]
            );
            // Gone, reaped (not even a zombie), and the other bot's still runs.
            assert!(stat(pids[0]).is_none(), "{:?}", stat(pids[0]));
            assert!(alive(pids[1]));
            let strays = end_strays(&marks[1]).await;
            assert_eq!(strays.len(), 1);
            assert!(stat(pids[1]).is_none());
        });
    }

    /// Issue 34, defect 6: a set stopped by dropping its runtime cancels its bot's
    /// reaper before it reaps. After 1,000 such sets the table of leaders holds none of
    /// their bots (it held every one), and a bot that runs is in it.
    #[test]
    fn the_leaders_table_holds_what_runs_not_what_ran_after_1000_dropped_runtimes() {
        let sleeper = || {
            let mut command = Command::new("sleep");
            command.arg("30").process_group(0);
            command
        };
        let mut ran = Vec::new();
        for _ in 0..1000 {
            let set = runtime();
            let pid = set.block_on(async {
                let leader = spawn(sleeper()).await.expect("spawns");
                let pid = leader.pid();
                // The bot's reaper, as `BotProcess::spawn` starts it.
                tokio::spawn(leader.wait());
                tokio::task::yield_now().await;
                assert!(leaders(|l| l.contains(&pid)));
                // What the set's `BotProcess` does as it drops.
                let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
                pid
            });
            // The reaper never runs again: its task is dropped with the runtime.
            drop(set);
            ran.push(pid);
        }
        let stale = leaders(|l| ran.iter().filter(|pid| l.contains(pid)).count());
        assert_eq!(stale, 0);
        let running = runtime().block_on(async {
            let leader = spawn(sleeper()).await.expect("spawns");
            let pid = leader.pid();
            let held = leaders(|l| l.contains(&pid));
            let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
            let status = leader.wait().await;
            (
                held,
                status.and_then(|s| s.signal()),
                leaders(|l| l.contains(&pid)),
            )
        });
        assert_eq!(running, (true, Some(9), false));
    }
}

//! Sandboxed bots: each bot process runs under bubblewrap (`bwrap`), in namespaces of its
//! own, seeing only what it needs.
//!
//! Why bubblewrap rather than our own system calls or crates: it is the small, audited
//! tool that Flatpak and others build on, packaged by every distribution, and it sets up
//! user, mount, pid, network, IPC and UTS namespaces, a fresh `/proc`, a minimal `/dev`,
//! `PR_SET_NO_NEW_PRIVS` and dropped capabilities in the right order. Landlock would add
//! nothing to its mount namespace (the bot cannot name a file that is not mounted) nor
//! to its network namespace (there is no interface but an unconnected loopback). A
//! seccomp filter does add something: namespaces leave the whole kernel reachable, and a
//! few system calls that no bot needs are where kernel exploits most often start
//! ([`DENIED_SYSCALLS`]); the filter, compiled by the `seccompiler` crate (Firecracker's),
//! is handed to bubblewrap (`--seccomp FD`), which loads it last, just before the bot runs.
//!
//! A sandboxed bot is never root, inside or outside its namespaces. When `hus` runs as
//! root, the bot's process (bubblewrap, and everything it starts) becomes an unprivileged
//! user between fork and exec ([`SandboxUser`]: `nobody` unless told otherwise): a
//! process that is uid 0 outside its user namespace still passes the kernel's checks
//! that compare with the host's root, such as those of `/proc/sys`, even without a single
//! capability. bubblewrap then runs unprivileged, in a user namespace of its own. Every
//! kernel tunable is read-only inside besides ([`PROC_READ_ONLY`]), and `/sys` is not
//! there at all.
//!
//! The one thing bubblewrap cannot do is bound the number of processes: RLIMIT_NPROC
//! counts all the processes of the bot's user on the machine (every other sandbox's too,
//! when they share `nobody`), and binds no process of the kernel's root user. So the
//! bound is a pids cgroup of its own per bot process when one can be made (as root; the
//! child joins it before it gives up root), and otherwise (an ordinary user)
//! RLIMIT_NPROC set inside the sandbox by util-linux's `prlimit`, where it counts only
//! the sandbox's processes.
//!
//! The layout a bot sees (README.md, "Running untrusted bots"): `/usr`, the `/bin`,
//! `/sbin` and `/lib*` links or directories, a few files of `/etc` (see [`ETC_FILES`]),
//! all read-only; a fresh `/proc` of its own pid namespace, its tunables read-only and
//! its kernel-wide reports masked, a minimal `/dev`, an empty private `/tmp`; the
//! read-only paths it was given; its own directory (read-only unless writable), where it
//! runs; nothing else.

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use crate::config::{program_path, BotSpec};

mod cgroup;
mod seccomp;

pub(crate) use cgroup::BotCgroup;
pub use cgroup::MemoryEvents;
#[cfg(test)]
use cgroup::*;
pub(crate) use seccomp::seccomp_filter;
#[cfg(test)]
use seccomp::*;

/// Processes and threads a sandbox may hold unless told otherwise. A JVM starts about 20
/// threads on two cores and more on bigger machines; bubblewrap itself takes 2 or 3.
pub const DEFAULT_MAX_PROCESSES: u32 = 128;
/// The size of each of the sandbox's memory file systems (`/tmp`, `/dev/shm`) unless
/// told otherwise: what a bot writes there is held in the machine's memory.
pub const DEFAULT_TMP_SIZE: u64 = 64 << 20;
/// The memory a sandbox may hold unless told otherwise (`--sandbox-memory`): everything
/// its processes make the kernel keep for them, their pages, the files of its `/tmp` and
/// `/dev/shm`, `memfd` files, pipe buffers. Bounded by a memory cgroup as root.
pub const DEFAULT_SANDBOX_MEMORY: u64 = 1 << 30;
/// Smaller file systems than this are refused.
const MIN_TMP_SIZE: u64 = 1 << 20;
/// A smaller memory budget than this leaves no room for bubblewrap and an interpreter.
const MIN_SANDBOX_MEMORY: u64 = 16 << 20;
/// Fewer than this leaves no room for bubblewrap and an interpreter.
const MIN_PROCESSES: u32 = 8;
/// The bot's user and group inside its sandbox (`nobody`), whoever it is outside.
const SANDBOX_ID: &str = "65534";
/// The user sandboxed bots run as when `hus` runs as root, unless told otherwise
/// (`--sandbox-user`): looked up by name, with its groups (`nogroup` on Debian).
pub const DEFAULT_SANDBOX_USER: &str = "nobody";
/// What of the sandbox's fresh `/proc` is shown read-only (bound from the host's, which
/// has the same entries, over its own): the kernel's tunables and the files that act on
/// the machine, as Docker's default `readonlyPaths` (moby, `oci/defaults.go`) and
/// bubblewrap's own cover when it runs as root. A bot that is not root could not write
/// most of them anyway; read-only, none can be written by anyone.
const PROC_READ_ONLY: &[&str] = &[
    "/proc/bus",
    "/proc/fs",
    "/proc/irq",
    "/proc/sys",
    "/proc/sysrq-trigger",
];
/// Files of `/proc` replaced by an empty one (`/dev/null`, read-only), and directories by
/// an empty read-only one: reports on the whole machine (the kernel's memory, its keys,
/// every timer of every process of the host, devices) that no bot needs, as Docker's
/// default `maskedPaths`.
const PROC_MASKED_FILES: &[&str] = &[
    "/proc/kcore",
    "/proc/keys",
    "/proc/latency_stats",
    "/proc/sched_debug",
    "/proc/timer_list",
    "/proc/timer_stats",
];
const PROC_MASKED_DIRS: &[&str] = &["/proc/acpi", "/proc/asound", "/proc/scsi"];
/// bubblewrap 0.8 brought `--disable-userns`.
const BWRAP_MIN: (u32, u32) = (0, 8);
/// Entries of `/etc` shown read-only when present: what dynamic linking, the
/// alternatives links (`/usr/bin/java` -> `/etc/alternatives/java` -> ...) and time
/// zones need. Nothing else of `/etc`: no passwords, keys or service configurations.
const ETC_FILES: &[&str] = &[
    "alternatives",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
];
/// Entries of `/etc` shown when their name starts with one of these: the settings of
/// Java (`/etc/java-17-openjdk`, which the JDK's `conf` links into) and of the system's
/// Python.
const ETC_PREFIXES: &[&str] = &["java", "python"];
/// Top-level system directories: on a merged-/usr system they are links into `/usr` and
/// are recreated as links; otherwise they are shown read-only.
const TOP_DIRS: &[&str] = &["bin", "sbin", "lib", "lib32", "lib64", "libx32"];
/// util-linux's `prlimit`, run inside the sandbox when the bound is RLIMIT_NPROC.
const PRLIMIT: &str = "/usr/bin/prlimit";
/// The script of the start-up probe: is the bot's program there, inside the sandbox?
const PROBE_SCRIPT: &str = "p=$(command -v -- \"$0\") || exit 127; printf %s \"$p\"";

/// How to sandbox a bot, as plain data: what `hus match --sandbox`'s flags and a league
/// file's `sandbox_*` keys say. [`SandboxOptions::sandbox_for`] builds the [`Sandbox`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SandboxOptions {
    /// Let the bot write in its own directory (default: read-only).
    pub writable: bool,
    /// Other paths the bot sees, read-only.
    pub read_only: Vec<PathBuf>,
    /// Most processes and threads in the sandbox (default [`DEFAULT_MAX_PROCESSES`]).
    pub max_processes: Option<u32>,
    /// Size of its private `/tmp` and of its `/dev/shm`, in bytes (default
    /// [`DEFAULT_TMP_SIZE`]).
    pub tmp_size: Option<u64>,
    /// The memory the whole sandbox may hold, in bytes (default
    /// [`DEFAULT_SANDBOX_MEMORY`]).
    pub memory: Option<u64>,
    /// When hus runs as root, the unprivileged user the bot runs as (default
    /// [`DEFAULT_SANDBOX_USER`]).
    pub user: Option<String>,
}

/// Which of a bot's sandbox settings a [`SandboxOptionError`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SandboxOption {
    /// The bot's directory (given, or found from its command).
    BotDir,
    /// [`SandboxOptions::read_only`].
    ReadOnly,
    /// [`SandboxOptions::max_processes`].
    MaxProcesses,
    /// [`SandboxOptions::tmp_size`].
    TmpSize,
    /// [`SandboxOptions::memory`].
    Memory,
    /// [`SandboxOptions::user`].
    User,
}

/// A sandbox that cannot be built from its [`SandboxOptions`]: the setting at fault and
/// why (its message is the [`SandboxError`]'s; the caller names the setting its own way,
/// a flag or a key).
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct SandboxOptionError {
    /// The setting at fault.
    pub option: SandboxOption,
    /// What is wrong with it.
    pub error: SandboxError,
}

impl SandboxOptions {
    /// The sandbox of the bot `spec` and the command to run in it (a relative path that
    /// named the bot's directory made absolute); its directory is `bot_dir` if given,
    /// else that of the file or directory its command names.
    pub fn sandbox_for(
        &self,
        spec: &BotSpec,
        bot_dir: Option<&Path>,
    ) -> Result<(Sandbox, BotSpec), SandboxOptionError> {
        let fault = |option| move |error| SandboxOptionError { option, error };
        let (sandbox, spec) = match bot_dir {
            Some(dir) => (Sandbox::new(dir), spec.clone()),
            None => match Sandbox::for_command(spec) {
                Ok((sandbox, spec)) => (Ok(sandbox), spec),
                Err(e) => (Err(e), spec.clone()),
            },
        };
        let mut sandbox = sandbox
            .map_err(fault(SandboxOption::BotDir))?
            .writable(self.writable);
        for path in &self.read_only {
            sandbox = sandbox
                .read_only(path)
                .map_err(fault(SandboxOption::ReadOnly))?;
        }
        if let Some(n) = self.max_processes {
            sandbox = sandbox
                .max_processes(n)
                .map_err(fault(SandboxOption::MaxProcesses))?;
        }
        if let Some(bytes) = self.tmp_size {
            sandbox = sandbox
                .tmp_size(bytes)
                .map_err(fault(SandboxOption::TmpSize))?;
        }
        if let Some(bytes) = self.memory {
            sandbox = sandbox
                .memory(bytes)
                .map_err(fault(SandboxOption::Memory))?;
        }
        if let Some(name) = &self.user {
            sandbox = sandbox.user(name).map_err(fault(SandboxOption::User))?;
        }
        Ok((sandbox, spec))
    }
}

/// How one bot is sandboxed: its directory, whether it may write there, what else it
/// sees (read-only), and how many processes it may have. Built with [`Sandbox::new`]
/// (or [`Sandbox::for_command`]) and the checked setters; put into
/// [`Limits::sandbox`](crate::Limits::sandbox). Call [`Sandbox::probe`] once before a
/// set: it is the clear error, before any game, on a machine that cannot sandbox.
///
/// ```no_run
/// use referee::{BotSpec, Limits, Sandbox};
/// let spec = BotSpec::parse("python3 bot.py").unwrap();
/// let sandbox = Sandbox::new("/srv/league/bots/alice")?
///     .writable(true)
///     .read_only("/opt/python3.12")?
///     .max_processes(64)?;
/// let limits = Limits { sandbox: Some(sandbox), ..Limits::default() };
/// limits.sandbox.as_ref().unwrap().probe(&spec, &limits)?;
/// # Ok::<(), referee::SandboxError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sandbox {
    bot_dir: PathBuf,
    writable: bool,
    read_only: Vec<PathBuf>,
    max_processes: u32,
    tmp_size: u64,
    memory: u64,
    run_as: RunAs,
    /// A writable memory file system of its own at a path, and its size: see
    /// [`Sandbox::scratch`].
    scratch: Option<(PathBuf, u64)>,
}

/// Whom a sandbox's processes run as, outside their user namespace.
#[derive(Clone, Debug, PartialEq, Eq)]
enum RunAs {
    /// `hus` is not root: its bots run as its own user, which changes nothing.
    Referee,
    /// `hus` is root: its bots become this user before bubblewrap runs.
    User(SandboxUser),
    /// `hus` is root and the default user cannot be used (why): starting a bot is an
    /// error, never a bot run as root.
    NoDefault(String),
}

/// An unprivileged user of this machine that sandboxed bots run as when `hus` runs as
/// root: looked up by name, with its group and supplementary groups, before any bot
/// starts. Never root: a user of uid 0, or in the group of gid 0, is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SandboxUser {
    name: String,
    uid: libc::uid_t,
    gid: libc::gid_t,
    /// Its supplementary groups (from the group database, its own group included).
    groups: Vec<libc::gid_t>,
}

impl SandboxUser {
    /// The user `name` of this machine's user database, refused if it does not exist or
    /// is root (uid 0, or in the root group).
    pub fn lookup(name: &str) -> Result<SandboxUser, SandboxError> {
        let lookup_error = |e: nix::Error| SandboxError::UserLookup {
            name: name.to_string(),
            error: io::Error::from(e),
        };
        let user = nix::unistd::User::from_name(name)
            .map_err(lookup_error)?
            .ok_or_else(|| SandboxError::NoSuchUser(name.to_string()))?;
        if user.uid.is_root() {
            return Err(SandboxError::RootUser(name.to_string()));
        }
        let c_name =
            std::ffi::CString::new(name).map_err(|_| SandboxError::NoSuchUser(name.to_string()))?;
        let groups: Vec<libc::gid_t> = nix::unistd::getgrouplist(&c_name, user.gid)
            .map_err(lookup_error)?
            .into_iter()
            .map(|g| g.as_raw())
            .collect();
        if user.gid.as_raw() == 0 || groups.contains(&0) {
            return Err(SandboxError::RootGroup(name.to_string()));
        }
        Ok(SandboxUser {
            name: name.to_string(),
            uid: user.uid.as_raw(),
            gid: user.gid.as_raw(),
            groups,
        })
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its user id.
    pub fn uid(&self) -> u32 {
        self.uid
    }

    /// Its group id.
    pub fn gid(&self) -> u32 {
        self.gid
    }

    /// Makes the calling process this user, for good: supplementary groups, group, then
    /// user (each step needs the privilege the next one drops), then checks that root
    /// cannot be had back. Only system calls, no allocation: safe between fork and exec.
    pub(crate) fn become_user(&self) -> io::Result<()> {
        // SAFETY: plain system calls on this process's credentials; `groups` is only
        // read.
        unsafe {
            if libc::setgroups(self.groups.len(), self.groups.as_ptr()) != 0
                || libc::setgid(self.gid) != 0
                || libc::setuid(self.uid) != 0
            {
                return Err(io::Error::last_os_error());
            }
            if libc::setuid(0) == 0 || libc::getegid() != self.gid {
                return Err(io::Error::from_raw_os_error(libc::EPERM));
            }
        }
        Ok(())
    }
}

/// Why a sandbox cannot be set up or used.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The sandbox's user does not exist.
    #[error("there is no user {0:?} on this machine")]
    NoSuchUser(String),
    /// The user database could not be read.
    #[error("cannot look up user {name:?}: {error}")]
    UserLookup {
        /// The user's name.
        name: String,
        /// Why (in the message, not a source of its own: it would be said twice).
        error: io::Error,
    },
    /// The sandbox's user is root.
    #[error(
        "user {0:?} is root (uid 0): a sandboxed bot never runs as root; name an unprivileged user"
    )]
    RootUser(String),
    /// The sandbox's user is in the root group.
    #[error(
        "user {0:?} is in the root group (gid 0): a sandboxed bot never runs with root's group; \
         name a user outside it"
    )]
    RootGroup(String),
    /// A user was asked for, and `hus` is not root, so cannot change user.
    #[error(
        "cannot run the bots as user {name:?}: only root can change user, and hus runs as uid \
         {uid}; without root, sandboxed bots run as hus's own user (leave out --sandbox-user)"
    )]
    NotRoot {
        /// The user asked for.
        name: String,
        /// The user `hus` runs as.
        uid: u32,
    },
    /// As root, the default user cannot be used.
    #[error(
        "hus runs as root, and runs sandboxed bots as user {DEFAULT_SANDBOX_USER} unless told \
         otherwise, but {0}; name an unprivileged user with --sandbox-user"
    )]
    NoDefaultUser(String),
    /// The sandbox's user cannot reach what the bot needs.
    #[error("{message}")]
    Unreachable {
        /// The path it cannot reach: the bot's directory, a read-only path, the bot's
        /// program or a file its command names.
        path: PathBuf,
        /// What it is, what is missing, and how to give it.
        message: String,
    },
    /// A path given to the sandbox cannot be used.
    #[error("{path}: {error}")]
    Path {
        /// The path as given.
        path: PathBuf,
        /// Why it cannot be used (in the message, not a source of its own: it would be
        /// said twice).
        error: io::Error,
    },
    /// The bot's directory is not a directory.
    #[error("the bot's directory {0} is not a directory")]
    NotADirectory(PathBuf),
    /// A path would show the bot the whole file system.
    #[error("{0} is the root directory: the sandbox would show the bot everything")]
    WholeFileSystem(PathBuf),
    /// No argument of the command names a file or directory to take as the bot's.
    #[error(
        "cannot tell the bot's directory from its command {0:?}: no argument names an \
         existing file or directory; give it (--bot-dir DIR)"
    )]
    NoBotDir(String),
    /// Too small a `/tmp`.
    #[error("the sandbox's /tmp needs at least 1 MiB, got {0} bytes")]
    TmpTooSmall(u64),
    /// Too small a memory budget.
    #[error("the sandbox needs at least 16 MiB of memory, got {0} bytes")]
    MemoryTooSmall(u64),
    /// Too small a bound on processes.
    #[error("the sandbox needs room for at least {MIN_PROCESSES} processes, got {0}")]
    TooFewProcesses(u32),
    /// A working directory other than the bot's directory was asked for.
    #[error("a sandboxed bot runs in its own directory {bot_dir}, not in {cwd}")]
    WorkingDirectory {
        /// The sandbox's bot directory.
        bot_dir: PathBuf,
        /// The working directory asked for.
        cwd: PathBuf,
    },
    /// bubblewrap is not on PATH.
    #[error(
        "bubblewrap (bwrap) is not installed, and the sandbox runs bots under it \
         (Debian and Ubuntu: apt-get install bubblewrap)"
    )]
    NoBubblewrap,
    /// bubblewrap is there but too old.
    #[error("{0} is too old: the sandbox needs bubblewrap 0.8 or later (for --disable-userns)")]
    OldBubblewrap(String),
    /// bubblewrap could not make a sandbox here (user namespaces disabled, ...).
    #[error("bubblewrap cannot make a sandbox on this machine: {0}")]
    Unusable(String),
    /// Neither a pids cgroup nor RLIMIT_NPROC can bound the bot's processes.
    #[error(
        "cannot bound the number of processes: hus runs as root, where RLIMIT_NPROC does \
         not bind, and no pids cgroup could be made for the bot ({0})"
    )]
    ProcessBound(String),
    /// The bot's program cannot be found inside the sandbox.
    #[error("the bot's program {program:?} cannot be found inside the sandbox{hint}")]
    ProgramHidden {
        /// The program as the command names it.
        program: String,
        /// Where it is outside, and the option that would show it.
        hint: String,
    },
    /// Inside the sandbox the bot's program would be another one than outside (the
    /// first on PATH is hidden, a later one is not).
    #[error(
        "the bot's program {program:?} is {outside} outside the sandbox, but would be \
         {inside} inside it; {fix}"
    )]
    ProgramDiffers {
        /// The program as the command names it.
        program: String,
        /// What it is outside.
        outside: PathBuf,
        /// What it would be inside.
        inside: PathBuf,
        /// What to do: show its installation (with the option that does it), or, when
        /// the sandbox's user cannot reach that, use the program inside.
        fix: String,
    },
}

impl Sandbox {
    /// A sandbox for a bot that lives in `bot_dir` (read-only, [`DEFAULT_MAX_PROCESSES`]).
    /// The directory must exist; it is shown at its real (canonical) path, and the bot
    /// runs there.
    pub fn new(bot_dir: impl AsRef<Path>) -> Result<Sandbox, SandboxError> {
        let bot_dir = visible_path(bot_dir.as_ref())?;
        if !bot_dir.is_dir() {
            return Err(SandboxError::NotADirectory(bot_dir));
        }
        Ok(Sandbox {
            bot_dir,
            writable: false,
            read_only: Vec::new(),
            max_processes: DEFAULT_MAX_PROCESSES,
            tmp_size: DEFAULT_TMP_SIZE,
            memory: DEFAULT_SANDBOX_MEMORY,
            run_as: default_run_as(),
            scratch: None,
        })
    }

    /// A sandbox whose directory is the one the command names: that of the first
    /// argument after the program that is an existing file (the script), or an existing
    /// directory (`java -cp DIR Main`), options (`-x`) aside; failing that, the
    /// program's own, when it is written as a path (`./target/release/my-bot`). Returns
    /// the command to run: since the bot runs in that directory, the argument, if
    /// relative, is made absolute.
    pub fn for_command(spec: &BotSpec) -> Result<(Sandbox, BotSpec), SandboxError> {
        let arguments = (1..spec.argv.len()).filter(|&i| !spec.argv[i].starts_with('-'));
        let program = std::iter::once(0).filter(|_| spec.argv[0].contains('/'));
        for i in arguments.chain(program) {
            let path = Path::new(&spec.argv[i]);
            let Ok(meta) = std::fs::metadata(path) else {
                continue;
            };
            let dir = if meta.is_dir() {
                path
            } else {
                match path.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p,
                    _ => Path::new("."),
                }
            };
            let sandbox = Sandbox::new(dir)?;
            let mut spec = spec.clone();
            if path.is_relative() {
                let absolute = std::fs::canonicalize(path)
                    .map_err(|error| SandboxError::Path {
                        path: path.to_path_buf(),
                        error,
                    })?
                    .into_os_string()
                    .into_string()
                    .map_err(|_| SandboxError::Path {
                        path: path.to_path_buf(),
                        error: io::Error::other("its absolute path is not UTF-8"),
                    })?;
                spec.argv[i] = absolute;
            }
            return Ok((sandbox, spec));
        }
        Err(SandboxError::NoBotDir(spec.command.clone()))
    }

    /// Whether the bot may write in its directory (default: no).
    pub fn writable(mut self, writable: bool) -> Sandbox {
        self.writable = writable;
        self
    }

    /// Also shows `path` (a file or directory, which must exist) read-only, at its real
    /// path: an interpreter installed outside `/usr`, say.
    pub fn read_only(mut self, path: impl AsRef<Path>) -> Result<Sandbox, SandboxError> {
        let path = visible_path(path.as_ref())?;
        if !self.read_only.contains(&path) {
            self.read_only.push(path);
        }
        Ok(self)
    }

    /// At most `n` processes and threads in the sandbox, bubblewrap's own included.
    pub fn max_processes(mut self, n: u32) -> Result<Sandbox, SandboxError> {
        if n < MIN_PROCESSES {
            return Err(SandboxError::TooFewProcesses(n));
        }
        self.max_processes = n;
        Ok(self)
    }

    /// Runs the bot as user `name` (see [`SandboxUser::lookup`]) when `hus` runs as root,
    /// instead of [`DEFAULT_SANDBOX_USER`]. When `hus` is not root it cannot change user:
    /// `name` must then be its own user, which changes nothing.
    pub fn user(mut self, name: &str) -> Result<Sandbox, SandboxError> {
        let user = SandboxUser::lookup(name)?;
        let own = nix::unistd::geteuid();
        self.run_as = if own.is_root() {
            RunAs::User(user)
        } else if user.uid == own.as_raw() {
            RunAs::Referee
        } else {
            return Err(SandboxError::NotRoot {
                name: name.to_string(),
                uid: own.as_raw(),
            });
        };
        Ok(self)
    }

    /// The user the bot runs as, when `hus` runs as root (`None`: it runs as `hus`'s own
    /// user, which is not root, or there is no user to run it as and it cannot start).
    pub fn run_as_user(&self) -> Option<&SandboxUser> {
        match &self.run_as {
            RunAs::User(user) => Some(user),
            RunAs::Referee | RunAs::NoDefault(_) => None,
        }
    }

    /// The user the bot's processes must become before bubblewrap runs (`None`: stay
    /// `hus`'s own, which is not root); an error rather than ever running it as root.
    pub(crate) fn user_to_become(&self) -> Result<Option<&SandboxUser>, SandboxError> {
        match &self.run_as {
            RunAs::Referee => Ok(None),
            RunAs::User(user) => Ok(Some(user)),
            RunAs::NoDefault(why) => Err(SandboxError::NoDefaultUser(why.clone())),
        }
    }

    /// The size of its `/tmp` and of its `/dev/shm`, each (default [`DEFAULT_TMP_SIZE`]).
    /// They live in memory: without a bound, a bot could fill half the machine's.
    pub fn tmp_size(mut self, bytes: u64) -> Result<Sandbox, SandboxError> {
        if bytes < MIN_TMP_SIZE {
            return Err(SandboxError::TmpTooSmall(bytes));
        }
        self.tmp_size = bytes;
        Ok(self)
    }

    /// The memory the whole sandbox may hold (default [`DEFAULT_SANDBOX_MEMORY`]): every
    /// page of its processes and everything they make the kernel keep for them, the
    /// files of its `/tmp` and `/dev/shm` (which count against it as well as against
    /// their size), `memfd` files, pipe and socket buffers. As root it is the
    /// `memory.max` of a memory cgroup of its own, without swap; a sandbox that goes
    /// over it is killed by the kernel, a fault that says so.
    pub fn memory(mut self, bytes: u64) -> Result<Sandbox, SandboxError> {
        if bytes < MIN_SANDBOX_MEMORY {
            return Err(SandboxError::MemoryTooSmall(bytes));
        }
        self.memory = bytes;
        Ok(self)
    }

    /// Also gives the sandbox a writable memory file system (tmpfs) of `bytes` at the
    /// absolute path `path`, empty at the start and gone with the sandbox: room that
    /// really is bounded (a write past `bytes` fails with "no space left on device"),
    /// and whose pages count against the sandbox's memory budget too. What builds an
    /// uploaded bot works in (the `upload` crate); nothing of the host is seen there.
    pub fn scratch(mut self, path: impl AsRef<Path>, bytes: u64) -> Result<Sandbox, SandboxError> {
        let path = path.as_ref();
        if !path.is_absolute() || path.parent().is_none() {
            return Err(SandboxError::Path {
                path: path.to_path_buf(),
                error: io::Error::other("a scratch directory must be an absolute path below /"),
            });
        }
        if bytes < MIN_TMP_SIZE {
            return Err(SandboxError::TmpTooSmall(bytes));
        }
        self.scratch = Some((path.to_path_buf(), bytes));
        Ok(self)
    }

    /// The scratch file system's path and size, if it has one ([`Sandbox::scratch`]).
    pub fn scratch_dir(&self) -> Option<(&Path, u64)> {
        self.scratch
            .as_ref()
            .map(|(path, bytes)| (path.as_path(), *bytes))
    }

    /// The bot's directory (canonical): its working directory, and all it sees of the
    /// file system besides the system's files.
    pub fn bot_dir(&self) -> &Path {
        &self.bot_dir
    }

    /// Whether the bot may write in its directory.
    pub fn is_writable(&self) -> bool {
        self.writable
    }

    /// The other paths it sees, read-only.
    pub fn read_only_paths(&self) -> &[PathBuf] {
        &self.read_only
    }

    /// The bound on its processes and threads.
    pub fn process_limit(&self) -> u32 {
        self.max_processes
    }

    /// The size of its `/tmp` and of its `/dev/shm`, each, in bytes.
    pub fn tmp_limit(&self) -> u64 {
        self.tmp_size
    }

    /// The memory the whole sandbox may hold, in bytes.
    pub fn memory_limit(&self) -> u64 {
        self.memory
    }

    /// What [`Sandbox::probe`] (in limits.rs, as it runs the sandbox under a bot's
    /// [`Limits`](crate::Limits)) checks: `path_var` is the `PATH` the bot will have,
    /// and `run` runs a command exactly as the bot will run (its spawn error is
    /// bubblewrap's, `Ok(Err(..))`).
    pub(crate) fn probe_with(
        &self,
        spec: &BotSpec,
        path_var: &Option<OsString>,
        run: impl FnOnce(&BotSpec) -> Result<io::Result<Output>, SandboxError>,
    ) -> Result<(), SandboxError> {
        let bwrap = find_bwrap()?;
        check_version(&bwrap)?;
        let program = program_path(&spec.argv[0]);
        let outside = host_program(&program, path_var);
        if let Some(user) = self.user_to_become()? {
            self.check_user_reaches(user, spec, outside.as_deref())?;
        }
        let probe = BotSpec {
            command: spec.command.clone(),
            argv: vec![
                "/bin/sh".into(),
                "-c".into(),
                PROBE_SCRIPT.into(),
                program.to_string_lossy().into_owned(),
            ],
        };
        let output = run(&probe)?
            .map_err(|e| SandboxError::Unusable(format!("cannot run {}: {e}", bwrap.display())))?;
        match output.status.code() {
            Some(0) => {
                let inside = PathBuf::from(String::from_utf8_lossy(&output.stdout).into_owned());
                match outside {
                    Some(outside) if outside != inside => {
                        let prefix = install_prefix(&outside);
                        let use_inside =
                            format!("write {} in the command to use that one", inside.display());
                        let fix = match self.out_of_reach(&prefix) {
                            Some(user) => format!(
                                "its installation {} cannot be shown: user {user}, who runs the \
                                 sandboxed bots, cannot reach it; {use_inside}, or install the \
                                 program where {user} can reach it",
                                prefix.display()
                            ),
                            None => format!(
                                "show its installation read-only with --sandbox-ro {}, or {use_inside}",
                                prefix.display()
                            ),
                        };
                        Err(SandboxError::ProgramDiffers {
                            program: spec.argv[0].clone(),
                            outside,
                            inside,
                            fix,
                        })
                    }
                    _ => Ok(()),
                }
            }
            Some(127) => Err(SandboxError::ProgramHidden {
                program: spec.argv[0].clone(),
                hint: match outside {
                    Some(found) => {
                        let prefix = install_prefix(&found);
                        match self.out_of_reach(&prefix) {
                            Some(user) => format!(
                                " (outside it is {}, in {}, which user {user}, who runs the \
                                 sandboxed bots, cannot reach: install it where {user} can)",
                                found.display(),
                                prefix.display()
                            ),
                            None => format!(
                                " (outside it is {}; show its installation read-only with --sandbox-ro {})",
                                found.display(),
                                prefix.display()
                            ),
                        }
                    }
                    None => " (nor outside it: is it installed, and on PATH?)".to_string(),
                },
            }),
            _ => {
                let stderr = String::from_utf8_lossy(&output.stderr).trim().to_string();
                Err(SandboxError::Unusable(if stderr.is_empty() {
                    format!("bwrap ended with {}", output.status)
                } else {
                    stderr
                }))
            }
        }
    }

    /// The sandbox's user's name, if it cannot reach `path` (so `path` cannot be shown).
    fn out_of_reach(&self, path: &Path) -> Option<&str> {
        let user = self.user_to_become().ok().flatten()?;
        check_reachable(user, &[("the path", path, "rx")])
            .is_err()
            .then_some(user.name())
    }

    /// Checks that `user` can reach the bot's directory (and write there if the bot may),
    /// the read-only paths, the bot's program and the files its command names when they
    /// are among those: bubblewrap, run as that user, could not show the bot the rest.
    fn check_user_reaches(
        &self,
        user: &SandboxUser,
        spec: &BotSpec,
        program: Option<&Path>,
    ) -> Result<(), SandboxError> {
        let dir_access = if self.writable { "rwx" } else { "rx" };
        let mut targets: Vec<(&'static str, &Path, &'static str)> =
            vec![("the bot's directory", self.bot_dir.as_path(), dir_access)];
        for path in &self.read_only {
            let access = if path.is_dir() { "rx" } else { "r" };
            targets.push(("the path shown to the bot", path.as_path(), access));
        }
        let shown = |p: &Path| {
            p.starts_with(&self.bot_dir) || self.read_only.iter().any(|r| p.starts_with(r))
        };
        if let Some(program) = program.filter(|p| p.is_absolute() && shown(p)) {
            targets.push(("the bot's program", program, "x"));
        }
        for arg in &spec.argv[1..] {
            let path = Path::new(arg.as_str());
            if path.is_absolute() && path.is_file() && shown(path) {
                targets.push(("the bot's file", path, "r"));
            }
        }
        check_reachable(user, &targets)
    }

    /// The bubblewrap command line that runs `argv` in this sandbox, bounded by `bound`,
    /// with the seccomp filter read from descriptor `seccomp` (see [`seccomp_filter`]).
    pub(crate) fn bwrap_args(
        &self,
        argv: &[OsString],
        bound: &ProcessBound,
        seccomp: RawFd,
    ) -> Vec<OsString> {
        let mut args: Vec<OsString> = Vec::new();
        let mut push = |items: &[&dyn AsRef<std::ffi::OsStr>]| {
            args.extend(items.iter().map(|s| s.as_ref().to_os_string()));
        };
        push(&[
            &"--unshare-user",
            &"--uid",
            &SANDBOX_ID,
            &"--gid",
            &SANDBOX_ID,
            // No further user namespaces inside: they are where many kernel exploits
            // start.
            &"--disable-userns",
            &"--unshare-pid",
            &"--unshare-net",
            &"--unshare-ipc",
            &"--unshare-uts",
            &"--unshare-cgroup-try",
            &"--hostname",
            &"hus-bot",
            // The sandbox goes when the referee goes, even if it is killed outright.
            &"--die-with-parent",
            &"--cap-drop",
            &"ALL",
            &"--seccomp",
            &seccomp.to_string(),
            &"--ro-bind",
            &"/usr",
            &"/usr",
        ]);
        for dir in TOP_DIRS {
            let host = Path::new("/").join(dir);
            match std::fs::symlink_metadata(&host) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    if let Ok(target) = std::fs::read_link(&host) {
                        push(&[&"--symlink", &target, &host]);
                    }
                }
                Ok(meta) if meta.is_dir() => push(&[&"--ro-bind", &host, &host]),
                _ => {}
            }
        }
        for entry in etc_entries() {
            push(&[&"--ro-bind", &entry, &entry]);
        }
        // /dev is a fresh memory file system: bounded memory for /dev/shm (shared memory,
        // semaphores), and made read-only below, like the root.
        let size = self.tmp_size.to_string();
        push(&[&"--proc", &"/proc"]);
        // Bound from the host's /proc, which has the same entries: bubblewrap resolves a
        // bind's source outside the new root.
        for path in PROC_READ_ONLY.iter().filter(|p| Path::new(p).exists()) {
            push(&[&"--ro-bind", path, path]);
        }
        for path in PROC_MASKED_FILES.iter().filter(|p| Path::new(p).exists()) {
            push(&[&"--ro-bind", &"/dev/null", path]);
        }
        let masked_dirs: Vec<&str> = PROC_MASKED_DIRS
            .iter()
            .copied()
            .filter(|p| Path::new(p).is_dir())
            .collect();
        for path in &masked_dirs {
            push(&[&"--size", &"4096", &"--tmpfs", path]);
        }
        push(&[
            &"--dev",
            &"/dev",
            &"--size",
            &size,
            &"--tmpfs",
            &"/dev/shm",
            &"--size",
            &size,
            &"--tmpfs",
            &"/tmp",
        ]);
        for path in &self.read_only {
            push(&[&"--ro-bind", path, path]);
        }
        let bind = if self.writable { "--bind" } else { "--ro-bind" };
        push(&[&bind, &self.bot_dir, &self.bot_dir]);
        if let Some((path, bytes)) = &self.scratch {
            push(&[&"--size", &bytes.to_string(), &"--tmpfs", path]);
        }
        // Last, so that nothing can be created beside the mounts.
        for path in &masked_dirs {
            push(&[&"--remount-ro", path]);
        }
        push(&[
            &"--remount-ro",
            &"/dev",
            &"--remount-ro",
            &"/",
            &"--chdir",
            &self.bot_dir,
            &"--",
        ]);
        if let ProcessBound::Rlimit = bound {
            let nproc = format!("--nproc={}", self.max_processes);
            push(&[&PRLIMIT, &nproc, &"--"]);
        }
        args.extend(argv.iter().cloned());
        args
    }

    /// How this sandbox's processes will be bounded: a fresh pids cgroup, or (not as
    /// root) RLIMIT_NPROC inside the sandbox.
    pub(crate) fn process_bound(&self) -> Result<ProcessBound, SandboxError> {
        match BotCgroup::create(Some(self.max_processes), self.memory) {
            Ok(cgroup) => Ok(ProcessBound::Cgroup(cgroup)),
            Err(e) if !nix::unistd::geteuid().is_root() => {
                // No cgroup at all without root: the memory budget is not enforced, and
                // that is said once, as where only the memory cgroup is missing.
                cgroup::say_no_memory_cgroup(&e);
                Ok(ProcessBound::Rlimit)
            }
            Err(e) => Err(SandboxError::ProcessBound(e.to_string())),
        }
    }
}

/// What bounds a sandbox's processes.
pub(crate) enum ProcessBound {
    /// The cgroups that the process joins before it runs bubblewrap.
    Cgroup(BotCgroup),
    /// RLIMIT_NPROC, set inside the sandbox by `prlimit`.
    Rlimit,
}

/// Whom a new sandbox runs its bot as: `hus`'s own user if it is not root, else
/// [`DEFAULT_SANDBOX_USER`] (or, if that cannot be used, the reason, for the error a bot's
/// start then is).
fn default_run_as() -> RunAs {
    if !nix::unistd::geteuid().is_root() {
        return RunAs::Referee;
    }
    match SandboxUser::lookup(DEFAULT_SANDBOX_USER) {
        Ok(user) => RunAs::User(user),
        Err(e) => RunAs::NoDefault(e.to_string()),
    }
}

/// The message of [`SandboxError::Unreachable`].
fn unreachable_message(
    what: &str,
    path: &Path,
    user: &str,
    access: char,
    blocker: Option<&Path>,
) -> String {
    let path = path.display();
    let who = format!("by user {user}, who runs the sandboxed bots");
    let other = "or choose another user with --sandbox-user";
    match (access, blocker) {
        (_, Some(blocker)) => format!(
            "{what} {path} is not readable {who}: {} does not let {user} through; {what} and \
             every directory above it must be reachable by that user (chmod o+x on each \
             directory above it), {other}",
            blocker.display()
        ),
        ('w', None) => format!(
            "{what} {path} is not writable {who}, and the bot may write there \
             (--sandbox-writable): give it to that user (chown {user} {path}), {other}"
        ),
        ('x', None) if !what.ends_with("directory") => {
            format!("{what} {path} is not executable {who} (chmod o+rx {path}), {other}")
        }
        _ => format!("{what} {path} is not readable {who} (chmod o+rX {path}), {other}"),
    }
}

/// Checks, as the sandbox's user, each path and the directories above it: for each
/// `(what, path, access)`, search permission on every directory above `path`, then each
/// letter of `access` (`r`, `w`, `x`) on `path` itself. Runs `/bin/sh`'s `test` as that
/// user, outside any sandbox: the kernel's own answer, access lists and all.
fn check_reachable(
    user: &SandboxUser,
    targets: &[(&'static str, &Path, &'static str)],
) -> Result<(), SandboxError> {
    /// Prints the index and the letter of the first check that fails.
    const SCRIPT: &str = "i=0; while [ \"$#\" -ge 2 ]; do \
        case $1 in *r*) [ -r \"$2\" ] || { echo \"$i r\"; exit 1; };; esac; \
        case $1 in *w*) [ -w \"$2\" ] || { echo \"$i w\"; exit 1; };; esac; \
        case $1 in *x*) [ -x \"$2\" ] || { echo \"$i x\"; exit 1; };; esac; \
        i=$((i+1)); shift 2; done";
    // (target, path, access): the directories above each target first.
    let mut checks: Vec<(usize, &Path, &str)> = Vec::new();
    for (t, &(_, path, access)) in targets.iter().enumerate() {
        let mut above: Vec<&Path> = path
            .ancestors()
            .skip(1)
            .filter(|a| a.parent().is_some())
            .collect();
        above.reverse();
        for dir in above {
            if !checks.iter().any(|&(_, p, a)| p == dir && a == "x") {
                checks.push((t, dir, "x"));
            }
        }
        checks.push((t, path, access));
    }
    let mut command = Command::new("/bin/sh");
    command
        .args(["-c", SCRIPT, "sh"])
        .env_clear()
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    for &(_, path, access) in &checks {
        command.arg(access).arg(path);
    }
    let become_user = user.clone();
    // SAFETY: `become_user` makes only system calls (see there).
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut command, move || {
            become_user.become_user()
        });
    }
    let output = command.output().map_err(|e| {
        SandboxError::Unusable(format!(
            "cannot check what user {} can reach: {e}",
            user.name
        ))
    })?;
    if output.status.success() {
        return Ok(());
    }
    let answer = String::from_utf8_lossy(&output.stdout);
    let failed = answer.trim().split_once(' ').and_then(|(i, letter)| {
        let i: usize = i.parse().ok()?;
        Some((checks.get(i)?, letter.chars().next()?))
    });
    let Some((&(t, path, _), access)) = failed else {
        return Err(SandboxError::Unusable(format!(
            "cannot check what user {} can reach: /bin/sh ended with {}",
            user.name, output.status
        )));
    };
    let (what, target, _) = targets[t];
    let blocker = (path != target).then_some(path);
    Err(SandboxError::Unreachable {
        path: target.to_path_buf(),
        message: unreachable_message(what, target, &user.name, access, blocker),
    })
}

/// The canonical form of an existing path, refusing `/`.
fn visible_path(path: &Path) -> Result<PathBuf, SandboxError> {
    let canonical = std::fs::canonicalize(path).map_err(|error| SandboxError::Path {
        path: path.to_path_buf(),
        error,
    })?;
    if canonical == Path::new("/") {
        return Err(SandboxError::WholeFileSystem(path.to_path_buf()));
    }
    Ok(canonical)
}

/// The entries of `/etc` a sandbox shows (those of [`ETC_FILES`] and [`ETC_PREFIXES`]
/// that exist), sorted.
fn etc_entries() -> Vec<PathBuf> {
    let etc = Path::new("/etc");
    let mut entries: Vec<PathBuf> = ETC_FILES
        .iter()
        .map(|name| etc.join(name))
        .filter(|p| p.exists())
        .collect();
    if let Ok(dir) = std::fs::read_dir(etc) {
        for entry in dir.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if ETC_PREFIXES.iter().any(|p| name.starts_with(p)) {
                entries.push(entry.path());
            }
        }
    }
    entries.sort();
    entries
}

/// What `program` is outside the sandbox: itself if it is a path, else the first on
/// `path_var` (the bot's PATH); `None` if there is no such program.
fn host_program(program: &Path, path_var: &Option<OsString>) -> Option<PathBuf> {
    if program.as_os_str().to_string_lossy().contains('/') {
        Some(program.to_path_buf()).filter(|p| p.exists())
    } else {
        path_var
            .as_ref()
            .and_then(|paths| find_on_path(program.as_os_str(), paths))
    }
}

/// The first executable `name` in the directories of `paths` (a PATH value).
fn find_on_path(name: &std::ffi::OsStr, paths: &std::ffi::OsStr) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(paths)
        .map(|dir| dir.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// The installation a program belongs to, to suggest showing it: the directory above
/// its `bin`, `sbin` or `shims` directory (`/root/.pyenv/shims/python3` gives
/// `/root/.pyenv`), else its own directory.
fn install_prefix(program: &Path) -> PathBuf {
    let dir = program.parent().unwrap_or(Path::new("/"));
    let above = dir.parent().filter(|p| *p != Path::new("/"));
    match (dir.file_name().and_then(|n| n.to_str()), above) {
        (Some("bin" | "sbin" | "shims"), Some(above)) => above.to_path_buf(),
        _ => dir.to_path_buf(),
    }
}

/// bubblewrap on the referee's PATH (it runs outside the sandbox).
pub(crate) fn find_bwrap() -> Result<PathBuf, SandboxError> {
    std::env::var_os("PATH")
        .and_then(|paths| find_on_path("bwrap".as_ref(), &paths))
        .ok_or(SandboxError::NoBubblewrap)
}

fn check_version(bwrap: &Path) -> Result<(), SandboxError> {
    let output = Command::new(bwrap)
        .arg("--version")
        .output()
        .map_err(|e| SandboxError::Unusable(format!("cannot run {}: {e}", bwrap.display())))?;
    let text = String::from_utf8_lossy(&output.stdout).trim().to_string();
    match parse_version(&text) {
        Some(version) if version >= BWRAP_MIN => Ok(()),
        Some(_) => Err(SandboxError::OldBubblewrap(text)),
        None => Err(SandboxError::Unusable(format!(
            "{} --version printed {text:?}, not a bubblewrap version",
            bwrap.display()
        ))),
    }
}

/// `bubblewrap 0.8.0` gives (0, 8).
fn parse_version(text: &str) -> Option<(u32, u32)> {
    let version = text.strip_prefix("bubblewrap ")?;
    let mut parts = version.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[OsString]) -> Vec<String> {
        args.iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn the_command_line_shows_the_system_the_paths_given_and_the_bot_dir_last() {
        let dir = tempfile::tempdir().expect("temp dir");
        let bot = dir.path().join("bot");
        let extra = dir.path().join("interp");
        std::fs::create_dir_all(&bot).expect("mkdir");
        std::fs::create_dir_all(&extra).expect("mkdir");
        let sandbox = Sandbox::new(&bot)
            .and_then(|s| s.read_only(&extra))
            .and_then(|s| s.max_processes(40))
            .and_then(|s| s.tmp_size(2 << 20))
            .expect("sandbox");
        let bot = std::fs::canonicalize(&bot).expect("canonical");
        let extra = std::fs::canonicalize(&extra).expect("canonical");
        let argv = ["python3".into(), "bot.py".into()];
        let args = strings(&sandbox.bwrap_args(&argv, &ProcessBound::Rlimit, 7));
        let start = [
            "--unshare-user",
            "--uid",
            "65534",
            "--gid",
            "65534",
            "--disable-userns",
            "--unshare-pid",
            "--unshare-net",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--hostname",
            "hus-bot",
            "--die-with-parent",
            "--cap-drop",
            "ALL",
            "--seccomp",
            "7",
            "--ro-bind",
            "/usr",
            "/usr",
        ];
        assert_eq!(args[..start.len()], start);
        let (bot, extra) = (bot.display().to_string(), extra.display().to_string());
        // A fresh /proc; over it, read-only, the host's tunables and machine-wide
        // switches (this kernel's /proc has /proc/sys, /proc/sysrq-trigger...), and empty
        // stand-ins for its machine-wide reports.
        let exists = |p: &&&str| Path::new(p).exists();
        let mut proc: Vec<&str> = vec!["--proc", "/proc"];
        for path in PROC_READ_ONLY.iter().filter(exists) {
            proc.extend(["--ro-bind", path, path]);
        }
        for path in PROC_MASKED_FILES.iter().filter(exists) {
            proc.extend(["--ro-bind", "/dev/null", path]);
        }
        let masked_dirs: Vec<&str> = PROC_MASKED_DIRS.iter().filter(exists).copied().collect();
        for path in &masked_dirs {
            proc.extend(["--size", "4096", "--tmpfs", path]);
        }
        assert!(
            proc.windows(3)
                .any(|w| w == ["--ro-bind", "/proc/sys", "/proc/sys"]),
            "{proc:?}"
        );
        let mut end = proc;
        end.extend([
            "--dev",
            "/dev",
            "--size",
            "2097152",
            "--tmpfs",
            "/dev/shm",
            "--size",
            "2097152",
            "--tmpfs",
            "/tmp",
            "--ro-bind",
            &extra,
            &extra,
            "--ro-bind",
            &bot,
            &bot,
        ]);
        for path in &masked_dirs {
            end.extend(["--remount-ro", path]);
        }
        end.extend([
            "--remount-ro",
            "/dev",
            "--remount-ro",
            "/",
            "--chdir",
            &bot,
            "--",
            "/usr/bin/prlimit",
            "--nproc=40",
            "--",
            "python3",
            "bot.py",
        ]);
        assert_eq!(args[args.len() - end.len()..], end);
        // No /sys: not mounted at all.
        assert!(!args.iter().any(|a| a.starts_with("/sys")), "{args:?}");
        // Writable: the bot dir is bound read-write; with a cgroup, no prlimit.
        let sandbox = sandbox.writable(true);
        let args = strings(&sandbox.bwrap_args(&argv, &ProcessBound::Cgroup(fake_cgroup()), 7));
        let mut tail: Vec<&str> = vec!["--bind", &bot, &bot];
        for path in &masked_dirs {
            tail.extend(["--remount-ro", path]);
        }
        tail.extend([
            "--remount-ro",
            "/dev",
            "--remount-ro",
            "/",
            "--chdir",
            &bot,
            "--",
            "python3",
            "bot.py",
        ]);
        assert_eq!(args[args.len() - tail.len()..], tail);
        // A scratch file system: right after the bot's directory, writable, sized.
        let sandbox = sandbox.scratch("/srv/v/tree", 3 << 20).expect("scratch");
        let args = strings(&sandbox.bwrap_args(&argv, &ProcessBound::Cgroup(fake_cgroup()), 7));
        let at = args.iter().position(|a| a == "--bind").expect("bind");
        assert_eq!(
            args[at..at + 7],
            [
                "--bind",
                &bot,
                &bot,
                "--size",
                "3145728",
                "--tmpfs",
                "/srv/v/tree"
            ]
        );
        assert!(Sandbox::new(&bot)
            .expect("sandbox")
            .scratch("rel/tree", 3 << 20)
            .is_err());
        assert!(Sandbox::new(&bot)
            .expect("sandbox")
            .scratch("/t", 1000)
            .is_err());
    }

    #[test]
    fn a_sandbox_over_its_memory_budget_is_told_by_what_its_cgroup_counted() {
        let events = |oom_kills, hits| MemoryEvents {
            budget: 96 << 20,
            oom_kills,
            hits,
        };
        assert_eq!(events(0, 0).words(), None);
        assert_eq!(events(0, 3).words(), None);
        assert_eq!(
            events(1, 3).words().as_deref(),
            Some(
                "the kernel killed it: over its sandbox's memory budget of 96 MiB \
                 (--sandbox-memory; its processes' memory, /tmp, /dev/shm and memfd files and \
                 pipe buffers count)"
            )
        );
        assert_eq!(human_bytes(1 << 30), "1 GiB");
        assert_eq!(human_bytes(1536 << 10), "1536 KiB");
        assert_eq!(human_bytes(1000), "1000 bytes");
        assert!(matches!(
            Sandbox::new(std::env::temp_dir()).and_then(|s| s.memory(1 << 20)),
            Err(SandboxError::MemoryTooSmall(1048576))
        ));
    }

    /// A cgroup value that is never created: dropping it removes nothing.
    fn fake_cgroup() -> BotCgroup {
        BotCgroup {
            pids: CgroupDir {
                dir: PathBuf::from("/nonexistent/hus-test-cgroup"),
                procs: File::open("/dev/null").expect("/dev/null"),
                removed: true,
            },
            memory_dir: None,
            memory: None,
        }
    }

    #[test]
    fn the_bot_dir_is_taken_from_the_command_and_made_absolute() {
        let dir = tempfile::tempdir().expect("temp dir");
        let bots = dir.path().join("bots");
        std::fs::create_dir_all(bots.join("alice")).expect("mkdir");
        std::fs::write(bots.join("alice/bot.py"), "").expect("write");
        let canonical = std::fs::canonicalize(bots.join("alice")).expect("canonical");
        let script = canonical.join("bot.py").display().to_string();

        let spec = BotSpec::parse(&format!("python3 -u {script} --level 3")).expect("spec");
        let (sandbox, same) = Sandbox::for_command(&spec).expect("sandbox");
        assert_eq!(sandbox.bot_dir(), canonical);
        assert_eq!(same, spec);
        assert!(!sandbox.is_writable());
        assert_eq!(sandbox.process_limit(), DEFAULT_MAX_PROCESSES);

        // An interpreter written as a path is not the bot: its script is.
        let spec = BotSpec::parse(&format!("/usr/bin/python3 {script}")).expect("spec");
        let (sandbox, _) = Sandbox::for_command(&spec).expect("sandbox");
        assert_eq!(sandbox.bot_dir(), canonical);
        // A program written as a path, with no file among its arguments, is.
        let program = canonical.join("bot.py").display().to_string();
        let spec = BotSpec::parse(&format!("{program} --depth 3")).expect("spec");
        let (sandbox, _) = Sandbox::for_command(&spec).expect("sandbox");
        assert_eq!(sandbox.bot_dir(), canonical);
        // Relative paths are made absolute, since the bot runs in its directory.
        let cwd = std::env::current_dir().expect("cwd");
        let up = "../".repeat(cwd.components().count() - 1);
        let relative = format!("{up}{}", &program[1..]);
        let spec = BotSpec::parse(&format!("python3 {relative}")).expect("spec");
        let (_, spec) = Sandbox::for_command(&spec).expect("sandbox");
        assert_eq!(spec.argv, ["python3", program.as_str()]);

        let spec = BotSpec::parse(&format!("java -cp {} Main", canonical.display())).expect("spec");
        let (sandbox, _) = Sandbox::for_command(&spec).expect("sandbox");
        assert_eq!(sandbox.bot_dir(), canonical);

        let spec = BotSpec::parse("python3 -c pass").expect("spec");
        assert!(matches!(
            Sandbox::for_command(&spec),
            Err(SandboxError::NoBotDir(c)) if c == "python3 -c pass"
        ));
    }

    #[test]
    fn bad_paths_and_bounds_are_refused_by_name() {
        assert!(matches!(
            Sandbox::new("/"),
            Err(SandboxError::WholeFileSystem(_))
        ));
        let missing = Sandbox::new("/nonexistent/hus-bot").map_err(|e| e.to_string());
        assert_eq!(
            missing.err().as_deref(),
            Some("/nonexistent/hus-bot: No such file or directory (os error 2)")
        );
        let file = tempfile::NamedTempFile::new().expect("file");
        assert!(matches!(
            Sandbox::new(file.path()),
            Err(SandboxError::NotADirectory(_))
        ));
        let dir = tempfile::tempdir().expect("temp dir");
        let sandbox = Sandbox::new(dir.path()).expect("sandbox");
        assert!(matches!(
            sandbox.clone().read_only("/"),
            Err(SandboxError::WholeFileSystem(_))
        ));
        assert_eq!(
            sandbox
                .max_processes(3)
                .map_err(|e| e.to_string())
                .err()
                .as_deref(),
            Some("the sandbox needs room for at least 8 processes, got 3")
        );
    }

    /// Runs each call of `calls` in a forked child, with the filter loaded first or not,
    /// and returns the errno of each (0: it succeeded).
    fn errnos_in_child(calls: &[(libc::c_long, [libc::c_long; 6])], filter: bool) -> Vec<i32> {
        let program = seccomp_program().expect("a filter");
        let fprog = libc::sock_fprog {
            len: (program.len() / 8) as u16,
            filter: program.as_ptr() as *mut libc::sock_filter,
        };
        let mut results = vec![0i32; calls.len()];
        let (read, write) = nix::unistd::pipe().expect("pipe");
        // SAFETY: the child makes only system calls (prctl, syscall, write, _exit) on
        // memory prepared before the fork, and exits without returning.
        unsafe {
            let pid = libc::fork();
            assert!(pid >= 0, "fork");
            if pid == 0 {
                if filter
                    && (libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                        || libc::prctl(libc::PR_SET_SECCOMP, 2, &fprog as *const _) != 0)
                {
                    libc::_exit(3);
                }
                let out = results.as_mut_ptr();
                for (i, (nr, a)) in calls.iter().enumerate() {
                    let r = libc::syscall(*nr, a[0], a[1], a[2], a[3], a[4], a[5]);
                    *out.add(i) = if r == -1 {
                        *libc::__errno_location()
                    } else {
                        0
                    };
                }
                let bytes = calls.len() * 4;
                let sent = libc::write(write.as_raw_fd(), out.cast(), bytes);
                libc::_exit(if sent == bytes as isize { 0 } else { 4 });
            }
            drop(write);
            let mut status = 0;
            libc::waitpid(pid, &mut status, 0);
            assert_eq!(status, 0, "the child failed");
        }
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut File::from(read), &mut bytes).expect("read");
        for (i, chunk) in bytes.chunks(4).enumerate() {
            results[i] = i32::from_ne_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        }
        results
    }

    /// The filter itself refuses each denied call, whoever makes it: made in a child
    /// (with arguments that change nothing), each gets EPERM with the filter, and as root
    /// another answer without it. (Inside a sandbox, the e2e tests make them as the bot.)
    #[test]
    fn the_seccomp_filter_refuses_each_denied_call_even_for_root() {
        let nowhere = c"/nonexistent-hus-filter-test".as_ptr() as libc::c_long;
        let empty = c"".as_ptr() as libc::c_long;
        let buf = [0u8; 256];
        let buf = buf.as_ptr() as libc::c_long;
        let null = std::fs::File::open("/dev/null").expect("/dev/null");
        let null = null.as_raw_fd() as libc::c_long;
        let calls: Vec<(&str, libc::c_long, [libc::c_long; 6])> = vec![
            ("chroot", libc::SYS_chroot, [nowhere, 0, 0, 0, 0, 0]),
            ("mount", libc::SYS_mount, [0, nowhere, 0, 0, 0, 0]),
            ("umount2", libc::SYS_umount2, [nowhere, 0, 0, 0, 0, 0]),
            (
                "pivot_root",
                libc::SYS_pivot_root,
                [nowhere, nowhere, 0, 0, 0, 0],
            ),
            ("setns", libc::SYS_setns, [-1, 0, 0, 0, 0, 0]),
            (
                "open_tree",
                libc::SYS_open_tree,
                [-100, nowhere, 0, 0, 0, 0],
            ),
            ("fsconfig", libc::SYS_fsconfig, [-1, 0, 0, 0, 0, 0]),
            ("fsmount", libc::SYS_fsmount, [-1, 0, 0, 0, 0, 0]),
            ("fspick", libc::SYS_fspick, [-100, nowhere, 0, 0, 0, 0]),
            (
                "mount_setattr",
                libc::SYS_mount_setattr,
                [-1, empty, 0, 0, 0, 0],
            ),
            (
                "ioctl TIOCSTI",
                libc::SYS_ioctl,
                [null, libc::TIOCSTI as libc::c_long, buf, 0, 0, 0],
            ),
            (
                "ioctl TIOCLINUX",
                libc::SYS_ioctl,
                [null, libc::TIOCLINUX as libc::c_long, buf, 0, 0, 0],
            ),
            ("add_key", libc::SYS_add_key, [0, 0, 0, 0, 0, 0]),
            ("request_key", libc::SYS_request_key, [0, 0, 0, 0, 0, 0]),
            ("ptrace", libc::SYS_ptrace, [12, 0, 0, 0, 0, 0]),
            (
                "io_uring_enter",
                libc::SYS_io_uring_enter,
                [-1, 0, 0, 0, 0, 0],
            ),
            (
                "io_uring_register",
                libc::SYS_io_uring_register,
                [-1, 0, 0, 0, 0, 0],
            ),
            ("bpf", libc::SYS_bpf, [0, buf, 0, 0, 0, 0]),
            (
                "kexec_load",
                libc::SYS_kexec_load,
                [0, 0, 0, 0xffff_ffff, 0, 0],
            ),
            (
                "kexec_file_load",
                libc::SYS_kexec_file_load,
                [-1, -1, 0, 0, 0xffff_ffff, 0],
            ),
            (
                "finit_module",
                libc::SYS_finit_module,
                [-1, empty, 0, 0, 0, 0],
            ),
            (
                "delete_module",
                libc::SYS_delete_module,
                [nowhere, 0, 0, 0, 0, 0],
            ),
            ("acct", libc::SYS_acct, [nowhere, 0, 0, 0, 0, 0]),
        ];
        let table: Vec<(libc::c_long, [libc::c_long; 6])> =
            calls.iter().map(|&(_, nr, args)| (nr, args)).collect();
        let open = errnos_in_child(&table, false);
        let filtered = errnos_in_child(&table, true);
        let named = |errnos: &[i32]| -> Vec<(&str, i32)> {
            calls
                .iter()
                .map(|c| c.0)
                .zip(errnos.iter().copied())
                .collect()
        };
        if nix::unistd::geteuid().is_root() {
            let refused: Vec<(&str, i32)> = named(&open)
                .into_iter()
                .filter(|&(_, e)| e == libc::EPERM)
                .collect();
            assert_eq!(refused, [], "refused even without the filter");
        }
        let all_eperm: Vec<(&str, i32)> = calls.iter().map(|c| (c.0, libc::EPERM)).collect();
        assert_eq!(named(&filtered), all_eperm);
        // Every call here is in the list.
        for (name, _, _) in &calls {
            let base = name.split(' ').next().unwrap_or(name);
            assert!(DENIED_SYSCALLS.iter().any(|d| d.0 == base), "{name}");
        }
    }

    #[test]
    fn the_seccomp_filter_compiles_for_this_machine() {
        let program = seccomp_program().expect("a filter");
        // Whole instructions, and room for a check of every refused call.
        assert_eq!(program.len() % 8, 0);
        assert!(
            program.len() / 8 > DENIED_SYSCALLS.len(),
            "{} bytes",
            program.len()
        );
        let fd = seccomp_filter().expect("a pipe");
        let mut read = Vec::new();
        std::io::Read::read_to_end(&mut File::from(fd), &mut read).expect("read");
        assert_eq!(read, program);
    }

    #[test]
    fn the_sandbox_user_is_looked_up_by_name_and_never_root() {
        let nobody = SandboxUser::lookup("nobody").expect("this machine has nobody");
        assert_eq!(
            (nobody.name(), nobody.uid(), nobody.gid()),
            ("nobody", 65534, 65534)
        );
        assert_eq!(nobody.groups, [65534]);
        let refused = |name: &str| SandboxUser::lookup(name).map_err(|e| e.to_string()).err();
        assert_eq!(
            refused("root").as_deref(),
            Some("user \"root\" is root (uid 0): a sandboxed bot never runs as root; name an unprivileged user")
        );
        assert_eq!(
            refused("no-such-hus-user").as_deref(),
            Some("there is no user \"no-such-hus-user\" on this machine")
        );
        // As root (these tests' usual case), a sandbox runs its bot as nobody by default.
        let dir = tempfile::tempdir().expect("temp dir");
        let sandbox = Sandbox::new(dir.path()).expect("sandbox");
        if nix::unistd::geteuid().is_root() {
            assert_eq!(sandbox.run_as_user(), Some(&nobody));
            let daemon = sandbox.user("daemon").expect("daemon");
            assert_eq!(daemon.run_as_user().map(|u| u.uid()), Some(1));
        } else {
            assert_eq!(sandbox.user_to_become().ok(), Some(None));
        }
    }

    #[test]
    fn a_hidden_program_gets_the_installation_to_show() {
        assert_eq!(
            install_prefix(Path::new("/root/.pyenv/shims/python3")),
            Path::new("/root/.pyenv")
        );
        assert_eq!(
            install_prefix(Path::new("/opt/jdk-21/bin/java")),
            Path::new("/opt/jdk-21")
        );
        assert_eq!(
            install_prefix(Path::new("/srv/tools/mybot")),
            Path::new("/srv/tools")
        );
        assert_eq!(install_prefix(Path::new("/bin/sh")), Path::new("/bin"));
        assert_eq!(parse_version("bubblewrap 0.8.0"), Some((0, 8)));
        assert_eq!(parse_version("bubblewrap 0.11.1"), Some((0, 11)));
        assert_eq!(parse_version("bwrap?"), None);
    }
}

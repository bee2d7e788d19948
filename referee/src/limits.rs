//! Per-bot limits a league operator can set: memory (address space), CPU time, open
//! files, working directory, environment, and a sandbox. The resource limits are set in
//! the child between fork and exec, so they bind the bot and everything it starts
//! (bubblewrap and the sandbox's processes too). Without a sandbox they do not isolate
//! the bot: see README.md, "Running untrusted bots".

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::config::{program_path, BotSpec};
use crate::lifetime;
use crate::sandbox::{
    find_bwrap, seccomp_filter, BotCgroup, ProcessBound, Sandbox, SandboxError, SandboxUser,
};

/// Limits for one bot process. `None` leaves the referee's own value.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// RLIMIT_AS in bytes: allocations beyond it fail.
    pub memory: Option<u64>,
    /// RLIMIT_CPU in seconds of CPU time: SIGXCPU, then SIGKILL, past it.
    pub cpu_seconds: Option<u64>,
    /// RLIMIT_NOFILE: most open file descriptors.
    pub open_files: Option<u64>,
    /// Working directory of the bot.
    pub cwd: Option<PathBuf>,
    /// `Some(vars)`: start from an empty environment with only these `NAME=value` pairs
    /// (`NAME` alone copies the referee's value). `None`: inherit the referee's.
    pub env: Option<Vec<String>>,
    /// The bot's nice value, when the referee changed its own (see
    /// [`raise_referee_priority`]): bots run at the priority the referee was started with.
    pub nice: Option<i32>,
    /// `Some`: the bot runs in this sandbox (under bubblewrap; see [`Sandbox`]): it sees
    /// only its own directory and the system's files, has no network, no view of other
    /// processes and a bound on its own. Its working directory is then the sandbox's
    /// directory (`cwd`, if given, must name the same), and its environment starts
    /// empty but for `PATH` and `HOME=/tmp`, plus `env`. `None`: it runs directly.
    pub sandbox: Option<Sandbox>,
}

/// Where the one-by-one marking of inherited descriptors stops, on kernels without
/// close_range.
const MAX_INHERITED_FD: RawFd = 4096;

/// How much higher than its bots the referee runs, when it may.
const REFEREE_PRIORITY_BOOST: i32 = 5;

/// Raises the referee's own scheduling priority a little (nice value 5 lower), when the
/// system allows it (root, or CAP_SYS_NICE), and returns the nice value it had, for its
/// bots. Timing is measured by the referee: on a machine saturated by busy bots, reading
/// an answer or noticing a deadline must not wait for a time slice. Without permission
/// nothing changes.
pub fn raise_referee_priority() -> Option<i32> {
    nix::errno::Errno::clear();
    // SAFETY: getpriority and setpriority on this process only; errno is read right after.
    let current = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
    if current == -1 && nix::errno::Errno::last_raw() != 0 {
        return None;
    }
    let raised =
        unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, current - REFEREE_PRIORITY_BOOST) };
    (raised == 0).then_some(current)
}

impl Limits {
    /// The command that runs `spec` under these limits, in its sandbox if it has one.
    /// Unsandboxed, the bot runs in a process group of its own; sandboxed, bubblewrap
    /// runs in a session of its own (so no bot can reach the referee's terminal) whose
    /// process group holds the sandbox's processes.
    pub(crate) fn command(&self, spec: &BotSpec) -> Result<Prepared, SandboxError> {
        let program = program_path(&spec.argv[0]);
        let (mut command, parts) = match &self.sandbox {
            None => {
                let mut command = Command::new(&program);
                command.args(&spec.argv[1..]).process_group(0);
                if let Some(dir) = &self.cwd {
                    command.current_dir(dir);
                }
                // Its processes are told from the others' by its group and its tag
                // (lifetime.rs). Not by a cgroup: joining one costs milliseconds (a
                // wait for the kernel's RCU grace period on cgroup v1), on the one
                // spawner thread every bot is forked from.
                (command, (None, None, None))
            }
            Some(sandbox) => {
                if let Some(cwd) = &self.cwd {
                    if std::fs::canonicalize(cwd).ok().as_deref() != Some(sandbox.bot_dir()) {
                        return Err(SandboxError::WorkingDirectory {
                            bot_dir: sandbox.bot_dir().to_path_buf(),
                            cwd: cwd.clone(),
                        });
                    }
                }
                let bwrap = find_bwrap()?;
                let user = sandbox.user_to_become()?.cloned();
                let bound = sandbox.process_bound()?;
                let filter = seccomp_filter()?;
                let argv: Vec<OsString> = std::iter::once(program.into_os_string())
                    .chain(spec.argv[1..].iter().map(OsString::from))
                    .collect();
                let mut command = Command::new(bwrap);
                command.args(sandbox.bwrap_args(&argv, &bound, filter.as_raw_fd()));
                let cgroup = match bound {
                    ProcessBound::Cgroup(cgroup) => Some(cgroup),
                    ProcessBound::Rlimit => None,
                };
                (command, (cgroup, Some(filter), user))
            }
        };
        self.set_env(&mut command);
        let tag = self.sandbox.is_none().then(lifetime::new_tag);
        if let Some(tag) = &tag {
            command.env(lifetime::TAG_VAR, tag);
        }
        let (cgroup, seccomp, user) = parts;
        self.set_pre_exec(
            &mut command,
            cgroup.as_ref().map(|c| c.procs_fds()).unwrap_or_default(),
            seccomp.as_ref().map(|f| f.as_raw_fd()),
            user,
        );
        Ok(Prepared {
            command,
            cgroup,
            _seccomp: seccomp,
            sandboxed: self.sandbox.is_some(),
            tag,
        })
    }

    /// The PATH the bot gets, if any.
    pub(crate) fn bot_path(&self) -> Option<OsString> {
        let given = self.env.as_ref().map(|vars| {
            vars.iter().rev().find_map(|var| match var.split_once('=') {
                Some(("PATH", value)) => Some(Some(OsString::from(value))),
                None if var == "PATH" => Some(std::env::var_os("PATH")),
                _ => None,
            })
        });
        match given {
            Some(Some(path)) => path,
            Some(None) if self.sandbox.is_none() => None,
            _ => std::env::var_os("PATH"),
        }
    }

    fn set_env(&self, command: &mut Command) {
        if self.sandbox.is_some() {
            // Nothing of the referee's environment (tokens, say) but its PATH, and a
            // HOME the bot can write in.
            command.env_clear().env("HOME", "/tmp");
            if let Some(path) = std::env::var_os("PATH") {
                command.env("PATH", path);
            }
        } else if self.env.is_some() {
            command.env_clear();
        }
        for var in self.env.iter().flatten() {
            match var.split_once('=') {
                Some((name, value)) => {
                    command.env(name, value);
                }
                None => {
                    if let Some(value) = std::env::var_os(var) {
                        command.env(var, value);
                    }
                }
            }
        }
    }

    /// What the child does between fork and exec: when sandboxed, a session of its own,
    /// no inherited descriptor but the seccomp filter's (for bubblewrap), and the pids
    /// cgroup; then the priority and the resource limits; last, when `hus` is root, it
    /// becomes the sandbox's unprivileged `user`.
    fn set_pre_exec(
        &self,
        command: &mut Command,
        cgroup_procs: Vec<RawFd>,
        seccomp: Option<RawFd>,
        user: Option<SandboxUser>,
    ) {
        let rlimits: Vec<(libc::__rlimit_resource_t, u64)> = [
            (libc::RLIMIT_AS, self.memory),
            (libc::RLIMIT_CPU, self.cpu_seconds),
            (libc::RLIMIT_NOFILE, self.open_files),
        ]
        .into_iter()
        .filter_map(|(resource, value)| value.map(|v| (resource, v)))
        .collect();
        let nice = self.nice;
        let new_session = self.sandbox.is_some();
        // Read before the fork: the parent the child must still have once its
        // parent-death signal is set.
        let referee = std::process::id() as libc::pid_t;
        // SAFETY: the closure runs in the forked child before exec and only calls
        // prctl, getppid, _exit, setsid, close_range, fcntl, write, setpriority,
        // setrlimit, setgroups, setgid and setuid, which are async-signal-safe system
        // calls; it allocates nothing (the vectors were built before the fork and are
        // only read).
        unsafe {
            command.pre_exec(move || {
                if new_session {
                    // No controlling terminal to read or type into. A session is also a
                    // scheduling group of its own where the kernel's autogroup is on:
                    // each sandboxed bot is one (README, "Time stays fair").
                    if libc::setsid() == -1 {
                        return Err(io::Error::last_os_error());
                    }
                    // Whatever the referee inherited without close-on-exec (a socket
                    // from its own parent, say) must not reach the sandbox: bubblewrap
                    // passes descriptors through. Before Linux 5.11, one by one.
                    let all = libc::syscall(
                        libc::SYS_close_range,
                        3 as libc::c_uint,
                        libc::c_uint::MAX,
                        libc::CLOSE_RANGE_CLOEXEC,
                    );
                    if all != 0 {
                        for fd in 3..MAX_INHERITED_FD {
                            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
                        }
                    }
                }
                if let Some(fd) = seccomp {
                    // Opened close-on-exec like every descriptor of the referee; this
                    // one bubblewrap must inherit, to read the filter from it.
                    if libc::fcntl(fd, libc::F_SETFD, 0) == -1 {
                        return Err(io::Error::last_os_error());
                    }
                }
                for &fd in &cgroup_procs {
                    // `0` is the writer itself: from here on, it and everything it
                    // starts count against the cgroups' pids.max and memory budget.
                    if libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
                        return Err(io::Error::last_os_error());
                    }
                }
                if let Some(nice) = nice {
                    // Lowering one's own priority is always allowed.
                    if libc::setpriority(libc::PRIO_PROCESS, 0, nice) != 0 {
                        return Err(io::Error::last_os_error());
                    }
                }
                for &(resource, value) in &rlimits {
                    let limit = libc::rlimit {
                        rlim_cur: value as libc::rlim_t,
                        rlim_max: value as libc::rlim_t,
                    };
                    if libc::setrlimit(resource, &limit) != 0 {
                        return Err(io::Error::last_os_error());
                    }
                }
                if let Some(user) = &user {
                    // Last, once in the cgroup: the cgroup's files stay root's (no user
                    // may move processes in or out), and root's write is what put the
                    // child there. std's `Command::uid` would change user before this
                    // closure runs, too early. A change of user clears a parent-death
                    // signal: one must be asked for after this.
                    user.become_user()?;
                }
                // Killed when the referee dies, however it dies (its forking thread
                // lives as long as it: lifetime.rs). Last, after the change of user,
                // which would clear it; kept across exec (bubblewrap sets its own too,
                // --die-with-parent).
                if libc::prctl(
                    libc::PR_SET_PDEATHSIG,
                    libc::SIGKILL as libc::c_ulong,
                    0,
                    0,
                    0,
                ) == -1
                {
                    return Err(io::Error::last_os_error());
                }
                // The referee died before the prctl: the signal will never come, so
                // go now.
                if libc::getppid() != referee {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
    }
}

/// A command ready to be spawned, and what must live as long as its process.
pub(crate) struct Prepared {
    pub(crate) command: Command,
    /// The sandbox's cgroups, removed when dropped (after the process is gone).
    pub(crate) cgroup: Option<BotCgroup>,
    /// The pipe bubblewrap reads the seccomp filter from: open until the spawn.
    pub(crate) _seccomp: Option<OwnedFd>,
    /// Whether the command runs the bot in a sandbox (under bubblewrap).
    pub(crate) sandboxed: bool,
    /// The tag in an unsandboxed bot's environment (`lifetime::TAG_VAR`).
    pub(crate) tag: Option<String>,
}

impl Sandbox {
    /// Checks, before any game, that this machine can run `spec` in this sandbox under
    /// `limits`: bubblewrap is there and recent enough, it can make the namespaces, the
    /// processes can be bounded, and the bot's program is visible inside. It runs the
    /// sandbox once, exactly as the bot will run, with a shell that looks for the program.
    /// (Here rather than in sandbox.rs: it runs the sandbox under the bot's limits, and
    /// the limits stand on the sandbox, not the other way round.)
    pub fn probe(&self, spec: &BotSpec, limits: &Limits) -> Result<(), SandboxError> {
        self.probe_with(spec, &limits.bot_path(), |probe| {
            let mut prepared = limits.command(probe)?;
            let output = prepared
                .command
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .output();
            drop(prepared);
            Ok(output)
        })
    }
}

//! Per-bot limits a league operator can set: memory (address space), CPU time, open
//! files, working directory, environment. They are set in the child between fork and
//! exec, so they bind the bot and everything it starts. They are not a sandbox: see
//! README.md, "Running untrusted bots".

use std::io;
use std::path::PathBuf;

use tokio::process::Command;

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
}

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
    /// Applies the limits to `command` before it is spawned.
    pub fn apply(&self, command: &mut Command) -> io::Result<()> {
        if let Some(dir) = &self.cwd {
            command.current_dir(dir);
        }
        if let Some(vars) = &self.env {
            command.env_clear();
            for var in vars {
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
        let rlimits: Vec<(libc::__rlimit_resource_t, u64)> = [
            (libc::RLIMIT_AS, self.memory),
            (libc::RLIMIT_CPU, self.cpu_seconds),
            (libc::RLIMIT_NOFILE, self.open_files),
        ]
        .into_iter()
        .filter_map(|(resource, value)| value.map(|v| (resource, v)))
        .collect();
        let nice = self.nice;
        if !rlimits.is_empty() || nice.is_some() {
            // SAFETY: the closure runs in the forked child before exec and only calls
            // setpriority and setrlimit, which are async-signal-safe; it allocates
            // nothing (the vector was built before the fork and is only read).
            unsafe {
                command.pre_exec(move || {
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
                    Ok(())
                });
            }
        }
        Ok(())
    }
}

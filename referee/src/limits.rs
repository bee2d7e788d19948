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
        if !rlimits.is_empty() {
            // SAFETY: the closure runs in the forked child before exec and only calls
            // setrlimit, which is async-signal-safe; it allocates nothing (the vector
            // was built before the fork and is only read).
            unsafe {
                command.pre_exec(move || {
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

//! A program run once under a bot's [`Limits`], its stdout and stderr piped to the
//! caller: what builds an uploaded bot in the sandbox (the `upload` crate). It is forked
//! like every bot (the spawner thread of `lifetime.rs`, so its parent-death signal
//! holds), joins the same cgroups, and is killed with its whole process group if it is
//! dropped before it exits.

use std::io;
use std::process::{ExitStatus, Stdio};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::process::{ChildStderr, ChildStdout, Command};

use crate::bot::unwrap_bwrap_status;
use crate::config::BotSpec;
use crate::lifetime::{self, Leader};
use crate::limits::Limits;
use crate::sandbox::{BotCgroup, MemoryEvents};

/// A process started by [`Limits::spawn_once`]: stdin empty, stdout and stderr piped.
pub struct OnceProcess {
    leader: Leader,
    pgid: i32,
    cgroup: Option<BotCgroup>,
    sandboxed: bool,
    exited: bool,
}

impl Limits {
    /// Starts `spec` once under these limits (in its sandbox, if any), with an empty
    /// stdin and its stdout and stderr piped: take them with
    /// [`OnceProcess::take_stdout`] and [`OnceProcess::take_stderr`] and read them,
    /// or the process blocks on a full pipe.
    pub async fn spawn_once(&self, spec: &BotSpec) -> io::Result<OnceProcess> {
        let prepared = self.command(spec).map_err(io::Error::other)?;
        let sandboxed = prepared.sandboxed;
        let mut command = Command::from(prepared.command);
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let leader = lifetime::spawn(command).await?;
        let pgid = leader.pid();
        Ok(OnceProcess {
            leader,
            pgid,
            cgroup: prepared.cgroup,
            sandboxed,
            exited: false,
        })
    }
}

impl OnceProcess {
    /// Its stdout, once.
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.leader.child().stdout.take()
    }

    /// Its stderr, once.
    pub fn take_stderr(&mut self) -> Option<ChildStderr> {
        self.leader.child().stderr.take()
    }

    /// Waits for it to exit (cancel-safe). A sandboxed process's status 128+N from
    /// bubblewrap is given as signal N, as for a bot.
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        let status = self.leader.child().wait().await?;
        self.exited = true;
        Ok(if self.sandboxed {
            unwrap_bwrap_status(status)
        } else {
            status
        })
    }

    /// Kills its process group at once (SIGKILL); a sandbox goes whole with its
    /// bubblewrap. [`OnceProcess::wait`] then reaps it.
    pub fn kill(&self) {
        let _ = killpg(Pid::from_raw(self.pgid), Signal::SIGKILL);
    }

    /// What its sandbox's memory cgroup counted (`None`: no memory cgroup).
    pub fn memory_events(&self) -> Option<MemoryEvents> {
        self.cgroup.as_ref().and_then(|c| c.memory_events())
    }

    /// How many times a fork or clone failed for its sandbox's bound on processes
    /// (`None`: no pids cgroup, or one that does not count it).
    pub fn process_bound_hits(&self) -> Option<u64> {
        self.cgroup.as_ref().and_then(|c| c.process_bound_hits())
    }
}

impl Drop for OnceProcess {
    fn drop(&mut self) {
        if !self.exited {
            self.kill();
        }
    }
}

//! `--follow` on a log that has stopped growing: is its writer still there? The log's
//! header names the process that writes it ([`Writer`]: pid, start time, boot id, PID
//! namespace, host). That process is gone when its pid is free, a zombie, or belongs to
//! a process that started later, or when the machine has restarted since. When the
//! log was written on another machine or in another PID namespace, nothing here can
//! tell, and only an idle limit ends the wait.

use crate::records::{boot_id, host_name, pid_namespace, start_time, Writer};

use super::text::clean;

/// What this process can tell about a log's writer.
#[derive(Debug, PartialEq, Eq)]
pub enum WriterState {
    /// It runs.
    Running,
    /// It is gone; why, in words.
    Gone(String),
    /// It cannot be told from here; why, in words.
    Unknown(String),
}

/// The state of `writer`, as seen from this process.
pub fn writer_state(writer: &Writer) -> WriterState {
    let pid = writer.pid;
    let (Some(boot), Some(namespace), Some(host)) = (boot_id(), pid_namespace(), host_name())
    else {
        return WriterState::Unknown("this system's /proc does not show processes".into());
    };
    if writer.boot_id != boot {
        if writer.host == host {
            return WriterState::Gone(format!(
                "the referee that wrote it (pid {pid}) ran before this machine last started"
            ));
        }
        return WriterState::Unknown(format!(
            "it is written on another machine ({})",
            clean(&writer.host, 100)
        ));
    }
    if writer.pid_ns != namespace {
        return WriterState::Unknown(format!(
            "its writer (pid {pid}) runs in another PID namespace ({}, this is {namespace})",
            clean(&writer.pid_ns, 100)
        ));
    }
    match start_time(pid) {
        None => WriterState::Gone(format!("the referee writing it (pid {pid}) is gone")),
        Some((_, true)) => {
            WriterState::Gone(format!("the referee writing it (pid {pid}) has exited"))
        }
        Some((start, false)) if start != writer.start_time => WriterState::Gone(format!(
            "the referee writing it (pid {pid}) is gone (the pid is now another process's)"
        )),
        Some(_) => WriterState::Running,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_runs_and_a_changed_start_time_is_another_process() {
        let me = Writer::this_process().expect("a Linux /proc");
        assert_eq!(writer_state(&me), WriterState::Running);
        let mut earlier = me.clone();
        earlier.start_time -= 1;
        assert_eq!(
            writer_state(&earlier),
            WriterState::Gone(format!(
                "the referee writing it (pid {}) is gone (the pid is now another process's)",
                me.pid
            ))
        );
        let mut rebooted = me.clone();
        rebooted.boot_id = "00000000-0000-0000-0000-000000000000".into();
        assert!(matches!(writer_state(&rebooted), WriterState::Gone(_)));
        rebooted.host = "elsewhere\u{1b}[2J".into();
        assert_eq!(
            writer_state(&rebooted),
            WriterState::Unknown("it is written on another machine (elsewhere\\x1b[2J)".into())
        );
        let mut contained = me.clone();
        contained.pid_ns = "pid:[1]".into();
        assert!(matches!(writer_state(&contained), WriterState::Unknown(_)));
    }

    #[test]
    fn a_free_pid_is_gone() {
        let mut me = Writer::this_process().expect("a Linux /proc");
        // Above the largest pid Linux hands out (4194304).
        me.pid = 4_194_305;
        assert_eq!(
            writer_state(&me),
            WriterState::Gone("the referee writing it (pid 4194305) is gone".into())
        );
    }
}

//! The cgroups of a sandboxed bot: a pids cgroup and a memory cgroup ([`BotCgroup`]),
//! made in the referee's own cgroup of a v1 hierarchy or at the root of cgroup v2, joined
//! by the bot's process between fork and exec, removed once it is gone.

use super::*;

/// The cgroups made for one sandboxed bot process, removed when dropped (once empty):
/// a pids cgroup (its processes and threads) and, where one can be made, a memory
/// cgroup (everything its processes make the kernel hold for them: their pages, the
/// files of its memory file systems and `memfd`s, pipe and socket buffers, which no
/// per-process limit sees). On cgroup v2 both are one directory; on v1 each controller
/// has a hierarchy, and a directory, of its own.
pub(crate) struct BotCgroup {
    /// The pids cgroup (on v2 the memory controller's too).
    pub(super) pids: CgroupDir,
    /// The memory cgroup's own directory, on v1.
    pub(super) memory_dir: Option<CgroupDir>,
    /// The memory bound set, `None` when no memory cgroup could be made.
    pub(super) memory: Option<MemoryBound>,
}

/// One cgroup directory made by this referee.
pub(super) struct CgroupDir {
    pub(super) dir: PathBuf,
    /// Its `cgroup.procs`, opened for the child to write itself into before it runs
    /// bubblewrap: joining before the exec, the bot cannot fork its way around the
    /// bound. Opened close-on-exec, so the bot never holds it.
    pub(super) procs: File,
    /// Set once the directory is gone.
    pub(super) removed: bool,
}

/// A sandbox's memory bound: its budget, and where the kernel counts what it did.
#[derive(Clone, Debug)]
pub(super) struct MemoryBound {
    budget: u64,
    dir: PathBuf,
    v2: bool,
}

/// What the memory cgroup saw of a sandbox that went over its budget.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryEvents {
    /// The budget, in bytes.
    pub budget: u64,
    /// Times the kernel killed one of its processes for it (the out-of-memory killer).
    pub oom_kills: u64,
    /// Times an allocation hit the budget (then reclaimed, failed or killed for).
    pub hits: u64,
}

impl MemoryEvents {
    /// The words a crash's detail adds when the kernel killed one of its processes for
    /// the budget; `None` otherwise (reaching the budget alone says nothing of a crash:
    /// the kernel reclaims the page cache there as a matter of course).
    pub fn words(&self) -> Option<String> {
        (self.oom_kills > 0).then(|| {
            format!(
                "the kernel killed it: over its sandbox's memory budget of {} \
                 (--sandbox-memory; its processes' memory, /tmp, /dev/shm and memfd files \
                 and pipe buffers count)",
                human_bytes(self.budget)
            )
        })
    }
}

/// `1 GiB`, `128 MiB`, `1536 KiB`, `100 bytes`: exact, in the largest unit that divides.
pub(super) fn human_bytes(bytes: u64) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    format!("{bytes} bytes")
}

/// Numbers this referee's cgroups.
pub(super) static CGROUP_SEQ: AtomicU64 = AtomicU64::new(0);
/// How long a dropped cgroup waits for its last processes to be gone before removal.
pub(super) const CGROUP_REMOVE_WAIT: Duration = Duration::from_secs(5);
/// Whether the referee said it could make no memory cgroup (said once).
pub(super) static NO_MEMORY_CGROUP_SAID: std::sync::Once = std::sync::Once::new();

impl CgroupDir {
    /// A new cgroup `name` under `base`, its settings written (`(file, value)`, in order;
    /// a file that does not exist is skipped when its value is optional), its
    /// `cgroup.procs` open.
    fn create(base: &Path, name: &str, settings: &[(&str, String, bool)]) -> io::Result<CgroupDir> {
        sweep_stale(base);
        let dir = base.join(name);
        std::fs::create_dir(&dir).map_err(|e| {
            io::Error::new(e.kind(), format!("cannot create {}: {e}", dir.display()))
        })?;
        let set_up = settings
            .iter()
            .try_for_each(|(file, value, optional)| {
                let path = dir.join(file);
                match std::fs::write(&path, value) {
                    Err(e) if *optional && !path.exists() => {
                        let _ = e;
                        Ok(())
                    }
                    other => other
                        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display()))),
                }
            })
            .and_then(|()| {
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(dir.join("cgroup.procs"))
            });
        match set_up {
            Ok(procs) => Ok(CgroupDir {
                dir,
                procs,
                removed: false,
            }),
            Err(e) => {
                let _ = std::fs::remove_dir(&dir);
                Err(io::Error::new(
                    e.kind(),
                    format!("cannot set up {}: {e}", dir.display()),
                ))
            }
        }
    }

    /// Removes it once its last process is gone, waiting up to `within`.
    async fn remove(&mut self, within: Duration) {
        let deadline = tokio::time::Instant::now() + within;
        while std::fs::remove_dir(&self.dir).is_err() {
            if tokio::time::Instant::now() >= deadline {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        self.removed = true;
    }
}

impl Drop for CgroupDir {
    fn drop(&mut self) {
        // A cgroup can be removed only once its last process is gone, which may be a
        // moment after the bot was reaped (the sandbox's other processes die with its
        // pid namespace). Whatever is left when the referee exits is swept by the next
        // referee (`sweep_stale`).
        if self.removed || std::fs::remove_dir(&self.dir).is_ok() {
            return;
        }
        let dir = self.dir.clone();
        std::thread::spawn(move || {
            let start = std::time::Instant::now();
            while std::fs::remove_dir(&dir).is_err() && start.elapsed() < CGROUP_REMOVE_WAIT {
                std::thread::sleep(Duration::from_millis(20));
            }
        });
    }
}

impl BotCgroup {
    /// New cgroups with `max` as their pids.max (`None`: no bound) and `memory` bytes as
    /// their memory budget, without swap. No pids cgroup is an error; no memory cgroup
    /// is said once (a warning) and the sandbox runs without one.
    pub(super) fn create(max: Option<u32>, memory: u64) -> io::Result<BotCgroup> {
        let pids_base = hierarchy("pids")?;
        let seq = CGROUP_SEQ.fetch_add(1, Ordering::Relaxed);
        let name = format!("hus-{}-{seq}", std::process::id());
        let memory_base = hierarchy("memory");
        let shared = matches!(&memory_base, Ok(m) if m.v2 && m.base == pids_base.base);
        let mut settings = vec![(
            "pids.max",
            max.map_or_else(|| "max".to_string(), |m| m.to_string()),
            false,
        )];
        if shared {
            settings.extend(memory_settings(memory, true));
        }
        let pids = CgroupDir::create(&pids_base.base, &name, &settings);
        let pids = match pids {
            Err(e) if shared => {
                // The memory settings may be what failed: the pids bound alone, then.
                say_no_memory_cgroup(&e);
                let settings = &settings[..1];
                return Ok(BotCgroup {
                    pids: CgroupDir::create(&pids_base.base, &name, settings)?,
                    memory_dir: None,
                    memory: None,
                });
            }
            other => other?,
        };
        let (memory_dir, bound) = if shared {
            let bound = MemoryBound {
                budget: memory,
                dir: pids.dir.clone(),
                v2: true,
            };
            (None, Some(bound))
        } else {
            let made = memory_base.and_then(|m| {
                let settings = memory_settings(memory, m.v2);
                CgroupDir::create(&m.base, &name, &settings).map(|dir| (dir, m.v2))
            });
            match made {
                Ok((dir, v2)) => {
                    let bound = MemoryBound {
                        budget: memory,
                        dir: dir.dir.clone(),
                        v2,
                    };
                    (Some(dir), Some(bound))
                }
                Err(e) => {
                    say_no_memory_cgroup(&e);
                    (None, None)
                }
            }
        };
        Ok(BotCgroup {
            pids,
            memory_dir,
            memory: bound,
        })
    }

    /// The descriptors of its `cgroup.procs` files: writing `0` to each moves the writer
    /// in.
    pub(crate) fn procs_fds(&self) -> Vec<RawFd> {
        std::iter::once(&self.pids)
            .chain(&self.memory_dir)
            .map(|d| d.procs.as_raw_fd())
            .collect()
    }

    /// Its pids cgroup's `cgroup.procs`, which lists its processes.
    pub(crate) fn procs_path(&self) -> PathBuf {
        self.pids.dir.join("cgroup.procs")
    }

    /// How many times a fork or clone failed for its pids cgroup's bound (`pids.events`'s
    /// `max`); `None` where the kernel does not count it.
    pub(crate) fn process_bound_hits(&self) -> Option<u64> {
        let text = std::fs::read_to_string(self.pids.dir.join("pids.events")).ok()?;
        text.lines().find_map(|line| {
            let (key, value) = line.split_once(' ')?;
            (key == "max").then(|| value.trim().parse().ok()).flatten()
        })
    }

    /// What its memory cgroup counted; `None` without one.
    pub(crate) fn memory_events(&self) -> Option<MemoryEvents> {
        let bound = self.memory.as_ref()?;
        let count = |file: &str, key: &str| -> u64 {
            std::fs::read_to_string(bound.dir.join(file))
                .ok()
                .and_then(|text| {
                    text.lines().find_map(|line| {
                        let (k, v) = line.split_once(' ')?;
                        (k == key).then(|| v.trim().parse().ok()).flatten()
                    })
                })
                .unwrap_or(0)
        };
        let (oom_kills, hits) = if bound.v2 {
            (
                count("memory.events", "oom_kill"),
                count("memory.events", "max"),
            )
        } else {
            let failcnt = std::fs::read_to_string(bound.dir.join("memory.failcnt"))
                .ok()
                .and_then(|t| t.trim().parse().ok())
                .unwrap_or(0);
            (count("memory.oom_control", "oom_kill"), failcnt)
        };
        Some(MemoryEvents {
            budget: bound.budget,
            oom_kills,
            hits,
        })
    }

    /// Removes it once its last process is gone, waiting up to `within`; past that,
    /// dropping it goes on trying in the background.
    pub(crate) async fn remove(mut self, within: Duration) {
        self.pids.remove(within).await;
        if let Some(dir) = self.memory_dir.as_mut() {
            dir.remove(within).await;
        }
    }
}

/// The files that bound a memory cgroup to `budget` bytes without swap (`optional`
/// where a kernel may not have them: swap accounting off).
pub(super) fn memory_settings(budget: u64, v2: bool) -> Vec<(&'static str, String, bool)> {
    if v2 {
        vec![
            ("memory.max", budget.to_string(), false),
            ("memory.swap.max", "0".to_string(), true),
            // Over the budget, the whole sandbox goes: no half-killed bot plays on.
            ("memory.oom.group", "1".to_string(), true),
        ]
    } else {
        vec![
            ("memory.limit_in_bytes", budget.to_string(), false),
            // Memory and swap together: no more than memory alone.
            ("memory.memsw.limit_in_bytes", budget.to_string(), true),
            ("memory.swappiness", "0".to_string(), true),
        ]
    }
}

/// Says, once, that sandboxes run without a memory cgroup, and what that leaves.
pub(super) fn say_no_memory_cgroup(e: &io::Error) {
    NO_MEMORY_CGROUP_SAID.call_once(|| {
        tracing::warn!(
            target: "referee",
            "no memory cgroup can be made for sandboxed bots ({e}): a sandbox's memory is \
             bounded only per process (--bot-memory) and its /tmp and /dev/shm by \
             --sandbox-tmp; memfd files, pipe and socket buffers are not bounded"
        );
    });
}

/// A cgroup hierarchy where new cgroups of one controller can be made.
pub(super) struct Hierarchy {
    base: PathBuf,
    v2: bool,
}

/// Where new cgroups of `controller` (`pids`, `memory`) can be made: under the referee's
/// own cgroup of a cgroup v1 hierarchy with that controller (so that a bound on the
/// referee, a service's TasksMax or MemoryMax say, binds its bots too), or at the root
/// of the cgroup v2 hierarchy when it offers the controller (enabled there for its
/// children if it is not yet): v2 lets no cgroup hold both processes and children with
/// controllers, so not under the referee's own.
pub(super) fn hierarchy(controller: &str) -> io::Result<Hierarchy> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo")?;
    let mut v2 = None;
    for line in mountinfo.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let Some(mount_point) = left.split(' ').nth(4) else {
            continue;
        };
        let mut right = right.split(' ');
        let (fstype, options) = (right.next(), right.nth(1));
        match fstype {
            Some("cgroup") if options.is_some_and(|o| o.split(',').any(|o| o == controller)) => {
                let own = own_v1_cgroup(controller).unwrap_or_default();
                return Ok(Hierarchy {
                    base: Path::new(mount_point).join(own.trim_start_matches('/')),
                    v2: false,
                });
            }
            Some("cgroup2") => v2 = Some(PathBuf::from(mount_point)),
            _ => {}
        }
    }
    let Some(root) = v2 else {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("no cgroup hierarchy with the {controller} controller is mounted"),
        ));
    };
    let has = |file: &str| {
        std::fs::read_to_string(root.join(file))
            .is_ok_and(|text| text.split_whitespace().any(|c| c == controller))
    };
    if !has("cgroup.controllers") {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "the cgroup v2 hierarchy {} has no {controller} controller",
                root.display()
            ),
        ));
    }
    if !has("cgroup.subtree_control") {
        std::fs::write(
            root.join("cgroup.subtree_control"),
            format!("+{controller}"),
        )?;
    }
    Ok(Hierarchy {
        base: root,
        v2: true,
    })
}

/// This process's cgroup in the v1 hierarchy of `controller`, from `/proc/self/cgroup`
/// (`8:pids:/system.slice/x.service`).
pub(super) fn own_v1_cgroup(controller: &str) -> Option<String> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    text.lines().find_map(|line| {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        controllers
            .split(',')
            .any(|c| c == controller)
            .then(|| path.to_string())
    })
}

/// Removes the empty cgroups of referees that are gone (`hus-PID-N`, no process PID).
pub(super) fn sweep_stale(base: &Path) {
    let Ok(dir) = std::fs::read_dir(base) else {
        return;
    };
    for entry in dir.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("hus-"))
            .and_then(|n| n.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new("/proc").join(pid.to_string()).exists() {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

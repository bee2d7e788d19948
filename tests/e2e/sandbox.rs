//! `--sandbox`: a hostile bot (`tests/bots/hostile.py`) tries, one way per test, to reach
//! the network, other files, other processes and the machine's process table; every
//! attempt fails, nothing outside sees it, and the set is still played and logged.
//! Where it is safe, the same attempt without `--sandbox` is shown to succeed, so that
//! each test can fail. The sample bots pass `hus check-bot --sandbox`.
//!
//! These tests need bubblewrap, which tests/setup.sh installs: without it they fail,
//! saying so.

use std::io::Read;
use std::net::TcpListener;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use crate::common::*;
use crate::untrusted::tag;

/// Fails, clearly, when bubblewrap is missing.
fn require_bwrap() {
    let found = Command::new("bwrap")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "bubblewrap (bwrap) is not installed: tests/setup.sh installs it (apt-get install bubblewrap)"
    );
}

/// The flags that sandbox both bots, with the installation of `python3` shown read-only
/// when it lives outside /usr (on this project's machine, a pyenv under /root): what
/// `hus` itself asks an organiser to add. As root, the bots run as `nobody`, who cannot
/// reach /root: they then use the system's Python ([`sandbox_env`]), and the checkout is
/// made reachable ([`let_sandbox_user_in`]).
pub(crate) fn sandbox_flags() -> Vec<String> {
    require_bwrap();
    static CHECKOUT: OnceLock<()> = OnceLock::new();
    CHECKOUT.get_or_init(|| {
        let_sandbox_user_in(&root_dir().join("sample-bots"));
        let_sandbox_user_in(&root_dir().join("tests/bots"));
        let_sandbox_user_in(Path::new(env!("CARGO_BIN_EXE_hus")));
    });
    if running_as_root() {
        return vec!["--sandbox".to_string()];
    }
    static PYTHON_RO: OnceLock<Option<PathBuf>> = OnceLock::new();
    let ro = PYTHON_RO.get_or_init(|| {
        let out = Command::new("sh")
            .args(["-c", "command -v python3"])
            .output()
            .expect("sh runs");
        let python = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if python.starts_with("/usr") || python.starts_with("/bin") {
            return None;
        }
        let dir = python.parent().expect("python3 has a directory");
        let named = dir.file_name().and_then(|n| n.to_str());
        Some(match named {
            Some("bin" | "shims") => dir.parent().expect("an installation").to_path_buf(),
            _ => dir.to_path_buf(),
        })
    });
    let mut flags = vec!["--sandbox".to_string()];
    if let Some(ro) = ro {
        flags.extend(["--sandbox-ro".to_string(), ro.display().to_string()]);
    }
    flags
}

/// The environment of a `hus` that runs sandboxed Python bots: as root, the system's
/// `python3` first on PATH (`nobody`, whom the bots run as, cannot reach /root/.pyenv);
/// otherwise nothing changes.
pub(crate) fn sandbox_env() -> Vec<(&'static str, String)> {
    if !running_as_root() {
        return Vec::new();
    }
    let path = std::env::var("PATH").unwrap_or_default();
    vec![("PATH", format!("/usr/bin:/bin:{path}"))]
}

/// As root, lets the sandbox's user (`nobody`) reach `path`: search permission for
/// others on every directory above it that lacks it (a checkout in a private directory,
/// as `mktemp -d` makes them, or a temporary directory), and read permission (and
/// search, for a directory) on `path` itself. What an organiser does for the bots'
/// directories (README, "Running untrusted bots"). Not root: nothing to do.
pub(crate) fn let_sandbox_user_in(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if !running_as_root() {
        return;
    }
    let add = |dir: &Path, bits: u32| {
        if let Ok(meta) = std::fs::metadata(dir) {
            let mode = meta.permissions().mode();
            if mode & bits != bits {
                std::fs::set_permissions(dir, PermissionsExt::from_mode(mode | bits))
                    .expect("chmod");
            }
        }
    };
    for dir in path.ancestors().skip(1) {
        add(dir, 0o001);
    }
    add(path, if path.is_dir() { 0o005 } else { 0o004 });
}

/// A league in miniature, outside /tmp (which the sandbox replaces by its own):
/// `ROOT/secret.txt`, `ROOT/league/league.sqlite`, `ROOT/bots/other/secret.txt`, and the
/// hostile bot in `ROOT/bots/hostile/`.
struct Arena {
    _dir: LogDir,
    root: PathBuf,
    bot_dir: PathBuf,
    secret: PathBuf,
    other_secret: PathBuf,
    database: PathBuf,
    /// What the planted files hold: found in no sandboxed bot's output.
    secret_text: String,
}

fn arena() -> Arena {
    let dir = LogDir::new_in(env!("CARGO_TARGET_TMPDIR"));
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    let bot_dir = root.join("bots/hostile");
    let other = root.join("bots/other");
    let league = root.join("league");
    for d in [&bot_dir, &other, &league] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    std::fs::copy(
        root_dir().join("tests/bots/hostile.py"),
        bot_dir.join("hostile.py"),
    )
    .expect("copy the hostile bot");
    let secret_text = format!("the-secret-{}", std::process::id());
    let secret = root.join("secret.txt");
    let other_secret = other.join("secret.txt");
    let database = league.join("league.sqlite");
    std::fs::write(&secret, &secret_text).expect("plant");
    std::fs::write(&other_secret, &secret_text).expect("plant");
    std::fs::write(&database, format!("SQLite format 3\0{secret_text}")).expect("plant");
    let_sandbox_user_in(&bot_dir);
    Arena {
        _dir: dir,
        root,
        bot_dir,
        secret,
        other_secret,
        database,
        secret_text,
    }
}

fn root_dir() -> PathBuf {
    crate::common::root()
}

impl Arena {
    /// The hostile bot's command: `MODE ARGS` and a tag.
    fn hostile(&self, mode_and_args: &str, marker: &str) -> String {
        format!(
            "python3 {} {mode_and_args} --tag {marker}",
            self.bot_dir.join("hostile.py").display()
        )
    }
}

/// A bot that plays correctly, tagged (so the hostile bot can name it, and /proc find it).
fn decent(marker: &str) -> String {
    format!("{} --tag {marker}", misbehave("ok"))
}

const GAMES: u64 = 2;

/// Plays `GAMES` games, the hostile bot as A; returns the set and A's `hostile:` lines.
fn play_hostile(a: &str, b: &str, extra: &[String]) -> (Played, Vec<String>) {
    // Generous times: the verdicts here never depend on them.
    let mut args: Vec<&str> = vec![
        "--games",
        "2",
        "--seed",
        "3",
        "--ready-time",
        "30s",
        "--move-time",
        "10s",
    ];
    args.extend(extra.iter().map(String::as_str));
    let p = play_env(a, b, &args, &sandbox_env());
    assert_eq!(p.summary["games_played"], GAMES, "{}", p.summary);
    let stderr = p
        .log
        .with_file_name(p.records[0]["bots"][0]["stderr"].as_str().expect("name"));
    let text = std::fs::read_to_string(stderr).expect("stderr file");
    let lines = text
        .lines()
        .filter_map(|l| l.strip_prefix("hostile: "))
        .map(str::to_string)
        .collect();
    (p, lines)
}

/// Neither bot faulted: the attempt cost the hostile bot nothing but its aim, and the
/// other bot was not disturbed.
fn no_faults(p: &Played) {
    let faults = of_type(&p.records, "fault");
    assert!(faults.is_empty(), "{faults:?}");
}

#[test]
fn a_sandboxed_bot_cannot_connect_to_a_port_of_the_host() {
    let a = arena();
    let listener = TcpListener::bind("127.0.0.1:0").expect("listen");
    listener.set_nonblocking(true).expect("non-blocking");
    let port = listener.local_addr().expect("address").port();
    let bot = a.hostile(&format!("connect {port}"), &tag("net"));
    let flags = sandbox_flags();

    let (p, lines) = play_hostile(&bot, &random_bot(), &flags);
    no_faults(&p);
    assert_eq!(
        lines,
        [format!(
            "connect 127.0.0.1:{port}: failed: ConnectionRefusedError: [Errno 111] Connection refused"
        )]
    );
    let err = listener.accept().map(|_| ()).map_err(|e| e.kind());
    assert_eq!(
        err,
        Err(std::io::ErrorKind::WouldBlock),
        "the listener saw a connection"
    );

    // The same bot, not sandboxed, gets through: the listener and the bot work.
    let (_, lines) = play_hostile(&bot, &random_bot(), &[]);
    assert_eq!(lines, [format!("connect 127.0.0.1:{port}: connected")]);
    listener.set_nonblocking(false).expect("blocking");
    let (mut stream, _) = listener.accept().expect("a connection");
    let mut text = String::new();
    stream.read_to_string(&mut text).expect("read");
    assert_eq!(text, "hello from the bot\n");
}

#[test]
fn a_sandboxed_bot_reads_nothing_outside_its_directory() {
    let a = arena();
    let own = a.bot_dir.join("hostile.py");
    let own_text = std::fs::read(&own).expect("own file");
    let own_size = own_text.len();
    let own_start = String::from_utf8_lossy(&own_text[..60]).replace('\n', "\\n");
    let paths = [&a.secret, &a.other_secret, &own];
    let listed = |extra: &str| {
        let mut list: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        list.push(extra.to_string());
        list.join(" ")
    };
    let bot = a.hostile(&format!("read {}", listed("/etc/shadow")), &tag("read"));
    let (p, lines) = play_hostile(&bot, &random_bot(), &sandbox_flags());
    no_faults(&p);
    let absent = "failed: FileNotFoundError: [Errno 2] No such file or directory";
    assert_eq!(
        lines,
        [
            format!(
                "read {}: {absent}: '{}'",
                a.secret.display(),
                a.secret.display()
            ),
            format!(
                "read {}: {absent}: '{}'",
                a.other_secret.display(),
                a.other_secret.display()
            ),
            format!("read {}: got {own_size} bytes: {own_start}", own.display()),
            format!("read /etc/shadow: {absent}: '/etc/shadow'"),
        ]
    );

    // Not sandboxed, it reads the secrets (the test's planted files are really there).
    let bot = a.hostile(&format!("read {}", a.secret.display()), &tag("read-open"));
    let (_, lines) = play_hostile(&bot, &random_bot(), &[]);
    assert_eq!(
        lines,
        [format!(
            "read {}: got {} bytes: {}",
            a.secret.display(),
            a.secret_text.len(),
            a.secret_text
        )]
    );
}

#[test]
fn a_sandboxed_bot_writes_only_in_its_private_tmp_or_its_directory_if_writable() {
    let a = arena();
    let marker = tag("write");
    let outside = a.root.join("written.txt");
    let other = a.root.join("bots/other/written.txt");
    let own = a.bot_dir.join("written.txt");
    let etc = format!("/etc/hus-written-{}", std::process::id());
    let usr = format!("/usr/hus-written-{}", std::process::id());
    let tmp = format!("/tmp/hus-written-{}", std::process::id());
    let dev = format!("/dev/hus-written-{}", std::process::id());
    let targets = [
        outside.display().to_string(),
        other.display().to_string(),
        etc.clone(),
        usr.clone(),
        dev.clone(),
        tmp.clone(),
        own.display().to_string(),
    ];
    let bot = a.hostile(&format!("write {}", targets.join(" ")), &marker);
    let read_only = "failed: OSError: [Errno 30] Read-only file system";
    let absent = "failed: FileNotFoundError: [Errno 2] No such file or directory";
    // A checkout under /tmp (a CI clone there) puts the test's files where the bot sees
    // its own private /tmp: its write then lands there, not on the host (checked below).
    let outside_result = if outside.starts_with("/tmp") {
        "wrote".to_string()
    } else {
        format!("{read_only}: '{}'", outside.display())
    };
    let expected = |own_result: &str| {
        vec![
            format!("write {}: {outside_result}", outside.display()),
            format!("write {}: {absent}: '{}'", other.display(), other.display()),
            format!("write {etc}: {read_only}: '{etc}'"),
            format!("write {usr}: {read_only}: '{usr}'"),
            format!("write {dev}: {read_only}: '{dev}'"),
            format!("write {tmp}: wrote"),
            format!("write {}: {own_result}", own.display()),
        ]
    };

    let (p, lines) = play_hostile(&bot, &random_bot(), &sandbox_flags());
    no_faults(&p);
    assert_eq!(
        lines,
        expected(&format!("{read_only}: '{}'", own.display()))
    );
    for path in [&outside, &other, &own] {
        assert!(!path.exists(), "{} was written", path.display());
    }
    for path in [&etc, &usr, &dev, &tmp] {
        assert!(!Path::new(path).exists(), "{path} was written on the host");
    }

    // --sandbox-writable: its own directory, and nothing more. As root the bot is
    // nobody, to whom the directory must then belong (and --sandbox-writable is for
    // both bots).
    if running_as_root() {
        std::os::unix::fs::chown(&a.bot_dir, Some(65534), Some(65534)).expect("chown");
    }
    let mut flags = sandbox_flags();
    flags.push("--sandbox-writable".into());
    // Both bots are the hostile one: each bot's directory must be nobody's.
    let (p, lines) = play_hostile(&bot, &bot, &flags);
    no_faults(&p);
    assert_eq!(lines, expected("wrote"));
    assert_eq!(
        std::fs::read_to_string(&own).ok().as_deref(),
        Some("written by the hostile bot\n")
    );
    for path in [&outside, &other] {
        assert!(!path.exists(), "{} was written", path.display());
    }
    for path in [&etc, &usr, &dev, &tmp] {
        assert!(!Path::new(path).exists(), "{path} was written on the host");
    }

    // Not sandboxed, it writes outside its directory (only the test's own paths here).
    let bot = a.hostile(&format!("write {}", outside.display()), &tag("write-open"));
    let (_, lines) = play_hostile(&bot, &random_bot(), &[]);
    assert_eq!(lines, [format!("write {}: wrote", outside.display())]);
    assert!(outside.exists());
}

/// The sandbox's memory file systems are bounded: a bot cannot fill the machine's memory
/// through them.
#[test]
fn a_sandboxed_bot_fills_its_tmp_and_shared_memory_only_to_their_size() {
    let a = arena();
    let bot = a.hostile("fill /tmp/fill /dev/shm/fill", &tag("fill"));
    let mut flags = sandbox_flags();
    flags.extend(["--sandbox-tmp".into(), "4M".into()]);
    let (p, lines) = play_hostile(&bot, &random_bot(), &flags);
    no_faults(&p);
    let full = "failed: OSError: [Errno 28] No space left on device";
    assert_eq!(
        lines,
        [
            format!("fill /tmp/fill: 4194304 bytes, then {full}"),
            format!("fill /dev/shm/fill: 4194304 bytes, then {full}"),
        ]
    );
}

#[test]
fn a_sandboxed_bot_sees_and_signals_no_other_process() {
    let a = arena();
    let marker = tag("signal");
    // A process of the host that the bot is told about and tries to kill.
    let mut sentinel = Command::new("python3")
        .args(["-c", "import time; time.sleep(120)", &marker])
        .stdin(Stdio::null())
        .spawn()
        .expect("sentinel starts");
    let bot = a.hostile(&format!("processes {}", sentinel.id()), &marker);
    let (p, lines) = play_hostile(&bot, &decent(&marker), &sandbox_flags());
    // Both bots played on; the referee finished the set (play checks its exit status).
    no_faults(&p);
    let sentinel_alive = sentinel.try_wait().expect("wait").is_none();
    let _ = sentinel.kill();
    let _ = sentinel.wait();
    assert!(sentinel_alive, "the bot killed a process of the host");

    let listing = lines[0].strip_prefix("processes: ").expect("a listing");
    let seen: Vec<&str> = listing.split("; ").collect();
    // Only its own sandbox: bubblewrap's init (pid 1) and itself, both running hostile.py.
    assert_eq!(seen.len(), 2, "{listing}");
    assert!(
        seen[0].starts_with("1 /usr/bin/bwrap --unshare-user "),
        "{listing}"
    );
    assert!(
        seen.iter().all(|s| s.contains("hostile.py processes")),
        "{listing}"
    );
    assert!(!listing.contains("misbehave.py"), "{listing}");
    assert!(!listing.contains("time.sleep"), "{listing}");
    // Its parent is the sandbox's init, which ignores the signal; the sentinel's pid
    // does not exist in its pid namespace.
    assert_eq!(
        lines[1..],
        [
            "kill 1: sent".to_string(),
            format!(
                "kill {}: failed: ProcessLookupError: [Errno 3] No such process",
                sentinel.id()
            )
        ]
    );
}

/// Whether the tests run as root: the bound on processes is then a pids cgroup, and the
/// bots run as nobody.
pub(crate) fn running_as_root() -> bool {
    std::fs::metadata("/proc/self").expect("/proc/self").uid() == 0
}

/// The host's shared memory (`Shmem` of /proc/meminfo), in KiB: memfd and tmpfs files.
fn host_shmem_kib() -> u64 {
    let text = std::fs::read_to_string("/proc/meminfo").expect("/proc/meminfo");
    text.lines()
        .find_map(|l| l.strip_prefix("Shmem:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("Shmem in /proc/meminfo")
}

/// A bot that writes 512 MiB into a memfd file (which no address-space limit sees) is
/// killed by the kernel at its sandbox's memory budget, as root by a memory cgroup, and
/// its fault says so; the host's shared memory returns once it is gone.
#[test]
fn a_bot_filling_a_memfd_is_stopped_at_its_sandboxs_memory_budget() {
    let a = arena();
    let bot = a.hostile("memfd 512", &tag("memfd"));
    let mut flags = sandbox_flags();
    if !running_as_root() {
        // No memory cgroup can be made without root: the bound is the root's case.
        return;
    }
    flags.extend(["--sandbox-memory".into(), "64M".into()]);
    let before = host_shmem_kib();
    let (p, lines) = play_hostile(&bot, &random_bot(), &flags);
    let after = host_shmem_kib();
    // Each of its two processes (one a game) wrote at most the budget, reporting each
    // 16 MiB: never 64 of them.
    assert!(
        !lines.is_empty()
            && lines
                .iter()
                .all(|l| ["memfd: 16 MiB", "memfd: 32 MiB", "memfd: 48 MiB"].contains(&l.as_str())),
        "{lines:?}"
    );
    let faults = of_type(&p.records, "fault");
    assert_eq!(faults.len(), 2, "{faults:?}");
    for f in &faults {
        assert_eq!(f["kind"], "crash");
        let detail = f["detail"].as_str().expect("detail");
        assert!(
            detail.starts_with(
                "closed its stdout (killed by signal 9 (SIGKILL)): the kernel killed it: over \
                 its sandbox's memory budget of 64 MiB (--sandbox-memory; its processes' \
                 memory, /tmp, /dev/shm and memfd files and pipe buffers count)"
            ),
            "{detail}"
        );
    }
    // The memfd went with its sandbox: the host holds no more than it did, give or take
    // what other tests hold meanwhile (far less than the 512 MiB asked for).
    assert!(
        after < before + 64 * 1024,
        "shared memory {before} KiB before, {after} KiB after"
    );
}

#[test]
fn a_fork_bomb_stops_at_the_sandboxs_bound_and_leaves_nothing_behind() {
    let a = arena();
    let marker = tag("forkbomb");
    let bot = a.hostile("fork-bomb", &marker);
    let mut flags = sandbox_flags();
    flags.extend(["--sandbox-processes".into(), "16".into()]);
    let (p, lines) = play_hostile(&bot, &random_bot(), &flags);
    no_faults(&p);
    // 16 in all: as root, bubblewrap's monitor and init, the bot and 13 children (a
    // pids cgroup counts the monitor too); otherwise RLIMIT_NPROC inside the sandbox
    // counts the bot's user's processes there: init, the bot and 14 children.
    let children = if running_as_root() { 13 } else { 14 };
    assert_eq!(
        lines,
        [format!(
            "fork-bomb: {children} children, then failed: BlockingIOError: [Errno 11] Resource temporarily unavailable"
        )]
    );
    // The children, asleep for 30 s, went with their sandbox.
    assert!(
        alive_with(&marker).is_empty(),
        "survivors: {:?}",
        alive_with(&marker)
    );
}

#[test]
fn a_sandboxed_bot_cannot_see_the_league_or_other_bots() {
    let a = arena();
    let bot = a.hostile(&format!("league {}", a.database.display()), &tag("league"));
    let (p, lines) = play_hostile(&bot, &random_bot(), &sandbox_flags());
    no_faults(&p);
    let bots = a.root.join("bots");
    let db = a.database.display();
    assert_eq!(
        lines,
        [
            format!("list {}: ['hostile']", bots.display()),
            format!("list {}: ['bots']", a.root.display()),
            format!(
                "read {db}: failed: FileNotFoundError: [Errno 2] No such file or directory: '{db}'"
            ),
        ]
    );

    // Not sandboxed (in the same working directory), it sees them all and reads the
    // database.
    let bot_dir = a.bot_dir.display().to_string();
    let (_, lines) = play_hostile(&bot, &random_bot(), &["--bot-dir".into(), bot_dir]);
    assert_eq!(
        lines[..2],
        [
            format!("list {}: ['hostile', 'other']", bots.display()),
            format!(
                "list {}: ['bots', 'league', 'secret.txt']",
                a.root.display()
            ),
        ]
    );
    assert!(lines[2].contains(&a.secret_text), "{lines:?}");
}

#[test]
fn a_bot_that_crashes_on_a_refusal_forfeits_and_the_set_goes_on() {
    let a = arena();
    let bot = a.hostile(&format!("crash-read {}", a.secret.display()), &tag("crash"));
    let mut args: Vec<&str> = vec![
        "--games",
        "3",
        "--seed",
        "3",
        "--ready-time",
        "30s",
        "--move-time",
        "10s",
    ];
    let flags = sandbox_flags();
    args.extend(flags.iter().map(String::as_str));
    let p = play_env(&bot, &random_bot(), &args, &sandbox_env());
    assert_eq!(p.summary["games_played"], 3);
    let faults = of_type(&p.records, "fault");
    assert_eq!(faults.len(), 3, "{faults:?}");
    for f in &faults {
        assert_eq!(f["bot"], 0, "{f}");
        assert_eq!(f["kind"], "crash", "{f}");
        assert!(
            f["detail"]
                .as_str()
                .is_some_and(|d| d.contains("exit status 1")),
            "{f}"
        );
    }
    assert_eq!(p.summary["bots"][1]["wins"], 3);
}

#[test]
fn sandboxed_bots_leave_no_process_behind_and_keep_their_resource_limits() {
    let flags = sandbox_flags();
    // A grandchild that left the bot's process group dies with the sandbox.
    let marker = tag("sandbox-escape");
    let bot = format!("{} --tag {marker}", misbehave("escape-group"));
    let mut args: Vec<&str> = vec![
        "--games",
        "1",
        "--seed",
        "1",
        "--ready-time",
        "30s",
        "--move-time",
        "10s",
    ];
    args.extend(flags.iter().map(String::as_str));
    let p = play_env(&bot, &random_bot(), &args, &sandbox_env());
    let faults = of_type(&p.records, "fault");
    assert_eq!(faults.len(), 1);
    assert_eq!(faults[0]["kind"], "crash");
    // Nothing had to be hunted down through /proc: it died with its pid namespace.
    let shutdown = of_type(&p.records, "shutdown")
        .into_iter()
        .find(|s| s["bot"] == 0)
        .expect("bot 0's shutdown")
        .clone();
    assert_eq!(shutdown["escaped"], serde_json::json!([]), "{shutdown}");
    assert_eq!(shutdown["leaked"], false, "{shutdown}");
    // Killed processes leave /proc when they are next scheduled: wait for that.
    assert_eq!(survivors(&marker), Vec::<u32>::new(), "survivors");

    // The memory and CPU limits still bind.
    let memory = format!("{} --tag {}", misbehave("memory 400"), tag("sandbox-mem"));
    let mut args: Vec<&str> = vec![
        "--games",
        "1",
        "--seed",
        "1",
        "--ready-time",
        "30s",
        "--move-time",
        "10s",
        "--bot-memory",
        "200M",
    ];
    args.extend(flags.iter().map(String::as_str));
    let p = play_env(&memory, &random_bot(), &args, &sandbox_env());
    let faults = of_type(&p.records, "fault");
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert_eq!(faults[0]["kind"], "crash");
    assert!(
        faults[0]["detail"]
            .as_str()
            .is_some_and(|d| d.contains("exit status 1")),
        "{}",
        faults[0]
    );
    let cpu = format!("{} --tag {}", misbehave("cpu"), tag("sandbox-cpu"));
    let mut args: Vec<&str> = vec![
        "--games",
        "1",
        "--seed",
        "1",
        "--ready-time",
        "30s",
        "--bot-cpu",
        "1s",
        "--move-time",
        "10s",
    ];
    args.extend(flags.iter().map(String::as_str));
    let p = play_env(&cpu, &random_bot(), &args, &sandbox_env());
    let faults = of_type(&p.records, "fault");
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert!(
        faults[0]["detail"]
            .as_str()
            .is_some_and(|d| d.contains("killed by signal 24 (SIGXCPU)")
                || d.contains("killed by signal 9 (SIGKILL)")),
        "{}",
        faults[0]
    );
}

#[test]
fn stopping_the_referee_stops_sandboxed_bots() {
    let flags = sandbox_flags();
    let marker = tag("sandbox-stop");
    let dir = LogDir::new();
    let bot = format!("{} --tag {marker}", misbehave("never-answer"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_hus"))
        .args([
            "match",
            &bot,
            &bot,
            "--move-time",
            "60s",
            "--quiet",
            "--log-dir",
        ])
        .arg(dir.path())
        .args(&flags)
        .envs(sandbox_env())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hus starts");
    // Both bots are up once each holds a sandbox: poll rather than guess a delay.
    let up = (0..300).any(|_| {
        std::thread::sleep(Duration::from_millis(100));
        alive_with(&marker)
            .into_iter()
            .filter(|&p| p != child.id())
            .count()
            >= 4
    });
    assert!(
        up,
        "the sandboxed bots did not start: {:?}",
        alive_with(&marker)
    );
    Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status()
        .expect("kill");
    let status = child.wait().expect("hus exits");
    assert_eq!(status.code(), Some(130));
    // Killed processes leave /proc when they are next scheduled: wait for that.
    assert_eq!(survivors(&marker), Vec::<u32>::new(), "survivors");
}

/// `hus check-bot --sandbox CMD` passes without a problem.
fn passes_check_in_a_sandbox(command: &str, extra: &[&str]) {
    let mut args = vec![
        "check-bot",
        command,
        "--games",
        "2",
        "--ready-time",
        "30s",
        "--move-time",
        "10s",
    ];
    let flags = sandbox_flags();
    args.extend(flags.iter().map(String::as_str));
    args.extend_from_slice(extra);
    let out = hus_env(&args, &sandbox_env());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{command}: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("  in a sandbox: it sees the system's files, "),
        "{stdout}"
    );
    assert!(stdout.contains("\nno problems, "), "{stdout}");
}

#[test]
fn the_sample_bots_in_every_language_pass_check_bot_in_a_sandbox() {
    for script in [
        "sample-bots/python/random_bot.py",
        "sample-bots/python/greedy_bot.py",
    ] {
        passes_check_in_a_sandbox(&bot(script), &[]);
    }
    let js = format!(
        "node {}",
        root_dir().join("sample-bots/js/random_bot.js").display()
    );
    passes_check_in_a_sandbox(&js, &[]);
    let classes = LogDir::new();
    let status = Command::new("javac")
        .arg("-d")
        .arg(classes.path())
        .arg(root_dir().join("sample-bots/java/RandomBot.java"))
        .status()
        .expect("javac is installed (tests/setup.sh installs it)");
    assert!(status.success(), "javac failed");
    let_sandbox_user_in(classes.path());
    passes_check_in_a_sandbox(
        &format!("java -cp {} RandomBot", classes.path().display()),
        &[],
    );
    passes_check_in_a_sandbox(&crate::sample_bots::alphabeta(), &[]);
}

#[test]
fn a_machine_without_bubblewrap_is_an_error_before_any_game() {
    let dir = LogDir::new();
    let bot = misbehave("ok");
    let out = Command::new(env!("CARGO_BIN_EXE_hus"))
        .args(["match", &bot, &bot, "--sandbox", "--log-dir"])
        .arg(dir.path())
        .env("PATH", "/nonexistent")
        .output()
        .expect("hus runs");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "--sandbox: bot A (\"python3 "
        ) && stderr.contains(
            "bubblewrap (bwrap) is not installed, and the sandbox runs bots under it (Debian and Ubuntu: apt-get install bubblewrap)"
        ),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).expect("log dir").count(),
        0,
        "a log was started"
    );
}

#[test]
fn a_program_the_sandbox_hides_is_named_with_the_option_that_shows_it() {
    require_bwrap();
    let a = arena();
    // A bot installed under ROOT/opt/mybot: a copy of hus, whose random-bot is a bot.
    let install = a.root.join("opt/mybot");
    std::fs::create_dir_all(install.join("bin")).expect("mkdir");
    let program = install.join("bin/mybot");
    std::fs::copy(env!("CARGO_BIN_EXE_hus"), &program).expect("copy");
    let command = format!("{} random-bot", program.display());
    let bot_dir = a.bot_dir.display().to_string();
    let out = hus(&["check-bot", &command, "--sandbox", "--bot-dir", &bot_dir]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        format!(
            "error: --sandbox: the bot's program {:?} cannot be found inside the sandbox (outside it is {}; show its installation read-only with --sandbox-ro {})",
            program.display().to_string(),
            program.display(),
            install.display()
        )
    );
    let install = install.display().to_string();
    let out = hus(&[
        "check-bot",
        &command,
        "--sandbox",
        "--bot-dir",
        &bot_dir,
        "--sandbox-ro",
        &install,
        "--games",
        "1",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn a_sandboxed_bot_inherits_no_descriptor_of_the_referee() {
    let a = arena();
    let bot = a.hostile("fds", &tag("fds"));
    // The referee's parent left descriptor 7 open on the secret, without close-on-exec
    // (as a service manager passes sockets): the bots must not get it.
    let run = |flags: &[String]| {
        let logs = LogDir::new();
        let status = Command::new("sh")
            .arg("-c")
            .arg("exec 7<\"$0\"; exec \"$@\"")
            .arg(&a.secret)
            .arg(env!("CARGO_BIN_EXE_hus"))
            .args(["match", &bot, &random_bot(), "--games", "1", "--quiet"])
            .args(["--ready-time", "30s", "--move-time", "10s", "--log-dir"])
            .arg(logs.path())
            .args(flags)
            .envs(sandbox_env())
            .status()
            .expect("hus runs");
        assert!(status.success());
        std::fs::read_to_string(file_ending(logs.path(), ".a.stderr")).expect("stderr")
    };
    let text = run(&sandbox_flags());
    assert_eq!(text.trim(), "hostile: fds beyond 0-2: none");
    // Not sandboxed, it reads the secret through the descriptor.
    let text = run(&[]);
    assert!(text.contains(&format!("'7: {}'", a.secret_text)), "{text}");
}

#[test]
fn the_system_calls_kernel_exploits_start_from_are_refused() {
    let a = arena();
    let bot = a.hostile("syscalls", &tag("syscalls"));
    let (p, lines) = play_hostile(&bot, &random_bot(), &sandbox_flags());
    no_faults(&p);
    // Flatpak's blocklist with Docker's io_uring, eBPF, userfaultfd, kexec and modules
    // (README, "Running untrusted bots"), each made by the bot with arguments that
    // would do nothing if it were let through.
    let mut denied = vec!["syslog"];
    if cfg!(target_arch = "x86_64") {
        denied.push("uselib");
    }
    denied.extend([
        "acct",
        "quotactl",
        "add_key",
        "keyctl",
        "request_key",
        "move_pages",
        "mbind",
        "get_mempolicy",
        "set_mempolicy",
        "migrate_pages",
        "unshare",
        "setns",
        "mount",
        "umount2",
        "pivot_root",
        "chroot",
        "clone CLONE_NEWUSER",
        "ioctl TIOCSTI",
        "ioctl TIOCLINUX",
        "open_tree",
        "move_mount",
        "fsopen",
        "fsconfig",
        "fsmount",
        "fspick",
        "mount_setattr",
        "perf_event_open",
        "personality READ_IMPLIES_EXEC",
    ]);
    let mut expected: Vec<String> = denied
        .iter()
        .map(|name| format!("syscall {name}: failed: errno 1 (Operation not permitted)"))
        .collect();
    // Asking for the current personality is allowed (Flatpak allows it too).
    expected.push("syscall personality query: returned 0".to_string());
    expected.extend(
        [
            "ptrace",
            "io_uring_setup",
            "io_uring_enter",
            "io_uring_register",
            "bpf",
            "userfaultfd",
            "kexec_load",
            "kexec_file_load",
            "init_module",
            "finit_module",
            "delete_module",
        ]
        .map(|name| format!("syscall {name}: failed: errno 1 (Operation not permitted)")),
    );
    assert_eq!(lines, expected);
    // Not sandboxed, the same calls reach the kernel (the session keyring is there for
    // any user; ptrace finds no process 0; an ioctl of the terminal's finds a pipe, and
    // an unknown path is not there): only calls that change nothing, even as root.
    let bot = a.hostile(
        "syscalls keyctl ptrace ioctl chroot open_tree",
        &tag("syscalls-open"),
    );
    let (_, lines) = play_hostile(&bot, &random_bot(), &[]);
    assert_eq!(lines.len(), 6, "{lines:?}");
    assert!(
        lines[0].starts_with("syscall keyctl: returned "),
        "{lines:?}"
    );
    assert_eq!(
        lines[1..],
        [
            "syscall chroot: failed: errno 2 (No such file or directory)",
            "syscall ioctl TIOCSTI: failed: errno 25 (Inappropriate ioctl for device)",
            "syscall ioctl TIOCLINUX: failed: errno 25 (Inappropriate ioctl for device)",
            "syscall open_tree: failed: errno 2 (No such file or directory)",
            "syscall ptrace: failed: errno 3 (No such process)",
        ]
    );
}

/// Every kernel tunable a bot could reach is read-only: it tries to open for writing
/// every file of /proc/sys (every one root can write outside, and its own network
/// namespace's) and /sys, writes lease-break-time, opens core_pattern: all refused, and
/// the host's values are what they were. The test itself only reads them.
#[test]
fn a_sandboxed_bot_writes_no_kernel_tunable() {
    let a = arena();
    let samples = [
        "/proc/sys/fs/lease-break-time",
        "/proc/sys/kernel/core_pattern",
    ];
    let read_all = || samples.map(|p| std::fs::read_to_string(p).expect("a tunable"));
    let before = read_all();
    let bot = a.hostile("tunables", &tag("tunables"));
    let (p, lines) = play_hostile(&bot, &random_bot(), &sandbox_flags());
    no_faults(&p);
    assert_eq!(read_all(), before, "a tunable of the host changed");

    let tried: std::collections::BTreeSet<&str> = lines
        .iter()
        .find_map(|l| l.strip_prefix("tunables tried: "))
        .expect("the list of files tried")
        .split(' ')
        .collect();
    // What root could write outside, found by its mode (the test opens nothing for
    // writing). /proc/sys/net is the network namespace's own: the bot has another.
    let mut writable = Vec::new();
    let mut dirs = vec![PathBuf::from("/proc/sys")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir)
            .expect("a directory of /proc/sys")
            .flatten()
        {
            let path = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                if path != Path::new("/proc/sys/net") {
                    dirs.push(path);
                }
            } else if meta.mode() & 0o222 != 0 {
                writable.push(path.display().to_string());
            }
        }
    }
    assert!(writable.len() > 100, "{writable:?}");
    let untried: Vec<&String> = writable
        .iter()
        .filter(|p| !tried.contains(p.as_str()))
        .collect();
    assert_eq!(untried, Vec::<&String>::new(), "files the bot did not try");
    assert!(
        tried.iter().any(|p| p.starts_with("/proc/sys/net/")),
        "{tried:?}"
    );
    let rest: Vec<&String> = lines
        .iter()
        .filter(|l| !l.starts_with("tunables tried: "))
        .collect();
    assert_eq!(
        rest,
        [
            "tunables /sys: absent",
            "tunables opened for writing: none",
            "write /proc/sys/fs/lease-break-time: failed: OSError: [Errno 30] Read-only file system: '/proc/sys/fs/lease-break-time'",
            // Not root, the bot is refused before the read-only mount is even reached.
            "open /proc/sys/kernel/core_pattern for writing: failed: PermissionError: [Errno 13] Permission denied: '/proc/sys/kernel/core_pattern'",
        ]
    );
}

/// Seen from the host, a sandboxed bot run by root is `nobody`: its process's user and
/// groups in /proc/PID/status, read while it waits.
#[test]
fn a_sandboxed_bot_of_root_is_nobody_seen_from_the_host() {
    let a = arena();
    let marker = tag("identity");
    let go = a.bot_dir.join("go");
    let bot = a.hostile(&format!("identity {}", go.display()), &marker);
    let logs = LogDir::new();
    let mut child = Command::new(env!("CARGO_BIN_EXE_hus"))
        .args(["match", &bot, &random_bot(), "--games", "1", "--quiet"])
        .args(["--ready-time", "60s", "--move-time", "10s", "--log-dir"])
        .arg(logs.path())
        .args(sandbox_flags())
        .envs(sandbox_env())
        .stdout(Stdio::null())
        .spawn()
        .expect("hus starts");
    // The bot waits for GO before its hello is answered: find it meanwhile.
    let status = (0..600).find_map(|_| {
        std::thread::sleep(Duration::from_millis(50));
        alive_with(&marker)
            .into_iter()
            .filter(|&pid| pid != child.id())
            .filter_map(|pid| {
                let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
                let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
                // The bot itself, not the bubblewrap processes above it.
                cmdline
                    .starts_with("python3 ")
                    .then(|| std::fs::read_to_string(format!("/proc/{pid}/status")).ok())?
            })
            .next()
    });
    std::fs::write(&go, "").expect("go");
    let exit = child.wait().expect("hus exits");
    assert!(exit.success());
    let status = status.expect("the bot's process was found");
    let ids: Vec<&str> = status
        .lines()
        .filter(|l| l.starts_with("Uid:") || l.starts_with("Gid:") || l.starts_with("Groups:"))
        .collect();
    if !running_as_root() {
        // Not root: the bot runs as hus's own user, as before.
        let own = std::fs::read_to_string("/proc/self/status").expect("status");
        let uid = own.lines().find(|l| l.starts_with("Uid:")).expect("Uid");
        assert_eq!(ids[0], uid);
        return;
    }
    assert_eq!(
        ids,
        [
            "Uid:\t65534\t65534\t65534\t65534",
            "Gid:\t65534\t65534\t65534\t65534",
            "Groups:\t65534 ",
        ]
    );
    let text = std::fs::read_to_string(file_ending(logs.path(), ".a.stderr")).expect("stderr");
    // Inside, it is nobody too.
    assert_eq!(
        text.lines().collect::<Vec<_>>(),
        [
            "hostile: status Uid: 65534 65534 65534 65534",
            "hostile: status Gid: 65534 65534 65534 65534",
            "hostile: status Groups: 65534",
            "hostile: go: seen",
        ]
    );
}

/// `--sandbox-user` names a user that does not exist, root, or one who cannot reach the
/// bot's directory: each is refused with its message, before any game (no log).
#[test]
fn a_sandbox_user_that_cannot_be_used_is_refused_before_any_game() {
    require_bwrap();
    let a = arena();
    let bot = a.hostile("syscalls", &tag("user"));
    let refused = |extra: &[&str]| {
        let logs = LogDir::new();
        let log_dir = logs.path().display().to_string();
        let mut args = vec!["match", &bot, &bot, "--sandbox", "--log-dir", &log_dir];
        args.extend_from_slice(extra);
        let out = hus_env(&args, &sandbox_env());
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(
            std::fs::read_dir(logs.path()).expect("log dir").count(),
            0,
            "a log was started"
        );
        String::from_utf8_lossy(&out.stderr).trim().to_string()
    };
    let bot_a = "--sandbox for bot A";
    assert_eq!(
        refused(&["--sandbox-user", "no-such-hus-user"]),
        format!("error: {bot_a}: invalid --sandbox-user: there is no user \"no-such-hus-user\" on this machine")
    );
    assert_eq!(
        refused(&["--sandbox-user", "root"]),
        format!("error: {bot_a}: invalid --sandbox-user: user \"root\" is root (uid 0): a sandboxed bot never runs as root; name an unprivileged user")
    );
    if !running_as_root() {
        return;
    }
    // A directory above the bot's that lets no one else through.
    let bots = a.bot_dir.parent().expect("bots");
    std::fs::set_permissions(bots, std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .expect("chmod");
    let probe = format!("--sandbox: bot A ({bot:?})");
    let locked = |user: &str| {
        format!(
            "error: {probe}: the bot's directory {} is not readable by user {user}, who runs the sandboxed bots: {} does not let {user} through; the bot's directory and every directory above it must be reachable by that user (chmod o+x on each directory above it), or choose another user with --sandbox-user",
            a.bot_dir.display(),
            bots.display()
        )
    };
    assert_eq!(refused(&[]), locked("nobody"));
    assert_eq!(refused(&["--sandbox-user", "daemon"]), locked("daemon"));
    // The directory itself closed to others.
    std::fs::set_permissions(bots, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    std::fs::set_permissions(
        &a.bot_dir,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .expect("chmod");
    assert_eq!(
        refused(&[]),
        format!(
            "error: {probe}: the bot's directory {0} is not readable by user nobody, who runs the sandboxed bots (chmod o+rX {0}), or choose another user with --sandbox-user",
            a.bot_dir.display()
        )
    );
}

/// Without root, `hus` cannot change user: `--sandbox-user` naming another user is
/// refused, naming its own is accepted. As root, the test runs `hus` as `nobody`.
#[test]
fn without_root_the_sandbox_user_can_only_be_hus_own() {
    require_bwrap();
    let a = arena();
    // `hus` as an ordinary user: nobody if the tests run as root, else the tests' own.
    let ordinary = || {
        let mut c = if running_as_root() {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(env!("CARGO_BIN_EXE_hus"));
            c
        } else {
            Command::new(env!("CARGO_BIN_EXE_hus"))
        };
        c.env("PATH", "/usr/bin:/bin");
        c
    };
    let (uid, own) = if running_as_root() {
        (65534, "nobody".to_string())
    } else {
        let id = |flag: &str| {
            let out = Command::new("id").arg(flag).output().expect("id");
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        };
        (id("-u").parse().expect("a uid"), id("-un"))
    };
    let bot = format!(
        "/usr/bin/python3 {}",
        a.bot_dir.join("hostile.py").display()
    );
    let out = ordinary()
        .args(["check-bot", &bot, "--sandbox", "--sandbox-user", "daemon"])
        .output()
        .expect("hus runs");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        format!("error: --sandbox: invalid --sandbox-user: cannot run the bots as user \"daemon\": only root can change user, and hus runs as uid {uid}; without root, sandboxed bots run as hus's own user (leave out --sandbox-user)")
    );
    let bot = format!("{bot} syscalls ptrace");
    let out = ordinary()
        .args([
            "check-bot",
            &bot,
            "--sandbox",
            "--sandbox-user",
            &own,
            "--games",
            "1",
        ])
        .args(["--ready-time", "30s", "--move-time", "10s"])
        .output()
        .expect("hus runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // It names no user: the bot runs as hus's own, unchanged.
    assert!(stdout.contains(" at most 128 processes\n"), "{stdout}");
}

/// For an ordinary user, who cannot make cgroups, the bound is RLIMIT_NPROC set inside
/// the sandbox. As root, the test runs `hus` as `nobody` to get there (with the system's
/// Python: `nobody` cannot see /root).
#[test]
fn an_ordinary_user_gets_the_bound_on_processes_too() {
    require_bwrap();
    let a = arena();
    let marker = tag("nobody-forkbomb");
    let logs = LogDir::new_in(env!("CARGO_TARGET_TMPDIR"));
    for dir in [
        logs.path(),
        a.root.as_path(),
        a.bot_dir.as_path(),
        a.bot_dir.parent().expect("bots"),
    ] {
        std::fs::set_permissions(dir, std::os::unix::fs::PermissionsExt::from_mode(0o777))
            .expect("chmod");
    }
    let bot = format!(
        "python3 {} fork-bomb --tag {marker}",
        a.bot_dir.join("hostile.py").display()
    );
    let mut command = if running_as_root() {
        // `nobody` must reach the binary and the arena: a checkout in a private
        // directory (`mktemp -d` makes it 0700) gets search permission for others on
        // the way down, and nothing more.
        let hus_bin = Path::new(env!("CARGO_BIN_EXE_hus"));
        for dir in hus_bin.ancestors().chain(a.root.ancestors()).skip(1) {
            if let Ok(meta) = std::fs::metadata(dir) {
                let mode = std::os::unix::fs::PermissionsExt::mode(&meta.permissions());
                if mode & 0o001 == 0 {
                    std::fs::set_permissions(
                        dir,
                        std::os::unix::fs::PermissionsExt::from_mode(mode | 0o001),
                    )
                    .expect("chmod o+x");
                }
            }
        }
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_hus"))
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", "/tmp");
        c
    } else {
        Command::new(env!("CARGO_BIN_EXE_hus"))
    };
    let out = command
        .args(["match", &bot, &random_bot(), "--games", "1", "--quiet"])
        .args(["--ready-time", "30s", "--move-time", "10s", "--log-dir"])
        .arg(logs.path())
        .args(["--sandbox", "--sandbox-processes", "16"])
        .output()
        .expect("hus runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(file_ending(logs.path(), ".a.stderr")).expect("stderr");
    // RLIMIT_NPROC inside counts the bot's user's processes in its namespace: bubblewrap's
    // init, the bot, and 14 children.
    assert_eq!(
        text.trim(),
        "hostile: fork-bomb: 14 children, then failed: BlockingIOError: [Errno 11] Resource temporarily unavailable"
    );
    assert!(
        alive_with(&marker).is_empty(),
        "survivors: {:?}",
        alive_with(&marker)
    );
}

#[test]
fn a_program_that_would_be_another_one_inside_is_an_error() {
    require_bwrap();
    let a = arena();
    // `sh` is first found in ROOT/opt/tool/bin outside, which the sandbox does not show:
    // inside, /usr/bin/sh would run instead.
    let bin = a.root.join("opt/tool/bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    std::fs::copy("/bin/sh", bin.join("sh")).expect("copy");
    let script = a.bot_dir.join("bot.sh");
    std::fs::write(&script, "exit 0\n").expect("write");
    let command = format!("sh {}", script.display());
    let out = Command::new(env!("CARGO_BIN_EXE_hus"))
        .args(["check-bot", &command, "--sandbox"])
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .output()
        .expect("hus runs");
    assert_eq!(out.status.code(), Some(2));
    let sh = bin.join("sh");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        format!(
            "error: --sandbox: the bot's program \"sh\" is {} outside the sandbox, but would be /usr/bin/sh inside it; show its installation read-only with --sandbox-ro {}, or write /usr/bin/sh in the command to use that one",
            sh.display(),
            a.root.join("opt/tool").display()
        )
    );
    if !running_as_root() {
        return;
    }
    // As root, an installation that nobody cannot reach cannot be shown: the error
    // does not suggest it.
    let opt = a.root.join("opt");
    std::fs::set_permissions(&opt, std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .expect("chmod");
    let out = Command::new(env!("CARGO_BIN_EXE_hus"))
        .args(["check-bot", &command, "--sandbox"])
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .output()
        .expect("hus runs");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        format!(
            "error: --sandbox: the bot's program \"sh\" is {} outside the sandbox, but would be /usr/bin/sh inside it; its installation {} cannot be shown: user nobody, who runs the sandboxed bots, cannot reach it; write /usr/bin/sh in the command to use that one, or install the program where nobody can reach it",
            sh.display(),
            opt.join("tool").display()
        )
    );
}

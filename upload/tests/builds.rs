//! Builds in the sandbox: a Python bot and a C bot with a Makefile build and their run
//! commands start; hostile builds (a fork bomb, an endless loop, a disk filler, a
//! network call, a memory hog, an output flood) are stopped at their bound with the
//! cause. Each skips, saying why, where bubblewrap is missing.

use std::path::{Path, PathBuf};
use std::time::Duration;

use referee::{Dir, Limits, Sandbox};
use upload::{build, pack, unpack_archive, Bounds, BuildFailure, BuildLimits, BuildReport};

/// Whether the sandbox can run here; if not, says why (the test then passes).
fn sandbox_ready(test: &str) -> bool {
    let found = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).any(|dir| dir.join("bwrap").is_file()))
        .unwrap_or(false);
    if !found {
        eprintln!("{test}: skipped: bubblewrap (bwrap) is not installed");
    }
    found
}

/// A bot's files packed and unpacked into a store, as a server would: the version's
/// directory. The store's directories are open to the sandbox's user.
fn version(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let place = tempfile::tempdir().unwrap();
    std::fs::set_permissions(place.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let bot = place.path().join("bot");
    for (name, body) in files {
        let path = bot.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, body).unwrap();
    }
    let store = place.path().join("store");
    std::fs::create_dir(&store).unwrap();
    let packed = pack(&bot, &Bounds::default()).unwrap();
    let version = unpack_archive(
        &packed.bytes,
        &Dir::open(&store).unwrap(),
        &Bounds::default(),
    )
    .unwrap();
    (place, version.dir)
}

fn limits() -> BuildLimits {
    BuildLimits {
        wall: Duration::from_secs(60),
        memory: 512 << 20,
        disk: 64 << 20,
        ..BuildLimits::default()
    }
}

/// Builds `files` with `limits`; prints the report for a failing test.
async fn built(
    files: &[(&str, &str)],
    limits: &BuildLimits,
) -> (tempfile::TempDir, PathBuf, BuildReport) {
    let (place, dir) = version(files);
    let report = build(&dir, limits).await;
    eprintln!(
        "output ({} bytes, {:?}):\n{}\nresult: {:?}",
        report.output_bytes, report.took, report.output, report.result
    );
    (place, dir, report)
}

/// Runs the built bot's command in the sandbox (its tree read-only) with an empty
/// stdin: it must start and end cleanly. Returns its stdout.
async fn run_bot(report: &BuildReport) -> String {
    let built = report.result.as_ref().unwrap();
    let spec = built.run_spec().unwrap();
    let limits = Limits {
        sandbox: Some(Sandbox::new(&built.tree).unwrap()),
        ..Limits::default()
    };
    let mut child = limits.spawn_once(&spec).await.unwrap();
    let mut stdout = child.take_stdout().unwrap();
    let mut stderr = child.take_stderr().unwrap();
    use tokio::io::AsyncReadExt;
    let (mut out, mut err) = (String::new(), String::new());
    let status = tokio::time::timeout(Duration::from_secs(60), async {
        let (a, b) = tokio::join!(
            stdout.read_to_string(&mut out),
            stderr.read_to_string(&mut err)
        );
        a.unwrap();
        b.unwrap();
        child.wait().await.unwrap()
    })
    .await
    .unwrap();
    assert!(status.success(), "{status}: {err}");
    assert_eq!(err, "");
    out
}

#[tokio::test]
async fn a_python_bot_builds_and_its_run_command_starts() {
    if !sandbox_ready("python") {
        return;
    }
    let rules = include_str!("../../sample-bots/python/hus_rules.py");
    let bot = include_str!("../../sample-bots/python/random_bot.py");
    let (_place, dir, report) = built(
        &[
            (
                "hus-bot.toml",
                "language = \"python\"\nmain = \"random_bot.py\"\n",
            ),
            ("random_bot.py", bot),
            ("hus_rules.py", rules),
        ],
        &limits(),
    )
    .await;
    let built = report.result.as_ref().unwrap();
    assert_eq!(built.tree, dir.join("tree"));
    assert_eq!(built.commands.build, None);
    assert_eq!(built.commands.run, "python3 random_bot.py");
    assert_eq!(
        std::fs::read_to_string(dir.join("tree/hus_rules.py")).unwrap(),
        rules
    );
    assert!(!dir.join("tree.tar").exists());
    assert_eq!(report.output, "");
    assert_eq!(run_bot(&report).await, "");
}

const C_BOT: &str = r#"#include <stdio.h>
int main(void) { printf("%s\n", GREETING); return 0; }
"#;
const MAKEFILE: &str =
    "bot: bot.c\n\tcc -O2 -DGREETING='\"built by make\"' -o bot bot.c\n\t@echo made it\n\t@id -u\n";

#[tokio::test]
async fn a_c_bot_with_a_makefile_builds_and_its_run_command_starts() {
    if !sandbox_ready("c") {
        return;
    }
    let (_place, dir, report) = built(
        &[
            ("hus-bot.toml", "language = \"c\"\n"),
            ("bot.c", C_BOT),
            ("Makefile", MAKEFILE),
        ],
        &limits(),
    )
    .await;
    let built = report.result.as_ref().unwrap();
    assert_eq!(built.commands.build.as_deref(), Some("make"));
    assert_eq!(
        built.run_spec().unwrap().argv,
        [dir.join("tree/bot").display().to_string()]
    );
    // make's own lines, and the build's user: never root (nobody, inside and out).
    assert!(
        report.output.contains("made it\n65534\n"),
        "{}",
        report.output
    );
    assert_eq!(run_bot(&report).await, "built by make\n");
    // The sources are as they came: the build wrote only its own directory.
    assert!(!dir.join("src/bot").exists());
}

/// The build of a bot whose `build` is `command` (run = "./bot").
async fn hostile(command: &str, limits: &BuildLimits) -> (tempfile::TempDir, PathBuf, BuildReport) {
    let manifest = format!("build = {command:?}\nrun = \"./bot\"\n");
    built(&[("hus-bot.toml", &manifest)], limits).await
}

#[tokio::test]
async fn a_fork_bomb_is_stopped_at_the_bound_on_processes() {
    if !sandbox_ready("fork bomb") {
        return;
    }
    if !nix::unistd::geteuid().is_root() {
        // Without root the bound is RLIMIT_NPROC, which counts no refused fork.
        eprintln!("fork bomb: skipped unless root (no pids cgroup to tell the cause)");
        return;
    }
    let limits = BuildLimits {
        processes: 32,
        wall: Duration::from_secs(20),
        ..limits()
    };
    let (_place, dir, report) =
        hostile("bomb() { bomb | bomb & }; bomb; sleep 5; exit 1", &limits).await;
    match &report.result {
        Err(BuildFailure::TooManyProcesses { bound: 32, hits }) => assert!(*hits > 0),
        other => panic!("{other:?}"),
    }
    assert!(report
        .result
        .as_ref()
        .unwrap_err()
        .to_string()
        .starts_with("the build hit its bound of 32 processes and threads ("));
    assert!(!dir.join("tree").exists());
}

#[tokio::test]
async fn an_endless_loop_is_stopped_at_its_wall_time() {
    if !sandbox_ready("endless loop") {
        return;
    }
    let limits = BuildLimits {
        wall: Duration::from_secs(2),
        ..limits()
    };
    let (_place, dir, report) = hostile("echo looping; while :; do :; done", &limits).await;
    assert!(
        matches!(report.result, Err(BuildFailure::TimedOut { after }) if after == Duration::from_secs(2))
    );
    assert_eq!(
        report.result.as_ref().unwrap_err().to_string(),
        "the build was stopped after 2s, its bound on time"
    );
    assert_eq!(report.output, "looping\n");
    assert!(report.took >= Duration::from_secs(2));
    assert!(!dir.join("tree").exists());
    assert!(!dir.join("tree.tar").exists());
}

#[tokio::test]
async fn a_disk_filler_is_stopped_at_the_size_of_its_directory() {
    if !sandbox_ready("disk filler") {
        return;
    }
    let limits = BuildLimits {
        disk: 8 << 20,
        ..limits()
    };
    let (_place, dir, report) = hostile("cat /dev/zero > fill", &limits).await;
    assert!(matches!(report.result, Err(BuildFailure::DiskFull { bound }) if bound == 8 << 20));
    assert_eq!(
        report.result.as_ref().unwrap_err().to_string(),
        "the build filled its directory, 8 MiB (sources, build products and everything else written there)"
    );
    assert!(
        report.output.contains("No space left on device"),
        "{}",
        report.output
    );
    assert!(!dir.join("tree").exists());
}

#[tokio::test]
async fn a_network_call_fails_and_reaches_nothing() {
    if !sandbox_ready("network") {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let call = format!(
        "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5)\""
    );
    let (_place, _dir, report) = hostile(&call, &limits()).await;
    assert!(
        matches!(&report.result, Err(BuildFailure::Failed(status)) if status == "exit status 1")
    );
    assert!(
        report.output.contains("Network is unreachable")
            || report.output.contains("Connection refused"),
        "{}",
        report.output
    );
    assert!(report
        .output
        .ends_with("hus: the build command ended with exit status 1\n"));
    assert_eq!(
        listener.accept().unwrap_err().kind(),
        std::io::ErrorKind::WouldBlock
    );
}

#[tokio::test]
async fn a_memory_hog_is_stopped_at_its_budget() {
    if !sandbox_ready("memory") || !nix::unistd::geteuid().is_root() {
        eprintln!("memory: skipped unless root with bubblewrap (no memory cgroup otherwise)");
        return;
    }
    let limits = BuildLimits {
        memory: 96 << 20,
        disk: 16 << 20,
        ..limits()
    };
    let (_place, _dir, report) = hostile("python3 -c \"x = b'x' * (512 << 20)\"", &limits).await;
    assert!(
        matches!(report.result, Err(BuildFailure::OverMemory { budget }) if budget == 96 << 20),
        "{:?}",
        report.result
    );
}

#[tokio::test]
async fn a_flood_of_output_is_kept_to_its_bound_and_the_status_is_told() {
    if !sandbox_ready("output") {
        return;
    }
    let limits = BuildLimits {
        output: 1000,
        ..limits()
    };
    let (_place, _dir, report) = hostile("yes | head -c 1000000; exit 3", &limits).await;
    assert!(
        matches!(&report.result, Err(BuildFailure::Failed(status)) if status == "exit status 3")
    );
    assert_eq!(
        report.output_bytes,
        1_000_000 + "hus: the build command ended with exit status 3\n".len() as u64
    );
    assert_eq!(&report.output[..1000], "y\n".repeat(500));
    assert_eq!(
        &report.output[1000..],
        format!(
            "[hus: {} more bytes of output left out: 1000 bytes are kept]\n",
            report.output_bytes - 1000
        )
    );
}

#[tokio::test]
async fn java_and_javascript_bots_build_and_their_run_commands_start() {
    if !sandbox_ready("java and javascript") {
        return;
    }
    let on_usr = |program: &str| Path::new("/usr/bin").join(program).exists();
    if on_usr("node") {
        let (_place, _dir, report) = built(
            &[
                (
                    "hus-bot.toml",
                    "language = \"javascript\"\nmain = \"random_bot.js\"\n",
                ),
                (
                    "random_bot.js",
                    include_str!("../../sample-bots/js/random_bot.js"),
                ),
            ],
            &limits(),
        )
        .await;
        assert_eq!(
            report.result.as_ref().unwrap().commands.run,
            "node random_bot.js"
        );
        assert_eq!(run_bot(&report).await, "");
    } else {
        eprintln!("javascript: skipped: no /usr/bin/node");
    }
    if on_usr("javac") && on_usr("java") {
        let (_place, dir, report) = built(
            &[
                (
                    "hus-bot.toml",
                    "language = \"java\"\nmain = \"RandomBot\"\n",
                ),
                (
                    "RandomBot.java",
                    include_str!("../../sample-bots/java/RandomBot.java"),
                ),
            ],
            &limits(),
        )
        .await;
        assert_eq!(
            report.result.as_ref().unwrap().commands.run,
            "java -cp . RandomBot"
        );
        assert!(dir.join("tree/RandomBot.class").is_file());
        assert_eq!(run_bot(&report).await, "");
    } else {
        eprintln!("java: skipped: no /usr/bin/javac");
    }
}

#[tokio::test]
async fn a_build_writes_only_its_own_directory() {
    if !sandbox_ready("writes") {
        return;
    }
    let marker = format!("hus-upload-planted-{}", std::process::id());
    let command = format!(
        "touch ../src/{marker}; touch /usr/{marker}; touch /{marker}; touch /tmp/{marker}; echo made > made"
    );
    let (_place, dir, report) = hostile(&command, &limits()).await;
    assert!(report.result.is_ok(), "{:?}", report.result);
    assert_eq!(
        report.output.matches("Read-only file system").count(),
        3,
        "{}",
        report.output
    );
    assert!(!dir.join("src").join(&marker).exists());
    assert!(!Path::new("/usr").join(&marker).exists());
    assert!(!Path::new("/").join(&marker).exists());
    // Its /tmp was its own, gone with it; its products are in the tree.
    assert!(!Path::new("/tmp").join(&marker).exists());
    assert_eq!(
        std::fs::read_to_string(dir.join("tree/made")).unwrap(),
        "made\n"
    );
}

#[tokio::test]
async fn a_build_of_root_runs_as_nobody_seen_from_the_host() {
    if !sandbox_ready("user") || !nix::unistd::geteuid().is_root() {
        eprintln!("user: skipped unless root with bubblewrap");
        return;
    }
    let nobody = nix::unistd::User::from_name("nobody")
        .unwrap()
        .unwrap()
        .uid
        .as_raw();
    let (_place, dir) = version(&[("hus-bot.toml", "build = \"sleep 2.345\"\nrun = \"./bot\"\n")]);
    let watch = tokio::task::spawn_blocking(move || {
        // The build's sleep, found in the host's /proc: its real user.
        let until = std::time::Instant::now() + Duration::from_secs(30);
        while std::time::Instant::now() < until {
            for entry in std::fs::read_dir("/proc").unwrap().flatten() {
                let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
                if cmdline == b"sleep\x002.345\x00" {
                    let status =
                        std::fs::read_to_string(entry.path().join("status")).unwrap_or_default();
                    if let Some(line) = status.lines().find(|l| l.starts_with("Uid:")) {
                        return Some(
                            line.split_whitespace()
                                .skip(1)
                                .map(|u| u.parse::<u32>().unwrap())
                                .collect::<Vec<_>>(),
                        );
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    });
    let report = build(&dir, &limits()).await;
    assert!(report.result.is_ok(), "{:?}", report.result);
    // Real, effective, saved and file-system user ids.
    assert_eq!(watch.await.unwrap(), Some(vec![nobody; 4]));
}

#[test]
fn a_version_is_built_once() {
    // The check comes before any sandbox: no bubblewrap needed.
    let (_place, dir) = version(&[("hus-bot.toml", "run = \"./bot\"\n")]);
    std::fs::create_dir(dir.join("tree")).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let report = runtime.block_on(build(&dir, &limits()));
    let e = report.result.unwrap_err().to_string();
    assert!(
        e.ends_with("/tree exists already: a version is built once"),
        "{e}"
    );
    let _: &Path = &dir;
}

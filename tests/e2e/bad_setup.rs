use crate::common::*;

fn fails_with(args: &[&str], message: &str) {
    let out = hus(args);
    assert!(!out.status.success(), "{args:?} should fail");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(message),
        "{args:?}: stderr {err:?} should contain {message:?}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bad_arguments_are_clear_errors() {
    let dir = LogDir::new();
    let d = dir.path().to_str().expect("utf-8");
    let r = random_bot();
    fails_with(
        &["match", &r, &r, "--rules", "chess", "--log-dir", d],
        "unknown rules preset \"chess\"",
    );
    fails_with(
        &["match", &r, &r, "--width", "33", "--log-dir", d],
        "row width 33 is out of range (expected 8 to 32)",
    );
    fails_with(
        &["match", &r, &r, "--move-time", "fast", "--log-dir", d],
        "invalid --move-time",
    );
    fails_with(
        &["match", &r, &r, "--clock", "60s", "--log-dir", d],
        "BASE+INCREMENT",
    );
    fails_with(
        &["match", &r, &r, "--games", "0", "--log-dir", d],
        "--games must be at least 1",
    );
    fails_with(&["match", "", &r, "--log-dir", d], "bot command is empty");
    fails_with(
        &["match", "python3 'x", &r, "--log-dir", d],
        "unbalanced quotes",
    );
    fails_with(
        &["perft", "--depth", "0"],
        "--depth must be between 1 and 30",
    );
}

#[test]
fn a_bot_that_cannot_start_is_an_error_before_any_game() {
    let dir = LogDir::new();
    let d = dir.path().to_str().expect("utf-8");
    fails_with(
        &[
            "match",
            "/nonexistent/bot --x",
            &random_bot(),
            "--log-dir",
            d,
        ],
        "cannot start bot A (\"/nonexistent/bot --x\")",
    );
    let not_exec = dir.path().join("bot.txt");
    std::fs::write(&not_exec, "hello").expect("write");
    fails_with(
        &[
            "match",
            &random_bot(),
            not_exec.to_str().expect("utf-8"),
            "--log-dir",
            d,
        ],
        "Permission denied",
    );
}

#[test]
fn an_unwritable_log_directory_is_an_error() {
    let dir = LogDir::new();
    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, "x").expect("write");
    let r = random_bot();
    fails_with(
        &["match", &r, &r, "--log-dir", file.to_str().expect("utf-8")],
        "cannot create the log directory",
    );
}

/// A full disk, simulated with a file-size limit: the log cannot be written, and `hus`
/// says so and fails instead of reporting the set.
#[test]
fn a_log_that_cannot_be_written_stops_the_set_with_an_error() {
    use std::os::unix::process::CommandExt;
    // The log is cut where the file size limit stops it.
    let dir = LogDir::new().cut_ok();
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_hus"));
    command
        .args([
            "match",
            &random_bot(),
            &random_bot(),
            "--games",
            "50",
            "--log-dir",
        ])
        .arg(dir.path());
    // SAFETY: only setrlimit, which is async-signal-safe, between fork and exec.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 8192,
                rlim_max: 8192,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = command.output().expect("hus runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("the set did not finish; the log"), "{err}");
    assert!(
        err.contains("is incomplete: cannot write to the log"),
        "{err}"
    );
    assert!(err.contains("File too large"), "{err}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !stdout.contains("wins the set") && !stdout.contains("set is drawn"),
        "{stdout}"
    );
}

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
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path().to_str().expect("utf-8");
    let r = random_bot();
    fails_with(
        &["match", &r, &r, "--rules", "chess", "--log-dir", d],
        "unknown rules preset \"chess\"",
    );
    fails_with(
        &["match", &r, &r, "--width", "20", "--log-dir", d],
        "row width 20 is out of range",
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
    let dir = tempfile::tempdir().expect("temp dir");
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
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, "x").expect("write");
    let r = random_bot();
    fails_with(
        &["match", &r, &r, "--log-dir", file.to_str().expect("utf-8")],
        "cannot create the log directory",
    );
}

//! Failures that explain themselves (issue 22, point 3): a bot that crashes says why in
//! the fault's detail, on `hus match`'s console and on `hus league`'s progress lines,
//! with the last line of its stderr and the file's path; and each process of a
//! restarted bot has its own exact cut note in the stderr file.

use std::process::Command;

use crate::common::*;

/// What an interpreter says on its stderr, last, when told to run a script that does
/// not exist: asked of the interpreter itself, so the test holds wherever it is
/// installed (`python3` names itself by its full path under pyenv).
fn complaint(interpreter: &str, script: &str) -> String {
    let out = Command::new(interpreter)
        .arg(script)
        .output()
        .expect("the interpreter runs");
    assert_eq!(out.status.code(), Some(2), "{interpreter} {script}");
    let stderr = String::from_utf8(out.stderr).expect("UTF-8");
    stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .expect("a complaint")
        .trim()
        .to_string()
}

fn has(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The two ways a bot that exits at once is found out: it closed its stdout before
/// `hello` was written, or the write of `hello` found the pipe closed. Which one is a
/// race between the bot's exit and the referee's write; the rest of the detail is not.
fn crash_details(stderr_words: &str) -> [String; 2] {
    [
        "closed its stdout",
        "could not be sent hello: Broken pipe (os error 32)",
    ]
    .map(|what| format!("{what} (exit status 2); {stderr_words}"))
}

#[test]
fn a_league_bot_whose_script_is_missing_says_why_on_the_progress_line() {
    let dir = LogDir::new();
    let mut bots = vec![("py", "python3", "/nonexistent/bot.py")];
    if has("perl") {
        bots.push(("pl", "perl", "/nonexistent/bot.pl"));
    }
    let mut text =
        "rules = \"hus\"\ngames = 2\nrounds = 1\nseed = 1\nconcurrency = 1\n".to_string();
    for (name, interpreter, script) in &bots {
        text.push_str(&format!(
            "\n[[bot]]\nname = \"{name}\"\ncommand = \"{interpreter} {script}\"\n"
        ));
    }
    text.push_str(&format!(
        "\n[[bot]]\nname = \"rnd\"\ncommand = \"{}\"\n",
        hus_random(1).replace('\'', "")
    ));
    let file = dir.path().join("L.toml");
    std::fs::write(&file, text).expect("write the league file");
    let league_dir = dir.path().join("L");
    let out = Command::new(env!("CARGO_BIN_EXE_hus"))
        .arg("league")
        .arg(&file)
        .arg("--dir")
        .arg(&league_dir)
        .output()
        .expect("hus league runs");
    let stderr = String::from_utf8(out.stderr).expect("UTF-8");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let logs = league_dir.join("logs");
    // Each set against the random mover: the set's line, then the bot's fault line
    // with the interpreter's complaint and the stderr file (the bad bots come first in
    // the file, so they are seat A against rnd).
    for (name, interpreter, script) in &bots {
        let stem = format!("r1-{name}-vs-rnd");
        let set_line = stderr
            .lines()
            .position(|l| l.contains(&format!("] round 1, {name} vs rnd: ")))
            .unwrap_or_else(|| panic!("no line for {stem}: {stderr}"));
        let lines: Vec<&str> = stderr.lines().collect();
        assert!(
            lines[set_line].contains(": 0-2, rnd wins the set (2 games, 2 faults); "),
            "{}",
            lines[set_line]
        );
        let path = logs.join(format!("{stem}.a.stderr"));
        let words = format!(
            "last line of its stderr ({}): {}",
            path.display(),
            complaint(interpreter, script)
        );
        let expected = crash_details(&words)
            .map(|d| format!("  {name}: 2 faults, the first in game 1: crash: {d}"));
        assert!(
            expected.contains(&lines[set_line + 1].to_string()),
            "{}\nis not one of\n{expected:#?}",
            lines[set_line + 1]
        );
        // The log's fault records say the same (the LogDir has every log verified).
        let log = logs.join(format!("{stem}.jsonl"));
        let records = read_log(&log);
        let details: Vec<&str> = of_type(&records, "fault")
            .iter()
            .map(|f| f["detail"].as_str().expect("detail"))
            .collect();
        assert_eq!(details.len(), 2, "{details:?}");
        for detail in details {
            assert!(
                crash_details(&words).iter().any(|d| d == detail),
                "{detail}"
            );
        }
    }
}

#[test]
fn hus_match_shows_why_a_bot_crashed_on_the_console_and_in_the_log() {
    let dir = LogDir::new();
    let log_dir = dir.path().join("logs");
    let out = hus(&[
        "match",
        "python3 /nonexistent/bot.py",
        &hus_random(1),
        "--games",
        "1",
        "--seed",
        "1",
        "--log-dir",
        log_dir.to_str().expect("UTF-8"),
    ]);
    let console = String::from_utf8(out.stdout).expect("UTF-8");
    assert_eq!(out.status.code(), Some(0), "{console}");
    let log = file_ending(&log_dir, ".jsonl");
    let records = read_log(&log);
    let stderr_name = records[0]["bots"][0]["stderr"].as_str().expect("stderr");
    let words = format!(
        "last line of its stderr ({}): {}",
        log_dir.join(stderr_name).display(),
        complaint("python3", "/nonexistent/bot.py")
    );
    let faults = of_type(&records, "fault");
    assert_eq!(faults.len(), 1, "{faults:?}");
    let detail = faults[0]["detail"].as_str().expect("detail");
    assert!(
        crash_details(&words).iter().any(|d| d == detail),
        "{detail}"
    );
    let line = format!("  fault answering hello, before game 1: A crash: {detail}");
    assert!(
        console.lines().any(|l| l == line),
        "no line\n{line}\nin\n{console}"
    );
    // `hus replay` shows it whole too.
    let replay = hus(&["replay", log.to_str().expect("UTF-8")]);
    let shown = String::from_utf8(replay.stdout).expect("UTF-8");
    assert!(
        shown
            .lines()
            .any(|l| l.ends_with(&format!(" crash: {detail}"))),
        "{shown}"
    );
}

/// A restarted bot's processes share one MiB of stderr for the set: the first keeps its
/// first MiB, the later ones nothing; each notes the cut and a total of exactly its own
/// bytes, so the file cannot grow with the restarts.
#[test]
fn a_restarted_bots_processes_share_one_mib_of_stderr_for_the_set() {
    const CAP: usize = 1 << 20;
    let base = CAP + 5000;
    let set = play(
        &misbehave(&format!("stderr-exit {base}")),
        &hus_random(1),
        &["--games", "3", "--seed", "1"],
    );
    let faults = of_type(&set.records, "fault");
    assert_eq!(faults.len(), 3, "one crash a game: {faults:?}");
    let header = &set.records[0];
    let stderr_name = header["bots"][0]["stderr"].as_str().expect("stderr");
    let path = set.log.with_file_name(stderr_name);
    let mut expected = Vec::new();
    for game in 1..=3 {
        let bytes = base + 1000 * game;
        if game == 1 {
            expected.extend(std::iter::repeat_n(b'e', CAP));
        }
        expected.extend(
            format!(
                "\n[hus: stderr cut here: the bot's {CAP} bytes of stderr for the set are used up; \
                 the rest was read and discarded]\n\
                 [hus: {bytes} bytes of stderr in all]\n"
            )
            .bytes(),
        );
    }
    let file = std::fs::read(&path).expect("the stderr file");
    assert!(file == expected, "{} is not as expected", path.display());
    // The shutdown records count the same, process by process.
    let counts: Vec<(u64, bool)> = of_type(&set.records, "shutdown")
        .iter()
        .filter(|s| s["bot"] == 0)
        .map(|s| {
            (
                s["stderr_bytes"].as_u64().expect("bytes"),
                s["stderr_cut"].as_bool().expect("cut"),
            )
        })
        .collect();
    let want: Vec<(u64, bool)> = (1..=3).map(|g| ((base + 1000 * g) as u64, true)).collect();
    assert_eq!(counts, want);
    // The first crash quotes the last line kept of its own process's part (a line of
    // 'e's without its start: the window read is the last 4 KiB of the kept MiB); the
    // later ones say that nothing of theirs was kept.
    let first = format!(
        "last line kept of its stderr ({}, cut at the bot's {CAP} bytes for the set): …{}… \
         (4096 bytes in all)",
        path.display(),
        "e".repeat(200)
    );
    let later = format!(
        "nothing of its stderr kept ({}): the bot's {CAP} bytes for the set were used up",
        path.display()
    );
    for (i, f) in faults.iter().enumerate() {
        let words = if i == 0 { &first } else { &later };
        assert_eq!(
            f["detail"],
            format!("closed its stdout (exit status 1); {words}")
        );
    }
}

//! The examples of the documents are real: the session of PROTOCOL.md is played again
//! and compared line by line, every `console` block of README.md and RULES.md is run
//! and its output compared (times, dates and temporary paths aside), and every command
//! of README's `sh` blocks runs, with its exit status and the shape of its output
//! checked. A command that stops working, or output that changes, fails here.

use crate::common::*;
use crate::doc_support::*;

/// The command of the ```sh block right after `marker` in `text`.
fn sh_command_after(text: &str, marker: &str) -> String {
    let at = text.find(marker).unwrap_or_else(|| panic!("no {marker:?}"));
    code_blocks(&text[at..])
        .into_iter()
        .find(|(lang, _, _)| lang == "sh")
        .map(|(_, _, body)| body.trim().to_string())
        .expect("an sh block")
}

#[test]
fn protocol_example_session_is_a_real_session() {
    let protocol = doc("PROTOCOL.md");
    let command = sh_command_after(&protocol, "A complete session as the bot sees it");
    let sandbox = Sandbox::new();
    let transcript = sandbox.dir.path().join("session.transcript");
    let out = sandbox.run(&format!(
        "{} --quiet",
        with_transcript(&command, &transcript)
    ));
    assert!(
        out.status.success(),
        "{command}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let real: Vec<String> = transcript_lines(&transcript)
        .into_iter()
        .map(|(from_referee, line)| format!("{} {line}", if from_referee { "<-" } else { "->" }))
        .collect();
    // The example: its `<-`/`->` lines, in runs separated by `...` lines.
    let start = protocol.find("```text\n<- ").expect("the example session");
    let example = &protocol[start + "```text\n".len()..];
    let example = &example[..example.find("```").expect("its end")];
    let mut runs: Vec<Vec<&str>> = vec![Vec::new()];
    for line in example.lines() {
        if line.starts_with("<- ") || line.starts_with("-> ") {
            runs.last_mut().expect("a run").push(line);
        } else if line.trim() == "... more turns and moves ..." {
            runs.push(Vec::new());
        }
    }
    assert!(runs.len() >= 2 && runs.iter().all(|r| !r.is_empty()));
    // The first run opens the session, the last one closes it, and each run is a
    // stretch of consecutive lines, in order.
    let mut at = 0;
    for (i, run) in runs.iter().enumerate() {
        let found = if i == 0 {
            Some(0)
        } else if i == runs.len() - 1 {
            real.len().checked_sub(run.len()).filter(|&s| s >= at)
        } else {
            (at..real.len()).find(|&s| {
                real[s..].starts_with(&run.iter().map(|l| l.to_string()).collect::<Vec<_>>())
            })
        };
        let Some(s) = found else {
            panic!(
                "the example's run {i} is not in the session:\n{}",
                real.join("\n")
            );
        };
        for (k, line) in run.iter().enumerate() {
            assert_eq!(
                real.get(s + k).map(String::as_str),
                Some(*line),
                "line {k} of the example's run {i} differs from the real session:\n{}",
                real.join("\n")
            );
        }
        at = s + run.len() + 1;
    }
}

/// `command`, with allowances no healthy bot misses on a loaded machine when it plays
/// games (`hus match`, `hus check-bot`): they come last, so they override the
/// command's own (`--move-time 200ms`). What the documents' commands show is that they
/// work and what they print; a bot answering in 200 ms on a busy machine is not part
/// of it. The allowances only show in the output as times in ms, which are not
/// compared.
fn generous(command: &str) -> String {
    let words = shlex::split(command).unwrap_or_default();
    match words.get(1).map(String::as_str) {
        Some("match" | "check-bot") => format!("{command} {}", GENEROUS.join(" ")),
        _ => command.to_string(),
    }
}

/// Runs every `console` block of `name` and compares its output.
fn console_examples_are_real(name: &str, sandbox: &Sandbox) -> usize {
    let text = doc(name);
    let shown = console_commands(&text);
    for s in &shown {
        let out = sandbox.run(&generous(&s.command));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(s.status),
            "{name} line {}: {}\n{stdout}{}",
            s.line,
            s.command,
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            normalize(&stdout),
            normalize(&s.output),
            "{name} line {}: the output of `{}` is not what the document shows",
            s.line,
            s.command
        );
    }
    shown.len()
}

#[test]
fn readme_console_examples_are_real() {
    let sandbox = Sandbox::new();
    let n = console_examples_are_real("README.md", &sandbox);
    assert!(n >= 4, "README.md has {n} console examples");
}

#[test]
fn rules_end_rule_examples_are_real() {
    let sandbox = Sandbox::new();
    let text = doc("RULES.md");
    let shown = console_commands(&text);
    assert_eq!(
        shown.len(),
        3,
        "the end-rule examples of RULES.md section 5"
    );
    console_examples_are_real("RULES.md", &sandbox);
    let mut ends = Vec::new();
    for s in &shown {
        let words = shlex::split(&s.command).expect("a command");
        assert_eq!(&words[..2], ["hus", "line"]);
        // Options with their values (but --last, which only hides moves), then the pits.
        let mut options: Vec<&str> = Vec::new();
        let mut pits: Vec<&str> = Vec::new();
        let mut args = words[2..].iter().map(String::as_str);
        while let Some(arg) = args.next() {
            if arg.starts_with("--") {
                let value = args.next().expect("an option's value");
                if arg != "--last" {
                    options.extend([arg, value]);
                }
            } else {
                pits.push(arg);
            }
        }
        let mut all = options.clone();
        all.extend(&pits);
        let json = crate::doc_tables::line_json(&all);
        let end = json["end"]["reason"]
            .as_str()
            .expect("the line ends the game");
        ends.push(end.to_string());
        // The independent Python rules end the game the same way, on the same board.
        let start = json["start"].as_str().expect("start");
        let last = json["moves"]
            .as_array()
            .and_then(|m| m.last())
            .map(|m| m["position"].as_str().expect("position").to_string())
            .expect("moves");
        assert_eq!(
            python_line(start, &pits),
            format!("{end} {last}"),
            "hus_rules.py on {}",
            s.command
        );
        // One pit fewer: not over; one more: refused.
        let mut shorter = options.clone();
        shorter.extend(&pits[..pits.len() - 1]);
        let before = crate::doc_tables::line_json(&shorter);
        assert_eq!(before["end"], serde_json::Value::Null);
        assert_eq!(before["error"], serde_json::Value::Null);
        let mut longer = all.clone();
        longer.push("0");
        let after = crate::doc_tables::line_json(&longer);
        assert_eq!(after["error"]["message"], "the game is already over");
        if end == "no-capture-limit" {
            assert_eq!(before["quiet_plies"], 199);
            assert_eq!(json["quiet_plies"], 200);
        }
    }
    assert_eq!(ends, ["repetition", "repetition", "no-capture-limit"]);
}

/// The end reason and the final position of a line, by `hus_rules.py`.
fn python_line(start: &str, pits: &[&str]) -> String {
    let script = r#"
import sys
sys.path.insert(0, sys.argv[1])
import hus_rules
game = hus_rules.Game(hus_rules.parse(sys.argv[2]))
for pit in sys.argv[3:]:
    game.play(int(pit))
print(game.end.reason if game.end else "none", hus_rules.to_notation(game.position))
"#;
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(root().join("sample-bots/python"))
        .arg(start)
        .args(pits)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// README `sh` lines that no test runs, and why. Any other line of a `sh` block must
/// run.
const NOT_RUN: [(&str, &str); 21] = [
    ("bash tests/run.sh", "the test suite itself"),
    (
        "./target/release/hus play --web ",
        "a person at a browser: tests/e2e/play_web.rs plays it by clicks in Chromium",
    ),
    (
        "./target/release/hus play ",
        "a person at the keyboard: tests/e2e/play.rs plays it through a pseudo-terminal",
    ),
    (
        "cargo build --release --workspace && ./target/release/hus serve ",
        "runs until stopped: the e2e tests in tests/e2e/serve.rs run it",
    ),
    (
        "curl -s http://127.0.0.1:8080/",
        "needs a running hus serve: tests/e2e/serve.rs requests every endpoint",
    ),
    (
        "curl -s -X POST",
        "needs a running hus serve: tests/e2e/serve.rs runs the admin actions",
    ),
    ("hus match BOT_A BOT_B [options]", "a synopsis, not a command"),
    (
        "hus match \"target/release/alphabeta-bot --first-legal\" \"target/release/alphabeta-bot --first-legal\" --games 10000",
        "a benchmark: 10,000 games and a 379 MB log",
    ),
    ("time hus replay /tmp/big/*.jsonl", "the benchmark's replay"),
    (
        "hus replay /tmp/big/*.jsonl --html",
        "the benchmark's viewer pages",
    ),
    ("hus match \"bwrap ", "needs bubblewrap and a stranger's bot in bots/stranger"),
    (
        "cargo build --release --workspace && ./target/release/hus league leagues/ladder.toml",
        "the ladder's league (1,760 games); ladder's unit tests check the list it made",
    ),
    (
        "./target/release/hus standings leagues/ladder",
        "the standings of the ladder's league, not played here",
    ),
    (
        "hus league leagues/sample.toml --store ",
        "needs a PostgreSQL server: tests/e2e/workers.rs runs it against a real one",
    ),
    (
        "hus worker --store ",
        "needs a PostgreSQL server: tests/e2e/workers.rs runs it against a real one",
    ),
    (
        "hus standings --store ",
        "needs a PostgreSQL server: tests/e2e/workers.rs runs it against a real one",
    ),
    (
        "hus workers --store ",
        "needs a PostgreSQL server: tests/e2e/workers.rs runs it against a real one",
    ),
    (
        "hus export --store ",
        "needs a PostgreSQL server: tests/e2e/workers.rs runs it against a real one",
    ),
    (
        "hus connect league.example.org:7000 ",
        "needs a server's bot port: tests/e2e/remote.rs runs hus connect against one",
    ),
    (
        "./target/release/hus submit http://127.0.0.1:8080 sample-bots/python --bot alice-greedy --token-file",
        "needs a running hus serve: tests/e2e/serve/uploads.rs sends versions with hus submit",
    ),
    (
        "hus match \"./my_bot --v2\"",
        "two versions of your own bot until the SPRT decides (thousands of games); the console example after it runs",
    ),
];

/// The commands of README's `sh` blocks: continuation lines joined, comments dropped.
fn readme_sh_commands() -> Vec<String> {
    let mut commands = Vec::new();
    for (lang, _, body) in code_blocks(&doc("README.md")) {
        if lang != "sh" {
            continue;
        }
        let mut current = String::new();
        for line in body.lines() {
            let line = line.trim();
            if line.starts_with('#') || line.is_empty() {
                continue;
            }
            let line = line.split("  #").next().unwrap_or(line).trim_end();
            match line.strip_suffix('\\') {
                Some(part) => current.push_str(part),
                None => {
                    current.push_str(line);
                    commands.push(std::mem::take(&mut current));
                }
            }
        }
    }
    commands
}

#[test]
fn readme_commands_run() {
    let sandbox = Sandbox::new();
    // The Rust bot searches to a fixed depth: with the generous move time it would
    // otherwise think for seconds a move (a level has a depth of its own).
    let wrapper = sandbox.dir.path().join("target/release/alphabeta-bot");
    std::fs::write(
        &wrapper,
        format!(
            // A level sets its own depth (`--level` refuses `--depth`).
            "#!/bin/sh\ncase \" $* \" in *\" --level \"*) exec '{0}' \"$@\";; esac\nexec '{0}' --depth 4 \"$@\"\n",
            crate::sample_bots::alphabeta()
        ),
    )
    .expect("write the wrapper");
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("chmod");
    // README's `--sandbox` commands run the sample bots as `nobody` when the tests run
    // as root: the checkout must let that user through, as README tells an organiser
    // (a checkout in a private directory, as `mktemp -d` makes, does not).
    crate::sandbox::let_sandbox_user_in(&crate::common::root().join("sample-bots"));
    let start = "hus 8 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0";
    let mut log: Option<String> = None;
    let mut ran = 0;
    for command in readme_sh_commands() {
        if NOT_RUN.iter().any(|(c, _)| command.starts_with(c)) {
            continue;
        }
        // The tests build the binaries; the sandbox links them where README expects.
        let command = command
            .strip_prefix("cargo build --release --workspace && ")
            .unwrap_or(&command)
            .to_string();
        let command = command
            .replace("PIT...", "7 4")
            .replace("NOTATION", start)
            .replace("LOG", log.as_deref().unwrap_or("LOG"));
        let out = sandbox.run(&generous(&command));
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(
            out.status.code(),
            Some(0),
            "README: `{command}` failed:\n{stdout}{stderr}"
        );
        let words = shlex::split(&command).expect("a command");
        let sub = words.get(1).map(String::as_str).unwrap_or_default();
        let has = |text: &str| {
            assert!(
                stdout.contains(text),
                "README: `{command}` should print {text:?}:\n{stdout}"
            )
        };
        let archive = "leagues/quick/logs/archive/sets-000000001-000000064.tar.zst";
        match sub {
            "-p" if command.starts_with("mkdir") => {}
            "league" if command.contains("quick.toml") => {
                has("66 of 66 sets played (132 games)");
            }
            "prune" if command.contains("--archive") => has(
                "hus prune: 64 logs archived in 1 file under logs/archive (64 log files deleted); \
                 the last 2 finished sets' logs wait for a whole 64",
            ),
            "replay" if command.contains("--unpack") => {
                has("r1-ann-vs-bob: verified: 2 games, ");
                let unpacked = std::fs::read_dir(sandbox.dir.path().join("unpacked"))
                    .expect("unpacked")
                    .count();
                assert_eq!(unpacked, 64);
            }
            "replay" if command.ends_with(".tar.zst") => {
                has("r1-ann-vs-bob: verified: 2 games, ");
                assert_eq!(stdout.lines().count(), 64, "{stdout}");
                assert!(sandbox.dir.path().join(archive).is_file());
            }
            "match" => {
                has("\nbot ");
                let path = stdout
                    .lines()
                    .find_map(|l| l.strip_prefix("log: "))
                    .expect("the log's path");
                log.get_or_insert(path.to_string());
            }
            "replay" if command.contains("--html") => {
                let at = words.iter().position(|w| w == "--html").expect("--html");
                let page = &words[at + 1];
                has(&format!("viewer: {page}"));
                assert!(sandbox.dir.path().join(page).exists(), "{page}");
            }
            "replay" if command.contains("--ply") => has("position: hus 8 "),
            "replay" if command.contains("--game") => has("result: "),
            "replay" => has("verified: 7 games"),
            "line" if command.contains("--json") => {
                let v: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
                assert_eq!(v["plies"], 2);
            }
            "line" => has("ply 1: player 1 plays pit 4: "),
            "check-bot" => has("\nno problems"),
            "perft" if command.contains("--json") => {
                let v: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
                assert_eq!(v["counts"], serde_json::json!([12, 144, 1320, 10910]));
            }
            "perft" if command.contains("--position") => has("1 12\n2 144\n3 1320\n"),
            "perft" => has("1 12\n2 144\n3 1320\n4 10910\n5 77770\n6 508939\n"),
            "league" => {
                has("12 of 12 sets played (84 games)");
                has("likelihood of superiority");
                assert!(sandbox
                    .dir
                    .path()
                    .join("leagues/sample/league.sqlite")
                    .exists());
            }
            "standings" if command.contains("--format json") => {
                let v: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
                assert_eq!(v["games_played"], 84);
                assert_eq!(v["bots"].as_array().map(Vec::len), Some(4));
            }
            "standings" => has("12 of 12 sets played (84 games)"),
            "token" if command.contains("--author") => {
                // The token went to a file; only its digest is in the league's directory.
                let token = std::fs::read_to_string(sandbox.dir.path().join("alice-author.token"))
                    .expect("the token file");
                let authors =
                    std::fs::read_to_string(sandbox.dir.path().join("leagues/sample/authors.json"))
                        .expect("the authors' file");
                assert_eq!(token.trim().len(), 64, "{token}");
                assert!(
                    authors.contains(&remote::hex(&remote::token_hash(token.trim())))
                        && authors.contains("\"alice-*\"")
                        && !authors.contains(token.trim()),
                    "{authors}"
                );
            }
            "submit" => has("hus submit: packed sample-bots/python (5 files, "),
            "token" if command.contains("--admin") => {
                // The token went to a file; only its digest is in the league's directory.
                let token = std::fs::read_to_string(sandbox.dir.path().join("admin.token"))
                    .expect("the token file");
                let digest = std::fs::read_to_string(
                    sandbox.dir.path().join("leagues/sample/admin-token.sha256"),
                )
                .expect("the digest file");
                assert_eq!((token.trim().len(), digest.trim().len()), (64, 64));
                assert_eq!(
                    digest.trim(),
                    remote::hex(&remote::token_hash(token.trim())),
                    "the digest is the token's SHA-256"
                );
            }
            "token" => {
                has("token_sha256 = \"");
                let token = std::fs::read_to_string(sandbox.dir.path().join("alice.token"))
                    .expect("the token file");
                assert_eq!(token.trim().len(), 64, "{token}");
            }
            "rate" if command.contains("--list") => {
                has("level-10");
                has("(the anchor)");
            }
            // README shows this seeded set's output: every bot in it is seeded.
            "rate" => has("\nyour bot is 397 ± 93 on the hus ladder\n"),
            other => panic!("README: no shape is known for `hus {other}`: `{command}`"),
        }
        ran += 1;
    }
    assert!(log.is_some(), "README's first command plays a set");
    assert!(ran >= 14, "only {ran} README commands ran");
}

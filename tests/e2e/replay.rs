//! `hus replay`: logs of real sets verify (faults and restarts included); hand-altered
//! logs are refused at the right line with the right message; one game and one
//! position are shown as the engine has them; a set is followed while its log grows;
//! the HTML viewer, in headless Chromium, shows the engine's boards in both sowing
//! directions.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use engine::{Game, Player, Position};
use serde_json::{json, Value};

use crate::common::*;

/// `hus replay ARGS...`: exit code, stdout, stderr.
fn replay(args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["replay"];
    all.extend_from_slice(args);
    let out = hus(&all);
    (
        out.status.code().expect("hus replay exits with a code"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// The lines of a log, without their newlines.
fn log_lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .expect("log readable")
        .lines()
        .map(str::to_string)
        .collect()
}

/// Writes `lines` to a new file in `dir`, each followed by a newline.
fn write_log(dir: &Path, name: &str, lines: &[String]) -> PathBuf {
    let path = dir.join(name);
    let mut text = lines.join("\n");
    text.push('\n');
    std::fs::write(&path, text).expect("write the altered log");
    path
}

fn record(line: &str) -> Value {
    serde_json::from_str(line).expect("a JSON record")
}

fn compact(v: &Value) -> String {
    serde_json::to_string(v).expect("JSON")
}

/// `A (python-greedy)`, as hus labels a bot.
fn label(header: &Value, bot: u64) -> String {
    let letter = ["A", "B"][bot as usize];
    match header["bots"][bot as usize]["name"].as_str() {
        Some(name) => format!("{letter} ({name})"),
        None => letter.to_string(),
    }
}

/// For every move record (by index in `records`): the position before it.
fn positions_before(records: &[Value]) -> Vec<Option<Position>> {
    let mut current: Option<Position> = None;
    records
        .iter()
        .map(|r| match r["type"].as_str() {
            Some("game-start") => {
                current = r["position"].as_str().and_then(|p| p.parse().ok());
                None
            }
            Some("move") => {
                let before = current;
                current = r["position"].as_str().and_then(|p| p.parse().ok());
                before
            }
            _ => None,
        })
        .collect()
}

/// The position of game `game` after `plies` moves, by the engine alone.
fn engine_position(records: &[Value], game: u64, plies: usize) -> Position {
    let start = records
        .iter()
        .find(|r| r["type"] == "game-start" && r["game"] == game)
        .expect("the game starts");
    let mut g = Game::new(
        start["position"]
            .as_str()
            .expect("position")
            .parse()
            .expect("notation"),
    );
    for m in records
        .iter()
        .filter(|r| r["type"] == "move" && r["game"] == game)
        .take(plies)
    {
        g.play(m["pit"].as_u64().expect("pit") as usize)
            .expect("a legal move");
    }
    *g.position()
}

/// Checks the summary of a verified log against its records.
fn check_summary(records: &[Value], out: &str) {
    let header = &named_header(records);
    let moves = of_type(records, "move").len() as u64;
    let ends = of_type(records, "game-end");
    let verified = format!(
        "verified: {}, {}",
        plural(ends.len() as u64, "game", "games"),
        plural(moves, "move", "moves")
    );
    assert_eq!(out.lines().last(), Some(verified.as_str()), "{out}");
    assert!(
        out.contains(&format!(
            "set: {} at width {}, {} games",
            header["rules"]["preset"].as_str().expect("preset"),
            header["rules"]["width"],
            header["games"]
        )),
        "{out}"
    );
    for bot in 0..2 {
        let line = format!(
            "  {}: {}",
            label(header, bot),
            header["bots"][bot as usize]["command"]
                .as_str()
                .expect("command")
        );
        assert!(out.lines().any(|l| l == line), "{line:?} in {out}");
    }
    for end in ends {
        let prefix = format!("game {}: ", end["game"]);
        let line = out
            .lines()
            .find(|l| l.starts_with(&prefix))
            .unwrap_or_else(|| panic!("no line for {prefix:?} in {out}"));
        let result = match end["winner"].as_u64() {
            Some(w) => format!("{} won", label(header, w)),
            None => "draw".to_string(),
        };
        let expected = format!("; {result} by {}", end["reason"].as_str().expect("reason"));
        assert!(
            line.contains(&expected),
            "{line:?} should contain {expected:?}"
        );
        let expected = format!(
            " after {}, points {}-{}; ",
            plural(end["plies"].as_u64().expect("plies"), "ply", "plies"),
            end["points"][0],
            end["points"][1]
        );
        assert!(
            line.contains(&expected),
            "{line:?} should contain {expected:?}"
        );
    }
    let set_end = of_type(records, "set-end")[0];
    let last = match set_end["winner"].as_u64() {
        Some(w) => format!("{} wins the set", label(header, w)),
        None => "the set is drawn".to_string(),
    };
    assert!(out.lines().any(|l| l == last), "{last:?} in {out}");
}

#[test]
fn logs_of_real_sets_verify() {
    let p = play(&greedy_bot(), &random_bot(), &["--seed", "11"]);
    let (code, out, err) = replay(&[path_str(&p.log)]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(err, "");
    assert!(out.contains("seed 11"), "{out}");
    check_summary(&p.records, &out);

    for (rules, width) in [("rulebook", "9"), ("mancala-world", "12")] {
        let p = play(
            &random_bot(),
            &random_bot(),
            &[
                "--seed", "5", "--games", "2", "--rules", rules, "--width", width,
            ],
        );
        let (code, out, err) = replay(&[path_str(&p.log)]);
        assert_eq!(code, 0, "{rules}: {err}");
        check_summary(&p.records, &out);
    }
}

/// A log compressed as a league keeps it replays exactly as the plain one: the same
/// output, status and game views; a cut or damaged zstd file is refused with a clear
/// error, never a panic.
#[test]
fn a_compressed_log_replays_as_the_plain_one() {
    let p = play(
        &greedy_bot(),
        &random_bot(),
        &["--seed", "12", "--games", "2"],
    );
    let copy = p.log.with_file_name("copy.jsonl");
    std::fs::copy(&p.log, &copy).expect("copy");
    let gz = referee::compress_log(&copy).expect("compress");
    assert!(referee::is_zstd(&std::fs::read(&gz).expect("bytes")));
    for args in [
        vec![],
        vec!["--game", "2"],
        vec!["--game", "1", "--ply", "3"],
        vec!["--follow"],
    ] {
        let mut plain = vec![path_str(&p.log)];
        plain.extend_from_slice(&args);
        let mut packed = vec![path_str(&gz)];
        packed.extend_from_slice(&args);
        let (code, out, err) = replay(&plain);
        assert_eq!(code, 0, "{args:?}: {err}");
        // The same words, but for the file's name where it is said.
        let (c, o, e) = replay(&packed);
        let named = |t: String| t.replace(path_str(&gz), path_str(&p.log));
        assert_eq!((c, named(o), named(e)), (code, out, err), "{args:?}");
    }
    // The viewer page of each: the same but for the file's name.
    let html = |log: &Path, page: &str| {
        let page = log.with_file_name(page);
        let (code, _, err) = replay(&[path_str(log), "--html", path_str(&page)]);
        assert_eq!(code, 0, "{err}");
        std::fs::read_to_string(&page).expect("page")
    };
    let plain_page = html(&p.log, "plain.html");
    let name = p
        .log
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    let packed_page = html(&gz, "packed.html").replace("copy.jsonl.zst", &name);
    assert!(plain_page == packed_page, "the viewer pages differ");
    // Cut in the middle, or a byte of its checksum changed.
    let bytes = std::fs::read(&gz).expect("bytes");
    let cut = gz.with_file_name("cut.jsonl.zst");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).expect("write");
    let (code, _, err) = replay(&[path_str(&cut)]);
    assert_ne!(code, 0);
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("cut.jsonl.zst"), "{err}");
    std::fs::remove_file(&cut).expect("remove");
    let mut bad = bytes.clone();
    let at = bad.len() - 2;
    bad[at] ^= 0xff;
    let damaged = gz.with_file_name("bad.jsonl.zst");
    std::fs::write(&damaged, &bad).expect("write");
    let (code, _, err) = replay(&[path_str(&damaged)]);
    assert_ne!(code, 0);
    assert!(!err.contains("panicked"), "{err}");
    std::fs::remove_file(&damaged).expect("remove");
}

#[test]
fn logs_with_faults_and_restarts_verify() {
    // A faults in every game (each restart brings a new process that faults again).
    let p = play(
        &misbehave("garbage"),
        &random_bot(),
        &["--seed", "2", "--games", "3"],
    );
    assert_eq!(of_type(&p.records, "restart").len(), 2);
    let (code, out, err) = replay(&[path_str(&p.log)]);
    assert_eq!(code, 0, "{err}");
    check_summary(&p.records, &out);
    assert!(
        out.lines()
            .any(|l| l == "  restarting A (misbehave-garbage) for game 2"),
        "{out}"
    );
    assert!(out.contains("won by malformed (fault by A)"), "{out}");
    assert!(
        out.contains("    line: thinking... pit 4 looks good"),
        "{out}"
    );

    // game-end.faulted must name the faults of its game.
    let lines = log_lines(&p.log);
    let dir = LogDir::new();
    let at = lines
        .iter()
        .position(|l| l.contains("\"game-end\""))
        .expect("a game-end");
    let mut altered = lines.clone();
    let mut end = record(&lines[at]);
    end["faulted"] = json!([]);
    altered[at] = compact(&end);
    dir.broken("faulted.jsonl");
    let bad = write_log(dir.path(), "faulted.jsonl", &altered);
    let (code, _, err) = replay(&[path_str(&bad)]);
    assert_eq!(code, 1);
    assert_eq!(
        err,
        format!(
            "CORRUPT: line {}: game-end of game 1: the log says faulted [] but the game's fault records name [0]\n",
            at + 1
        )
    );

    // A time-out under rulebook: the opponent scores every seed on the board. A moves
    // first (seed 1), so 200 ms is its deadline alone.
    let p = play(
        &misbehave("never-answer"),
        &hus_random(1),
        &[
            "--seed",
            "1",
            "--games",
            "1",
            "--move-time",
            "200ms",
            "--rules",
            "rulebook",
        ],
    );
    let (code, out, err) = replay(&[path_str(&p.log)]);
    assert_eq!(code, 0, "{err}");
    check_summary(&p.records, &out);
    assert!(out.contains("won by time-out (fault by A)"), "{out}");
    assert!(out.contains("points 0-48;"), "{out}");

    // Neither bot starts: no winner, 0-0.
    let p = play(
        &misbehave("no-hello"),
        &misbehave("no-hello"),
        &["--seed", "1", "--games", "1", "--ready-time", "300ms"],
    );
    let (code, out, err) = replay(&[path_str(&p.log)]);
    assert_eq!(code, 0, "{err}");
    check_summary(&p.records, &out);
    assert!(
        out.contains("game 1: ")
            && out.contains("; draw by start-up (fault by A and B) after 0 plies, points 0-0;"),
        "{out}"
    );
}

/// A set to alter by hand, and its lines.
struct Base {
    played: Played,
    lines: Vec<String>,
    /// Where the altered copies go: logs broken on purpose, not checked on drop (the
    /// played log is, in `played`'s directory).
    dir: tempfile::TempDir,
}

fn base() -> Base {
    let played = play(
        &greedy_bot(),
        &random_bot(),
        &["--seed", "3", "--games", "3"],
    );
    let lines = log_lines(&played.log);
    assert_eq!(lines.len(), played.records.len());
    Base {
        played,
        lines,
        // Altered logs only, broken on purpose.
        dir: tempfile::tempdir().expect("temp dir"),
    }
}

impl Base {
    fn records(&self) -> &[Value] {
        &self.played.records
    }

    /// Replays the log with line `index` (0-based) replaced by `record`.
    fn with(&self, index: usize, record: &Value) -> (i32, String, String) {
        let mut lines = self.lines.clone();
        lines[index] = compact(record);
        self.run(&lines)
    }

    fn run(&self, lines: &[String]) -> (i32, String, String) {
        let path = write_log(self.dir.path(), "altered.jsonl", lines);
        replay(&[path_str(&path)])
    }

    fn run_raw(&self, text: &str) -> (i32, String, String) {
        let path = self.dir.path().join("raw.jsonl");
        std::fs::write(&path, text).expect("write");
        replay(&[path_str(&path)])
    }

    /// The index of the first record of `kind` after `from` that satisfies `f`.
    fn find(&self, kind: &str, from: usize, f: impl Fn(&Value) -> bool) -> usize {
        (from..self.records().len())
            .find(|&i| self.records()[i]["type"] == kind && f(&self.records()[i]))
            .unwrap_or_else(|| panic!("no {kind} record found"))
    }
}

#[test]
fn a_changed_pit_is_refused_at_its_line() {
    let b = base();
    let before = positions_before(b.records());
    // The first move from a position with another legal pit.
    let i = b.find("move", 0, |_| true);
    let i = (i..b.records().len())
        .find(|&i| before[i].is_some_and(|p| p.legal_moves().len() > 1))
        .expect("a move with a choice");
    let m = &b.records()[i];
    let pit = m["pit"].as_u64().expect("pit") as usize;
    let pos = before[i].expect("position before");
    let other = pos.legal_moves().find(|&q| q != pit).expect("another pit");
    let mut after = pos;
    after.play(other).expect("legal");
    let mut altered = m.clone();
    altered["pit"] = json!(other);
    let (code, out, err) = b.with(i, &altered);
    assert_eq!(code, 1, "{out}");
    let head = format!(
        "CORRUPT: line {}: move of game {} ply {}: the log says position {} but the engine gives \"{after}\" (",
        i + 1,
        m["game"],
        m["ply"],
        m["position"]
    );
    let tail = format!("); the log's position is what pit {pit} gives, not pit {other}\n");
    assert!(
        err.starts_with(&head),
        "{err:?}\nshould start with {head:?}"
    );
    assert!(err.ends_with(&tail), "{err:?}\nshould end with {tail:?}");

    // A pit that cannot be played.
    let empty = (0..2 * pos.width())
        .find(|&q| pos.seeds(pos.to_move(), q) < 2)
        .expect("a pit with fewer than 2 seeds");
    let mut tried = pos;
    let refusal = tried.play(empty).expect_err("illegal").to_string();
    altered["pit"] = json!(empty);
    let (code, _, err) = b.with(i, &altered);
    assert_eq!(code, 1);
    assert_eq!(
        err,
        format!(
            "CORRUPT: line {}: move of game {} ply {}: pit {empty} is not a legal move: {refusal}\n",
            i + 1,
            m["game"],
            m["ply"]
        )
    );
}

#[test]
fn a_changed_board_is_refused_at_its_line() {
    let b = base();
    let i = b.find("move", 0, |m| m["ply"] == 4);
    let m = &b.records()[i];
    let logged: Position = m["position"]
        .as_str()
        .expect("position")
        .parse()
        .expect("notation");
    let mut setup = logged.to_setup();
    let seeds = setup.pits[1][3];
    setup.pits[1][3] += 1;
    let changed = setup.validate().expect("a valid position").to_string();
    let mut altered = m.clone();
    altered["position"] = json!(changed);
    let (code, _, err) = b.with(i, &altered);
    assert_eq!(code, 1);
    assert_eq!(
        err,
        format!(
            "CORRUPT: line {}: move of game {} ply 4: the log says position \"{changed}\" but the engine gives \"{logged}\" (player 1's pit 3: the log has {}, the engine {seeds})\n",
            i + 1,
            m["game"],
            plural(u64::from(seeds) + 1, "seed", "seeds")
        )
    );

    // No viewer is written for a corrupt log.
    let altered_log = write_log(b.dir.path(), "board.jsonl", &{
        let mut lines = b.lines.clone();
        lines[i] = compact(&altered);
        lines
    });
    let html = b.dir.path().join("board.html");
    let (code, _, err) = replay(&[path_str(&altered_log), "--html", path_str(&html)]);
    assert_eq!(code, 1);
    assert!(
        err.ends_with("no viewer written: the log is corrupt\n"),
        "{err}"
    );
    assert!(!html.exists());

    // The other facts of a move: seeds sown, events, truncated.
    let mut altered = m.clone();
    altered["sown"] = json!(m["sown"].as_u64().expect("sown") + 1);
    let (code, _, err) = b.with(i, &altered);
    assert_eq!(code, 1);
    assert_eq!(
        err,
        format!(
            "CORRUPT: line {}: move of game {} ply 4: the log says {} seeds sown but the engine sows {}\n",
            i + 1,
            m["game"],
            m["sown"].as_u64().expect("sown") + 1,
            m["sown"]
        )
    );
    let mut altered = m.clone();
    altered["events"] = json!([{"kind": "relay", "pit": 3, "seeds": 2}]);
    let (code, _, err) = b.with(i, &altered);
    assert_eq!(code, 1);
    assert!(
        err.starts_with(&format!(
            "CORRUPT: line {}: move of game {} ply 4: the log says events \"relay from 3 (2 seeds)\" but the engine gives \"",
            i + 1,
            m["game"]
        )),
        "{err}"
    );
    let mut altered = m.clone();
    altered["truncated"] = json!(true);
    let (code, _, err) = b.with(i, &altered);
    assert_eq!(code, 1);
    assert!(
        err.ends_with("the log says truncated true but the engine says false\n"),
        "{err}"
    );
}

#[test]
fn a_changed_result_is_refused_at_its_line() {
    let b = base();
    let i = b.find("game-end", 0, |_| true);
    let end = &b.records()[i];
    let points = [
        end["points"][0].as_u64().expect("p"),
        end["points"][1].as_u64().expect("p"),
    ];
    let mut altered = end.clone();
    altered["points"] = json!([points[0] + 1, points[1]]);
    let (code, _, err) = b.with(i, &altered);
    assert_eq!(code, 1);
    assert_eq!(
        err,
        format!(
            "CORRUPT: line {}: game-end of game 1: the log says points {}-{} but they are {}-{} (bot 0-bot 1, hus scoring)\n",
            i + 1,
            points[0] + 1,
            points[1],
            points[0],
            points[1]
        )
    );

    let winner = |w: &Value| match w.as_u64() {
        Some(b) => format!("bot {b}"),
        None => "nobody (a draw)".to_string(),
    };
    let mut altered = end.clone();
    let other = match end["winner"].as_u64() {
        Some(w) => json!(1 - w),
        None => json!(0),
    };
    altered["winner"] = other.clone();
    let (code, _, err) = b.with(i, &altered);
    assert_eq!(code, 1);
    assert_eq!(
        err,
        format!(
            "CORRUPT: line {}: game-end of game 1: the log says the winner is {} but it is {}\n",
            i + 1,
            winner(&other),
            winner(&end["winner"])
        )
    );

    let s = b.find("set-end", 0, |_| true);
    let set_end = &b.records()[s];
    let mut altered = set_end.clone();
    let other = match set_end["winner"].as_u64() {
        Some(w) => json!(1 - w),
        None => json!(0),
    };
    altered["winner"] = other.clone();
    let (code, _, err) = b.with(s, &altered);
    assert_eq!(code, 1);
    assert_eq!(
        err,
        format!(
            "CORRUPT: line {}: set-end: the log says winner {} but the games give {}\n",
            s + 1,
            winner(&other),
            winner(&set_end["winner"])
        )
    );
    let mut altered = set_end.clone();
    altered["games_played"] = json!(2);
    let (code, _, err) = b.with(s, &altered);
    assert_eq!(code, 1);
    assert_eq!(
        err,
        format!(
            "CORRUPT: line {}: set-end: the log says 2 games played but it holds 3\n",
            s + 1
        )
    );
}

#[test]
fn a_removed_move_is_refused_at_the_next_line() {
    let b = base();
    let i = b.find("move", 0, |m| m["ply"] == 2);
    let m = &b.records()[i];
    let mut lines = b.lines.clone();
    lines.remove(i);
    let (code, _, err) = b.run(&lines);
    assert_eq!(code, 1);
    assert_eq!(
        err,
        format!(
            "CORRUPT: line {}: move of game {} ply 3: the log says ply 3 but 2 moves have been played in this game\n",
            i + 1,
            m["game"]
        )
    );

    // A game that ends early: the engine says it goes on.
    let e = b.find("game-end", 0, |_| true);
    let mut lines = b.lines.clone();
    lines.remove(e - 1);
    let (code, _, err) = b.run(&lines);
    assert_eq!(code, 1);
    assert!(
        err.starts_with(&format!(
            "CORRUPT: line {e}: game-end of game 1: the log says "
        )),
        "{err}"
    );
}

#[test]
fn a_log_cut_short_is_incomplete_and_still_checked() {
    let b = base();
    let i = b.find("move", 0, |m| m["game"] == 2 && m["ply"] == 3);
    let done = b.records()[..i]
        .iter()
        .filter(|r| r["type"] == "move")
        .count();
    // Cut mid-way through line i + 1, as a crash leaves it: no newline.
    let mut text = b.lines[..i].join("\n");
    text.push('\n');
    text.push_str(&b.lines[i][..b.lines[i].len() / 2]);
    let (code, out, err) = b.run_raw(&text);
    assert_eq!(code, 3, "{out}{err}");
    assert_eq!(
        err,
        format!(
            "INCOMPLETE: the log ends without set-end or aborted (the referee was killed or the machine stopped); \
             its last line, {}, is cut short mid-way and was not read. What it holds is consistent: \
             verified: 1 game, {done} moves; game 2 has no game-end (3 of its moves verified)\n",
            i + 1
        )
    );
    // The games it holds are in the summary.
    assert!(out.lines().any(|l| l.starts_with("game 1: ")), "{out}");

    // Cut after a whole line.
    let (code, _, err) = b.run(&b.lines[..i]);
    assert_eq!(code, 3);
    assert!(err.starts_with("INCOMPLETE: the log ends without set-end or aborted (the referee was killed or the machine stopped). What it holds"), "{err}");

    // What it holds is still checked: a bad board before the cut is corrupt.
    let j = b.find("move", 0, |m| m["game"] == 1 && m["ply"] == 1);
    let mut lines = b.lines[..i].to_vec();
    let mut m = b.records()[j].clone();
    m["sown"] = json!(999);
    lines[j] = compact(&m);
    let (code, _, err) = b.run(&lines);
    assert_eq!(code, 1);
    assert!(
        err.starts_with(&format!("CORRUPT: line {}: ", j + 1)),
        "{err}"
    );

    // A line cut mid-way that is not the last is corruption.
    let mut lines = b.lines.clone();
    lines[i] = lines[i][..lines[i].len() / 2].to_string();
    let (code, _, err) = b.run(&lines);
    assert_eq!(code, 1);
    assert!(
        err.starts_with(&format!(
            "CORRUPT: line {}: the line is cut short mid-way (EOF while parsing",
            i + 1
        )),
        "{err}"
    );
}

#[test]
fn what_is_not_a_log_of_this_version_is_unreadable() {
    let b = base();
    let mut header = b.records()[0].clone();
    header["log_version"] = json!(2);
    let (code, _, err) = b.with(0, &header);
    assert_eq!(code, 2);
    assert!(
        err.contains(": log_version 2 is not one this hus (")
            && err.contains("reads log_version 1"),
        "{err}"
    );
    let (code, _, err) = b.run_raw("\x00\x01 garbage \u{ff}\nmore\n");
    assert_eq!(code, 2);
    assert!(err.contains("not a hus log: line 1 is not JSON"), "{err}");
    let (code, _, err) = b.run_raw("{\"type\":\"move\"}\n");
    assert_eq!(code, 2);
    assert!(
        err.contains("not a hus log: line 1 is not a header record"),
        "{err}"
    );
    let (code, _, err) = b.run_raw("");
    assert_eq!(code, 2);
    assert!(err.contains("the file is empty"), "{err}");
    let (code, _, err) = replay(&["/nonexistent/hus.jsonl"]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with("error: cannot open /nonexistent/hus.jsonl"),
        "{err}"
    );
    let (code, out, _) = replay(&["--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("Exit status: 0 the log is complete"), "{out}");
    let (code, _, err) = replay(&[path_str(&b.played.log), "--color", "sometimes"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--color must be auto, always or never"),
        "{err}"
    );
}

#[test]
fn unknown_fields_are_ignored_and_unknown_records_reported() {
    let b = base();
    let mut lines: Vec<String> = b
        .records()
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r["later_field"] = json!({"x": [1, 2]});
            compact(&r)
        })
        .collect();
    lines.insert(
        3,
        r#"{"type":"comment","text":"from a later hus"}"#.to_string(),
    );
    let (code, out, err) = b.run(&lines);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        err,
        "warning: line 4: unknown record type \"comment\", skipped (a newer hus may have written it)\n"
    );
    check_summary(b.records(), &out);

    // A known record of the wrong shape, and a record after the end.
    let i = b.find("move", 0, |_| true);
    let mut m = b.records()[i].clone();
    m["sown"] = json!("thirteen");
    let (code, _, err) = b.with(i, &m);
    assert_eq!(code, 1);
    assert!(
        err.starts_with(&format!(
            "CORRUPT: line {}: a move record not as LOGS.md describes it: invalid type: string \"thirteen\"",
            i + 1
        )),
        "{err}"
    );
    let mut lines = b.lines.clone();
    lines.push(b.lines[i].clone());
    let (code, _, err) = b.run(&lines);
    assert_eq!(code, 1);
    assert_eq!(
        err,
        format!(
            "CORRUPT: line {}: a move record after set-end\n",
            lines.len()
        )
    );
}

#[test]
fn ply_shows_the_engine_position_and_its_notation() {
    let b = base();
    let log = path_str(&b.played.log);
    let plies = of_type(b.records(), "game-end")[1]["plies"]
        .as_u64()
        .expect("plies") as usize;
    for k in [0, 1, 5, plies] {
        let (code, out, err) = replay(&[log, "--game", "2", "--ply", &k.to_string()]);
        assert_eq!(code, 0, "{err}");
        let expected = format!("position: {}", engine_position(b.records(), 2, k));
        assert!(
            out.lines().any(|l| l == expected),
            "--ply {k}: {expected:?} in {out}"
        );
    }
    let (code, _, err) = replay(&[log, "--game", "2", "--ply", &(plies + 1).to_string()]);
    assert_eq!(code, 2);
    assert!(
        err.ends_with(&format!(
            "game 2 has {plies} plies: --ply must be 0 to {plies}\n"
        )),
        "{err}"
    );
    let (code, _, err) = replay(&[log, "--game", "4"]);
    assert_eq!(code, 2);
    assert!(
        err.ends_with("there is no game 4 (the log holds 3 games)\n"),
        "{err}"
    );
}

#[test]
fn game_shows_every_move_in_words_and_boards() {
    let b = base();
    let log = path_str(&b.played.log);
    let header = &named_header(b.records());
    let (code, out, err) = replay(&[log, "--game", "1", "--color", "never"]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains('\x1b'), "no colour with --color never");
    for m in b
        .records()
        .iter()
        .filter(|r| r["type"] == "move" && r["game"] == 1)
    {
        let line = format!(
            "ply {}: {} played pit {} in {:.2} ms: {}",
            m["ply"],
            label(header, m["bot"].as_u64().expect("bot")),
            m["pit"],
            m["ms"].as_f64().expect("ms"),
            move_words(m)
        );
        assert!(out.lines().any(|l| l == line), "{line:?} in {out}");
    }
    assert!(
        out.contains("captured"),
        "a game of greedy has captures: {out}"
    );
    // The start as RULES.md draws it (clockwise, player 0 at the bottom).
    for row in [
        "P1 pit        8    9   10   11   12   13   14   15",
        "P1 front      2    2    2    2    0    0    0    0",
        "P1 pit        7    6    5    4    3    2    1    0",
        "P0 pit        0    1    2    3    4    5    6    7",
        "P0 front      0    0    0    0    2    2    2    2",
        "P0 pit       15   14   13   12   11   10    9    8",
    ] {
        assert!(out.lines().any(|l| l == row), "{row:?} in {out}");
    }
    let end = of_type(b.records(), "game-end")[0];
    assert!(
        out.lines().any(|l| l.starts_with("result: ")
            && l.contains(&format!(
                " by {} after ",
                end["reason"].as_str().expect("reason")
            ))),
        "{out}"
    );
    let (code, out, _) = replay(&[log, "--game", "1", "--color", "always"]);
    assert_eq!(code, 0);
    assert!(out.contains("\x1b["), "colour with --color always");
}

/// Waits for `child` at most `limit`; kills it and fails past that.
fn wait_bounded(mut child: Child, limit: Duration, what: &str) -> (i32, String, String) {
    let mut stdout = child.stdout.take().expect("piped stdout");
    let mut stderr = child.stderr.take().expect("piped stderr");
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (
        status.code().unwrap_or(-1),
        out.join().expect("stdout reader"),
        err.join().expect("stderr reader"),
    )
}

fn spawn_hus(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_hus"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hus starts")
}

/// This process as the `writer` of a log header (LOGS.md), read from /proc here,
/// independently of hus.
fn this_process_as_writer() -> Value {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    let after_name = &stat[stat.rfind(')').expect("(comm)") + 2..];
    let fields: Vec<&str> = after_name.split(' ').collect();
    // Fields are numbered from 1 and `after_name` starts at field 3.
    let start_time: u64 = fields[22 - 3].parse().expect("start time");
    let read = |path: &str| {
        std::fs::read_to_string(path)
            .expect(path)
            .trim()
            .to_string()
    };
    json!({
        "pid": std::process::id(),
        "start_time": start_time,
        "boot_id": read("/proc/sys/kernel/random/boot_id"),
        "pid_ns": std::fs::read_link("/proc/self/ns/pid").expect("pid namespace").to_str().expect("utf-8"),
        "host": read("/proc/sys/kernel/hostname"),
    })
}

#[test]
fn follow_prints_a_log_as_it_is_written() {
    let b = base();
    let path = b.dir.path().join("growing.jsonl");
    std::fs::write(&path, "").expect("create");
    let follower = spawn_hus(&["replay", "--follow", path_str(&path)]);
    // Copy the log line by line, some lines in two writes with a pause between. The
    // copier, this process, is now the log's writer: the referee that wrote it is gone.
    let mut lines = b.lines.clone();
    let mut header = b.records()[0].clone();
    assert_eq!(header["writer"]["pid"].as_u64().map(|p| p > 0), Some(true));
    header["writer"] = this_process_as_writer();
    lines[0] = compact(&header);
    let target = path.clone();
    let writer = std::thread::spawn(move || {
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&target)
            .expect("open");
        for (i, line) in lines.iter().enumerate() {
            if i % 7 == 3 {
                let half = line.len() / 2;
                file.write_all(&line.as_bytes()[..half]).expect("write");
                file.flush().expect("flush");
                std::thread::sleep(Duration::from_millis(150));
                file.write_all(&line.as_bytes()[half..]).expect("write");
            } else {
                file.write_all(line.as_bytes()).expect("write");
            }
            file.write_all(b"\n").expect("write");
            file.flush().expect("flush");
            std::thread::sleep(Duration::from_millis(3));
        }
    });
    let (code, out, err) = wait_bounded(follower, Duration::from_secs(60), "hus replay --follow");
    writer.join().expect("writer");
    assert_eq!(code, 0, "{err}");
    assert_eq!(err, "");
    check_summary(b.records(), &out);
    let header = &named_header(b.records());
    for m in of_type(b.records(), "move") {
        let line = format!(
            "  game {} ply {}: {} {:.2} ms, {}",
            m["game"],
            m["ply"],
            label(header, m["bot"].as_u64().expect("bot")),
            m["ms"].as_f64().expect("ms"),
            move_words(m)
        );
        assert!(out.lines().any(|l| l == line), "{line:?} in {out}");
    }
}

#[test]
fn follow_watches_a_match_being_played() {
    let dir = LogDir::new();
    let log_dir = path_str(dir.path()).to_string();
    let bot = misbehave("ok");
    let matched = spawn_hus(&[
        "match",
        &bot,
        &bot,
        "--games",
        "2",
        "--seed",
        "7",
        "--move-time",
        "50ms",
        "--log-dir",
        &log_dir,
        "--quiet",
    ]);
    let deadline = Instant::now() + Duration::from_secs(20);
    let log = loop {
        let found = std::fs::read_dir(dir.path())
            .expect("log dir")
            .filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|e| e == "jsonl"));
        if let Some(log) = found {
            break log;
        }
        assert!(Instant::now() < deadline, "no log appeared");
        std::thread::sleep(Duration::from_millis(10));
    };
    let follower = spawn_hus(&["replay", "--follow", path_str(&log)]);
    let (code, out, err) = wait_bounded(follower, Duration::from_secs(120), "hus replay --follow");
    let (match_code, _, match_err) = wait_bounded(matched, Duration::from_secs(60), "hus match");
    assert_eq!(match_code, 0, "{match_err}");
    assert_eq!(code, 0, "{err}");
    let records = read_log(&log);
    verify_log(&records);
    check_summary(&records, &out);
    assert_eq!(
        out.lines().filter(|l| l.starts_with("  game ")).count(),
        of_type(&records, "move").len(),
        "one line per move: {out}"
    );
}

/// The log `hus match` writes in `dir`, once it holds at least `moves` moves.
fn wait_for_moves(dir: &Path, moves: usize) -> PathBuf {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let log = std::fs::read_dir(dir)
            .expect("log dir")
            .filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|e| e == "jsonl"));
        if let Some(log) = log {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            if text.matches("\"type\":\"move\"").count() >= moves {
                return log;
            }
        }
        assert!(
            Instant::now() < deadline,
            "no log with {moves} moves appeared"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A referee killed by SIGKILL mid-set: `--follow` sees it is gone and ends by itself,
/// with status 3 and the reason, both while the dead referee is a zombie and after it
/// was reaped.
#[test]
fn follow_ends_when_the_referee_is_killed() {
    let dir = LogDir::new().cut_ok();
    let log_dir = path_str(dir.path()).to_string();
    let marker = format!("hus-test-killed-{}", std::process::id());
    // Half a second a move: the set is far from its end when it is killed.
    let bot = format!("{} --tag {marker}", misbehave("answer-all-at 0.1"));
    let mut matched = Command::new(env!("CARGO_BIN_EXE_hus"))
        .args([
            "match",
            &bot,
            &bot,
            "--move-time",
            "5s",
            "--quiet",
            "--log-dir",
            &log_dir,
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("hus starts");
    let referee = matched.id();
    let log = wait_for_moves(dir.path(), 3);
    let follower = spawn_hus(&["replay", "--follow", path_str(&log)]);
    std::thread::sleep(Duration::from_millis(300));
    matched.kill().expect("SIGKILL");
    // Not reaped yet: a zombie.
    let (code, out, err) = wait_bounded(follower, Duration::from_secs(60), "hus replay --follow");
    assert_eq!(code, 3, "{out}{err}");
    let records = read_log(&log);
    assert!(of_type(&records, "set-end").is_empty());
    let moves = of_type(&records, "move").len();
    assert!(moves >= 3);
    assert!(
        err.starts_with(&format!(
            "INCOMPLETE: stopped following: the referee writing it (pid {referee}) has exited, \
             and the log ends without set-end or aborted (the referee was killed or the machine stopped)"
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "verified: 0 games, {moves} moves; game 1 has no game-end"
        )),
        "{err}"
    );
    assert_eq!(
        out.lines().filter(|l| l.starts_with("  game ")).count(),
        moves,
        "{out}"
    );

    // Reaped: its pid is free (or another process's).
    matched.wait().expect("reaped");
    let (code, _, err) = replay(&["--follow", path_str(&log)]);
    assert_eq!(code, 3, "{err}");
    assert!(
        err.starts_with(&format!(
            "INCOMPLETE: stopped following: the referee writing it (pid {referee}) is gone"
        )),
        "{err}"
    );
    // Its bots read the end of their input and exit by themselves.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !alive_with(&marker).is_empty() {
        assert!(
            Instant::now() < deadline,
            "bots survive: {:?}",
            alive_with(&marker)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A log whose writer cannot be watched (no `writer` in its header): `--idle-limit`
/// ends the wait; without it, a note says the wait ends only with the set.
#[test]
fn follow_stops_at_the_idle_limit() {
    let b = base();
    let i = b.find("move", 0, |m| m["game"] == 2 && m["ply"] == 3);
    let mut header = b.records()[0].clone();
    header.as_object_mut().expect("object").remove("writer");
    let mut lines = b.lines[..i].to_vec();
    lines[0] = compact(&header);
    let path = write_log(b.dir.path(), "stalled.jsonl", &lines);
    let started = Instant::now();
    let (code, out, err) = replay(&["--follow", "--idle-limit", "300ms", path_str(&path)]);
    assert_eq!(code, 3, "{out}{err}");
    assert!(started.elapsed() >= Duration::from_millis(300));
    let moves = of_type(&b.records()[..i], "move").len();
    assert_eq!(
        err,
        format!(
            "INCOMPLETE: stopped following: no new line for 300 ms (--idle-limit), and the log ends \
             without set-end or aborted (the referee was killed or the machine stopped). What it \
             holds is consistent: verified: 1 game, {moves} moves; game 2 has no game-end (3 of its \
             moves verified)\n"
        )
    );
    let (code, _, err) = replay(&["--idle-limit", "1s", path_str(&path)]);
    assert_eq!(code, 2);
    assert!(err.contains("--follow"), "{err}");

    // Without a limit it would wait for ever, and says so.
    let mut follower = spawn_hus(&["replay", "--follow", path_str(&path)]);
    let stderr = follower.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut first = String::new();
        let _ = std::io::BufRead::read_line(&mut std::io::BufReader::new(stderr), &mut first);
        let _ = tx.send(first);
    });
    let note = rx.recv_timeout(Duration::from_secs(30));
    follower.kill().expect("kill");
    follower.wait().expect("reaped");
    assert_eq!(
        note.expect("a note within 30 s"),
        "note: the log does not name the process that writes it (an earlier hus wrote it): \
         hus cannot tell when it is gone, and follows the log until its set-end or aborted \
         (--idle-limit DURATION stops sooner)\n"
    );
}

// ---- the HTML viewer, in headless Chromium ------------------------------------------

const CHROMIUM: &str = "/usr/bin/chromium";

/// Whether to run the browser tests: Chromium must be installed (tests/setup.sh does
/// it), unless HUS_SKIP_BROWSER=1 says to skip them.
pub fn browser() -> bool {
    if std::env::var("HUS_SKIP_BROWSER").as_deref() == Ok("1") {
        eprintln!("HUS_SKIP_BROWSER=1: the browser test is skipped");
        return false;
    }
    assert!(
        Path::new(CHROMIUM).exists(),
        "{CHROMIUM} is not installed: run tests/setup.sh (or set HUS_SKIP_BROWSER=1 to skip the browser tests)"
    );
    true
}

/// Headless Chromium on `url`, with these extra arguments; returns its stdout. One at a
/// time: a browser is heavy, and other tests run timed sets at the same time.
pub fn chromium(url: &str, extra: &[&str]) -> String {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    // Chromium's profile: not logs.
    let profile = tempfile::tempdir().expect("profile dir");
    let child = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--virtual-time-budget=3000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chromium starts");
    let (code, out, err) = wait_bounded(child, Duration::from_secs(90), "chromium");
    assert_eq!(code, 0, "chromium failed: {err}");
    out
}

/// `name="value"` in one tag.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    let end = tag[start..].find('"')? + start;
    Some(&tag[start..end])
}

/// A pit as the viewer shows it: (player, pit, row, column, seeds).
type Shown = (usize, usize, String, usize, u32);

/// Every element with `data-pit`, and its text.
fn shown_pits(dom: &str) -> Vec<Shown> {
    let mut pits = Vec::new();
    let mut at = 0;
    while let Some(i) = dom[at..].find(" data-pit=\"") {
        let i = at + i;
        let open = dom[..i].rfind('<').expect("tag start");
        let close = i + dom[i..].find('>').expect("tag end");
        let tag = &dom[open..close];
        let text_end = close + dom[close..].find('<').expect("closing tag");
        let number = |name: &str| -> usize {
            attr(tag, name)
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{name} in {tag}"))
        };
        pits.push((
            number("data-player"),
            number("data-pit"),
            attr(tag, "data-row").expect("data-row").to_string(),
            number("data-col"),
            dom[close + 1..text_end]
                .trim()
                .parse()
                .expect("a seed count"),
        ));
        at = text_end;
    }
    pits
}

/// The drawings of RULES.md section 2 at W = 8: each row of pit numbers, left to right,
/// as (player, row).
fn drawing(preset: &str) -> [(usize, &'static str, [usize; 8]); 4] {
    if preset == "mancala-world" {
        [
            (1, "back", [15, 14, 13, 12, 11, 10, 9, 8]),
            (1, "front", [0, 1, 2, 3, 4, 5, 6, 7]),
            (0, "front", [7, 6, 5, 4, 3, 2, 1, 0]),
            (0, "back", [8, 9, 10, 11, 12, 13, 14, 15]),
        ]
    } else {
        [
            (1, "back", [8, 9, 10, 11, 12, 13, 14, 15]),
            (1, "front", [7, 6, 5, 4, 3, 2, 1, 0]),
            (0, "front", [0, 1, 2, 3, 4, 5, 6, 7]),
            (0, "back", [15, 14, 13, 12, 11, 10, 9, 8]),
        ]
    }
}

/// A bot that names itself to break out of the viewer's script, then plays the first
/// legal pit.
const HOSTILE_NAME: &str = "</script><script>alert(1)</script> & \u{2028}";

fn hostile_bot(dir: &Path) -> String {
    let path = dir.join("hostile_bot.py");
    std::fs::write(
        &path,
        format!(
            "import json, sys\n\
             for raw in sys.stdin:\n    \
                 msg = json.loads(raw)\n    \
                 if msg['type'] == 'hello':\n        \
                     print(json.dumps({{'type': 'ready', 'name': {}}}), flush=True)\n    \
                 elif msg['type'] == 'turn':\n        \
                     print(json.dumps({{'type': 'move', 'pit': msg['legal'][0]}}), flush=True)\n    \
                 elif msg['type'] == 'bye':\n        \
                     break\n",
            serde_json::to_string(HOSTILE_NAME).expect("json")
        ),
    )
    .expect("write the bot");
    format!("python3 {}", path.display())
}

/// Plays a set under `preset`, writes its viewer, then lets Chromium open game 2 and
/// press "Next" `steps` times; the pits shown must be the engine's position after
/// those plies, drawn where RULES.md draws them.
fn viewer_shows_the_engine_board(preset: &str) {
    if !browser() {
        return;
    }
    let dir = LogDir::new();
    let p = play(
        &hostile_bot(dir.path()),
        &greedy_bot(),
        &["--seed", "9", "--games", "2", "--rules", preset],
    );
    let html = dir.path().join("viewer.html");
    let (code, out, err) = replay(&[path_str(&p.log), "--html", path_str(&html)]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(&format!("viewer: {}", html.display())),
        "{out}"
    );
    let page = std::fs::read_to_string(&html).expect("viewer written");
    assert!(!page.contains("<script>alert(1)"), "the bot name broke out");
    assert!(!page.contains('\u{2028}'));

    let plies = of_type(&p.records, "game-end")[1]["plies"]
        .as_u64()
        .expect("plies") as usize;
    let steps = 5.min(plies);
    let url = format!("file://{}#game=2&steps={steps}", html.display());
    let dom = chromium(&url, &["--dump-dom"]);
    assert!(
        dom.contains(&format!("data-game=\"2\" data-ply=\"{steps}\"")),
        "{preset}: the viewer is at game 2 ply {steps}"
    );
    let expected = engine_position(&p.records, 2, steps);
    let pits = shown_pits(&dom);
    assert_eq!(pits.len(), 4 * 8, "{preset}: every pit shown once");
    for (player, pit, _, _, seeds) in &pits {
        let owner = if *player == 0 {
            Player::Zero
        } else {
            Player::One
        };
        assert_eq!(
            *seeds,
            u32::from(expected.seeds(owner, *pit)),
            "{preset}: player {player}'s pit {pit} after {steps} plies of game 2 ({expected})"
        );
    }
    for (player, row, numbers) in drawing(preset) {
        for (col, number) in numbers.iter().enumerate() {
            assert!(
                pits.iter()
                    .any(|s| s.0 == player && s.1 == *number && s.2 == row && s.3 == col),
                "{preset}: player {player}'s pit {number} should be drawn in the {row} row, column {col}"
            );
        }
    }
    // The name is shown as text: its characters escaped in the DOM, no script made.
    assert!(
        dom.contains("&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp;"),
        "{preset}: the bot name should be shown as text"
    );
    assert!(!dom.contains("<script>alert(1)"));

    // The hash opens a position directly.
    let url = format!("file://{}#game=1&ply=3", html.display());
    let dom = chromium(&url, &["--dump-dom"]);
    assert!(dom.contains("data-game=\"1\" data-ply=\"3\""), "{preset}");
    let expected = engine_position(&p.records, 1, 3);
    for (player, pit, _, _, seeds) in shown_pits(&dom) {
        let owner = if player == 0 {
            Player::Zero
        } else {
            Player::One
        };
        assert_eq!(
            seeds,
            u32::from(expected.seeds(owner, pit)),
            "{preset}: game 1 ply 3"
        );
    }
}

#[test]
fn viewer_shows_the_engine_board_clockwise() {
    viewer_shows_the_engine_board("hus");
}

#[test]
fn viewer_shows_the_engine_board_anticlockwise() {
    viewer_shows_the_engine_board("mancala-world");
}

#[test]
fn viewer_shows_the_engine_board_rulebook() {
    viewer_shows_the_engine_board("rulebook");
}

/// A seed above 2^53, as a league set has: a JavaScript number would show it as
/// 6707144857836211000.
const BIG_SEED: &str = "6707144857836210742";

/// The text of the element with this `id` in a DOM dump (no markup inside it).
fn element_text<'a>(dom: &'a str, id: &str) -> &'a str {
    let open = dom
        .find(&format!(" id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id} in the page"));
    let start = open + dom[open..].find('>').expect("tag end") + 1;
    let end = start + dom[start..].find('<').expect("closing tag");
    &dom[start..end]
}

#[test]
fn viewer_shows_a_64_bit_seed_digit_for_digit_and_it_plays_the_same_lots() {
    if !browser() {
        return;
    }
    let p = play(
        &hus_random(1),
        &hus_random(2),
        &["--seed", BIG_SEED, "--games", "3"],
    );
    let header = std::fs::read_to_string(&p.log).expect("the log");
    let header = header.lines().next().expect("a header line");
    assert!(
        header.contains(&format!("\"seed\":{BIG_SEED},")),
        "{header}"
    );
    let html = p._dir.path().join("viewer.html");
    let (code, _, err) = replay(&[path_str(&p.log), "--html", path_str(&html)]);
    assert_eq!(code, 0, "{err}");
    let dom = chromium(&format!("file://{}", html.display()), &["--dump-dom"]);
    let line = element_text(&dom, "set-line");
    let shown = line
        .split(" \u{b7} ")
        .find_map(|part| part.strip_prefix("seed "))
        .unwrap_or_else(|| panic!("no seed in {line:?}"));
    assert_eq!(shown, BIG_SEED, "{line}");
    // The seed a person copies from the page plays the same lots: who moved first in
    // each game.
    let firsts = |records: &[Value]| -> Vec<Value> {
        of_type(records, "game-start")
            .iter()
            .map(|g| g["first"].clone())
            .collect()
    };
    let again = play(
        &hus_random(1),
        &hus_random(2),
        &["--seed", shown, "--games", "3"],
    );
    assert_eq!(firsts(&again.records), firsts(&p.records));
}

#[test]
fn match_takes_every_64_bit_seed_and_refuses_one_past_them() {
    for seed in ["0", "18446744073709551615"] {
        let p = play(
            &hus_random(1),
            &hus_random(2),
            &["--seed", seed, "--games", "1"],
        );
        assert_eq!(p.records[0]["seed"].to_string(), seed);
    }
    let out = hus(&[
        "match",
        &hus_random(1),
        &hus_random(2),
        "--seed",
        "18446744073709551616",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with(
            "error: invalid value '18446744073709551616' for '--seed <SEED>': number too large to fit in target type"
        ),
        "{err}"
    );
}

/// The data a viewer page holds (the JSON of its `hus-data` element).
fn page_data(html: &Path) -> Value {
    let page = std::fs::read_to_string(html).expect("viewer written");
    let open = r#"<script type="application/json" id="hus-data">"#;
    let start = page.find(open).expect("the data element") + open.len();
    let end = start + page[start..].find("</script>").expect("its end");
    serde_json::from_str(&page[start..end]).expect("the data is JSON")
}

/// Every position of the log, as `GAME PLY POSITION` lines: the starts and the position
/// after each move, which the engine checked.
pub fn log_positions(records: &[Value], games: &[u64]) -> Vec<String> {
    let mut lines = Vec::new();
    let mut ply = 0;
    for r in records {
        let game = r["game"].as_u64().unwrap_or(0);
        if !games.contains(&game) {
            continue;
        }
        match r["type"].as_str() {
            Some("game-start") => ply = 0,
            Some("move") => ply += 1,
            _ => continue,
        }
        lines.push(format!(
            "{game} {ply} {}",
            r["position"].as_str().expect("position")
        ));
    }
    lines
}

/// The page computes every board from the moves alone (rules.js): opened with #check it
/// lists every position of every game it holds, and each is the engine's, for every
/// preset at several widths, a long board (width 24) included. It holds about 9 bytes a
/// move.
#[test]
fn the_viewer_computes_every_position_as_the_engine_does() {
    if !browser() {
        return;
    }
    for (preset, width, games) in [
        ("hus", "16", None),
        ("rulebook", "9", None),
        ("mancala-world", "13", None),
        ("hus", "8", Some("2-3")),
        // A long board: the page draws 24 columns and rules.js plays 48 pits a side.
        ("mancala-world", "24", None),
    ] {
        let p = play(
            &greedy_bot(),
            &hus_random(4),
            &[
                "--seed", "6", "--games", "3", "--rules", preset, "--width", width,
            ],
        );
        let html = p._dir.path().join("viewer.html");
        let mut args = vec![path_str(&p.log), "--html", path_str(&html)];
        if let Some(range) = games {
            args.extend_from_slice(&["--games", range]);
        }
        let (code, out, err) = replay(&args);
        assert_eq!(code, 0, "{err}");
        let kept: Vec<u64> = match games {
            Some(_) => vec![2, 3],
            None => vec![1, 2, 3],
        };
        if games.is_some() {
            assert!(
                out.contains(&format!(
                    "viewer: {} (games 2 to 3 of 3 games)",
                    html.display()
                )),
                "{out}"
            );
        }
        let data = page_data(&html);
        let numbers: Vec<u64> = data["games"]
            .as_array()
            .expect("games")
            .iter()
            .map(|g| g["game"].as_u64().expect("game"))
            .collect();
        assert_eq!(numbers, kept, "{preset} {width}");
        let url = format!("file://{}#check", html.display());
        let dom = chromium(&url, &["--dump-dom"]);
        assert!(
            dom.contains("data-check=\"ok\""),
            "{preset} {width}: the page's own check"
        );
        let listed = dom
            .split("<pre id=\"positions\" hidden=\"\">")
            .nth(1)
            .and_then(|rest| rest.split("</pre>").next())
            .expect("the positions listed");
        let expected = log_positions(&p.records, &kept);
        assert!(
            expected.len() > 3 * 10,
            "{preset} {width}: {} positions",
            expected.len()
        );
        assert_eq!(
            listed.lines().collect::<Vec<_>>(),
            expected,
            "{preset} {width}: the viewer's positions are the engine's"
        );
    }
}

/// `--game N` and `--games A-B` choose the page's games; a page over --max-page-moves is
/// refused with the way to choose games; a page's size per move.
#[test]
fn a_viewer_of_some_games() {
    let b = base();
    let log = path_str(&b.played.log);
    let html = b.dir.path().join("some.html");
    let out_html = path_str(&html);
    let (code, out, err) = replay(&[log, "--html", out_html, "--game", "2"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(&format!("viewer: {out_html} (game 2 of 3 games)")),
        "{out}"
    );
    let data = page_data(&html);
    assert_eq!(data["games"].as_array().map(Vec::len), Some(1));
    assert_eq!(data["games"][0]["game"], 2);
    assert_eq!(data["selection"], json!({"first": 2, "last": 2, "of": 3}));
    // Per move, the page holds the pit and the time; the rest is computed.
    let moves: Vec<&Value> = of_type(b.records(), "move")
        .into_iter()
        .filter(|m| m["game"] == 2)
        .collect();
    let pits: Vec<u64> = moves
        .iter()
        .map(|m| m["pit"].as_u64().expect("pit"))
        .collect();
    assert_eq!(data["games"][0]["pits"], json!(pits));
    assert_eq!(
        data["games"][0]["ms"].as_array().map(Vec::len),
        Some(moves.len())
    );
    let end = b.find("game-end", 0, |e| e["game"] == 2);
    assert_eq!(data["games"][0]["last"], b.records()[end]["position"]);

    let (code, _, err) = replay(&[log, "--html", out_html, "--game", "4"]);
    assert_eq!(code, 2);
    assert!(
        err.ends_with("no viewer written: there is no game 4 (the log holds 3 games)\n"),
        "{err}"
    );
    let (code, _, err) = replay(&[log, "--html", out_html, "--games", "5-9"]);
    assert_eq!(code, 2);
    assert!(
        err.ends_with("there is no game from 5 to 9 (the log holds 3 games)\n"),
        "{err}"
    );
    let (code, _, err) = replay(&[log, "--html", out_html, "--games", "3-1"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--games \"3-1\": the first game is after the last"),
        "{err}"
    );
    let (code, _, err) = replay(&[log, "--html", out_html, "--games", "0-2"]);
    assert_eq!(code, 2);
    assert!(err.contains("games are numbered from 1"), "{err}");
    let (code, _, err) = replay(&[log, "--games", "1-2"]);
    assert_eq!(code, 2);
    assert!(err.contains("--html"), "{err}");
    let (code, _, err) = replay(&[log, "--html", out_html, "--game", "1", "--ply", "3"]);
    assert_eq!(code, 2);
    assert!(err.contains("#game=N&ply=K"), "{err}");

    // Too many moves for a page: refused, with the way to choose games.
    let all = of_type(b.records(), "move").len();
    let limit = (all - 1).to_string();
    let refused = b.dir.path().join("refused.html");
    let (code, out, err) = replay(&[
        log,
        "--html",
        path_str(&refused),
        "--max-page-moves",
        &limit,
    ]);
    assert_eq!(code, 2, "{out}");
    assert_eq!(
        err,
        format!(
            "error: no viewer written: the page would hold {all} moves (all 3 games), more than \
             --max-page-moves {limit}; choose games with --game N or a range with --games A-B\n"
        )
    );
    assert!(!refused.exists());
    assert!(
        out.lines()
            .last()
            .is_some_and(|l| l.starts_with("verified: 3 games")),
        "{out}"
    );
    let (code, _, err) = replay(&[
        log,
        "--html",
        path_str(&refused),
        "--max-page-moves",
        &limit,
        "--games",
        "1-2",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(refused.exists());

    // A page whose rules disagreed with the engine would say so: here its data is
    // altered to give game 2 another last position.
    if !browser() {
        return;
    }
    let page = std::fs::read_to_string(&html).expect("viewer");
    let last = data["games"][0]["last"].as_str().expect("last");
    // One seed moved from a pit of player 0 to its neighbour.
    let mut setup = last.parse::<Position>().expect("notation").to_setup();
    let from = (0..setup.pits[0].len())
        .find(|&p| setup.pits[0][p] > 0)
        .expect("a seed");
    setup.pits[0][from] -= 1;
    let next = (from + 1) % setup.pits[0].len();
    setup.pits[0][next] += 1;
    let other = setup.validate().expect("a position");
    let altered = b.dir.path().join("altered.html");
    std::fs::write(&altered, page.replacen(last, &other.to_string(), 1)).expect("write");
    let dom = chromium(&format!("file://{}", altered.display()), &["--dump-dom"]);
    assert!(
        dom.contains("data-check=\"failed\""),
        "the page's own check"
    );
    let plies = moves.len();
    assert!(
        dom.contains(&format!(
            "The viewer’s rules disagree with the log in game 2 (after {plies} plies the viewer has {last} but the engine has {other})"
        )),
        "the disagreement is shown"
    );
}

#[test]
fn an_aborted_log_verifies_and_says_so() {
    let b = base();
    let i = b.find("move", 0, |m| m["game"] == 2 && m["ply"] == 3);
    let mut lines = b.lines[..i].to_vec();
    lines.push(
        r#"{"type":"aborted","reason":"stopped by SIGINT","finished":"2026-11-30T00:00:00Z"}"#
            .to_string(),
    );
    let (code, out, err) = b.run(&lines);
    assert_eq!(code, 0, "{err}");
    assert_eq!(err, "");
    assert!(
        out.lines().any(|l| l == "aborted: stopped by SIGINT"),
        "{out}"
    );
    let moves = b.records()[..i]
        .iter()
        .filter(|r| r["type"] == "move")
        .count();
    assert_eq!(
        out.lines().last(),
        Some(
            format!(
                "verified: 1 game, {moves} moves; game 2 has no game-end (3 of its moves verified); \
                 the set was aborted (stopped by SIGINT)"
            )
            .as_str()
        ),
        "{out}"
    );
    // Nothing may follow it.
    lines.push(b.lines[i].clone());
    let (code, _, err) = b.run(&lines);
    assert_eq!(code, 1);
    assert_eq!(
        err,
        format!(
            "CORRUPT: line {}: a move record after aborted\n",
            lines.len()
        )
    );

    // An incomplete log still gets its viewer, with the games it holds.
    let html = b.dir.path().join("incomplete.html");
    let path = write_log(b.dir.path(), "incomplete.jsonl", &b.lines[..i]);
    let (code, out, _) = replay(&[path_str(&path), "--html", path_str(&html)]);
    assert_eq!(code, 3);
    assert!(out.contains("viewer: "), "{out}");
    let page = std::fs::read_to_string(&html).expect("viewer written");
    assert!(page.contains("\"status\":\"incomplete\""));
}

#[test]
fn text_from_a_log_cannot_act_on_the_terminal() {
    let b = base();
    let mut header = b.records()[0].clone();
    header["bots"][0]["name"] = json!("evil\u{1b}[2J\u{202e}");
    header["bots"][0]["command"] = json!("bot\u{1b}]0;title\u{7}");
    let mut lines = b.lines.clone();
    lines[0] = compact(&header);
    // The first ready repeats the header's name.
    let r = b.find("ready", 0, |r| r["bot"] == 0);
    let mut ready = b.records()[r].clone();
    ready["name"] = header["bots"][0]["name"].clone();
    lines[r] = compact(&ready);
    // An unknown variant quoted by the parser, in a corrupt line.
    let i = b.find("move", 0, |_| true);
    let mut m = b.records()[i].clone();
    m["events"] = json!([{"kind": "\u{1b}[31mred"}]);
    lines[i] = compact(&m);
    let (code, out, err) = b.run(&lines);
    assert_eq!(code, 1, "{err}");
    assert!(out.contains("A (evil\\x1b[2J\\u{202e})"), "{out}");
    assert!(out.contains("bot\\x1b]0;title\\x07"), "{out}");
    assert!(err.contains("\\x1b[31mred"), "{err}");
    for text in [&out, &err] {
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{202e}'),
            "{text:?}"
        );
    }
}

/// A set whose bot A is an uploaded version names it in the log's header
/// (`bots[0].version`, as the set was given it; bot B, a plain command, has none), and
/// its log replays; a malformed version is refused at line 1, naming the field and
/// what is wrong with it.
#[test]
fn an_uploaded_version_in_the_header_replays_and_a_malformed_one_is_refused() {
    let dir = LogDir::new();
    let sha256 = "0123456789abcdef".repeat(4);
    let version = referee::UploadedVersion {
        bot: "alpha".into(),
        number: 3,
        sha256: sha256.clone(),
    };
    let path = play_version_set(dir.path(), version, 2);
    let lines = log_lines(&path);
    let header = record(&lines[0]);
    assert_eq!(
        header["bots"][0]["version"],
        json!({"bot": "alpha", "number": 3, "sha256": sha256})
    );
    assert_eq!(header["bots"][1].get("version"), None);
    let (code, _, err) = replay(&[path_str(&path)]);
    assert_eq!((code, err.as_str()), (0, ""));

    let broken = LogDir::new();
    // Each altered header is written over this one file, broken on purpose.
    broken.broken("broken.jsonl");
    let refused = |version: Value| -> (i32, String) {
        let mut altered = header.clone();
        altered["bots"][0]["version"] = version;
        let mut text = lines.clone();
        text[0] = compact(&altered);
        let log = write_log(broken.path(), "broken.jsonl", &text);
        let (code, _, err) = replay(&[path_str(&log)]);
        (code, err)
    };
    let corrupt = |what: &str| (1, format!("CORRUPT: line 1: {what}\n"));
    assert_eq!(
        refused(json!({"bot": "alpha", "number": 0, "sha256": sha256})),
        corrupt("header: bots[0].version: its number is 0 (versions count from 1)")
    );
    assert_eq!(
        refused(json!({"bot": "", "number": 1, "sha256": sha256})),
        corrupt("header: bots[0].version: its bot is empty")
    );
    for bad in [
        sha256.to_uppercase(),
        sha256[1..].to_string(),
        format!("{}g", &sha256[1..]),
    ] {
        assert_eq!(
            refused(json!({"bot": "alpha", "number": 3, "sha256": bad})),
            corrupt(&format!(
                "header: bots[0].version: its sha256 {bad:?} is not 64 lowercase hexadecimal digits"
            ))
        );
    }
    let (code, err) = refused(json!({"bot": "alpha", "number": "3", "sha256": sha256}));
    assert_eq!(code, 1);
    assert!(
        err.starts_with(
            "CORRUPT: line 1: a header record not as LOGS.md describes it: invalid type: string \"3\", expected u32"
        ),
        "{err}"
    );
    let (code, err) = refused(json!({"bot": "alpha", "number": 3}));
    assert_eq!(code, 1);
    assert!(
        err.starts_with(
            "CORRUPT: line 1: a header record not as LOGS.md describes it: missing field `sha256`"
        ),
        "{err}"
    );
    let (code, err) = refused(json!("alpha.v3"));
    assert_eq!(code, 1);
    assert!(
        err.starts_with(
            "CORRUPT: line 1: a header record not as LOGS.md describes it: invalid type: string \"alpha.v3\""
        ),
        "{err}"
    );
}

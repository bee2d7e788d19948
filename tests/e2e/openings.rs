//! Openings: games in pairs from the same opening with the first mover swapped, bots
//! seated by the opening's side to move, logs that `hus replay` verifies (and refuses
//! when an opening is tampered with), exact messages for bad files, the viewer and
//! `hus replay --game` starting from the opening, and the shipped books.

use std::path::{Path, PathBuf};
use std::process::Command;

use engine::{Game, Player, Position, Preset, Rules};
use serde_json::Value;

use crate::common::*;
use crate::sample_bots::alphabeta;

/// The position after playing `pits` from the `hus` starting position at width 8.
fn after(pits: &[usize]) -> Position {
    let mut g = Game::new(Position::start(Rules::new(Preset::Hus, 8).expect("rules")));
    for &pit in pits {
        g.play(pit).expect("a legal pit");
    }
    assert!(g.end().is_none());
    *g.position()
}

/// A file of three openings: player 1 to move (in notation), player 0 to move (as
/// moves), player 1 to move (as moves); comments and a blank line around them.
const BOOK: &str = "# three openings for the tests\n\
    \n\
    hus 8 1,1,1,0,2,2,2,0/3,0,3,3,0,3,3,0 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 1  # after pit 7\n\
    moves 7 4\n\
    moves 6   # player 1 to move\n";

fn book_positions() -> Vec<Position> {
    vec![after(&[7]), after(&[7, 4]), after(&[6])]
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// A set of 5 games from [`BOOK`], greedy against the random mover.
fn set_with_openings(seed: &str) -> (Played, LogDir) {
    let dir = LogDir::new();
    let book = write(dir.path(), "book.txt", BOOK);
    let played = play(
        &greedy_bot(),
        &hus_random(2),
        &["--openings", s(&book), "--games", "5", "--seed", seed],
    );
    (played, dir)
}

#[test]
fn games_go_in_pairs_from_the_openings_seated_by_the_side_to_move() {
    let book = book_positions();
    let mut starts_seen = std::collections::BTreeSet::new();
    for seed in ["9", "10", "11"] {
        let (p, _dir) = set_with_openings(seed);
        let header = &p.records[0];
        // The set's openings: the whole book (3 pairs, the last one a single game), in
        // the file's order from an opening drawn from the seed.
        let listed: Vec<Position> = header["openings"]
            .as_array()
            .expect("header.openings")
            .iter()
            .map(|o| o.as_str().expect("notation").parse().expect("a position"))
            .collect();
        assert_eq!(listed.len(), 3);
        let offset = book
            .iter()
            .position(|b| *b == listed[0])
            .expect("from the book");
        starts_seen.insert(offset);
        for (k, o) in listed.iter().enumerate() {
            assert_eq!(
                *o,
                book[(offset + k) % 3],
                "seed {seed}: consecutive, cycling"
            );
        }
        let lots = referee::lots(seed.parse().expect("seed"), 5);
        let starts = of_type(&p.records, "game-start");
        assert_eq!(starts.len(), 5);
        for (i, g) in starts.iter().enumerate() {
            let game = i + 1;
            let opening = listed[i / 2];
            assert_eq!(
                g["position"].as_str(),
                Some(opening.to_string().as_str()),
                "seed {seed}: game {game} starts from opening {}",
                i / 2 + 1
            );
            let first = g["first"].as_u64().expect("first") as usize;
            // A lot for the first game of each pair (and the odd last game), the other
            // bot in the second.
            let expected = if game % 2 == 0 {
                1 - lots[i - 1]
            } else {
                lots[i]
            };
            assert_eq!(first, expected, "seed {seed}: first mover of game {game}");
            // The first bot is the opening's side to move: it makes the first move.
            let first_move = p
                .records
                .iter()
                .find(|r| r["type"] == "move" && r["game"] == game as u64)
                .expect("a move");
            assert_eq!(first_move["ply"], 0);
            assert_eq!(
                first_move["bot"].as_u64(),
                Some(first as u64),
                "seed {seed}"
            );
            assert_eq!(
                first_move["player"].as_u64(),
                Some(opening.to_move().index() as u64),
                "seed {seed}: game {game}"
            );
            // The summary says the same: who began, and from where.
            let summary = &p.summary["games"][i];
            assert_eq!(summary["first"].as_u64(), Some(first as u64));
            assert_eq!(
                summary["start"].as_str(),
                Some(opening.to_string().as_str())
            );
        }
    }
    assert!(
        starts_seen.len() >= 2,
        "the seed draws the first opening: {starts_seen:?}"
    );
}

#[test]
fn the_second_player_to_move_in_an_opening_is_seated_as_the_first_mover() {
    // One opening, player 1 to move: the bot drawn first plays player 1.
    let dir = LogDir::new();
    let book = write(dir.path(), "one.txt", "moves 6\n");
    let p = play(
        &greedy_bot(),
        &hus_random(3),
        &["--openings", s(&book), "--games", "2", "--seed", "4"],
    );
    let opening = after(&[6]);
    assert_eq!(opening.to_move(), Player::One);
    let ends = of_type(&p.records, "game-end");
    for (i, g) in of_type(&p.records, "game-start").iter().enumerate() {
        let first = g["first"].as_u64().expect("first");
        let moves: Vec<&Value> = p
            .records
            .iter()
            .filter(|r| r["type"] == "move" && r["game"] == (i + 1) as u64)
            .collect();
        // Plies alternate from the opening: even plies are player 1, the first bot.
        for m in &moves {
            let ply = m["ply"].as_u64().expect("ply");
            let (player, bot) = if ply % 2 == 0 {
                (1, first)
            } else {
                (0, 1 - first)
            };
            assert_eq!(m["player"].as_u64(), Some(player), "{m}");
            assert_eq!(m["bot"].as_u64(), Some(bot), "{m}");
        }
        // Points by bot: player 0 of the final position is the bot that moved second.
        let end = ends[i];
        let last: Position = end["position"]
            .as_str()
            .expect("final")
            .parse()
            .expect("pos");
        let mut replayed = Game::new(opening);
        for m in &moves {
            replayed
                .play(m["pit"].as_u64().expect("pit") as usize)
                .expect("legal");
        }
        assert_eq!(*replayed.position(), last);
        if let Some(e) = replayed.end() {
            let winner_player = e.winner.map(|w| w.index() as u64);
            let winner_bot = winner_player.map(|w| if w == 1 { first } else { 1 - first });
            assert_eq!(end["winner"].as_u64(), winner_bot, "{end}");
        }
    }
}

/// `hus replay` on `lines` (a log altered by the test): its exit status and stderr.
fn replay_lines(_dir: &Path, lines: &[String]) -> (Option<i32>, String) {
    // Not in the set's log directory: the altered log is broken on purpose.
    let altered = tempfile::tempdir().expect("temp dir");
    let path = write(altered.path(), "altered.jsonl", &(lines.join("\n") + "\n"));
    let out = hus(&["replay", s(&path)]);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn lines_of(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .expect("log")
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn replay_refuses_a_game_started_from_another_opening() {
    let (p, dir) = set_with_openings("9");
    let lines = lines_of(&p.log);
    let index = |kind: &str, game: u64| {
        p.records
            .iter()
            .position(|r| r["type"] == kind && r["game"] == game)
            .expect("record")
    };
    let listed: Vec<String> = p.records[0]["openings"]
        .as_array()
        .expect("openings")
        .iter()
        .map(|o| o.as_str().expect("notation").to_string())
        .collect();

    // Game 3 started from the opening of games 1 and 2 instead of its own.
    let i = index("game-start", 3);
    let mut altered = lines.clone();
    let mut record = p.records[i].clone();
    record["position"] = Value::String(listed[0].clone());
    altered[i] = record.to_string();
    let (code, err) = replay_lines(dir.path(), &altered);
    assert_eq!(code, Some(1), "{err}");
    let expected = format!(
        "CORRUPT: line {}: game-start of game 3: the log says starting position \"{}\" but the header gives it opening 2 of 3 \"{}\"",
        i + 1,
        listed[0],
        listed[1]
    );
    assert!(
        err.starts_with(&expected),
        "{err}\nshould start with\n{expected}"
    );

    // The header's second opening changed: game 3 no longer starts from it.
    let mut altered = lines.clone();
    let mut header = p.records[0].clone();
    header["openings"][1] = Value::String(listed[2].clone());
    altered[0] = header.to_string();
    let (code, err) = replay_lines(dir.path(), &altered);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.starts_with(&format!(
            "CORRUPT: line {}: game-start of game 3: the log says starting position \"{}\" but the header gives it opening 2 of 3 \"{}\"",
            i + 1,
            listed[1],
            listed[2]
        )),
        "{err}"
    );

    // A header opening that is not a position of the set's rules.
    let mut altered = lines.clone();
    let mut header = p.records[0].clone();
    let wide = listed[0].replacen("hus 8", "rulebook 8", 1);
    header["openings"][0] = Value::String(wide.clone());
    altered[0] = header.to_string();
    let (code, err) = replay_lines(dir.path(), &altered);
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(
        err.trim_end(),
        format!(
            "CORRUPT: line 1: header: opening 1 \"{wide}\" is a position of rulebook at width 8, but the set plays hus at width 8"
        )
    );

    // The second game of a pair begun by the same bot as the first.
    let i = index("game-start", 2);
    let first = p.records[index("game-start", 1)]["first"]
        .as_u64()
        .expect("first");
    let mut altered = lines.clone();
    let mut record = p.records[i].clone();
    record["first"] = Value::from(first);
    altered[i] = record.to_string();
    let (code, err) = replay_lines(dir.path(), &altered);
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(
        err.trim_end(),
        format!(
            "CORRUPT: line {}: game-start of game 2: first is bot {first}, as in game 1, but the games of a pair (openings or an SPRT) swap the first mover",
            i + 1
        )
    );
}

#[test]
fn bad_openings_files_are_refused_with_exact_messages() {
    let dir = LogDir::new();
    let logs = dir.path().join("logs");
    let refuse = |text: Option<&str>, extra: &[&str], message: &str| {
        let path = dir.path().join("bad.txt");
        let _ = std::fs::remove_file(&path);
        if let Some(text) = text {
            std::fs::write(&path, text).expect("write");
        }
        let mut args = vec![
            "match",
            "python3 never-started.py",
            "python3 never-started.py",
            "--openings",
            s(&path),
            "--log-dir",
            s(&logs),
        ];
        args.extend_from_slice(extra);
        let out = hus(&args);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        let file = path.display();
        assert_eq!(
            err.trim_end(),
            format!(
                "error: invalid --openings: {}",
                message.replace("FILE", &file.to_string())
            ),
        );
        assert!(!logs.exists(), "no log for a refused file");
    };
    refuse(
        None,
        &[],
        "cannot read the openings file FILE: No such file or directory (os error 2)",
    );
    refuse(
        Some("# only a comment\n\n"),
        &[],
        "FILE: the file holds no opening (one per line: a position in the notation of RULES.md, \
         or `moves` and pits played from the starting position; `#` starts a comment)",
    );
    refuse(
        Some("moves 7\nhus 8 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2 0\n"),
        &[],
        "FILE: line 2: not a position in the notation of RULES.md: player 1's back row has 7 pits, expected 8",
    );
    refuse(
        Some("hus 8 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0\n"),
        &["--width", "9"],
        "FILE: line 1: the position is hus at width 8, but the set plays hus at width 9",
    );
    refuse(
        Some("# over\nhus 8 0,0,0,0,0,0,0,1/0,0,0,0,0,0,0,0 2,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0 0\n"),
        &[],
        "FILE: line 2: the game is already over there: player 0, to move, has no pit with 2 or more seeds",
    );
    refuse(
        Some("moves 7 0\n"),
        &[],
        "FILE: line 1: moves: pit 0 cannot be played at ply 1: pit 0 holds 0 seeds, a move needs at least 2",
    );
    refuse(
        Some("moves seven\n"),
        &[],
        "FILE: line 1: moves: \"seven\" is not a pit number",
    );
}

/// The viewer and `hus replay --game` start each game from its opening, and name the
/// players by who is to move there.
#[test]
fn replay_shows_each_game_from_its_opening() {
    let (p, _dir) = set_with_openings("10");
    let starts = of_type(&p.records, "game-start");
    // A game whose opening has player 1 to move.
    let (i, g) = starts
        .iter()
        .enumerate()
        .find(|(_, g)| g["position"].as_str().is_some_and(|t| t.ends_with(" 1")))
        .expect("an opening with player 1 to move");
    let game = (i + 1).to_string();
    let first = g["first"].as_u64().expect("first") as usize;
    let header = &named_header(&p.records);
    let label = |bot: usize| {
        let letter = ["A", "B"][bot];
        match header["bots"][bot]["name"].as_str() {
            Some(name) => format!("{letter} ({name})"),
            None => letter.to_string(),
        }
    };
    let out = hus(&[
        "replay",
        s(&p.log),
        "--game",
        &game,
        "--ply",
        "0",
        "--color",
        "never",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("ply 0: player 1, {}, to move", label(first))),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "position: {}",
            g["position"].as_str().expect("position")
        )),
        "{text}"
    );
    let out = hus(&["replay", s(&p.log), "--game", &game, "--color", "never"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!(
            "player 0 = {}, player 1 = {}",
            label(1 - first),
            label(first)
        )),
        "{text}"
    );

    if !crate::replay::browser() {
        return;
    }
    let html = p._dir.path().join("viewer.html");
    let out = hus(&["replay", s(&p.log), "--html", s(&html)]);
    assert_eq!(out.status.code(), Some(0));
    // Every position of every game, as the page computes it from the moves, is the
    // engine's: the starts are the openings.
    let dom = crate::replay::chromium(&format!("file://{}#check", html.display()), &["--dump-dom"]);
    assert!(dom.contains("data-check=\"ok\""), "the page's own check");
    let listed = dom
        .split("<pre id=\"positions\" hidden=\"\">")
        .nth(1)
        .and_then(|rest| rest.split("</pre>").next())
        .expect("the positions listed");
    assert_eq!(
        listed.lines().collect::<Vec<_>>(),
        crate::replay::log_positions(&p.records, &[1, 2, 3, 4, 5]),
    );
    // At the opening, player 1 is to move, and it is the first bot.
    let dom = crate::replay::chromium(
        &format!("file://{}#game={game}&ply=0", html.display()),
        &["--dump-dom"],
    );
    let escaped = |t: String| {
        t.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    assert!(
        dom.contains(&format!(
            "player 1: {}  \u{2190} to move</text>",
            escaped(label(first))
        )),
        "{dom}"
    );
    assert!(
        dom.contains(&format!("player 0: {}</text>", escaped(label(1 - first)))),
        "{dom}"
    );
    assert!(
        dom.contains(&format!(
            "Start of game {game}, from an opening. Player 1 ({}) moves first.",
            escaped(label(first))
        )),
        "{dom}"
    );
}

/// The shipped books: valid for their rules, every score within the bound their
/// command states, and exactly what that command makes (all three are made again:
/// about 15 s of CPU in a release build).
#[test]
fn the_shipped_books_are_valid_and_made_by_their_command() {
    alphabeta(); // builds the release binaries of the package, make-book included
    let make_book = root().join("target/release/make-book");
    for preset in ["hus", "rulebook", "mancala-world"] {
        let path = root().join(format!("openings/{preset}-8.txt"));
        let text = std::fs::read_to_string(&path).expect("the book is shipped");
        let rules = Rules::new(preset.parse().expect("preset"), 8).expect("rules");
        let book = referee::read_openings(&path, rules).expect("a valid book");
        assert_eq!(book.len(), 64, "{preset}");
        // The command, from the header.
        let command = text
            .lines()
            .find_map(|l| {
                l.strip_prefix("#   cargo run --release -p alphabeta-bot --bin make-book -- ")
            })
            .expect("the command that made it");
        let (args, target) = command.split_once(" > ").expect("its output file");
        assert_eq!(target, format!("openings/{preset}-8.txt"));
        let args: Vec<&str> = args.split_whitespace().collect();
        let value = |flag: &str| {
            let at = args.iter().position(|a| *a == flag).expect("flag");
            args[at + 1]
        };
        assert_eq!(value("--rules"), preset);
        let bound: i32 = value("--max-score").parse().expect("a number");
        // Every opening has its score as a comment, within the bound.
        let mut scores = 0;
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let (_, score) = line.split_once("  # ").expect("a score comment");
            let score: i32 = score.parse().expect("a score");
            assert!(score.abs() <= bound, "{preset}: {line}");
            scores += 1;
        }
        assert_eq!(scores, 64);
        let out = Command::new(&make_book)
            .args(&args)
            .output()
            .expect("make-book runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stdout == text.as_bytes(),
            "{preset}: make-book {command} does not make the shipped book again"
        );
    }
}

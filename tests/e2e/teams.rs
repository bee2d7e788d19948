//! Team matches (`hus match --team-a ... --team-b ...`): who plays each move, what each
//! member hears (`hello.team`, `game.order`, `turn.last`), a member's fault, and
//! `hus replay` on team logs. Everything is asserted on the log and on what the
//! recorder bots wrote down.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{
    bot, hus, hus_random, misbehave, named_header, of_type, read_log, verify_log, LogDir, GENEROUS,
};

/// The result of one team match.
struct TeamSet {
    summary: Value,
    records: Vec<Value>,
    log: PathBuf,
    dir: LogDir,
}

/// `hus match --team-a A... --team-b B... --json --log-dir TMP [GENEROUS] EXTRA...`,
/// expecting exit status 0, the log re-played here and by `hus replay`.
fn play_teams(a: &[String], b: &[String], extra: &[&str]) -> TeamSet {
    let dir = LogDir::new();
    let log_dir = dir.path().to_str().expect("utf-8 path").to_string();
    let mut args: Vec<&str> = vec!["match", "--team-a"];
    args.extend(a.iter().map(String::as_str));
    args.push("--team-b");
    args.extend(b.iter().map(String::as_str));
    args.extend(["--json", "--log-dir", &log_dir]);
    args.extend_from_slice(&GENEROUS);
    args.extend_from_slice(extra);
    let output = hus(&args);
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(output.status.success(), "hus match failed: {stderr}");
    let summary: Value = serde_json::from_slice(&output.stdout).expect("summary is JSON");
    let log = PathBuf::from(summary["log"].as_str().expect("log path"));
    let records = read_log(&log);
    verify_log(&records);
    let replay = hus(&["replay", log.to_str().expect("utf-8 path")]);
    assert_eq!(
        replay.status.code(),
        Some(0),
        "hus replay rejected the team log: {}",
        String::from_utf8_lossy(&replay.stderr)
    );
    TeamSet {
        summary,
        records,
        log,
        dir,
    }
}

fn recorder(file: &Path) -> String {
    format!("{} {}", bot("tests/bots/recorder.py"), file.display())
}

/// The lines a recorder bot received, as JSON.
fn received(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .expect("the recorder wrote its file")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect()
}

fn u(v: &Value) -> usize {
    v.as_u64().expect("a number") as usize
}

/// Each game's `game-start.order`.
fn orders(records: &[Value]) -> Vec<[Vec<usize>; 2]> {
    of_type(records, "game-start")
        .iter()
        .map(|g| {
            [0, 1].map(|s| {
                g["order"][s]
                    .as_array()
                    .expect("order of each side")
                    .iter()
                    .map(u)
                    .collect()
            })
        })
        .collect()
}

/// Four recorders, two a side: every member's messages written down.
fn recorders_set(games: &str) -> (TeamSet, [[PathBuf; 2]; 2], LogDir) {
    let files = LogDir::new();
    // What each recorder heard, a message a line: not logs.
    let paths =
        [0, 1].map(|s| [0, 1].map(|i| files.broken(&format!("{}{}.jsonl", ["a", "b"][s], i + 1))));
    let cmds = paths
        .clone()
        .map(|side| side.map(|p| recorder(&p)).to_vec());
    let set = play_teams(
        &cmds[0],
        &cmds[1],
        &[
            "--games",
            games,
            "--seed",
            "11",
            "--team-names",
            "red",
            "blue",
        ],
    );
    (set, paths, files)
}

#[test]
fn mates_take_their_side_s_turns_in_the_order_drawn_for_each_game() {
    let (set, _, _files) = recorders_set("6");
    let records = &set.records;
    let orders = orders(records);
    assert_eq!(orders.len(), 6);
    // Drawn from the seed: the same set always has these orders (games 1 and 2 exact).
    assert_eq!(
        orders[0],
        [vec![0, 1], vec![0, 1]],
        "game 1's order, seed 11"
    );
    assert_eq!(
        orders[1],
        [vec![1, 0], vec![0, 1]],
        "game 2's order, seed 11"
    );
    // A lot for each game: not the same order in every game.
    assert!(
        orders.iter().any(|o| o[0] != orders[0][0]),
        "team A's order never changes: {orders:?}"
    );
    // Every move: the member due by the game's order, counting the side's own moves.
    let mut game = 0;
    let mut side_moves = [0usize; 2];
    let mut game1: Vec<(usize, usize)> = Vec::new();
    for r in records {
        match r["type"].as_str() {
            Some("game-start") => {
                game = u(&r["game"]);
                side_moves = [0, 0];
            }
            Some("move") => {
                let side = u(&r["bot"]);
                let order = &orders[game - 1][side];
                assert_eq!(
                    u(&r["mate"]),
                    order[side_moves[side] % 2],
                    "game {game} ply {}: the member due",
                    r["ply"]
                );
                side_moves[side] += 1;
                if game == 1 {
                    game1.push((side, u(&r["mate"])));
                }
            }
            _ => {}
        }
    }
    // Game 1 move by move: sides alternate, each side's members alternate in its order.
    let first = u(&of_type(records, "game-start")[0]["first"]);
    let expected: Vec<(usize, usize)> = (0..game1.len())
        .map(|ply| {
            let side = if ply % 2 == 0 { first } else { 1 - first };
            (side, orders[0][side][(ply / 2) % 2])
        })
        .collect();
    assert_eq!(game1, expected);
    assert!(
        game1.len() >= 4,
        "game 1 is long enough to show the rotation"
    );
    // The summary names the teams and counts each member's moves.
    let teams = set.summary["teams"].as_array().expect("teams in --json");
    assert_eq!(teams[0]["name"], "red");
    assert_eq!(teams[1]["name"], "blue");
    let moves: u64 = teams
        .iter()
        .flat_map(|t| t["members"].as_array().expect("members").iter())
        .map(|m| m["moves"].as_u64().expect("moves"))
        .sum();
    assert_eq!(moves, of_type(records, "move").len() as u64);
    // The header names teams and members.
    let header = &named_header(records);
    assert_eq!(header["teams"][0]["name"], "red");
    assert_eq!(header["teams"][0]["members"][0]["name"], "recorder");
    assert_eq!(header["teams"][0]["members"][1]["name"], "recorder-2");
    assert_eq!(header["teams"][1]["members"][0]["announced"], "recorder");
    assert_eq!(header["bots"][0]["name"], "red");
}

#[test]
fn each_member_hears_its_team_partners_order_and_the_last_move_on_the_board() {
    let (set, paths, _files) = recorders_set("2");
    let records = &set.records;
    let orders = orders(records);
    let moves = of_type(records, "move");
    let names = [["recorder", "recorder-2"], ["recorder", "recorder-2"]];
    for side in 0..2 {
        for (i, path) in paths[side].iter().enumerate() {
            let got = received(path);
            let hello = &got[0];
            assert_eq!(hello["type"], "hello");
            let team = &hello["team"];
            assert_eq!(team["name"], ["red", "blue"][side]);
            assert_eq!(team["opponent"], ["blue", "red"][side]);
            assert_eq!(team["members"], serde_json::json!(names[side]));
            assert_eq!(team["opponent_members"], serde_json::json!(names[1 - side]));
            assert_eq!(u(&team["you"]), i, "its own index among the members");
            let games = of_type(&got, "game");
            assert_eq!(games.len(), 2);
            for g in &games {
                let n = u(&g["game"]);
                assert_eq!(g["order"], serde_json::json!(orders[n - 1][side]));
                assert_eq!(
                    g["opponent_order"],
                    serde_json::json!(orders[n - 1][1 - side])
                );
            }
            // Each turn it gets is one the order gives it, and `last` is the move
            // just before on the board: an opposing member's.
            let turns = of_type(&got, "turn");
            assert!(!turns.is_empty(), "member {i} of side {side} never moved");
            for t in turns {
                let (game, ply) = (t["game"].as_u64(), u(&t["ply"]));
                let before = moves
                    .iter()
                    .find(|m| m["game"].as_u64() == game && ply > 0 && u(&m["ply"]) == ply - 1);
                match before {
                    None => assert_eq!(t["last"], Value::Null, "the first move of a game"),
                    Some(m) => {
                        assert_eq!(u(&m["bot"]), 1 - side, "sides alternate");
                        assert_eq!(t["last"], m["pit"], "game {game:?} ply {ply}");
                    }
                }
                let mine = moves
                    .iter()
                    .find(|m| m["game"].as_u64() == game && u(&m["ply"]) == ply)
                    .expect("the turn was answered");
                assert_eq!((u(&mine["bot"]), u(&mine["mate"])), (side, i));
            }
        }
    }
}

#[test]
fn a_members_fault_loses_the_game_for_its_team_and_only_that_member_restarts() {
    // Team red: a healthy random mover and a bot that plays an out-of-range pit on its
    // second turn of each run (it is restarted after the fault, and does it again).
    let a = vec![
        hus_random(1),
        misbehave("pit-out-of-range --on 2 --tag teamfault"),
    ];
    let b = vec![hus_random(2), hus_random(3)];
    let set = play_teams(&a, &b, &["--games", "2", "--seed", "4"]);
    let records = &set.records;
    let faults = of_type(records, "fault");
    assert_eq!(faults.len(), 2, "one fault a game: {faults:?}");
    for (k, f) in faults.iter().enumerate() {
        assert_eq!(u(&f["game"]), k + 1);
        assert_eq!((u(&f["bot"]), u(&f["mate"])), (0, 1), "member 1 of side A");
        assert_eq!(f["kind"], "illegal-move");
        assert_eq!(f["stage"], "game");
    }
    let ends = of_type(records, "game-end");
    for e in &ends {
        assert_eq!(e["reason"], "illegal-move");
        assert_eq!(e["winner"], 1, "the other team wins");
        assert_eq!(e["faulted"], serde_json::json!([0]));
        assert_eq!(e["points"], serde_json::json!([0, 1]));
    }
    // The faulting member made its own move first (its first turn), then faulted on its
    // second: exactly where the order put it.
    let orders = orders(records);
    for (g, f) in faults.iter().enumerate() {
        let own = of_type(records, "move")
            .iter()
            .filter(|m| u(&m["game"]) == g + 1 && u(&m["bot"]) == 0)
            .count();
        assert_eq!(
            orders[g][0][own % 2],
            1,
            "game {}: the fault came on the member's own turn",
            g + 1
        );
        assert_eq!(
            u(&f["ply"]) % 2,
            (u(&of_type(records, "game-start")[g]["first"]) == 1) as usize
        );
    }
    // Stopped when it faulted, restarted before game 2; its partner ran the whole set.
    let restarts = of_type(records, "restart");
    assert_eq!(restarts.len(), 1);
    assert_eq!(
        (
            u(&restarts[0]["bot"]),
            u(&restarts[0]["mate"]),
            u(&restarts[0]["game"])
        ),
        (0, 1, 2)
    );
    let set_end = of_type(records, "set-end")[0];
    assert_eq!(set_end["faults"], serde_json::json!([2, 0]));
    assert_eq!(set_end["winner"], 1);
    let teams = set.summary["teams"].as_array().expect("teams");
    assert_eq!(teams[0]["members"][1]["faults"], 2);
    assert_eq!(teams[0]["members"][0]["faults"], 0);
    // `hus replay` names the member that faulted.
    let text = hus(&["replay", set.log.to_str().expect("utf-8"), "--game", "1"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("misbehave for A (team-a) illegal-move"),
        "replay names the member: {text}"
    );
    drop(set.dir);
}

#[test]
fn replay_shows_who_played_each_move_and_refuses_a_move_by_the_wrong_member() {
    let a = vec![hus_random(1), hus_random(2)];
    let b = vec![hus_random(3), hus_random(4)];
    let set = play_teams(&a, &b, &["--games", "1", "--seed", "9"]);
    let log = set.log.to_str().expect("utf-8");
    let shown = hus(&["replay", log, "--game", "1"]);
    let shown = String::from_utf8_lossy(&shown.stdout).to_string();
    let orders = orders(&set.records);
    let first = u(&of_type(&set.records, "game-start")[0]["first"]);
    let names = ["hus", "hus-2"];
    let teams = ["A (team-a)", "B (team-b)"];
    // Plies 0 to 3: both members of both sides, by the order.
    for ply in 0..4usize {
        let side = if ply % 2 == 0 { first } else { 1 - first };
        let member = names[orders[0][side][ply / 2]];
        let want = format!("ply {ply}: {member} for {} played pit", teams[side]);
        assert!(shown.contains(&want), "no {want:?} in:\n{shown}");
    }
    // A move given to the other member: replay stops there, naming the member due.
    let text = std::fs::read_to_string(&set.log).expect("log");
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let k = lines
        .iter()
        .position(|l| l.contains(r#""type":"move""#) && l.contains(r#""ply":2,"#))
        .expect("a third move");
    let mut m: Value = serde_json::from_str(&lines[k]).expect("JSON");
    let due = u(&m["mate"]);
    m["mate"] = Value::from(1 - due);
    lines[k] = m.to_string();
    let bad = set.dir.broken("bad.jsonl");
    std::fs::write(&bad, lines.join("\n") + "\n").expect("write");
    let out = hus(&["replay", bad.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(1));
    let err =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "line {}: move of game 1 ply 2: the log says member {} of bot {} moved but by the game's order it is member {due}'s turn",
            k + 1,
            1 - due,
            first
        )),
        "{err}"
    );
}

#[test]
fn a_team_match_needs_two_bots_a_side() {
    let out = hus(&["match", "--team-a", "x", "--team-b", "y", "z"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--team-a"), "{err}");
    let out = hus(&[
        "match", "a", "b", "--team-a", "x", "y", "--team-b", "z", "w",
    ]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_viewer_shows_who_played_each_move() {
    if !crate::replay::browser() {
        return;
    }
    let a = vec![hus_random(1), hus_random(2)];
    let b = vec![hus_random(3), hus_random(4)];
    let set = play_teams(
        &a,
        &b,
        &["--games", "1", "--seed", "9", "--team-names", "red", "blue"],
    );
    let html = set.dir.path().join("teams.html");
    let out = hus(&[
        "replay",
        set.log.to_str().expect("utf-8"),
        "--html",
        html.to_str().expect("utf-8"),
    ]);
    assert_eq!(out.status.code(), Some(0));
    let dom = crate::replay::chromium(
        &format!("file://{}#game=1&ply=1", html.display()),
        &["--dump-dom"],
    );
    let names = ["hus", "hus-2"];
    for m in of_type(&set.records, "move").iter().take(4) {
        let side = u(&m["bot"]);
        // The list counts plies from 1 (the log's `ply` from 0).
        let want = format!(
            "{}. {} {} pit {}",
            u(&m["ply"]) + 1,
            ["A", "B"][side],
            names[u(&m["mate"])],
            m["pit"]
        );
        assert!(dom.contains(&want), "the viewer should list {want:?}");
    }
}

#[test]
fn a_league_of_teams_plays_team_sets_and_ranks_the_teams() {
    let tmp = LogDir::new();
    let hus_bin = env!("CARGO_BIN_EXE_hus");
    let random_py = root_path("sample-bots/python/random_bot.py");
    // Deterministic bots only (seeded random movers and a fixed-depth search): the
    // standings below are exact.
    let bots = [
        (
            "alphabeta",
            format!("{} --depth 2", crate::sample_bots::alphabeta()),
        ),
        ("py-random", format!("python3 {random_py} 5")),
        ("hus-1", format!("{hus_bin} random-bot --seed 1")),
        ("hus-2", format!("{hus_bin} random-bot --seed 2")),
        ("hus-3", format!("{hus_bin} random-bot --seed 3")),
        ("hus-4", format!("{hus_bin} random-bot --seed 4")),
    ];
    let mut text =
        "games = 2\nmove_time = \"5s\"\nready_time = \"30s\"\nseed = 5\nconcurrency = 2\n"
            .to_string();
    for (name, command) in &bots {
        text.push_str(&format!(
            "\n[[bot]]\nname = \"{name}\"\ncommand = \"{command}\"\n"
        ));
    }
    text.push_str(
        "\n[[team]]\nname = \"search\"\nmembers = [\"alphabeta\", \"hus-1\"]\n\
         \n[[team]]\nname = \"python\"\nmembers = [\"py-random\", \"hus-2\"]\n\
         \n[[team]]\nname = \"builtin\"\nmembers = [\"hus-3\", \"hus-4\"]\n",
    );
    let file = tmp.path().join("teams.toml");
    std::fs::write(&file, text).expect("write league");
    let dir = tmp.path().join("league");
    let out = hus(&[
        "league",
        file.to_str().expect("utf-8"),
        "--dir",
        dir.to_str().expect("utf-8"),
        "--quiet",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Three teams, round robin: three team sets, each logged with its teams and
    // verified by hus replay.
    let mut logs: Vec<PathBuf> = std::fs::read_dir(dir.join("logs"))
        .expect("logs")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".jsonl.zst"))
        .collect();
    logs.sort();
    assert_eq!(logs.len(), 3, "{logs:?}");
    let mut points = std::collections::BTreeMap::<String, u64>::new();
    for log in &logs {
        let records = read_log(log);
        verify_log(&records);
        let replay = hus(&["replay", log.to_str().expect("utf-8")]);
        assert_eq!(replay.status.code(), Some(0), "{}", log.display());
        let teams = &records[0]["teams"];
        let members = |s: usize| -> Vec<String> {
            teams[s]["members"]
                .as_array()
                .expect("members")
                .iter()
                .map(|m| m["name"].as_str().expect("name").to_string())
                .collect()
        };
        for s in 0..2 {
            let name = teams[s]["name"].as_str().expect("team name").to_string();
            let expected = match name.as_str() {
                "search" => ["alphabeta", "hus-1"],
                "python" => ["py-random", "hus-2"],
                "builtin" => ["hus-3", "hus-4"],
                other => panic!("unknown team {other}"),
            };
            assert_eq!(members(s), expected);
            // Each member has its own stderr file.
            for i in 1..=2 {
                let stderr = teams[s]["members"][i - 1]["stderr"]
                    .as_str()
                    .expect("stderr");
                assert!(stderr.ends_with(&format!(".{}{i}.stderr", ["a", "b"][s])));
            }
            let end = of_type(&records, "set-end")[0];
            *points.entry(name).or_default() += end["points"][s].as_u64().expect("points");
        }
        assert!(of_type(&records, "move").iter().all(|m| m["mate"].is_u64()));
    }
    // The standings rank the teams and name their members.
    let json = hus(&[
        "standings",
        dir.to_str().expect("utf-8"),
        "--format",
        "json",
    ]);
    let s: Value = serde_json::from_slice(&json.stdout).expect("JSON standings");
    let ranked = s["bots"].as_array().expect("entrants");
    let mut names: Vec<&str> = ranked
        .iter()
        .map(|b| b["name"].as_str().expect("name"))
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["builtin", "python", "search"]);
    for b in ranked {
        let name = b["name"].as_str().expect("name");
        assert_eq!(b["points"].as_u64(), points.get(name).copied(), "{name}");
        assert_eq!(b["games"]["played"], 4, "{name}");
        assert_eq!(b["sets"]["played"], 2, "{name}");
        assert!(b["rating"]["value"].is_f64(), "{name} is rated");
    }
    assert_eq!(s["league"]["teams"][0]["name"], "search");
    assert_eq!(
        s["league"]["teams"][0]["members"],
        serde_json::json!(["alphabeta", "hus-1"])
    );
    let table = hus(&["standings", dir.to_str().expect("utf-8")]);
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(
        table.contains("teams:\n  search: alphabeta, hus-1\n  python: py-random, hus-2\n  builtin: hus-3, hus-4\n"),
        "{table}"
    );
    // The same league again gives the same table: team orders come from the seed.
    let again_dir = tmp.path().join("again");
    let out = hus(&[
        "league",
        file.to_str().expect("utf-8"),
        "--dir",
        again_dir.to_str().expect("utf-8"),
        "--quiet",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let again = hus(&[
        "standings",
        again_dir.to_str().expect("utf-8"),
        "--format",
        "json",
    ]);
    let again: Value = serde_json::from_slice(&again.stdout).expect("JSON");
    let pts = |v: &Value| -> Vec<(String, u64)> {
        v["bots"]
            .as_array()
            .expect("bots")
            .iter()
            .map(|b| {
                (
                    b["name"].as_str().expect("name").to_string(),
                    b["points"].as_u64().expect("points"),
                )
            })
            .collect()
    };
    assert_eq!(pts(&again), pts(&s));
}

#[test]
fn a_league_file_s_teams_are_checked() {
    let tmp = LogDir::new();
    let head = "games = 1\n[[bot]]\nname = \"a\"\ncommand = \"x\"\n[[bot]]\nname = \"b\"\ncommand = \"y\"\n[[bot]]\nname = \"c\"\ncommand = \"z\"\n";
    for (teams, error) in [
        (
            "[[team]]\nname = \"t\"\nmembers = [\"a\", \"b\"]\n[[team]]\nname = \"u\"\nmembers = [\"c\"]\n",
            "line 16: members: a team needs two or more bots, team \"u\" has 1",
        ),
        (
            "[[team]]\nname = \"t\"\nmembers = [\"a\", \"nobody\"]\n",
            "line 13: members: no bot is named \"nobody\"",
        ),
        (
            "[[team]]\nname = \"a\"\nmembers = [\"a\", \"b\"]\n",
            "line 12: name: \"a\" is already the name of a bot",
        ),
        (
            "[[team]]\nname = \"t\"\nmembers = [\"a\", \"b\"]\n",
            "a league of teams needs at least two teams",
        ),
    ] {
        let file = tmp.path().join("bad.toml");
        std::fs::write(&file, format!("{head}{teams}")).expect("write");
        let out = hus(&[
            "league",
            file.to_str().expect("utf-8"),
            "--dir",
            tmp.path().join("d").to_str().expect("utf-8"),
        ]);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(error), "want {error:?} in {err}");
    }
}

fn root_path(rel: &str) -> String {
    crate::common::root().join(rel).display().to_string()
}

/// Regression (issue 23): a team set stopped and played again kept its members'
/// stderr files where they were, and the second attempt's members appended to the
/// first's (`STEM.a1.stderr` is opened for append). Each attempt's files are now set
/// aside whole: the first attempt's member stderr is `STEM.partial-1.a1.stderr`, the
/// second's `STEM.a1.stderr`, each holding its own attempt's one line.
#[test]
fn a_retried_team_set_keeps_each_attempts_stderr_apart() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    let tmp = LogDir::new();
    // The first member of each team says its pid on stderr as it starts, then plays.
    let speaker = |seed: u64| {
        let path = tmp.path().join(format!("speaker-{seed}.sh"));
        std::fs::write(
            &path,
            format!(
                "#!/bin/sh\necho \"member started, pid $$\" >&2\nexec '{}' random-bot --seed {seed}\n",
                env!("CARGO_BIN_EXE_hus")
            ),
        )
        .expect("write speaker");
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod speaker");
        path.display().to_string()
    };
    let (speak1, speak2) = (speaker(1), speaker(2));
    // The first attempt waits for the mute member's ready (600 s) when it is stopped;
    // the second, with the mute member replaced by a random mover, plays to its end.
    let league = |mute: &str| {
        format!(
            "games = 1\nmove_time = \"600s\"\nready_time = \"600s\"\nseed = 4\nconcurrency = 1\n\n\
             [[bot]]\nname = \"speak1\"\ncommand = \"{speak1}\"\n\n\
             [[bot]]\nname = \"rnd\"\ncommand = \"{}\"\n\n\
             [[bot]]\nname = \"speak2\"\ncommand = \"{speak2}\"\n\n\
             [[bot]]\nname = \"mute\"\ncommand = \"{mute}\"\n\n\
             [[team]]\nname = \"reds\"\nmembers = [\"speak1\", \"rnd\"]\n\n\
             [[team]]\nname = \"blues\"\nmembers = [\"speak2\", \"mute\"]\n",
            hus_random(3).replace('\'', "")
        )
    };
    let file = tmp.path().join("teams.toml");
    std::fs::write(&file, league(&misbehave("no-hello"))).expect("league file");
    let dir = tmp.path().join("league");
    let logs = dir.join("logs");
    let mut child = Command::new(env!("CARGO_BIN_EXE_hus"))
        .args(["league", file.to_str().expect("utf-8"), "--dir"])
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hus league starts");
    // The one set's stem, once both speakers have said their line.
    let said = |path: PathBuf| std::fs::read_to_string(path).unwrap_or_default();
    // Bounds only a broken league: the moment itself is read from the files.
    let deadline = Instant::now() + Duration::from_secs(120);
    let stem = loop {
        assert!(
            child.try_wait().expect("try_wait").is_none(),
            "the league ended before it was stopped"
        );
        let stem = std::fs::read_dir(&logs)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                e.file_name()
                    .to_str()
                    .and_then(|n| n.strip_suffix(".jsonl"))
                    .map(str::to_string)
            })
            .next();
        if let Some(stem) = stem {
            let files = league::SetFiles::new(&logs, &stem);
            if referee::Side::BOTH
                .iter()
                .all(|&side| said(files.stderr(side, Some(0))).ends_with('\n'))
            {
                break stem;
            }
        }
        assert!(Instant::now() < deadline, "the speakers never spoke");
        std::thread::sleep(Duration::from_millis(20));
    };
    crate::common::sigterm(&child);
    let out = child.wait_with_output().expect("reaped");
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    std::fs::write(&file, league(&hus_random(4).replace('\'', ""))).expect("league file");
    let out = hus(&[
        "league",
        file.to_str().expect("utf-8"),
        "--dir",
        dir.to_str().expect("utf-8"),
        "--quiet",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let files = league::SetFiles::new(&logs, &stem);
    let first = files.partial(1);
    // A finished set's stderr files are compressed (`.stderr.zst`); read_set_log reads
    // either form.
    let one_line = |path: PathBuf| {
        let text = crate::common::read_set_log(&path);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1, "{}: {text:?}", path.display());
        let pid = lines[0].strip_prefix("member started, pid ");
        pid.unwrap_or_else(|| panic!("{}: {text:?}", path.display()))
            .to_string()
    };
    for side in referee::Side::BOTH {
        let before = one_line(first.stderr(side, Some(0)));
        let after = one_line(files.stderr(side, Some(0)));
        assert_ne!(before, after, "two attempts, two processes");
    }
    // Both attempts' logs and every member's stderr, apart; nothing else.
    let mut names: Vec<String> = std::fs::read_dir(&logs)
        .expect("logs")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut expected = Vec::new();
    // The interrupted attempt's files as they were left, the finished one's compressed.
    for (attempt, packed) in [(format!("{stem}.partial-1"), ""), (stem.clone(), ".zst")] {
        for s in ["a1.stderr", "a2.stderr", "b1.stderr", "b2.stderr", "jsonl"] {
            expected.push(format!("{attempt}.{s}{packed}"));
        }
    }
    expected.sort();
    assert_eq!(names, expected);
    let kinds: Vec<Value> = read_log(&first.log())
        .iter()
        .map(|r| r["type"].clone())
        .collect();
    assert_eq!(kinds, ["header", "aborted"]);
    assert_eq!(of_type(&read_log(&files.log()), "set-end").len(), 1);
}

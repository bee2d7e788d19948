//! Long boards (issue 15): sets at widths 24 and 32 between sample bots, logged,
//! re-played by the engine (`verify_log`) and by `hus replay`; `hus perft` and `hus line`
//! on wide boards.

use engine::{AnyPosition, Board, Game, Preset, Rules};

use crate::common::*;
use crate::sample_bots::alphabeta;

#[test]
fn sets_on_long_boards_are_played_logged_and_replayed() {
    let js = format!(
        "node {}",
        root().join("sample-bots/js/random_bot.js").display()
    );
    for (preset, width, a, b) in [
        (Preset::Hus, 24, greedy_bot(), js),
        (
            Preset::Rulebook,
            32,
            format!("{} --depth 2", alphabeta()),
            random_bot(),
        ),
        (Preset::MancalaWorld, 32, random_bot(), greedy_bot()),
    ] {
        let w = width.to_string();
        // `play` checks every board of the log with the engine and runs `hus replay`.
        let p = play(
            &a,
            &b,
            &[
                "--rules",
                preset.name(),
                "--width",
                &w,
                "--games",
                "2",
                "--seed",
                "24",
            ],
        );
        let what = format!("{preset} {width}");
        assert_eq!(p.records[0]["rules"]["width"], width, "{what}");
        assert_eq!(p.summary["games_played"], 2, "{what}");
        for bot in 0..2 {
            assert_eq!(
                p.summary["bots"][bot]["faults"], 0,
                "{what}: {}",
                p.summary["faults"]
            );
        }
        let start = AnyPosition::start(Rules::new(preset, width).expect("rules"));
        assert!(matches!(start, AnyPosition::Wide(_)));
        for g in of_type(&p.records, "game-start") {
            assert_eq!(
                g["position"].as_str(),
                Some(start.to_string().as_str()),
                "{what}"
            );
        }
        // Pits past the narrow board's 32 are played and logged.
        let pits: Vec<u64> = of_type(&p.records, "move")
            .iter()
            .map(|m| m["pit"].as_u64().expect("pit"))
            .collect();
        assert!(pits.iter().any(|&pit| pit >= 32), "{what}: {pits:?}");
        assert!(pits.iter().all(|&pit| pit < 2 * width as u64), "{what}");
        // The text replay draws the long rows: the last pit number of the back row.
        let out = hus(&["replay", p.log.to_str().expect("utf-8"), "--game", "1"]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{what}");
        assert!(
            text.contains(&format!(" {}", 2 * width - 1)),
            "{what}: {text}"
        );
    }
}

#[test]
fn perft_and_line_on_long_boards() {
    let out = hus(&[
        "perft",
        "--rules",
        "mancala-world",
        "--width",
        "32",
        "--depth",
        "3",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        text.lines().take(3).collect::<Vec<_>>(),
        ["1 48", "2 2304", "3 88848"]
    );
    let start = AnyPosition::start(Rules::new(Preset::Hus, 24).expect("rules")).to_string();
    let out = hus(&["perft", "--position", &start, "--depth", "3", "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(json["counts"], serde_json::json!([36, 1296, 37800]));
    assert_eq!(json["width"], 24);
    // `hus line` plays a line on the long board as the engine does: pit 23 (the last
    // front pit), then player 1's pit 47 (the last back pit), then pit 41.
    let out = hus(&[
        "line", "--rules", "hus", "--width", "24", "--json", "23", "47", "41",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let mut game = Game::new(AnyPosition::start(
        Rules::new(Preset::Hus, 24).expect("rules"),
    ));
    for (i, pit) in [23, 47, 41].into_iter().enumerate() {
        let report = game.play(pit).expect("legal");
        assert_eq!(
            line["moves"][i]["position"].as_str(),
            Some(game.position().to_string().as_str())
        );
        assert_eq!(
            line["moves"][i]["sown"].as_u64(),
            Some(u64::from(report.summary.sown))
        );
    }
    assert_eq!(line["start"].as_str(), Some(start.as_str()));
    let legal: Vec<usize> = game.position().legal_moves().collect();
    assert_eq!(line["legal"], serde_json::json!(legal));
    let out = hus(&["perft", "--width", "33", "--depth", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("row width 33 is out of range (expected 8 to 32)"));
    // 256 seeds: more than a board holds.
    let heavy = start.replacen("0,", "112,", 1);
    let out = hus(&["perft", "--position", &heavy, "--depth", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("256 seeds on the board, at most 255 are supported"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

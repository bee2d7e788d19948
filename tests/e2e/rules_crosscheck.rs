//! The engine against the independent Python implementation of the rules
//! (`sample-bots/python/hus_rules.py`), written apart from it from RULINGS.md, and
//! against the viewer's JavaScript port (`referee/src/replay/rules.js`, run by Node):
//! thousands of random positions of every preset and width, every pit of each, in one
//! process each.

use std::io::Write;
use std::process::{Command, Stdio};

use engine::{AnyPosition, Board, Player, Preset, Rules, Setup};

use crate::common::{move_words, root};

struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// Random positions: sparse and dense boards, both players to move, within 127 seeds at
/// widths 8 to 16; then `count / 5` wide boards (widths 17 to 32, or a narrow width with
/// more than 127 seeds), within 255 seeds.
fn positions(count: usize) -> Vec<AnyPosition> {
    let mut rng = Lcg(2026);
    let mut out = Vec::new();
    while out.len() < count {
        let preset = Preset::ALL[rng.below(3) as usize];
        let width = 8 + rng.below(9) as usize;
        let rules = Rules::new(preset, width).expect("valid");
        let dense = rng.below(4) as u8;
        let pits = [0, 1].map(|_| {
            (0..2 * width)
                .map(|_| rng.below(2 + dense as u64 * 2) as u8)
                .collect()
        });
        let to_move = if rng.below(2) == 0 {
            Player::Zero
        } else {
            Player::One
        };
        if let Ok(p) = (Setup {
            rules,
            pits,
            to_move,
        })
        .validate()
        {
            out.push(AnyPosition::Narrow(p));
        }
    }
    let mut rng = Lcg(2032);
    let narrow = out.len();
    while out.len() < narrow + count / 5 {
        let preset = Preset::ALL[rng.below(3) as usize];
        let width = 8 + rng.below(25) as usize;
        let rules = Rules::new(preset, width).expect("valid");
        let dense = rng.below(3);
        let mut pits = [0, 1].map(|_| {
            (0..2 * width)
                .map(|_| rng.below(2 + dense) as u8)
                .collect::<Vec<u8>>()
        });
        if width <= 16 {
            pits[0][rng.below(2 * width as u64) as usize] = 100 + rng.below(60) as u8;
        }
        let to_move = if rng.below(2) == 0 {
            Player::Zero
        } else {
            Player::One
        };
        if let Ok(p @ AnyPosition::Wide(_)) = AnyPosition::try_from(&Setup {
            rules,
            pits,
            to_move,
        }) {
            out.push(p);
        }
    }
    out
}

#[test]
fn the_engine_and_the_python_rules_agree_on_every_pit_of_random_positions() {
    let mut positions = positions(1500);
    // Moves that reach the 3000-seed stop are rare at random: add known ones.
    for text in [
        "hus 8 0,1,0,1,3,1,0,1/0,1,0,1,0,1,0,1 0,0,0,0,0,0,0,0/1,1,1,1,1,1,1,1 0",
        "hus 8 3,1,2,1,4,1,2,1/4,0,1,3,0,2,2,7 5,0,3,1,1,1,4,2/4,6,1,1,4,1,1,2 0",
    ] {
        positions.push(text.parse().expect("notation"));
    }
    let mut input = String::new();
    let mut expected = Vec::new();
    for pos in &positions {
        for pit in 0..2 * pos.width() {
            input.push_str(&format!("{pos}\t{pit}\n"));
            let mut after = *pos;
            expected.push(after.play(pit).ok().map(|r| (after.to_string(), r.summary)));
        }
    }
    let mut child = Command::new("python3")
        .arg(root().join("sample-bots/python/hus_rules.py"))
        .arg("batch")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("python3 ends");
    writer.join().expect("writer thread").expect("written");
    assert!(out.status.success());
    let lines: Vec<&str> = std::str::from_utf8(&out.stdout)
        .expect("utf-8")
        .lines()
        .collect();
    assert_eq!(lines.len(), expected.len());
    let (mut legal, mut captures, mut truncated) = (0, 0, 0);
    for (i, (line, want)) in lines.iter().zip(&expected).enumerate() {
        let got: serde_json::Value = serde_json::from_str(line).expect("JSON");
        match want {
            None => assert_eq!(got["error"], "illegal", "case {i}: {line}"),
            Some((after, summary)) => {
                legal += 1;
                captures += summary.captures;
                truncated += summary.truncated as u32;
                assert_eq!(got["after"].as_str(), Some(after.as_str()), "case {i}");
                assert_eq!(got["sown"].as_u64(), Some(summary.sown as u64), "case {i}");
                assert_eq!(
                    got["captures"].as_u64(),
                    Some(summary.captures as u64),
                    "case {i}"
                );
                assert_eq!(
                    got["truncated"].as_bool(),
                    Some(summary.truncated),
                    "case {i}"
                );
            }
        }
    }
    // The sample must exercise what matters.
    assert!(legal > 5000, "{legal} legal moves");
    assert!(captures > 1000, "{captures} captures");
    assert!(truncated >= 2, "{truncated} truncated moves");
    eprintln!("{legal} legal moves, {captures} captures, {truncated} truncated");
}

/// Positions and pits as `POSITION<TAB>PIT` lines, and what the engine makes of each:
/// the position after, the report, or `None` for an illegal pit.
fn cases() -> (String, Vec<Option<(String, engine::MoveReport)>>) {
    let mut positions = positions(1500);
    // Moves that reach the 3000-seed stop are rare at random: add known ones.
    for text in [
        "hus 8 0,1,0,1,3,1,0,1/0,1,0,1,0,1,0,1 0,0,0,0,0,0,0,0/1,1,1,1,1,1,1,1 0",
        "hus 8 3,1,2,1,4,1,2,1/4,0,1,3,0,2,2,7 5,0,3,1,1,1,4,2/4,6,1,1,4,1,1,2 0",
    ] {
        positions.push(text.parse().expect("notation"));
    }
    let mut input = String::new();
    let mut expected = Vec::new();
    for pos in &positions {
        for pit in 0..2 * pos.width() {
            input.push_str(&format!("{pos}\t{pit}\n"));
            let mut after = *pos;
            expected.push(after.play(pit).ok().map(|r| (after.to_string(), r)));
        }
    }
    (input, expected)
}

#[test]
fn the_engine_and_the_viewers_rules_agree_on_every_pit_of_random_positions() {
    let (input, expected) = cases();
    let script = r#"
const R = require(process.argv[1]);
const out = [];
for (const line of require('fs').readFileSync(0, 'utf8').split('\n')) {
  if (line === '') continue;
  const [text, pit] = line.split('\t');
  const pos = R.parse(text);
  if (!R.legal(pos, Number(pit))) { out.push('{"error":"illegal"}'); continue; }
  const report = R.play(pos, Number(pit));
  out.push(JSON.stringify({ after: R.format(pos), sown: report.sown, truncated: report.truncated,
    events: report.events, words: R.words(Number(pit), report) }));
}
process.stdout.write(out.join('\n') + '\n');
"#;
    let mut child = Command::new("node")
        .arg("-e")
        .arg(script)
        .arg(root().join("referee/src/replay/rules.js"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("node runs");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("node ends");
    writer.join().expect("writer thread").expect("written");
    assert!(out.status.success());
    let lines: Vec<&str> = std::str::from_utf8(&out.stdout)
        .expect("utf-8")
        .lines()
        .collect();
    assert_eq!(lines.len(), expected.len());
    let (mut legal, mut captures, mut truncated) = (0, 0, 0);
    for (i, (line, want)) in lines.iter().zip(&expected).enumerate() {
        let got: serde_json::Value = serde_json::from_str(line).expect("JSON");
        match want {
            None => assert_eq!(got["error"], "illegal", "case {i}: {line}"),
            Some((after, report)) => {
                legal += 1;
                captures += report.summary.captures;
                truncated += report.summary.truncated as u32;
                assert_eq!(got["after"].as_str(), Some(after.as_str()), "case {i}");
                assert_eq!(
                    got["sown"].as_u64(),
                    Some(report.summary.sown as u64),
                    "case {i}"
                );
                assert_eq!(
                    got["truncated"].as_bool(),
                    Some(report.summary.truncated),
                    "case {i}"
                );
                let events = serde_json::to_value(&report.events).expect("events as JSON");
                assert_eq!(got["events"], events, "case {i}: {line}");
                let record = serde_json::json!({
                    "pit": report.summary.pit,
                    "sown": report.summary.sown,
                    "events": events,
                    "truncated": report.summary.truncated,
                });
                assert_eq!(
                    got["words"].as_str(),
                    Some(move_words(&record).as_str()),
                    "case {i}"
                );
            }
        }
    }
    assert!(legal > 5000, "{legal} legal moves");
    assert!(captures > 1000, "{captures} captures");
    assert!(truncated >= 2, "{truncated} truncated moves");
}

//! The perft tables of RULES.md, kept in `data/perft.tsv`.

use engine::{perft, Position, Preset, Rules};

struct Row {
    preset: Preset,
    width: usize,
    depth: u32,
    count: u64,
}

fn table() -> Vec<Row> {
    include_str!("data/perft.tsv")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            Row {
                preset: f[0].parse().expect("preset"),
                width: f[1].parse().expect("width"),
                depth: f[2].parse().expect("depth"),
                count: f[3].parse().expect("count"),
            }
        })
        .collect()
}

/// Checks every row of the table whose count is at most `limit`, one perft per
/// (preset, width) to the deepest such depth.
fn check(limit: u64) -> usize {
    let rows = table();
    let mut checked = 0;
    for preset in Preset::ALL {
        for width in [8, 9, 10, 12, 16] {
            let wanted: Vec<&Row> = rows
                .iter()
                .filter(|r| r.preset == preset && r.width == width && r.count <= limit)
                .collect();
            let Some(depth) = wanted.iter().map(|r| r.depth).max() else {
                continue;
            };
            let start = Position::start(Rules::new(preset, width).expect("valid"));
            let counts = perft(&start, depth);
            for row in wanted {
                assert_eq!(
                    counts[row.depth as usize - 1],
                    row.count,
                    "perft {preset} width {width} depth {}",
                    row.depth
                );
                checked += 1;
            }
        }
    }
    checked
}

#[test]
fn perft_table_small_depths() {
    // Up to half a million nodes per entry: every preset at width 8 to depth 6.
    let checked = check(600_000);
    assert!(checked >= 3 * 6 + 12 * 4, "only {checked} rows checked");
}

/// The whole table; run with `cargo test --release -p engine -- --ignored`.
#[test]
#[ignore]
fn perft_table_all_depths() {
    assert_eq!(check(u64::MAX), table().len());
}

#[test]
fn perft_of_a_finished_game_is_zero() {
    let pos: Position = "hus 8 1,1,1,1,1,1,1,1/1,1,1,1,1,1,1,1 2,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0 0"
        .parse()
        .expect("parses");
    assert_eq!(perft(&pos, 3), [0, 0, 0]);
}

#[test]
fn perft_of_a_two_ply_game() {
    // Each player has one back pit of 2: player 0 plays it, then player 1 plays theirs,
    // then player 0 is left with two single seeds and no move.
    let pos: Position = "hus 8 0,0,0,0,0,0,0,0/2,0,0,0,0,0,0,0 0,0,0,0,0,0,0,0/2,0,0,0,0,0,0,0 0"
        .parse()
        .expect("parses");
    assert_eq!(perft(&pos, 3), [1, 1, 0]);
}

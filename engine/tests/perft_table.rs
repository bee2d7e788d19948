//! The perft tables of RULES.md, kept in `data/perft.tsv`.

use engine::{perft, AnyPosition, Position, Preset, Rules};

use crate::reference;

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
        for width in [8, 9, 10, 12, 16, 24, 32] {
            let wanted: Vec<&Row> = rows
                .iter()
                .filter(|r| r.preset == preset && r.width == width && r.count <= limit)
                .collect();
            let Some(depth) = wanted.iter().map(|r| r.depth).max() else {
                continue;
            };
            let counts = match AnyPosition::start(Rules::new(preset, width).expect("valid")) {
                AnyPosition::Narrow(start) => perft(&start, depth),
                AnyPosition::Wide(start) => perft(&start, depth),
            };
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
    // Up to half a million nodes per entry: every preset at width 8 to depth 6, at
    // widths 24 and 32 to depth 3.
    let checked = check(600_000);
    assert!(
        checked >= 3 * 6 + 12 * 4 + 6 * 3,
        "only {checked} rows checked"
    );
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

/// The plain implementation's perft (its own end rules) from the start of every preset
/// at `width`, against the table's rows up to `depth`.
fn check_against_the_reference(width: usize, depth: usize) {
    let rows = table();
    for preset in Preset::ALL {
        let start = AnyPosition::start(Rules::new(preset, width).expect("valid"));
        let counts = reference::perft(&start.to_string(), depth);
        for (d, count) in counts.iter().enumerate() {
            let row = rows
                .iter()
                .find(|r| r.preset == preset && r.width == width && r.depth == d as u32 + 1)
                .expect("a row of the table");
            assert_eq!(*count, row.count, "{preset} width {width} depth {}", d + 1);
        }
    }
}

#[test]
fn the_wide_tables_agree_with_the_reference() {
    // Depth 3 is the first with captures; width 32 to depth 2 here, to depth 3 in the
    // ignored test below (the reference is slow in a debug build).
    check_against_the_reference(24, 3);
    check_against_the_reference(32, 2);
    // And on a narrow board, where the two implementations' end rules also meet.
    let start = Position::start(Rules::new(Preset::Hus, 8).expect("valid"));
    assert_eq!(reference::perft(&start.to_string(), 4), perft(&start, 4));
}

/// Run with `cargo test --release -p engine -- --ignored`.
#[test]
#[ignore]
fn the_wide_tables_agree_with_the_reference_deeper() {
    check_against_the_reference(24, 4);
    check_against_the_reference(32, 3);
}

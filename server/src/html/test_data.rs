//! Standings, sets and bot-supplied text that the pages' tests render (test builds
//! only).

use league::{
    BotStanding, Faults, HeadToHead, PairComparison, RatingView, RatingsView, Record3, Standings,
};

use crate::state::{FaultView, GameView, SetView};

pub(crate) const EVIL: &str = "<script>alert(1)</script><b>\"q\" 'x' &amp;";
pub(crate) const EVIL_ESCAPED: &str =
    "&lt;script&gt;alert(1)&lt;/script&gt;&lt;b&gt;&quot;q&quot; 'x' &amp;amp;";

pub(crate) fn rated(value: f64) -> Option<RatingView> {
    Some(RatingView {
        value,
        std_error: 10.0,
        low: value - 20.0,
        high: value + 20.0,
    })
}

pub(crate) fn bot(rank: usize, name: &str, rating: Option<RatingView>, points: u64) -> BotStanding {
    BotStanding {
        rank,
        name: name.into(),
        command: format!("run {EVIL}"),
        active: true,
        points,
        sets: Record3::default(),
        games: Record3::default(),
        faults: Faults::default(),
        moves: 0,
        mean_move_ms: None,
        rating,
    }
}

pub(crate) fn record(won: u64, drawn: u64, lost: u64) -> Record3 {
    Record3 {
        played: won + drawn + lost,
        won,
        drawn,
        lost,
    }
}

/// Three bots whose rank order (by points) is not their rating order: x first by
/// points, y first by rating; z unrated comes last.
pub(crate) fn standings() -> Standings {
    // y − x = 30 (−9 to 69): 0.74, but open.
    let pair = |a: &str, b: &str, los: f64| PairComparison {
        a: a.into(),
        b: b.into(),
        difference: RatingView {
            value: 30.0,
            std_error: 20.0,
            low: -9.0,
            high: 69.0,
        },
        los,
    };
    let h2h = |a: &str, b: &str, points: [u64; 2], games: Record3| HeadToHead {
        a: a.into(),
        b: b.into(),
        points,
        games,
        sets: Record3::default(),
    };
    Standings {
        league: Default::default(),
        progress: Default::default(),
        games_played: 9,
        first_mover: Default::default(),
        bots: vec![
            bot(1, "x", rated(1490.0), 5),
            bot(2, "y", rated(1510.0), 4),
            bot(3, "z", None, 0),
        ],
        ratings: Some(RatingsView {
            anchor: None,
            anchor_rating: 1500.0,
            confidence: 0.95,
            first_move_advantage: rated(0.0).expect("rated"),
            pairs: vec![pair("y", "x", 0.74)],
        }),
        ratings_error: None,
        pairs: Vec::new(),
        head_to_head: vec![
            h2h("x", "y", [3, 3], record(3, 0, 3)),
            h2h("x", "z", [2, 1], record(2, 0, 1)),
        ],
    }
}

pub(crate) fn set_view(games: usize) -> SetView {
    SetView {
        set: "r1-x-vs-y".into(),
        number: 1,
        pruned: false,
        round: 1,
        bots: ["x".into(), "y".into()],
        seed: 7,
        seed_str: "7".into(),
        points: [2, 1],
        winner: Some("x".into()),
        moves: [10, 10],
        mean_move_ms: [Some(1.0), None],
        log: league::LogPlace::file("r1-x-vs-y", league::LogForm::Plain),
        finished: Some("2026-12-04T23:43:10.770059104Z".into()),
        games: (0..games)
            .map(|i| GameView {
                game: i as u32 + 1,
                first: "x".into(),
                winner: if i == 1 { None } else { Some("x".into()) },
                points: [1, 0],
                reason: referee::GameEndReason::NoMoves,
                plies: 30,
                double: false,
            })
            .collect(),
        faults: vec![FaultView {
            game: 1,
            ply: 3,
            bot: "y".into(),
            kind: referee::FaultKind::Malformed,
            detail: EVIL.into(),
        }],
    }
}

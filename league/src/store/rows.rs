//! The row code both stores share: how seeds and faulted seats are written in a row,
//! what a schedule sync changes among the bots, and how the finished sets are put
//! together from their three tables. Each store only runs its own SQL around these.

use std::collections::{HashMap, HashSet};

use referee::{FaultKind, GameEndReason, Side};

use super::{
    BotEntry, FaultRow, FinishedQuery, FinishedSet, GameRow, RatingPoint, Requeued, SetOutcome,
    StoreError, SyncReport,
};
use crate::log_place::LogPlace;
use crate::schedule::SetKey;

/// Seeds are 63-bit (see `schedule::set_seed`), so they fit both databases' signed
/// 64-bit integers.
pub(super) fn seed_to_sql(seed: u64) -> i64 {
    (seed & (u64::MAX >> 1)) as i64
}

/// A side as stored: 0 (A) or 1 (B), the number logs write.
pub(super) fn side_to_sql(side: Side) -> i16 {
    side.index() as i16
}

/// The side of a stored seat; `None` for anything but 0 and 1.
pub(super) fn side_from_sql(seat: i64) -> Option<Side> {
    usize::try_from(seat).ok().and_then(Side::from_index)
}

/// A game's faulted sides as stored: `""`, `"0"`, `"1"` or `"0,1"`.
pub(super) fn seats_to_text(seats: &[Side]) -> String {
    seats
        .iter()
        .map(|s| s.index().to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The sides of [`seats_to_text`]; `None` for anything it never writes.
pub(super) fn seats_from_text(text: &str) -> Option<Vec<Side>> {
    if text.is_empty() {
        return Some(Vec::new());
    }
    text.split(',')
        .map(|s| s.parse::<usize>().ok().and_then(Side::from_index))
        .collect()
}

/// A game's end reason as stored (its wire name); `None` for any other text.
fn reason_from_text(text: &str) -> Option<GameEndReason> {
    GameEndReason::ALL.into_iter().find(|r| r.as_str() == text)
}

/// A change to the `bots` table that a sync makes.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum BotChange<'a> {
    /// A bot seen for the first time: inserted, active.
    Add(&'a BotEntry),
    /// A known bot in the file: its command written, active again.
    Keep(&'a BotEntry),
    /// An active bot no longer in the file: inactive.
    Retire(String),
}

/// What a sync does to the bots, from the bots the store knows (name: command, active)
/// and those of the file, with what the report says of them. Retired bots come in
/// name order.
pub(super) fn bot_changes<'a>(
    known: &HashMap<String, (String, bool)>,
    bots: &'a [BotEntry],
    report: &mut SyncReport,
) -> Vec<BotChange<'a>> {
    let mut changes = Vec::new();
    report.first = known.is_empty();
    for bot in bots {
        match known.get(&bot.name) {
            None => {
                report.added_bots.push(bot.name.clone());
                changes.push(BotChange::Add(bot));
            }
            Some((command, active)) => {
                if !active {
                    report.returned_bots.push(bot.name.clone());
                }
                if *command != bot.command {
                    report.changed_commands.push((
                        bot.name.clone(),
                        command.clone(),
                        bot.command.clone(),
                    ));
                }
                changes.push(BotChange::Keep(bot));
            }
        }
    }
    let named: HashSet<&String> = bots.iter().map(|b| &b.name).collect();
    let mut gone: Vec<&String> = known
        .iter()
        .filter(|(name, (_, active))| *active && !named.contains(name))
        .map(|(name, _)| name)
        .collect();
    gone.sort();
    for name in gone {
        report.removed_bots.push(name.clone());
        changes.push(BotChange::Retire(name.clone()));
    }
    changes
}

/// The history's rows (number, bot, rating, standard error), ordered by number, as
/// points.
pub(super) fn rating_points(
    rows: impl IntoIterator<Item = (i64, String, f64, f64)>,
) -> Vec<RatingPoint> {
    let mut points: Vec<RatingPoint> = Vec::new();
    for (number, bot, value, std_error) in rows {
        let number = number.max(0) as u64;
        match points.last_mut() {
            Some(p) if p.number == number => p.ratings.push((bot, value, std_error)),
            _ => points.push(RatingPoint {
                number,
                ratings: vec![(bot, value, std_error)],
            }),
        }
    }
    points
}

/// A value bound to a query's parameter.
pub(super) enum Param {
    Int(i64),
    Text(String),
}

/// The SQL of a finished-set query: `ids` selects the ids of the sets it takes, with
/// PostgreSQL's placeholders `$1`, `$2`, ... (SQLite's store writes them `?1`, `?2`,
/// ...), `order` is how the sets are listed (by completion number), and `params` the
/// placeholders' values.
pub(super) struct Selection {
    pub ids: String,
    pub order: &'static str,
    pub params: Vec<Param>,
}

/// The selection of `query`.
pub(super) fn selection(query: &FinishedQuery) -> Selection {
    let clamp = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    let limit = |n: usize| Param::Int(i64::try_from(n).unwrap_or(i64::MAX));
    match query {
        FinishedQuery::After { after, limit: n } => Selection {
            ids: "SELECT id FROM sets WHERE done_seq > $1 ORDER BY done_seq LIMIT $2".into(),
            order: "ASC",
            params: vec![Param::Int(clamp(*after)), limit(*n)],
        },
        FinishedQuery::Newest {
            bot: None,
            before,
            limit: n,
        } => Selection {
            ids: "SELECT id FROM sets WHERE done_seq < $1 ORDER BY done_seq DESC LIMIT $2".into(),
            order: "DESC",
            params: vec![Param::Int(before.map_or(i64::MAX, clamp)), limit(*n)],
        },
        // Each seat through its own index, then the newest of both.
        FinishedQuery::Newest {
            bot: Some(bot),
            before,
            limit: n,
        } => Selection {
            ids: "SELECT id FROM (
                      SELECT * FROM (SELECT id, done_seq FROM sets WHERE bot_a = $3 AND done_seq < $1
                                     ORDER BY done_seq DESC LIMIT $2) AS seat_a
                      UNION ALL
                      SELECT * FROM (SELECT id, done_seq FROM sets WHERE bot_b = $3 AND done_seq < $1
                                     ORDER BY done_seq DESC LIMIT $2) AS seat_b
                  ) AS either ORDER BY done_seq DESC LIMIT $2"
                .into(),
            order: "DESC",
            params: vec![
                Param::Int(before.map_or(i64::MAX, clamp)),
                limit(*n),
                Param::Text(bot.clone()),
            ],
        },
        // Each seating through the first seat's index, then the newest of both.
        FinishedQuery::Between {
            a,
            b,
            before,
            limit: n,
        } => Selection {
            ids: "SELECT id FROM (
                      SELECT * FROM (SELECT id, done_seq FROM sets WHERE bot_a = $3 AND bot_b = $4 AND done_seq < $1
                                     ORDER BY done_seq DESC LIMIT $2) AS ab
                      UNION ALL
                      SELECT * FROM (SELECT id, done_seq FROM sets WHERE bot_a = $4 AND bot_b = $3 AND done_seq < $1
                                     ORDER BY done_seq DESC LIMIT $2) AS ba
                  ) AS either ORDER BY done_seq DESC LIMIT $2"
                .into(),
            order: "DESC",
            params: vec![
                Param::Int(before.map_or(i64::MAX, clamp)),
                limit(*n),
                Param::Text(a.clone()),
                Param::Text(b.clone()),
            ],
        },
        // From the faults (far fewer than the sets), each joined to its set.
        FinishedQuery::Faulted {
            bot,
            before,
            limit: n,
        } => Selection {
            ids: "SELECT s.id FROM faults f JOIN sets s ON s.id = f.set_id
                  WHERE s.done_seq < $1
                    AND ((s.bot_a = $3 AND f.bot = 0) OR (s.bot_b = $3 AND f.bot = 1))
                  GROUP BY s.id, s.done_seq
                  ORDER BY s.done_seq DESC LIMIT $2"
                .into(),
            order: "DESC",
            params: vec![
                Param::Int(before.map_or(i64::MAX, clamp)),
                limit(*n),
                Param::Text(bot.clone()),
            ],
        },
        FinishedQuery::Key(key) => Selection {
            ids: "SELECT id FROM sets WHERE round = CAST($1 AS BIGINT) AND bot_a = $2 AND bot_b = $3 AND done_seq IS NOT NULL"
                .into(),
            order: "ASC",
            params: vec![
                Param::Int(i64::from(key.round)),
                Param::Text(key.a.clone()),
                Param::Text(key.b.clone()),
            ],
        },
    }
}

/// A finished set's row as both stores read it, before its values are checked: sides
/// as stored numbers, the log as stored text.
pub(super) struct SetRowText {
    /// The store's number for the set.
    pub id: i64,
    /// Its completion number.
    pub seq: u64,
    /// Round and seats.
    pub key: SetKey,
    /// Its seed.
    pub seed: u64,
    /// Points of A and B.
    pub points: [u32; 2],
    /// The winning seat, as stored.
    pub winner: Option<i64>,
    /// Moves of A and B.
    pub moves: [u64; 2],
    /// Milliseconds of A and B.
    pub move_ms: [f64; 2],
    /// The log, as stored.
    pub log: Option<String>,
    /// Its log was pruned.
    pub pruned: bool,
    /// When its result was recorded (RFC 3339, UTC), as stored.
    pub finished: Option<String>,
}

/// A game's row as both stores read it, before its values are checked.
pub(super) struct GameRowText {
    /// The set's id.
    pub set_id: i64,
    /// Games count from 1.
    pub game: u32,
    /// The first mover's seat, as stored.
    pub first: i64,
    /// The winner's seat, as stored.
    pub winner: Option<i64>,
    /// Points of A and B.
    pub points: [u32; 2],
    /// The end reason, as stored.
    pub reason: String,
    /// Moves played.
    pub plies: u32,
    /// The loser had no seeds at all.
    pub double: bool,
    /// The faulted seats, as stored ([`seats_to_text`]).
    pub faulted: String,
}

/// A fault's row as both stores read it, before its values are checked.
pub(super) struct FaultRowText {
    /// The set's id.
    pub set_id: i64,
    /// The game it cost.
    pub game: u32,
    /// The ply.
    pub ply: u32,
    /// The seat, as stored.
    pub bot: i64,
    /// The kind, as stored.
    pub kind: String,
    /// In plain words.
    pub detail: String,
}

/// The error of a row that holds a value this code never writes.
fn invalid(place: &str, what: String) -> StoreError {
    StoreError::Invalid {
        place: place.to_string(),
        what,
    }
}

impl SetRowText {
    /// The set, its values checked (without games and faults), with its id and number.
    fn check(self, place: &str) -> Result<(i64, u64, FinishedSet), StoreError> {
        let id = self.id;
        let winner =
            match self.winner {
                None => None,
                Some(seat) => Some(side_from_sql(seat).ok_or_else(|| {
                    invalid(place, format!("set {id} has the winning seat {seat}"))
                })?),
            };
        let text = self.log.unwrap_or_default();
        let log = LogPlace::parse(&text)
            .ok_or_else(|| invalid(place, format!("set {id} has the log {text:?}")))?;
        let outcome = SetOutcome {
            points: self.points,
            winner,
            moves: self.moves,
            move_ms: self.move_ms,
            ..SetOutcome::new(log)
        };
        let set = FinishedSet {
            key: self.key,
            seed: self.seed,
            outcome,
            pruned: self.pruned,
            finished: self.finished,
        };
        Ok((id, self.seq, set))
    }
}

impl GameRowText {
    /// The game, its values checked.
    fn check(self, place: &str) -> Result<GameRow, StoreError> {
        let (set, game) = (self.set_id, self.game);
        let bad = |what: String| invalid(place, format!("game {game} of set {set} has {what}"));
        let side = |seat: i64, what: &str| {
            side_from_sql(seat).ok_or_else(|| bad(format!("the {what} seat {seat}")))
        };
        let winner = match self.winner {
            None => None,
            Some(seat) => Some(side(seat, "winning")?),
        };
        Ok(GameRow {
            game,
            first: side(self.first, "first")?,
            winner,
            points: self.points,
            reason: reason_from_text(&self.reason)
                .ok_or_else(|| bad(format!("the end reason {:?}", self.reason)))?,
            plies: self.plies,
            double: self.double,
            faulted: seats_from_text(&self.faulted)
                .ok_or_else(|| bad(format!("faulted seats {:?}", self.faulted)))?,
        })
    }
}

impl FaultRowText {
    /// The fault, its values checked.
    fn check(self, place: &str) -> Result<FaultRow, StoreError> {
        let (set, game) = (self.set_id, self.game);
        let bad = |what: String| {
            invalid(
                place,
                format!("a fault in game {game} of set {set} has {what}"),
            )
        };
        Ok(FaultRow {
            game,
            ply: self.ply,
            bot: side_from_sql(self.bot).ok_or_else(|| bad(format!("the seat {}", self.bot)))?,
            kind: FaultKind::from_wire(&self.kind)
                .ok_or_else(|| bad(format!("the kind {:?}", self.kind)))?,
            detail: self.detail,
        })
    }
}

/// The logs of [`super::Store::prune_logs`] as stored, checked; a NULL log (a set
/// with none) has nothing to delete.
pub(super) fn stored_logs(
    place: &str,
    logs: Vec<Option<String>>,
) -> Result<Vec<LogPlace>, StoreError> {
    logs.into_iter()
        .flatten()
        .map(|text| {
            LogPlace::parse(&text)
                .ok_or_else(|| invalid(place, format!("a finished set has the log {text:?}")))
        })
        .collect()
}

/// The running sets put back ([`super::Store::requeue_running`]) from their keys and
/// logs as stored, checked.
pub(super) fn requeued(
    place: &str,
    rows: Vec<(SetKey, Option<String>)>,
) -> Result<Vec<Requeued>, StoreError> {
    rows.into_iter()
        .map(|(key, log)| {
            let log = match log {
                None => None,
                Some(text) => Some(LogPlace::parse(&text).ok_or_else(|| {
                    invalid(place, format!("the running set {key} has the log {text:?}"))
                })?),
            };
            Ok(Requeued { key, log })
        })
        .collect()
}

/// The finished sets' rows as both stores read them, not yet checked.
pub(super) struct FinishedRows {
    /// The sets, in the order asked.
    pub sets: Vec<SetRowText>,
    /// Their games, by set and game.
    pub games: Vec<GameRowText>,
    /// Their faults, by set, in order.
    pub faults: Vec<FaultRowText>,
}

impl FinishedRows {
    /// Each set with its games and faults, every value checked once, here: a row that
    /// holds something the store never writes (a seat other than 0 and 1, an unknown
    /// reason or fault kind, a log that names no place) makes the store invalid.
    pub fn assemble(self, place: &str) -> Result<Vec<(u64, FinishedSet)>, StoreError> {
        let mut index: HashMap<i64, usize> = HashMap::with_capacity(self.sets.len());
        let mut out: Vec<(u64, FinishedSet)> = Vec::with_capacity(self.sets.len());
        for row in self.sets {
            let (id, seq, set) = row.check(place)?;
            index.insert(id, out.len());
            out.push((seq, set));
        }
        for row in self.games {
            let set_id = row.set_id;
            let game = row.check(place)?;
            if let Some(&i) = index.get(&set_id) {
                out[i].1.outcome.games.push(game);
            }
        }
        for row in self.faults {
            let set_id = row.set_id;
            let fault = row.check(place)?;
            if let Some(&i) = index.get(&set_id) {
                out[i].1.outcome.faults.push(fault);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seats_round_trip_and_nothing_else_is_read() {
        for (seats, text) in [
            (vec![], ""),
            (vec![Side::A], "0"),
            (vec![Side::B], "1"),
            (vec![Side::A, Side::B], "0,1"),
        ] {
            assert_eq!(seats_to_text(&seats), text);
            assert_eq!(seats_from_text(text), Some(seats));
        }
        assert_eq!((side_to_sql(Side::A), side_to_sql(Side::B)), (0, 1));
        assert_eq!(side_from_sql(0), Some(Side::A));
        assert_eq!(side_from_sql(1), Some(Side::B));
        assert_eq!(side_from_sql(2), None);
        assert_eq!(side_from_sql(-1), None);
        assert_eq!(seats_from_text("2"), None);
        assert_eq!(seats_from_text("0,"), None);
        assert_eq!(seats_from_text("x"), None);
    }

    /// One finished set's rows as a store reads them: set 7, two games, one fault.
    fn rows() -> FinishedRows {
        let game = |game: u32, first: i64, winner: Option<i64>, reason: &str| GameRowText {
            set_id: 7,
            game,
            first,
            winner,
            points: [1, 0],
            reason: reason.to_string(),
            plies: 30,
            double: false,
            faulted: String::new(),
        };
        FinishedRows {
            sets: vec![SetRowText {
                id: 7,
                seq: 3,
                key: SetKey {
                    round: 1,
                    a: "x".into(),
                    b: "y".into(),
                },
                seed: 9,
                points: [1, 1],
                winner: None,
                moves: [20, 19],
                move_ms: [2.0, 3.0],
                log: Some("logs/r1-x-vs-y.jsonl.zst".into()),
                pruned: false,
                finished: None,
            }],
            games: vec![
                game(1, 0, Some(0), "no-moves"),
                game(2, 1, Some(1), "time-out"),
            ],
            faults: vec![FaultRowText {
                set_id: 7,
                game: 2,
                ply: 5,
                bot: 0,
                kind: "time-out".into(),
                detail: "late".into(),
            }],
        }
    }

    fn what(result: Result<Vec<(u64, FinishedSet)>, StoreError>) -> String {
        match result {
            Err(StoreError::Invalid { place, what }) => {
                assert_eq!(place, "the store");
                what
            }
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    #[test]
    fn rows_are_read_into_sides_reasons_kinds_and_a_log_place() {
        let sets = rows().assemble("the store").expect("valid rows");
        assert_eq!(sets.len(), 1);
        let (seq, set) = &sets[0];
        assert_eq!(*seq, 3);
        let o = &set.outcome;
        assert_eq!(o.winner, None);
        assert_eq!(
            o.log,
            LogPlace::parse("logs/r1-x-vs-y.jsonl.zst").expect("a log")
        );
        assert_eq!(
            o.games
                .iter()
                .map(|g| (g.first, g.winner, g.reason))
                .collect::<Vec<_>>(),
            [
                (Side::A, Some(Side::A), GameEndReason::NoMoves),
                (
                    Side::B,
                    Some(Side::B),
                    GameEndReason::Fault(FaultKind::TimeOut)
                ),
            ]
        );
        assert_eq!(
            o.faults.iter().map(|f| (f.bot, f.kind)).collect::<Vec<_>>(),
            [(Side::A, FaultKind::TimeOut)]
        );
    }

    /// A seat other than 0 and 1 is refused wherever a row holds one: never read as B.
    #[test]
    fn a_row_with_seat_2_is_invalid() {
        let mut r = rows();
        r.sets[0].winner = Some(2);
        assert_eq!(
            what(r.assemble("the store")),
            "set 7 has the winning seat 2"
        );
        let mut r = rows();
        r.games[1].first = 2;
        assert_eq!(
            what(r.assemble("the store")),
            "game 2 of set 7 has the first seat 2"
        );
        let mut r = rows();
        r.games[0].winner = Some(2);
        assert_eq!(
            what(r.assemble("the store")),
            "game 1 of set 7 has the winning seat 2"
        );
        let mut r = rows();
        r.games[0].faulted = "0,2".into();
        assert_eq!(
            what(r.assemble("the store")),
            "game 1 of set 7 has faulted seats \"0,2\""
        );
        let mut r = rows();
        r.faults[0].bot = 2;
        assert_eq!(
            what(r.assemble("the store")),
            "a fault in game 2 of set 7 has the seat 2"
        );
        let mut r = rows();
        r.faults[0].bot = -1;
        assert_eq!(
            what(r.assemble("the store")),
            "a fault in game 2 of set 7 has the seat -1"
        );
    }

    #[test]
    fn a_row_with_an_unknown_kind_reason_or_log_is_invalid() {
        let mut r = rows();
        r.faults[0].kind = "timeout".into();
        assert_eq!(
            what(r.assemble("the store")),
            "a fault in game 2 of set 7 has the kind \"timeout\""
        );
        let mut r = rows();
        r.games[1].reason = "resigned".into();
        assert_eq!(
            what(r.assemble("the store")),
            "game 2 of set 7 has the end reason \"resigned\""
        );
        let mut r = rows();
        r.sets[0].log = Some("elsewhere/r1-x-vs-y.jsonl".into());
        assert_eq!(
            what(r.assemble("the store")),
            "set 7 has the log \"elsewhere/r1-x-vs-y.jsonl\""
        );
        let mut r = rows();
        r.sets[0].log = None;
        assert_eq!(what(r.assemble("the store")), "set 7 has the log \"\"");
        assert!(matches!(
            stored_logs("the store", vec![Some("store:x".into())]),
            Err(StoreError::Invalid { .. })
        ));
        assert_eq!(
            stored_logs("the store", vec![None, Some("store:4".into())]).expect("logs"),
            [LogPlace::Stored(4)]
        );
    }

    #[test]
    fn a_seed_keeps_its_63_bits() {
        assert_eq!(seed_to_sql(u64::MAX), i64::MAX);
        assert_eq!(seed_to_sql(12345), 12345);
    }

    #[test]
    fn bot_changes_report_added_returned_changed_and_retired_bots() {
        let known: HashMap<String, (String, bool)> = [
            ("a", ("./a", true)),
            ("b", ("./b", false)),
            ("c", ("./c", true)),
            ("d", ("./d", true)),
            ("e", ("./e", false)),
        ]
        .into_iter()
        .map(|(n, (c, act))| (n.to_string(), (c.to_string(), act)))
        .collect();
        let bots: Vec<BotEntry> = [("a", "./a2"), ("b", "./b"), ("f", "./f")]
            .into_iter()
            .map(|(n, c)| BotEntry {
                name: n.to_string(),
                command: c.to_string(),
            })
            .collect();
        let mut report = SyncReport::default();
        let changes = bot_changes(&known, &bots, &mut report);
        assert_eq!(
            changes,
            vec![
                BotChange::Keep(&bots[0]),
                BotChange::Keep(&bots[1]),
                BotChange::Add(&bots[2]),
                BotChange::Retire("c".to_string()),
                BotChange::Retire("d".to_string()),
            ]
        );
        assert!(!report.first);
        assert_eq!(report.added_bots, vec!["f"]);
        assert_eq!(report.returned_bots, vec!["b"]);
        assert_eq!(
            report.changed_commands,
            vec![("a".to_string(), "./a".to_string(), "./a2".to_string())]
        );
        assert_eq!(report.removed_bots, vec!["c", "d"]);
    }
}

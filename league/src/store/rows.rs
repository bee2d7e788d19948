//! The row code both stores share: how seeds and faulted seats are written in a row,
//! what a schedule sync changes among the bots, and how the finished sets are put
//! together from their three tables. Each store only runs its own SQL around these.

use std::collections::{HashMap, HashSet};

use super::{
    BotEntry, FaultRow, FinishedQuery, FinishedSet, GameRow, RatingPoint, StoreError, SyncReport,
};

/// Seeds are 63-bit (see `schedule::set_seed`), so they fit both databases' signed
/// 64-bit integers.
pub(super) fn seed_to_sql(seed: u64) -> i64 {
    (seed & (u64::MAX >> 1)) as i64
}

/// A game's faulted seats as stored: `""`, `"0"`, `"1"` or `"0,1"`.
pub(super) fn seats_to_text(seats: &[u8]) -> String {
    seats
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The seats of [`seats_to_text`]; `None` for anything it never writes.
pub(super) fn seats_from_text(text: &str) -> Option<Vec<u8>> {
    if text.is_empty() {
        return Some(Vec::new());
    }
    text.split(',')
        .map(|s| s.parse().ok().filter(|&b: &u8| b < 2))
        .collect()
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

/// The finished sets' rows, each with its set's id, as both stores read them (a
/// game's faulted seats still as stored text).
pub(super) struct FinishedRows {
    /// The sets, in the order asked, without games and faults, each with its id and
    /// completion number.
    pub sets: Vec<(i64, u64, FinishedSet)>,
    /// Their games, by set and game.
    pub games: Vec<(i64, GameRow, String)>,
    /// Their faults, by set, in order.
    pub faults: Vec<(i64, FaultRow)>,
}

impl FinishedRows {
    /// Each set with its games and faults; a game whose faulted seats are not what the
    /// store writes makes the store invalid.
    pub fn assemble(self, place: &str) -> Result<Vec<(u64, FinishedSet)>, StoreError> {
        let index: HashMap<i64, usize> = self
            .sets
            .iter()
            .enumerate()
            .map(|(i, (id, _, _))| (*id, i))
            .collect();
        let mut out: Vec<(u64, FinishedSet)> =
            self.sets.into_iter().map(|(_, seq, s)| (seq, s)).collect();
        for (set_id, mut game, faulted) in self.games {
            game.faulted = seats_from_text(&faulted).ok_or_else(|| StoreError::Invalid {
                place: place.to_string(),
                what: format!(
                    "game {} of set {set_id} has faulted seats {faulted:?}",
                    game.game
                ),
            })?;
            if let Some(&i) = index.get(&set_id) {
                out[i].1.outcome.games.push(game);
            }
        }
        for (set_id, fault) in self.faults {
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
        for seats in [vec![], vec![0], vec![1], vec![0, 1]] {
            assert_eq!(seats_from_text(&seats_to_text(&seats)), Some(seats));
        }
        assert_eq!(seats_from_text("2"), None);
        assert_eq!(seats_from_text("0,"), None);
        assert_eq!(seats_from_text("x"), None);
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

//! Checking a log against the rules engine, one record at a time (LOGS.md, "Checking a
//! log"). The [`Verifier`] holds what the log has established so far (the header, the
//! game in progress, the set's running totals) and refuses the first record that
//! disagrees with the rules or with the records before it, saying what differs.

use std::fmt::Write as _;

use engine::{AnyPosition, Board, EndReason, Game, PlayError, Player, Rules, SetScore};

use crate::records::{
    Fault, FaultKind, GameEnd, GameEndReason, GameStart, Header, MoveRecord, Ready, Record,
    Restart, SetEnd, Shutdown, Stage, LOG_VERSION,
};

use super::text;
use crate::config::opening_of;
use crate::set::team_orders;
use crate::side::{BySide, Seating, Side};
use crate::sprt::{sprt_of_record, SprtTally};

/// The first disagreement: the record's line number and what differs, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Corrupt {
    pub line: u64,
    pub message: String,
}

/// How the log has ended so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// No `set-end` or `aborted` yet.
    Open,
    SetEnd,
    /// With the record's reason.
    Aborted(String),
}

/// What a record did, beyond what the record itself says, for those who show the log.
pub enum Checked {
    /// A game started from this position.
    Started(AnyPosition),
    /// A move was played: the position after it (the engine's, equal to the log's), and
    /// the end of the game if the rules ended it there.
    Moved(AnyPosition, Option<engine::GameEnd>),
    Other,
}

/// The game in progress.
struct InGame {
    number: u32,
    /// Which side plays which player: `first` is the player to move at the start.
    seating: Seating,
    game: Game<AnyPosition>,
    /// Faults recorded in this game, in order: (bot, kind); a bot is a side.
    faults: Vec<(Side, FaultKind)>,
    /// Team sets: the members that faulted in this game, (side, member).
    mates_faulted: Vec<(Side, usize)>,
    /// Team sets: each side's order of members in this game.
    order: Option<BySide<Vec<usize>>>,
    /// Moves played by each side in this game.
    side_moves: BySide<usize>,
}

/// Re-plays a log record by record; see the module documentation.
pub struct Verifier {
    header: Option<Header>,
    rules: Rules,
    game: Option<InGame>,
    /// The number of the last game started (0 before the first).
    last_game: u32,
    /// Games ended (`game-end` records).
    ended: u32,
    score: SetScore,
    faults: BySide<u32>,
    moves: u64,
    /// With `early_stop`: the game after which the set was decided.
    decided_after: Option<u32>,
    /// The header's openings, checked.
    openings: Vec<AnyPosition>,
    /// The header's SPRT and the pairs so far.
    sprt: Option<SprtTally>,
    /// With an SPRT: the game after which it decided.
    sprt_decided_after: Option<u32>,
    /// Whether games go in pairs with the first mover swapped (openings or an SPRT).
    paired: bool,
    /// The first mover of the last game started.
    last_first: Side,
    ending: Ending,
    /// The bots (side, member) whose ready records have been seen before game 1.
    ready_seen: Vec<(Side, Option<usize>)>,
    /// Team sets: the number of members of each team (`header.teams`).
    team_sizes: Option<BySide<usize>>,
    /// Records checked, of every type.
    records: u64,
    /// Scratch for the engine's notation, reused for every move.
    notation: String,
}

type Check = Result<Checked, String>;

impl Verifier {
    pub fn new() -> Verifier {
        Verifier {
            header: None,
            rules: Rules::default(),
            game: None,
            last_game: 0,
            ended: 0,
            score: SetScore::default(),
            faults: BySide::default(),
            moves: 0,
            decided_after: None,
            openings: Vec::new(),
            sprt: None,
            sprt_decided_after: None,
            paired: false,
            last_first: Side::A,
            ending: Ending::Open,
            ready_seen: Vec::new(),
            team_sizes: None,
            records: 0,
            notation: String::new(),
        }
    }

    /// The header, once line 1 has been checked, with the names of the set's first
    /// `ready` records filled in where it has none (it is written before the bots
    /// start).
    pub fn header(&self) -> Option<&Header> {
        self.header.as_ref()
    }

    pub fn rules(&self) -> Rules {
        self.rules
    }

    /// Records checked so far, of every type.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Games that have a checked `game-start`.
    pub fn games_started(&self) -> u32 {
        self.last_game
    }

    /// Games that have a checked `game-end`.
    pub fn games_ended(&self) -> u32 {
        self.ended
    }

    /// Moves checked, in all games.
    pub fn moves(&self) -> u64 {
        self.moves
    }

    /// Points, wins and draws of the games ended so far.
    pub fn score(&self) -> SetScore {
        self.score
    }

    /// Fault records per bot so far.
    pub fn faults(&self) -> BySide<u32> {
        self.faults
    }

    pub fn ending(&self) -> &Ending {
        &self.ending
    }

    /// The game in progress: its number and the moves played in it.
    pub fn in_progress(&self) -> Option<(u32, u32)> {
        self.game.as_ref().map(|g| (g.number, g.game.plies()))
    }

    /// Checks one record, read from line `line`. On success the verifier has taken it
    /// in; on failure it is unchanged in every way that matters (the log is corrupt).
    pub fn check(&mut self, line: u64, record: &Record) -> Result<Checked, Corrupt> {
        let checked = self
            .check_record(record)
            .map_err(|message| Corrupt { line, message })?;
        self.records += 1;
        Ok(checked)
    }

    fn check_record(&mut self, record: &Record) -> Check {
        match &self.ending {
            Ending::Open => {}
            Ending::SetEnd => return Err(format!("a {} record after set-end", kind(record))),
            Ending::Aborted(_) => return Err(format!("a {} record after aborted", kind(record))),
        }
        match record {
            Record::Header(h) if self.header.is_none() => self.check_header(h),
            Record::Header(_) => Err("a second header".to_string()),
            _ if self.header.is_none() => Err("the log does not start with a header".to_string()),
            Record::Ready(r) => self.ready(r),
            Record::Restart(r) => self.restart(r),
            Record::Shutdown(s) => self.shutdown(s),
            Record::GameStart(g) => self.game_start(g),
            Record::Move(m) => self.play(m),
            Record::Fault(f) => self.fault(f),
            Record::GameEnd(e) => self.game_end(e),
            Record::SetEnd(e) => self.set_end(e),
            Record::Aborted(a) => {
                self.ending = Ending::Aborted(a.reason.clone());
                Ok(Checked::Other)
            }
        }
    }

    fn check_header(&mut self, h: &Header) -> Check {
        if h.log_version != LOG_VERSION {
            return Err(format!(
                "log_version {} (this hus reads version {LOG_VERSION})",
                h.log_version
            ));
        }
        self.rules = Rules::new(h.rules.preset, h.rules.width as usize)
            .map_err(|e| format!("header: {e}"))?;
        for (k, text) in h.openings.iter().enumerate() {
            let opening: AnyPosition = text.parse().map_err(|e| {
                format!(
                    "header: opening {} {} is not a position: {e}",
                    k + 1,
                    json(text)
                )
            })?;
            if opening.rules() != self.rules {
                return Err(format!(
                    "header: opening {} {} is a position of {}, but the set plays {}",
                    k + 1,
                    json(text),
                    opening.rules(),
                    self.rules
                ));
            }
            if opening.legal_moves().is_empty() {
                return Err(format!(
                    "header: opening {} {} is a finished game: player {} to move has no move",
                    k + 1,
                    json(text),
                    opening.to_move()
                ));
            }
            self.openings.push(opening);
        }
        if let Some(r) = &h.sprt {
            let sprt = sprt_of_record(r).map_err(|e| format!("header: sprt: {e}"))?;
            self.sprt = Some(SprtTally::new(sprt));
        }
        for (b, bot) in h.bots.iter().enumerate() {
            if let Some(problem) = bot.version.as_ref().and_then(|v| v.problem()) {
                return Err(format!("header: bots[{b}].version: {problem}"));
            }
        }
        self.paired = !self.openings.is_empty() || self.sprt.is_some();
        if let Some(teams) = &h.teams {
            for (b, t) in teams.iter().enumerate() {
                if t.members.is_empty() {
                    return Err(format!(
                        "header: team {} ({}) has no members",
                        b,
                        json(&t.name)
                    ));
                }
            }
            self.team_sizes = Some(teams.each_ref().map(|t| t.members.len()));
        }
        self.header = Some(h.clone());
        Ok(Checked::Other)
    }

    fn ready(&mut self, r: &Ready) -> Check {
        if let Some(g) = &self.game {
            return Err(format!("a ready record inside game {}", g.number));
        }
        if !r.ms.is_finite() || r.ms < 0.0 {
            return Err(format!(
                "ready of bot {}: time {} ms is negative",
                r.bot, r.ms
            ));
        }
        self.check_mate(r.bot, r.mate, "ready")?;
        // The header of hus 0.1.0 is written before the bots start, and its names are
        // null (a person's seat of `hus play` has its name up front): the first ready
        // records name the bots, and are taken into the header, for every reader of
        // `header()`. A header written after the first handshake (earlier logs) names
        // what each bot announced there, which is what the first ready records repeat.
        if self.last_game == 0 && !self.ready_seen.contains(&(r.bot, r.mate)) {
            self.ready_seen.push((r.bot, r.mate));
            let named = self
                .header
                .as_mut()
                .and_then(|h| match (&mut h.teams, r.mate) {
                    (Some(teams), Some(i)) => {
                        teams[r.bot].members.get_mut(i).map(|m| &mut m.announced)
                    }
                    _ => Some(&mut h.bots[r.bot].name),
                });
            if let Some(said) = named {
                match said {
                    None => said.clone_from(&r.name),
                    Some(_) if *said == r.name => {}
                    Some(_) => {
                        return Err(format!(
                            "ready of bot {}: the name {} differs from the header's {}",
                            r.bot,
                            json(&r.name),
                            json(&said)
                        ))
                    }
                }
            }
        }
        Ok(Checked::Other)
    }

    fn restart(&mut self, r: &Restart) -> Check {
        self.check_mate(r.bot, r.mate, "restart")?;
        if let Some(g) = &self.game {
            return Err(format!("a restart record inside game {}", g.number));
        }
        if r.game != self.last_game + 1 {
            return Err(format!(
                "restart of bot {} for game {}, but the next game is {}",
                r.bot,
                r.game,
                self.last_game + 1
            ));
        }
        Ok(Checked::Other)
    }

    fn shutdown(&mut self, s: &Shutdown) -> Check {
        self.check_mate(s.bot, s.mate, "shutdown")?;
        // `stopped_by` is a `StoppedBy`: a value the referee does not write was refused
        // when the line was read.
        Ok(Checked::Other)
    }

    fn game_start(&mut self, g: &GameStart) -> Check {
        if let Some(current) = &self.game {
            return Err(format!(
                "game-start of game {} while game {} has no game-end",
                g.game, current.number
            ));
        }
        let expected = self.last_game + 1;
        if g.game != expected {
            return Err(format!(
                "game-start of game {}, but the next game is {expected} (games are numbered from 1)",
                g.game
            ));
        }
        let games = self.header.as_ref().map_or(0, |h| h.games);
        if g.game > games {
            return Err(format!(
                "game-start of game {}, but the header says the set has {games} games",
                g.game
            ));
        }
        if let Some(after) = self.decided_after {
            return Err(format!(
                "game-start of game {}, but the set was decided after game {after} and early_stop is on",
                g.game
            ));
        }
        if let Some(after) = self.sprt_decided_after {
            return Err(format!(
                "game-start of game {}, but the set's SPRT decided after game {after}",
                g.game
            ));
        }
        // The second game of a pair goes to the other bot.
        if self.paired && g.game.is_multiple_of(2) && g.first == self.last_first {
            return Err(format!(
                "game-start of game {}: first is bot {}, as in game {}, but the games of a pair \
                 (openings or an SPRT) swap the first mover",
                g.game,
                g.first,
                g.game - 1
            ));
        }
        let start = match opening_of(&self.openings, g.game) {
            Some(opening) => *opening,
            None => AnyPosition::start(self.rules),
        };
        self.notation.clear();
        let _ = write!(self.notation, "{start}");
        if g.position != self.notation {
            let expected = match self.openings.len() {
                0 => format!("the rules ({}) give", self.rules),
                n => format!(
                    "the header gives it opening {} of {n}",
                    (g.game as usize - 1) / 2 % n + 1
                ),
            };
            return Err(format!(
                "game-start of game {}: the log says starting position {} but {expected} {}{}",
                g.game,
                json(&g.position),
                json(&self.notation),
                position_difference(&g.position, &start)
            ));
        }
        match (self.team_sizes, &g.order) {
            (None, None) => {}
            (None, Some(_)) => {
                return Err(format!(
                    "game-start of game {}: an order of team members, but the header has no teams",
                    g.game
                ))
            }
            (Some(_), None) => {
                return Err(format!(
                    "game-start of game {}: no order of team members in a team set",
                    g.game
                ))
            }
            (Some(sizes), Some(order)) => {
                let seed = self.header.as_ref().map_or(0, |h| h.seed);
                let drawn = team_orders(seed, g.game, sizes);
                if *order != drawn {
                    return Err(format!(
                        "game-start of game {}: the log says order {:?} but the lot of \
                         seed {seed} draws {:?}",
                        g.game,
                        order.as_array(),
                        drawn.as_array()
                    ));
                }
            }
        }
        self.last_game = g.game;
        self.last_first = g.first;
        self.game = Some(InGame {
            number: g.game,
            seating: Seating::new(g.first, start.to_move()),
            game: Game::new(start),
            faults: Vec::new(),
            mates_faulted: Vec::new(),
            order: g.order.clone(),
            side_moves: BySide::default(),
        });
        Ok(Checked::Started(start))
    }

    fn current(&mut self, what: &str, game: u32) -> Result<&mut InGame, String> {
        match &mut self.game {
            Some(g) if g.number != game => Err(format!(
                "{what} of game {game} while game {} is in progress",
                g.number
            )),
            Some(g) => Ok(g),
            None => Err(format!("{what} of game {game} outside any game")),
        }
    }

    fn play(&mut self, m: &MoveRecord) -> Check {
        let mut notation = std::mem::take(&mut self.notation);
        let result = self.play_inner(m, &mut notation);
        self.notation = notation;
        result
    }

    fn play_inner(&mut self, m: &MoveRecord, notation: &mut String) -> Check {
        // Built only for a message: this runs for every move of the log.
        let at = At(m.game, m.ply);
        let g = self.current("move", m.game)?;
        if let Some(&(bot, ref kind)) = g.faults.first() {
            return Err(format!(
                "{at}: a move after the {kind} fault of bot {bot} that ended this game"
            ));
        }
        if let Some(end) = g.game.end() {
            return Err(format!(
                "{at}: the game was already over by the rules ({} after {} plies)",
                end.reason,
                g.game.plies()
            ));
        }
        if m.ply != g.game.plies() {
            return Err(format!(
                "{at}: the log says ply {} but {} moves have been played in this game",
                m.ply,
                g.game.plies()
            ));
        }
        let mover = g.game.position().to_move();
        if m.player != mover {
            return Err(format!(
                "{at}: the log says player {} moved but it is player {}'s turn",
                m.player,
                mover.index()
            ));
        }
        if m.bot != g.seating.side(mover) {
            return Err(format!(
                "{at}: the log says bot {} moved but player {} is bot {} in this game",
                m.bot,
                mover.index(),
                g.seating.side(mover)
            ));
        }
        // In a team set, the member whose turn it is by the game's order.
        let due = g.order.as_ref().map(|o| {
            let side = &o[m.bot];
            side[g.side_moves[m.bot] % side.len().max(1)]
        });
        if m.mate != due {
            return Err(format!(
                "{at}: the log says {} of bot {} moved but by the game's order it is {}'s turn",
                member(m.mate),
                m.bot,
                member(due)
            ));
        }
        if !m.ms.is_finite() || m.ms < 0.0 {
            return Err(format!("{at}: time {} ms is negative", m.ms));
        }
        let before = *g.game.position();
        let report = match g.game.play(m.pit as usize) {
            Ok(report) => report,
            Err(PlayError::Illegal(e)) => {
                return Err(format!("{at}: pit {} is not a legal move: {e}", m.pit))
            }
            Err(PlayError::GameOver) => return Err(format!("{at}: the game is over")),
        };
        let after = *g.game.position();
        notation.clear();
        let _ = write!(notation, "{after}");
        if m.position != *notation {
            return Err(format!(
                "{at}: the log says position {} but the engine gives {}{}{}",
                json(&m.position),
                json(&after.to_string()),
                position_difference(&m.position, &after),
                other_pit(&before, m.pit as usize, &m.position)
            ));
        }
        if m.sown != report.summary.sown {
            return Err(format!(
                "{at}: the log says {} seeds sown but the engine sows {}",
                m.sown, report.summary.sown
            ));
        }
        if m.events != report.events {
            return Err(format!(
                "{at}: the log says events \"{}\" but the engine gives \"{}\"",
                text::events_words(&m.events),
                text::events_words(&report.events)
            ));
        }
        if m.truncated != report.summary.truncated {
            return Err(format!(
                "{at}: the log says truncated {} but the engine says {}",
                m.truncated, report.summary.truncated
            ));
        }
        let end = g.game.end().copied();
        g.side_moves[m.bot] += 1;
        self.moves += 1;
        Ok(Checked::Moved(after, end))
    }

    fn fault(&mut self, f: &Fault) -> Check {
        let at = format!("fault of game {} ply {}", f.game, f.ply);
        self.check_mate(f.bot, f.mate, &at)?;
        let g = self.current("fault", f.game)?;
        if let Some(i) = f.mate {
            // Several members of a team can fault before a game (start-up, result);
            // the first fault ends the game, so only then.
            if g.mates_faulted.contains(&(f.bot, i)) {
                return Err(format!(
                    "{at}: member {i} of bot {} already faulted in this game",
                    f.bot
                ));
            }
            if f.stage == Stage::Game && g.faults.iter().any(|&(b, _)| b == f.bot) {
                return Err(format!(
                    "{at}: bot {} already faulted in this game, which ended it",
                    f.bot
                ));
            }
        } else if g.faults.iter().any(|&(b, _)| b == f.bot) {
            return Err(format!(
                "{at}: bot {} already faulted in this game, which ended it",
                f.bot
            ));
        }
        if let Some(end) = g.game.end() {
            return Err(format!(
                "{at}: the game was already over by the rules ({} after {} plies)",
                end.reason,
                g.game.plies()
            ));
        }
        if f.ply != g.game.plies() {
            return Err(format!(
                "{at}: the log says ply {} but {} moves have been played in this game",
                f.ply,
                g.game.plies()
            ));
        }
        // `kind` and `stage` are a `FaultKind` and a `Stage`: a value the referee does not
        // write was refused when the line was read.
        match f.stage {
            Stage::Game => {}
            Stage::StartUp | Stage::Result if f.ply == 0 => {}
            Stage::StartUp | Stage::Result => {
                return Err(format!(
                    "{at}: a fault of stage {} costs a game before its first move, not at ply {}",
                    f.stage, f.ply
                ))
            }
        }
        let position = g.game.position().to_string();
        if f.position != position {
            return Err(format!(
                "{at}: the log says position {} but the engine gives {}{}",
                json(&f.position),
                json(&position),
                position_difference(&f.position, g.game.position())
            ));
        }
        if let Some(ms) = f.ms {
            if !ms.is_finite() || ms < 0.0 {
                return Err(format!("{at}: time {ms} ms is negative"));
            }
        }
        if let Some(i) = f.mate {
            g.mates_faulted.push((f.bot, i));
        }
        if !g.faults.iter().any(|&(b, _)| b == f.bot) {
            g.faults.push((f.bot, f.kind));
        }
        self.faults[f.bot] += 1;
        Ok(Checked::Other)
    }

    fn game_end(&mut self, e: &GameEnd) -> Check {
        let at = format!("game-end of game {}", e.game);
        let rules = self.rules;
        let g = self.current("game-end", e.game)?;
        if e.plies != g.game.plies() {
            return Err(format!(
                "{at}: the log says {} plies but {} moves were played",
                e.plies,
                g.game.plies()
            ));
        }
        let position = g.game.position().to_string();
        if e.position != position {
            return Err(format!(
                "{at}: the log says final position {} but the engine gives {}{}",
                json(&e.position),
                json(&position),
                position_difference(&e.position, g.game.position())
            ));
        }
        let mut faulted = e.faulted.clone();
        faulted.sort_unstable();
        let mut recorded: Vec<Side> = g.faults.iter().map(|&(b, _)| b).collect();
        recorded.sort_unstable();
        if faulted != recorded {
            return Err(format!(
                "{at}: the log says faulted {} but the game's fault records name {}",
                numbers(&e.faulted),
                numbers(&recorded)
            ));
        }
        // What the game's end should be: (reason, winner by bot, double, points by bot).
        let (reason, winner, double, points) = match g.faults.as_slice() {
            [] => {
                let Some(end) = g.game.end().copied() else {
                    let pos = g.game.position();
                    return Err(format!(
                        "{at}: the log ends the game after {} plies but by the rules it goes on \
                         (player {} to move can play pits {})",
                        g.game.plies(),
                        pos.to_move().index(),
                        list(pos.legal_moves())
                    ));
                };
                let points = g.seating.by_side(rules.points(&end, g.game.position()));
                let Some(reason) = GameEndReason::of_rules(end.reason) else {
                    return Err(format!("{at}: the engine ended the game by a fault"));
                };
                let winner = end.winner.map(|p| g.seating.side(p));
                (reason, winner, end.double, points)
            }
            [(bot, kind)] => {
                let winner = g.seating.player(*bot).other();
                let end = engine::GameEnd {
                    reason: EndReason::Fault,
                    winner: Some(winner),
                    double: false,
                };
                let points = g.seating.by_side(rules.points(&end, g.game.position()));
                (
                    GameEndReason::Fault(*kind),
                    Some(bot.other()),
                    false,
                    points,
                )
            }
            [(_, kind), ..] => (GameEndReason::Fault(*kind), None, false, BySide::new(0, 0)),
        };
        if e.reason != reason {
            return Err(format!(
                "{at}: the log says reason {} but it is {}",
                json(&e.reason),
                json(&reason)
            ));
        }
        if e.winner != winner {
            return Err(format!(
                "{at}: the log says the winner is {} but it is {}",
                bot_or_draw(e.winner),
                bot_or_draw(winner)
            ));
        }
        if e.double != double {
            return Err(format!(
                "{at}: the log says double {} but it is {double}",
                e.double
            ));
        }
        if e.points != points {
            return Err(format!(
                "{at}: the log says points {}-{} but they are {}-{} (bot 0-bot 1, {} scoring)",
                e.points[Side::A],
                e.points[Side::B],
                points[Side::A],
                points[Side::B],
                rules.preset()
            ));
        }
        self.game = None;
        self.ended += 1;
        self.score
            .record(points.into_array(), winner.map(Side::index));
        if let Some(h) = &self.header {
            let left = h.games.saturating_sub(e.game);
            if h.early_stop
                && self.decided_after.is_none()
                && self.score.decided(left, rules.max_points_per_game())
            {
                self.decided_after = Some(e.game);
            }
        }
        if let Some(tally) = self.sprt.as_mut() {
            tally.add_game(e.game, winner);
            if tally.decided() && self.sprt_decided_after.is_none() {
                self.sprt_decided_after = Some(e.game);
            }
        }
        Ok(Checked::Other)
    }

    fn set_end(&mut self, e: &SetEnd) -> Check {
        if let Some(g) = &self.game {
            return Err(format!("set-end while game {} has no game-end", g.number));
        }
        let s = &self.score;
        if e.games_played != self.ended {
            return Err(format!(
                "set-end: the log says {} games played but it holds {}",
                e.games_played, self.ended
            ));
        }
        let games = self.header.as_ref().map_or(0, |h| h.games);
        if e.games_played < games
            && self.decided_after.is_none()
            && self.sprt_decided_after.is_none()
        {
            return Err(format!(
                "set-end after {} of {games} games, but the set was not stopped early \
                 (decided with early_stop, or by its SPRT)",
                e.games_played
            ));
        }
        match (&self.sprt, &e.sprt) {
            (None, None) => {}
            (None, Some(_)) => {
                return Err("set-end: the log has sprt figures but the header runs no SPRT".into())
            }
            (Some(_), None) => {
                return Err(
                    "set-end: the header runs an SPRT but set-end has no sprt figures".into(),
                )
            }
            (Some(tally), Some(logged)) => {
                let actual = tally.end_record();
                if logged.decision != actual.decision || logged.pentanomial != actual.pentanomial {
                    return Err(format!(
                        "set-end: the log says sprt decision {} with pairs {:?} but the games give {} with {:?}",
                        json(&logged.decision),
                        logged.pentanomial,
                        json(&actual.decision),
                        actual.pentanomial
                    ));
                }
                for (what, a, b) in [
                    ("llr", logged.llr, actual.llr),
                    ("lower", logged.lower, actual.lower),
                    ("upper", logged.upper, actual.upper),
                ] {
                    // The same formula; a later hus may round the last bits differently.
                    let close = (a - b).abs() <= 1e-9 * b.abs().max(1.0);
                    if !close {
                        return Err(format!(
                            "set-end: the log says sprt {what} {a} but the games give {b}"
                        ));
                    }
                }
            }
        }
        let checks: [(&str, String, String); 5] = [
            ("points", pair(e.points), pair(s.points.into())),
            ("wins", pair(e.wins), pair(s.wins.into())),
            ("draws", e.draws.to_string(), s.draws.to_string()),
            (
                "winner",
                bot_or_draw(e.winner),
                bot_or_draw(s.leader().and_then(Side::from_index)),
            ),
            ("faults", pair(e.faults), pair(self.faults)),
        ];
        for (field, logged, actual) in checks {
            if logged != actual {
                return Err(format!(
                    "set-end: the log says {field} {logged} but the games give {actual}"
                ));
            }
        }
        self.ending = Ending::SetEnd;
        Ok(Checked::Other)
    }
}

/// `move of game G ply P`, written only when a message needs it.
struct At(u32, u32);

impl std::fmt::Display for At {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "move of game {} ply {}", self.0, self.1)
    }
}

/// `member 1`, or `no member` (an ordinary set's bot).
fn member(mate: Option<usize>) -> String {
    match mate {
        Some(i) => format!("member {i}"),
        None => "no member".to_string(),
    }
}

impl Verifier {
    /// A record's `mate`: present exactly in a team set, and a member of the team.
    fn check_mate(&self, bot: Side, mate: Option<usize>, what: &str) -> Result<(), String> {
        match (self.team_sizes, mate) {
            (None, None) => Ok(()),
            (None, Some(i)) => Err(format!(
                "{what}: member {i} of bot {bot}, but the header has no teams"
            )),
            (Some(_), None) => Err(format!(
                "{what}: bot {bot} without a member (mate) in a team set"
            )),
            (Some(sizes), Some(i)) if i >= sizes[bot] => Err(format!(
                "{what}: member {i} of bot {bot}, but its team has {} members",
                sizes[bot]
            )),
            (Some(_), Some(_)) => Ok(()),
        }
    }
}

/// The record's `type`.
pub fn kind(record: &Record) -> &'static str {
    match record {
        Record::Header(_) => "header",
        Record::Ready(_) => "ready",
        Record::GameStart(_) => "game-start",
        Record::Move(_) => "move",
        Record::Fault(_) => "fault",
        Record::GameEnd(_) => "game-end",
        Record::Restart(_) => "restart",
        Record::Shutdown(_) => "shutdown",
        Record::SetEnd(_) => "set-end",
        Record::Aborted(_) => "aborted",
    }
}

/// A value as JSON, so that strings from the log are quoted and escaped.
fn json<T: serde::Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "?".to_string())
}

fn pair(v: BySide<u32>) -> String {
    format!("{}-{}", v[Side::A], v[Side::B])
}

/// Sides as the log numbers them: `[0, 1]`.
fn numbers(sides: &[Side]) -> String {
    format!("{:?}", sides.iter().map(|s| s.index()).collect::<Vec<_>>())
}

fn bot_or_draw(bot: Option<Side>) -> String {
    match bot {
        Some(b) => format!("bot {b}"),
        None => "nobody (a draw)".to_string(),
    }
}

fn list(pits: impl Iterator<Item = usize>) -> String {
    let v: Vec<String> = pits.map(|p| p.to_string()).collect();
    v.join(", ")
}

/// Where a logged position differs from the engine's, in words (for error messages).
fn position_difference(logged: &str, engine: &AnyPosition) -> String {
    let theirs: AnyPosition = match logged.parse() {
        Ok(p) => p,
        Err(e) => return format!(" (the log's is not a position: {e})"),
    };
    if theirs.rules() != engine.rules() {
        return format!(" (rules {} instead of {})", theirs.rules(), engine.rules());
    }
    for player in Player::BOTH {
        for pit in 0..engine.rules().pits() {
            let (a, b) = (theirs.seeds(player, pit), engine.seeds(player, pit));
            if a != b {
                return format!(
                    " (player {player}'s pit {pit}: the log has {}, the engine {b})",
                    text::plural(a, "seed", "seeds")
                );
            }
        }
    }
    if theirs.to_move() != engine.to_move() {
        return format!(
            " (the log has player {} to move, the engine player {})",
            theirs.to_move(),
            engine.to_move()
        );
    }
    String::new()
}

/// When the logged position is what another legal pit gives, says so: the likely
/// explanation of a mismatch is a changed `pit`.
fn other_pit(before: &AnyPosition, played: usize, logged: &str) -> String {
    for pit in before.legal_moves() {
        if pit == played {
            continue;
        }
        let mut p = *before;
        if p.play_with(pit, &mut ()).is_ok() && p.to_string() == logged {
            return format!("; the log's position is what pit {pit} gives, not pit {played}");
        }
    }
    String::new()
}

//! A game from its start: history, the end rules, and scoring of games and sets.

use std::fmt;

use crate::board::Board;
use crate::position::{Moves, Player, Position};
use crate::rules::{Rules, Scoring, NO_CAPTURE_LIMIT};
use crate::sow::{IllegalMove, MoveReport, Recorder, Summary};

/// Why a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum EndReason {
    /// The player to move has no pit with 2 or more seeds.
    NoMoves,
    /// The position occurred for the second time.
    Repetition,
    /// 200 plies in a row without a capture.
    NoCaptureLimit,
    /// A player broke the protocol or the clock (decided by the referee, see [`Game::forfeit`]).
    Fault,
}

impl EndReason {
    /// The name used in the protocol and the logs.
    pub fn name(self) -> &'static str {
        match self {
            EndReason::NoMoves => "no-moves",
            EndReason::Repetition => "repetition",
            EndReason::NoCaptureLimit => "no-capture-limit",
            EndReason::Fault => "fault",
        }
    }
}

impl fmt::Display for EndReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct GameEnd {
    /// The end rule that applied.
    pub reason: EndReason,
    /// The winner, or `None` for a draw.
    pub winner: Option<Player>,
    /// The loser has no seeds at all (a double win where the scoring counts it).
    pub double: bool,
}

impl GameEnd {
    /// The end of a game lost by `loser` for a fault (time-out, crash, bad line,
    /// illegal move): [`Game::forfeit`]'s.
    pub fn forfeit(loser: Player) -> GameEnd {
        GameEnd {
            reason: EndReason::Fault,
            winner: Some(loser.other()),
            double: false,
        }
    }
}

/// Checks the end rules of RULINGS.md, in order, on `position` (the player to move is the
/// one who would play next). `repeated`: the position has occurred before in this game;
/// `quiet_plies`: plies in a row without a capture.
#[inline]
pub fn judge<B: Board>(position: &B, repeated: bool, quiet_plies: u32) -> Option<GameEnd> {
    judge_with(position, position.legal_moves(), repeated, quiet_plies)
}

/// [`judge`] given the legal moves of `position`, for a caller that needs them too.
#[inline]
fn judge_with<B: Board>(
    position: &B,
    moves: Moves,
    repeated: bool,
    quiet_plies: u32,
) -> Option<GameEnd> {
    let mover = position.to_move();
    if moves.is_empty() {
        return Some(no_moves(position));
    }
    let reason = if repeated {
        EndReason::Repetition
    } else if quiet_plies >= NO_CAPTURE_LIMIT {
        EndReason::NoCaptureLimit
    } else {
        return None;
    };
    let (mine, theirs) = (position.seeds_of(mover), position.seeds_of(mover.other()));
    let winner = match mine.cmp(&theirs) {
        std::cmp::Ordering::Greater => Some(mover),
        std::cmp::Ordering::Less => Some(mover.other()),
        std::cmp::Ordering::Equal => None,
    };
    Some(GameEnd {
        reason,
        winner,
        double: false,
    })
}

/// The end of a game whose player to move has no legal move.
#[inline]
fn no_moves<B: Board>(position: &B) -> GameEnd {
    let mover = position.to_move();
    GameEnd {
        reason: EndReason::NoMoves,
        winner: Some(mover.other()),
        double: position.seeds_of(mover) == 0,
    }
}

impl Rules {
    /// The points each player (indexed by [`Player::index`]) scores for a game that ended
    /// as `end` on `position`.
    pub fn points<B: Board>(self, end: &GameEnd, position: &B) -> [u32; 2] {
        let mut points = [0u32; 2];
        match self.preset().scoring() {
            Scoring::Wins { double_win } => {
                if let Some(winner) = end.winner {
                    points[winner.index()] = if double_win && end.double { 2 } else { 1 };
                }
            }
            Scoring::Seeds => {
                if end.reason == EndReason::Fault {
                    if let Some(winner) = end.winner {
                        points[winner.index()] = position.total_seeds();
                    }
                } else {
                    for p in Player::BOTH {
                        let own = position.seeds_of(p);
                        let double = own > 0 && position.seeds_of(p.other()) == 0;
                        points[p.index()] = if double { 2 * own } else { own };
                    }
                }
            }
        }
        points
    }

    /// Whether a game can score double under these rules: a double win under `hus`
    /// (the loser has no seeds at all), and under `rulebook` a side holding every seed,
    /// which scores twice its seeds. `hello.rules.double_win` of the protocol.
    pub fn scores_doubles(self) -> bool {
        match self.preset().scoring() {
            Scoring::Wins { double_win } => double_win,
            Scoring::Seeds => true,
        }
    }

    /// The most points one game can give a player: what early stopping of a set needs.
    pub fn max_points_per_game(self) -> u32 {
        match self.preset().scoring() {
            Scoring::Wins { double_win: true } => 2,
            Scoring::Wins { double_win: false } => 1,
            Scoring::Seeds => 2 * 2 * self.seeds_per_player(),
        }
    }
}

/// Why [`Game::play`] refused a move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlayError {
    /// The move breaks the rules; the game is unchanged.
    Illegal(IllegalMove),
    /// The game is over.
    GameOver,
}

impl fmt::Display for PlayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlayError::Illegal(e) => e.fmt(f),
            PlayError::GameOver => f.write_str("the game is over"),
        }
    }
}

impl std::error::Error for PlayError {}

impl From<IllegalMove> for PlayError {
    fn from(e: IllegalMove) -> Self {
        PlayError::Illegal(e)
    }
}

/// A game in progress: the position, everything needed by the end rules, and the end.
/// Generic over the [`Board`]: `Game` is a game on a [`Position`] (widths 8 to 16),
/// `Game<AnyPosition>` one on any board, with the same end rules.
#[derive(Clone, Debug)]
pub struct Game<B: Board = Position> {
    start: B,
    position: B,
    history: History<B>,
    end: Option<GameEnd>,
}

impl<B: Board> Game<B> {
    /// A game from `start` (which counts as the first occurrence of itself). A start where
    /// the player to move has no move is already over.
    pub fn new(start: B) -> Game<B> {
        Game {
            start,
            position: start,
            history: History::new(start),
            end: judge(&start, false, 0),
        }
    }

    /// The rules.
    #[inline]
    pub fn rules(&self) -> Rules {
        self.start.rules()
    }

    /// The starting position.
    #[inline]
    pub fn start(&self) -> &B {
        &self.start
    }

    /// The current position.
    pub fn position(&self) -> &B {
        &self.position
    }

    /// Plies played.
    pub fn plies(&self) -> u32 {
        (self.history.positions.len() - 1) as u32
    }

    /// Every position of the game so far, in order: the start first, the current position
    /// last (`plies() + 1` of them). What the repetition rule compares against.
    pub fn history(&self) -> impl ExactSizeIterator<Item = &B> + '_ {
        self.history.positions.iter()
    }

    /// Plies in a row without a capture.
    pub fn quiet_plies(&self) -> u32 {
        self.history.quiet_plies
    }

    /// How the game ended, or `None` while it goes on.
    pub fn end(&self) -> Option<&GameEnd> {
        self.end.as_ref()
    }

    /// The points each player scores, once the game is over.
    pub fn points(&self) -> Option<[u32; 2]> {
        self.end
            .map(|end| self.rules().points(&end, &self.position))
    }

    /// Plays `pit` for the side to move and reports what happened, then applies the end
    /// rules. On error nothing changes.
    pub fn play(&mut self, pit: usize) -> Result<MoveReport, PlayError> {
        let mut report = MoveReport::default();
        report.summary = self.play_with(pit, &mut report)?;
        Ok(report)
    }

    /// [`Game::play`] with a recorder of your choice.
    #[inline]
    pub fn play_with<R: Recorder>(
        &mut self,
        pit: usize,
        recorder: &mut R,
    ) -> Result<Summary, PlayError> {
        if self.end.is_some() {
            return Err(PlayError::GameOver);
        }
        let summary = self.position.play_with(pit, recorder)?;
        self.end = self.history.record(&self.position, summary.captures > 0);
        Ok(summary)
    }

    /// Plays the moves `choose` picks until the game ends, and returns the end (at once
    /// if the game is already over). `choose` is given the number of legal moves and
    /// returns the index of the one to play among them in increasing pit order (an
    /// index past the last is taken modulo the number). The game is then the one
    /// [`Game::play`] would make of the same moves, history included; nothing is
    /// reported. For random playouts (`choose` draws an index uniformly), and
    /// [`Playouts`](crate::Playouts) plays many from one game without copying it.
    pub fn play_out(&mut self, choose: impl FnMut(usize) -> usize) -> GameEnd {
        if let Some(end) = self.end {
            return end;
        }
        let end = self.history.play_out(&mut self.position, choose);
        self.end = Some(end);
        end
    }

    /// The game's history, for [`Playouts`](crate::Playouts).
    pub(crate) fn history_of(&self) -> &History<B> {
        &self.history
    }

    /// Ends the game as lost by `loser` for a fault (time-out, crash, bad line, illegal
    /// move). Does nothing if the game is already over.
    pub fn forfeit(&mut self, loser: Player) {
        if self.end.is_none() {
            self.end = Some(GameEnd::forfeit(loser));
        }
    }
}

/// What the end rules need of a game's past: every position so far, the start
/// included, with its key, and the plies in a row without a capture. One implementation
/// of "after a move" for [`Game`] and [`Playouts`](crate::Playouts).
///
/// Repetition candidates are picked by key and confirmed by equality, so a hash
/// collision can never end a game. Before any key is compared, a set of the keys' top
/// bits (a one-hash Bloom filter of 2048 bits) says whether the new key can be among
/// them: in most plies it cannot, and the scan (and its branches, which the processor
/// cannot predict) is skipped. When it runs, the scan compares every second position
/// only: every ply changes the side to move, which equality compares, so a position can
/// only equal those an even number of plies before it.
#[derive(Clone, Debug)]
pub(crate) struct History<B> {
    /// Every position so far, the start first.
    positions: Vec<B>,
    /// The key of each position.
    keys: Vec<u64>,
    /// Bit `key >> 53` of every key in `keys` (and no other).
    filter: [u64; FILTER_WORDS],
    quiet_plies: u32,
}

/// 64-bit words in [`History`]'s filter: 2048 bits, 256 bytes.
const FILTER_WORDS: usize = 32;

/// The filter word and bit of `key`: its top 11 bits.
#[inline(always)]
fn filter_bit(key: u64) -> (usize, u64) {
    let top = (key >> 53) as usize;
    (top / 64 % FILTER_WORDS, 1 << (top % 64))
}

impl<B: Board> History<B> {
    /// The history of a game at its start.
    fn new(start: B) -> History<B> {
        let mut history = History {
            positions: Vec::new(),
            keys: Vec::new(),
            filter: [0; FILTER_WORDS],
            quiet_plies: 0,
        };
        history.push_key(start.key(), &start);
        history
    }

    /// Positions recorded, the start included.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.positions.len()
    }

    /// Plies in a row without a capture.
    #[inline]
    pub(crate) fn quiet_plies(&self) -> u32 {
        self.quiet_plies
    }

    /// Forgets every position after the first `len` and sets the plies without a
    /// capture back to `quiet_plies`: the history as it was when it held `len`.
    #[inline]
    pub(crate) fn truncate(&mut self, len: usize, quiet_plies: u32) {
        self.positions.truncate(len);
        self.keys.truncate(len);
        self.filter = [0; FILTER_WORDS];
        for &key in &self.keys {
            let (word, bit) = filter_bit(key);
            self.filter[word] |= bit;
        }
        self.quiet_plies = quiet_plies;
    }

    /// Whether `position`, whose key is `key` and which would be recorded next, has
    /// occurred before.
    #[inline(always)]
    fn occurred(&self, key: u64, position: &B) -> bool {
        let (word, bit) = filter_bit(key);
        if self.filter[word] & bit == 0 {
            return false;
        }
        let len = self.keys.len();
        (len % 2..len)
            .step_by(2)
            .any(|i| self.keys[i] == key && self.positions[i] == *position)
    }

    /// Appends `position` and its key.
    #[inline(always)]
    fn push_key(&mut self, key: u64, position: &B) {
        let (word, bit) = filter_bit(key);
        self.filter[word] |= bit;
        self.keys.push(key);
        self.positions.push(*position);
    }

    /// Records `position`, just reached by a move that captured or not; says whether it
    /// occurred before.
    #[inline(always)]
    fn push(&mut self, position: &B, captured: bool) -> bool {
        self.quiet_plies = if captured { 0 } else { self.quiet_plies + 1 };
        let key = position.key();
        let repeated = self.occurred(key, position);
        self.push_key(key, position);
        repeated
    }

    /// Records `position`, just reached by a move that captured or not, and applies the
    /// end rules to it.
    #[inline(always)]
    fn record(&mut self, position: &B, captured: bool) -> Option<GameEnd> {
        let repeated = self.push(position, captured);
        judge(position, repeated, self.quiet_plies)
    }

    /// Plays the moves `choose` picks (see [`Game::play_out`]) from `position`, the last
    /// one recorded, of a game not over, until the game ends; returns the end.
    #[inline(always)]
    pub(crate) fn play_out(
        &mut self,
        position: &mut B,
        mut choose: impl FnMut(usize) -> usize,
    ) -> GameEnd {
        let mut moves = position.legal_moves();
        loop {
            let count = moves.len();
            let index = choose(count);
            let index = if index < count {
                index
            } else {
                index.checked_rem(count).unwrap_or(0)
            };
            let Some(pit) = moves.nth(index) else {
                // Not reached: the end rules end a game whose player to move has no move.
                return no_moves(position);
            };
            let summary = position.play_unchecked(pit, &mut ());
            let repeated = self.push(position, summary.captures > 0);
            moves = position.legal_moves();
            if let Some(end) = judge_with(position, moves, repeated, self.quiet_plies) {
                return end;
            }
        }
    }
}

/// Points and results of a set between two competitors, `0` and `1` (not players: who
/// is player 0 changes from game to game).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SetScore {
    /// Points of each competitor.
    pub points: [u32; 2],
    /// Games won by each competitor.
    pub wins: [u32; 2],
    /// Drawn games.
    pub draws: u32,
}

impl SetScore {
    /// Adds a game: `points` and `winner` by competitor.
    pub fn record(&mut self, points: [u32; 2], winner: Option<usize>) {
        self.points[0] += points[0];
        self.points[1] += points[1];
        match winner {
            Some(c) if c < 2 => self.wins[c] += 1,
            _ => self.draws += 1,
        }
    }

    /// Games recorded.
    pub fn games(&self) -> u32 {
        self.wins[0] + self.wins[1] + self.draws
    }

    /// The competitor with more points, `None` when equal.
    pub fn leader(&self) -> Option<usize> {
        match self.points[0].cmp(&self.points[1]) {
            std::cmp::Ordering::Greater => Some(0),
            std::cmp::Ordering::Less => Some(1),
            std::cmp::Ordering::Equal => None,
        }
    }

    /// Whether the set is decided with `games_left` still to play, each worth at most
    /// `max_points_per_game`: nothing can change who leads. For optional early stops.
    pub fn decided(&self, games_left: u32, max_points_per_game: u32) -> bool {
        let gap = self.points[0].abs_diff(self.points[1]);
        gap > games_left * max_points_per_game
    }
}

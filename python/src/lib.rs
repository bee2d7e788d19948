//! `hus._hus`: the engine crate in Python, through PyO3. The Python package `hus`
//! (python/python/hus/) re-exports everything here; its stubs (`_hus.pyi`) and
//! docs/python.md document the API as Python sees it.
//!
//! Every board is an [`AnyPosition`], so every width from 8 to 32 works, and the usual
//! widths keep the engine's 64-byte board. Nothing here re-implements a rule: moves,
//! reports, game ends, scores and perft are the engine's own functions, and errors carry
//! the engine's messages.

use engine::{
    AnyPosition, Board, Capture as EngineCapture, Event, Game as EngineGame, GameEnd as EngineEnd,
    MoveReport as EngineReport, Moves, PlayError, Player, Position, Preset, Rules, Setup,
    WidePosition,
};
use pyo3::create_exception;
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

create_exception!(
    hus,
    HusError,
    PyValueError,
    "The base of every error of the hus package (a ValueError)."
);
create_exception!(
    hus,
    RulesError,
    HusError,
    "An unknown preset or a width outside 8 to 32."
);
create_exception!(
    hus,
    NotationError,
    HusError,
    "A string that is not a position in the one-line notation of RULES.md."
);
create_exception!(
    hus,
    SetupError,
    HusError,
    "Pits that are not a position: wrong count, or too many seeds."
);
create_exception!(
    hus,
    IllegalMoveError,
    HusError,
    "A pit that does not exist or holds fewer than two seeds; nothing was played."
);
create_exception!(
    hus,
    GameOverError,
    HusError,
    "A move asked of a game that is over; nothing was played."
);

fn rules_of(preset: &str, width: usize) -> PyResult<Rules> {
    let preset: Preset = preset
        .parse()
        .map_err(|e: engine::RulesError| RulesError::new_err(e.to_string()))?;
    Rules::new(preset, width).map_err(|e| RulesError::new_err(e.to_string()))
}

fn player_of(player: usize) -> PyResult<Player> {
    Player::from_index(player)
        .ok_or_else(|| PyValueError::new_err(format!("player must be 0 or 1, got {player}")))
}

/// Seed counts from Python, each checked to fit a pit (0 to 255).
fn pits_of(player: usize, pits: Vec<i64>) -> PyResult<Vec<u8>> {
    pits.into_iter()
        .enumerate()
        .map(|(pit, seeds)| {
            u8::try_from(seeds).map_err(|_| {
                SetupError::new_err(format!(
                    "player {player}'s pit {pit} holds {seeds} seeds, expected 0 to 255"
                ))
            })
        })
        .collect()
}

/// A position: the rules, both players' pits and who is to move. Immutable and
/// hashable; equal positions are the same for the repetition rule.
///
/// Build one from the one-line notation of RULES.md, ``Position("hus 8 ...")``, with
/// ``Position.start(preset, width)``, or from pit lists with ``Position.from_pits``.
/// ``str(position)`` is its notation.
///
/// Pits are numbered in each owner's sowing order: ``0..W-1`` the front row,
/// ``W..2W-1`` the back row. Across from my front pit ``i`` are the opponent's front
/// pit ``W-1-i`` and back pit ``W+i``.
///
/// >>> import hus
/// >>> start = hus.Position.start("hus", 8)
/// >>> str(start)
/// 'hus 8 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0'
/// >>> start.legal_moves()
/// [4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
#[pyclass(
    frozen,
    eq,
    hash,
    skip_from_py_object,
    module = "hus",
    name = "Position"
)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct PyPosition {
    inner: AnyPosition,
}

#[pymethods]
impl PyPosition {
    /// Parses the one-line notation ``PRESET WIDTH P0FRONT/P0BACK P1FRONT/P1BACK TOMOVE``;
    /// raises NotationError with the engine's words.
    #[new]
    fn new(notation: &str) -> PyResult<PyPosition> {
        notation
            .parse::<AnyPosition>()
            .map(|inner| PyPosition { inner })
            .map_err(|e| NotationError::new_err(e.to_string()))
    }

    /// The starting position of ``preset`` (``hus``, ``rulebook``, ``mancala-world``) at
    /// row width ``width`` (8 to 32), player 0 to move.
    #[staticmethod]
    #[pyo3(signature = (preset = "hus", width = 8))]
    fn start(preset: &str, width: usize) -> PyResult<PyPosition> {
        Ok(PyPosition {
            inner: AnyPosition::start(rules_of(preset, width)?),
        })
    }

    /// A position from each player's 2W pits in their own numbering, and the player to
    /// move. A bot that sees a protocol ``turn`` builds its position as
    /// ``from_pits(preset, width, turn["you"], turn["opponent"])``: itself player 0, to move.
    #[staticmethod]
    #[pyo3(signature = (preset, width, player0, player1, to_move = 0))]
    fn from_pits(
        preset: &str,
        width: usize,
        player0: Vec<i64>,
        player1: Vec<i64>,
        to_move: usize,
    ) -> PyResult<PyPosition> {
        let setup = Setup {
            rules: rules_of(preset, width)?,
            pits: [pits_of(0, player0)?, pits_of(1, player1)?],
            to_move: player_of(to_move)?,
        };
        AnyPosition::from_setup(&setup)
            .map(|inner| PyPosition { inner })
            .map_err(|e| SetupError::new_err(e.to_string()))
    }

    /// The preset's name: ``hus``, ``rulebook`` or ``mancala-world``.
    #[getter]
    fn preset(&self) -> &'static str {
        self.inner.rules().preset().name()
    }

    /// The row width W (each player has 2W pits).
    #[getter]
    fn width(&self) -> usize {
        self.inner.width()
    }

    /// The player to move, 0 or 1.
    #[getter(to_move)]
    fn mover(&self) -> usize {
        self.inner.to_move().index()
    }

    /// ``player``'s 2W pits in their own numbering.
    fn pits(&self, player: usize) -> PyResult<Vec<u32>> {
        // A list of ints (PyO3 would make a Vec<u8> a bytes object).
        Ok(self
            .inner
            .pits(player_of(player)?)
            .into_iter()
            .map(u32::from)
            .collect())
    }

    /// The seeds in ``player``'s pit ``pit``.
    fn seeds(&self, player: usize, pit: usize) -> PyResult<u8> {
        let player = player_of(player)?;
        let pits = 2 * self.inner.width();
        if pit >= pits {
            return Err(PyIndexError::new_err(format!(
                "pit {pit} does not exist (pits are 0 to {})",
                pits - 1
            )));
        }
        Ok(self.inner.seeds(player, pit))
    }

    /// The seeds on ``player``'s side.
    fn seeds_of(&self, player: usize) -> PyResult<u32> {
        Ok(self.inner.seeds_of(player_of(player)?))
    }

    /// The seeds on the board.
    fn total_seeds(&self) -> u32 {
        self.inner.total_seeds()
    }

    /// The pits the player to move may play (those with 2 or more seeds), ascending.
    /// Empty when that player cannot move (the game is then over).
    fn legal_moves(&self) -> Vec<usize> {
        self.inner.legal_moves().collect()
    }

    /// Whether the player to move may play ``pit``.
    fn is_legal(&self, pit: usize) -> bool {
        self.inner.is_legal(pit)
    }

    /// Plays ``pit`` for the player to move: returns the position after it and the
    /// move's report. Raises IllegalMoveError (the position is immutable, nothing changes).
    ///
    /// >>> after, report = hus.Position.start().play(7)
    /// >>> report.sown, [r.pit for r in report.relays]
    /// (11, [9, 12, 15])
    fn play(&self, pit: usize) -> PyResult<(PyPosition, PyMoveReport)> {
        let mut after = self.inner;
        let mover = after.to_move().index();
        let report = after.play(pit).map_err(illegal)?;
        Ok((
            PyPosition { inner: after },
            PyMoveReport {
                inner: report,
                player: mover,
            },
        ))
    }

    /// The position after ``pit``, without the report: the fast path for searches.
    fn after(&self, pit: usize) -> PyResult<PyPosition> {
        let mut after = self.inner;
        after.play_with(pit, &mut ()).map_err(illegal)?;
        Ok(PyPosition { inner: after })
    }

    fn __str__(&self) -> String {
        self.inner.to_string()
    }

    fn __repr__(&self) -> String {
        format!("Position('{}')", self.inner)
    }

    fn __copy__(&self) -> PyPosition {
        *self
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> PyPosition {
        *self
    }

    /// Pickles as its notation.
    fn __getnewargs__(&self) -> (String,) {
        (self.inner.to_string(),)
    }
}

fn illegal(e: engine::IllegalMove) -> PyErr {
    IllegalMoveError::new_err(e.to_string())
}

fn play_error(e: PlayError) -> PyErr {
    match e {
        PlayError::Illegal(e) => illegal(e),
        PlayError::GameOver => GameOverError::new_err(e.to_string()),
    }
}

/// Everything that happened in one move: the seeds sown, every relay and capture in
/// order, and whether the 3000-seed rule stopped it. Events are in the mover's
/// numbering, but for ``Taken.pit``, which is in the opponent's.
#[pyclass(frozen, module = "hus", name = "MoveReport")]
struct PyMoveReport {
    inner: EngineReport,
    player: usize,
}

#[pymethods]
impl PyMoveReport {
    /// The player who moved.
    #[getter]
    fn player(&self) -> usize {
        self.player
    }

    /// The pit played, in the mover's numbering.
    #[getter]
    fn pit(&self) -> u8 {
        self.inner.summary.pit
    }

    /// Seeds placed in the move, every lap counted.
    #[getter]
    fn sown(&self) -> u32 {
        self.inner.summary.sown
    }

    /// Seeds taken from the opponent, all captures together.
    #[getter]
    fn captured(&self) -> u32 {
        self.inner.summary.captured
    }

    /// Whether the move stopped at the 3000-seed limit.
    #[getter]
    fn truncated(&self) -> bool {
        self.inner.summary.truncated
    }

    /// Relays and captures, in the order they happened.
    #[getter]
    fn events(&self, py: Python<'_>) -> PyResult<Vec<Py<PyAny>>> {
        self.inner
            .events
            .iter()
            .map(|event| match event {
                Event::Relay(r) => Ok(Py::new(
                    py,
                    PyRelay {
                        pit: r.pit,
                        seeds: r.seeds,
                    },
                )?
                .into_any()),
                Event::Capture(c) => Ok(Py::new(py, PyCapture::from(c))?.into_any()),
            })
            .collect()
    }

    /// The relays, in order.
    #[getter]
    fn relays(&self) -> Vec<PyRelay> {
        self.inner
            .relays()
            .map(|r| PyRelay {
                pit: r.pit,
                seeds: r.seeds,
            })
            .collect()
    }

    /// The captures, in order.
    #[getter]
    fn captures(&self) -> Vec<PyCapture> {
        self.inner.captures().map(PyCapture::from).collect()
    }

    fn __repr__(&self) -> String {
        let s = &self.inner.summary;
        format!(
            "MoveReport(player={}, pit={}, sown={}, relays={}, captures={}, captured={}, truncated={})",
            self.player,
            s.pit,
            s.sown,
            s.relays,
            s.captures,
            s.captured,
            if s.truncated { "True" } else { "False" }
        )
    }
}

/// A relay: the last seed fell in an occupied pit with no capture, and its seeds (the
/// last one included) were lifted and sown on from the next pit.
#[pyclass(frozen, eq, skip_from_py_object, module = "hus", name = "Relay")]
#[derive(Clone, PartialEq)]
struct PyRelay {
    /// The pit lifted, in the mover's numbering.
    #[pyo3(get)]
    pit: u8,
    /// The seeds lifted.
    #[pyo3(get)]
    seeds: u32,
}

#[pymethods]
impl PyRelay {
    /// ``"relay"``, as in the logs and ``hus line --json``.
    #[getter]
    fn kind(&self) -> &'static str {
        "relay"
    }

    fn __repr__(&self) -> String {
        format!("Relay(pit={}, seeds={})", self.pit, self.seeds)
    }
}

/// One opponent pit emptied by a capture.
#[pyclass(frozen, eq, skip_from_py_object, module = "hus", name = "Taken")]
#[derive(Clone, PartialEq)]
struct PyTaken {
    /// The pit, in the opponent's numbering.
    #[pyo3(get)]
    pit: u8,
    /// Seeds taken from it.
    #[pyo3(get)]
    seeds: u32,
}

#[pymethods]
impl PyTaken {
    fn __repr__(&self) -> String {
        format!("Taken(pit={}, seeds={})", self.pit, self.seeds)
    }
}

/// A capture: the last seed landed in an occupied front pit across from seeds.
#[pyclass(frozen, eq, skip_from_py_object, module = "hus", name = "Capture")]
#[derive(Clone, PartialEq)]
struct PyCapture {
    /// The front pit where the last seed landed (mover's numbering).
    #[pyo3(get)]
    landing: u8,
    /// The opponent's pits emptied, in the order they were taken.
    #[pyo3(get)]
    taken: Vec<PyTaken>,
    /// Seeds lifted from the landing pit itself (``rulebook``; 0 otherwise).
    #[pyo3(get)]
    own: u32,
    /// Seeds sown: ``own`` plus everything taken.
    #[pyo3(get)]
    sown: u32,
    /// The pit the sowing of these seeds starts in (mover's numbering).
    #[pyo3(get)]
    sown_from: u8,
}

impl From<&EngineCapture> for PyCapture {
    fn from(c: &EngineCapture) -> PyCapture {
        PyCapture {
            landing: c.landing,
            taken: c
                .taken
                .iter()
                .map(|t| PyTaken {
                    pit: t.pit,
                    seeds: t.seeds,
                })
                .collect(),
            own: c.own,
            sown: c.sown,
            sown_from: c.sown_from,
        }
    }
}

#[pymethods]
impl PyCapture {
    /// ``"capture"``, as in the logs and ``hus line --json``.
    #[getter]
    fn kind(&self) -> &'static str {
        "capture"
    }

    fn __repr__(&self) -> String {
        let taken: Vec<String> = self.taken.iter().map(PyTaken::__repr__).collect();
        format!(
            "Capture(landing={}, taken=[{}], own={}, sown={}, sown_from={})",
            self.landing,
            taken.join(", "),
            self.own,
            self.sown,
            self.sown_from
        )
    }
}

/// How a game ended.
#[pyclass(frozen, eq, skip_from_py_object, module = "hus", name = "GameEnd")]
#[derive(Clone, Copy, PartialEq)]
struct PyGameEnd {
    inner: EngineEnd,
}

#[pymethods]
impl PyGameEnd {
    /// ``no-moves``, ``repetition``, ``no-capture-limit`` or ``fault`` (after ``Game.forfeit``).
    #[getter]
    fn reason(&self) -> &'static str {
        self.inner.reason.name()
    }

    /// The winning player, 0 or 1, or None for a draw.
    #[getter]
    fn winner(&self) -> Option<usize> {
        self.inner.winner.map(Player::index)
    }

    /// The loser has no seeds at all (a double win under ``hus``).
    #[getter]
    fn double(&self) -> bool {
        self.inner.double
    }

    fn __repr__(&self) -> String {
        let winner = self
            .winner()
            .map_or_else(|| "None".to_string(), |w| w.to_string());
        format!(
            "GameEnd(reason='{}', winner={winner}, double={})",
            self.reason(),
            if self.inner.double { "True" } else { "False" }
        )
    }
}

/// A game on the board type its start needs: the engine's 64-byte board for the usual
/// widths (up to 16, at most 127 seeds), the wide one otherwise, as `hus perft` and the
/// Rust bot do, so that games and playouts keep the fast board's speed.
#[derive(Clone)]
enum AnyGame {
    Narrow(EngineGame<Position>),
    Wide(EngineGame<WidePosition>),
}

/// Evaluates `$body` with `$g` bound to the inner game.
macro_rules! each_game {
    ($game:expr, $g:ident => $body:expr) => {
        match $game {
            AnyGame::Narrow($g) => $body,
            AnyGame::Wide($g) => $body,
        }
    };
}

impl AnyGame {
    fn new(start: AnyPosition) -> AnyGame {
        match start {
            AnyPosition::Narrow(p) => AnyGame::Narrow(EngineGame::new(p)),
            AnyPosition::Wide(p) => AnyGame::Wide(EngineGame::new(p)),
        }
    }

    fn start(&self) -> AnyPosition {
        each_game!(self, g => AnyPosition::from(*g.start()))
    }

    fn position(&self) -> AnyPosition {
        each_game!(self, g => AnyPosition::from(*g.position()))
    }

    fn history(&self) -> Vec<AnyPosition> {
        each_game!(self, g => g.history().map(|&p| AnyPosition::from(p)).collect())
    }

    fn plies(&self) -> u32 {
        each_game!(self, g => g.plies())
    }

    fn quiet_plies(&self) -> u32 {
        each_game!(self, g => g.quiet_plies())
    }

    fn end(&self) -> Option<EngineEnd> {
        each_game!(self, g => g.end().copied())
    }

    fn points(&self) -> Option<[u32; 2]> {
        each_game!(self, g => g.points())
    }

    fn legal_moves(&self) -> Moves {
        each_game!(self, g => g.position().legal_moves())
    }

    fn play(&mut self, pit: usize) -> Result<EngineReport, PlayError> {
        each_game!(self, g => g.play(pit))
    }

    fn forfeit(&mut self, loser: Player) {
        each_game!(self, g => g.forfeit(loser))
    }

    fn playout(&mut self, rng: &mut ChaCha8Rng) -> Result<EngineEnd, PlayError> {
        each_game!(self, g => playout(g, rng))
    }
}

/// Plays uniformly random legal moves on `game` until it ends.
fn playout<B: Board>(
    game: &mut EngineGame<B>,
    rng: &mut ChaCha8Rng,
) -> Result<EngineEnd, PlayError> {
    loop {
        if let Some(&end) = game.end() {
            return Ok(end);
        }
        let moves = game.position().legal_moves();
        let pick = rng.gen_range(0..moves.len());
        // A game that is not over has a legal move, and `pick` indexes one of them:
        // the engine refuses nothing here, and would say why if it did.
        if let Some(pit) = moves.into_iter().nth(pick) {
            game.play_with(pit, &mut ())?;
        }
    }
}

/// A game from its start: the position, the history the end rules need (repetition,
/// 200 plies without a capture), the end and the points.
///
/// >>> game = hus.Game()                       # the hus start at width 8
/// >>> report = game.play(7)
/// >>> game.to_move, game.plies, game.end
/// (1, 1, None)
#[pyclass(skip_from_py_object, module = "hus", name = "Game")]
#[derive(Clone)]
struct PyGame {
    inner: AnyGame,
}

#[pymethods]
impl PyGame {
    /// A game from ``start`` (a Position or its notation), or else from the starting
    /// position of ``preset`` and ``width`` (default ``hus`` at 8). The start counts as
    /// the first occurrence of itself, with no plies before it.
    #[new]
    #[pyo3(signature = (start = None, *, preset = None, width = None))]
    fn new(
        start: Option<&Bound<'_, PyAny>>,
        preset: Option<&str>,
        width: Option<usize>,
    ) -> PyResult<PyGame> {
        let start = match start {
            Some(start) => {
                if preset.is_some() || width.is_some() {
                    return Err(PyValueError::new_err(
                        "give either a start position or a preset and width, not both",
                    ));
                }
                if let Ok(pos) = start.cast::<PyPosition>() {
                    pos.get().inner
                } else {
                    let text: String = start.extract().map_err(|_| {
                        pyo3::exceptions::PyTypeError::new_err(
                            "start must be a Position or a notation string",
                        )
                    })?;
                    PyPosition::new(&text)?.inner
                }
            }
            None => AnyPosition::start(rules_of(preset.unwrap_or("hus"), width.unwrap_or(8))?),
        };
        Ok(PyGame {
            inner: AnyGame::new(start),
        })
    }

    /// The position the game started from.
    #[getter]
    fn start(&self) -> PyPosition {
        PyPosition {
            inner: self.inner.start(),
        }
    }

    /// The current position.
    #[getter]
    fn position(&self) -> PyPosition {
        PyPosition {
            inner: self.inner.position(),
        }
    }

    /// The player to move (after the end: the one who would move next).
    #[getter]
    fn to_move(&self) -> usize {
        self.inner.position().to_move().index()
    }

    /// Plies played.
    #[getter]
    fn plies(&self) -> u32 {
        self.inner.plies()
    }

    /// Plies in a row without a capture.
    #[getter]
    fn quiet_plies(&self) -> u32 {
        self.inner.quiet_plies()
    }

    /// Every position so far: the start first, the current position last.
    #[getter]
    fn history(&self) -> Vec<PyPosition> {
        self.inner
            .history()
            .into_iter()
            .map(|inner| PyPosition { inner })
            .collect()
    }

    /// How the game ended, or None while it goes on.
    #[getter]
    fn end(&self) -> Option<PyGameEnd> {
        self.inner.end().map(|inner| PyGameEnd { inner })
    }

    /// Whether the game is over.
    #[getter]
    fn is_over(&self) -> bool {
        self.inner.end().is_some()
    }

    /// The points of player 0 and player 1 under the preset's scoring, once the game is
    /// over (None before): ``hus`` 1 for a win, 2 for a double win; ``rulebook`` the
    /// seeds on each side (twice them for a side holding every seed); ``mancala-world``
    /// 1 for a win.
    #[getter]
    fn points(&self) -> Option<(u32, u32)> {
        self.inner.points().map(|[a, b]| (a, b))
    }

    /// The pits the player to move may play; empty once the game is over.
    fn legal_moves(&self) -> Vec<usize> {
        if self.inner.end().is_some() {
            return Vec::new();
        }
        self.inner.legal_moves().collect()
    }

    /// Plays ``pit`` for the player to move, applies the end rules and returns the
    /// move's report. Raises IllegalMoveError or GameOverError; then nothing changes.
    fn play(&mut self, pit: usize) -> PyResult<PyMoveReport> {
        let player = self.to_move();
        self.inner
            .play(pit)
            .map(|inner| PyMoveReport { inner, player })
            .map_err(play_error)
    }

    /// Plays random moves, each legal pit of the player to move equally likely, until the
    /// game ends, and returns the end (at once if it is already over). The same ``seed``
    /// plays the same moves; without one the moves come from a seed drawn from the
    /// system. For Monte Carlo searches: ``game.copy().playout(seed)``, then ``points``.
    /// The moves are chosen and played in Rust: a whole playout is one call.
    ///
    /// >>> game = hus.Game()
    /// >>> game.playout(seed=1).reason
    /// 'no-moves'
    #[pyo3(signature = (seed = None))]
    fn playout(&mut self, seed: Option<u64>) -> PyResult<PyGameEnd> {
        let mut rng = match seed {
            Some(seed) => ChaCha8Rng::seed_from_u64(seed),
            None => ChaCha8Rng::from_entropy(),
        };
        let inner = self.inner.playout(&mut rng).map_err(play_error)?;
        Ok(PyGameEnd { inner })
    }

    /// Ends the game as lost by ``loser`` for a fault (as the referee does for a
    /// time-out or an illegal move). Does nothing if the game is already over.
    fn forfeit(&mut self, loser: usize) -> PyResult<()> {
        self.inner.forfeit(player_of(loser)?);
        Ok(())
    }

    /// A copy to explore from; moves on it leave this game as it is.
    fn copy(&self) -> PyGame {
        self.clone()
    }

    fn __copy__(&self) -> PyGame {
        self.clone()
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> PyGame {
        self.clone()
    }

    fn __repr__(&self) -> String {
        format!(
            "Game(start='{}', plies={}, position='{}')",
            self.inner.start(),
            self.inner.plies(),
            self.inner.position()
        )
    }
}

/// For each depth 1..``depth``, the number of move sequences of exactly that many plies
/// from ``position``, a finished game (any end rule, the history along the line
/// included, ``position`` being a fresh start) having no moves: the tables of RULES.md.
/// Runs without the GIL. ``depth`` is at most 30 (``MAX_PERFT_DEPTH``), as for
/// ``hus perft``; 0 gives ``[]``.
///
/// >>> hus.perft(hus.Position.start("hus", 8), 3)
/// [12, 144, 1320]
#[pyfunction]
fn perft(py: Python<'_>, position: &PyPosition, depth: u32) -> PyResult<Vec<u64>> {
    if depth > MAX_PERFT_DEPTH {
        return Err(PyValueError::new_err(format!(
            "depth must be at most {MAX_PERFT_DEPTH}, got {depth}"
        )));
    }
    let start = position.inner;
    Ok(py.detach(move || match &start {
        AnyPosition::Narrow(p) => engine::perft(p, depth),
        AnyPosition::Wide(p) => engine::perft(p, depth),
    }))
}

/// The deepest perft asked for, as `hus perft --depth` allows: a deeper one would never
/// finish, and its per-depth buffers would be sized by any number given.
const MAX_PERFT_DEPTH: u32 = 30;

#[pymodule]
fn _hus(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<PyPosition>()?;
    m.add_class::<PyMoveReport>()?;
    m.add_class::<PyRelay>()?;
    m.add_class::<PyCapture>()?;
    m.add_class::<PyTaken>()?;
    m.add_class::<PyGameEnd>()?;
    m.add_class::<PyGame>()?;
    m.add_function(wrap_pyfunction!(perft, m)?)?;
    m.add("HusError", py.get_type::<HusError>())?;
    m.add("RulesError", py.get_type::<RulesError>())?;
    m.add("NotationError", py.get_type::<NotationError>())?;
    m.add("SetupError", py.get_type::<SetupError>())?;
    m.add("IllegalMoveError", py.get_type::<IllegalMoveError>())?;
    m.add("GameOverError", py.get_type::<GameOverError>())?;
    m.add("PRESETS", PyTuple::new(py, Preset::ALL.map(Preset::name))?)?;
    m.add("MIN_WIDTH", engine::MIN_WIDTH)?;
    m.add("MAX_WIDTH", engine::MAX_WIDTH)?;
    m.add("MIN_SEEDS_TO_MOVE", engine::MIN_SEEDS_TO_MOVE)?;
    m.add("MAX_SOWN_PER_MOVE", engine::MAX_SOWN_PER_MOVE)?;
    m.add("NO_CAPTURE_LIMIT", engine::NO_CAPTURE_LIMIT)?;
    m.add("MAX_PERFT_DEPTH", MAX_PERFT_DEPTH)?;
    Ok(())
}

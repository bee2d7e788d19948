//! `hus._hus`: the engine crate in Python, through PyO3. The Python package `hus`
//! (python/python/hus/) re-exports everything here; its stubs (`_hus.pyi`) and
//! docs/python.md document the API as Python sees it.
//!
//! Every board is an [`AnyPosition`], so every width from 8 to 32 works, and the usual
//! widths keep the engine's 64-byte board. Nothing here re-implements a rule: moves,
//! reports, game ends, scores and perft are the engine's own functions, and errors carry
//! the engine's messages.

use engine::{
    AnyPosition, Board, Capture as EngineCapture, EndReason, Event, Game as EngineGame,
    GameEnd as EngineEnd, MoveReport as EngineReport, Moves, PlayError, Player, Playouts, Position,
    Preset, Relay as EngineRelay, Rules, Setup, Summary, Taken as EngineTaken, WidePosition,
};
use pyo3::create_exception;
use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyTuple};
use rand::distributions::{Distribution, Uniform};
use rand::{RngCore, SeedableRng};
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

/// A player from Python: 0 or 1, anything else (negative included) a ValueError.
fn player_of(player: i64) -> PyResult<Player> {
    usize::try_from(player)
        .ok()
        .and_then(Player::from_index)
        .ok_or_else(|| PyValueError::new_err(format!("player must be 0 or 1, got {player}")))
}

/// A pit number from Python for a board of `pits` pits: a negative one is refused here
/// with the words the engine uses for a pit past the board (the engine's pits are
/// unsigned, so it never sees one), any other goes to the engine.
fn pit_of(pit: i64, pits: usize) -> PyResult<usize> {
    usize::try_from(pit).map_err(|_| {
        IllegalMoveError::new_err(format!(
            "pit {pit} does not exist (pits are 0 to {})",
            pits.saturating_sub(1)
        ))
    })
}

/// A count or depth from Python, `0..=max`; anything else is a HusError naming `what`.
fn count_of(value: i64, max: u64, what: &str) -> PyResult<u64> {
    u64::try_from(value)
        .ok()
        .filter(|&v| v <= max)
        .ok_or_else(|| HusError::new_err(format!("{what} must be 0 to {max}, got {value}")))
}

/// A seed from Python, 0 to 2**64-1, or one drawn from the system when None.
fn seed_of(seed: Option<i128>) -> PyResult<u64> {
    match seed {
        None => Ok(ChaCha8Rng::from_entropy().next_u64()),
        Some(seed) => u64::try_from(seed)
            .map_err(|_| HusError::new_err(format!("seed must be 0 to 2**64-1, got {seed}"))),
    }
}

/// A position from Python: a Position or its notation.
fn position_of(value: &Bound<'_, PyAny>) -> PyResult<AnyPosition> {
    if let Ok(pos) = value.cast::<PyPosition>() {
        return Ok(pos.get().inner);
    }
    let text: String = value
        .extract()
        .map_err(|_| PyTypeError::new_err("a position must be a Position or a notation string"))?;
    Ok(PyPosition::new(&text)?.inner)
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
        to_move: i64,
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
    fn pits(&self, player: i64) -> PyResult<Vec<u32>> {
        // A list of ints (PyO3 would make a Vec<u8> a bytes object).
        Ok(self
            .inner
            .pits(player_of(player)?)
            .into_iter()
            .map(u32::from)
            .collect())
    }

    /// The seeds in ``player``'s pit ``pit``.
    fn seeds(&self, player: i64, pit: i64) -> PyResult<u8> {
        let player = player_of(player)?;
        let pits = 2 * self.inner.width();
        match usize::try_from(pit) {
            Ok(pit) if pit < pits => Ok(self.inner.seeds(player, pit)),
            _ => Err(PyIndexError::new_err(format!(
                "pit {pit} does not exist (pits are 0 to {})",
                pits - 1
            ))),
        }
    }

    /// The seeds on ``player``'s side.
    fn seeds_of(&self, player: i64) -> PyResult<u32> {
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
    fn is_legal(&self, pit: i64) -> bool {
        usize::try_from(pit).is_ok_and(|pit| self.inner.is_legal(pit))
    }

    /// Plays ``pit`` for the player to move: returns the position after it and the
    /// move's report. Raises IllegalMoveError (the position is immutable, nothing changes).
    ///
    /// >>> after, report = hus.Position.start().play(7)
    /// >>> report.sown, [r.pit for r in report.relays]
    /// (11, [9, 12, 15])
    fn play(&self, pit: i64) -> PyResult<(PyPosition, PyMoveReport)> {
        let pit = pit_of(pit, 2 * self.inner.width())?;
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
    fn after(&self, pit: i64) -> PyResult<PyPosition> {
        let pit = pit_of(pit, 2 * self.inner.width())?;
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

    /// Pickles as its notation, under every pickle protocol.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> (Bound<'py, PyAny>, (String,)) {
        (slf.get_type().into_any(), (slf.get().inner.to_string(),))
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
///
/// Reports compare equal when they report the same move by the same player; they pickle.
#[pyclass(frozen, eq, skip_from_py_object, module = "hus", name = "MoveReport")]
#[derive(Clone, PartialEq)]
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

    /// Pickles as its fields and events (`_hus._move_report` builds it back).
    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let s = &self.inner.summary;
        let events = self.events(py)?;
        let args = (
            self.player,
            s.pit,
            s.sown,
            s.relays,
            s.captures,
            s.captured,
            s.truncated,
            events,
        )
            .into_pyobject(py)?;
        let restore = py.import("hus._hus")?.getattr("_move_report")?;
        Ok((restore, args))
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
    /// A relay of ``seeds`` seeds lifted from ``pit``: what ``MoveReport.relays`` holds.
    #[new]
    fn new(pit: u8, seeds: u32) -> PyRelay {
        PyRelay { pit, seeds }
    }

    /// ``"relay"``, as in the logs and ``hus line --json``.
    #[getter]
    fn kind(&self) -> &'static str {
        "relay"
    }

    fn __repr__(&self) -> String {
        format!("Relay(pit={}, seeds={})", self.pit, self.seeds)
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> (Bound<'py, PyAny>, (u8, u32)) {
        let r = slf.get();
        (slf.get_type().into_any(), (r.pit, r.seeds))
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
    /// ``seeds`` seeds taken from the opponent's ``pit``.
    #[new]
    fn new(pit: u8, seeds: u32) -> PyTaken {
        PyTaken { pit, seeds }
    }

    fn __repr__(&self) -> String {
        format!("Taken(pit={}, seeds={})", self.pit, self.seeds)
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> (Bound<'py, PyAny>, (u8, u32)) {
        let t = slf.get();
        (slf.get_type().into_any(), (t.pit, t.seeds))
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
    /// A capture with these fields: what ``MoveReport.captures`` holds.
    #[new]
    fn new(
        landing: u8,
        taken: Vec<PyRef<'_, PyTaken>>,
        own: u32,
        sown: u32,
        sown_from: u8,
    ) -> PyCapture {
        PyCapture {
            landing,
            taken: taken
                .iter()
                .map(|t| PyTaken {
                    pit: t.pit,
                    seeds: t.seeds,
                })
                .collect(),
            own,
            sown,
            sown_from,
        }
    }

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

    #[allow(clippy::type_complexity)]
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> (Bound<'py, PyAny>, (u8, Vec<PyTaken>, u32, u32, u8)) {
        let c = slf.get();
        (
            slf.get_type().into_any(),
            (c.landing, c.taken.clone(), c.own, c.sown, c.sown_from),
        )
    }
}

impl PyCapture {
    fn to_engine(&self) -> EngineCapture {
        EngineCapture {
            landing: self.landing,
            taken: self
                .taken
                .iter()
                .map(|t| EngineTaken {
                    pit: t.pit,
                    seeds: t.seeds,
                })
                .collect(),
            own: self.own,
            sown: self.sown,
            sown_from: self.sown_from,
        }
    }
}

/// Builds a MoveReport back from what `MoveReport.__reduce__` gave pickle.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn _move_report(
    player: usize,
    pit: u8,
    sown: u32,
    relays: u32,
    captures: u32,
    captured: u32,
    truncated: bool,
    events: Vec<Bound<'_, PyAny>>,
) -> PyResult<PyMoveReport> {
    let mut inner = EngineReport::default();
    inner.summary = Summary {
        pit,
        sown,
        relays,
        captures,
        captured,
        truncated,
    };
    for event in events {
        if let Ok(relay) = event.cast::<PyRelay>() {
            let r = relay.get();
            inner.events.push(Event::Relay(EngineRelay {
                pit: r.pit,
                seeds: r.seeds,
            }));
        } else if let Ok(capture) = event.cast::<PyCapture>() {
            inner.events.push(Event::Capture(capture.get().to_engine()));
        } else {
            return Err(PyTypeError::new_err(
                "a move's events are Relay and Capture objects",
            ));
        }
    }
    Ok(PyMoveReport { inner, player })
}

/// How a game ended.
#[pyclass(
    frozen,
    eq,
    hash,
    skip_from_py_object,
    module = "hus",
    name = "GameEnd"
)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct PyGameEnd {
    inner: EngineEnd,
}

/// Every end reason, for names coming back from Python.
const END_REASONS: [EndReason; 4] = [
    EndReason::NoMoves,
    EndReason::Repetition,
    EndReason::NoCaptureLimit,
    EndReason::Fault,
];

#[pymethods]
impl PyGameEnd {
    /// An end with these fields, as ``Game.end`` gives them (its ``repr`` builds it back).
    #[new]
    #[pyo3(signature = (reason, winner = None, double = false))]
    fn new(reason: &str, winner: Option<i64>, double: bool) -> PyResult<PyGameEnd> {
        let reason = END_REASONS
            .into_iter()
            .find(|r| r.name() == reason)
            .ok_or_else(|| {
                HusError::new_err(format!(
                    "unknown end reason {reason:?}: expected no-moves, repetition, no-capture-limit or fault"
                ))
            })?;
        let winner = winner.map(player_of).transpose()?;
        Ok(PyGameEnd {
            inner: EngineEnd {
                reason,
                winner,
                double,
            },
        })
    }

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

    #[allow(clippy::type_complexity)]
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> (Bound<'py, PyAny>, (&'static str, Option<usize>, bool)) {
        let e = slf.get();
        (
            slf.get_type().into_any(),
            (e.reason(), e.winner(), e.inner.double),
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

    fn playout(&mut self, rng: &mut ChaCha8Rng) -> EngineEnd {
        each_game!(self, g => playout(g, rng))
    }

    /// The game along `line`: `line[0]` is its start, and each next position is the one
    /// a legal move of the position before it leads to (the engine finds the move and
    /// plays it, so the end rules count every position of the line). Refused when a
    /// position is not one move from the one before it, or the line goes on past an end.
    fn along(line: &[AnyPosition]) -> PyResult<AnyGame> {
        let Some((&first, rest)) = line.split_first() else {
            return Err(HusError::new_err("a history needs at least one position"));
        };
        let mut game = AnyGame::new(first);
        for (ply, &next) in rest.iter().enumerate() {
            let from = game.position();
            if let Some(end) = game.end() {
                return Err(HusError::new_err(format!(
                    "the history goes on after the game ended ({}) at position {ply}",
                    end.reason.name()
                )));
            }
            let pit = from.legal_moves().into_iter().find(|&pit| {
                let mut after = from;
                after.play_with(pit, &mut ()).is_ok() && after == next
            });
            let Some(pit) = pit else {
                return Err(HusError::new_err(format!(
                    "position {} of the history is not one move from the one before it: {from} -> {next}",
                    ply + 1
                )));
            };
            game.play(pit).map_err(play_error)?;
        }
        Ok(game)
    }

    /// The legal pits of the player to move whose move leads to a position that has
    /// already occurred in this game.
    fn repeating_moves(&self) -> Vec<usize> {
        if self.end().is_some() {
            return Vec::new();
        }
        each_game!(self, g => {
            let now = *g.position();
            now.legal_moves()
                .into_iter()
                .filter(|&pit| {
                    let mut after = now;
                    after.play_with(pit, &mut ()).is_ok() && g.history().any(|p| *p == after)
                })
                .collect()
        })
    }

    /// The loser of a game ended by `Game.forfeit`, the one end a history cannot replay.
    fn forfeited_by(&self) -> Option<Player> {
        self.end()
            .filter(|end| end.reason == EndReason::Fault)
            .and_then(|end| end.winner.map(Player::other))
    }
}

impl PartialEq for AnyGame {
    /// The same positions in the same order and the same end.
    fn eq(&self, other: &AnyGame) -> bool {
        self.end() == other.end() && self.history() == other.history()
    }
}

/// Plays uniformly random legal moves on `game` until it ends.
fn playout<B: Board>(game: &mut EngineGame<B>, rng: &mut ChaCha8Rng) -> EngineEnd {
    game.play_out(|moves| draw(rng, moves))
}

/// The index of a move drawn uniformly from `moves` legal moves (1 to 64), for every
/// playout: rand's `Uniform` on 32 bits, whose one multiply is exact and rejects a draw
/// about never (`gen_range` on a `usize` draws 64 bits and rejects up to half of them,
/// a branch the processor cannot predict, in every ply).
#[inline]
fn draw(rng: &mut ChaCha8Rng, moves: usize) -> usize {
    Uniform::new(0, moves.clamp(1, 64) as u32).sample(rng) as usize
}

/// A game from its start: the position, the history the end rules need (repetition,
/// 200 plies without a capture), the end and the points.
///
/// >>> game = hus.Game()                       # the hus start at width 8
/// >>> report = game.play(7)
/// >>> game.to_move, game.plies, game.end
/// (1, 1, None)
///
/// Games compare equal when their histories and ends are the same; they pickle with
/// their history.
#[pyclass(eq, skip_from_py_object, module = "hus", name = "Game")]
#[derive(Clone, PartialEq)]
struct PyGame {
    inner: AnyGame,
}

#[pymethods]
impl PyGame {
    /// A game from ``start`` (a Position or its notation), or else from the starting
    /// position of ``preset`` and ``width`` (default ``hus`` at 8). The start counts as
    /// the first occurrence of itself, with no plies before it, unless ``history`` gives
    /// the positions played before it, oldest first (a game's ``history[:-1]``): then
    /// the game is the one along ``history`` and on to ``start``, each position one legal
    /// move from the one before (the engine finds the moves and plays them), so
    /// repetition and the 200-ply rule count those plies. Its ``start`` is then
    /// ``history[0]``. Raises HusError for a history that is not such a line.
    #[new]
    #[pyo3(signature = (start = None, *, preset = None, width = None, history = None))]
    fn new(
        start: Option<&Bound<'_, PyAny>>,
        preset: Option<&str>,
        width: Option<usize>,
        history: Option<Vec<Bound<'_, PyAny>>>,
    ) -> PyResult<PyGame> {
        let start = match start {
            Some(start) => {
                if preset.is_some() || width.is_some() {
                    return Err(PyValueError::new_err(
                        "give either a start position or a preset and width, not both",
                    ));
                }
                position_of(start)?
            }
            None => AnyPosition::start(rules_of(preset.unwrap_or("hus"), width.unwrap_or(8))?),
        };
        let inner = match history {
            None => AnyGame::new(start),
            Some(history) => {
                let mut line = history
                    .iter()
                    .map(position_of)
                    .collect::<PyResult<Vec<_>>>()?;
                line.push(start);
                AnyGame::along(&line)?
            }
        };
        Ok(PyGame { inner })
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

    /// The legal pits whose move leads back to a position of this game's history (the
    /// repetition rule would end the game there, unless the player then to move has no
    /// move); empty once the game is over.
    fn repeating_moves(&self) -> Vec<usize> {
        self.inner.repeating_moves()
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
    fn play(&mut self, pit: i64) -> PyResult<PyMoveReport> {
        let pit = pit_of(pit, 2 * self.inner.start().width())?;
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
    fn playout(&mut self, seed: Option<i128>) -> PyResult<PyGameEnd> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed_of(seed)?);
        let inner = self.inner.playout(&mut rng);
        Ok(PyGameEnd { inner })
    }

    /// Ends the game as lost by ``loser`` for a fault (as the referee does for a
    /// time-out or an illegal move). Does nothing if the game is already over.
    fn forfeit(&mut self, loser: i64) -> PyResult<()> {
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

    /// Pickles as its history (and the loser of a forfeit), played again on unpickling.
    #[allow(clippy::type_complexity)]
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> (
        Bound<'py, PyAny>,
        (PyPosition,),
        (Vec<PyPosition>, Option<usize>),
    ) {
        let game = slf.borrow();
        (
            slf.get_type().into_any(),
            (game.start(),),
            (game.history(), game.inner.forfeited_by().map(Player::index)),
        )
    }

    /// Unpickling: the game along the pickled history, forfeited if it was.
    fn __setstate__(&mut self, state: (Vec<Bound<'_, PyAny>>, Option<i64>)) -> PyResult<()> {
        let (history, loser) = state;
        let line = history
            .iter()
            .map(position_of)
            .collect::<PyResult<Vec<_>>>()?;
        let mut inner = AnyGame::along(&line)?;
        if let Some(loser) = loser {
            inner.forfeit(player_of(loser)?);
        }
        self.inner = inner;
        Ok(())
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
/// Runs without the GIL. ``depth`` is 0 to 30 (``MAX_PERFT_DEPTH``), as for
/// ``hus perft`` (HusError otherwise); 0 gives ``[]``.
///
/// >>> hus.perft(hus.Position.start("hus", 8), 3)
/// [12, 144, 1320]
#[pyfunction]
fn perft(py: Python<'_>, position: &PyPosition, depth: i64) -> PyResult<Vec<u64>> {
    // At most MAX_PERFT_DEPTH, so it fits a u32.
    let depth = count_of(depth, u64::from(MAX_PERFT_DEPTH), "depth")? as u32;
    let start = position.inner;
    Ok(py.detach(move || match &start {
        AnyPosition::Narrow(p) => engine::perft(p, depth),
        AnyPosition::Wide(p) => engine::perft(p, depth),
    }))
}

/// The most threads ``playouts`` runs on.
const MAX_THREADS: u64 = 256;

/// The game a search starts from: a Game as it is (its history counts), or a Position
/// (or its notation) as a fresh start.
fn game_of(value: &Bound<'_, PyAny>) -> PyResult<AnyGame> {
    if let Ok(game) = value.cast::<PyGame>() {
        return Ok(game.borrow().inner.clone());
    }
    Ok(AnyGame::new(position_of(value).map_err(|_| {
        PyTypeError::new_err("playouts needs a Game, a Position or a notation string")
    })?))
}

/// Wins, draws and losses of `n` random playouts from `game` for `mover`; playout `i`
/// draws its moves from stream `i` of ChaCha8 seeded with `seed`, whichever thread
/// plays it, so the counts depend on the seed alone. `None` if a thread panicked (the
/// engine does not).
fn count_playouts(
    game: &AnyGame,
    mover: Player,
    n: u64,
    seed: u64,
    threads: u64,
) -> Option<[u64; 3]> {
    let base = ChaCha8Rng::seed_from_u64(seed);
    let run = |range: std::ops::Range<u64>| -> [u64; 3] {
        each_game!(game, g => count_range(g, mover, range, &base))
    };
    let threads = threads.clamp(1, n.max(1));
    if threads == 1 {
        return Some(run(0..n));
    }
    let chunk = n.div_ceil(threads);
    let results: Vec<Option<[u64; 3]>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let range = (t * chunk).min(n)..((t + 1) * chunk).min(n);
                scope.spawn(move || run(range))
            })
            .collect();
        handles.into_iter().map(|h| h.join().ok()).collect()
    });
    let mut total = [0u64; 3];
    for counts in results {
        for (sum, c) in total.iter_mut().zip(counts?) {
            *sum += c;
        }
    }
    Some(total)
}

/// [`count_playouts`] of the playouts numbered `range`, on one thread: the engine's
/// `Playouts`, which copies the game once and reuses its history for every playout.
fn count_range<B: Board>(
    game: &EngineGame<B>,
    mover: Player,
    range: std::ops::Range<u64>,
    base: &ChaCha8Rng,
) -> [u64; 3] {
    let mut playouts = Playouts::new(game);
    let mut counts = [0u64; 3];
    for i in range {
        let mut rng = base.clone();
        rng.set_stream(i);
        let end = playouts.play(|moves| draw(&mut rng, moves)).end;
        let slot = match end.winner {
            Some(winner) if winner == mover => 0,
            None => 1,
            Some(_) => 2,
        };
        counts[slot] += 1;
    }
    counts
}

/// Plays ``n`` random playouts from ``start`` (a Game, whose history counts for the end
/// rules, or a Position or its notation, a fresh start) to the end of the game, each
/// move drawn uniformly from the legal pits, and returns ``(wins, draws, losses)`` from
/// the view of the player to move in ``start``. All in Rust, without the GIL, on
/// ``threads`` threads (1 to 256). Playout ``i`` uses stream ``i`` of the generator
/// seeded with ``seed``, so the counts depend on ``seed`` alone, not on ``threads``,
/// and ``playouts(game, 1, seed=s)`` plays the game of ``game.copy().playout(seed=s)``.
/// Without a seed one is drawn from the system. A game already over counts ``n`` times
/// its end.
///
/// >>> hus.playouts(hus.Game(), 1000, seed=1)
/// (504, 0, 496)
#[pyfunction]
#[pyo3(signature = (start, n, seed = None, threads = 1))]
fn playouts(
    py: Python<'_>,
    start: &Bound<'_, PyAny>,
    n: i64,
    seed: Option<i128>,
    threads: i64,
) -> PyResult<(u64, u64, u64)> {
    let game = game_of(start)?;
    let n = count_of(n, u64::MAX, "n")?;
    let threads = u64::try_from(threads)
        .ok()
        .filter(|t| (1..=MAX_THREADS).contains(t))
        .ok_or_else(|| {
            HusError::new_err(format!("threads must be 1 to {MAX_THREADS}, got {threads}"))
        })?;
    let seed = seed_of(seed)?;
    let mover = game.position().to_move();
    let [wins, draws, losses] = py
        .detach(move || count_playouts(&game, mover, n, seed, threads))
        .ok_or_else(|| HusError::new_err("a playout thread failed"))?;
    Ok((wins, draws, losses))
}

/// The observation of each of `items` (Games or Positions) as rows of bytes, for
/// ``hus.observation``: ``(bytes, rows, width)``, each item ``rows`` rows of ``2W``
/// bytes. Rows 0 and 1: the pits of ``seat`` (default: the player to move) and of the
/// other player, each in its owner's numbering. With ``counters``, row 2 has a 1 for
/// each of ``seat``'s pits whose move leads back to a position of the game (zeros when
/// ``seat`` is not to move), and row 3 the plies in a row without a capture in its
/// first byte (a Position counts as a game just started from it).
#[pyfunction]
#[pyo3(signature = (items, seat = None, counters = false))]
fn _observation<'py>(
    py: Python<'py>,
    items: Vec<Bound<'py, PyAny>>,
    seat: Option<i64>,
    counters: bool,
) -> PyResult<(Bound<'py, PyByteArray>, usize, usize)> {
    let seat = seat.map(player_of).transpose()?;
    let rows = if counters { 4 } else { 2 };
    let mut width = None;
    let mut out = Vec::new();
    for item in &items {
        let (position, game) = match item.cast::<PyGame>() {
            Ok(game) => {
                let game = game.borrow();
                (game.inner.position(), counters.then(|| game.inner.clone()))
            }
            Err(_) => {
                let position = position_of(item).map_err(|_| {
                    PyTypeError::new_err("observation needs Games, Positions or notation strings")
                })?;
                (position, counters.then(|| AnyGame::new(position)))
            }
        };
        let w = position.width();
        if *width.get_or_insert(w) != w {
            return Err(HusError::new_err(format!(
                "observations of one batch need one width, got {} and {w}",
                width.unwrap_or(w)
            )));
        }
        let me = seat.unwrap_or(position.to_move());
        for player in [me, me.other()] {
            out.extend(position.pits(player));
        }
        if let Some(game) = game {
            let mut repeats = vec![0u8; 2 * w];
            if game.position().to_move() == me {
                for pit in game.repeating_moves() {
                    repeats[pit] = 1;
                }
            }
            out.extend(repeats);
            let mut quiet = vec![0u8; 2 * w];
            quiet[0] = u8::try_from(game.quiet_plies()).unwrap_or(u8::MAX);
            out.extend(quiet);
        }
    }
    Ok((PyByteArray::new(py, &out), rows, width.unwrap_or(0)))
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
    m.add_function(wrap_pyfunction!(playouts, m)?)?;
    m.add_function(wrap_pyfunction!(_observation, m)?)?;
    m.add_function(wrap_pyfunction!(_move_report, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
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

"""Type stubs of the extension module `hus._hus` (python/src/lib.rs), re-exported by
`hus`. Pits are numbered in each owner's sowing order: 0..W-1 the front row,
W..2W-1 the back row; players are 0 and 1."""

from typing import Literal, Optional, Sequence, Union, final

__all__ = [
    "Position",
    "MoveReport",
    "Relay",
    "Capture",
    "Taken",
    "GameEnd",
    "Game",
    "perft",
    "playouts",
    "HusError",
    "RulesError",
    "NotationError",
    "SetupError",
    "IllegalMoveError",
    "GameOverError",
    "PRESETS",
    "MIN_WIDTH",
    "MAX_WIDTH",
    "MIN_SEEDS_TO_MOVE",
    "MAX_SOWN_PER_MOVE",
    "NO_CAPTURE_LIMIT",
    "MAX_PERFT_DEPTH",
    "__version__",
    "_observation",
    "_move_report",
]

PRESETS: tuple[str, str, str]
MIN_WIDTH: int
MAX_WIDTH: int
MIN_SEEDS_TO_MOVE: int
MAX_SOWN_PER_MOVE: int
NO_CAPTURE_LIMIT: int
MAX_PERFT_DEPTH: int
__version__: str

class HusError(ValueError):
    """The base of every error of the hus package."""

class RulesError(HusError):
    """An unknown preset or a width outside 8 to 32."""

class NotationError(HusError):
    """A string that is not a position in the one-line notation of RULES.md."""

class SetupError(HusError):
    """Pits that are not a position: wrong count, or too many seeds."""

class IllegalMoveError(HusError):
    """A pit that does not exist or holds fewer than two seeds; nothing was played."""

class GameOverError(HusError):
    """A move asked of a game that is over; nothing was played."""

@final
class Position:
    """A position: the rules, both players' pits and who is to move. Immutable,
    hashable; ``str()`` is its notation."""

    def __new__(cls, notation: str) -> Position:
        """Parses the one-line notation; raises NotationError."""
    @staticmethod
    def start(preset: str = "hus", width: int = 8) -> Position:
        """The starting position, player 0 to move; raises RulesError."""
    @staticmethod
    def from_pits(
        preset: str, width: int, player0: list[int], player1: list[int], to_move: int = 0
    ) -> Position:
        """A position from each player's 2W pits; raises RulesError or SetupError."""
    @property
    def preset(self) -> str:
        """``hus``, ``rulebook`` or ``mancala-world``."""
    @property
    def width(self) -> int:
        """The row width W."""
    @property
    def to_move(self) -> int:
        """The player to move."""
    def pits(self, player: int) -> list[int]:
        """``player``'s 2W pits in their own numbering."""
    def seeds(self, player: int, pit: int) -> int:
        """Seeds in one pit; IndexError for a pit that does not exist."""
    def seeds_of(self, player: int) -> int:
        """Seeds on ``player``'s side."""
    def total_seeds(self) -> int:
        """Seeds on the board."""
    def legal_moves(self) -> list[int]:
        """The pits the player to move may play, ascending."""
    def is_legal(self, pit: int) -> bool:
        """Whether the player to move may play ``pit``."""
    def play(self, pit: int) -> tuple[Position, MoveReport]:
        """The position after ``pit`` and the move's report; raises IllegalMoveError."""
    def after(self, pit: int) -> Position:
        """The position after ``pit`` (no report); raises IllegalMoveError."""
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __copy__(self) -> Position: ...
    def __deepcopy__(self, memo: object) -> Position: ...
    def __reduce__(self) -> tuple[type[Position], tuple[str]]: ...

@final
class Relay:
    """The last seed fell in an occupied pit with no capture; its seeds were lifted."""

    def __new__(cls, pit: int, seeds: int) -> Relay: ...
    def __eq__(self, other: object, /) -> bool: ...

    @property
    def kind(self) -> Literal["relay"]: ...
    @property
    def pit(self) -> int:
        """The pit lifted, in the mover's numbering."""
    @property
    def seeds(self) -> int:
        """The seeds lifted, the last one sown included."""

@final
class Taken:
    """One opponent pit emptied by a capture."""

    def __new__(cls, pit: int, seeds: int) -> Taken: ...
    def __eq__(self, other: object, /) -> bool: ...

    @property
    def pit(self) -> int:
        """The pit, in the opponent's numbering."""
    @property
    def seeds(self) -> int:
        """Seeds taken from it."""

@final
class Capture:
    """A capture."""

    def __new__(cls, landing: int, taken: list[Taken], own: int, sown: int, sown_from: int) -> Capture: ...
    def __eq__(self, other: object, /) -> bool: ...

    @property
    def kind(self) -> Literal["capture"]: ...
    @property
    def landing(self) -> int:
        """The front pit where the last seed landed (mover's numbering)."""
    @property
    def taken(self) -> list[Taken]:
        """The opponent's pits emptied, in the order they were taken."""
    @property
    def own(self) -> int:
        """Seeds lifted from the landing pit itself (``rulebook``; 0 otherwise)."""
    @property
    def sown(self) -> int:
        """Seeds sown: ``own`` plus everything taken."""
    @property
    def sown_from(self) -> int:
        """The pit the sowing of these seeds starts in (mover's numbering)."""

@final
class MoveReport:
    """Everything that happened in one move."""

    def __eq__(self, other: object, /) -> bool: ...

    @property
    def player(self) -> int:
        """The player who moved."""
    @property
    def pit(self) -> int:
        """The pit played, in the mover's numbering."""
    @property
    def sown(self) -> int:
        """Seeds placed in the move, every lap counted."""
    @property
    def captured(self) -> int:
        """Seeds taken from the opponent."""
    @property
    def truncated(self) -> bool:
        """Whether the 3000-seed rule stopped the move."""
    @property
    def events(self) -> list[Union[Relay, Capture]]:
        """Relays and captures in the order they happened."""
    @property
    def relays(self) -> list[Relay]: ...
    @property
    def captures(self) -> list[Capture]: ...

@final
class GameEnd:
    """How a game ended."""

    def __new__(cls, reason: str, winner: Optional[int] = None, double: bool = False) -> GameEnd: ...
    def __hash__(self) -> int: ...

    @property
    def reason(self) -> str:
        """``no-moves``, ``repetition``, ``no-capture-limit`` or ``fault``."""
    @property
    def winner(self) -> Optional[int]:
        """The winning player, or None for a draw."""
    @property
    def double(self) -> bool:
        """The loser has no seeds at all."""
    def __eq__(self, other: object, /) -> bool: ...

@final
class Game:
    """A game from its start, with the history the end rules need."""

    def __new__(
        cls,
        start: Union[Position, str, None] = None,
        *,
        preset: Optional[str] = None,
        width: Optional[int] = None,
        history: Optional[Sequence[Union[Position, str]]] = None,
    ) -> Game:
        """A game from ``start``; with ``history``, the positions played before it."""
    def __eq__(self, other: object, /) -> bool: ...
    def __setstate__(self, state: tuple[list[Position], Optional[int]]) -> None: ...
    @property
    def start(self) -> Position: ...
    @property
    def position(self) -> Position: ...
    @property
    def to_move(self) -> int: ...
    @property
    def plies(self) -> int: ...
    @property
    def quiet_plies(self) -> int:
        """Plies in a row without a capture."""
    @property
    def history(self) -> list[Position]:
        """Every position so far: the start first, the current one last."""
    @property
    def end(self) -> Optional[GameEnd]: ...
    @property
    def is_over(self) -> bool: ...
    @property
    def points(self) -> Optional[tuple[int, int]]:
        """Player 0's and player 1's points once the game is over."""
    def legal_moves(self) -> list[int]:
        """The legal pits; empty once the game is over."""
    def repeating_moves(self) -> list[int]:
        """The legal pits whose move leads back to a position of the game."""
    def play(self, pit: int) -> MoveReport:
        """Plays ``pit``; raises IllegalMoveError or GameOverError."""
    def playout(self, seed: Optional[int] = None) -> GameEnd:
        """Plays uniformly random legal moves to the end, in Rust."""
    def forfeit(self, loser: int) -> None:
        """Ends the game as lost by ``loser`` for a fault."""
    def copy(self) -> Game: ...
    def __copy__(self) -> Game: ...
    def __deepcopy__(self, memo: object) -> Game: ...

def perft(position: Position, depth: int) -> list[int]:
    """Move sequences of exactly 1..depth plies from ``position``; depth 0 to 30."""

def playouts(
    start: Union[Game, Position, str], n: int, seed: Optional[int] = None, threads: int = 1
) -> tuple[int, int, int]:
    """``(wins, draws, losses)`` of ``n`` random playouts for the player to move, in Rust."""

def _observation(
    items: Sequence[Union[Game, Position, str]], seat: Optional[int] = None, counters: bool = False
) -> tuple[bytearray, int, int]: ...
def _move_report(
    player: int,
    pit: int,
    sown: int,
    relays: int,
    captures: int,
    captured: int,
    truncated: bool,
    events: Sequence[Union[Relay, Capture]],
) -> MoveReport: ...

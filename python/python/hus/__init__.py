"""The Hus rules engine in Python: the `hus` referee's own engine (Rust), not a copy.

Positions (from and to the one-line notation of RULES.md), the legal moves, moves with
their reports (seeds sown, relays, captures), games with the end rules (no moves,
repetition, 200 plies without a capture) and each preset's scoring, perft, for the
presets ``hus``, ``rulebook`` and ``mancala-world`` at every width from 8 to 32.

>>> import hus
>>> game = hus.Game(preset="hus", width=8)
>>> report = game.play(7)
>>> report.sown, [relay.pit for relay in report.relays]
(11, [9, 12, 15])
>>> str(game.position)
'hus 8 1,1,1,0,2,2,2,0/3,0,3,3,0,3,3,0 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 1'

For searches: :func:`playouts` plays many random games in Rust and counts the
results; :func:`observation` turns games and positions into numpy arrays, one or a
batch at a time (needs numpy).

Also here: :mod:`hus.bot` (a protocol v1 bot from a ``choose(position)`` function),
:mod:`hus.openings` (the project's opening books and the openings file format) and
:mod:`hus.env` (a PettingZoo AEC environment and a Gymnasium wrapper; needs the
``env`` extra). docs/python.md has the whole guide.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

from ._hus import (
    MAX_PERFT_DEPTH,
    MAX_SOWN_PER_MOVE,
    MAX_WIDTH,
    MIN_SEEDS_TO_MOVE,
    MIN_WIDTH,
    NO_CAPTURE_LIMIT,
    PRESETS,
    Capture,
    Game,
    GameEnd,
    GameOverError,
    HusError,
    IllegalMoveError,
    MoveReport,
    NotationError,
    Position,
    Relay,
    RulesError,
    SetupError,
    Taken,
    __version__,
    _observation,
    perft,
    playouts,
)

if TYPE_CHECKING:
    import numpy as np


def observation(
    items: Union[Game, Position, str, Sequence[Union[Game, Position, str]]],
    *,
    seat: Optional[int] = None,
    counters: bool = False,
) -> np.ndarray:
    """The board of a Game or Position as a numpy ``uint8`` array seen from ``seat``'s
    side (default: the player to move): ``(2, 2W)``, row 0 that player's pits, row 1 the
    other's, each in its owner's numbering; for a list of them, a batch ``(N, 2, 2W)``
    (one width). With ``counters=True`` two rows more, ``(4, 2W)``: row 2 has a 1 for
    each of ``seat``'s pits whose move leads back to a position already in the game
    (the repetition rule: ``Game.repeating_moves()``; zeros when ``seat`` is not to
    move), and row 3 the plies in a row without a capture in its first column
    (``Game.quiet_plies``; the 200-ply rule). A Position counts as a game just started
    from it. Built in Rust; the environments' observations are this.

    >>> hus.observation(hus.Position.start("hus", 8))
    array([[0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2],
           [0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]], dtype=uint8)
    >>> hus.observation([hus.Game(), hus.Game()], counters=True).shape
    (2, 4, 16)
    """
    import numpy as np

    batched = not isinstance(items, (Game, Position, str))
    seq: Any = list(items) if batched else [items]  # type: ignore[arg-type]
    data, rows, width = _observation(seq, seat, counters)
    array = np.frombuffer(data, dtype=np.uint8).reshape(len(seq), rows, 2 * width)
    return array if batched else array[0]


__all__ = [
    "MAX_PERFT_DEPTH",
    "MAX_SOWN_PER_MOVE",
    "MAX_WIDTH",
    "MIN_SEEDS_TO_MOVE",
    "MIN_WIDTH",
    "NO_CAPTURE_LIMIT",
    "PRESETS",
    "Capture",
    "Game",
    "GameEnd",
    "GameOverError",
    "HusError",
    "IllegalMoveError",
    "MoveReport",
    "NotationError",
    "Position",
    "Relay",
    "RulesError",
    "SetupError",
    "Taken",
    "__version__",
    "observation",
    "perft",
    "playouts",
]

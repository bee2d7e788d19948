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

Also here: :mod:`hus.bot` (a protocol v1 bot from a ``choose(position)`` function) and
:mod:`hus.env` (a PettingZoo AEC environment and a Gymnasium wrapper; needs the
``env`` extra). docs/python.md has the whole guide.
"""

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
    perft,
)

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
    "perft",
]

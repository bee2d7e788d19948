"""A complete protocol v1 bot from one function: ``hus.bot.run(choose)``.

``choose(position)`` gets the position of each turn, seen from the bot's seat: the
bot is player 0 and to move (``position.pits(0)`` are its pits, ``position.pits(1)``
the opponent's, both in their owners' numbering, as PROTOCOL.md's ``turn`` gives them),
and returns the pit to play. Everything else of the protocol (PROTOCOL.md) is done
here: ``hello`` is answered with ``ready`` (after checking that the engine knows the
preset and width), every ``turn`` with a ``move``, each line flushed at once, unknown
messages and fields ignored, and the bot returns on ``bye`` or when stdin closes.

A whole bot::

    import hus.bot

    def choose(position):
        return max(position.legal_moves(), key=lambda pit: position.after(pit).seeds_of(0))

    hus.bot.run(choose, name="greedy")

Should ``choose`` raise or return a pit that is not legal, the bot says so on stderr
(with the traceback) and plays a random legal pit instead: a weak move rather than a
game lost by a fault. Each time it does, it also writes a line starting with
``hus-warning: `` (:data:`WARNING_PREFIX`) on stderr, which ``hus check-bot`` reports as
a warning. With ``strict=True`` there is no fallback: the error (or an
:class:`hus.IllegalMoveError` for a pit that is not legal) ends :func:`run`, so the bot
fails where the bug is.
"""

from __future__ import annotations

import json
import operator
import random
import sys
import traceback
from dataclasses import dataclass
from typing import IO, Any, Callable, Optional, Union

from ._hus import HusError, IllegalMoveError, Position

__all__ = ["WARNING_PREFIX", "Turn", "run"]

#: The start of a stderr line that ``hus check-bot`` reports as a warning (PROTOCOL.md,
#: "stderr"): the bot helper writes one each time it plays a fallback move.
WARNING_PREFIX = "hus-warning: "


@dataclass(frozen=True)
class Turn:
    """One ``turn`` message of PROTOCOL.md, for a ``choose(position, turn)`` function."""

    #: The game's number in the set, from 1.
    game: int
    #: Plies played so far in this game (0 for a game's first move).
    ply: int
    #: The position seen from the bot's seat: the bot is player 0, to move.
    position: Position
    #: The pits the bot may play, as the referee sent them.
    legal: list
    #: The opponent's last pit, in the opponent's numbering, or None.
    last: Optional[int]
    #: Milliseconds the bot has for this move.
    time_ms: int
    #: Milliseconds left on the opponent's clock (clock mode only), else None.
    opponent_time_ms: Optional[int]
    #: Whether the bot moved first in this game (from the ``game`` message).
    first: Optional[bool]


Choose = Union[Callable[[Position], int], Callable[[Position, Turn], int]]


def _log(name: str, *args: Any) -> None:
    print(f"[{name}]", *args, file=sys.stderr, flush=True)


def _warn(text: str) -> None:
    """One line ``hus check-bot`` reports as a warning."""
    print(WARNING_PREFIX + " ".join(text.split()), file=sys.stderr, flush=True)


class _Failed(Exception):
    """``choose`` failed on a turn: the reason, for the fallback's warning."""


def run(
    choose: Choose,
    *,
    name: str = "python-hus-bot",
    with_turn: bool = False,
    stdin: Optional[IO[str]] = None,
    stdout: Optional[IO[str]] = None,
    seed: Optional[int] = None,
    strict: bool = False,
) -> int:
    """Plays protocol v1 on ``stdin``/``stdout`` (the process's by default) until
    ``bye`` or the end of stdin, calling ``choose(position)`` for every turn (or
    ``choose(position, turn)`` with ``with_turn=True``, ``turn`` a :class:`Turn`).

    ``name`` is sent in ``ready``. ``seed`` seeds the random fallback move, played when
    ``choose`` raises or returns a pit that is not legal (with a ``hus-warning:`` line on
    stderr); with ``strict=True`` that error propagates instead (an
    :class:`hus.IllegalMoveError` for a pit that is not legal). Returns the exit status
    for ``sys.exit``: 0, or 1 when the referee's rules are ones the engine does not know
    (the bot then refuses to play, as PROTOCOL.md asks).
    """
    source = sys.stdin if stdin is None else stdin
    sink = sys.stdout if stdout is None else stdout
    fallback = random.Random(seed)
    preset: Optional[str] = None
    width: Optional[int] = None
    first: Optional[bool] = None

    def send(message: dict) -> None:
        sink.write(json.dumps(message, separators=(",", ":")) + "\n")
        sink.flush()

    for line in source:
        line = line.strip()
        if not line:
            continue
        try:
            message = json.loads(line)
        except ValueError:
            _log(name, "ignoring a line that is not JSON:", line[:200])
            continue
        if not isinstance(message, dict):
            continue
        kind = message.get("type")
        if kind == "hello":
            rules = message.get("rules")
            rules = rules if isinstance(rules, dict) else {}
            preset, width = rules.get("preset"), rules.get("width")
            try:
                Position.start(str(preset), int(width))  # type: ignore[arg-type]
            except (HusError, OverflowError, TypeError, ValueError) as err:
                _log(name, f"cannot play these rules: {err}")
                return 1
            send({"type": "ready", "name": name})
        elif kind == "game":
            first = message.get("first")
        elif kind == "turn":
            legal = message.get("legal")
            if not isinstance(legal, list) or not legal:
                _log(name, "a turn without legal pits:", line[:200])
                continue
            try:
                pit = _choose(choose, with_turn, message, preset, width, first, name, strict)
                if pit not in legal:
                    why = f"choose returned {pit!r}, not one of the legal pits {legal}"
                    if strict:
                        raise IllegalMoveError(why)
                    _log(name, why)
                    raise _Failed(why)
            except _Failed as failed:
                pit = fallback.choice(legal)
                _warn(
                    f"game {message.get('game')} ply {message.get('ply')}: {failed}; "
                    f"played the random legal pit {pit} instead"
                )
            send({"type": "move", "pit": pit})
        elif kind == "bye":
            break
    return 0


def _choose(
    choose: Choose,
    with_turn: bool,
    message: dict,
    preset: Optional[str],
    width: Optional[int],
    first: Optional[bool],
    name: str,
    strict: bool,
) -> int:
    """The pit ``choose`` picks for this turn. When the turn cannot be read or
    ``choose`` raises, that is said on stderr and raised as :class:`_Failed`, or with
    ``strict`` the error itself propagates."""
    try:
        position = Position.from_pits(
            str(preset), int(width), message["you"], message["opponent"]  # type: ignore[arg-type]
        )
    except (HusError, KeyError, OverflowError, TypeError, ValueError) as err:
        _log(name, f"cannot read this turn's pits: {err}")
        if strict:
            raise
        raise _Failed(f"cannot read this turn's pits: {err}") from None
    legal = message["legal"]
    if legal != position.legal_moves():
        _log(name, "the referee's legal pits differ from the engine's:", legal, position.legal_moves())
        _warn(f"the referee's legal pits {legal} differ from the engine's {position.legal_moves()}")
    try:
        if with_turn:
            turn = Turn(
                game=message.get("game", 0),
                ply=message.get("ply", 0),
                position=position,
                legal=legal,
                last=message.get("last"),
                time_ms=message.get("time_ms", 0),
                opponent_time_ms=message.get("opponent_time_ms"),
                first=first,
            )
            pit = choose(position, turn)  # type: ignore[call-arg]
        else:
            pit = choose(position)  # type: ignore[call-arg]
    except Exception as err:  # the bot's own code: report it and keep playing
        if strict:
            raise
        _log(name, "choose raised; playing a random legal pit:\n" + traceback.format_exc())
        raise _Failed(f"choose raised {type(err).__name__}: {err}") from None
    # Any integer will do (numpy's too), but True is not a pit.
    try:
        if isinstance(pit, bool):
            raise TypeError
        return operator.index(pit)
    except TypeError:
        why = f"choose returned {pit!r}, not a pit number"
        if strict:
            raise IllegalMoveError(why) from None
        _log(name, why)
        raise _Failed(why) from None

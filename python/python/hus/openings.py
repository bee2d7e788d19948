"""Opening books: positions to start games from (docs/openings.md).

The project's books ship with the package (:data:`BOOKS`, copies of the repository's
``openings/`` that the tests keep identical): ``book("hus-8")`` gives one as a list of
:class:`hus.Position`. :func:`read_openings` reads any file in the same format: one
opening per line, a position in the notation of RULES.md or ``moves`` and pits played
from the starting position, ``#`` starting a comment. Every position and move is the
engine's (``Position``, ``Game.play``); this module only splits lines.

>>> import hus.openings
>>> book = hus.openings.book("hus-8")
>>> len(book), book[0].preset, book[0].width
(64, 'hus', 8)
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence, Union

from ._hus import Game, HusError, Position

__all__ = ["BOOKS", "OpeningsError", "book", "read_openings", "openings_from_text", "resolve"]

_BOOK_DIR = Path(__file__).resolve().parent / "books"

#: The names of the shipped books: ``PRESET-WIDTH``, as in the repository's ``openings/``.
BOOKS = tuple(sorted(path.stem for path in _BOOK_DIR.glob("*.txt")))


class OpeningsError(HusError):
    """An openings file or book that cannot be used: the message names the file (or
    book) and, for a bad line, the line (from 1) and what is wrong with it."""


def openings_from_text(
    text: str, *, name: str = "<text>", preset: Optional[str] = None, width: Optional[int] = None
) -> list[Position]:
    """The openings of ``text`` in the file format of docs/openings.md, in order. With
    ``preset`` and ``width``, every opening must be of those rules (``moves`` lines
    start from their starting position; without them, from ``hus`` at 8 unless a
    position came first, whose rules they then take). ``name`` names the text in errors.
    """
    openings: list[Position] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        content = raw.split("#", 1)[0].strip()
        if not content:
            continue
        try:
            position = _line(content, preset, width)
        except HusError as err:
            raise OpeningsError(f"{name}: line {number}: {err}") from None
        if preset is None:
            preset, width = position.preset, position.width
        openings.append(position)
    if not openings:
        raise OpeningsError(
            f"{name}: the file holds no opening (one per line: a position in the notation of "
            "RULES.md, or `moves` and pits played from the starting position; `#` starts a comment)"
        )
    return openings


def _line(content: str, preset: Optional[str], width: Optional[int]) -> Position:
    words = content.split()
    if words[0] == "moves":
        game = Game(preset=preset or "hus", width=width or 8)
        if len(words) == 1:
            raise HusError("moves: no pits")
        for ply, word in enumerate(words[1:]):
            try:
                pit = int(word)
            except ValueError:
                raise HusError(f"moves: {word!r} is not a pit number") from None
            try:
                game.play(pit)
            except HusError as err:
                raise HusError(f"moves: pit {pit} cannot be played at ply {ply}: {err}") from None
            if game.end is not None:
                raise HusError(f"moves: the game ends at ply {ply} ({game.end.reason})")
        return game.position
    position = Position(content)
    if preset is not None and (position.preset, position.width) != (preset, width):
        raise HusError(
            f"the position is {position.preset} at width {position.width}, "
            f"but the games play {preset} at width {width}"
        )
    if not position.legal_moves():
        raise HusError(
            f"the game is already over there: player {position.to_move}, to move, "
            "has no pit with 2 or more seeds"
        )
    return position


def read_openings(
    path: Union[str, Path], *, preset: Optional[str] = None, width: Optional[int] = None
) -> list[Position]:
    """The openings of the file at ``path`` (:func:`openings_from_text`)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise OpeningsError(f"cannot read the openings file {path}: {err}") from None
    return openings_from_text(text, name=str(path), preset=preset, width=width)


def book(name: str) -> list[Position]:
    """The shipped book ``name`` (one of :data:`BOOKS`, such as ``"hus-8"``)."""
    if name not in BOOKS:
        raise OpeningsError(f"no book named {name!r}: the books are {', '.join(BOOKS)}")
    return read_openings(_BOOK_DIR / f"{name}.txt")


def resolve(
    openings: Union[str, Path, Sequence[Union[Position, str]]], preset: str, width: int
) -> list[Position]:
    """Openings as the environments take them: a book's name (:data:`BOOKS`), the path
    of an openings file, or a list of positions (or their notations); every one must
    be of ``preset`` at ``width`` and not over."""
    if isinstance(openings, (str, Path)):
        if isinstance(openings, str) and openings in BOOKS:
            positions = book(openings)
            name = f"book {openings}"
        else:
            positions = read_openings(openings, preset=preset, width=width)
            name = str(openings)
    else:
        positions = [p if isinstance(p, Position) else Position(p) for p in openings]
        name = "the openings"
        if not positions:
            raise OpeningsError("the openings are empty")
    for i, position in enumerate(positions):
        if (position.preset, position.width) != (preset, width):
            raise OpeningsError(
                f"{name}: opening {i} is {position.preset} at width {position.width}, "
                f"but the games play {preset} at width {width}"
            )
        if not position.legal_moves():
            raise OpeningsError(f"{name}: opening {i} is over: its player to move has no move")
    return positions

#!/usr/bin/env python3
"""The rules of Hus, as settled in RULINGS.md, in plain Python (standard library only).

This module is two things at once:

* a helper that Python bots can import (``greedy_bot.py`` does), and
* an independent cross-check of the Rust engine: it was written from the rules text
  alone, never from the engine's code, so the two can be diffed on many positions
  (see the ``perft`` and ``batch`` commands at the bottom).

It favours being obviously right over being fast.

Board model
-----------
A position holds, for each player, a list of 2W pit counts in that player's own
sowing order: pits ``0..W-1`` are the front (inner) row, ``W..2W-1`` the back (outer)
row, and sowing always goes from pit ``k`` to ``k+1`` (mod 2W). Across from my front
pit ``i`` stand the opponent's front pit ``W-1-i`` and, behind it, the opponent's back
pit ``W+i``. The same formulas hold for clockwise and anticlockwise presets; only the
starting layout differs.

Main API
--------
``start_position(preset, width)``  the position at the start of a game, player 0 to move
``legal_moves(pos)``               pits the player to move may choose
``play(pos, pit)``                 -> (new position, MoveReport); raises IllegalMove
``Game``                           a game with its history: applies the end rules
``game_end(pos, occurrences, quiet_plies)``  the end rules as a pure function
``perft(pos, depth)``              move-sequence counts per depth 1..depth
``parse(text)`` / ``to_notation(pos)``  the one-line notation shared with the engine

Notation: ``PRESET WIDTH P0FRONT/P0BACK P1FRONT/P1BACK TOMOVE``, e.g. the ``hus`` start
at width 8 is ``hus 8 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0``.

Command line
------------
``python3 hus_rules.py perft "NOTATION" DEPTH``  prints one count per line, depths 1..DEPTH
``python3 hus_rules.py batch``  reads ``NOTATION<TAB>PIT`` lines and answers each with
one JSON line ``{"after":..,"sown":..,"captures":..,"captured":..,"truncated":..}``,
or ``{"error":"illegal"}``.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import dataclass
from typing import Optional

# ---------------------------------------------------------------------------
# Constants from RULINGS.md
# ---------------------------------------------------------------------------

PRESETS = ("hus", "rulebook", "mancala-world")
#: Presets whose sowing goes clockwise; the rest go anticlockwise.
CLOCKWISE = {"hus": True, "rulebook": True, "mancala-world": False}
MIN_WIDTH, MAX_WIDTH = 8, 32
MIN_SEEDS_TO_MOVE = 2
#: A move stops once a sowing ends with this many seeds placed in the move.
MAX_SOWN = 3000
#: The game ends after this many plies in a row without a capture.
NO_CAPTURE_LIMIT = 200


class IllegalMove(ValueError):
    """The chosen pit does not exist or holds fewer than two seeds."""


@dataclass(frozen=True)
class Position:
    """Both players' pits and who is to move. Immutable, so it can be a dict key."""

    preset: str
    width: int
    pits: tuple  # (player 0's 2W counts, player 1's 2W counts), each a tuple of ints
    to_move: int  # 0 or 1

    def key(self) -> tuple:
        """What repetition compares: both players' pits and the side to move."""
        return (self.pits, self.to_move)

    def seeds(self, player: int) -> int:
        """Seeds on `player`'s side of the board."""
        return sum(self.pits[player])


@dataclass(frozen=True)
class MoveReport:
    """What happened during one move."""

    sown: int  # every seed placed: first lap, relays and capture sowings
    captures: int  # how many times the move captured
    captured: int  # seeds taken from the opponent's side in total
    truncated: bool  # stopped by the 3000-seed rule


@dataclass(frozen=True)
class GameEnd:
    """Why and how a game ended."""

    reason: str  # "no-moves", "repetition" or "no-capture-limit"
    winner: Optional[int]  # 0, 1, or None for a draw
    double: bool  # the loser had no seeds at all (only with reason "no-moves")

    def points(self, pos: Position) -> tuple:
        """(player 0's points, player 1's points) under the preset's scoring.

        hus: win 1, double win 2, draw 0. mancala-world: win 1 (no doubles).
        rulebook: each player scores the seeds on their side; holding every seed on
        the board scores double.
        """
        if pos.preset == "rulebook":
            factor = 2 if self.double else 1
            return (pos.seeds(0) * factor, pos.seeds(1) * factor)
        if self.winner is None:
            return (0, 0)
        win = 2 if (self.double and pos.preset == "hus") else 1
        return (win, 0) if self.winner == 0 else (0, win)


# ---------------------------------------------------------------------------
# Setup and legal moves
# ---------------------------------------------------------------------------


def check_preset_width(preset: str, width: int) -> None:
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r} (known: {', '.join(PRESETS)})")
    if not (isinstance(width, int) and MIN_WIDTH <= width <= MAX_WIDTH):
        raise ValueError(f"width must be {MIN_WIDTH}..{MAX_WIDTH}, got {width!r}")


def start_pits(preset: str, width: int) -> tuple:
    """One player's 2W pits at the start.

    Two seeds in every back pit, and two in each of the W/2 (rounded down) rightmost
    front pits as seen from the owner's seat: clockwise that is front pits
    W-W/2..W-1, anticlockwise front pits 0..W/2-1.
    """
    check_preset_width(preset, width)
    half = width // 2
    if CLOCKWISE[preset]:
        front = [0] * (width - half) + [2] * half
    else:
        front = [2] * half + [0] * (width - half)
    back = [2] * width
    return tuple(front + back)


def start_position(preset: str, width: int = 8) -> Position:
    """The start of a game; player 0 is whoever moves first."""
    side = start_pits(preset, width)
    return Position(preset, width, (side, side), 0)


def legal_moves(pos: Position) -> list:
    """Pits of the player to move holding at least two seeds, in increasing order."""
    return [k for k, n in enumerate(pos.pits[pos.to_move]) if n >= MIN_SEEDS_TO_MOVE]


# ---------------------------------------------------------------------------
# Playing a move
# ---------------------------------------------------------------------------


def _sow(ring: list, start: int, count: int) -> int:
    """Put `count` (>= 1) seeds one by one into ring[start], ring[start+1], ...

    wrapping round the ring; returns the index of the pit that got the last seed.
    Nothing is skipped: a pit that was just emptied gets seeds like any other.
    Whole laps are added in one go so that huge sowings stay cheap.
    """
    size = len(ring)
    laps, rest = divmod(count, size)
    if laps:
        for k in range(size):
            ring[k] += laps
    for k in range(rest):
        ring[(start + k) % size] += 1
    return (start + count - 1) % size


def _take_hus_run(opp: list, across: int, width: int) -> int:
    """The `hus` capture: empty the opponent's front pit `across` and the run beside it.

    The run goes along the opponent's front row (pits 0..W-1) in ONE direction, pit
    by pit, until an empty pit or the end of the row; it never wraps to the back
    row. It goes the way that takes more seeds; on a tie (including when neither
    neighbour holds seeds) toward the opponent's lower pit numbers. If only one
    neighbour holds seeds that way takes more, so it is chosen. Returns the seeds taken.
    """

    def run(step: int) -> list:
        pits, k = [], across + step
        while 0 <= k < width and opp[k] > 0:
            pits.append(k)
            k += step
        return pits

    lower, higher = run(-1), run(+1)
    if sum(opp[k] for k in higher) > sum(opp[k] for k in lower):
        taken_pits = [across] + higher
    else:
        taken_pits = [across] + lower
    taken = 0
    for k in taken_pits:
        taken += opp[k]
        opp[k] = 0
    return taken


def play(pos: Position, pit: int) -> tuple:
    """Play `pit` for the player to move; returns (new position, MoveReport).

    Raises IllegalMove (and leaves nothing changed) if the pit is not a legal choice.
    The game-end rules are not applied here: see Game / game_end.
    """
    width, preset = pos.width, pos.preset
    size = 2 * width
    mover = pos.to_move
    me = list(pos.pits[mover])
    opp = list(pos.pits[1 - mover])
    if not (isinstance(pit, int) and 0 <= pit < size and me[pit] >= MIN_SEEDS_TO_MOVE):
        raise IllegalMove(f"pit {pit!r} is not a legal move")

    sown = captures = captured = 0
    truncated = False

    # Step 2: lift every seed of the chosen pit and sow from the next pit.
    count, me[pit], start = me[pit], 0, (pit + 1) % size
    while True:
        last = _sow(me, start, count)
        sown += count
        # Step 5: a sowing has ended with 3000+ seeds placed in this move: stop here,
        # whatever lies in the landing pit. (Checked before looking at the landing pit.)
        if sown >= MAX_SOWN:
            truncated = True
            break
        # Step 3: the last seed fell in a pit that was empty: the move ends.
        if me[last] == 1:
            break
        across, behind = width - 1 - last, width + last  # valid when last < width
        if last < width and opp[across] > 0:
            # Step 4: capture (never optional, before relay).
            captures += 1
            if preset == "hus":
                taken = _take_hus_run(opp, across, width)
                # Captured seeds are sown starting IN the landing pit, whose own
                # seeds stay there.
                count, start = taken, last
            elif preset == "rulebook":
                taken = opp[across] + opp[behind]
                opp[across] = opp[behind] = 0
                # The landing pit's own seeds go along with the captured ones.
                count, me[last], start = taken + me[last], 0, (last + 1) % size
            else:  # mancala-world
                taken = opp[across] + opp[behind]  # the back pit may hold 0
                opp[across] = opp[behind] = 0
                # The landing pit keeps its seeds.
                count, start = taken, (last + 1) % size
            captured += taken
        else:
            # Relay: lift every seed of the landing pit, the last one with them.
            count, me[last], start = me[last], 0, (last + 1) % size

    pits = [None, None]
    pits[mover], pits[1 - mover] = tuple(me), tuple(opp)
    after = Position(preset, width, tuple(pits), 1 - mover)
    return after, MoveReport(sown, captures, captured, truncated)


# ---------------------------------------------------------------------------
# End of a game
# ---------------------------------------------------------------------------


def _by_seeds(pos: Position, reason: str) -> GameEnd:
    s0, s1 = pos.seeds(0), pos.seeds(1)
    winner = None if s0 == s1 else (0 if s0 > s1 else 1)
    return GameEnd(reason, winner, False)


def game_end(pos: Position, occurrences: int, quiet_plies: int) -> Optional[GameEnd]:
    """Apply the end rules, in RULINGS.md's order, after a move has been played.

    `occurrences`: how many times `pos` (pits and side to move) has occurred in this
    game, this time included, the starting position counting as an occurrence.
    `quiet_plies`: plies in a row without a capture, the last one included.
    Returns None while the game goes on.
    """
    # 1. The player to move cannot move: they lose; with no seeds at all, double.
    if not legal_moves(pos):
        loser = pos.to_move
        return GameEnd("no-moves", 1 - loser, pos.seeds(loser) == 0)
    # 2. Repetition: this position has now occurred for the second time.
    if occurrences >= 2:
        return _by_seeds(pos, "repetition")
    # 3. 200 plies in a row without a capture.
    if quiet_plies >= NO_CAPTURE_LIMIT:
        return _by_seeds(pos, "no-capture-limit")
    return None


class Game:
    """A game in progress: the position plus the history the end rules need."""

    def __init__(self, position: Position):
        self.position = position
        self.seen = Counter({position.key(): 1})  # the start counts as an occurrence
        self.quiet_plies = 0
        self.plies = 0
        self.end: Optional[GameEnd] = None

    def play(self, pit: int) -> MoveReport:
        if self.end is not None:
            raise IllegalMove("the game is over")
        self.position, report = play(self.position, pit)
        self.plies += 1
        self.quiet_plies = 0 if report.captures else self.quiet_plies + 1
        key = self.position.key()
        self.seen[key] += 1
        self.end = game_end(self.position, self.seen[key], self.quiet_plies)
        return report

    def legal_moves(self) -> list:
        return [] if self.end is not None else legal_moves(self.position)


# ---------------------------------------------------------------------------
# Perft
# ---------------------------------------------------------------------------


def perft(pos: Position, depth: int) -> list:
    """Counts of move sequences of exactly 1, 2, ..., depth plies from `pos`.

    `pos` is treated as the start of a game: it is the first occurrence of itself
    and no capture-less plies precede it. A finished game (any end rule, with the
    history along the line) has no moves.
    """
    counts = [0] * depth
    # Every position on the current line. Any repeat ends the game, so the line never
    # holds a key twice and a set is enough.
    line = {pos.key()}

    def walk(p: Position, ply: int, quiet: int) -> None:
        moves = legal_moves(p)
        counts[ply] += len(moves)
        if ply + 1 == depth:
            return  # the children are counted; no need to play them
        for pit in moves:
            child, report = play(p, pit)
            child_quiet = 0 if report.captures else quiet + 1
            key = child.key()
            if key in line or child_quiet >= NO_CAPTURE_LIMIT:
                continue  # repetition or 200 quiet plies: game over, no moves
            line.add(key)
            walk(child, ply + 1, child_quiet)  # rule 1 shows up as no legal moves
            line.remove(key)

    if depth > 0:
        walk(pos, 0, 0)
    return counts


# ---------------------------------------------------------------------------
# Notation
# ---------------------------------------------------------------------------


def _parse_row(text: str, width: int, what: str) -> list:
    parts = text.split(",")
    if len(parts) != width:
        raise ValueError(f"{what}: expected {width} pits, got {len(parts)}")
    row = []
    for p in parts:
        if not p.isdigit() or not p.isascii():
            raise ValueError(f"{what}: bad pit count {p!r}")
        row.append(int(p))
    return row


def parse(text: str) -> Position:
    """Parse `PRESET WIDTH P0FRONT/P0BACK P1FRONT/P1BACK TOMOVE` (single spaces)."""
    fields = text.strip("\r\n").split(" ")
    if len(fields) != 5:
        raise ValueError(f"expected 5 space-separated fields, got {len(fields)}")
    preset, width_text, side0, side1, to_move_text = fields
    if not (width_text.isascii() and width_text.isdigit()):
        raise ValueError(f"bad width {width_text!r}")
    width = int(width_text)
    check_preset_width(preset, width)
    sides = []
    for player, side in enumerate((side0, side1)):
        rows = side.split("/")
        if len(rows) != 2:
            raise ValueError(f"player {player}: expected FRONT/BACK")
        front = _parse_row(rows[0], width, f"player {player} front")
        back = _parse_row(rows[1], width, f"player {player} back")
        sides.append(tuple(front + back))
    if to_move_text not in ("0", "1"):
        raise ValueError(f"side to move must be 0 or 1, got {to_move_text!r}")
    return Position(preset, width, tuple(sides), int(to_move_text))


def to_notation(pos: Position) -> str:
    """The one-line notation of `pos`."""

    def side(pits: tuple) -> str:
        front, back = pits[: pos.width], pits[pos.width :]
        return ",".join(map(str, front)) + "/" + ",".join(map(str, back))

    return f"{pos.preset} {pos.width} {side(pos.pits[0])} {side(pos.pits[1])} {pos.to_move}"


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------


def _batch(stdin, stdout) -> None:
    """Answer each `NOTATION<TAB>PIT` line at once (flushed), so a caller may drive
    this in lockstep, one line in, one line out, without risking a pipe deadlock."""
    for line in stdin:
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        try:
            notation, pit_text = line.split("\t")
            pos = parse(notation)
            pit = int(pit_text)
        except ValueError as err:
            answer = {"error": "bad-input", "detail": str(err)}
        else:
            try:
                after, report = play(pos, pit)
            except IllegalMove:
                answer = {"error": "illegal"}
            else:
                answer = {
                    "after": to_notation(after),
                    "sown": report.sown,
                    "captures": report.captures,
                    "captured": report.captured,
                    "truncated": report.truncated,
                }
        stdout.write(json.dumps(answer, separators=(",", ":")) + "\n")
        stdout.flush()


USAGE = """usage:
  hus_rules.py perft "NOTATION" DEPTH   print move-sequence counts for depths 1..DEPTH
  hus_rules.py batch                    read NOTATION<TAB>PIT lines, write JSON results
  hus_rules.py start PRESET [WIDTH]     print the start position's notation"""


def main(argv: list) -> int:
    try:
        if len(argv) == 3 and argv[0] == "perft":
            for count in perft(parse(argv[1]), int(argv[2])):
                print(count)
            return 0
        if len(argv) == 1 and argv[0] == "batch":
            _batch(sys.stdin, sys.stdout)
            return 0
        if len(argv) in (2, 3) and argv[0] == "start":
            width = int(argv[2]) if len(argv) == 3 else 8
            print(to_notation(start_position(argv[1], width)))
            return 0
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(USAGE, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

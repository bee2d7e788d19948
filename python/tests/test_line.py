"""10,000 random games played through `import hus` end exactly as `hus line --json`
(the referee's own account of a line of moves) says: every position, every report
(seeds sown, relays, captures, the 3000-seed stop), the plies without a capture, the
repetitions, the end, the points and the seeds, and the refusal of an illegal pit."""

from __future__ import annotations

import collections
import json
import random
import re
import shlex
import subprocess
import unittest
from concurrent.futures import ThreadPoolExecutor
from typing import Optional

import hus
from support import REPO, hus_bin

GAMES = 10_000
# `hus line` takes one line a call; the calls run a few at a time.
WORKERS = 4


def event_json(event) -> dict:
    if event.kind == "relay":
        return {"kind": "relay", "pit": event.pit, "seeds": event.seeds}
    return {
        "kind": "capture",
        "landing": event.landing,
        "taken": [{"pit": t.pit, "seeds": t.seeds} for t in event.taken],
        "own": event.own,
        "sown": event.sown,
        "sown_from": event.sown_from,
    }


def package_json(start: hus.Position, pits: list) -> dict:
    """What `hus line --position START PITS... --json` prints, from the package alone."""
    game = hus.Game(start)
    moves = []
    error = None
    # The ply at which each position first occurred (the start: 0). A repeat ends the
    # game, so no position is ever seen a third time.
    first_seen = {start: 0}
    for ply, pit in enumerate(pits):
        player = game.to_move
        try:
            report = game.play(pit)
        except hus.GameOverError:
            # The engine says "the game is over"; `hus line` words it its own way.
            error = {"ply": ply, "pit": pit, "message": "the game is already over"}
            break
        except hus.IllegalMoveError as err:
            error = {"ply": ply, "pit": pit, "message": str(err)}
            break
        position = game.position
        repeats = first_seen.get(position)
        first_seen.setdefault(position, ply + 1)
        moves.append(
            {
                "ply": ply,
                "player": player,
                "pit": pit,
                "sown": report.sown,
                "events": [event_json(e) for e in report.events],
                "truncated": report.truncated,
                "position": str(position),
                "quiet_plies": game.quiet_plies,
                "repeats": repeats,
            }
        )
    end = game.end
    return {
        "start": str(start),
        "moves": moves,
        "plies": game.plies,
        "end": None
        if end is None
        else {
            "reason": end.reason,
            "winner": end.winner,
            "double": end.double,
            "points": list(game.points),
            "seeds": [game.position.seeds_of(0), game.position.seeds_of(1)],
        },
        "to_move": game.to_move,
        "legal": game.legal_moves(),
        "quiet_plies": game.quiet_plies,
        "error": error,
    }


def line_json(start: hus.Position, pits: list) -> dict:
    command = [hus_bin(), "line", "--json", "--position", str(start), *map(str, pits)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    expected_status = 1 if done.stdout and json.loads(done.stdout)["error"] else 0
    if done.returncode != expected_status:
        raise AssertionError(f"{shlex.join(command)} exited {done.returncode}: {done.stderr}")
    return json.loads(done.stdout)


def random_start(rng: random.Random) -> tuple[str, hus.Position]:
    """A start of one of four kinds: the starting position (most games); a sparse board;
    two walkers, which often end by repetition or the 200-ply rule; a crowded board,
    where the 3000-seed stop happens."""
    preset = rng.choice(hus.PRESETS)
    kind = rng.choices(["start", "sparse", "walkers", "crowded"], [75, 8, 10, 7])[0]
    if kind == "start":
        # Random games at width 32 last some 750 plies, at width 8 some 40: most games
        # are at 8 so that the 10,000 calls of `hus line` take well under a minute.
        band = rng.choices([(8, 8), (9, 16), (17, 32)], [80, 15, 5])[0]
        return kind, hus.Position.start(preset, rng.randint(*band))
    if kind == "crowded":
        width = rng.choice([8, 9, 10])
        n = 2 * width
        mine = [rng.randint(0, 12) for _ in range(n)]
        theirs = [rng.randint(0, 4) for _ in range(n)]
        while sum(mine) + sum(theirs) > 255:
            mine[rng.randrange(n)] = 0
        return kind, hus.Position.from_pits(preset, width, mine, theirs, 0)
    width = rng.choice([8, 8, 8, 9, 12, 16, 17, 24, 32])
    n = 2 * width
    sides = [[0] * n, [0] * n]
    for side in sides:
        if kind == "sparse":
            for _ in range(rng.randint(1, 4)):
                side[rng.randrange(n)] += rng.randint(1, 3)
        else:
            pit = rng.randrange(n)
            side[pit] = 2
            side[(pit + 1) % n] = rng.choice([0, 1, 1, 2])
            for _ in range(rng.randint(0, 2)):
                side[rng.randrange(n)] += 1
    return kind, hus.Position.from_pits(preset, width, sides[0], sides[1], rng.randint(0, 1))


def random_line(rng: random.Random, start: hus.Position) -> list:
    """Random legal pits to the end of the game; one game in ten ends its line instead
    with a pit that cannot be played (an empty or missing pit, or one past the end)."""
    game = hus.Game(start)
    pits = []
    spoil_at: Optional[int] = rng.randint(0, 60) if rng.random() < 0.1 else None
    while True:
        if spoil_at is not None and (game.plies == spoil_at or game.is_over):
            if game.is_over:
                pits.append(rng.randrange(2 * start.width))
            else:
                illegal = [p for p in range(2 * start.width + 1) if p not in game.legal_moves()]
                pits.append(rng.choice(illegal))
            return pits
        if game.is_over:
            return pits
        pit = rng.choice(game.legal_moves())
        game.play(pit)
        pits.append(pit)


def rules_md_lines() -> list:
    """The `hus line` commands of RULES.md's console blocks, as (start, pits)."""
    text = (REPO / "RULES.md").read_text()
    commands = re.findall(r"^\$ hus line (.*)$", text.replace("\\\n", " "), re.M)
    lines = []
    for command in commands:
        words = shlex.split(command)
        start = hus.Position.start("hus", 8)
        pits = []
        i = 0
        while i < len(words):
            word = words[i]
            if word == "--position":
                start = hus.Position(words[i + 1])
                i += 1
            elif word in ("--rules", "--width"):
                preset = words[i + 1] if word == "--rules" else start.preset
                width = int(words[i + 1]) if word == "--width" else start.width
                start = hus.Position.start(preset, width)
                i += 1
            elif word == "--last":
                i += 1
            elif word.isdigit():
                pits.append(int(word))
            i += 1
        lines.append((start, pits))
    return lines


class LineTest(unittest.TestCase):
    def test_random_games_end_as_hus_line_says(self):
        rng = random.Random(2026)
        games = []
        for _ in range(GAMES):
            kind, start = random_start(rng)
            games.append((kind, start, random_line(rng, start)))

        def check(game):
            kind, start, pits = game
            expected = line_json(start, pits)
            got = package_json(start, pits)
            return kind, start, pits, expected, got

        seen = collections.Counter()
        mismatches = []
        with ThreadPoolExecutor(WORKERS) as pool:
            for kind, start, pits, expected, got in pool.map(check, games):
                if got != expected:
                    mismatches.append((start, pits, expected, got))
                end = expected["end"]
                seen[end["reason"] if end else "not over"] += 1
                seen["error"] += expected["error"] is not None
                seen["truncated"] += any(m["truncated"] for m in expected["moves"])
                seen["capture"] += any(e["kind"] == "capture" for m in expected["moves"] for e in m["events"])
                seen[kind] += 1
        for start, pits, expected, got in mismatches[:3]:
            print(f"hus line --json --position '{start}' {' '.join(map(str, pits))}")
            for key in expected:
                if expected[key] != got[key]:
                    print(f"  {key}: hus line {expected[key]!r}\n  {key}: package  {got[key]!r}")
        self.assertEqual(len(mismatches), 0, f"{len(mismatches)} of {GAMES} games differ")
        # The games reached every end rule, the 3000-seed stop and refused pits.
        for what in ("no-moves", "repetition", "no-capture-limit", "truncated", "error", "capture"):
            self.assertGreater(seen[what], 0, f"no game had {what}: {seen}")
        self.assertEqual(sum(seen[k] for k in ("start", "sparse", "walkers", "crowded")), GAMES)

    def test_the_end_rule_examples_of_rules_md(self):
        lines = rules_md_lines()
        self.assertEqual(len(lines), 3)
        ends = []
        for start, pits in lines:
            expected = line_json(start, pits)
            self.assertEqual(package_json(start, pits), expected)
            ends.append((expected["end"]["reason"], expected["plies"]))
        self.assertEqual(ends, [("repetition", 32), ("repetition", 198), ("no-capture-limit", 200)])


if __name__ == "__main__":
    unittest.main()

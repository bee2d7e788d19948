"""hus.bot: the protocol helper line by line, and the five-line bot of docs/python.md
through `hus check-bot` and a `hus match` set."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
import tempfile
import unittest

import hus
import hus.bot
from support import REPO, hus_bin
from test_line import event_json

FIVE_LINE_BOT = REPO / "python" / "examples" / "five_line_bot.py"
# Allowances no healthy bot misses, even on a loaded machine (check-bot warns past half
# of the move time and a quarter of the start-up time): these tests check the protocol,
# not the speed.
GENEROUS = ["--move-time", "10s", "--ready-time", "30s"]
START = [0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]
HELLO = {
    "type": "hello",
    "protocol": 1,
    "rules": {"preset": "hus", "width": 8, "new_field": True},
    "time": {"mode": "per-move", "move_ms": 1000, "ready_ms": 10000},
    "games": 1,
    "line_limit": 65536,
}
GAME = {"type": "game", "game": 1, "first": True, "you": START, "opponent": START}
TURN = {
    "type": "turn",
    "game": 1,
    "ply": 0,
    "you": START,
    "opponent": START,
    "legal": list(range(4, 16)),
    "last": None,
    "time_ms": 1000,
}


def converse(choose, messages, **options):
    """Runs the bot on these messages (dicts, or raw strings); returns its status, the
    messages it wrote and its stderr."""
    lines = [m if isinstance(m, str) else json.dumps(m) for m in messages]
    stdin, stdout, stderr = io.StringIO("\n".join(lines) + "\n"), io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(stderr):
        status = hus.bot.run(choose, stdin=stdin, stdout=stdout, **options)
    return status, [json.loads(line) for line in stdout.getvalue().splitlines()], stderr.getvalue()


class ProtocolTest(unittest.TestCase):
    def test_ready_then_one_move_per_turn_until_bye(self):
        positions = []

        def choose(position):
            positions.append(position)
            return 7

        status, sent, stderr = converse(
            choose,
            [HELLO, "", "not json", {"type": "news"}, GAME, TURN, {"type": "bye"}, TURN],
            name="tester",
        )
        self.assertEqual(status, 0)
        self.assertEqual(sent, [{"type": "ready", "name": "tester"}, {"type": "move", "pit": 7}])
        self.assertEqual([str(p) for p in positions], [str(hus.Position.start("hus", 8))])
        self.assertIn("ignoring a line that is not JSON: not json", stderr)

    def test_the_position_is_seen_from_the_bots_seat(self):
        you = [1, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 0, 3, 0, 3, 3]
        opponent = [0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]
        turn = dict(TURN, ply=1, you=you, opponent=opponent, legal=[4, 5, 6, 7, 8, 9, 10, 12, 14, 15], last=11)
        turns = []
        status, sent, _ = converse(
            lambda position, t: turns.append(t) or position.legal_moves()[-1], [HELLO, GAME, turn], with_turn=True
        )
        self.assertEqual(sent[-1], {"type": "move", "pit": 15})
        (t,) = turns
        self.assertEqual((t.game, t.ply, t.last, t.time_ms, t.opponent_time_ms, t.first), (1, 1, 11, 1000, None, True))
        self.assertEqual((t.position.pits(0), t.position.pits(1), t.position.to_move), (you, opponent, 0))

    def test_a_failing_choose_plays_a_random_legal_pit(self):
        def broken(position):
            raise ZeroDivisionError("oops")

        for choose, words in (
            (broken, "ZeroDivisionError: oops"),
            (lambda p: 3, "choose returned 3, not one of the legal pits"),
            (lambda p: "7", "choose returned '7', not a pit number"),
            (lambda p: True, "choose returned True, not a pit number"),
        ):
            status, sent, stderr = converse(choose, [HELLO, GAME, TURN, TURN], seed=1)
            self.assertEqual(status, 0)
            self.assertEqual(len(sent), 3)
            for move in sent[1:]:
                self.assertIn(move["pit"], TURN["legal"])
            self.assertIn(words, stderr)

    def test_each_fallback_writes_a_warning_line_for_check_bot(self):
        _, sent, stderr = converse(lambda p: 3, [HELLO, GAME, TURN, dict(TURN, ply=2)], seed=1)
        warnings = [line for line in stderr.splitlines() if line.startswith(hus.bot.WARNING_PREFIX)]
        self.assertEqual(
            warnings,
            [
                f"hus-warning: game 1 ply {ply}: choose returned 3, not one of the legal pits "
                f"[4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]; played the random legal pit {move['pit']} instead"
                for ply, move in zip((0, 2), sent[1:])
            ],
        )

        def broken(position):
            raise ZeroDivisionError("oops")

        _, sent, stderr = converse(broken, [HELLO, GAME, TURN], seed=1)
        self.assertIn(
            f"hus-warning: game 1 ply 0: choose raised ZeroDivisionError: oops; played the random legal pit {sent[1]['pit']} instead\n",
            stderr,
        )
        _, _, stderr = converse(lambda p: 4, [HELLO, GAME, TURN])
        self.assertNotIn("hus-warning", stderr)

    def test_strict_lets_a_failing_choose_fail_the_bot(self):
        def broken(position):
            raise ZeroDivisionError("oops")

        with self.assertRaises(ZeroDivisionError):
            converse(broken, [HELLO, GAME, TURN], strict=True)
        for choose, message in (
            (lambda p: 3, "choose returned 3, not one of the legal pits [4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]"),
            (lambda p: "7", "choose returned '7', not a pit number"),
        ):
            with self.assertRaises(hus.IllegalMoveError) as caught:
                converse(choose, [HELLO, GAME, TURN], strict=True)
            self.assertEqual(str(caught.exception), message)
        status, sent, stderr = converse(lambda p: 4, [HELLO, GAME, TURN], strict=True)
        self.assertEqual((status, sent[-1], stderr), (0, {"type": "move", "pit": 4}, ""))

    def test_numpy_style_integers_are_pits(self):
        class Index:
            def __index__(self):
                return 9

        _, sent, _ = converse(lambda p: Index(), [HELLO, GAME, TURN])
        self.assertEqual(sent[-1], {"type": "move", "pit": 9})

    def test_unknown_rules_are_refused(self):
        hello = dict(HELLO, rules={"preset": "oware", "width": 6})
        status, sent, stderr = converse(lambda p: 4, [hello, GAME, TURN])
        self.assertEqual((status, sent), (1, []))
        self.assertIn('cannot play these rules: unknown rules preset "oware"', stderr)

    def test_a_turn_it_cannot_read_gets_a_random_legal_pit(self):
        for bad in (dict(TURN, you=[10**30] * 16), dict(TURN, you=[2] * 3), dict(TURN, opponent="pits")):
            status, sent, stderr = converse(lambda p: 4, [HELLO, GAME, bad], seed=2)
            self.assertEqual(status, 0)
            self.assertIn(sent[-1]["pit"], TURN["legal"])
            self.assertIn("cannot read this turn's pits", stderr)
        status, sent, stderr = converse(lambda p: 4, [dict(HELLO, rules={"preset": "hus", "width": 10**30})])
        self.assertEqual((status, sent), (1, []))

    def test_end_of_stdin_ends_the_bot(self):
        status, sent, _ = converse(lambda p: 4, [HELLO])
        self.assertEqual((status, sent), (0, [{"type": "ready", "name": "python-hus-bot"}]))


class FiveLineBotTest(unittest.TestCase):
    def test_the_bot_is_five_lines(self):
        self.assertEqual(len(FIVE_LINE_BOT.read_text().splitlines()), 5)

    def test_it_passes_check_bot(self):
        done = subprocess.run(
            [hus_bin(), "check-bot", f"{sys.executable} {FIVE_LINE_BOT}", "--seed", "7", *GENEROUS],
            capture_output=True,
            text=True,
            timeout=300,
        )
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("\nno problems, no warnings.\n", done.stdout)
        self.assertIn("ok       plays legal pits: every move was one of the legal pits", done.stdout)
        self.assertIn('ok       writes no warnings: no line of its stderr starts with "hus-warning:"', done.stdout)

    def test_the_greedy_example_passes_check_bot_on_a_wide_board(self):
        greedy = REPO / "python" / "examples" / "greedy_bot.py"
        done = subprocess.run(
            [
                hus_bin(), "check-bot", f"{sys.executable} {greedy} 1", "--seed", "3",
                "--rules", "mancala-world", "--width", "24", *GENEROUS,
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("\nno problems, no warnings.\n", done.stdout)

    def test_check_bot_warns_about_a_bot_whose_fallback_fired(self):
        with tempfile.TemporaryDirectory() as tmp:
            bot = f"{tmp}/sloppy_bot.py"
            with open(bot, "w") as f:
                # Every third turn, a pit that is never legal (pit 99 does not exist).
                f.write(
                    "import hus.bot\n"
                    "turns = iter(range(10**6))\n"
                    "def choose(position):\n"
                    "    return 99 if next(turns) % 3 == 0 else position.legal_moves()[0]\n"
                    "hus.bot.run(choose, name='sloppy', seed=1)\n"
                )
            done = subprocess.run(
                [hus_bin(), "check-bot", f"{sys.executable} {bot}", "--seed", "7", "--games", "2", *GENEROUS],
                capture_output=True,
                text=True,
                timeout=300,
            )
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("\nno problems, 1 warning.\n", done.stdout)
        self.assertIn("ok       plays legal pits: every move was one of the legal pits", done.stdout)
        line = next(line for line in done.stdout.splitlines() if line.startswith("warning  writes no warnings: "))
        self.assertRegex(
            line,
            r'^warning  writes no warnings: \d+ lines of its stderr start with "hus-warning:": game 1 ply 0: '
            r"choose returned 99, not one of the legal pits \[4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15\]; "
            r"played the random legal pit \d+ instead$",
        )

    def test_it_plays_a_set_against_the_random_mover(self):
        with tempfile.TemporaryDirectory() as logs:
            done = subprocess.run(
                [
                    hus_bin(), "match", f"{sys.executable} {FIVE_LINE_BOT}", f"{hus_bin()} random-bot --seed 2",
                    "--games", "4", "--seed", "2", "--rules", "rulebook", "--width", "12",
                    *GENEROUS, "--log-dir", logs, "--json",
                ],
                capture_output=True,
                text=True,
                timeout=300,
            )
            self.assertEqual(done.returncode, 0, done.stderr)
            summary = json.loads(done.stdout)
            self.assertEqual(summary["games_played"], 4)
            self.assertEqual(summary["bots"][0]["name"], "five-line-greedy")
            self.assertEqual([b["faults"] for b in summary["bots"]], [0, 0])
            self.assertEqual(summary["faults"], [])
            replay = subprocess.run([hus_bin(), "replay", summary["log"]], capture_output=True, text=True, timeout=300)
            self.assertEqual(replay.returncode, 0, replay.stdout + replay.stderr)
            # Every move of the log, played again by the package, does what the log says,
            # and every game ends as the log says.
            ends = []
            with open(summary["log"]) as log:
                for record in map(json.loads, log):
                    if record["type"] == "game-start":
                        game = hus.Game(record["position"])
                        players = {record["first"]: game.to_move, 1 - record["first"]: 1 - game.to_move}
                    elif record["type"] == "move":
                        report = game.play(record["pit"])
                        self.assertEqual(record["player"], report.player)
                        self.assertEqual(record["events"], [event_json(e) for e in report.events])
                        self.assertEqual((record["sown"], record["truncated"]), (report.sown, report.truncated))
                        self.assertEqual(record["position"], str(game.position))
                    elif record["type"] == "game-end":
                        self.assertEqual((record["reason"], record["plies"]), (game.end.reason, game.plies))
                        self.assertEqual(record["position"], str(game.position))
                        self.assertEqual(record["points"], [game.points[players[0]], game.points[players[1]]])
                        ends.append(record["reason"])
            self.assertEqual(len(ends), 4)


if __name__ == "__main__":
    unittest.main()

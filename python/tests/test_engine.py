"""The engine through `import hus`: perft against RULES.md's tables, positions, moves
with their reports, games and their ends, errors with the engine's messages."""

from __future__ import annotations

import copy
import pickle
import unittest

import hus
from support import REPO

START_8 = "hus 8 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0"


def perft_table() -> dict:
    """engine/tests/data/perft.tsv as {(preset, width): [count at depth 1, 2, ...]}."""
    table: dict = {}
    for line in (REPO / "engine/tests/data/perft.tsv").read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        preset, width, depth, count = line.split("\t")
        counts = table.setdefault((preset, int(width)), [])
        assert int(depth) == len(counts) + 1, line
        counts.append(int(count))
    return table


class PerftTest(unittest.TestCase):
    # Deep enough to take every move rule and end rule in, small enough for seconds:
    # at most this many nodes at the deepest depth checked.
    MAX_NODES = 20_000_000

    def test_perft_equals_the_tables_of_rules_md(self):
        table = perft_table()
        for preset in hus.PRESETS:
            for width in (8, 16, 24, 32):
                counts = table[(preset, width)]
                depth = max(d for d, c in enumerate(counts, 1) if c <= self.MAX_NODES)
                with self.subTest(preset=preset, width=width, depth=depth):
                    got = hus.perft(hus.Position.start(preset, width), depth)
                    self.assertEqual(got, counts[:depth])
        # Every other width of the table too, to the depth of a few hundred thousand nodes.
        for (preset, width), counts in table.items():
            depth = max(d for d, c in enumerate(counts, 1) if c <= 300_000)
            with self.subTest(preset=preset, width=width, depth=depth):
                self.assertEqual(hus.perft(hus.Position.start(preset, width), depth), counts[:depth])

    def test_perft_of_depth_zero_and_of_a_finished_game(self):
        self.assertEqual(hus.perft(hus.Position.start(), 0), [])
        over = hus.Position("hus 8 0,0,0,0,0,0,0,1/0,0,0,0,0,0,0,0 2,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0 0")
        self.assertEqual(hus.perft(over, 3), [0, 0, 0])

    def test_perft_refuses_a_depth_past_30(self):
        with self.assertRaises(ValueError) as caught:
            hus.perft(hus.Position.start(), 4_000_000_000)
        self.assertEqual(str(caught.exception), "depth must be 0 to 30, got 4000000000")
        self.assertEqual(hus.MAX_PERFT_DEPTH, 30)


class PositionTest(unittest.TestCase):
    def test_start_and_notation_round_trip(self):
        start = hus.Position.start("hus", 8)
        self.assertEqual(str(start), START_8)
        self.assertEqual(repr(start), f"Position('{START_8}')")
        self.assertEqual(hus.Position(START_8), start)
        self.assertEqual(hash(hus.Position(START_8)), hash(start))
        self.assertEqual((start.preset, start.width, start.to_move), ("hus", 8, 0))
        self.assertEqual(start.legal_moves(), list(range(4, 16)))
        self.assertEqual(start.pits(1), [0, 0, 0, 0] + [2] * 12)
        self.assertEqual((start.seeds_of(0), start.total_seeds(), start.seeds(0, 4)), (24, 48, 2))
        self.assertTrue(start.is_legal(4))
        self.assertFalse(start.is_legal(3))
        self.assertFalse(start.is_legal(99))
        mw = hus.Position.start("mancala-world", 8)
        self.assertEqual(mw.pits(0), [2, 2, 2, 2, 0, 0, 0, 0] + [2] * 8)

    def test_every_width_round_trips_through_the_notation(self):
        for preset in hus.PRESETS:
            for width in range(hus.MIN_WIDTH, hus.MAX_WIDTH + 1):
                start = hus.Position.start(preset, width)
                self.assertEqual(hus.Position(str(start)), start)
                self.assertEqual(len(start.pits(0)), 2 * width)
                self.assertEqual(start.seeds_of(1), 2 * width + 2 * (width // 2))

    def test_from_pits_is_the_bots_view(self):
        you = [1, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 0, 3, 0, 3, 3]
        pos = hus.Position.from_pits("hus", 8, you, you)
        self.assertEqual(str(pos), "hus 8 1,0,0,0,2,2,2,2/2,2,2,0,3,0,3,3 1,0,0,0,2,2,2,2/2,2,2,0,3,0,3,3 0")
        self.assertEqual(pos.legal_moves(), [4, 5, 6, 7, 8, 9, 10, 12, 14, 15])
        wide = hus.Position.from_pits("rulebook", 8, [200] + [0] * 15, [2] + [0] * 15, 1)
        self.assertEqual(wide.total_seeds(), 202)
        self.assertEqual(wide.to_move, 1)

    def test_play_returns_the_position_after_and_the_report(self):
        start = hus.Position(START_8)
        after, report = start.play(7)
        self.assertEqual(str(after), "hus 8 1,1,1,0,2,2,2,0/3,0,3,3,0,3,3,0 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 1")
        self.assertEqual(start.after(7), after)
        self.assertEqual(str(start), START_8, "positions are immutable")
        self.assertEqual((report.player, report.pit, report.sown, report.captured, report.truncated), (0, 7, 11, 0, False))
        self.assertEqual([(r.pit, r.seeds) for r in report.relays], [(9, 3), (12, 3), (15, 3)])
        self.assertEqual([(r.kind, r.pit, r.seeds) for r in report.events], [("relay", 9, 3), ("relay", 12, 3), ("relay", 15, 3)])
        self.assertEqual(report.captures, [])
        after2, report2 = after.play(4)
        self.assertEqual(str(after2), "hus 8 0,0,1,0,2,2,2,0/3,0,3,3,0,3,3,0 1,0,0,0,0,3,4,0/3,3,0,3,3,0,3,3 0")
        self.assertEqual(report2.player, 1)
        self.assertEqual(report2.sown, 13)
        (capture,) = report2.captures
        self.assertEqual(
            (capture.kind, capture.landing, [(t.pit, t.seeds) for t in capture.taken], capture.own, capture.sown, capture.sown_from),
            ("capture", 6, [(1, 1), (0, 1)], 0, 2, 6),
        )
        self.assertEqual([e.kind for e in report2.events], ["capture", "relay", "relay", "relay"])
        self.assertEqual(
            repr(report2),
            "MoveReport(player=1, pit=4, sown=13, relays=3, captures=1, captured=2, truncated=False)",
        )
        self.assertEqual(repr(capture), "Capture(landing=6, taken=[Taken(pit=1, seeds=1), Taken(pit=0, seeds=1)], own=0, sown=2, sown_from=6)")

    def test_the_3000_seed_stop(self):
        # 166 seeds at width 8 (a wide board): 375 relays, then the move stops at 3000.
        pos = hus.Position("hus 8 11,6,7,5,5,6,9,11/2,6,5,12,5,0,3,6 2,2,1,0,2,3,0,0/3,0,1,3,1,2,3,0 0")
        after, report = pos.play(5)
        self.assertEqual(
            repr(report),
            "MoveReport(player=0, pit=5, sown=3000, relays=375, captures=2, captured=10, truncated=True)",
        )
        self.assertEqual(str(after), "hus 8 1,6,3,6,10,15,5,2/1,19,6,13,9,12,1,0 0,0,0,0,0,0,0,0/3,0,1,3,1,2,3,0 1")

    def test_copies_and_pickles(self):
        start = hus.Position(START_8)
        self.assertEqual(copy.copy(start), start)
        self.assertEqual(copy.deepcopy(start), start)
        self.assertEqual(pickle.loads(pickle.dumps(start)), start)
        self.assertEqual(len({start, hus.Position(START_8), start.after(7)}), 2)


class ErrorTest(unittest.TestCase):
    def assertRaisesMessage(self, kind, message, call, *args):
        with self.assertRaises(kind) as caught:
            call(*args)
        self.assertEqual(str(caught.exception), message)
        self.assertIsInstance(caught.exception, hus.HusError)
        self.assertIsInstance(caught.exception, ValueError)

    def test_errors_carry_the_engines_messages(self):
        start = hus.Position(START_8)
        self.assertRaisesMessage(hus.IllegalMoveError, "pit 3 holds 0 seeds, a move needs at least 2", start.play, 3)
        self.assertRaisesMessage(hus.IllegalMoveError, "pit 16 does not exist (pits are 0 to 15)", start.after, 16)
        self.assertRaisesMessage(
            hus.RulesError,
            'unknown rules preset "chess" (expected hus, rulebook or mancala-world)',
            hus.Position.start, "chess", 8,
        )
        self.assertRaisesMessage(
            hus.RulesError, "row width 33 is out of range (expected 8 to 32)", hus.Position.start, "hus", 33
        )
        self.assertRaisesMessage(
            hus.NotationError,
            "expected 5 fields separated by spaces (PRESET WIDTH P0FRONT/P0BACK P1FRONT/P1BACK TOMOVE), found 1",
            hus.Position, "nonsense",
        )
        self.assertRaisesMessage(
            hus.NotationError,
            "player 0's front row has 7 pits, expected 8",
            hus.Position, "hus 8 0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0",
        )
        self.assertRaisesMessage(
            hus.SetupError, "player 1 has 3 pits, expected 16", hus.Position.from_pits, "hus", 8, [2] * 16, [2, 2, 2]
        )
        self.assertRaisesMessage(
            hus.SetupError,
            "player 0's pit 2 holds 256 seeds, expected 0 to 255",
            hus.Position.from_pits, "hus", 8, [0, 0, 256] + [0] * 13, [2] * 16,
        )
        self.assertRaisesMessage(
            hus.SetupError,
            "400 seeds on the board, at most 255 are supported",
            hus.Position.from_pits, "hus", 8, [200] + [0] * 15, [200] + [0] * 15,
        )
        with self.assertRaises(ValueError) as caught:
            start.pits(2)
        self.assertEqual(str(caught.exception), "player must be 0 or 1, got 2")
        with self.assertRaises(IndexError) as caught:
            start.seeds(0, 16)
        self.assertEqual(str(caught.exception), "pit 16 does not exist (pits are 0 to 15)")

    def test_a_refused_move_changes_nothing(self):
        game = hus.Game()
        with self.assertRaises(hus.IllegalMoveError):
            game.play(0)
        self.assertEqual((game.plies, str(game.position)), (0, START_8))


class GameTest(unittest.TestCase):
    def test_a_game_keeps_its_history_and_ends_by_no_moves(self):
        game = hus.Game(preset="hus", width=8)
        self.assertEqual((game.to_move, game.plies, game.end, game.points, game.is_over), (0, 0, None, None, False))
        game.play(7)
        game.play(4)
        self.assertEqual(game.plies, 2)
        self.assertEqual(game.quiet_plies, 0)
        self.assertEqual([str(p) for p in game.history][0], START_8)
        self.assertEqual(game.history[-1], game.position)
        self.assertEqual(len(game.history), 3)
        over = hus.Game("hus 8 0,0,0,0,0,0,0,1/0,0,0,0,0,0,0,0 2,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0 0")
        self.assertTrue(over.is_over)
        self.assertEqual((over.end.reason, over.end.winner, over.end.double), ("no-moves", 1, False))
        self.assertEqual(repr(over.end), "GameEnd(reason='no-moves', winner=1, double=False)")
        self.assertEqual(over.points, (0, 1))
        self.assertEqual(over.legal_moves(), [])
        with self.assertRaises(hus.GameOverError) as caught:
            over.play(0)
        self.assertEqual(str(caught.exception), "the game is over")

    def test_a_double_win_and_the_seed_scoring(self):
        # Player 0 takes the last seeds of player 1: a double win under hus, all the
        # seeds twice under rulebook.
        for preset, points in (("hus", (2, 0)), ("rulebook", (2 * 4, 0)), ("mancala-world", (1, 0))):
            game = hus.Game(hus.Position.from_pits(preset, 8, [2, 2] + [0] * 14, [0] * 16, 1))
            with self.subTest(preset=preset):
                self.assertEqual(game.end.reason, "no-moves")
                self.assertEqual((game.end.winner, game.end.double), (0, True))
                self.assertEqual(game.points, points)

    def test_forfeit_is_a_fault(self):
        game = hus.Game(preset="rulebook", width=8)
        game.forfeit(0)
        self.assertEqual((game.end.reason, game.end.winner), ("fault", 1))
        self.assertEqual(game.points, (0, 48))
        game.forfeit(1)
        self.assertEqual(game.end.winner, 1, "a finished game stays finished")

    def test_copies_are_independent(self):
        game = hus.Game()
        other = game.copy()
        other.play(7)
        self.assertEqual((game.plies, other.plies), (0, 1))
        self.assertEqual(copy.deepcopy(other).position, other.position)

    def test_start_and_rules_are_not_both_given(self):
        with self.assertRaises(ValueError) as caught:
            hus.Game(START_8, preset="hus")
        self.assertEqual(str(caught.exception), "give either a start position or a preset and width, not both")
        with self.assertRaises(TypeError):
            hus.Game(42)

    def test_playout_plays_random_legal_moves_to_the_end(self):
        ends = set()
        for seed in range(50):
            game = hus.Game(preset="hus", width=8)
            end = game.copy().playout(seed)
            again = game.copy()
            self.assertEqual(again.playout(seed), end, "the same seed plays the same game")
            self.assertTrue(again.is_over)
            # Replay the playout's moves one by one: every one was legal.
            replay = hus.Game(preset="hus", width=8)
            for before, after in zip(again.history, again.history[1:]):
                moves = [pit for pit in replay.legal_moves() if before.after(pit) == after]
                self.assertTrue(moves)
                replay.play(moves[0])
            self.assertEqual(replay.end, again.end)
            ends.add((again.plies, str(again.position)))
        self.assertGreater(len(ends), 40, "different seeds play different games")
        over = hus.Game("hus 8 0,0,0,0,0,0,0,1/0,0,0,0,0,0,0,0 2,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0 0")
        self.assertEqual(over.playout(1).reason, "no-moves")
        self.assertEqual(over.plies, 0)


if __name__ == "__main__":
    unittest.main()

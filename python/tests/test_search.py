"""What searches need, in Rust: `playouts`, `Game(start, history=...)`,
`Game.repeating_moves`, `observation`; and the package's own errors for negative pits,
players, depths, counts and seeds."""

from __future__ import annotations

import importlib.metadata
import re
import unittest

import numpy as np

import hus
from support import REPO
from test_line import rules_md_lines

START_8 = "hus 8 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0"


def repetition_game() -> hus.Game:
    """RULES.md's first end-rule example: a game that ends by repetition at ply 32."""
    start, pits = rules_md_lines()[0]
    game = hus.Game(start)
    for pit in pits:
        game.play(pit)
    assert (game.end.reason, game.plies) == ("repetition", 32), game.end
    return game


class PlayoutsTest(unittest.TestCase):
    def test_counts_add_up_and_depend_on_the_seed_alone(self):
        game = hus.Game()
        counts = hus.playouts(game, 1000, seed=1)
        self.assertEqual(counts, (504, 0, 496))
        self.assertEqual(hus.playouts(game, 1000, seed=1, threads=3), counts)
        self.assertEqual(hus.playouts(START_8, 1000, seed=1, threads=7), counts)
        self.assertEqual(hus.playouts(hus.Position(START_8), 1000, seed=1), counts)
        self.assertNotEqual(hus.playouts(game, 1000, seed=2), counts)
        self.assertEqual(sum(hus.playouts(game, 999)), 999)
        self.assertEqual(hus.playouts(game, 0, seed=1), (0, 0, 0))
        # The game itself is not played.
        self.assertEqual(game.plies, 0)

    def test_playout_i_is_the_game_of_playout_with_the_same_seed(self):
        # Playout 0 of a seed draws from the seed's stream 0: Game.playout's generator.
        game = hus.Game(preset="rulebook", width=9)
        game.play(game.legal_moves()[0])
        for seed in range(200):
            end = game.copy().playout(seed=seed)
            mover = game.to_move
            expected = (1, 0, 0) if end.winner == mover else (0, 1, 0) if end.winner is None else (0, 0, 1)
            self.assertEqual(hus.playouts(game, 1, seed=seed), expected, seed)

    def test_counts_are_from_the_movers_view(self):
        # Player 1 to move with no move at all: every playout is a loss for the mover.
        lost = hus.Position("hus 8 0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,3 1,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0 1")
        self.assertEqual(hus.playouts(lost, 5, seed=1), (0, 0, 5))
        over = hus.Game()
        over.forfeit(1)
        self.assertEqual(hus.playouts(over, 4, seed=1), (4, 0, 0))

    def test_a_games_history_counts_in_its_playouts(self):
        game = repetition_game()
        before = hus.Game(game.history[-4], history=game.history[:-4])
        alone = hus.Game(game.history[-4])
        # With its history, the walkers' game repeats within 3 plies; the bare position
        # walks on for 32 more before it repeats itself. Both are draws.
        ended, bare = before.copy(), alone.copy()
        self.assertEqual(ended.playout(seed=5), bare.playout(seed=5))
        self.assertEqual((ended.plies - before.plies, bare.plies), (3, 32))
        self.assertEqual(hus.playouts(before, 2000, seed=5), (0, 2000, 0))

    def test_errors_are_the_packages(self):
        for call, message in (
            (lambda: hus.playouts(hus.Game(), -1), "n must be 0 to 18446744073709551615, got -1"),
            (lambda: hus.playouts(hus.Game(), 1, threads=0), "threads must be 1 to 256, got 0"),
            (lambda: hus.playouts(hus.Game(), 1, threads=257), "threads must be 1 to 256, got 257"),
            (lambda: hus.playouts(hus.Game(), 1, seed=-1), "seed must be 0 to 2**64-1, got -1"),
            (lambda: hus.playouts(hus.Game(), 1, seed=2**64), "seed must be 0 to 2**64-1, got 18446744073709551616"),
            (lambda: hus.Game().playout(seed=-5), "seed must be 0 to 2**64-1, got -5"),
        ):
            with self.assertRaises(hus.HusError) as caught:
                call()
            self.assertEqual(str(caught.exception), message)
        with self.assertRaises(TypeError) as caught:
            hus.playouts(3, 1)
        self.assertEqual(str(caught.exception), "playouts needs a Game, a Position or a notation string")


class HistoryTest(unittest.TestCase):
    def test_a_game_from_a_history_judges_repetition_over_all_of_it(self):
        game = repetition_game()
        history = game.history
        resumed = hus.Game(history[-1], history=history[:-1])
        self.assertEqual(resumed, game)
        self.assertEqual((resumed.end, resumed.plies, resumed.start), (game.end, 32, history[0]))
        # One ply before the end: the move that repeats is known; without the history it
        # is not a repetition.
        last = game.history[-2]
        before = hus.Game(last, history=history[:-2])
        repeating = [pit for pit in before.legal_moves() if last.after(pit) == history[-1]]
        self.assertEqual(len(repeating), 1)
        self.assertIn(repeating[0], before.repeating_moves())
        self.assertEqual(hus.Game(last).repeating_moves(), [])
        before.play(repeating[0])
        self.assertEqual(before.end.reason, "repetition")
        self.assertEqual(before.quiet_plies, game.quiet_plies)

    def test_a_history_must_be_a_line_of_play(self):
        start = hus.Position(START_8)
        after = start.after(7)
        for history, message in (
            ([after], "position 1 of the history is not one move from the one before it: "
                      f"{after} -> {START_8}"),
            ([start, start], f"position 1 of the history is not one move from the one before it: {START_8} -> {START_8}"),
        ):
            with self.assertRaises(hus.HusError) as caught:
                hus.Game(start, history=history)
            self.assertEqual(str(caught.exception), message)
        game = repetition_game()
        with self.assertRaises(hus.HusError) as caught:
            hus.Game(game.history[-1].after(game.history[-1].legal_moves()[0]), history=game.history)
        self.assertEqual(str(caught.exception), "the history goes on after the game ended (repetition) at position 32")
        self.assertEqual(hus.Game(start, history=[]), hus.Game(start))
        self.assertEqual(hus.Game(after, history=[START_8]).history, [start, after])


class ObservationTest(unittest.TestCase):
    def test_the_board_from_either_seat_one_or_a_batch(self):
        game = hus.Game()
        game.play(7)
        pos = game.position
        mover = hus.observation(game)
        self.assertEqual(mover.dtype, np.uint8)
        self.assertEqual(mover.tolist(), [pos.pits(1), pos.pits(0)])
        self.assertEqual(hus.observation(game, seat=0).tolist(), [pos.pits(0), pos.pits(1)])
        self.assertEqual(hus.observation(pos).tolist(), mover.tolist())
        batch = hus.observation([game, hus.Position(START_8), START_8])
        self.assertEqual(batch.shape, (3, 2, 16))
        self.assertEqual(batch[0].tolist(), mover.tolist())
        self.assertEqual(hus.observation([]).shape, (0, 2, 0))
        with self.assertRaises(hus.HusError) as caught:
            hus.observation([hus.Game(), hus.Game(width=9)])
        self.assertEqual(str(caught.exception), "observations of one batch need one width, got 8 and 9")
        with self.assertRaises(ValueError) as caught:
            hus.observation(game, seat=2)
        self.assertEqual(str(caught.exception), "player must be 0 or 1, got 2")

    def test_counters_give_the_repeating_pits_and_the_quiet_plies(self):
        game = repetition_game()
        before = hus.Game(game.history[-2], history=game.history[:-2])
        seen = hus.observation(before, counters=True)
        self.assertEqual(seen.shape, (4, 16))
        flags = [pit for pit in range(16) if seen[2][pit]]
        self.assertEqual(flags, before.repeating_moves())
        self.assertEqual(seen[3].tolist(), [before.quiet_plies] + [0] * 15)
        # Seen by the player not to move: no pits of its own to flag.
        other = hus.observation(before, seat=1 - before.to_move, counters=True)
        self.assertEqual(other[2].tolist(), [0] * 16)
        fresh = hus.observation(hus.Position(START_8), counters=True)
        self.assertEqual(fresh[2:].tolist(), [[0] * 16, [0] * 16])


class ErrorsTest(unittest.TestCase):
    def test_negative_pits_players_and_depths_get_the_packages_errors(self):
        start = hus.Position(START_8)
        for call, error, message in (
            (lambda: start.after(-1), hus.IllegalMoveError, "pit -1 does not exist (pits are 0 to 15)"),
            (lambda: start.play(-3), hus.IllegalMoveError, "pit -3 does not exist (pits are 0 to 15)"),
            (lambda: hus.Game().play(-1), hus.IllegalMoveError, "pit -1 does not exist (pits are 0 to 15)"),
            (lambda: start.seeds(0, -1), IndexError, "pit -1 does not exist (pits are 0 to 15)"),
            (lambda: start.pits(-1), ValueError, "player must be 0 or 1, got -1"),
            (lambda: hus.Game().forfeit(-1), ValueError, "player must be 0 or 1, got -1"),
            (lambda: hus.perft(start, -1), hus.HusError, "depth must be 0 to 30, got -1"),
            (lambda: hus.perft(start, 31), hus.HusError, "depth must be 0 to 30, got 31"),
            (lambda: hus.GameEnd("resigned"), hus.HusError,
             'unknown end reason "resigned": expected no-moves, repetition, no-capture-limit or fault'),
        ):
            with self.assertRaises(error) as caught:
                call()
            self.assertEqual(str(caught.exception), message)
        self.assertFalse(start.is_legal(-1))


class VersionTest(unittest.TestCase):
    def test_the_version_is_the_workspaces(self):
        cargo = (REPO / "Cargo.toml").read_text()
        workspace_version = re.search(r'^version = "([^"]+)"', cargo, re.M).group(1)
        self.assertEqual(hus.__version__, workspace_version)
        self.assertEqual(importlib.metadata.version("hus"), workspace_version)


if __name__ == "__main__":
    unittest.main()

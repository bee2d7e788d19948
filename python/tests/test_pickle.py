"""Every type of the package, and both environments, through `pickle` (every protocol),
`copy` and a `multiprocessing` pool: what Ray, multiprocessing and checkpoints need."""

from __future__ import annotations

import copy
import multiprocessing
import pickle
import random
import unittest

import numpy as np

import hus
from hus.env import HusEnv, HusGymEnv

PROTOCOLS = range(pickle.HIGHEST_PROTOCOL + 1)


def capture_report() -> hus.MoveReport:
    """A report with a relay and a capture (rulebook: own seeds lifted too)."""
    rng = random.Random(1)
    for _ in range(200):
        game = hus.Game(preset="rulebook", width=8)
        while not game.is_over:
            report = game.play(rng.choice(game.legal_moves()))
            if report.captures and report.relays:
                return report
    raise AssertionError("no move with a relay and a capture found")


def samples() -> list:
    game = hus.Game(preset="mancala-world", width=9)
    game.playout(seed=4)
    forfeited = hus.Game()
    forfeited.play(7)
    forfeited.forfeit(1)
    report = capture_report()
    wide = hus.Game(preset="hus", width=32)
    wide.play(wide.legal_moves()[0])
    return [
        hus.Position.start("rulebook", 20),
        hus.Game(),
        game,
        forfeited,
        wide,
        game.end,
        forfeited.end,
        report,
        report.relays[0],
        report.captures[0],
        report.captures[0].taken[0],
    ]


def end_of_a_playout(seed: int) -> hus.GameEnd:
    """A pool worker's work: returns a GameEnd across processes."""
    return hus.Game().playout(seed=seed)


def played(seed: int) -> tuple:
    game = hus.Game()
    game.playout(seed=seed)
    return game, game.history[-1], hus.Position.start().play(7)[1]


class PickleTest(unittest.TestCase):
    def test_every_type_round_trips_equal_under_every_protocol(self):
        for value in samples():
            for protocol in PROTOCOLS:
                with self.subTest(type=type(value).__name__, protocol=protocol):
                    back = pickle.loads(pickle.dumps(value, protocol))
                    self.assertIs(type(back), type(value))
                    self.assertEqual(back, value)
                    self.assertEqual(repr(back), repr(value))
            self.assertEqual(copy.deepcopy(value), value)

    def test_a_game_comes_back_whole(self):
        game = hus.Game(preset="mancala-world", width=9)
        game.playout(seed=4)
        back = pickle.loads(pickle.dumps(game))
        self.assertEqual(
            (back.history, back.end, back.points, back.quiet_plies, back.start),
            (game.history, game.end, game.points, game.quiet_plies, game.start),
        )
        forfeited = hus.Game()
        forfeited.forfeit(0)
        back = pickle.loads(pickle.dumps(forfeited, 0))
        self.assertEqual((back.end.reason, back.end.winner, back.points), ("fault", 1, (0, 1)))
        # A game in progress goes on after unpickling as the original does.
        live = hus.Game()
        live.play(7)
        back = pickle.loads(pickle.dumps(live))
        self.assertEqual(back.play(4), live.play(4))
        self.assertEqual(back, live)

    def test_equality_means_the_same_thing(self):
        a, b = hus.Game(), hus.Game()
        self.assertEqual(a, b)
        a.play(7)
        self.assertNotEqual(a, b)
        b.play(7)
        self.assertEqual(a, b)
        b.forfeit(0)
        self.assertNotEqual(a, b)
        self.assertEqual(hus.GameEnd("no-moves", 1), hus.GameEnd("no-moves", winner=1, double=False))
        self.assertEqual(hash(hus.GameEnd("fault", 0)), hash(hus.GameEnd("fault", 0)))
        self.assertEqual(eval(repr(hus.Relay(pit=9, seeds=3)), vars(hus)), hus.Relay(9, 3))
        self.assertEqual(hus.Position.start().play(7)[1], hus.Position.start().play(7)[1])
        self.assertNotEqual(hus.Position.start().play(7)[1], hus.Position.start().play(6)[1])

    def test_a_pool_returns_games_and_ends(self):
        with multiprocessing.get_context("spawn").Pool(2) as pool:
            ends = pool.map(end_of_a_playout, range(6))
            games = pool.map(played, range(2))
        self.assertEqual(ends, [hus.Game().playout(seed=s) for s in range(6)])
        for seed, (game, last, report) in enumerate(games):
            here = hus.Game()
            here.playout(seed=seed)
            self.assertEqual((game, last, report), (here, here.position, hus.Position.start().play(7)[1]))

    def test_both_environments_pickle_mid_game(self):
        aec = HusEnv(openings="hus-8", counters=True)
        aec.reset(seed=3)
        aec.step(aec.game.legal_moves()[0])
        gym = HusGymEnv(seat=None, random_opening_plies=3)
        gym.reset(seed=3)
        for protocol in PROTOCOLS:
            back = pickle.loads(pickle.dumps(aec, protocol))
            self.assertEqual(back.game, aec.game)
            self.assertEqual(back.agent_selection, aec.agent_selection)
            for agent in aec.agents:
                np.testing.assert_array_equal(back.observe(agent)["observation"], aec.observe(agent)["observation"])
            back = pickle.loads(pickle.dumps(gym, protocol))
            self.assertEqual((back.game, back.player), (gym.game, gym.player))
            # The same random state: both go on alike.
            pit = gym.game.legal_moves()[0] if gym.game.to_move == gym.player else None
            if pit is not None:
                one, two = copy.deepcopy(gym), back
                a, b = one.step(pit), two.step(pit)
                np.testing.assert_array_equal(a[0], b[0])
                self.assertEqual(one.game, two.game)


if __name__ == "__main__":
    unittest.main()

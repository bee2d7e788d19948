"""The PettingZoo and Gymnasium environments: the libraries' own API checks, and what
an agent sees, may do and is paid."""

from __future__ import annotations

import contextlib
import io
import unittest
import warnings

import gymnasium
import numpy as np
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test

import hus
from hus.env import GYM_ID, HusEnv, HusGymEnv, mover_view


def quietly(call, *args, **kwargs):
    """Runs a checker without its progress lines and expected warnings (an AEC
    environment with action masks has Dict observations, which api_test remarks on)."""
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call(*args, **kwargs)


class PettingZooTest(unittest.TestCase):
    def test_api_test_passes_for_every_preset_and_board(self):
        for preset in hus.PRESETS:
            for width in (8, 17, 32):
                with self.subTest(preset=preset, width=width):
                    quietly(api_test, HusEnv(preset=preset, width=width), num_cycles=300)

    def test_a_whole_game_pays_the_points(self):
        env = HusEnv(preset="hus", width=8)
        env.reset(seed=3)
        rng = np.random.default_rng(3)
        game = hus.Game()
        final = {}
        for agent in env.agent_iter():
            observation, reward, termination, truncation, info = env.last()
            if termination or truncation:
                final[agent] = reward
                env.step(None)
                continue
            me = int(agent[-1])
            self.assertEqual(agent, f"player_{game.to_move}")
            self.assertEqual(observation["observation"].tolist(), [game.position.pits(me), game.position.pits(1 - me)])
            self.assertEqual(np.flatnonzero(observation["action_mask"]).tolist(), game.legal_moves())
            other = env.observe(f"player_{1 - me}")
            self.assertEqual(other["action_mask"].sum(), 0, "only the agent to move has legal actions")
            pit = int(rng.choice(np.flatnonzero(observation["action_mask"])))
            game.play(pit)
            env.step(pit)
        self.assertTrue(game.is_over)
        points = game.points
        self.assertEqual(final, {"player_0": points[0] - points[1], "player_1": points[1] - points[0]})
        self.assertEqual(env.agents, [])
        self.assertIn(abs(points[0] - points[1]), (1, 2))

    def test_an_illegal_action_loses_by_a_fault(self):
        env = HusEnv(preset="rulebook", width=8)
        env.reset()
        env.step(0)  # pit 0 is empty at the start
        self.assertEqual(env.terminations, {"player_0": True, "player_1": True})
        self.assertEqual(env.rewards, {"player_0": -48, "player_1": 48})
        self.assertEqual(env.infos["player_0"], {"fault": 0})
        self.assertEqual(env.game.end.reason, "fault")

    def test_a_start_position_and_rendering(self):
        start = "mancala-world 8 2,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0 2,1,0,0,0,0,0,0/0,0,0,0,0,0,0,0 1"
        env = HusEnv(start=start, render_mode="ansi")
        env.reset()
        self.assertEqual(env.agent_selection, "player_1")
        self.assertEqual(
            env.render().splitlines(),
            [
                "player 1 back    0   0   0   0   0   0   0   0",
                "player 1 front   2   1   0   0   0   0   0   0",
                "player 0 front   0   0   0   0   0   0   0   2",
                "player 0 back    0   0   0   0   0   0   0   0",
                start,
            ],
        )
        with self.assertRaises(ValueError) as caught:
            HusEnv(render_mode="rgb_array")
        self.assertEqual(str(caught.exception), "render_mode must be one of ansi, human or None, got 'rgb_array'")


class GymnasiumTest(unittest.TestCase):
    def test_check_env_passes_for_every_preset_and_board(self):
        for preset in hus.PRESETS:
            for width in (8, 17, 32):
                for seat in (0, 1, None):
                    with self.subTest(preset=preset, width=width, seat=seat):
                        env = gymnasium.make(GYM_ID, preset=preset, width=width, seat=seat)
                        quietly(check_env, env.unwrapped)

    def test_the_opponent_sees_its_own_seat_and_the_agent_is_paid_the_points(self):
        seen = []

        def first_legal(position):
            seen.append(position)
            return position.legal_moves()[0]

        env = HusGymEnv(preset="hus", width=8, opponent=first_legal, seat=1)
        observation, info = env.reset(seed=5)
        # The opponent (player 0) moved first: its first legal pit, 4, from the start.
        self.assertEqual([str(p) for p in seen], [str(hus.Position.start())])
        game = hus.Game()
        game.play(4)
        self.assertEqual(observation.tolist(), [game.position.pits(1), game.position.pits(0)])
        self.assertEqual(np.flatnonzero(info["action_mask"]).tolist(), game.legal_moves())
        total = 0.0
        terminated = False
        while not terminated:
            pit = game.legal_moves()[-1]
            game.play(pit)
            views = []
            if not game.is_over:
                views.append(mover_view(game.position))
                game.play(views[0].legal_moves()[0])
            asked = len(seen)
            observation, reward, terminated, truncated, info = env.step(pit)
            self.assertEqual(seen[asked:], views)
            self.assertFalse(truncated)
            self.assertEqual(observation.tolist(), [game.position.pits(1), game.position.pits(0)])
            total += reward
        self.assertEqual(total, game.points[1] - game.points[0])
        self.assertEqual(env.action_masks().sum(), 0)
        self.assertEqual(len(seen), (game.plies + 1) // 2)
        with self.assertRaises(RuntimeError):
            env.step(0)

    def test_illegal_pits_lose_for_either_side(self):
        env = HusGymEnv(preset="hus", width=8, seat=0)
        env.reset(seed=1)
        _, reward, terminated, _, info = env.step(3)
        self.assertEqual((reward, terminated, info["fault"]), (-1.0, True, 3))
        cheat = HusGymEnv(preset="hus", width=8, seat=0, opponent=lambda position: 99)
        cheat.reset(seed=1)
        _, reward, terminated, _, info = cheat.step(7)
        self.assertEqual((reward, terminated, info["opponent_fault"]), (1.0, True, 99))

    def test_mover_view_puts_the_player_to_move_first(self):
        after = hus.Position.start().after(7)
        view = mover_view(after)
        self.assertEqual((view.to_move, view.pits(0), view.pits(1)), (0, after.pits(1), after.pits(0)))
        with self.assertRaises(ValueError) as caught:
            HusGymEnv(seat=2)
        self.assertEqual(str(caught.exception), "seat must be 0, 1 or None (random), got 2")


if __name__ == "__main__":
    unittest.main()

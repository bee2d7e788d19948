"""The PettingZoo and Gymnasium environments: the libraries' own API checks, and what
an agent sees, may do and is paid."""

from __future__ import annotations

import contextlib
import io
import tempfile
import unittest
import warnings
from pathlib import Path

import gymnasium
import numpy as np
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test

import hus
import hus.openings
from hus.env import GYM_ID, HusEnv, HusGymEnv, mover_view
from support import REPO


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



class EpisodesTest(unittest.TestCase):
    def test_reset_options_start_openings_and_random_plies_in_both(self):
        book = hus.openings.book("hus-8")
        start = "hus 8 1,1,1,0,2,2,2,0/3,0,3,3,0,3,3,0 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 1"
        for make in (lambda **kw: HusEnv(**kw), lambda **kw: HusGymEnv(seat=None, **kw)):
            env = make()
            env.reset(seed=1, options={"start": start})
            # (The Gymnasium environment's opponent may have moved from it.)
            self.assertEqual(str(env.game.start), start)
            env.reset(seed=1, options={"start": hus.Position(start), "random_opening_plies": 0})
            self.assertEqual(str(env.game.start), start)
            # A book by name, for one episode: every start is one of its openings.
            starts = set()
            for seed in range(20):
                env.reset(seed=seed, options={"openings": "hus-8"})
                self.assertIn(env.game.start, book)
                starts.add(str(env.game.start))
            self.assertGreater(len(starts), 10)
            # The environment's own book and random plies; the same seed, the same game.
            env = make(openings="hus-8", random_opening_plies=4)
            env.reset(seed=7)
            first = (env.game.start, env.game.history[:5])
            self.assertIn(env.game.start, book)
            self.assertGreaterEqual(env.game.plies, 4)
            env.reset(seed=8)
            self.assertNotEqual((env.game.start, env.game.history[:5]), first)
            env.reset(seed=7)
            self.assertEqual((env.game.start, env.game.history[:5]), first)
            # Without a seed, episodes differ even against a deterministic opponent.
            env = make(random_opening_plies=2)
            env.reset(seed=1)
            seen = set()
            for _ in range(30):
                env.reset()
                seen.add(tuple(map(str, env.game.history[:3])))
            self.assertGreater(len(seen), 5)

    def test_openings_from_a_file_a_list_and_their_errors(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "book.txt"
            path.write_text("# two openings\nmoves 7 4\nmoves 6  # after one pit\n")
            env = HusGymEnv(openings=str(path))
            starts = {str(env.reset(seed=s) and env.game.start) for s in range(10)}
            self.assertEqual(
                starts,
                {str(hus.Position.start().after(7).after(4)), str(hus.Position.start().after(6))},
            )
            path.write_text("moves 7 3\n")
            with self.assertRaises(hus.openings.OpeningsError) as caught:
                HusEnv(openings=str(path))
            self.assertEqual(
                str(caught.exception),
                f"{path}: line 1: moves: pit 3 cannot be played at ply 1: pit 3 holds 0 seeds, a move needs at least 2",
            )
        env = HusEnv(openings=[hus.Position.start().after(5)])
        env.reset(seed=1)
        self.assertEqual(env.game.start, hus.Position.start().after(5))
        for openings, message in (
            ("rulebook-8", "book rulebook-8: opening 0 is rulebook at width 8, but the games play hus at width 8"),
            ("no-such-book.txt", "cannot read the openings file no-such-book.txt: [Errno 2] No such file or directory: 'no-such-book.txt'"),
            ([], "the openings are empty"),
        ):
            with self.assertRaises(hus.openings.OpeningsError) as caught:
                HusGymEnv(openings=openings)
            self.assertEqual(str(caught.exception), message)
        with self.assertRaises(hus.HusError) as caught:
            HusEnv().reset(options={"start": hus.Position.start("hus", 9)})
        self.assertEqual(str(caught.exception), "the start is hus at width 9, but this environment plays hus at width 8")
        with self.assertRaises(ValueError) as caught:
            HusEnv(random_opening_plies=-1)
        self.assertEqual(str(caught.exception), "random_opening_plies must be 0 or more, got -1")

    def test_the_shipped_books_are_the_repositorys(self):
        self.assertEqual(hus.openings.BOOKS, ("hus-8", "mancala-world-8", "rulebook-8"))
        for name in hus.openings.BOOKS:
            shipped = Path(hus.openings.__file__).parent / "books" / f"{name}.txt"
            self.assertEqual(shipped.read_bytes(), (REPO / "openings" / f"{name}.txt").read_bytes(), name)
            self.assertEqual(len(hus.openings.book(name)), 64)

    def test_seeded_action_sampling_is_reproducible(self):
        def episode(env):
            _, info = env.reset(seed=11)
            actions = []
            done = False
            while not done:
                action = int(env.action_space.sample(info["action_mask"]))
                actions.append(action)
                _, _, terminated, truncated, info = env.step(action)
                done = terminated or truncated
            return actions

        self.assertEqual(episode(gymnasium.make(GYM_ID, seat=None)), episode(gymnasium.make(GYM_ID, seat=None)))
        aec = HusEnv()
        runs = []
        for _ in range(2):
            aec.reset(seed=4)
            actions = []
            for agent in aec.agent_iter():
                observation, _, termination, truncation, _ = aec.last()
                action = None if termination or truncation else int(aec.action_space(agent).sample(observation["action_mask"]))
                actions.append(action)
                aec.step(action)
            runs.append(actions)
        self.assertEqual(runs[0], runs[1])


class StrictTest(unittest.TestCase):
    def test_illegal_action_raise_refuses_and_changes_nothing(self):
        for action, message in (
            (99, "action 99 is not in the action space Discrete(16): pits are 0 to 15"),
            (-1, "action -1 is not in the action space Discrete(16): pits are 0 to 15"),
            (2.5, "action 2.5 is not in the action space Discrete(16): pits are 0 to 15"),
            (0, "pit 0 holds 0 seeds, a move needs at least 2"),
        ):
            gym = HusGymEnv(illegal_action="raise")
            gym.reset(seed=1)
            aec = HusEnv(illegal_action="raise")
            aec.reset(seed=1)
            for env in (gym, aec):
                with self.assertRaises(hus.IllegalMoveError) as caught:
                    env.step(action)
                self.assertEqual(str(caught.exception), message)
                self.assertEqual((env.game.plies, env.game.end), (0, None))
        aec.step(np.int64(7))
        self.assertEqual(aec.game.plies, 1)
        cheat = HusGymEnv(opponent=lambda position: 99, illegal_action="raise")
        cheat.reset(seed=1)
        with self.assertRaises(hus.IllegalMoveError) as caught:
            cheat.step(7)
        self.assertEqual(str(caught.exception), "action 99 is not in the action space Discrete(16): pits are 0 to 15")
        with self.assertRaises(ValueError) as caught:
            HusEnv(illegal_action="ignore")
        self.assertEqual(str(caught.exception), "illegal_action must be 'lose' or 'raise', got 'ignore'")

    def test_lose_is_the_default_for_actions_outside_the_space_too(self):
        for action in (99, -1, 2.5):
            env = HusGymEnv(seat=0)
            env.reset(seed=1)
            _, reward, terminated, _, info = env.step(action)
            self.assertEqual((reward, terminated, info["fault"], env.game.end.reason), (-1.0, True, action, "fault"))


class CountersTest(unittest.TestCase):
    def test_counters_observations_in_both_and_their_spaces(self):
        gym = HusGymEnv(counters=True, seat=0)
        observation, _ = gym.reset(seed=2)
        self.assertEqual(gym.observation_space.shape, (4, 16))
        self.assertIn(observation, gym.observation_space)
        np.testing.assert_array_equal(observation, hus.observation(gym.game, seat=0, counters=True))
        aec = HusEnv(counters=True)
        aec.reset(seed=2)
        aec.step(7)
        seen = aec.observe("player_1")["observation"]
        np.testing.assert_array_equal(seen, hus.observation(aec.game, seat=1, counters=True))
        self.assertEqual(seen[3][0], 1)
        self.assertEqual(aec.observation_space("player_0")["observation"].shape, (4, 16))
        quietly(check_env, HusGymEnv(counters=True, seat=None, openings="hus-8", random_opening_plies=2))
        quietly(api_test, HusEnv(counters=True, openings="hus-8", random_opening_plies=2), num_cycles=100)


def sample_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """docs/python.md's sampler for vector environments: a legal pit per environment, and
    pit 0 where the mask is all zeros (the step after a game's end, whose action the
    next-step autoreset ignores)."""
    return np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks])


class VectorTest(unittest.TestCase):
    def test_an_async_vector_env_with_the_documented_sampler(self):
        envs = gymnasium.vector.AsyncVectorEnv([lambda: gymnasium.make(GYM_ID, seat=None) for _ in range(3)])
        try:
            rng = np.random.default_rng(1)
            _, infos = envs.reset(seed=1)
            finished = np.zeros(3, dtype=bool)
            games = 0
            for _ in range(300):
                masks = infos["action_mask"]
                # All zeros exactly on the step after a game ended: there the naive
                # rng.choice(np.flatnonzero(mask)) raises.
                np.testing.assert_array_equal(masks.sum(axis=1) == 0, finished)
                _, rewards, terminated, truncated, infos = envs.step(sample_legal(masks, rng))
                finished = terminated | truncated
                games += int(finished.sum())
                self.assertTrue(np.all(rewards[~finished] == 0))
            self.assertGreater(games, 10)
            with self.assertRaises(ValueError):
                rng.choice(np.flatnonzero(np.zeros(16, dtype=np.int8)))
        finally:
            envs.close()


if __name__ == "__main__":
    unittest.main()
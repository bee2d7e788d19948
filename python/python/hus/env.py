"""Hus as a reinforcement-learning environment: :class:`HusEnv`, a PettingZoo AEC
environment of two agents, and :class:`HusGymEnv`, a Gymnasium single-agent
environment against an opponent of your choice. Needs the ``env`` extra
(``pip install "./python[env]"``: pettingzoo, gymnasium, numpy).

Both play the engine's :class:`hus.Game`, so every end rule (no moves, repetition,
200 plies without a capture) and each preset's scoring are the referee's.

Observations are seen from the observer's seat: a ``(2, 2W)`` array of ``uint8``, row 0
the observer's pits, row 1 the opponent's, each in its owner's numbering (front row
``0..W-1``, back row ``W..2W-1``, PROTOCOL.md "Pit numbering"). An action is a pit
number, ``Discrete(2W)``; the action mask has a 1 for each legal pit. The reward comes
at the end of the game: the agent's points minus the opponent's under the preset's
scoring (``hus``: +1/-1 for a win, +2/-2 for a double win; ``rulebook``: the difference
in seeds; ``mancala-world``: +1/-1; a draw 0). With ``counters=True`` the observation
has two rows more, ``(4, 2W)``: the pits whose move repeats a position, and the plies
without a capture (:func:`hus.observation`).

An action that is not a legal pit loses the game as a fault does in the referee
(``Game.forfeit``), and ``info["fault"]`` says which action it was: that is
``illegal_action="lose"``, the default, because it is the referee's rule and how an
agent without a mask learns which pits are legal. ``illegal_action="raise"`` raises
:class:`hus.IllegalMoveError` instead and changes nothing: for agents that mask their
actions, where an illegal action is a bug to see at once.

Episodes: ``start`` (a position every episode starts from), ``openings`` (a book's name
from :data:`hus.openings.BOOKS`, an openings file, or a list of positions: each episode
starts from one drawn at random) and ``random_opening_plies=N`` (N uniformly random
plies played first, in the episode's game); ``reset(options=...)`` takes ``start``,
``openings`` and ``random_opening_plies`` for that episode alone. ``reset(seed=...)``
seeds the draws, the random opponent and the action spaces' ``sample``.
"""

from __future__ import annotations

import operator
from typing import Any, Callable, Optional, Sequence, Union

import gymnasium
import numpy as np
from gymnasium import Env, spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv  # type: ignore[import-untyped]
from pettingzoo.utils import AgentSelector  # type: ignore[import-untyped]

from . import observation as _observe
from ._hus import Game, HusError, IllegalMoveError, Position
from .openings import resolve as _resolve_openings

__all__ = ["GYM_ID", "ILLEGAL_ACTIONS", "RESET_OPTIONS", "HusEnv", "HusGymEnv", "env", "mover_view"]

AGENTS = ("player_0", "player_1")
RENDER_MODES = ("ansi", "human")
#: The values of ``illegal_action``: ``"lose"`` (the default) or ``"raise"``.
ILLEGAL_ACTIONS = ("lose", "raise")
#: The keys ``reset(options=...)`` takes.
RESET_OPTIONS = ("start", "openings", "random_opening_plies")
#: Tries at ``random_opening_plies`` random plies that do not end the game.
OPENING_TRIES = 100

Openings = Union[str, Sequence[Union[Position, str]]]


def mover_view(position: Position) -> Position:
    """``position`` seen from the seat of the player to move: that player becomes
    player 0, still to move. This is what a bot's ``choose`` receives (:mod:`hus.bot`)."""
    me = position.to_move
    return Position.from_pits(
        position.preset, position.width, position.pits(me), position.pits(1 - me), 0
    )


def _start(preset: str, width: int, start: Optional[Position | str]) -> Game:
    return Game(preset=preset, width=width) if start is None else Game(start)


class _Episodes:
    """How the environments start their games: the options both take, checked once."""

    def __init__(
        self,
        game: Game,
        openings: Optional[Openings],
        random_opening_plies: int,
        illegal_action: str,
        counters: bool,
    ) -> None:
        if illegal_action not in ILLEGAL_ACTIONS:
            raise ValueError(f"illegal_action must be 'lose' or 'raise', got {illegal_action!r}")
        self.start = game.start
        self.preset, self.width = self.start.preset, self.start.width
        self.openings = None if openings is None else _resolve_openings(openings, self.preset, self.width)
        self.random_opening_plies = _plies(random_opening_plies)
        self.illegal_action = illegal_action
        self.counters = bool(counters)

    def game(self, options: Optional[dict], rng: np.random.Generator) -> Game:
        """A new episode's game, from ``reset``'s ``options`` and the environment's own."""
        # Other keys are ignored, as the libraries expect (PettingZoo's api_test passes one).
        options = dict(options or {})
        openings = self.openings
        if options.get("openings") is not None:
            openings = _resolve_openings(options["openings"], self.preset, self.width)
        plies = _plies(options.get("random_opening_plies", self.random_opening_plies))
        if options.get("start") is not None:
            start = options["start"]
            base = start if isinstance(start, Position) else Position(start)
            if (base.preset, base.width) != (self.preset, self.width):
                raise HusError(
                    f"the start is {base.preset} at width {base.width}, "
                    f"but this environment plays {self.preset} at width {self.width}"
                )
        elif openings is not None:
            base = openings[int(rng.integers(len(openings)))]
        else:
            base = self.start
        if plies == 0:
            return Game(base)
        for _ in range(OPENING_TRIES):
            game = Game(base)
            for _ in range(plies):
                legal = game.legal_moves()
                if not legal:
                    break
                game.play(legal[int(rng.integers(len(legal)))])
            if not game.is_over:
                return game
        raise HusError(f"{plies} random plies from {base} ended the game in {OPENING_TRIES} tries out of {OPENING_TRIES}")

    def pit(self, game: Game, action: Any) -> Optional[int]:
        """The pit to play for ``action``, or None for a fault (``illegal_action="lose"``);
        with ``"raise"``, an action outside the action space raises here and an illegal
        pit raises in ``Game.play``, the engine's words."""
        n = 2 * self.width
        try:
            pit: Optional[int] = None if isinstance(action, bool) else operator.index(action)
        except TypeError:
            pit = None
        in_space = pit is not None and 0 <= pit < n
        if self.illegal_action == "raise":
            if not in_space:
                raise IllegalMoveError(f"action {action!r} is not in the action space Discrete({n}): pits are 0 to {n - 1}")
            return pit
        return pit if in_space and pit in game.legal_moves() else None

    def observation(self, game: Game, player: int) -> np.ndarray:
        return _observe(game, seat=player, counters=self.counters)

    def observation_space(self) -> spaces.Box:
        rows = 4 if self.counters else 2
        return spaces.Box(0, 255, shape=(rows, 2 * self.width), dtype=np.uint8)


def _plies(plies: Any) -> int:
    try:
        n = operator.index(plies)
    except TypeError:
        raise ValueError(f"random_opening_plies must be an integer, got {plies!r}") from None
    if n < 0:
        raise ValueError(f"random_opening_plies must be 0 or more, got {n}")
    return n


def _mask(game: Game, width: int, player: Optional[int]) -> np.ndarray:
    mask = np.zeros(2 * width, dtype=np.int8)
    if player is None or game.to_move == player:
        mask[game.legal_moves()] = 1
    return mask


def _render(game: Game) -> str:
    """The board drawn from player 0's seat, as PROTOCOL.md draws it, and the notation."""
    pos = game.position
    w = pos.width
    me, them = pos.pits(0), pos.pits(1)
    rows = [
        ("player 1 back ", them[w:]),
        ("player 1 front", list(reversed(them[:w]))),
        ("player 0 front", me[:w]),
        ("player 0 back ", list(reversed(me[w:]))),
    ]
    anticlockwise = pos.preset == "mancala-world"
    lines = []
    for label, row in rows:
        cells = list(reversed(row)) if anticlockwise else row
        lines.append(label + " " + " ".join(f"{s:3d}" for s in cells))
    lines.append(str(pos))
    if game.end is not None:
        lines.append(f"over: {game.end.reason}, points {game.points}")
    return "\n".join(lines)


class HusEnv(AECEnv):
    """A game of Hus between two agents, ``player_0`` and ``player_1`` (the engine's
    players: ``player_0`` moves first from the starting position).

    ``observe(agent)`` is ``{"observation": (2, 2W) uint8, "action_mask": (2W,) int8}``
    (``(4, 2W)`` with ``counters=True``); the mask is all zeros for the agent that is not
    to move. ``infos[agent]`` holds ``"fault"`` (the illegal action) for an agent that
    lost by one. ``openings``, ``random_opening_plies``, ``illegal_action`` and
    ``counters``: the module's docstring. Pickles, with its game.

    >>> from hus.env import HusEnv
    >>> env = HusEnv(preset="hus", width=8)
    >>> env.reset(seed=1)
    >>> observation, reward, termination, truncation, info = env.last()
    >>> int(observation["action_mask"].sum())
    12
    """

    metadata = {
        "render_modes": list(RENDER_MODES),
        "name": "hus_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self,
        preset: str = "hus",
        width: int = 8,
        start: Optional[Position | str] = None,
        render_mode: Optional[str] = None,
        *,
        openings: Optional[Openings] = None,
        random_opening_plies: int = 0,
        illegal_action: str = "lose",
        counters: bool = False,
    ) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be one of ansi, human or None, got {render_mode!r}")
        self.render_mode = render_mode
        self.game = _start(preset, width, start)
        self._episodes = _Episodes(self.game, openings, random_opening_plies, illegal_action, counters)
        self.preset = self.game.start.preset
        self.width = self.game.start.width
        self.np_random, _ = seeding.np_random()
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        n = 2 * self.width
        self.observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": self._episodes.observation_space(),
                    "action_mask": spaces.Box(0, 1, shape=(n,), dtype=np.int8),
                }
            )
            for agent in AGENTS
        }
        self.action_spaces = {agent: spaces.Discrete(n) for agent in AGENTS}
        self._selector = AgentSelector(self.agents)
        self._clear_state()

    def _clear_state(self) -> None:
        self.rewards = dict.fromkeys(self.agents, 0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0)
        self.terminations = dict.fromkeys(self.agents, self.game.is_over)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict = {agent: {} for agent in self.agents}
        self.agent_selection = AGENTS[self.game.to_move]

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def observe(self, agent: str) -> dict:
        player = AGENTS.index(agent)
        return {
            "observation": self._episodes.observation(self.game, player),
            "action_mask": _mask(self.game, self.width, player),
        }

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None) -> None:
        """A new game. ``seed`` seeds the environment's draws (openings, random plies)
        and each agent's action space (``player_0`` with ``seed``, ``player_1`` with
        ``seed + 1``); ``options``: ``start``, ``openings``, ``random_opening_plies``."""
        if seed is not None:
            self.np_random, _ = seeding.np_random(seed)
            for i, agent in enumerate(AGENTS):
                self.action_spaces[agent].seed(seed + i)
        self.game = self._episodes.game(options, self.np_random)
        self.agents = list(AGENTS)
        self._selector.reinit(self.agents)
        self._clear_state()

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._clear_rewards()
        player = AGENTS.index(agent)
        pit = self._episodes.pit(self.game, action)
        if pit is None:
            self.game.forfeit(player)
            self.infos[agent] = {"fault": action}
        else:
            self.game.play(pit)
        if self.game.is_over:
            points = self.game.points or (0, 0)
            for p, name in enumerate(AGENTS):
                self.rewards[name] = points[p] - points[1 - p]
            self.terminations = dict.fromkeys(self.agents, True)
        self._accumulate_rewards()
        # Sides alternate; after the end each agent still takes its final (dead) step.
        self.agent_selection = AGENTS[1 - player]
        if self.render_mode == "human":
            self.render()

    def render(self) -> Optional[str]:
        if self.render_mode is None:
            return None
        text = _render(self.game)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass


def env(**kwargs: Any) -> HusEnv:
    """PettingZoo's usual constructor name: ``hus.env.env(preset="hus", width=8)``."""
    return HusEnv(**kwargs)


Opponent = Callable[[Position], int]


class HusGymEnv(Env):
    """One side of a game of Hus, against ``opponent``: a Gymnasium environment.

    ``opponent(position) -> pit`` sees the position from its own seat, exactly as a
    :mod:`hus.bot` ``choose`` function does (it is player 0, to move), so any bot's
    function can be the opponent; by default it plays a random legal pit drawn from the
    environment's ``np_random`` (seeded by ``reset(seed=...)``). ``seat`` is the agent's
    player, 0 (moves first from the start) or 1, or ``None`` for a random seat each
    episode. An opponent that returns an illegal pit loses by a fault.

    Observations are ``(2, 2W)`` uint8 (row 0 the agent's pits; ``(4, 2W)`` with
    ``counters=True``); ``info["action_mask"]`` and :meth:`action_masks` give the legal
    pits (for masked algorithms such as sb3-contrib's MaskablePPO). ``openings``,
    ``random_opening_plies``, ``illegal_action`` (for the opponent's pits too) and
    ``counters``: the module's docstring. Pickles, with its game (and its opponent, if
    that pickles).

    >>> from hus.env import HusGymEnv
    >>> env = HusGymEnv(preset="hus", width=8, seat=0)
    >>> observation, info = env.reset(seed=1)
    >>> observation.shape, int(info["action_mask"].sum())
    ((2, 16), 12)
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 1}

    def __init__(
        self,
        preset: str = "hus",
        width: int = 8,
        opponent: Optional[Opponent] = None,
        seat: Optional[int] = 0,
        start: Optional[Position | str] = None,
        render_mode: Optional[str] = None,
        *,
        openings: Optional[Openings] = None,
        random_opening_plies: int = 0,
        illegal_action: str = "lose",
        counters: bool = False,
    ) -> None:
        if seat not in (0, 1, None):
            raise ValueError(f"seat must be 0, 1 or None (random), got {seat!r}")
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be one of ansi, human or None, got {render_mode!r}")
        self.render_mode = render_mode
        self.game = _start(preset, width, start)
        self._episodes = _Episodes(self.game, openings, random_opening_plies, illegal_action, counters)
        self.preset = self.game.start.preset
        self.width = self.game.start.width
        self.opponent = opponent
        self.seat = seat
        self.player = 0 if seat is None else seat
        n = 2 * self.width
        self.observation_space = self._episodes.observation_space()
        self.action_space = spaces.Discrete(n)

    def _opponent_pit(self) -> Any:
        if self.opponent is None:
            legal = self.game.legal_moves()
            return legal[int(self.np_random.integers(len(legal)))]
        return self.opponent(mover_view(self.game.position))

    def _opponent_moves(self, info: dict) -> None:
        """Plays the opponent's moves until the agent is to move or the game is over."""
        while not self.game.is_over and self.game.to_move != self.player:
            action = self._opponent_pit()
            pit = self._episodes.pit(self.game, action)
            if pit is None:
                self.game.forfeit(1 - self.player)
                info["opponent_fault"] = action
            else:
                self.game.play(pit)

    def _info(self, info: dict) -> dict:
        info["action_mask"] = self.action_masks()
        return info

    def action_masks(self) -> np.ndarray:
        """1 for each pit the agent may play now (all zeros once the game is over)."""
        return _mask(self.game, self.width, None)

    def _reward(self) -> float:
        points = self.game.points
        if points is None:
            return 0.0
        return float(points[self.player] - points[1 - self.player])

    def reset(
        self, *, seed: Optional[int] = None, options: Optional[dict] = None
    ) -> tuple[np.ndarray, dict]:
        """A new game. ``seed`` seeds the environment's ``np_random`` (openings, random
        plies, the seat, the default opponent) and ``action_space.sample``; ``options``:
        ``start``, ``openings``, ``random_opening_plies``."""
        super().reset(seed=seed)
        if seed is not None:
            self.action_space.seed(seed)
        self.game = self._episodes.game(options, self.np_random)
        if self.seat is None:
            self.player = int(self.np_random.integers(2))
        info: dict = {}
        self._opponent_moves(info)
        return self._episodes.observation(self.game, self.player), self._info(info)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        if self.game.is_over:
            raise RuntimeError("the game is over: call reset() first")
        info: dict = {}
        pit = self._episodes.pit(self.game, action)
        if pit is None:
            self.game.forfeit(self.player)
            info["fault"] = action
        else:
            self.game.play(pit)
            self._opponent_moves(info)
        if self.render_mode == "human":
            self.render()
        return (
            self._episodes.observation(self.game, self.player),
            self._reward(),
            self.game.is_over,
            False,
            self._info(info),
        )

    def render(self) -> Optional[str]:
        if self.render_mode is None:
            return None
        text = _render(self.game)
        if self.render_mode == "human":
            print(text)
            return None
        return text


#: ``gymnasium.make(GYM_ID, preset=..., width=..., opponent=..., seat=...)``.
GYM_ID = "hus/Hus-v0"
if GYM_ID not in gymnasium.registry:
    gymnasium.register(id=GYM_ID, entry_point="hus.env:HusGymEnv")

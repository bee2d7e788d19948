"""The examples in the package's docstrings, docs/python.md and README.md (``>>>``) are run and
must print what they show; so is docs/python.md's research path (the MCTS bot, which is
python/examples/mcts_bot.py, and the self-play loop)."""

from __future__ import annotations

import contextlib
import doctest
import io
import re
import subprocess
import sys
import unittest

import hus
import hus.bot
import hus.env
import hus.openings
from hus.env import mover_view
from support import REPO, hus_bin


def load_tests(loader, tests, ignore):
    finder = doctest.DocTestFinder()
    found = []
    found += finder.find(hus, "hus", globs={"hus": hus})
    # The classes and functions of the extension module (its constants are plain ints,
    # whose own docstrings are Python's).
    for name in hus.__all__:
        obj = getattr(hus, name)
        if callable(obj):
            found += finder.find(obj, f"hus.{name}", module=False, globs={"hus": hus})
    for module in (hus.bot, hus.env, hus.openings):
        found += finder.find(module, module.__name__, globs={"hus": hus})
    found = [test for test in found if test.examples]
    assert len(found) >= 8, f"only {len(found)} docstrings with examples found"
    for test in found:
        tests.addTest(doctest.DocTestCase(test))
    # And the examples of docs/python.md and of README's section on the package.
    for page in ("docs/python.md", "README.md"):
        tests.addTest(doctest.DocFileSuite(str(REPO / page), module_relative=False))
    return tests


def research_blocks() -> list[str]:
    """The ```python blocks of docs/python.md's "Research in ten minutes"."""
    text = (REPO / "docs" / "python.md").read_text()
    section = text.split("## Research in ten minutes", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


class ResearchPathTest(unittest.TestCase):
    def test_the_mcts_bot_is_the_example_file_and_beats_the_random_mover(self):
        blocks = research_blocks()
        self.assertEqual(len(blocks), 2)
        example = REPO / "python" / "examples" / "mcts_bot.py"
        self.assertEqual(blocks[0], example.read_text())
        bot: dict = {"__name__": "mcts_bot"}
        exec(compile(blocks[0], str(example), "exec"), bot)
        won = 0
        for g in range(6):
            game, me, opponent = hus.Game(), g % 2, random_pits(g)
            while not game.is_over:
                if game.to_move == me:
                    game.play(bot["choose"](mover_view(game.position), iterations=60, seed=g))
                else:
                    game.play(opponent(game))
            won += game.end.winner == me
        self.assertEqual(won, 6)
        done = subprocess.run(
            [hus_bin(), "check-bot", f"{sys.executable} {example}", "--seed", "7", "--games", "2",
             "--move-time", "10s", "--ready-time", "30s"],
            capture_output=True, text=True, timeout=300,
        )
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("\nno problems, no warnings.\n", done.stdout)

    def test_the_self_play_loop_learns(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(research_blocks()[1], "docs/python.md (self-play)", "exec"), {"__name__": "selfplay"})
        found = re.fullmatch(r"won (\d+) of 100 against the random mover\n", out.getvalue())
        self.assertIsNotNone(found, out.getvalue())
        # Untrained (all weights zero: always the first legal pit) it wins 64 of 100; trained, 90.
        self.assertGreaterEqual(int(found.group(1)), 75)


def random_pits(seed: int):
    import random

    rng = random.Random(seed)
    return lambda game: rng.choice(game.legal_moves())


if __name__ == "__main__":
    unittest.main()

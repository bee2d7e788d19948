"""A Monte Carlo tree search bot (UCT) whose leaves are judged by hus.playouts, in Rust."""
import math
import random
import sys

import hus
import hus.bot

PLAYOUTS = 32  # random games per leaf, played in Rust without the GIL
ITERATIONS = 300  # leaves per move


def node(game):
    return {"game": game, "children": {}, "n": 0, "w": 0.0}


def choose(position, iterations=ITERATIONS, seed=None):
    rng = random.Random(seed)
    root = node(hus.Game(position))
    for _ in range(iterations):
        leaf, path = root, [root]
        while not leaf["game"].is_over:  # down the tree, to a pit not tried yet
            untried = [p for p in leaf["game"].legal_moves() if p not in leaf["children"]]
            if untried:
                pit = rng.choice(untried)
                game = leaf["game"].copy()
                game.play(pit)
                leaf["children"][pit] = leaf = node(game)
                path.append(leaf)
                break
            parent = leaf
            leaf = max(
                parent["children"].values(),
                key=lambda c: c["w"] / c["n"] + 1.4 * math.sqrt(math.log(parent["n"]) / c["n"]),
            )
            path.append(leaf)
        wins, draws, losses = hus.playouts(leaf["game"], PLAYOUTS, seed=rng.getrandbits(64))
        score = wins + draws / 2  # for the player to move at the leaf
        for step in reversed(path):  # a node's w counts for the player who moved into it
            step["n"] += PLAYOUTS
            step["w"] += PLAYOUTS - score
            score = PLAYOUTS - score
    return max(root["children"], key=lambda pit: root["children"][pit]["n"])


if __name__ == "__main__":
    sys.exit(hus.bot.run(choose, name="mcts"))

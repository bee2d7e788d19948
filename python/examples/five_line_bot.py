import hus.bot

def choose(position):  # I am player 0, to move: keep the move that leaves me the most seeds
    return max(position.legal_moves(), key=lambda pit: position.after(pit).seeds_of(0))
hus.bot.run(choose, name="five-line-greedy")

#!/usr/bin/env python3
"""Runs a bot and writes down every line between it and the referee, for the tests
that check PROTOCOL.md against what bots really receive.

    python3 transcript.py FILE BOT_PROGRAM [ARGS...]

Each line the referee sends is appended to FILE as `<- LINE`, each line the bot sends
as `-> LINE`, in the order they pass (the file is appended to, so a restarted bot
continues the same transcript). The bot's stderr is left as it is.
"""
import subprocess
import sys
import threading

path, command = sys.argv[1], sys.argv[2:]
record = open(path, "a", encoding="utf-8", errors="backslashreplace")
lock = threading.Lock()


def write_down(arrow, raw):
    text = raw.rstrip(b"\n").rstrip(b"\r").decode("utf-8", "backslashreplace")
    with lock:
        record.write(f"{arrow} {text}\n")
        record.flush()


bot = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def referee_to_bot():
    for raw in sys.stdin.buffer:
        write_down("<-", raw)
        try:
            bot.stdin.write(raw)
            bot.stdin.flush()
        except BrokenPipeError:
            break
    try:
        bot.stdin.close()
    except BrokenPipeError:
        pass


threading.Thread(target=referee_to_bot, daemon=True).start()
out = sys.stdout.buffer
for raw in bot.stdout:
    write_down("->", raw)
    out.write(raw)
    out.flush()
sys.exit(bot.wait())

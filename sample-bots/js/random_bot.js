#!/usr/bin/env node
// A Hus bot that plays a random legal move (Node 20, standard library only).
//
// Run it under the referee as:   node sample-bots/js/random_bot.js
//
// Protocol v1 in brief (sample-bots/python/random_bot.py explains it at length):
//   * one JSON object per line on stdin from the referee, one per line on stdout back;
//   * stdout is for protocol lines only: debug output goes to stderr (console.error);
//   * "hello" -> answer {"type":"ready","name":...};
//     "turn"  -> answer {"type":"move","pit":N}, N one of turn.legal;
//     "game", "result" and unknown types -> no answer;
//     "bye"   -> exit. Exit on end of input too.
//
// Writes to a pipe are synchronous in Node on Linux and macOS, so each line is out
// (the equivalent of a flush) as soon as process.stdout.write returns.

"use strict";

const readline = require("node:readline");

const BOT_NAME = "js-random";

function log(...args) {
  console.error(`[${BOT_NAME}]`, ...args);
}

function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

// The one function to rewrite: return one pit from turn.legal.
// turn.you and turn.opponent hold 2*W seed counts each, in each side's own numbering:
// pits 0..W-1 front row, W..2W-1 back row; across from my front pit i stand the
// opponent's front pit W-1-i and back pit W+i.
function chooseMove(turn) {
  return turn.legal[Math.floor(Math.random() * turn.legal.length)];
}

const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });

input.on("line", (raw) => {
  const line = raw.trim();
  if (line === "") return; // blank lines mean nothing
  let message;
  try {
    message = JSON.parse(line);
  } catch (err) {
    log("ignoring a line that is not JSON:", line.slice(0, 200));
    return;
  }
  if (message === null || typeof message !== "object" || Array.isArray(message)) return;

  switch (message.type) {
    case "hello":
      send({ type: "ready", name: BOT_NAME });
      break;
    case "turn":
      if (Array.isArray(message.legal) && message.legal.length > 0) {
        send({ type: "move", pit: chooseMove(message) });
      } else {
        log("turn without legal moves?", line.slice(0, 200));
      }
      break;
    case "result":
      log(`game ${message.game} -> ${message.outcome} by ${message.reason}`);
      break;
    case "bye":
      input.close(); // the set is over; "close" below ends the process
      break;
    default:
      break; // "game" and unknown types need no answer
  }
});

// End of input (EOF) or bye.
input.on("close", () => process.exit(0));

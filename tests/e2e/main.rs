//! End-to-end tests: the `hus` binary playing real bot processes.

/// Bad command lines and unusable setups.
mod bad_setup;
/// The chaos run, short: PostgreSQL, `hus serve` and three workers, each fault once
/// (a worker killed, a worker stopped past its lease, the database and the server
/// restarted); nothing lost or doubled, the standings of one machine.
mod chaos;
/// `hus check-bot` diagnoses each misbehaviour; `hus random-bot` plays whole sets.
mod check_bot;
/// Running `hus` and reading what it wrote (summary, log records), verifying logs.
mod common;
/// The examples of PROTOCOL.md, README.md and RULES.md are real sessions and commands.
mod doc_examples;
/// Every option of `hus COMMAND --help` in docs/cli.md's table, and no other.
mod doc_options;
/// Reading the documents and running their commands, for the document tests.
mod doc_support;
/// The field tables of PROTOCOL.md, LOGS.md and README.md against real messages and logs.
mod doc_tables;
/// A crash says why: the last line of the bot's stderr and its file, in the log, on the
/// console, on the league's lines; each restarted process's own stderr cut note.
mod explain;
/// Every kind of fault a bot can commit, classified and reported.
mod faults;
/// `hus league` and `hus standings`: sample bots, resume after SIGKILL and SIGTERM,
/// edits between runs, refused files and runners.
mod league;
/// The ladder: the Rust bot's levels in a league, `hus rate` on the random mover and
/// on level 5 against the shipped ratings.
mod levels;
/// Bots die with a referee killed by SIGKILL; what a bot leaves running is reported and
/// ended; no file of a log or league directory is written through a symbolic link.
mod lifetime;
/// `game` precedes every `result` a healthy bot receives, whatever its opponent does.
mod message_order;
/// What hus says when it cannot: a port in use names its option, every --store reads
/// HUS_STORE, hus workers takes only its documented formats.
mod messages;
/// The places where the documents and the referee disagreed (issue 9), one test each.
mod one_truth;
/// Openings: games in pairs, seats by side to move, logs checked by `hus replay`, bad
/// files, the viewer, the shipped books.
mod openings;
/// A real PostgreSQL server for the worker tests (shared with the league crate's tests).
#[path = "../support/pg.rs"]
mod pg;
/// `hus play` through a pseudo-terminal: whole games typed, bad input, Ctrl-D, Ctrl-C.
mod play;
/// `hus play --web`: a whole game by clicks in Chromium, refused requests, the log.
mod play_web;
/// A bot refusing a preset as PROTOCOL.md says: the documented records, match and league.
mod refusal;
/// Remote bots: `hus connect`, raw TCP, refused logins, disconnects (the bot port in-process).
mod remote;
/// `hus replay`: verifying logs, refusing altered ones, showing games, the HTML viewer.
mod replay;
/// The engine against the independent Python rules on random positions.
mod rules_crosscheck;
/// The sample bots in every language never fault, and the Rust one plays well.
mod sample_bots;
/// Sets between the sample bots: results, logs re-played with the engine.
mod sample_sets;
/// `--sandbox`: a hostile bot's every attempt fails; sample bots pass check-bot in it.
mod sandbox;
/// `hus serve`: a league without end through its API, SIGTERM and carrying on, admin
/// tokens, confined downloads, bounded requests and connections (in all and per
/// address, under a flood), the `Host` check, the dashboard in Chromium.
mod serve;
/// `hus serve` under load: 50 clients that never read a 32 MB log, a slow download cut
/// at its time limit, 40 concurrent requests for the replay of a 100,000-move set.
mod serve_load_limits;
/// `hus match --sprt`: H1 and H0 accepted, the printed LLR, replay's check, errors, Ctrl-C.
mod sprt;
/// A referee stopped with SIGSTOP mid-move for longer than the move's time charges
/// the bot nothing: the move is in time, its `stall_ms` says how long the stop was.
mod stalls;
/// Sets stopped before the first ready, between games, mid-game, and a league stopped
/// while a set's bots start: every log replays as documented; the log check can fail.
mod stops;
/// Team matches: who plays each move, hello.team, game.order, turn.last, a member's
/// fault, replay of team logs.
mod teams;
/// Untrusted bots: every misbehaviour handled, bounded memory, no process left behind.
mod untrusted;
/// Long boards (widths 17 to 32): sets, replays, perft.
mod wide;
/// `hus worker`: SIGKILL mid-set, a database restart and a network cut lose and double
/// nothing; the standings equal one machine's.
mod workers;

//! The terminal at the person's seat: it speaks protocol v1 on a [`SeatEnd`] as a bot
//! does, drawing each board as `hus replay` draws it and describing each move as `hus
//! replay` describes it, and reads the person's moves as pit numbers, one a line.
//!
//! The input is line by line (the terminal's own line editing, Ctrl-C and Ctrl-D work
//! as everywhere): the arrow keys of a raw-mode terminal (crossterm) would lose both,
//! and the browser seat (`hus play --web`) is where a move is picked by pointing.

use std::fmt::Write as _;
use std::io::{BufRead, Write};

use engine::{AnyPosition, Board, Player, Preset, Rules, Setup};
use protocol::{BotMessage, Outcome, RefereeMessage, Side, TimeControl};
use referee::{draw_board_from, plural, report_words, Marks, Style};
use tokio::sync::mpsc;

use crate::args::NO_LIMIT;
use crate::seat::SeatEnd;

/// One line typed by the person, or the end of the input (Ctrl-D, a closed stdin).
pub type InputLine = Option<String>;

/// Reads stdin line by line on a thread of its own (a blocking read cannot be
/// cancelled; the thread ends with the process), sending each line and then `None`
/// at the end of the input or on a read error.
pub fn stdin_lines() -> mpsc::UnboundedReceiver<InputLine> {
    let (tx, rx) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut lock = stdin.lock();
        loop {
            let mut line = String::new();
            match lock.read_line(&mut line) {
                Ok(0) | Err(_) => {
                    let _ = tx.send(None);
                    return;
                }
                Ok(_) => {
                    if tx.send(Some(line)).is_err() {
                        return;
                    }
                }
            }
        }
    });
    rx
}

/// How the person's side of a set ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UiEnd {
    /// The referee said `bye`: the set was played to its end.
    Finished,
    /// The person stopped the set: the reason, for the log's `aborted` record.
    Quit(String),
    /// The seat was closed without `bye` and no new link came (the set stopped).
    Closed,
}

/// The terminal at the person's seat.
pub struct Terminal<W: Write> {
    /// The person's name, announced in `ready` and shown on the board.
    pub name: String,
    /// The bot's name, shown on the board.
    pub bot: String,
    /// Colour or not.
    pub style: Style,
    /// Where the boards and messages go (stdout).
    pub out: W,
}

/// What the terminal knows of the game in play, kept from the referee's messages.
struct State {
    rules: Option<Rules>,
    /// Which player the person is in the game in play.
    me: Player,
    /// The position, as the person's moves and the bot's (from `last`) made it.
    pos: Option<AnyPosition>,
    /// Plies played in the game, to tell whether `last` is a move not yet shown.
    plies: u32,
    game: u32,
}

impl<W: Write> Terminal<W> {
    /// Plays the person's side: each link the referee opens for the seat, in turn,
    /// until `bye`, the end of the input, or no more links. When the person stops the
    /// set, the seat's end comes back still open: the caller drops it only after the
    /// set (a seat closed first would be a disconnect, a crash in the log).
    pub async fn run(
        &mut self,
        mut ends: mpsc::UnboundedReceiver<SeatEnd>,
        input: &mut mpsc::UnboundedReceiver<InputLine>,
    ) -> (UiEnd, Option<SeatEnd>) {
        let mut state = State {
            rules: None,
            me: Player::Zero,
            pos: None,
            plies: 0,
            game: 0,
        };
        while let Some(mut end) = ends.recv().await {
            match self.serve(&mut end, &mut state, input).await {
                Some(UiEnd::Quit(why)) => return (UiEnd::Quit(why), Some(end)),
                Some(done) => return (done, None),
                None => self.say(
                    "hus play: the referee closed your seat after a fault (you sit down again if there is a next game)",
                ),
            }
        }
        (UiEnd::Closed, None)
    }

    /// One link, until the referee closes it (`None`) or the set ends.
    async fn serve(
        &mut self,
        end: &mut SeatEnd,
        state: &mut State,
        input: &mut mpsc::UnboundedReceiver<InputLine>,
    ) -> Option<UiEnd> {
        while let Some(message) = end.next().await {
            let message = match message {
                Ok(m) => m,
                Err(e) => {
                    self.say(&format!("hus play: {e}"));
                    continue;
                }
            };
            match message {
                RefereeMessage::Hello(h) => {
                    state.rules = rules_of(&h.rules);
                    let rules = match state.rules {
                        Some(r) => format!("{} rules at width {}", r.preset().name(), r.width()),
                        None => "rules this hus cannot draw".to_string(),
                    };
                    self.say(&format!(
                        "hus play: {} against {}, {} of {rules}; you have {}",
                        self.name,
                        self.bot,
                        plural(h.games, "game", "games"),
                        time_words(&h.time),
                    ));
                    self.say("type a pit number and Enter to move; q to stop (Ctrl-C and Ctrl-D stop too)");
                    let ready = BotMessage::Ready {
                        name: Some(self.name.clone()),
                    };
                    if end.send(&ready).await.is_err() {
                        return None;
                    }
                }
                RefereeMessage::Game(g) => {
                    state.game = g.game;
                    state.plies = 0;
                    // No openings in `hus play`: the first mover is player 0.
                    state.me = if g.first { Player::Zero } else { Player::One };
                    state.pos = state.rules.and_then(|rules| {
                        position(rules, state.me, &g.you, &g.opponent, Player::Zero)
                    });
                    self.say(&format!(
                        "\ngame {}: {} begin{}",
                        g.game,
                        if g.first { "you" } else { &self.bot },
                        if g.first { "" } else { "s" }
                    ));
                    if g.first {
                        // The board is drawn with the prompt of the first turn.
                    } else {
                        self.board(state, &Marks::default(), false);
                    }
                }
                RefereeMessage::Turn(t) => {
                    self.catch_up(state, t.ply, t.last, &t.you, &t.opponent);
                    // The referee says nothing while it waits for the move: a line or
                    // the end of the link now means the seat was closed (out of time).
                    let asked = tokio::select! {
                        answer = self.ask(state, &t.legal, t.time_ms, input) => answer,
                        _ = end.next() => {
                            self.say("");
                            self.say(&format!(
                                "hus play: no move within {}: the game is lost by time-out",
                                ms_words(t.time_ms)
                            ));
                            return None;
                        }
                    };
                    let Some(pit) = asked else {
                        self.say("");
                        return Some(UiEnd::Quit("stopped by the end of the input".into()));
                    };
                    let Some(pit) = pit else {
                        return Some(UiEnd::Quit("stopped by the person (q)".into()));
                    };
                    self.show_move(state, pit, true);
                    if end
                        .send(&BotMessage::Move {
                            pit: u64::from(pit),
                        })
                        .await
                        .is_err()
                    {
                        return None;
                    }
                }
                RefereeMessage::Result(r) => {
                    self.catch_up(state, r.plies, r.last, &r.you, &r.opponent);
                    let who = match r.outcome {
                        Outcome::Win => "you win".to_string(),
                        Outcome::Loss => format!("{} wins", self.bot),
                        Outcome::Draw => "a draw".to_string(),
                    };
                    let mut how = r.reason.as_str().to_string();
                    if let Some(side) = r.fault_by {
                        let by = match side {
                            Side::You => "you".to_string(),
                            Side::Opponent => self.bot.clone(),
                        };
                        let _ = write!(how, " by {by}");
                        if let Some(detail) = &r.detail {
                            let _ = write!(how, ": {}", referee_text(detail));
                        }
                    }
                    self.say(&format!(
                        "game {}: {who} ({how}), points {}-{} after {}",
                        r.game,
                        r.points.you,
                        r.points.opponent,
                        plural(r.plies, "ply", "plies")
                    ));
                }
                RefereeMessage::Bye(b) => {
                    let who = match b.outcome {
                        Outcome::Win => "you win the set".to_string(),
                        Outcome::Loss => format!("{} wins the set", self.bot),
                        Outcome::Draw => "the set is drawn".to_string(),
                    };
                    self.say(&format!(
                        "\nset over: {who}, points {}-{}",
                        b.points.you, b.points.opponent
                    ));
                    return Some(UiEnd::Finished);
                }
                RefereeMessage::Unknown => {}
            }
        }
        None
    }

    /// Shows the bot's move that led to the position of `ply` plies, if it is not shown
    /// yet, and puts the board right if it differs from the referee's (it never should).
    fn catch_up(
        &mut self,
        state: &mut State,
        ply: u32,
        last: Option<u32>,
        you: &[u32],
        opp: &[u32],
    ) {
        if ply == state.plies + 1 {
            if let Some(pit) = last {
                self.show_move(state, pit, false);
            }
        }
        let Some(rules) = state.rules else { return };
        let theirs = position(rules, state.me, you, opp, Player::Zero);
        let same = |a: &AnyPosition, b: &AnyPosition| {
            a.pits(Player::Zero) == b.pits(Player::Zero)
                && a.pits(Player::One) == b.pits(Player::One)
        };
        match (&state.pos, theirs) {
            (Some(ours), Some(theirs)) if same(ours, &theirs) => {}
            (_, Some(theirs)) => {
                let to_move = state.pos.map_or(state.me, |p| p.to_move());
                state.pos = position(rules, state.me, you, opp, to_move).or(Some(theirs));
                state.plies = ply;
                self.say("hus play: the board is redrawn from the referee's");
                self.board(state, &Marks::default(), false);
            }
            _ => {}
        }
        state.plies = ply;
    }

    /// Plays `pit` on the board kept here, describes it and draws the board after it.
    fn show_move(&mut self, state: &mut State, pit: u32, mine: bool) {
        let Some(pos) = state.pos.as_mut() else {
            return;
        };
        let mover = pos.to_move();
        let Ok(report) = pos.play(pit as usize) else {
            self.say(&format!(
                "hus play: pit {pit} cannot be played on the board kept here"
            ));
            return;
        };
        state.plies += 1;
        let words = report_words(
            pit,
            report.summary.sown,
            &report.events,
            report.summary.truncated,
        );
        let who = if mine {
            "you play".to_string()
        } else {
            format!("{} plays", self.bot)
        };
        self.say(&format!("\n{who} {words}"));
        let marks = Marks::of(mover, pit as usize, &report.events);
        // After the person's move the bot is to move: say so on the board.
        self.board(state, &marks, false);
    }

    /// Asks for a move until a legal one is typed: `Some(Some(pit))`, `Some(None)` for
    /// `q`, `None` at the end of the input.
    async fn ask(
        &mut self,
        state: &State,
        legal: &[u32],
        time_ms: u64,
        input: &mut mpsc::UnboundedReceiver<InputLine>,
    ) -> Option<Option<u32>> {
        let list = legal
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        if state.plies == 0 {
            self.board(state, &Marks::default(), false);
        }
        let limit = if time_ms >= NO_LIMIT.as_millis() as u64 {
            String::new()
        } else {
            format!(" within {}", ms_words(time_ms))
        };
        loop {
            self.prompt(&format!("your move{limit} (pits {list}): "));
            let line = input.recv().await.flatten()?;
            let text = line.trim();
            if text.is_empty() {
                continue;
            }
            if text == "q" || text == "quit" {
                return Some(None);
            }
            let Ok(pit) = text.parse::<u32>() else {
                self.say(&format!(
                    "{:?} is not a pit number: type one of {list}",
                    referee_text(text)
                ));
                continue;
            };
            if legal.contains(&pit) {
                return Some(Some(pit));
            }
            let why = match (state.pos, state.rules) {
                (Some(pos), Some(rules)) if (pit as usize) < rules.pits() => format!(
                    "pit {pit} holds {} (a move needs at least {})",
                    plural(
                        u32::from(pos.seeds(state.me, pit as usize)),
                        "seed",
                        "seeds"
                    ),
                    engine::MIN_SEEDS_TO_MOVE
                ),
                (_, Some(rules)) => format!(
                    "there is no pit {pit} (your pits are 0 to {})",
                    rules.pits() - 1
                ),
                _ => format!("pit {pit} is not legal"),
            };
            self.say(&format!("{why}: type one of {list}"));
        }
    }

    fn board(&mut self, state: &State, marks: &Marks, over: bool) {
        let Some(pos) = &state.pos else { return };
        let mut names = [String::new(), String::new()];
        names[state.me.index()] = self.name.clone();
        names[state.me.other().index()] = self.bot.clone();
        let mut s = String::new();
        draw_board_from(&mut s, pos, &names, marks, over, &self.style, state.me);
        let _ = write!(self.out, "{s}");
        let _ = self.out.flush();
    }

    fn say(&mut self, line: &str) {
        let _ = writeln!(self.out, "{line}");
        let _ = self.out.flush();
    }

    fn prompt(&mut self, text: &str) {
        let _ = write!(self.out, "{}", self.style.paint("1", text));
        let _ = self.out.flush();
    }
}

/// The engine's rules from `hello.rules`; `None` for rules this build does not know.
fn rules_of(info: &protocol::RulesInfo) -> Option<Rules> {
    let preset = match info.preset {
        protocol::Preset::Hus => Preset::Hus,
        protocol::Preset::Rulebook => Preset::Rulebook,
        protocol::Preset::MancalaWorld => Preset::MancalaWorld,
        _ => return None,
    };
    Rules::new(preset, info.width as usize).ok()
}

/// The position of the person (`me`) holding `you` and the bot `opponent`.
fn position(
    rules: Rules,
    me: Player,
    you: &[u32],
    opponent: &[u32],
    to_move: Player,
) -> Option<AnyPosition> {
    let to_u8 =
        |pits: &[u32]| -> Option<Vec<u8>> { pits.iter().map(|&n| u8::try_from(n).ok()).collect() };
    let mut pits = [Vec::new(), Vec::new()];
    pits[me.index()] = to_u8(you)?;
    pits[me.other().index()] = to_u8(opponent)?;
    AnyPosition::from_setup(&Setup {
        rules,
        pits,
        to_move,
    })
    .ok()
}

fn time_words(t: &TimeControl) -> String {
    match t {
        TimeControl::PerMove { move_ms, .. } if *move_ms >= NO_LIMIT.as_millis() as u64 => {
            "no time limit".to_string()
        }
        TimeControl::PerMove { move_ms, .. } => format!("{move_ms} ms a move"),
        TimeControl::Clock {
            base_ms,
            increment_ms,
            ..
        } => {
            format!("a clock of {base_ms} ms + {increment_ms} ms a move")
        }
        TimeControl::Unknown => "an unknown time control".to_string(),
    }
}

/// `500 ms`, `2 s`, `2.5 s`.
fn ms_words(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms / 1000 * 1000 == ms {
        format!("{} s", ms / 1000)
    } else {
        format!("{:.1} s", ms as f64 / 1000.0)
    }
}

/// Text from outside made safe to print (control characters escaped, cut).
fn referee_text(text: &str) -> String {
    protocol::excerpt(text.as_bytes(), 200)
}

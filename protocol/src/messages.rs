//! The messages of protocol v1, both directions.
//!
//! Field order in the structs is the wire order: the exact JSON text is pinned by tests.

use serde::{Deserialize, Serialize};

use crate::reason::Reason;
use crate::rules::{RulesInfo, TimeControl};

/// The protocol version this crate speaks (`hello.protocol`).
pub const PROTOCOL_VERSION: u32 = 1;

/// A message from the referee to a bot, one per line, tagged by its `type` field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum RefereeMessage {
    /// `hello`: the first line of a set; the bot answers `ready`.
    Hello(Hello),
    /// `game`: a new game starts.
    Game(GameStart),
    /// `turn`: the bot is to move; it answers `move`.
    Turn(Turn),
    /// `result`: a game is over.
    Result(GameResult),
    /// `bye`: the set is over; stdin is closed next.
    Bye(Bye),
    /// A message type this crate does not know. The referee never sends it; a bot gets
    /// it from [`decode_referee_message`](crate::decode_referee_message) for a line of
    /// a newer type, and should ignore it.
    #[serde(other)]
    Unknown,
}

/// The `hello` message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    /// Protocol version, [`PROTOCOL_VERSION`].
    pub protocol: u32,
    /// Name and version of the referee, e.g. `"hus 0.1.0"`.
    pub referee: String,
    /// The rules of every game of the set.
    pub rules: RulesInfo,
    /// The time control.
    pub time: TimeControl,
    /// Number of games in the set.
    pub games: u32,
    /// Maximum line length in bytes, not counting the `\n`.
    pub line_limit: u64,
    /// Team sets only: the bot plays in a team, whose members take their side's turns
    /// in an order drawn for each game (`game.order`). Omitted in an ordinary set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team: Option<TeamInfo>,
}

/// `hello.team`: the bot's team and the opposing one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TeamInfo {
    /// The bot's team.
    pub name: String,
    /// The team's members by name, the bot itself included: the bot's partners are the
    /// others. Indices into this list are the `order` of `game`.
    pub members: Vec<String>,
    /// The bot's own index in `members`.
    pub you: u32,
    /// The opposing team.
    pub opponent: String,
    /// The opposing team's members by name.
    pub opponent_members: Vec<String>,
}

/// The `game` message: a new game starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameStart {
    /// Game number in the set, from 1.
    pub game: u32,
    /// Whether this bot moves first.
    pub first: bool,
    /// The bot's 2W pits at the start, in its own numbering.
    pub you: Vec<u32>,
    /// The opponent's 2W pits at the start, in the opponent's numbering.
    pub opponent: Vec<u32>,
    /// Team sets only: the order in which the bot's team takes its side's turns in this
    /// game, as indices into `hello.team.members` (drawn by lot for each game): the
    /// side's first move is played by `order[0]`, the next by `order[1]`, and so on
    /// round. Omitted in an ordinary set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<Vec<u32>>,
    /// Team sets only: the opposing team's order, as indices into
    /// `hello.team.opponent_members`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opponent_order: Option<Vec<u32>>,
}

/// The `turn` message: the bot is to move.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Turn {
    /// Game number in the set, from 1.
    pub game: u32,
    /// Plies played so far in this game (0 for the first move of the game).
    pub ply: u32,
    /// The bot's 2W pits, in its own numbering.
    pub you: Vec<u32>,
    /// The opponent's 2W pits, in the opponent's numbering.
    pub opponent: Vec<u32>,
    /// The pits the bot may play, ascending. Never empty.
    pub legal: Vec<u32>,
    /// The last move on the board, in the numbering of the side that played it (the
    /// opponent's, as sides alternate; in a team set, whichever opposing team-mate
    /// played it); `null` when no move has been played yet in this game.
    pub last: Option<u32>,
    /// Milliseconds the bot has for this move.
    pub time_ms: u64,
    /// Clock mode only: milliseconds left on the opponent's clock. Omitted otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opponent_time_ms: Option<u64>,
}

/// The `result` message: a game is over.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameResult {
    /// Game number in the set, from 1.
    pub game: u32,
    /// The game's outcome for this bot.
    pub outcome: Outcome,
    /// Why the game ended.
    pub reason: Reason,
    /// Points of this game.
    pub points: Points,
    /// The last pit played in the game, whoever played it (the receiving bot's own
    /// move, when it ended the game), in the numbering of the side that played it;
    /// `null` when no move was played.
    pub last: Option<u32>,
    /// The bot's pits at the end, in its own numbering.
    pub you: Vec<u32>,
    /// The opponent's pits at the end, in the opponent's numbering.
    pub opponent: Vec<u32>,
    /// Plies played in the game.
    pub plies: u32,
    /// Present when the game ended by a fault: whose fault. The referee stops a bot
    /// that faults and never sends it the result of that game, so in an ordinary set
    /// it only ever sends [`Side::Opponent`]; in a team set the faulting bot's
    /// team-mates hear [`Side::You`] (their side faulted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault_by: Option<Side>,
    /// Present when the game ended by a fault: what happened, in plain words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// The `bye` message: the set is over.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bye {
    /// Points of the whole set.
    pub points: Points,
    /// The set's outcome for this bot.
    pub outcome: Outcome,
}

/// Points of a game or a set, from the receiving bot's point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Points {
    /// The receiving bot's points.
    pub you: u32,
    /// The opponent's points.
    pub opponent: u32,
}

/// A game's or set's outcome for the receiving bot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// `win`.
    Win,
    /// `loss`.
    Loss,
    /// `draw`.
    Draw,
}

/// One of the two sides, from the receiving bot's point of view (`result.fault_by`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// `you`: the receiving bot.
    You,
    /// `opponent`: the other bot.
    Opponent,
}

/// A message from a bot to the referee, tagged by its `type` field.
///
/// The referee decodes bot lines with [`decode_bot_message`](crate::decode_bot_message),
/// which is stricter than this type's `Deserialize` and says exactly what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum BotMessage {
    /// `ready`: the answer to `hello`.
    Ready {
        /// The bot's name for logs, if it gives one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    /// `move`: the answer to `turn`.
    Move {
        /// The pit to play, in the bot's own numbering. Whether it is in range and
        /// legal is for the referee to check, not the decoder.
        pit: u64,
    },
}

impl RefereeMessage {
    /// The message as one line of JSON ending in `\n`.
    pub fn to_line(&self) -> String {
        infallible_line(self)
    }
}

impl BotMessage {
    /// The message as one line of JSON ending in `\n`.
    pub fn to_line(&self) -> String {
        infallible_line(self)
    }
}

fn infallible_line<T: Serialize>(msg: &T) -> String {
    // serde_json only fails on maps with non-string keys and on failing Serialize
    // impls; the message types have neither.
    crate::encode_line(msg).expect("protocol messages always serialize")
}

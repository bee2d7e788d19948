//! Protocol v1 between the Hus referee and its bots: the wire messages and the line
//! codec. No processes and no game rules here; `PROTOCOL.md` at the repository root is
//! the specification for bot authors.
//!
//! Every message is one JSON object on one line. The referee sends
//! [`RefereeMessage`]s (`hello`, `game`, `turn`, `result`, `bye`) and a bot answers
//! with [`BotMessage`]s (`ready`, `move`). Both encode with `to_line` (or
//! [`encode_line`]).
//!
//! The referee reads a bot's stdout with a [`LineReader`], which splits the stream
//! into trimmed, non-blank [`Line`]s of at most [`MAX_LINE_LEN`] bytes and is
//! cancel-safe, and decodes each line with [`decode_bot_message`], whose
//! [`DecodeError`] says exactly what is wrong and which fault it is
//! ([`DecodeError::kind`], a [`BadLineKind`], convertible to a [`FaultKind`]).
//! [`excerpt`] shows offending bytes in a report.
//!
//! A bot written in Rust reads the referee with [`read_referee_message`] (or
//! [`decode_referee_message`] on its own lines), which ignores unknown fields and
//! turns unknown message types into [`RefereeMessage::Unknown`], and answers with
//! [`write_message`].
//!
//! ```
//! use protocol::{decode_bot_message, BadLineKind, BotMessage, RefereeMessage, Turn};
//!
//! let turn = RefereeMessage::Turn(Turn {
//!     game: 1,
//!     ply: 0,
//!     you: vec![0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2],
//!     opponent: vec![0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2],
//!     legal: vec![4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
//!     last: None,
//!     time_ms: 1000,
//!     opponent_time_ms: None,
//! });
//! let line = turn.to_line();
//! assert!(line.starts_with(r#"{"type":"turn","game":1,"ply":0,"you":[0,0,0,0,2,"#));
//! assert!(line.ends_with("\"last\":null,\"time_ms\":1000}\n"));
//!
//! // The bot's answer, as the referee decodes it.
//! let answer = decode_bot_message(b"{\"type\":\"move\",\"pit\":4}\r");
//! assert_eq!(answer, Ok(BotMessage::Move { pit: 4 }));
//!
//! let error = decode_bot_message(br#"{"type":"move","pit":"4"}"#).unwrap_err();
//! assert_eq!(
//!     error.to_string(),
//!     r#"pit must be a non-negative integer, got "4" (a string)"#
//! );
//! assert_eq!(error.kind(), BadLineKind::InvalidPit);
//! ```
#![deny(missing_docs)]

mod decode;
mod excerpt;
mod line;
mod messages;
mod reason;
mod rules;
mod sync_io;

pub use decode::{
    decode_bot_message, decode_referee_message, encode_line, BadLineKind, DecodeError, JsonKind,
    PitProblem, RefereeDecodeError,
};
pub use excerpt::excerpt;
pub use line::{Line, LineError, LineReader, MAX_LINE_LEN, PARTIAL_KEEP, READ_CHUNK};
pub use messages::{
    BotMessage, Bye, GameResult, GameStart, Hello, Outcome, Points, RefereeMessage, Side, TeamInfo,
    Turn, PROTOCOL_VERSION,
};
pub use reason::{FaultKind, Reason};
pub use rules::{Capture, CapturedSownFrom, Preset, RulesInfo, Scoring, Sowing, TimeControl};
pub use sync_io::{
    read_referee_line, read_referee_line_with_limit, read_referee_message, write_message,
};

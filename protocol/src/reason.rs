//! Why a game ended (`result.reason`) and the kinds of fault.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A fault: something a bot did (or failed to do) that loses it the game.
///
/// On the wire it is the `reason` of a `result` message, in kebab-case
/// ([`FaultKind::as_str`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaultKind {
    /// `time-out`: no complete move line within the time for the move.
    TimeOut,
    /// `start-up`: no valid `ready` within the start-up allowance.
    StartUp,
    /// `crash`: the bot exited, or closed its stdout, while the referee needed it.
    Crash,
    /// `malformed`: a line that is not a JSON object with a string `type`
    /// (see [`BadLineKind::Malformed`](crate::BadLineKind::Malformed)).
    Malformed,
    /// `wrong-message`: a well-formed message of a type the referee did not expect.
    WrongMessage,
    /// `invalid-pit`: a `move` whose `pit` is missing or not a non-negative integer.
    InvalidPit,
    /// `illegal-move`: an integer pit out of range, or one holding too few seeds.
    IllegalMove,
    /// `oversized-line`: a line longer than the line limit.
    OversizedLine,
    /// `unsolicited-message`: a line sent when no move was asked for.
    UnsolicitedMessage,
}

impl FaultKind {
    /// Every fault kind, in the order of the protocol document.
    pub const ALL: [FaultKind; 9] = [
        FaultKind::TimeOut,
        FaultKind::StartUp,
        FaultKind::Crash,
        FaultKind::Malformed,
        FaultKind::WrongMessage,
        FaultKind::InvalidPit,
        FaultKind::IllegalMove,
        FaultKind::OversizedLine,
        FaultKind::UnsolicitedMessage,
    ];

    /// The wire name, e.g. `"time-out"`.
    pub fn as_str(self) -> &'static str {
        match self {
            FaultKind::TimeOut => "time-out",
            FaultKind::StartUp => "start-up",
            FaultKind::Crash => "crash",
            FaultKind::Malformed => "malformed",
            FaultKind::WrongMessage => "wrong-message",
            FaultKind::InvalidPit => "invalid-pit",
            FaultKind::IllegalMove => "illegal-move",
            FaultKind::OversizedLine => "oversized-line",
            FaultKind::UnsolicitedMessage => "unsolicited-message",
        }
    }

    /// The fault kind with this wire name, if any.
    pub fn from_wire(name: &str) -> Option<FaultKind> {
        FaultKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == name)
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a game ended: `result.reason`.
///
/// On the wire this is a plain string. Decoding never fails on an unknown string: it
/// becomes [`Reason::Other`], so that a bot keeps working when a reason is added.
/// Build values with the variants or with [`Reason::from_wire`]; the latter maps a
/// known name to its variant, so `Other` never holds a known name when built that way.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Reason {
    /// `no-moves`: the side to move had no pit with enough seeds.
    NoMoves,
    /// `repetition`: a position occurred for the second time.
    Repetition,
    /// `no-capture-limit`: too many plies in a row without a capture.
    NoCaptureLimit,
    /// The game ended by a fault; `result.fault_by` says whose.
    Fault(FaultKind),
    /// A reason this crate does not know.
    Other(String),
}

impl Reason {
    /// The wire string, e.g. `"no-moves"` or `"time-out"`.
    pub fn as_str(&self) -> &str {
        match self {
            Reason::NoMoves => "no-moves",
            Reason::Repetition => "repetition",
            Reason::NoCaptureLimit => "no-capture-limit",
            Reason::Fault(kind) => kind.as_str(),
            Reason::Other(name) => name,
        }
    }

    /// Parses a wire string; unknown strings become [`Reason::Other`].
    pub fn from_wire(name: &str) -> Reason {
        match name {
            "no-moves" => Reason::NoMoves,
            "repetition" => Reason::Repetition,
            "no-capture-limit" => Reason::NoCaptureLimit,
            _ => match FaultKind::from_wire(name) {
                Some(kind) => Reason::Fault(kind),
                None => Reason::Other(name.to_owned()),
            },
        }
    }

    /// The fault kind, when the game ended by a fault.
    pub fn fault(&self) -> Option<FaultKind> {
        match self {
            Reason::Fault(kind) => Some(*kind),
            _ => None,
        }
    }
}

impl From<FaultKind> for Reason {
    fn from(kind: FaultKind) -> Reason {
        Reason::Fault(kind)
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Reason {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Reason {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Reason, D::Error> {
        struct ReasonVisitor;

        impl serde::de::Visitor<'_> for ReasonVisitor {
            type Value = Reason;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a reason string")
            }

            fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<Reason, E> {
                Ok(Reason::from_wire(name))
            }
        }

        deserializer.deserialize_str(ReasonVisitor)
    }
}

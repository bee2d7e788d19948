//! Encoding lines, and decoding them: strictly for bot lines, leniently for referee lines.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde::Serialize;
use serde_json::value::RawValue;

use crate::excerpt::excerpt;
use crate::messages::{BotMessage, RefereeMessage};
use crate::reason::FaultKind;

/// How many characters of an offending value an error message quotes.
const QUOTE_MAX: usize = 40;

/// Encodes a message as one line of compact JSON ending in `\n`.
///
/// The line never contains another newline: compact JSON escapes newlines inside
/// strings. Fails only for values serde_json cannot encode (maps with non-string keys);
/// the protocol's own messages have [`RefereeMessage::to_line`] and
/// [`BotMessage::to_line`], which cannot fail.
pub fn encode_line<M: Serialize + ?Sized>(msg: &M) -> Result<String, serde_json::Error> {
    let mut line = serde_json::to_string(msg)?;
    line.push('\n');
    Ok(line)
}

/// Decodes a line from the referee, for a bot.
///
/// Unknown fields are ignored and an unknown message type decodes as
/// [`RefereeMessage::Unknown`], so a bot keeps working when the protocol grows.
/// Surrounding whitespace (a trailing `\r` included) is accepted.
pub fn decode_referee_message(line: &str) -> Result<RefereeMessage, RefereeDecodeError> {
    serde_json::from_str(line).map_err(RefereeDecodeError)
}

/// A referee line that [`decode_referee_message`] could not decode. The JSON error is
/// in the message, not a source of its own: a printer of the chain would say it twice.
#[derive(Debug, thiserror::Error)]
#[error("cannot decode the referee's line: {0}")]
pub struct RefereeDecodeError(pub serde_json::Error);

/// Decodes a line from a bot, strictly.
///
/// Accepts `{"type":"ready"}` (with an optional string `name`) and
/// `{"type":"move","pit":N}` with N a non-negative integer written as plain digits.
/// Unknown fields are ignored; surrounding whitespace is accepted. Whether the pit is
/// in range is not checked here. Every other line is an error that says what is wrong.
pub fn decode_bot_message(line: &[u8]) -> Result<BotMessage, DecodeError> {
    let text = std::str::from_utf8(line).map_err(|e| DecodeError::NotUtf8 {
        offset: e.valid_up_to(),
    })?;
    // Parse to raw JSON text first: this validates the whole line without turning any
    // number into a float, so `1e999` is valid JSON here and the pit check below can
    // call it too large.
    let raw: &RawValue = serde_json::from_str(text).map_err(DecodeError::not_json)?;
    let found = JsonKind::of(raw);
    if found != JsonKind::Object {
        return Err(DecodeError::NotAnObject { found });
    }
    let fields: Fields<'_> = serde_json::from_str(raw.get()).map_err(DecodeError::not_json)?;

    let type_raw = fields.get("type")?.ok_or(DecodeError::MissingType)?;
    let type_name = string_field(type_raw)
        .map_err(|found| DecodeError::TypeNotString { found })?
        .ok_or(DecodeError::TypeNotString {
            found: JsonKind::Null,
        })?;
    match type_name.as_str() {
        "ready" => {
            let name = match fields.get("name")? {
                None => None,
                Some(raw) => {
                    string_field(raw).map_err(|found| DecodeError::InvalidName { found })?
                }
            };
            Ok(BotMessage::Ready { name })
        }
        "move" => {
            let raw = fields.get("pit")?.ok_or(DecodeError::MissingPit)?;
            let pit = classify_pit(raw).map_err(|problem| DecodeError::InvalidPit {
                found: excerpt(raw.get().as_bytes(), QUOTE_MAX),
                problem,
            })?;
            Ok(BotMessage::Move { pit })
        }
        _ => Err(DecodeError::UnknownType { name: type_name }),
    }
}

/// Why a bot's line was rejected. Each message is meant for the bot's author.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The line is not valid UTF-8.
    #[error("line is not valid UTF-8 (invalid byte at offset {offset})")]
    NotUtf8 {
        /// Byte offset of the first invalid byte in the line.
        offset: usize,
    },
    /// The line is not valid JSON.
    #[error("line is not valid JSON: {message}")]
    NotJson {
        /// The JSON parser's message, with the column.
        message: String,
    },
    /// The line is valid JSON but not an object.
    #[error("line must be a JSON object such as {{\"type\":\"move\",\"pit\":4}}, got {found}")]
    NotAnObject {
        /// What the line is instead.
        found: JsonKind,
    },
    /// The object has no `type` field.
    #[error("message has no \"type\" field")]
    MissingType,
    /// The `type` field is not a string.
    #[error("\"type\" must be a string, got {found}")]
    TypeNotString {
        /// What the field is instead.
        found: JsonKind,
    },
    /// A field the decoder reads (`type`, `name` or `pit`) appears more than once.
    #[error("field \"{field}\" appears more than once")]
    DuplicateField {
        /// The repeated field.
        field: &'static str,
    },
    /// `type` names no message a bot sends.
    #[error(
        "unknown message type \"{}\" (a bot sends \"ready\" or \"move\")",
        excerpt(name.as_bytes(), QUOTE_MAX)
    )]
    UnknownType {
        /// The type as sent.
        name: String,
    },
    /// The `name` of a `ready` message is neither a string nor null.
    #[error("\"name\" must be a string or null, got {found}")]
    InvalidName {
        /// What the field is instead.
        found: JsonKind,
    },
    /// A `move` message has no `pit` field.
    #[error("\"move\" message has no \"pit\" field")]
    MissingPit,
    /// The `pit` of a `move` message is not a non-negative integer.
    #[error("pit must be a non-negative integer, got {found} ({problem})")]
    InvalidPit {
        /// The pit's JSON text, as an [`excerpt`](crate::excerpt) of 40 characters.
        found: String,
        /// What is wrong with it.
        problem: PitProblem,
    },
}

impl DecodeError {
    fn not_json(e: serde_json::Error) -> DecodeError {
        DecodeError::NotJson {
            message: e.to_string(),
        }
    }

    /// Which fault this error is.
    pub fn kind(&self) -> BadLineKind {
        match self {
            DecodeError::NotUtf8 { .. }
            | DecodeError::NotJson { .. }
            | DecodeError::NotAnObject { .. }
            | DecodeError::MissingType
            | DecodeError::TypeNotString { .. }
            | DecodeError::DuplicateField { .. }
            | DecodeError::InvalidName { .. } => BadLineKind::Malformed,
            DecodeError::UnknownType { .. } => BadLineKind::WrongMessage,
            DecodeError::MissingPit | DecodeError::InvalidPit { .. } => BadLineKind::InvalidPit,
        }
    }
}

/// The fault a [`DecodeError`] is, see [`DecodeError::kind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BadLineKind {
    /// Not UTF-8, not JSON, not an object, no string `type`, a repeated field, or a
    /// `name` that is not a string.
    Malformed,
    /// A `type` no bot sends.
    WrongMessage,
    /// A `move` with a missing pit or one that is not a non-negative integer.
    InvalidPit,
}

impl From<BadLineKind> for FaultKind {
    fn from(kind: BadLineKind) -> FaultKind {
        match kind {
            BadLineKind::Malformed => FaultKind::Malformed,
            BadLineKind::WrongMessage => FaultKind::WrongMessage,
            BadLineKind::InvalidPit => FaultKind::InvalidPit,
        }
    }
}

/// The kind of a JSON value, for error messages ("got an array").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JsonKind {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool,
    /// A number.
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

impl JsonKind {
    fn of(raw: &RawValue) -> JsonKind {
        // RawValue holds exactly one valid JSON value with no leading whitespace, so
        // its first byte tells its kind.
        match raw.get().as_bytes().first() {
            Some(b'n') => JsonKind::Null,
            Some(b't' | b'f') => JsonKind::Bool,
            Some(b'"') => JsonKind::String,
            Some(b'[') => JsonKind::Array,
            Some(b'{') => JsonKind::Object,
            _ => JsonKind::Number,
        }
    }
}

impl fmt::Display for JsonKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            JsonKind::Null => "null",
            JsonKind::Bool => "a boolean",
            JsonKind::Number => "a number",
            JsonKind::String => "a string",
            JsonKind::Array => "an array",
            JsonKind::Object => "an object",
        })
    }
}

/// What is wrong with a pit that is not a non-negative integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PitProblem {
    /// A string, such as `"4"`.
    String,
    /// `true` or `false`.
    Bool,
    /// `null`.
    Null,
    /// An array.
    Array,
    /// An object.
    Object,
    /// A number with a minus sign (`-0` included).
    Negative,
    /// A number with a fraction, such as `4.5` or `1e-3`.
    NotWhole,
    /// A whole number written with a decimal point or an exponent, such as `4.0` or
    /// `4e0`: the protocol asks for plain digits.
    DecimalForm,
    /// A whole number larger than 2^64 - 1, such as `99999999999999999999` or `1e999`.
    TooLarge,
}

impl fmt::Display for PitProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PitProblem::String => "a string",
            PitProblem::Bool => "a boolean",
            PitProblem::Null => "null, not a number",
            PitProblem::Array => "an array",
            PitProblem::Object => "an object",
            PitProblem::Negative => "a negative number",
            PitProblem::NotWhole => "not a whole number",
            PitProblem::DecimalForm => {
                "a whole number written with a decimal point or exponent; send plain digits"
            }
            PitProblem::TooLarge => "a number too large to be a pit",
        })
    }
}

/// Reads a pit from its JSON text.
fn classify_pit(raw: &RawValue) -> Result<u64, PitProblem> {
    match JsonKind::of(raw) {
        JsonKind::Null => return Err(PitProblem::Null),
        JsonKind::Bool => return Err(PitProblem::Bool),
        JsonKind::String => return Err(PitProblem::String),
        JsonKind::Array => return Err(PitProblem::Array),
        JsonKind::Object => return Err(PitProblem::Object),
        JsonKind::Number => {}
    }
    let text = raw.get();
    if text.starts_with('-') {
        return Err(PitProblem::Negative);
    }
    if text.bytes().all(|b| b.is_ascii_digit()) {
        // JSON grammar: no leading zeros, so only overflow can fail here.
        return text.parse::<u64>().map_err(|_| PitProblem::TooLarge);
    }
    Err(decimal_problem(text))
}

/// What is wrong with a JSON number written with a fraction or exponent: it is not
/// whole, too large, or (being whole and small enough) only its form. Worked out from
/// the digits, never through a float.
fn decimal_problem(text: &str) -> PitProblem {
    match whole_value_of_decimal(text) {
        Ok(_) => PitProblem::DecimalForm,
        Err(problem) => problem,
    }
}

/// The value of a non-negative JSON number written with a fraction or exponent, when
/// it is whole and fits in u64.
fn whole_value_of_decimal(text: &str) -> Result<u64, PitProblem> {
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(at) => (&text[..at], &text[at + 1..]),
        None => (text, "0"),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let exponent = parse_exponent(exponent);
    // value = digits * 10^(exponent - frac_len), digits without leading zeros.
    let digits: String = int_part.chars().chain(frac_part.chars()).collect();
    let digits = digits.trim_start_matches('0');
    let significant = digits.trim_end_matches('0');
    if significant.is_empty() {
        return Ok(0);
    }
    let trailing_zeros = (digits.len() - significant.len()) as i64;
    let scale = exponent
        .saturating_sub(frac_part.len() as i64)
        .saturating_add(trailing_zeros);
    if scale < 0 {
        return Err(PitProblem::NotWhole);
    }
    // u64::MAX has 20 digits.
    if significant.len() as i64 + scale > 20 {
        return Err(PitProblem::TooLarge);
    }
    let mut value: u64 = significant.parse().map_err(|_| PitProblem::TooLarge)?;
    for _ in 0..scale {
        value = value.checked_mul(10).ok_or(PitProblem::TooLarge)?;
    }
    Ok(value)
}

/// Parses a JSON exponent (`+12`, `-3`, `7`), saturating far beyond any use.
fn parse_exponent(text: &str) -> i64 {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let magnitude = digits.bytes().fold(0i64, |acc, b| {
        acc.saturating_mul(10).saturating_add(i64::from(b - b'0'))
    });
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

/// Reads a string field: `Ok(None)` for null, `Err(kind)` for anything else.
fn string_field(raw: &RawValue) -> Result<Option<String>, JsonKind> {
    match JsonKind::of(raw) {
        JsonKind::Null => Ok(None),
        JsonKind::String => serde_json::from_str(raw.get())
            .map(Some)
            .map_err(|_| JsonKind::String),
        other => Err(other),
    }
}

/// The fields of a JSON object, as raw JSON text, in order, duplicates kept.
struct Fields<'a>(Vec<(String, &'a RawValue)>);

impl<'a> Fields<'a> {
    /// The one value of a field the decoder reads; a repeated one is an error, because
    /// different JSON parsers would disagree on which copy counts.
    fn get(&self, field: &'static str) -> Result<Option<&'a RawValue>, DecodeError> {
        let mut values = self.0.iter().filter(|(key, _)| key == field);
        let first = values.next().map(|(_, raw)| *raw);
        if values.next().is_some() {
            return Err(DecodeError::DuplicateField { field });
        }
        Ok(first)
    }
}

impl<'de> Deserialize<'de> for Fields<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FieldsVisitor;

        impl<'de> Visitor<'de> for FieldsVisitor {
            type Value = Fields<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields<'de>, A::Error> {
                let mut fields = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    let value: &'de RawValue = map.next_value()?;
                    fields.push((key, value));
                }
                Ok(Fields(fields))
            }
        }

        deserializer.deserialize_map(FieldsVisitor)
    }
}

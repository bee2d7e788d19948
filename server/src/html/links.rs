//! The addresses of the dashboard's pages, each name percent-encoded as a path
//! segment.

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

/// What a path segment may hold as it is: the rest is percent-encoded.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.');

pub(super) fn encode(text: &str) -> String {
    utf8_percent_encode(text, SEGMENT).to_string()
}

/// A bot's page.
pub fn bot_href(name: &str) -> String {
    format!("/bots/{}", encode(name))
}

/// A bot's page with only its sets against `vs`.
pub fn pair_href(name: &str, vs: &str) -> String {
    format!("/bots/{}?vs={}", encode(name), encode(vs))
}

/// A set's page.
pub fn set_href(set: &str) -> String {
    format!("/sets/{}", encode(set))
}

/// A set's replay page.
pub fn replay_href(set: &str) -> String {
    format!("/sets/{}/replay", encode(set))
}

pub(super) fn log_href(set: &str) -> String {
    format!("/api/sets/{}/log", encode(set))
}

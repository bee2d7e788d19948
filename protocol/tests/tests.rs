//! Tests of the `protocol` crate: one binary, one module per concern.

// Shared helpers: sample messages, a reader that yields given chunks.
mod support;

// Exact JSON text of every message, round trips, tolerance of unknown fields and types.
mod wire_format;
// The strict bot-line decoder: one test per error, with its exact message and kind.
mod decode;
// The async line reader: splitting, trimming, limits, EOF, cancel-safety.
mod line_reader;
// Excerpts of untrusted bytes for reports.
mod excerpt;
// The blocking helpers for Rust bots.
mod sync_io;
// Property tests: no panics, round trips, bounded memory.
mod props;
// The example session in PROTOCOL.md decodes and re-encodes byte for byte.
mod spec_examples;

//! `remote`: bots that play from their authors' machines.
//!
//! A server opens a [`BotPort`] (TCP, loopback unless told otherwise) over a
//! [`Registry`] of the league's remote bots and the SHA-256 of their tokens. A bot
//! connects, sends `{"type":"auth","bot":"NAME","token":"..."}` (bounded in length and
//! time; failed logins are logged without the token and rate-limited per network),
//! gets `{"type":"welcome",...}` and waits. A scheduler asks the registry whether a
//! bot is connected ([`Registry::is_connected`]) and gives its set's [`referee::Entrant`]
//! the bot's [`Registry::connector`]: `referee::play_set` then takes a connection for the set
//! and speaks protocol v1 over it exactly as over a process's pipes, crediting the
//! measured round-trip time up to the league's `lag_cap`. One connection carries one
//! set at most; a bot that disconnects mid-set has crashed, and may connect again.
//!
//! [`new_token`], [`token_hash`] and [`token_matches`] make, hash and check every
//! token of the project (`hus token`, in the `server` crate, makes bots' tokens and the
//! admin token with them); [`run_connect`] is `hus connect` (runs a local bot program
//! and bridges it to a server, reconnecting with backoff).

#![deny(missing_docs)]

mod args;
mod buckets;
mod connect;
mod port;
mod registry;
mod token;

pub use args::ConnectArgs;
pub use connect::run as run_connect;
pub use port::{
    listen, Address, AuthReply, BotPort, Network, PortConfig, DEFAULT_BOT_LISTEN, LISTEN_BACKLOG,
};
pub use registry::{tcp_rtt, Registry};
pub use token::{hex, new_token, token_hash, token_matches};

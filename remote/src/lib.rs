//! `remote`: bots that play from their authors' machines.
//!
//! A server opens a [`BotPort`] (TCP, loopback unless told otherwise) over a
//! [`Registry`] of the league's remote bots and the SHA-256 of their tokens. A bot
//! connects, sends `{"type":"auth","bot":"NAME","token":"..."}` (bounded in length and
//! time; failed logins are logged without the token and rate-limited per address),
//! gets `{"type":"welcome",...}` and waits. A scheduler asks the registry whether a
//! bot is connected ([`Registry::is_connected`]) and builds its set's [`referee::Entrant`]
//! with [`Registry::entrant`]: `referee::play_set` then takes a connection for the set
//! and speaks protocol v1 over it exactly as over a process's pipes, crediting the
//! measured round-trip time up to the league's `lag_cap`. One connection carries one
//! set at most; a bot that disconnects mid-set has crashed, and may connect again.
//!
//! [`run_token`] is `hus token` (a random 256-bit token; only its hash is stored) and
//! [`run_connect`] is `hus connect` (runs a local bot program and bridges it to a
//! server, reconnecting with backoff).

#![deny(missing_docs)]

mod args;
mod connect;
mod port;
mod registry;
mod token;

use std::process::ExitCode;

pub use args::{BotPortArgs, ConnectArgs, TokenArgs};
pub use connect::run as run_connect;
pub use port::{AuthReply, BotPort, PortConfig, DEFAULT_BOT_LISTEN};
pub use registry::{tcp_rtt, Registry};
pub use token::{hex, new_token, token_hash, token_matches};

/// Runs `hus token`: prints a new token (or writes it to `--out`, readable by its
/// owner only) and the league file line that stores its hash.
pub fn run_token(args: &TokenArgs) -> anyhow::Result<ExitCode> {
    use anyhow::Context;
    let token = new_token();
    let line = format!("token_sha256 = \"{}\"", hex(&token_hash(&token)));
    match &args.out {
        Some(path) => {
            use std::io::Write;
            use std::os::unix::fs::OpenOptionsExt;
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(path)
                .with_context(|| format!("cannot create the token file {}", path.display()))?;
            writeln!(file, "{token}")
                .with_context(|| format!("cannot write the token file {}", path.display()))?;
            eprintln!(
                "hus token: the token is in {} (give it to the bot's author); put this line in the bot's [[bot]] table:",
                path.display()
            );
            println!("{line}");
        }
        None => {
            eprintln!("hus token: the token (shown only this once; give it to the bot's author), then the line for the bot's [[bot]] table:");
            println!("{token}");
            println!("{line}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

//! The bot port: a TCP listener (loopback unless told otherwise) where remote bots log
//! in with one line, `{"type":"auth","bot":"NAME","token":"..."}`, and then wait in the
//! [`Registry`] for a set. Everything a stranger can make it do is bounded: the number
//! of connections, the auth line's length and the time to send it, and failed logins
//! per address (after too many, an address is refused without looking at its token
//! until its window passes). Failed logins are logged (`tracing`, target `remote`) with
//! the address and the bot's name, never the token.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::AsFd;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::registry::{tcp_rtt, Registry, Waiting};
use crate::token::{token_hash, token_matches};

/// The bot port's limits. `Default` is what `hus serve` uses.
#[derive(Clone, Debug)]
pub struct PortConfig {
    /// Where to listen: loopback by default; another address opens the port to the
    /// network.
    pub listen: SocketAddr,
    /// How long a new connection has to send its auth line.
    pub auth_timeout: Duration,
    /// The longest auth line, in bytes (its newline aside).
    pub auth_line_limit: usize,
    /// The most connections open at once (logging in, waiting, playing).
    pub max_connections: usize,
    /// The most connections one bot may have waiting for a set.
    pub max_per_bot: usize,
    /// Failed logins an address may make within `failure_window` before it is
    /// refused without a look at its token.
    pub failures_allowed: u32,
    /// The window failed logins are counted in.
    pub failure_window: Duration,
}

/// The default bot port.
pub const DEFAULT_BOT_LISTEN: &str = "127.0.0.1:7000";

impl Default for PortConfig {
    fn default() -> Self {
        PortConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 7000)),
            auth_timeout: Duration::from_secs(5),
            auth_line_limit: 1024,
            max_connections: 256,
            max_per_bot: 4,
            failures_allowed: 5,
            failure_window: Duration::from_secs(60),
        }
    }
}

/// The server's answer to an auth line: one line, then (when welcome) protocol v1.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum AuthReply {
    /// Logged in: wait for `hello`.
    Welcome {
        /// The bot it logged in as.
        bot: String,
    },
    /// Not logged in; the connection is closed.
    Refused {
        /// Why, in plain words.
        reason: String,
        /// When trying again later may succeed (too many connections or failed
        /// logins), in how many milliseconds; absent when it never will as it is (a
        /// wrong token, a malformed line).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_ms: Option<u64>,
    },
}

impl AuthReply {
    /// Its line, with the newline.
    pub fn to_line(&self) -> String {
        let mut s = serde_json::to_string(self).unwrap_or_default();
        s.push('\n');
        s
    }
}

/// The auth line, exactly.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Auth {
    #[serde(rename = "type")]
    kind: String,
    bot: String,
    token: String,
}

/// A listening bot port. Dropping it stops accepting (connections already waiting
/// stay in the registry).
pub struct BotPort {
    local: SocketAddr,
    registry: Arc<Registry>,
    accept: JoinHandle<()>,
}

impl BotPort {
    /// Binds `config.listen` and starts accepting remote bots into `registry`.
    pub async fn bind(config: PortConfig, registry: Arc<Registry>) -> io::Result<BotPort> {
        let listener = TcpListener::bind(config.listen).await.map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot listen for bots on {}: {e}", config.listen),
            )
        })?;
        let local = listener.local_addr()?;
        tracing::info!(%local, "bot port listening");
        let shared = Arc::new(Shared {
            slots: Arc::new(Semaphore::new(config.max_connections)),
            limiter: Limiter::new(config.failures_allowed, config.failure_window),
            config,
            registry: Arc::clone(&registry),
        });
        let accept = tokio::spawn(accept_loop(listener, shared));
        Ok(BotPort {
            local,
            registry,
            accept,
        })
    }

    /// The address it listens on (with the port the system chose for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The registry the port fills.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }
}

impl Drop for BotPort {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

struct Shared {
    config: PortConfig,
    slots: Arc<Semaphore>,
    limiter: Limiter,
    registry: Arc<Registry>,
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(x) => x,
            Err(e) => {
                // Out of descriptors, say: wait a moment rather than spin.
                tracing::warn!(error = %e, "bot port: accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Ok(permit) = Arc::clone(&shared.slots).try_acquire_owned() else {
            tracing::warn!(%peer, "bot port: connection refused: too many connections");
            // Best effort, without waiting: the refused must not hold anything.
            let reply = AuthReply::Refused {
                reason: format!(
                    "the server has its {} connections; try again later",
                    shared.config.max_connections
                ),
                retry_ms: Some(5000),
            };
            let _ = stream.try_write(reply.to_line().as_bytes());
            continue;
        };
        let shared = Arc::clone(&shared);
        tokio::spawn(async move {
            let _ = stream.set_nodelay(true);
            if let Some(w) = admit(stream, peer, permit, &shared).await {
                let bot = w.0;
                if let Err(w) = shared.registry.add(&bot, w.1) {
                    tracing::warn!(bot = ?bot, peer = %peer, "remote bot refused: it has too many connections");
                    let reply = AuthReply::Refused {
                        reason: format!(
                            "bot {bot:?} already has {} connections waiting for a set",
                            shared.registry.max_per_bot()
                        ),
                        retry_ms: Some(5000),
                    };
                    let mut stream = w.stream;
                    let _ = write_line(&mut stream, &reply.to_line()).await;
                }
            }
        });
    }
}

/// Reads and checks the auth line; the connection with its bot when it logs in.
async fn admit(
    mut stream: TcpStream,
    peer: SocketAddr,
    permit: tokio::sync::OwnedSemaphorePermit,
    shared: &Shared,
) -> Option<(String, Waiting)> {
    let ip = peer.ip();
    let config = &shared.config;
    if let Some(wait) = shared.limiter.blocked(ip) {
        tracing::warn!(%peer, "login refused: too many failed logins from this address");
        let reply = AuthReply::Refused {
            reason: format!(
                "too many failed logins from {ip}; try again in {} s",
                wait.as_secs() + 1
            ),
            retry_ms: Some(wait.as_millis() as u64 + 1),
        };
        let _ = write_line(&mut stream, &reply.to_line()).await;
        return None;
    }
    let read = tokio::time::timeout(
        config.auth_timeout,
        read_line(&mut stream, config.auth_line_limit),
    )
    .await;
    let line = match read {
        Ok(Ok(line)) => line,
        Ok(Err(LineProblem::Closed)) => {
            tracing::info!(%peer, "bot port: connection closed before its auth line");
            shared.limiter.fail(ip);
            return None;
        }
        Ok(Err(LineProblem::Io(e))) => {
            tracing::info!(%peer, error = %e, "bot port: connection failed before its auth line");
            return None;
        }
        Ok(Err(LineProblem::TooLong)) => {
            return refuse(
                &mut stream,
                peer,
                shared,
                format!(
                    "the auth line is longer than {} bytes",
                    config.auth_line_limit
                ),
                "login refused: auth line too long",
            )
            .await;
        }
        Err(_) => {
            return refuse(
                &mut stream,
                peer,
                shared,
                format!("no auth line within {} ms", config.auth_timeout.as_millis()),
                "login refused: no auth line in time",
            )
            .await;
        }
    };
    let auth = match serde_json::from_slice::<Auth>(&line) {
        Ok(a) if a.kind == "auth" => a,
        Ok(a) => {
            return refuse(
                &mut stream,
                peer,
                shared,
                format!(
                    "the first line must be {{\"type\":\"auth\",...}}, not type {:?}",
                    a.kind
                ),
                "login refused: not an auth line",
            )
            .await;
        }
        Err(e) => {
            // The parser's words go to the client only: they may quote what it sent.
            return refuse(
                &mut stream,
                peer,
                shared,
                format!(
                    "the auth line is not {{\"type\":\"auth\",\"bot\":\"NAME\",\"token\":\"...\"}}: {e}"
                ),
                "login refused: malformed auth line",
            )
            .await;
        }
    };
    // An unknown bot is checked against a hash no token has, so that both take the
    // same time and give the same answer.
    let stored = shared.registry.token_of(&auth.bot);
    let matches = token_matches(&auth.token, &stored.unwrap_or_else(|| token_hash("")));
    if stored.is_none() || !matches {
        shared.limiter.fail(ip);
        tracing::warn!(%peer, bot = ?auth.bot, "login refused: wrong token or no such remote bot");
        let reply = AuthReply::Refused {
            reason: format!(
                "wrong token for bot {:?}, or no remote bot has that name",
                auth.bot
            ),
            retry_ms: None,
        };
        let _ = write_line(&mut stream, &reply.to_line()).await;
        return None;
    }
    let reply = AuthReply::Welcome {
        bot: auth.bot.clone(),
    };
    if write_line(&mut stream, &reply.to_line()).await.is_err() {
        return None;
    }
    let connect_rtt = tcp_rtt(stream.as_fd());
    tracing::info!(
        %peer,
        bot = ?auth.bot,
        rtt_ms = connect_rtt.map(|d| d.as_micros() as f64 / 1000.0),
        "remote bot logged in"
    );
    Some((
        auth.bot,
        Waiting {
            stream,
            peer,
            connect_rtt,
            permit,
        },
    ))
}

/// Refuses a login that failed for a reason that counts against the address.
async fn refuse(
    stream: &mut TcpStream,
    peer: SocketAddr,
    shared: &Shared,
    reason: String,
    log: &'static str,
) -> Option<(String, Waiting)> {
    shared.limiter.fail(peer.ip());
    tracing::warn!(%peer, "{log}");
    let reply = AuthReply::Refused {
        reason,
        retry_ms: None,
    };
    let _ = write_line(stream, &reply.to_line()).await;
    None
}

/// Writes a line, giving up after a moment (a client that reads nothing cannot hold
/// the task).
async fn write_line(stream: &mut TcpStream, line: &str) -> io::Result<()> {
    match tokio::time::timeout(Duration::from_secs(2), stream.write_all(line.as_bytes())).await {
        Ok(r) => r,
        Err(_) => Err(io::Error::new(io::ErrorKind::TimedOut, "write timed out")),
    }
}

pub(crate) enum LineProblem {
    Closed,
    TooLong,
    Io(io::Error),
}

/// Reads one line of at most `limit` bytes (without its newline and a `\r` before
/// it), a byte at a time so that nothing after it is consumed.
pub(crate) async fn read_line<R: AsyncReadExt + Unpin>(
    stream: &mut R,
    limit: usize,
) -> Result<Vec<u8>, LineProblem> {
    let mut line = Vec::with_capacity(128);
    let mut byte = [0u8; 1];
    loop {
        match stream.read(&mut byte).await {
            Ok(0) => return Err(LineProblem::Closed),
            Ok(_) => {}
            Err(e) => return Err(LineProblem::Io(e)),
        }
        if byte[0] == b'\n' {
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(line);
        }
        if line.len() >= limit {
            return Err(LineProblem::TooLong);
        }
        line.push(byte[0]);
    }
}

/// Failed logins per address, in fixed windows.
struct Limiter {
    failures: Mutex<HashMap<IpAddr, (u32, Instant)>>,
    allowed: u32,
    window: Duration,
}

/// Addresses remembered at most: past this, expired windows are forgotten first.
const LIMITER_ADDRESSES: usize = 10_000;

impl Limiter {
    fn new(allowed: u32, window: Duration) -> Self {
        Limiter {
            failures: Mutex::new(HashMap::new()),
            allowed,
            window,
        }
    }

    /// How long `ip` is still refused, if it is.
    fn blocked(&self, ip: IpAddr) -> Option<Duration> {
        let map = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        let &(count, since) = map.get(&ip)?;
        let left = self.window.checked_sub(since.elapsed())?;
        (count >= self.allowed).then_some(left)
    }

    fn fail(&self, ip: IpAddr) {
        let mut map = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if map.len() >= LIMITER_ADDRESSES {
            let window = self.window;
            map.retain(|_, (_, since)| now.duration_since(*since) < window);
        }
        if map.len() >= LIMITER_ADDRESSES && !map.contains_key(&ip) {
            return;
        }
        let entry = map.entry(ip).or_insert((0, now));
        if now.duration_since(entry.1) >= self.window {
            *entry = (0, now);
        }
        entry.0 = entry.0.saturating_add(1);
    }
}

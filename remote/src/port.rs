//! The bot port: a TCP listener (loopback unless told otherwise) where remote bots log
//! in with one line, `{"type":"auth","bot":"NAME","token":"..."}`, and then wait in the
//! [`Registry`] for a set. Everything a stranger can make it do is bounded: the number
//! of connections, the connections of one network that have not logged in yet, the
//! auth line's length and the time to send it, and failed logins per network (after
//! too many, a network is refused without a look at its token until its window
//! passes). Every connection that ends without a login is a failed login, whatever
//! ended it (a wrong token, a bad or missing line, the deadline, a reset, end of file).
//! The limits count networks, not addresses ([`Network`]: a /24 for IPv4, a /64 for
//! IPv6), because one machine commonly has many addresses of one such network. The
//! tables that count failed logins and refusals are bounded ([`Tiers`]): past their
//! figure, a new address or network is counted with its neighbours (its network, its
//! /16 or /48, then everything past the tables), so the limits get stricter, never
//! looser. Failed logins are logged (`tracing`, target `remote`) with the address and
//! the bot's name, never the token.

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::marker::PhantomData;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::AsFd;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::buckets::{Bucket, Tiered, Tiers, TABLE_ENTRIES};
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
    /// The most connections one address ([`Address`]) may have open that have not
    /// logged in yet: past it, a new one is refused at once, so that one address
    /// cannot hold the `max_connections` places by connecting and saying nothing.
    pub max_pending_per_address: usize,
    /// The same for all the addresses of one network ([`Network`]) together.
    pub max_pending_per_network: usize,
    /// Failed logins an address may make within `failure_window` before it is
    /// refused without a look at its token.
    pub failures_allowed: u32,
    /// Failed logins all the addresses of one network may make together within
    /// `failure_window` before the whole network is refused.
    pub network_failures_allowed: u32,
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
            max_pending_per_address: 8,
            max_pending_per_network: 32,
            failures_allowed: 5,
            network_failures_allowed: 30,
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
    shared: Arc<Shared>,
    accept: JoinHandle<()>,
}

impl BotPort {
    /// Binds `config.listen` and starts accepting remote bots into `registry`. The
    /// error is the system's: the caller names the option that gave the address
    /// ([`referee::ListenError`]).
    pub async fn bind(config: PortConfig, registry: Arc<Registry>) -> io::Result<BotPort> {
        let listener = listen(config.listen)?;
        let local = listener.local_addr()?;
        tracing::info!(%local, "bot port listening");
        let shared = Arc::new(Shared {
            slots: Arc::new(Semaphore::new(config.max_connections)),
            pending: (
                Arc::new(Pending::new(config.max_pending_per_address)),
                Arc::new(Pending::new(config.max_pending_per_network)),
            ),
            failures: limiters(&config),
            refusals: QuietLog::new(),
            config,
            registry,
        });
        let accept = tokio::spawn(accept_loop(listener, Arc::clone(&shared)));
        Ok(BotPort {
            local,
            shared,
            accept,
        })
    }

    /// The address it listens on (with the port the system chose for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The registry the port fills.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.shared.registry
    }
}

impl Drop for BotPort {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

/// An address as the bot port's limits count it: an IPv4-mapped IPv6 address
/// (`::ffff:a.b.c.d`, what a dual-stack socket reports for an IPv4 peer) is the IPv4
/// address it maps, so one peer counts the same whichever socket it reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Address(IpAddr);

impl Address {
    /// The address `ip` counts as.
    pub fn of(ip: IpAddr) -> Address {
        Address(match ip {
            IpAddr::V6(a) => a.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 => v4,
        })
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Connections the kernel queues for a listener of `hus` before they are accepted
/// (`listen(2)`'s backlog; the kernel caps it at `net.core.somaxconn`, 4096 by default
/// since Linux 5.4). Tokio's own `bind` asks for 1024: a burst of connections from one
/// address (which the accept loop then refuses at once) could fill that queue before
/// the loop runs, and another client's connection would wait for its SYN to be sent
/// again, a second later.
pub const LISTEN_BACKLOG: u32 = 4096;

/// A listener on `addr` with [`LISTEN_BACKLOG`] (and `SO_REUSEADDR`, as tokio's `bind`
/// sets): the bot port's and `hus serve`'s web port's.
pub fn listen(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = match addr {
        SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
        SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

/// The network an address is counted in by the bot port's limits, beside the address
/// itself: its /24 for IPv4, its /64 for IPv6, held as the network's first address
/// (an IPv4-mapped address as IPv4, as for [`Address`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Network(IpAddr);

impl Network {
    /// The network `ip` belongs to.
    pub fn of(ip: IpAddr) -> Network {
        Network(match Address::of(ip).0 {
            IpAddr::V4(a) => IpAddr::V4(Ipv4Addr::from(u32::from(a) & !0xff)),
            IpAddr::V6(a) => IpAddr::V6(Ipv6Addr::from(u128::from(a) & !u128::from(u64::MAX))),
        })
    }
}

impl fmt::Display for Network {
    /// `127.0.0.0/24`, `2001:db8:1:2::/64`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            IpAddr::V4(a) => write!(f, "{a}/24"),
            IpAddr::V6(a) => write!(f, "{a}/64"),
        }
    }
}

/// The failed logins' limiters of a port: per address, per network.
fn limiters(config: &PortConfig) -> (Limiter<Address>, Limiter<Network>) {
    (
        Limiter::new(config.failures_allowed, config.failure_window),
        Limiter::new(config.network_failures_allowed, config.failure_window),
    )
}

struct Shared {
    config: PortConfig,
    slots: Arc<Semaphore>,
    /// Connections not logged in yet, per address and per network.
    pending: (Arc<Pending<Address>>, Arc<Pending<Network>>),
    /// Failed logins, per address and per network.
    failures: (Limiter<Address>, Limiter<Network>),
    /// Refusals at accept, logged at most once a minute per network.
    refusals: QuietLog,
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
        let address = Address::of(peer.ip());
        let network = Network::of(peer.ip());
        let Some(places) = take_places(&stream, peer, &shared) else {
            continue;
        };
        let shared = Arc::clone(&shared);
        tokio::spawn(async move {
            let (permit, pending) = places;
            let _ = stream.set_nodelay(true);
            let login = admit(stream, peer, permit, &shared).await;
            drop(pending);
            if let Login::Failed = login {
                let address_blocked = shared.failures.0.fail(address);
                let network_blocked = shared.failures.1.fail(network);
                // Once per bucket and window: at most as many lines as the tables hold.
                for refused in [address_blocked, network_blocked].into_iter().flatten() {
                    tracing::warn!(%refused, "bot port: {refused} is refused for a while: too many failed logins");
                }
            }
        });
    }
}

/// What a connection holds while it logs in: one of the server's places, and one of
/// its address's and its network's pending places.
type Places = (
    tokio::sync::OwnedSemaphorePermit,
    (PendingPlace<Address>, PendingPlace<Network>),
);

/// The places a new connection may have, or `None` when it is refused (its answer
/// written): the refusals that need nothing from the client come first, before it
/// holds anything: an address or network past its failed logins, an address or
/// network with its connections logging in, a server with all its connections.
fn take_places(stream: &TcpStream, peer: SocketAddr, shared: &Shared) -> Option<Places> {
    let address = Address::of(peer.ip());
    let network = Network::of(peer.ip());
    let config = &shared.config;
    let too_many_failures = |whom: Bucket, wait: Duration| AuthReply::Refused {
        reason: format!(
            "too many failed logins from {whom}; try again in {} s",
            wait.as_secs() + 1
        ),
        retry_ms: Some(wait.as_millis() as u64 + 1),
    };
    let logging_in = |whom: &dyn fmt::Display, limit: usize| AuthReply::Refused {
        reason: format!("{whom} already has {limit} connections logging in; try again later"),
        retry_ms: Some(config.auth_timeout.as_millis() as u64),
    };
    let refused = |reply: AuthReply, log: &dyn fmt::Display| {
        shared.refusals.warn(network, peer, log);
        // Best effort, without waiting: the refused must not hold anything.
        let _ = stream.try_write(reply.to_line().as_bytes());
        None
    };
    if let Some((wait, bucket)) = shared.failures.0.blocked(address) {
        return refused(
            too_many_failures(bucket, wait),
            &TooMany {
                whom: "address",
                own: address.bucket(),
                bucket,
            },
        );
    }
    if let Some((wait, bucket)) = shared.failures.1.blocked(network) {
        return refused(
            too_many_failures(bucket, wait),
            &TooMany {
                whom: "network",
                own: network.bucket(),
                bucket,
            },
        );
    }
    let Some(by_address) = Pending::enter(&shared.pending.0, address) else {
        return refused(
            logging_in(&address, config.max_pending_per_address),
            &"connection refused: too many connections from this address logging in",
        );
    };
    let Some(by_network) = Pending::enter(&shared.pending.1, network) else {
        return refused(
            logging_in(&network, config.max_pending_per_network),
            &"connection refused: too many connections from this network logging in",
        );
    };
    let Ok(permit) = Arc::clone(&shared.slots).try_acquire_owned() else {
        return refused(
            AuthReply::Refused {
                reason: format!(
                    "the server has its {} connections; try again later",
                    config.max_connections
                ),
                retry_ms: Some(5000),
            },
            &"connection refused: too many connections",
        );
    };
    Some((permit, (by_address, by_network)))
}

/// The log line of a refusal for too many failed logins: `this address` when its own
/// bucket is refused, else the bucket it answers to (its network, its network's
/// coarser one, or the overflow, when the tables are full).
struct TooMany {
    whom: &'static str,
    own: Bucket,
    bucket: Bucket,
}

impl fmt::Display for TooMany {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.bucket == self.own {
            write!(
                f,
                "login refused: too many failed logins from this {}",
                self.whom
            )
        } else {
            write!(
                f,
                "login refused: too many failed logins from {}, where this {} is counted",
                self.bucket, self.whom
            )
        }
    }
}

/// Warnings that a stranger can cause as fast as it can connect, written at most once
/// a minute per network: the next one says how many were left out meanwhile. The
/// networks are counted in bounded [`Tiers`]: when its table is full, a new network is
/// counted (and its refusals logged) with its /16 or /48, then with every other network
/// past the tables, so a flood of networks writes at most one line per bucket a minute.
struct QuietLog {
    tiers: Mutex<Tiers>,
}

/// How long a network's refusals stay quiet after one is logged.
const QUIET_FOR: Duration = Duration::from_secs(60);

impl QuietLog {
    fn new() -> Self {
        QuietLog {
            tiers: Mutex::new(Tiers::new(TABLE_ENTRIES, QUIET_FOR)),
        }
    }

    /// Counts one more refusal of `network`: `Some((bucket, n))` when it is to be
    /// logged, `bucket` what it was counted in, `n` the refusals of that bucket left out
    /// since its last line.
    fn note(&self, network: Network) -> Option<(Bucket, u64)> {
        let mut tiers = self.tiers.lock().unwrap_or_else(|e| e.into_inner());
        let noted = tiers.note(network, Instant::now());
        (noted.count == 1).then(|| {
            let left_out = noted.previous.map_or(0, |n| n.saturating_sub(1));
            (noted.bucket, left_out)
        })
    }

    fn warn(&self, network: Network, peer: SocketAddr, what: &dyn fmt::Display) {
        let Some((bucket, left_out)) = self.note(network) else {
            return;
        };
        let shared = if bucket == network.bucket() {
            String::new()
        } else {
            format!(" (logged as {bucket}: the table of networks is full)")
        };
        if left_out > 0 {
            tracing::warn!(%peer, "{what}{shared} (and {left_out} more refusals of {bucket} since the last such line)");
        } else {
            tracing::warn!(%peer, "{what}{shared}");
        }
    }
}

/// How a login ended. Whatever the end, the client heard one line: `welcome` or
/// `refused` (PROTOCOL.md), or nothing when the connection was lost.
enum Login {
    /// Welcomed, and queued in the registry for a set.
    Queued,
    /// The right token, but the bot has all the connections it may have waiting:
    /// refused, and not a failed login.
    Full,
    /// A failed login, whatever the reason: the caller counts it.
    Failed,
}

/// Reads and checks the auth line, and queues the connection when it logs in.
async fn admit(
    mut stream: TcpStream,
    peer: SocketAddr,
    permit: tokio::sync::OwnedSemaphorePermit,
    shared: &Shared,
) -> Login {
    let config = &shared.config;
    let read = tokio::time::timeout(
        config.auth_timeout,
        read_line(&mut stream, config.auth_line_limit),
    )
    .await;
    let line = match read {
        Ok(Ok(line)) => line,
        Ok(Err(LineProblem::Closed)) => {
            tracing::info!(%peer, "login failed: connection closed before its auth line");
            return Login::Failed;
        }
        Ok(Err(LineProblem::Io(e))) => {
            tracing::info!(%peer, error = %e, "login failed: connection lost before its auth line");
            return Login::Failed;
        }
        Ok(Err(LineProblem::TooLong)) => {
            return refuse(
                &mut stream,
                peer,
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
        tracing::warn!(%peer, bot = ?auth.bot, "login refused: wrong token or no such remote bot");
        let reply = AuthReply::Refused {
            reason: format!(
                "wrong token for bot {:?}, or no remote bot has that name",
                auth.bot
            ),
            retry_ms: None,
        };
        let _ = write_line(&mut stream, &reply.to_line()).await;
        return Login::Failed;
    }
    // The bot's place is taken before the welcome: a connection past the bot's bound
    // hears `refused` alone, never `welcome` then `refused`.
    let Some(place) = shared.registry.reserve(&auth.bot) else {
        tracing::warn!(bot = ?auth.bot, %peer, "remote bot refused: it has too many connections");
        let reply = AuthReply::Refused {
            reason: format!(
                "bot {:?} already has {} connections waiting for a set",
                auth.bot,
                shared.registry.max_per_bot()
            ),
            retry_ms: Some(5000),
        };
        let _ = write_line(&mut stream, &reply.to_line()).await;
        return Login::Full;
    };
    let reply = AuthReply::Welcome {
        bot: auth.bot.clone(),
    };
    if let Err(e) = write_line(&mut stream, &reply.to_line()).await {
        tracing::info!(%peer, error = %e, "login failed: connection lost before its welcome");
        return Login::Failed;
    }
    let connect_rtt = tcp_rtt(stream.as_fd());
    tracing::info!(
        %peer,
        bot = ?auth.bot,
        rtt_ms = connect_rtt.map(|d| d.as_micros() as f64 / 1000.0),
        "remote bot logged in"
    );
    place.fill(Waiting {
        stream,
        peer,
        connect_rtt,
        permit,
    });
    Login::Queued
}

/// Refuses a login with its reason, and logs it: a failed login.
async fn refuse(
    stream: &mut TcpStream,
    peer: SocketAddr,
    reason: String,
    log: &'static str,
) -> Login {
    tracing::warn!(%peer, "{log}");
    let reply = AuthReply::Refused {
        reason,
        retry_ms: None,
    };
    let _ = write_line(stream, &reply.to_line()).await;
    Login::Failed
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

/// What the limits count by: an [`Address`] or a [`Network`].
trait Key: Copy + Eq + std::hash::Hash + Tiered {}
impl Key for Address {}
impl Key for Network {}

impl Tiered for Address {
    /// The address itself.
    fn bucket(self) -> Bucket {
        match self.0 {
            IpAddr::V4(_) => Bucket::prefix(self.0, 32),
            IpAddr::V6(_) => Bucket::prefix(self.0, 128),
        }
    }

    /// Its [`Network`].
    fn coarser(self) -> Bucket {
        Network::of(self.0).bucket()
    }
}

impl Tiered for Network {
    /// The /24 or the /64.
    fn bucket(self) -> Bucket {
        match self.0 {
            IpAddr::V4(_) => Bucket::prefix(self.0, 24),
            IpAddr::V6(_) => Bucket::prefix(self.0, 64),
        }
    }

    /// The /16 or the /48 (one IPv6 site holds 65,536 /64s).
    fn coarser(self) -> Bucket {
        match self.0 {
            IpAddr::V4(_) => Bucket::prefix(self.0, 16),
            IpAddr::V6(_) => Bucket::prefix(self.0, 48),
        }
    }
}

/// The connections of each address (or network) that have not logged in yet. Every
/// entry has at least one such connection alive, so the table holds at most
/// `max_connections` entries (a place is given back as soon as the server's place is
/// not had).
struct Pending<K> {
    counts: Mutex<HashMap<K, usize>>,
    limit: usize,
}

/// A connection's place among its address's (or network's) pending ones, given back
/// when dropped.
struct PendingPlace<K: Key> {
    table: Arc<Pending<K>>,
    key: K,
}

impl<K: Key> Pending<K> {
    fn new(limit: usize) -> Self {
        Pending {
            counts: Mutex::new(HashMap::new()),
            limit,
        }
    }

    /// A place for one more connection of `key`, unless it has its `limit`.
    fn enter(table: &Arc<Pending<K>>, key: K) -> Option<PendingPlace<K>> {
        let mut counts = table.counts.lock().unwrap_or_else(|e| e.into_inner());
        let count = counts.entry(key).or_insert(0);
        if *count >= table.limit {
            if *count == 0 {
                counts.remove(&key);
            }
            return None;
        }
        *count += 1;
        Some(PendingPlace {
            table: Arc::clone(table),
            key,
        })
    }

    #[cfg(test)]
    fn count(&self, key: K) -> usize {
        let counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        counts.get(&key).copied().unwrap_or(0)
    }
}

impl<K: Key> Drop for PendingPlace<K> {
    fn drop(&mut self) {
        let mut counts = self.table.counts.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = counts.get_mut(&self.key) {
            *count -= 1;
            if *count == 0 {
                counts.remove(&self.key);
            }
        }
    }
}

/// Failed logins per address (or network), in fixed windows: a window starts with the
/// key's first failure and lasts `window`; at `allowed` failures within it, the key
/// is refused until it ends. The keys are counted in bounded [`Tiers`]: when the table
/// of keys is full of running windows, a new key is counted under its coarser bucket
/// (an address under its network; a /24 under its /16, a /64 under its /48), then
/// under one overflow bucket, each refused at the same `allowed`; and a key is refused
/// when any bucket it answers to is. A full table makes the limit stricter, never looser.
struct Limiter<K> {
    tiers: Mutex<Tiers>,
    allowed: u32,
    key: PhantomData<fn(K)>,
}

impl<K: Key> Limiter<K> {
    fn new(allowed: u32, window: Duration) -> Self {
        Limiter {
            tiers: Mutex::new(Tiers::new(TABLE_ENTRIES, window)),
            allowed,
            key: PhantomData,
        }
    }

    /// How long `key` is still refused, if it is, and the bucket that refuses it (the
    /// one whose window ends last).
    fn blocked(&self, key: K) -> Option<(Duration, Bucket)> {
        let tiers = self.tiers.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        tiers
            .windows(key, now)
            .into_iter()
            .flatten()
            .filter(|(_, w)| w.count >= u64::from(self.allowed))
            .map(|(bucket, w)| {
                let left = tiers
                    .window()
                    .saturating_sub(now.saturating_duration_since(w.since));
                (left, bucket)
            })
            .max_by_key(|&(left, _)| left)
    }

    /// Counts a failure of `key`; the bucket that failure made refused, if it did.
    fn fail(&self, key: K) -> Option<Bucket> {
        let mut tiers = self.tiers.lock().unwrap_or_else(|e| e.into_inner());
        let noted = tiers.note(key, Instant::now());
        (noted.count == u64::from(self.allowed)).then_some(noted.bucket)
    }

    /// The failures counted in `key`'s own bucket in its current window.
    #[cfg(test)]
    fn failures(&self, key: K) -> u64 {
        let tiers = self.tiers.lock().unwrap_or_else(|e| e.into_inner());
        tiers.windows(key, Instant::now())[0].map_or(0, |(_, w)| w.count)
    }
}

#[cfg(test)]
mod tests {
    use tokio::net::TcpSocket;

    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().expect("an address")
    }

    #[test]
    fn a_network_is_the_slash_24_or_the_slash_64_and_a_mapped_address_is_ipv4() {
        let of = |text: &str| Network::of(ip(text)).to_string();
        assert_eq!(of("127.0.0.1"), "127.0.0.0/24");
        assert_eq!(of("203.0.113.254"), "203.0.113.0/24");
        assert_eq!(of("::ffff:203.0.113.9"), "203.0.113.0/24");
        assert_eq!(of("2001:db8:1:2:aaaa:bbbb:cccc:dddd"), "2001:db8:1:2::/64");
        assert_eq!(of("::1"), "::/64");
        assert_eq!(
            Network::of(ip("::ffff:127.0.0.9")),
            Network::of(ip("127.0.0.1"))
        );
        assert_ne!(Network::of(ip("127.0.0.1")), Network::of(ip("127.0.1.1")));
    }

    #[test]
    fn failures_from_addresses_of_one_network_share_one_limit() {
        let limiter = Limiter::new(5, Duration::from_secs(60));
        let net = |text: &str| Network::of(ip(text));
        for address in ["127.0.0.1", "127.0.0.77", "127.0.0.1", "::ffff:127.0.0.200"] {
            assert_eq!(limiter.fail(net(address)), None);
        }
        assert_eq!(limiter.failures(net("127.0.0.1")), 4);
        assert_eq!(limiter.failures(net("127.0.0.77")), 4);
        assert_eq!(limiter.blocked(net("127.0.0.3")), None);
        let this_24 = Bucket::prefix(ip("127.0.0.0"), 24);
        assert_eq!(
            limiter.fail(net("127.0.0.77")),
            Some(this_24),
            "the fifth failure blocks"
        );
        assert_eq!(
            limiter.fail(net("127.0.0.77")),
            None,
            "only the fifth says so"
        );
        assert_eq!(limiter.failures(net("127.0.0.250")), 6);
        let (left, bucket) = limiter
            .blocked(net("127.0.0.1"))
            .expect("blocked at 5 failures");
        assert_eq!(bucket, this_24);
        assert!(left <= Duration::from_secs(60) && left > Duration::from_secs(50));
        // The next network, and the same last byte elsewhere, are untouched.
        assert_eq!(limiter.failures(net("127.0.1.1")), 0);
        assert_eq!(limiter.blocked(net("127.0.1.1")), None);
        assert_eq!(limiter.blocked(net("10.0.0.1")), None);
        // IPv6: one /64, whatever the last 64 bits.
        for address in ["2001:db8::1", "2001:db8::ffff:1", "2001:db8::9:9:9:9"] {
            limiter.fail(net(address));
        }
        assert_eq!(limiter.failures(net("2001:db8::77")), 3);
        assert_eq!(limiter.failures(net("2001:db8:0:1::1")), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn refusals_are_logged_once_a_minute_per_network_with_the_count_left_out() {
        let log = QuietLog::new();
        let a = Network::of(ip("192.0.2.1"));
        let b = Network::of(ip("198.51.100.1"));
        let left_out = |network| log.note(network).map(|(_, n)| n);
        assert_eq!(left_out(a), Some(0));
        assert_eq!(left_out(b), Some(0));
        for _ in 0..41 {
            assert_eq!(left_out(a), None);
        }
        tokio::time::advance(Duration::from_secs(59)).await;
        assert_eq!(left_out(a), None);
        tokio::time::advance(Duration::from_secs(1)).await;
        assert_eq!(log.note(a), Some((Bucket::prefix(ip("192.0.2.0"), 24), 42)));
        assert_eq!(left_out(a), None);
        assert_eq!(left_out(b), Some(0));
    }

    #[test]
    fn an_address_is_itself_and_a_mapped_address_is_ipv4() {
        let of = |text: &str| Address::of(ip(text));
        assert_eq!(of("::ffff:127.0.0.9"), of("127.0.0.9"));
        assert_eq!(of("::ffff:127.0.0.9").to_string(), "127.0.0.9");
        assert_ne!(of("127.0.0.1"), of("127.0.0.2"));
        assert_eq!(of("2001:db8::1").to_string(), "2001:db8::1");
        assert_ne!(of("2001:db8::1"), of("2001:db8::2"));
    }

    #[test]
    fn a_network_has_at_most_its_limit_of_pending_places() {
        let table = Arc::new(Pending::new(2));
        let net = Network::of(ip("192.0.2.1"));
        let first = Pending::enter(&table, net).expect("a first place");
        let second = Pending::enter(&table, Network::of(ip("192.0.2.99"))).expect("a second");
        assert!(Pending::enter(&table, net).is_none());
        assert!(Pending::enter(&table, Network::of(ip("192.0.3.1"))).is_some());
        drop(first);
        assert_eq!(table.count(net), 1);
        let third = Pending::enter(&table, net).expect("a place given back");
        drop((second, third));
        assert_eq!(table.count(net), 0);
        assert!(table.counts.lock().expect("lock").is_empty());
    }

    /// Connects from `from` (any port) to `to`.
    async fn connect_from(from: &str, to: SocketAddr) -> TcpStream {
        let socket = TcpSocket::new_v4().expect("a socket");
        socket
            .bind(SocketAddr::new(ip(from), 0))
            .expect("binds the client's address");
        socket.connect(to).await.expect("connects")
    }

    /// Logs in as alice from `from`; the server's answer.
    async fn login(from: &str, to: SocketAddr, token: &str) -> String {
        let mut stream = connect_from(from, to).await;
        let auth = format!("{{\"type\":\"auth\",\"bot\":\"alice\",\"token\":\"{token}\"}}\n");
        stream.write_all(auth.as_bytes()).await.expect("writes");
        let line = read_line(&mut stream, 4096).await;
        String::from_utf8_lossy(&line.unwrap_or_default()).into_owned()
    }

    /// A port for alice, with its token; the connections held could stay `auth_timeout`.
    async fn alice_port(config: PortConfig) -> (BotPort, String) {
        let token = crate::new_token();
        let tokens = [("alice".to_string(), token_hash(&token))].into();
        let registry = Arc::new(Registry::new(tokens, Duration::from_millis(100), 4));
        let config = PortConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            ..config
        };
        (BotPort::bind(config, registry).await.expect("binds"), token)
    }

    /// Waits (bounded) until no connection of `address` is logging in.
    async fn settled(port: &BotPort, address: Address) {
        for _ in 0..1000 {
            if port.shared.pending.0.count(address) == 0 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("{address} still has connections logging in");
    }

    #[tokio::test]
    async fn connections_reset_before_logging_in_cannot_keep_a_bot_of_another_address_out() {
        // The held connections could stay 30 s: a login that waits for them would take
        // that long.
        let (port, token) = alice_port(PortConfig {
            auth_timeout: Duration::from_secs(30),
            ..PortConfig::default()
        })
        .await;
        let addr = port.local_addr();
        let attacker = Address::of(ip("127.0.0.1"));
        let network = Network::of(ip("127.0.0.1"));

        // 300 connections from 127.0.0.1 that say nothing.
        let mut held = Vec::new();
        for _ in 0..300 {
            held.push(connect_from("127.0.0.1", addr).await);
        }
        // A bot of another address, even of the same /24, logs in at once.
        let started = Instant::now();
        let welcome = login("127.0.0.2", addr, &token).await;
        let took = started.elapsed();
        assert_eq!(welcome, "{\"type\":\"welcome\",\"bot\":\"alice\"}");
        assert!(took < Duration::from_secs(3), "the login took {took:?}");
        // Its connection was accepted after all 300: 8 of them are logging in, and
        // the other 292 were refused at once with a line that says why.
        assert_eq!(port.shared.pending.0.count(attacker), 8);
        assert_eq!(port.shared.pending.1.count(network), 8);
        let mut refused = 0;
        let mut silent = 0;
        for stream in &mut held {
            match tokio::time::timeout(Duration::from_millis(20), read_line(stream, 4096)).await {
                Ok(Ok(line)) => {
                    assert_eq!(
                        String::from_utf8_lossy(&line),
                        "{\"type\":\"refused\",\"reason\":\"127.0.0.1 already has 8 \
                         connections logging in; try again later\",\"retry_ms\":30000}"
                    );
                    refused += 1;
                }
                Ok(Err(_)) => panic!("a held connection was closed without a reason"),
                Err(_) => silent += 1,
            }
        }
        assert_eq!((refused, silent), (292, 8));

        // All 300 reset (SO_LINGER 0, then close): the 8 that were logging in count as
        // failed logins of the address and of its network, and the address is refused
        // from then on.
        for stream in held {
            stream.set_zero_linger().expect("SO_LINGER 0");
            drop(stream);
        }
        settled(&port, attacker).await;
        assert_eq!(port.shared.failures.0.failures(attacker), 8);
        assert_eq!(port.shared.failures.1.failures(network), 8);
        let refused = login("127.0.0.1", addr, &token).await;
        assert!(
            refused.starts_with(
                "{\"type\":\"refused\",\"reason\":\"too many failed logins from 127.0.0.1; \
                 try again in 60 s\",\"retry_ms\":"
            ),
            "{refused}"
        );
        // The other addresses still log in: 8 failures are far from the network's 30.
        for other in ["127.0.0.2", "127.0.0.77", "127.0.1.2"] {
            let again = login(other, addr, &token).await;
            assert_eq!(again, "{\"type\":\"welcome\",\"bot\":\"alice\"}", "{other}");
        }
    }

    #[tokio::test]
    async fn many_addresses_of_one_network_are_limited_together() {
        let (port, token) = alice_port(PortConfig::default()).await;
        let addr = port.local_addr();
        // 100 addresses of 127.0.0.0/24, each with 2 wrong tokens (under the address's
        // 5): the network's 30th failure refuses every address of it.
        let mut answers = Vec::new();
        for host in 1..=100u8 {
            for _ in 0..2 {
                answers.push(login(&format!("127.0.0.{host}"), addr, "bad").await);
            }
        }
        let wrong = "{\"type\":\"refused\",\"reason\":\"wrong token for bot \\\"alice\\\", or no \
                     remote bot has that name\"}";
        assert!(
            answers[..30].iter().all(|a| a == wrong),
            "{:?}",
            &answers[..30]
        );
        assert!(
            answers[30..].iter().all(|a| a.starts_with(
                "{\"type\":\"refused\",\"reason\":\"too many failed logins from 127.0.0.0/24; "
            )),
            "{:?}",
            &answers[30..32]
        );
        assert_eq!(
            port.shared
                .failures
                .1
                .failures(Network::of(ip("127.0.0.9"))),
            30
        );
        // The right token does not help inside the network; another network logs in.
        let refused = login("127.0.0.250", addr, &token).await;
        assert!(
            refused.contains("too many failed logins from 127.0.0.0/24"),
            "{refused}"
        );
        let welcome = login("127.0.1.1", addr, &token).await;
        assert_eq!(welcome, "{\"type\":\"welcome\",\"bot\":\"alice\"}");
    }

    /// One login attempt of `from` that fails, as the port sees it: refused at the door
    /// (the bucket that refuses it) or counted as a failure of its address and network.
    fn failed_login(
        failures: &(Limiter<Address>, Limiter<Network>),
        from: IpAddr,
    ) -> Result<(), Bucket> {
        let (address, network) = (Address::of(from), Network::of(from));
        if let Some((_, bucket)) = failures.0.blocked(address) {
            return Err(bucket);
        }
        if let Some((_, bucket)) = failures.1.blocked(network) {
            return Err(bucket);
        }
        failures.0.fail(address);
        failures.1.fail(network);
        Ok(())
    }

    /// The `n`th of 20,000 /24s: 10.0.0.0/24, 10.0.1.0/24, ... 10.78.31.0/24.
    fn nth_network(n: u32) -> IpAddr {
        IpAddr::V4(Ipv4Addr::from(0x0a00_0001 + (n << 8)))
    }

    #[tokio::test(start_paused = true)]
    async fn the_limiter_after_20000_networks_still_refuses_the_sixth_failure_of_an_address() {
        let failures = limiters(&PortConfig::default());
        // A failed login from each of 20,000 /24s, at once: more than a table holds.
        // The first 16,384 networks fill the table; the other 3,616 are counted under
        // their /16s (10.64.0.0/16 to 10.78.0.0/16, 15 of them), each refused as a
        // whole at its 30th failure.
        let refused = (0..20_000)
            .filter(|&n| failed_login(&failures, nth_network(n)).is_err())
            .count();
        assert_eq!(refused, 20_000 - TABLE_ENTRIES - 15 * 30);
        for tiers in [&failures.0.tiers, &failures.1.tiers] {
            let tiers = tiers.lock().expect("lock");
            assert_eq!(tiers.own_buckets().len(), TABLE_ENTRIES);
        }
        assert_eq!(
            failed_login(&failures, ip("10.70.9.9")),
            Err(Bucket::prefix(ip("10.70.0.0"), 16))
        );
        // One address: five failures, then refused, with its /24 (where the full table
        // of addresses counts it) named, not let through as a key not counted.
        let one = ip("192.0.2.7");
        for _ in 0..5 {
            assert_eq!(failed_login(&failures, one), Ok(()));
        }
        let its_24 = Bucket::prefix(ip("192.0.2.0"), 24);
        assert_eq!(failed_login(&failures, one), Err(its_24));
        for _ in 0..3_000 {
            assert_eq!(failed_login(&failures, one), Err(its_24));
        }
        // Another address of that /24 is refused with it (stricter than the 30 of a
        // network of its own, never looser).
        assert_eq!(failed_login(&failures, ip("192.0.2.8")), Err(its_24));
        // The network limiter alone: a new /24 counted under its /16 is refused at its
        // 31st failure, as a network of its own would be.
        let network = Network::of(ip("198.51.100.1"));
        for n in 1..=30 {
            assert_eq!(failures.1.blocked(network), None, "failure {n}");
            failures.1.fail(network);
        }
        assert_eq!(
            failures.1.blocked(network).map(|(_, b)| b),
            Some(Bucket::prefix(ip("198.51.0.0"), 16))
        );
        // A minute on, every window is over: a newcomer has a bucket of its own again,
        // and the fifth failure of an address refuses it alone.
        tokio::time::advance(Duration::from_secs(60)).await;
        let later = ip("203.0.113.5");
        for _ in 0..5 {
            assert_eq!(failed_login(&failures, later), Ok(()));
        }
        assert_eq!(
            failed_login(&failures, later),
            Err(Bucket::prefix(later, 32))
        );
        assert_eq!(failed_login(&failures, ip("203.0.113.6")), Ok(()));
    }

    #[tokio::test(start_paused = true)]
    async fn the_64s_of_one_48_cannot_escape_the_network_limit_by_filling_the_table() {
        let failures = limiters(&PortConfig::default());
        // 20,000 /64s of 2001:db8:7::/48, one failure each.
        let sixty_four =
            |n: u128| IpAddr::V6(Ipv6Addr::from(0x2001_0db8_0007_u128 << 80 | n << 64 | 1));
        // The /64s past the table are counted together under the /48: from its 30th
        // failure on, the rest of the site's 65,536 /64s are refused as one network.
        let site = Bucket::prefix(ip("2001:db8:7::"), 48);
        let answers: Vec<_> = (0..20_000)
            .map(|n| failed_login(&failures, sixty_four(n)))
            .collect();
        let served = TABLE_ENTRIES + 30;
        assert!(answers[..served].iter().all(Result::is_ok));
        assert!(answers[served..].iter().all(|a| *a == Err(site)));
        assert_eq!(failed_login(&failures, sixty_four(40_000)), Err(site));
        assert_eq!(failed_login(&failures, sixty_four(65_535)), Err(site));
        // Another site is counted apart.
        assert_eq!(failed_login(&failures, ip("2001:db8:8::1")), Ok(()));
    }

    #[tokio::test(start_paused = true)]
    async fn the_quiet_log_writes_one_line_per_bucket_for_20000_networks_then_one_address() {
        let log = QuietLog::new();
        let mut lines = 0;
        for n in 0..20_000 {
            lines += usize::from(log.note(Network::of(nth_network(n))).is_some());
        }
        // One line for each of the 16,384 networks of the table, and one for each /16
        // the other 3,616 are counted under (10.64.0.0/16 to 10.78.0.0/16).
        assert_eq!(lines, TABLE_ENTRIES + 15);
        // One address refused 3,000 times: one line.
        let one = Network::of(ip("192.0.2.7"));
        let noted: Vec<_> = (0..3_000).filter_map(|_| log.note(one)).collect();
        assert_eq!(noted, [(Bucket::prefix(ip("192.0.0.0"), 16), 0)]);
        // A minute on, its next refusal is logged with the 2,999 left out.
        tokio::time::advance(Duration::from_secs(60)).await;
        assert_eq!(
            log.note(one),
            Some((Bucket::prefix(ip("192.0.2.0"), 24), 0)),
            "the table has room again: the network is counted on its own"
        );
        let tiers = log.tiers.lock().expect("lock");
        assert_eq!(tiers.own_buckets().len(), TABLE_ENTRIES);
        assert_eq!(tiers.coarse_buckets().len(), 16);
    }
}

//! The registry of connected remote bots: connections that passed the login wait here,
//! one queue per bot, until a scheduler takes one for a set. A connection carries at
//! most one set (the referee closes it at the set's end, or when the bot faults, as it
//! would stop a process); the bot connects again for the next.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use referee::{Connect, ConnectFuture, Link, RttProbe};
use tokio::io::{AsyncRead, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::{Notify, OwnedSemaphorePermit};
use tokio::time::Instant;

/// A connection that logged in and waits for a set.
pub(crate) struct Waiting {
    pub stream: TcpStream,
    pub peer: SocketAddr,
    pub connect_rtt: Option<Duration>,
    /// Its place among the port's bounded connections, held until it closes.
    pub permit: OwnedSemaphorePermit,
}

/// The connected remote bots, and the tokens they log in with.
pub struct Registry {
    waiting: Mutex<HashMap<String, VecDeque<Waiting>>>,
    /// Places taken by connections being welcomed, per bot: counted with the waiting
    /// ones, so that a connection past the bound is refused before its `welcome`.
    /// Locked after `waiting` when both are.
    reserved: Mutex<HashMap<String, usize>>,
    tokens: Mutex<HashMap<String, [u8; 32]>>,
    arrived: Notify,
    lag_cap: Duration,
    max_per_bot: usize,
}

impl Registry {
    /// An empty registry for these bots (name and SHA-256 of the token), crediting
    /// each remote bot's round-trip time up to `lag_cap` per move, with at most
    /// `max_per_bot` connections waiting per bot.
    pub fn new(tokens: HashMap<String, [u8; 32]>, lag_cap: Duration, max_per_bot: usize) -> Self {
        Registry {
            waiting: Mutex::new(HashMap::new()),
            reserved: Mutex::new(HashMap::new()),
            tokens: Mutex::new(tokens),
            arrived: Notify::new(),
            lag_cap,
            max_per_bot,
        }
    }

    /// Replaces the bots that may log in (an administrator added or removed one, or
    /// gave one a new token). Connections already waiting for a bot that is gone, or
    /// that logged in with a token that has since changed, are closed.
    pub fn set_tokens(&self, tokens: HashMap<String, [u8; 32]>) {
        let mut old = lock(&self.tokens);
        lock(&self.waiting)
            .retain(|bot, _| tokens.get(bot).is_some_and(|t| old.get(bot) == Some(t)));
        *old = tokens;
    }

    /// The stored hash of a bot's token, if it is a remote bot.
    pub(crate) fn token_of(&self, bot: &str) -> Option<[u8; 32]> {
        lock(&self.tokens).get(bot).copied()
    }

    /// Whether `bot` has a live connection waiting for a set.
    pub fn is_connected(&self, bot: &str) -> bool {
        let mut waiting = lock(&self.waiting);
        waiting.get_mut(bot).is_some_and(|q| {
            q.retain(alive);
            !q.is_empty()
        })
    }

    /// The bots with a live connection waiting, and how many each has.
    pub fn connected(&self) -> Vec<(String, usize)> {
        let mut waiting = lock(&self.waiting);
        let mut out: Vec<(String, usize)> = waiting
            .iter_mut()
            .filter_map(|(bot, q)| {
                q.retain(alive);
                (!q.is_empty()).then(|| (bot.clone(), q.len()))
            })
            .collect();
        out.sort();
        out
    }

    /// Takes one of `bot`'s waiting connections for a set, if it has a live one.
    pub fn take(&self, bot: &str) -> Option<Link> {
        let mut waiting = lock(&self.waiting);
        let queue = waiting.get_mut(bot)?;
        while let Some(w) = queue.pop_front() {
            if alive(&w) {
                return Some(self.link(w));
            }
            tracing::info!(bot = ?bot, peer = %w.peer, "remote bot's waiting connection was gone");
        }
        None
    }

    /// Takes a connection of `bot`, waiting for one until `deadline`.
    pub async fn wait_for(&self, bot: &str, deadline: Instant) -> Result<Link, String> {
        loop {
            let arrived = self.arrived.notified();
            tokio::pin!(arrived);
            arrived.as_mut().enable();
            if let Some(link) = self.take(bot) {
                return Ok(link);
            }
            if tokio::time::timeout_at(deadline, arrived).await.is_err() {
                return Err(format!("remote bot {bot:?} is not connected"));
            }
        }
    }

    /// What `play_set` gets links to `bot` from (the set's start, and restarts).
    pub fn connector(self: &Arc<Self>, bot: &str) -> Arc<dyn Connect> {
        Arc::new(RemoteBot {
            registry: Arc::clone(self),
            bot: bot.to_string(),
        })
    }

    /// A place in `bot`'s queue for a connection about to be welcomed, unless the bot
    /// has as many waiting (or being welcomed) as it may: the server refuses before it
    /// welcomes, so a client hears one line either way (PROTOCOL.md).
    pub(crate) fn reserve(self: &Arc<Self>, bot: &str) -> Option<Reservation> {
        let mut waiting = lock(&self.waiting);
        let queue = waiting.entry(bot.to_string()).or_default();
        queue.retain(alive);
        let mut reserved = lock(&self.reserved);
        let places = reserved.entry(bot.to_string()).or_default();
        if queue.len() + *places >= self.max_per_bot {
            return None;
        }
        *places += 1;
        Some(Reservation {
            registry: Arc::clone(self),
            bot: bot.to_string(),
            filled: false,
        })
    }

    /// Gives back one of `bot`'s reserved places.
    fn release(&self, bot: &str) {
        let mut reserved = lock(&self.reserved);
        if let Some(places) = reserved.get_mut(bot) {
            *places = places.saturating_sub(1);
            if *places == 0 {
                reserved.remove(bot);
            }
        }
    }

    /// The most connections one bot may have waiting.
    pub(crate) fn max_per_bot(&self) -> usize {
        self.max_per_bot
    }

    fn link(&self, w: Waiting) -> Link {
        // A second descriptor of the socket reads its round-trip time while the halves
        // are with the set; it closes with the link.
        let probe = w
            .stream
            .as_fd()
            .try_clone_to_owned()
            .ok()
            .map(|fd| Box::new(TcpRtt(fd)) as Box<dyn RttProbe>);
        let (reader, writer) = w.stream.into_split();
        Link {
            reader: Box::new(Permitted {
                inner: reader,
                _permit: w.permit,
            }),
            writer: Box::new(writer),
            peer: w.peer.to_string(),
            connect_rtt: w.connect_rtt,
            probe,
            lag_cap: self.lag_cap,
        }
    }
}

/// A place in a bot's queue, taken before its connection is welcomed; given back when
/// dropped unfilled (the welcome could not be written).
pub(crate) struct Reservation {
    registry: Arc<Registry>,
    bot: String,
    filled: bool,
}

impl Reservation {
    /// Queues the welcomed connection in the place.
    pub(crate) fn fill(mut self, w: Waiting) {
        {
            // The connection takes the place under the lock `reserve` counts under:
            // no other login sees the place twice or not at all.
            let mut waiting = lock(&self.registry.waiting);
            waiting.entry(self.bot.clone()).or_default().push_back(w);
            self.registry.release(&self.bot);
            self.filled = true;
        }
        self.registry.arrived.notify_waiters();
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if !self.filled {
            self.registry.release(&self.bot);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic elsewhere while holding it leaves plain data behind: keep going.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A waiting connection is alive when reading it would block: end of file means the
/// bot went away, and bytes mean it spoke before it was asked (it is dropped).
fn alive(w: &Waiting) -> bool {
    let mut byte = [0u8; 1];
    match w.stream.try_read(&mut byte) {
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => true,
        Ok(0) | Err(_) => false,
        Ok(_) => {
            tracing::warn!(peer = %w.peer, "remote bot sent data before a set: connection dropped");
            false
        }
    }
}

/// A remote bot as `play_set` sees it.
struct RemoteBot {
    registry: Arc<Registry>,
    bot: String,
}

impl Connect for RemoteBot {
    fn connect(&self, deadline: Instant) -> ConnectFuture<'_> {
        Box::pin(self.registry.wait_for(&self.bot, deadline))
    }
}

/// The read half of a connection, holding its place among the bounded connections.
struct Permitted<R> {
    inner: R,
    _permit: OwnedSemaphorePermit,
}

impl<R: AsyncRead + Unpin> AsyncRead for Permitted<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

struct TcpRtt(OwnedFd);

impl RttProbe for TcpRtt {
    fn rtt(&self) -> Option<Duration> {
        tcp_rtt(self.0.as_fd())
    }
}

/// The kernel's smoothed round-trip time of a TCP socket (`tcpi_rtt` of `TCP_INFO`,
/// in microseconds), or `None` when it cannot be read.
pub fn tcp_rtt(fd: BorrowedFd<'_>) -> Option<Duration> {
    use std::os::fd::AsRawFd;
    // SAFETY: `tcp_info` is plain data for which all zeroes is valid; getsockopt
    // writes at most `len` bytes into it and reports how many.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    let r = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        )
    };
    // `tcpi_rtt` ends at byte 72 of the structure in every kernel that has it.
    (r == 0 && len as usize >= 72).then(|| Duration::from_micros(u64::from(info.tcpi_rtt)))
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use tokio::net::TcpListener;
    use tokio::sync::Semaphore;

    use super::*;

    /// A logged-in connection (the server's side) and the client's side.
    async fn connection() -> (Waiting, std::net::TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let client =
            std::net::TcpStream::connect(listener.local_addr().expect("addr")).expect("connect");
        let (stream, peer) = listener.accept().await.expect("accept");
        let permit = Arc::new(Semaphore::new(1))
            .try_acquire_owned()
            .expect("a permit");
        let waiting = Waiting {
            stream,
            peer,
            connect_rtt: None,
            permit,
        };
        (waiting, client)
    }

    fn registry() -> Arc<Registry> {
        let tokens = [("alice".to_string(), [1u8; 32])].into_iter().collect();
        Arc::new(Registry::new(tokens, Duration::from_millis(100), 2))
    }

    /// Queues `w` as the port does after a welcome; whether there was a place.
    fn add(r: &Arc<Registry>, w: Waiting) -> bool {
        match r.reserve("alice") {
            Some(place) => {
                place.fill(w);
                true
            }
            None => false,
        }
    }

    /// Waits (up to 10 s) until the kernel has delivered what the client did and
    /// `alice` is no longer connected.
    async fn gone(r: &Registry) -> bool {
        for _ in 0..1000 {
            if !r.is_connected("alice") {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        false
    }

    #[tokio::test]
    async fn a_waiting_connection_is_gone_once_the_bot_closes_it_or_speaks_unasked() {
        let r = registry();
        let (w, client) = connection().await;
        assert!(add(&r, w));
        assert!(r.is_connected("alice"));
        assert_eq!(r.connected(), [("alice".to_string(), 1)]);
        drop(client);
        assert!(gone(&r).await);

        let (w, mut client) = connection().await;
        assert!(add(&r, w));
        client.write_all(b"{}\n").expect("write");
        assert!(gone(&r).await);
        assert!(r.take("alice").is_none());
        assert!(!r.is_connected("bob"));
    }

    #[tokio::test]
    async fn a_bot_has_at_most_its_share_of_waiting_connections_and_loses_them_with_its_token() {
        let r = registry();
        let mut clients = Vec::new();
        for expected in [true, true, false] {
            let (w, client) = connection().await;
            assert_eq!(add(&r, w), expected);
            clients.push(client);
        }
        // A place being welcomed counts; given back unfilled, it is free again.
        let link = r.take("alice").expect("a link");
        let place = r.reserve("alice").expect("the place of the link taken");
        assert!(
            r.reserve("alice").is_none(),
            "one waiting, one being welcomed"
        );
        drop(place);
        assert!(r.reserve("alice").is_some());
        assert_eq!(
            lock(&r.reserved).get("alice"),
            None,
            "every place given back"
        );
        assert_eq!(link.lag_cap, Duration::from_millis(100));
        assert!(link.peer.starts_with("127.0.0.1:"));
        assert_eq!(r.connected(), [("alice".to_string(), 1)]);
        // The same token keeps it; a new one closes it.
        r.set_tokens([("alice".to_string(), [1u8; 32])].into_iter().collect());
        assert!(r.is_connected("alice"));
        r.set_tokens([("alice".to_string(), [2u8; 32])].into_iter().collect());
        assert!(!r.is_connected("alice"));
        assert_eq!(r.token_of("alice"), Some([2u8; 32]));
    }
}

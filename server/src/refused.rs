//! Replay pages refused to one client, counted a minute at a time: an address that asked
//! for [`PER_CLIENT`] pages that cannot be built (422: a set of too many moves, a log
//! that makes no page) within the current minute is answered 429 until the minute is
//! over, before its request costs a look-up. A refusal is cheap (the move count comes
//! from the store, a refused build is kept), so this bounds the rest: the look-ups, and
//! the builds of refusals the kept pages dropped.
//!
//! The table of clients is bounded ([`MAX_CLIENTS`]) and emptied every minute; once it
//! is full, newcomers share one count, so that the limit gets stricter as the table
//! fills, never looser.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use tokio::time::Instant;

use crate::capacity::Client;

/// Refused pages one client may ask for in a minute.
pub const PER_CLIENT: u32 = 10;
/// The period the refusals are counted over.
pub const WINDOW: Duration = Duration::from_secs(60);
/// Clients counted one by one in a period; beyond them, newcomers share one count.
pub const MAX_CLIENTS: usize = 4096;

/// The refusals of the current period, per client.
pub struct PageRefusals {
    per_client: u32,
    window: Duration,
    max_clients: usize,
    inner: Mutex<Inner>,
}

struct Inner {
    /// When the current period began.
    started: Instant,
    /// Refusals per client; `None` counts the newcomers of a full table together.
    counts: HashMap<Option<Client>, u32>,
}

impl Default for PageRefusals {
    fn default() -> Self {
        PageRefusals::new(PER_CLIENT, WINDOW, MAX_CLIENTS)
    }
}

impl PageRefusals {
    /// At most `per_client` refusals per client in each `window`, `max_clients` of them
    /// counted one by one.
    pub fn new(per_client: u32, window: Duration, max_clients: usize) -> PageRefusals {
        PageRefusals {
            per_client,
            window,
            max_clients,
            inner: Mutex::new(Inner {
                started: Instant::now(),
                counts: HashMap::new(),
            }),
        }
    }

    /// The table, a new period begun if the last one is over.
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // The sections below cannot panic half-way; a poisoned lock still holds counts.
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if now.saturating_duration_since(inner.started) >= self.window {
            inner.started = now;
            inner.counts.clear();
        }
        inner
    }

    /// The key `client` is counted under.
    fn key(&self, inner: &Inner, client: Client) -> Option<Client> {
        let known = inner.counts.contains_key(&Some(client));
        (known || inner.counts.len() < self.max_clients).then_some(client)
    }

    /// Whether `client` may ask for a page now; if not, the time until it may.
    pub fn check(&self, client: Client) -> Result<(), Duration> {
        let inner = self.lock();
        let key = self.key(&inner, client);
        match inner.counts.get(&key) {
            Some(&n) if n >= self.per_client => {
                let end = inner.started + self.window;
                Err(end.saturating_duration_since(Instant::now()))
            }
            _ => Ok(()),
        }
    }

    /// `client` was refused a page.
    pub fn note(&self, client: Client) {
        let mut inner = self.lock();
        let key = self.key(&inner, client);
        *inner.counts.entry(key).or_insert(0) += 1;
    }

    /// Refusals one client may have in a period.
    pub fn per_client(&self) -> u32 {
        self.per_client
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(last: u8) -> Client {
        Client::of(std::net::IpAddr::from([127, 0, 0, last]))
    }

    #[tokio::test(start_paused = true)]
    async fn a_client_refused_its_share_waits_for_the_minute_to_end_and_others_do_not() {
        let refusals = PageRefusals::new(3, WINDOW, 100);
        tokio::time::sleep(Duration::from_secs(15)).await;
        for _ in 0..3 {
            assert_eq!(refusals.check(client(1)), Ok(()));
            refusals.note(client(1));
        }
        // The minute began at 0 s: 45 s are left of it.
        assert_eq!(refusals.check(client(1)), Err(Duration::from_secs(45)));
        assert_eq!(refusals.check(client(2)), Ok(()));
        tokio::time::sleep(Duration::from_secs(44)).await;
        assert_eq!(refusals.check(client(1)), Err(Duration::from_secs(1)));
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(refusals.check(client(1)), Ok(()));
    }

    #[tokio::test(start_paused = true)]
    async fn newcomers_to_a_full_table_share_one_count() {
        let refusals = PageRefusals::new(2, WINDOW, 2);
        refusals.note(client(1));
        refusals.note(client(2));
        // The table is full: 3 and 4 are counted together, and share two refusals.
        refusals.note(client(3));
        assert_eq!(refusals.check(client(4)), Ok(()));
        refusals.note(client(4));
        assert_eq!(refusals.check(client(3)), Err(WINDOW));
        assert_eq!(refusals.check(client(5)), Err(WINDOW));
        // The clients counted alone keep their own counts.
        assert_eq!(refusals.check(client(1)), Ok(()));
        assert_eq!(refusals.inner.lock().expect("lock").counts.len(), 3);
        tokio::time::sleep(WINDOW).await;
        assert_eq!(refusals.check(client(5)), Ok(()));
        assert!(refusals.inner.lock().expect("lock").counts.is_empty());
    }
}

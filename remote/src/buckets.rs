//! Bounded tables of strangers: what the bot port counts per address or network (failed
//! logins, refusals left out of the log) kept in [`Tiers`], which never grows past its
//! figure and never stops counting.
//!
//! A key (an address, a network) is counted in its own [`Bucket`] while the table of
//! keys has room. A table is ordered by the start of each bucket's window, oldest first
//! (a window that starts again moves its bucket to the back), so the only bucket that
//! can make room is the first: a new key takes its place when its window is over.
//! When the first is still in its window, so is every other, and forgetting any of them
//! would let its key start again from nothing: the new key is counted instead under
//! its coarser bucket (an address under its network, a /24 under its /16, a /64 under
//! its /48), kept in a second table of the same kind, and past that in one overflow
//! bucket shared by everything. A coarser bucket is shared by more keys and checked
//! with the same figure, so a full table makes the limits stricter, never looser.
//!
//! Every operation is a few hash lookups and at most one eviction per table: O(1),
//! whatever the tables hold. The tables are `hashlink`'s `LinkedHashMap` (a hash map
//! threaded on a list in insertion order, with `to_back` and `pop_front` in O(1)),
//! already in the build through `rusqlite`.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::Duration;

use hashlink::LinkedHashMap;
use tokio::time::Instant;

/// Buckets in each table of a [`Tiers`] as the bot port uses them (its limiters and
/// its quiet log): 16,384 keys of their own, as many coarser buckets, and the overflow.
pub(crate) const TABLE_ENTRIES: usize = 16_384;

/// What a count is kept under: a network prefix (an address is its own prefix: /32,
/// /128), or the one bucket of everything past the tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Bucket {
    /// The network of the address's first `len` bits, held as its first address.
    Prefix(IpAddr, u8),
    /// Every key that found no room in either table.
    Overflow,
}

impl Bucket {
    /// The prefix of `ip`'s first `len` bits (at most 32 for IPv4, 128 for IPv6).
    pub(crate) fn prefix(ip: IpAddr, len: u8) -> Bucket {
        let masked = match ip {
            IpAddr::V4(a) => {
                let len = len.min(32);
                let mask = u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0);
                IpAddr::V4(Ipv4Addr::from(u32::from(a) & mask))
            }
            IpAddr::V6(a) => {
                let len = len.min(128);
                let mask = u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0);
                IpAddr::V6(Ipv6Addr::from(u128::from(a) & mask))
            }
        };
        Bucket::Prefix(masked, len)
    }
}

impl fmt::Display for Bucket {
    /// `127.0.0.1` (an address), `127.0.0.0/24`, `2001:db8::/48`, or the overflow's words.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Bucket::Prefix(ip @ IpAddr::V4(_), 32) | Bucket::Prefix(ip @ IpAddr::V6(_), 128) => {
                ip.fmt(f)
            }
            Bucket::Prefix(ip, len) => write!(f, "{ip}/{len}"),
            Bucket::Overflow => f.write_str("the networks past the bot port's tables"),
        }
    }
}

/// A key the tables count: its own bucket, and the coarser one it is counted under
/// when the table of keys is full.
pub(crate) trait Tiered: Copy {
    /// Its own bucket.
    fn bucket(self) -> Bucket;
    /// The coarser bucket, shared with its neighbours.
    fn coarser(self) -> Bucket;
}

/// The events of one bucket in its current window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Window {
    /// When the window started (its first event).
    pub(crate) since: Instant,
    /// Events in it, the first included.
    pub(crate) count: u64,
}

impl Window {
    fn new(now: Instant) -> Window {
        Window {
            since: now,
            count: 1,
        }
    }

    fn over(&self, now: Instant, length: Duration) -> bool {
        now.saturating_duration_since(self.since) >= length
    }
}

/// Where one event was counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Noted {
    /// The bucket it was counted in.
    pub(crate) bucket: Bucket,
    /// The events of that bucket's window, this one included (1: it started the window).
    pub(crate) count: u64,
    /// When it started a new window of a bucket whose previous window was still held,
    /// that window's count.
    pub(crate) previous: Option<u64>,
}

/// Per-key windows of events, in two bounded tables (keys of their own, then coarser
/// buckets) and one overflow bucket: at most `2 * capacity + 1` windows, whatever
/// strangers send. Windows last `window`.
pub(crate) struct Tiers {
    own: LinkedHashMap<Bucket, Window>,
    coarse: LinkedHashMap<Bucket, Window>,
    overflow: Option<Window>,
    capacity: usize,
    window: Duration,
}

impl Tiers {
    /// Tables of at most `capacity` buckets each, of windows `window` long.
    pub(crate) fn new(capacity: usize, window: Duration) -> Tiers {
        Tiers {
            own: LinkedHashMap::new(),
            coarse: LinkedHashMap::new(),
            overflow: None,
            capacity,
            window,
        }
    }

    /// Counts one event of `key` at `now`: in its own bucket if it has one or there is
    /// room for it, else in its coarser bucket (same rule), else in the overflow.
    pub(crate) fn note(&mut self, key: impl Tiered, now: Instant) -> Noted {
        let (capacity, window) = (self.capacity, self.window);
        let own = key.bucket();
        if let Some((count, previous)) = count_in(&mut self.own, own, now, capacity, window) {
            return Noted {
                bucket: own,
                count,
                previous,
            };
        }
        let coarse = key.coarser();
        if let Some((count, previous)) = count_in(&mut self.coarse, coarse, now, capacity, window) {
            return Noted {
                bucket: coarse,
                count,
                previous,
            };
        }
        let (count, previous) = match &mut self.overflow {
            Some(w) if !w.over(now, window) => {
                w.count = w.count.saturating_add(1);
                (w.count, None)
            }
            held => (1, held.replace(Window::new(now)).map(|w| w.count)),
        };
        Noted {
            bucket: Bucket::Overflow,
            count,
            previous,
        }
    }

    /// The windows `key` answers to at `now` and are not over: its own bucket's, its
    /// coarser bucket's and the overflow's, those that are held.
    pub(crate) fn windows(&self, key: impl Tiered, now: Instant) -> [Option<(Bucket, Window)>; 3] {
        let live = |bucket: Bucket, w: Option<&Window>| {
            w.filter(|w| !w.over(now, self.window))
                .map(|w| (bucket, *w))
        };
        let (own, coarse) = (key.bucket(), key.coarser());
        [
            live(own, self.own.get(&own)),
            live(coarse, self.coarse.get(&coarse)),
            live(Bucket::Overflow, self.overflow.as_ref()),
        ]
    }

    /// The length of a window.
    pub(crate) fn window(&self) -> Duration {
        self.window
    }

    /// The buckets of the table of keys, oldest window first.
    #[cfg(test)]
    pub(crate) fn own_buckets(&self) -> Vec<Bucket> {
        self.own.keys().copied().collect()
    }

    /// The buckets of the table of coarser buckets, oldest window first.
    #[cfg(test)]
    pub(crate) fn coarse_buckets(&self) -> Vec<Bucket> {
        self.coarse.keys().copied().collect()
    }
}

/// Counts an event of `bucket` in `table` if it is there or can be made room for (the
/// oldest bucket forgotten if its window is over): its count, and the count of the
/// window it replaced. `None` when the table is full of windows not over.
fn count_in(
    table: &mut LinkedHashMap<Bucket, Window>,
    bucket: Bucket,
    now: Instant,
    capacity: usize,
    window: Duration,
) -> Option<(u64, Option<u64>)> {
    if let Some(w) = table.get_mut(&bucket) {
        if !w.over(now, window) {
            w.count = w.count.saturating_add(1);
            return Some((w.count, None));
        }
        let previous = std::mem::replace(w, Window::new(now)).count;
        // A new window: the bucket is now the newest, which keeps the order.
        table.to_back(&bucket);
        return Some((1, Some(previous)));
    }
    if table.len() >= capacity {
        // The first bucket has the oldest window: if it is not over, none is.
        let oldest_over = table.front().is_some_and(|(_, w)| w.over(now, window));
        if !oldest_over {
            return None;
        }
        table.pop_front();
    }
    table.insert(bucket, Window::new(now));
    Some((1, None))
}

#[cfg(test)]
mod tests {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    use super::*;

    thread_local! {
        /// Bytes allocated and not freed by this thread (a test's own, whatever the
        /// tests running beside it allocate).
        static HELD: Cell<isize> = const { Cell::new(0) };
    }

    /// The system's allocator, counting each thread's bytes: the tables' memory is
    /// measured exactly, not guessed from the sizes of types.
    struct Counting;

    // SAFETY: every call is passed to the system's allocator unchanged; the counting
    // touches only a thread-local `Cell` (const-initialised: no allocation, no destructor).
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            // SAFETY: the caller's contract, passed on.
            let p = unsafe { System.alloc(layout) };
            if !p.is_null() {
                let _ = HELD.try_with(|h| h.set(h.get() + layout.size() as isize));
            }
            p
        }

        unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
            // SAFETY: the caller's contract, passed on.
            unsafe { System.dealloc(p, layout) };
            let _ = HELD.try_with(|h| h.set(h.get() - layout.size() as isize));
        }
    }

    #[global_allocator]
    static COUNTING: Counting = Counting;

    /// The figure of docs/security.md: `cargo test -p remote --lib full_tiers -- --nocapture`.
    #[test]
    fn full_tiers_hold_at_most_3_mib() {
        let before = HELD.with(Cell::get);
        let mut tiers = Tiers::new(TABLE_ENTRIES, Duration::from_secs(60));
        let now = Instant::now();
        // Every host in a /24 of its own: both tables fill, the rest overflows.
        for n in 0..(2 * TABLE_ENTRIES as u32 + 1_000) {
            tiers.note(Host(Ipv4Addr::from(n << 8)), now);
        }
        let held = HELD.with(Cell::get) - before;
        assert_eq!(tiers.own_buckets().len(), TABLE_ENTRIES);
        assert_eq!(tiers.coarse_buckets().len(), TABLE_ENTRIES);
        println!(
            "full tiers ({TABLE_ENTRIES} + {TABLE_ENTRIES} buckets and the overflow): {held} bytes"
        );
        assert!(held > 0 && held <= 3 << 20, "{held} bytes");
        drop(tiers);
    }

    /// A test key: an IPv4 address whose coarser bucket is its /24.
    #[derive(Clone, Copy)]
    struct Host(Ipv4Addr);

    impl Tiered for Host {
        fn bucket(self) -> Bucket {
            Bucket::prefix(IpAddr::V4(self.0), 32)
        }
        fn coarser(self) -> Bucket {
            Bucket::prefix(IpAddr::V4(self.0), 24)
        }
    }

    fn host(text: &str) -> Host {
        Host(text.parse().expect("an IPv4 address"))
    }

    fn prefix(text: &str, len: u8) -> Bucket {
        Bucket::prefix(text.parse().expect("an address"), len)
    }

    #[test]
    fn prefixes_keep_their_first_bits_and_print_as_networks() {
        assert_eq!(prefix("203.0.113.77", 24).to_string(), "203.0.113.0/24");
        assert_eq!(prefix("203.0.113.77", 16).to_string(), "203.0.0.0/16");
        assert_eq!(prefix("203.0.113.77", 32).to_string(), "203.0.113.77");
        assert_eq!(prefix("203.0.113.77", 0).to_string(), "0.0.0.0/0");
        assert_eq!(
            prefix("2001:db8:1:2:3:4:5:6", 64).to_string(),
            "2001:db8:1:2::/64"
        );
        assert_eq!(
            prefix("2001:db8:1:2:3:4:5:6", 48).to_string(),
            "2001:db8:1::/48"
        );
        assert_eq!(prefix("2001:db8::6", 128).to_string(), "2001:db8::6");
        assert_eq!(prefix("10.1.2.3", 24), prefix("10.1.2.200", 24));
        assert_ne!(prefix("10.1.2.3", 24), prefix("10.1.3.3", 24));
        assert_eq!(
            Bucket::Overflow.to_string(),
            "the networks past the bot port's tables"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_oldest_window_makes_room_and_only_once_it_is_over() {
        let mut tiers = Tiers::new(3, Duration::from_secs(60));
        let start = Instant::now();
        let at = |secs: u64| start + Duration::from_secs(secs);
        for (secs, who) in [(0, "10.0.0.1"), (10, "10.0.0.2"), (20, "10.0.0.3")] {
            assert_eq!(tiers.note(host(who), at(secs)).count, 1);
        }
        // Full, and every window still running: the fourth is counted under its /24.
        let fourth = tiers.note(host("10.0.0.4"), at(59));
        assert_eq!((fourth.bucket, fourth.count), (prefix("10.0.0.0", 24), 1));
        // A second failure of the first, in its window: counted in its own bucket.
        assert_eq!(tiers.note(host("10.0.0.1"), at(59)).count, 2);
        // At 60 s the first window is over: the next newcomer takes its place, while
        // the second's and the third's windows are untouched.
        let fifth = tiers.note(host("10.0.0.5"), at(60));
        assert_eq!((fifth.bucket, fifth.count), (prefix("10.0.0.5", 32), 1));
        assert_eq!(
            tiers.own_buckets(),
            [
                prefix("10.0.0.2", 32),
                prefix("10.0.0.3", 32),
                prefix("10.0.0.5", 32)
            ]
        );
        // A window that starts again moves its bucket to the back, with the count of
        // the window it ends.
        assert_eq!(tiers.note(host("10.0.0.2"), at(70)).count, 1);
        assert_eq!(tiers.note(host("10.0.0.3"), at(80)).previous, Some(1));
        assert_eq!(
            tiers.own_buckets(),
            [
                prefix("10.0.0.5", 32),
                prefix("10.0.0.2", 32),
                prefix("10.0.0.3", 32)
            ]
        );
        // The first window is the fifth's (60 s): at 119 s every window runs, so a
        // newcomer is counted under its /24, in the table of coarser buckets.
        let late = tiers.note(host("10.0.9.9"), at(119));
        assert_eq!(late.bucket, prefix("10.0.9.0", 24));
        assert_eq!(
            tiers.coarse_buckets(),
            [prefix("10.0.0.0", 24), prefix("10.0.9.0", 24)]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn past_both_tables_everything_is_counted_in_one_overflow_window() {
        let mut tiers = Tiers::new(2, Duration::from_secs(60));
        let now = Instant::now();
        for who in ["10.0.0.1", "10.0.0.2", "10.0.1.1", "10.0.2.1"] {
            assert_eq!(tiers.note(host(who), now).count, 1);
        }
        assert_eq!(
            tiers.coarse_buckets(),
            [prefix("10.0.1.0", 24), prefix("10.0.2.0", 24)]
        );
        for (n, who) in ["10.0.3.1", "192.0.2.1", "10.0.3.1"].iter().enumerate() {
            let noted = tiers.note(host(who), now);
            assert_eq!(
                (noted.bucket, noted.count),
                (Bucket::Overflow, n as u64 + 1)
            );
        }
        // A key answers to its own window, its coarser bucket's and the overflow's.
        let windows = tiers.windows(host("10.0.1.77"), now);
        let counts: Vec<_> = windows
            .iter()
            .map(|w| w.map(|(b, w)| (b, w.count)))
            .collect();
        assert_eq!(
            counts,
            [
                None,
                Some((prefix("10.0.1.0", 24), 1)),
                Some((Bucket::Overflow, 3))
            ]
        );
        // A minute on, every window is over: nothing answers, and the overflow starts
        // again, saying how many its last window held.
        let later = now + Duration::from_secs(60);
        assert_eq!(tiers.windows(host("10.0.1.77"), later), [None, None, None]);
        assert_eq!(tiers.note(host("10.0.0.1"), later).previous, Some(1));
        assert_eq!(
            tiers.note(host("10.0.0.9"), later).bucket,
            prefix("10.0.0.9", 32)
        );
    }
}

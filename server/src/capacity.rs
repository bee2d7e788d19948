//! Shared capacity: slots of something (connections, live streams) counted in all and
//! per client address, so that one address cannot take what the others need. A
//! [`Slot`] is held while the thing lasts and given back when dropped; the counts are
//! exact at every moment (one lock, short sections), and the map of addresses holds
//! only addresses with a slot, so it never outgrows the total.

use std::collections::HashMap;
use std::fmt;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::{Arc, Mutex, MutexGuard};

/// A client as the limits count it: an IPv4 address, or an IPv6 /64 network (one
/// machine or one site usually has a whole /64, so counting single IPv6 addresses would
/// let it take as many slots as it likes). An IPv4-mapped IPv6 address counts as its
/// IPv4 address, and `::1` as itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Client(IpAddr);

impl Client {
    /// The client of a peer address.
    pub fn of(ip: IpAddr) -> Client {
        match ip {
            IpAddr::V4(v4) => Client(IpAddr::V4(v4)),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => Client(IpAddr::V4(v4)),
                None if v6.is_loopback() => Client(IpAddr::V6(v6)),
                None => {
                    let s = v6.segments();
                    Client(IpAddr::V6(Ipv6Addr::new(
                        s[0], s[1], s[2], s[3], 0, 0, 0, 0,
                    )))
                }
            },
        }
    }
}

impl fmt::Display for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            IpAddr::V6(v6) if !v6.is_loopback() => write!(f, "{v6}/64"),
            ip => write!(f, "{ip}"),
        }
    }
}

/// Which bound a refused slot met.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Full {
    /// Every slot is held.
    Total,
    /// The client holds as many as one client may.
    Client,
}

/// Slots counted in all and per [`Client`].
#[derive(Debug)]
pub struct Capacity {
    total: usize,
    per_client: usize,
    held: Mutex<Held>,
}

#[derive(Debug, Default)]
struct Held {
    total: usize,
    by_client: HashMap<Client, usize>,
}

impl Capacity {
    /// `total` slots, at most `per_client` of them for one client.
    pub fn new(total: usize, per_client: usize) -> Arc<Capacity> {
        Arc::new(Capacity {
            total,
            per_client,
            held: Mutex::new(Held::default()),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Held> {
        // The sections below cannot panic half-way; a poisoned lock still holds exact counts.
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A slot for the client of `ip`, or which bound refuses it.
    pub fn try_take(self: &Arc<Self>, ip: IpAddr) -> Result<Slot, Full> {
        let client = Client::of(ip);
        let mut held = self.lock();
        if held.total >= self.total {
            return Err(Full::Total);
        }
        let mine = held.by_client.entry(client).or_insert(0);
        if *mine >= self.per_client {
            return Err(Full::Client);
        }
        *mine += 1;
        held.total += 1;
        Ok(Slot {
            capacity: self.clone(),
            client,
        })
    }

    /// Slots held now.
    pub fn held(&self) -> usize {
        self.lock().total
    }

    /// Slots in all.
    pub fn total(&self) -> usize {
        self.total
    }

    /// Slots one client may hold.
    pub fn per_client(&self) -> usize {
        self.per_client
    }
}

/// One held slot; given back when dropped.
#[derive(Debug)]
pub struct Slot {
    capacity: Arc<Capacity>,
    client: Client,
}

impl Slot {
    /// Whose slot it is.
    pub fn client(&self) -> Client {
        self.client
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut held = self.capacity.lock();
        held.total = held.total.saturating_sub(1);
        if let Some(mine) = held.by_client.get_mut(&self.client) {
            *mine = mine.saturating_sub(1);
            if *mine == 0 {
                held.by_client.remove(&self.client);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().expect("an address")
    }

    #[test]
    fn one_client_gets_its_share_and_the_others_the_rest() {
        let capacity = Capacity::new(5, 2);
        let a1 = capacity.try_take(ip("127.0.0.1")).expect("first");
        let a2 = capacity.try_take(ip("127.0.0.1")).expect("second");
        assert_eq!(
            capacity.try_take(ip("127.0.0.1")).map(|_| ()),
            Err(Full::Client)
        );
        let b: Vec<Slot> = ["127.0.0.2", "127.0.0.2", "127.0.0.3"]
            .iter()
            .map(|a| capacity.try_take(ip(a)).expect("others"))
            .collect();
        assert_eq!(capacity.held(), 5);
        assert_eq!(
            capacity.try_take(ip("127.0.0.4")).map(|_| ()),
            Err(Full::Total)
        );
        drop(a1);
        assert_eq!(capacity.held(), 4);
        let again = capacity.try_take(ip("127.0.0.1")).expect("given back");
        drop((a2, again, b));
        assert_eq!(capacity.held(), 0);
        assert!(capacity.lock().by_client.is_empty());
    }

    #[test]
    fn an_ipv6_64_is_one_client_and_mapped_ipv4_is_its_ipv4() {
        assert_eq!(
            Client::of(ip("2001:db8:1:2:aaaa::1")),
            Client::of(ip("2001:db8:1:2:bbbb::9"))
        );
        assert_ne!(
            Client::of(ip("2001:db8:1:2::1")),
            Client::of(ip("2001:db8:1:3::1"))
        );
        assert_eq!(
            Client::of(ip("::ffff:127.0.0.1")),
            Client::of(ip("127.0.0.1"))
        );
        assert_eq!(
            Client::of(ip("2001:db8:1:2::1")).to_string(),
            "2001:db8:1:2::/64"
        );
        assert_eq!(Client::of(ip("::1")).to_string(), "::1");
        assert_eq!(Client::of(ip("127.0.0.1")).to_string(), "127.0.0.1");
        let capacity = Capacity::new(10, 1);
        let _one = capacity.try_take(ip("2001:db8::1")).expect("first");
        assert_eq!(
            capacity.try_take(ip("2001:db8::2")).map(|_| ()),
            Err(Full::Client)
        );
    }
}

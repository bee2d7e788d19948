//! The `Host` check of the pages `hus` serves over HTTP (`hus serve`'s dashboard and API,
//! `hus play --web`'s page), against DNS rebinding: a page of another site whose name
//! the attacker points at this server's address sends its own name as `Host`, and is
//! refused. One check for both servers: [`AllowedHosts::allows`].
//!
//! Accepted, whatever the port (a tunnel such as `ssh -L 9000:127.0.0.1:8080` or a
//! reverse proxy changes it, and the port does not matter against rebinding, which needs
//! a name):
//! - `localhost` and names under `.localhost` (browsers resolve them to loopback
//!   themselves, so no one else's DNS can answer for them);
//! - a loopback IP address (`127.0.0.0/8`, `[::1]`);
//! - the IP address listened on; when that is `0.0.0.0` or `::` (every address of the
//!   machine), any IP address: an address in `Host` is the one the browser connected
//!   to, never a name someone else's DNS answered for;
//! - the names given to [`AllowedHosts::new`] (`hus serve --allowed-host`), without
//!   regard to case.
//!
//! Anything else, and a request without a `Host`, is refused.

use std::collections::BTreeSet;
use std::net::{IpAddr, SocketAddr};

/// The `Host` values a server answers to (see the module's documentation).
#[derive(Debug, Clone)]
pub struct AllowedHosts {
    listen: SocketAddr,
    names: BTreeSet<String>,
}

/// A `--allowed-host` value that is not a host name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid --allowed-host {0:?}: give a host name without scheme, port or path, such as \
     hus.example.org"
)]
pub struct BadHostName(pub String);

impl AllowedHosts {
    /// The hosts of a server listening on `listen`, with the extra `names` (host names,
    /// checked: letters, digits, `-` and `.`, such as `hus.example.org`).
    pub fn new(listen: SocketAddr, names: &[String]) -> Result<AllowedHosts, BadHostName> {
        let mut set = BTreeSet::new();
        for name in names {
            let plain = !name.is_empty()
                && name.len() <= 253
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
                && !name.starts_with(['.', '-'])
                && !name.contains("..");
            if !plain {
                return Err(BadHostName(name.clone()));
            }
            set.insert(name.to_ascii_lowercase());
        }
        Ok(AllowedHosts { listen, names: set })
    }

    /// Whether a request whose `Host` header is `host` (`None`: it had none, or not as
    /// text) is for this server.
    pub fn allows(&self, host: Option<&str>) -> bool {
        let Some(name) = host.and_then(host_part) else {
            return false;
        };
        if let Some(ip) = ip_literal(name) {
            return ip.is_loopback() || ip == self.listen.ip() || self.listen.ip().is_unspecified();
        }
        let name = name.to_ascii_lowercase();
        name == "localhost" || name.ends_with(".localhost") || self.names.contains(&name)
    }

    /// Why a request for `host` is refused, in plain words, with the addresses that are
    /// served (a server adds how to allow another name, if it can).
    pub fn refusal(&self, host: Option<&str>) -> String {
        let served = if self.listen.ip().is_unspecified() {
            format!(
                "any IP address of this machine (port {})",
                self.listen.port()
            )
        } else {
            self.listen.to_string()
        };
        let mut also: Vec<String> = vec!["localhost".into()];
        also.extend(self.names.iter().cloned());
        let asked = match host {
            Some(h) => format!("the request's Host was {h:?}"),
            None => "the request had no Host".into(),
        };
        format!(
            "this server answers only to {served} or {} ({asked})",
            also.join(", ")
        )
    }
}

/// The host of a `Host` value, without its port: `[::1]:80` gives `[::1]`, `a.b:80` and
/// `a.b` give `a.b`; `None` for what is not a host with an optional numeric port.
fn host_part(value: &str) -> Option<&str> {
    let value = value.trim();
    let (host, port) = if value.starts_with('[') {
        let end = value.find(']')?;
        let rest = &value[end + 1..];
        (
            &value[..=end],
            rest.strip_prefix(':').or(rest.is_empty().then_some("")),
        )
    } else {
        match value.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (value, Some("")),
        }
    };
    let port = port?;
    let port_ok = port.is_empty() || (port.len() <= 5 && port.bytes().all(|b| b.is_ascii_digit()));
    (port_ok && !host.is_empty() && !host.contains(['@', '/', '\\', ' '])).then_some(host)
}

/// The IP address a host part spells (`127.0.0.1`, `[::1]`), if it spells one.
fn ip_literal(host: &str) -> Option<IpAddr> {
    match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        Some(v6) => v6.parse::<std::net::Ipv6Addr>().ok().map(IpAddr::V6),
        None => host.parse::<std::net::Ipv4Addr>().ok().map(IpAddr::V4),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(listen: &str, names: &[&str]) -> AllowedHosts {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        AllowedHosts::new(listen.parse().expect("address"), &names).expect("names")
    }

    #[test]
    fn loopback_names_and_addresses_pass_and_other_names_do_not() {
        let h = hosts("127.0.0.1:8080", &["Hus.Example.org"]);
        for ok in [
            "127.0.0.1:8080",
            "127.0.0.1",
            "127.0.0.1:9000",
            "127.0.0.2:8080",
            "localhost:8080",
            "LOCALHOST",
            "app.localhost:8080",
            "[::1]:8080",
            "[::1]",
            "hus.example.org",
            "HUS.example.org:443",
        ] {
            assert!(h.allows(Some(ok)), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:8080",
            "localhost.evil.example",
            "10.0.0.1:8080",
            "[2001:db8::1]:8080",
            "example.org",
            "hus.example.org.evil",
            "user@127.0.0.1",
            "127.0.0.1:80x",
            "[::1]x",
            "",
            ":8080",
        ] {
            assert!(!h.allows(Some(bad)), "{bad}");
        }
        assert!(!h.allows(None));
        assert_eq!(
            h.refusal(Some("evil.example")),
            "this server answers only to 127.0.0.1:8080 or localhost, hus.example.org (the \
             request's Host was \"evil.example\")"
        );
    }

    #[test]
    fn a_specific_address_passes_and_every_address_passes_when_listening_on_all() {
        let one = hosts("192.0.2.7:8080", &[]);
        assert!(one.allows(Some("192.0.2.7:8080")));
        assert!(one.allows(Some("192.0.2.7")));
        assert!(!one.allows(Some("192.0.2.8:8080")));
        assert!(!one.allows(Some("hus.example.org")));
        let all = hosts("0.0.0.0:8080", &[]);
        assert!(all.allows(Some("192.0.2.8:8080")));
        assert!(all.allows(Some("[2001:db8::1]:8080")));
        assert!(!all.allows(Some("hus.example.org:8080")));
        assert!(all
            .refusal(None)
            .starts_with("this server answers only to any IP address of this machine (port 8080)"));
    }

    #[test]
    fn names_with_a_port_scheme_or_path_are_refused_as_options() {
        let listen: SocketAddr = "127.0.0.1:1".parse().expect("address");
        for bad in [
            "hus.example.org:443",
            "http://x",
            "a/b",
            "",
            "-x",
            ".x",
            "a..b",
            "a b",
        ] {
            assert_eq!(
                AllowedHosts::new(listen, &[bad.to_string()]).map(|_| ()),
                Err(BadHostName(bad.to_string())),
                "{bad}"
            );
        }
        assert_eq!(
            BadHostName("a:1".into()).to_string(),
            "invalid --allowed-host \"a:1\": give a host name without scheme, port or path, \
             such as hus.example.org"
        );
    }
}

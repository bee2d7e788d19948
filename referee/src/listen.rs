//! The message of a port that cannot be opened, for every `hus` command that listens
//! (`hus serve`'s web and bot ports, `hus play --web`): the address, the option that
//! moves it, the cause in plain words and what to do, in one line.

use std::io;
use std::net::SocketAddr;

/// A listening socket that could not be opened on `addr`, which the option `option`
/// gave (or defaulted).
///
/// ```
/// let e = referee::ListenError {
///     addr: "127.0.0.1:8080".parse().unwrap(),
///     option: "--listen",
///     error: std::io::ErrorKind::AddrInUse.into(),
/// };
/// assert_eq!(
///     e.to_string(),
///     "cannot listen on 127.0.0.1:8080 (--listen): the address is in use; stop what \
///      holds it or choose another with --listen"
/// );
/// ```
#[derive(Debug, thiserror::Error)]
#[error("cannot listen on {addr} ({option}): {}", cause(addr, option, error))]
pub struct ListenError {
    /// The address asked for.
    pub addr: SocketAddr,
    /// The option that gives it: `--listen`, `--bot-listen`.
    pub option: &'static str,
    /// Why (in the message, not a source of its own: it would be said twice).
    pub error: io::Error,
}

/// The cause and the remedy, for the errors a user can meet (a port taken, an address
/// of another machine, a privileged port); the system's own words for any other.
fn cause(addr: &SocketAddr, option: &str, error: &io::Error) -> String {
    match error.kind() {
        io::ErrorKind::AddrInUse => {
            format!("the address is in use; stop what holds it or choose another with {option}")
        }
        io::ErrorKind::AddrNotAvailable => format!(
            "{} is not an address of this machine; choose one of its own with {option}",
            addr.ip()
        ),
        io::ErrorKind::PermissionDenied => format!(
            "permission denied (a port below 1024 needs privileges); choose a port from 1024 \
             up with {option}"
        ),
        _ => format!("{error}; choose another address with {option}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(kind: io::Error, addr: &str) -> String {
        ListenError {
            addr: addr.parse().expect("an address"),
            option: "--bot-listen",
            error: kind,
        }
        .to_string()
    }

    #[test]
    fn each_cause_names_the_option_that_moves_the_port() {
        assert_eq!(
            message(io::ErrorKind::AddrNotAvailable.into(), "10.9.8.7:7000"),
            "cannot listen on 10.9.8.7:7000 (--bot-listen): 10.9.8.7 is not an address of \
             this machine; choose one of its own with --bot-listen"
        );
        assert_eq!(
            message(io::ErrorKind::PermissionDenied.into(), "127.0.0.1:80"),
            "cannot listen on 127.0.0.1:80 (--bot-listen): permission denied (a port below \
             1024 needs privileges); choose a port from 1024 up with --bot-listen"
        );
        assert_eq!(
            message(io::Error::other("something else"), "127.0.0.1:7000"),
            "cannot listen on 127.0.0.1:7000 (--bot-listen): something else; choose another \
             address with --bot-listen"
        );
    }
}

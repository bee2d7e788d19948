//! The admin token: made by `hus token --admin` like a bot's token (`remote::new_token`:
//! 32 random bytes from the OS, 64 hexadecimal digits, shown once), kept only as the
//! hex of its SHA-256 (`remote::token_hash`) in `admin-token.sha256` in the league's
//! directory, and checked by `remote::token_matches` (SHA-256 digests compared in
//! constant time). A token of 256 random bits needs no slow password hash: no one can
//! guess it from its digest.
//!
//! Refused admin requests are counted per client address ([`RefusalLog`]) and logged
//! once a minute at most for each, with the count and the reasons, never the token.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

use crate::capacity::Client;

/// The file of the token's digest in the league's directory.
pub const TOKEN_FILE: &str = "admin-token.sha256";

/// The digest file of a league directory.
pub fn token_file(dir: &Path) -> PathBuf {
    dir.join(TOKEN_FILE)
}

/// Writes `token`'s digest to the league directory's token file (the previous token
/// stops working).
pub fn store_digest(dir: &Path, token: &str) -> anyhow::Result<()> {
    // The league's directory is the user's; the files in it are reached through it
    // without following a link.
    let open = referee::Dir::create(dir)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
    let (name, tmp) = (Path::new(TOKEN_FILE), format!("{TOKEN_FILE}.new"));
    let tmp = Path::new(&tmp);
    let mut file = open
        .create_file(tmp, referee::Create::Replace, None)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", open.join(tmp).display()))?;
    writeln!(file, "{}", remote::hex(&remote::token_hash(token)))
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", open.join(tmp).display()))?;
    open.rename(tmp, name)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", token_file(dir).display()))?;
    Ok(())
}

/// Makes a new token, writes its digest to the league directory's token file (the
/// previous token stops working) and returns the token.
pub fn new_token(dir: &Path) -> anyhow::Result<String> {
    let token = remote::new_token();
    store_digest(dir, &token)?;
    Ok(token)
}

/// Why an admin request is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// No `Authorization: Bearer` header.
    Missing,
    /// The league has no admin token (its file is missing or unreadable).
    NoToken,
    /// The token does not match.
    Wrong,
}

/// Checks a presented token against the league directory's digest, read afresh (a new
/// token works at once, without a restart).
pub fn check(dir: &Path, presented: Option<&str>) -> Result<(), Refusal> {
    let presented = presented.ok_or(Refusal::Missing)?;
    let stored = std::fs::read_to_string(token_file(dir))
        .ok()
        .and_then(|t| league::parse_sha256(t.trim()).ok())
        .ok_or(Refusal::NoToken)?;
    if remote::token_matches(presented, &stored) {
        Ok(())
    } else {
        Err(Refusal::Wrong)
    }
}

impl Refusal {
    /// What the client is told.
    pub fn answer(self) -> &'static str {
        match self {
            Refusal::Missing => "an admin action needs the header Authorization: Bearer TOKEN",
            Refusal::NoToken => {
                "this league has no admin token: make one with hus token --admin LEAGUE.toml"
            }
            Refusal::Wrong => "wrong admin token",
        }
    }

    /// The reason in the log's summary.
    fn label(self) -> &'static str {
        match self {
            Refusal::Missing => "no token given",
            Refusal::NoToken => "the league has no admin token",
            Refusal::Wrong => "wrong token",
        }
    }

    const ALL: [Refusal; 3] = [Refusal::Missing, Refusal::NoToken, Refusal::Wrong];
}

/// A client's refused admin requests are summed up in one log line this long after the
/// first of them (or when the server stops); the next refusal starts a new period.
pub const REFUSAL_LOG_PERIOD: Duration = Duration::from_secs(60);
/// How often the periods are checked for lines due.
const REFUSAL_LOG_TICK: Duration = Duration::from_secs(1);
/// Client addresses counted one by one at once; refusals from more addresses than this
/// are summed up together ("other addresses"), so the map stays bounded.
const MAX_COUNTED_CLIENTS: usize = 1024;

/// Refused admin requests counted per [`Client`]: at most one log line per client and
/// [`REFUSAL_LOG_PERIOD`], whatever a client sends, with the count of each reason.
#[derive(Debug, Default)]
pub struct RefusalLog {
    counts: Mutex<Counts>,
}

#[derive(Debug, Default)]
struct Counts {
    by_client: BTreeMap<Client, Period>,
    others: Option<Period>,
}

/// The refusals of one period: since when, and how many of each [`Refusal`].
#[derive(Debug)]
struct Period {
    since: Instant,
    counts: [u64; 3],
}

impl Period {
    fn new() -> Period {
        Period {
            since: Instant::now(),
            counts: [0; 3],
        }
    }

    fn due(&self, all: bool) -> bool {
        all || self.since.elapsed() >= REFUSAL_LOG_PERIOD
    }
}

impl RefusalLog {
    /// Counts one refused request from `client`.
    pub fn note(&self, client: Client, refusal: Refusal) {
        let mut guard = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let counts = &mut *guard;
        let counted =
            counts.by_client.contains_key(&client) || counts.by_client.len() < MAX_COUNTED_CLIENTS;
        let period = if counted {
            counts.by_client.entry(client).or_insert_with(Period::new)
        } else {
            counts.others.get_or_insert_with(Period::new)
        };
        period.counts[refusal as usize] += 1;
    }

    /// The summary lines of the periods that are over (`all`: of every period), one per
    /// client, then one for the other addresses; those periods end.
    pub fn take_lines(&self, all: bool) -> Vec<String> {
        let mut guard = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let counts = &mut *guard;
        let mut lines = Vec::new();
        counts.by_client.retain(|client, period| {
            let due = period.due(all);
            if due {
                lines.push(summary(&client.to_string(), period));
            }
            !due
        });
        if let Some(period) = counts.others.take_if(|p| p.due(all)) {
            lines.push(summary("other addresses", &period));
        }
        lines
    }

    /// Logs each summary when it is due (`tracing::warn!`), and every one left when
    /// `shutdown` says so; then returns.
    pub async fn run(self: Arc<Self>, mut shutdown: watch::Receiver<Option<&'static str>>) {
        loop {
            let stopping = tokio::select! {
                _ = tokio::time::sleep(REFUSAL_LOG_TICK) => false,
                _ = shutdown.wait_for(|s| s.is_some()) => true,
            };
            for line in self.take_lines(stopping) {
                tracing::warn!("{line}");
            }
            if stopping {
                return;
            }
        }
    }
}

/// `refused 57 admin requests from 127.0.0.1 in the last 60 s: 57 wrong token`.
fn summary(from: &str, period: &Period) -> String {
    let total: u64 = period.counts.iter().sum();
    let secs = period.since.elapsed().as_secs().max(1);
    let reasons: Vec<String> = Refusal::ALL
        .iter()
        .zip(period.counts)
        .filter(|(_, n)| *n > 0)
        .map(|(r, n)| format!("{n} {}", r.label()))
        .collect();
    format!(
        "refused {total} admin request{} from {from} in the last {secs} s: {}",
        if total == 1 { "" } else { "s" },
        reasons.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_summed_up_per_client_with_their_reasons_once_per_period() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .expect("runtime");
        rt.block_on(async {
            let log = RefusalLog::default();
            let one = Client::of("127.0.0.1".parse().expect("ip"));
            let two = Client::of("2001:db8::7".parse().expect("ip"));
            for _ in 0..57 {
                log.note(one, Refusal::Wrong);
            }
            tokio::time::sleep(Duration::from_secs(30)).await;
            log.note(one, Refusal::Missing);
            log.note(two, Refusal::NoToken);
            assert!(log.take_lines(false).is_empty());
            tokio::time::sleep(Duration::from_secs(30)).await;
            assert_eq!(
                log.take_lines(false),
                [
                    "refused 58 admin requests from 127.0.0.1 in the last 60 s: 1 no token given, \
                  57 wrong token"
                ]
            );
            // A new period for the first; the second's ends 60 s after its first refusal.
            log.note(one, Refusal::Wrong);
            tokio::time::sleep(Duration::from_secs(30)).await;
            assert_eq!(
                log.take_lines(false),
                [
                    "refused 1 admin request from 2001:db8::/64 in the last 60 s: 1 the league \
                  has no admin token"
                ]
            );
            // Stopping: every period left, whatever its age.
            assert_eq!(
                log.take_lines(true),
                ["refused 1 admin request from 127.0.0.1 in the last 30 s: 1 wrong token"]
            );
            assert!(log.take_lines(true).is_empty());
            // Past the bound on addresses, the rest are summed up together.
            for n in 0..(MAX_COUNTED_CLIENTS as u32 + 3) {
                log.note(
                    Client::of(std::net::Ipv4Addr::from(n).into()),
                    Refusal::Wrong,
                );
            }
            let lines = log.take_lines(true);
            assert_eq!(lines.len(), MAX_COUNTED_CLIENTS + 1);
            assert_eq!(
                lines.last().map(String::as_str),
                Some(
                    "refused 3 admin requests from other addresses in the last 1 s: 3 wrong token"
                )
            );
        });
    }

    #[test]
    fn only_the_newest_token_passes_and_only_its_digest_is_stored() {
        let dir = tempfile::tempdir().expect("temp dir");
        assert_eq!(check(dir.path(), Some("x")), Err(Refusal::NoToken));
        let first = new_token(dir.path()).expect("token");
        assert_eq!(first.len(), 64);
        let stored = std::fs::read_to_string(token_file(dir.path())).expect("read");
        assert!(!stored.contains(&first));
        assert_eq!(stored.trim(), remote::hex(&remote::token_hash(&first)));
        assert_eq!(check(dir.path(), Some(&first)), Ok(()));
        assert_eq!(check(dir.path(), None), Err(Refusal::Missing));
        let second = new_token(dir.path()).expect("token");
        assert_ne!(first, second);
        assert_eq!(check(dir.path(), Some(&first)), Err(Refusal::Wrong));
        assert_eq!(check(dir.path(), Some(&second)), Ok(()));
    }
}

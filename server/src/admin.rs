//! The admin token: made by `hus token --admin` like a bot's token (`remote::new_token`:
//! 32 random bytes from the OS, 64 hexadecimal digits, shown once), kept only as the
//! hex of its SHA-256 (`remote::token_hash`) in `admin-token.sha256` in the league's
//! directory, and checked by `remote::token_matches` (SHA-256 digests compared in
//! constant time). A token of 256 random bits needs no slow password hash: no one can
//! guess it from its digest.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The file of the token's digest in the league's directory.
pub const TOKEN_FILE: &str = "admin-token.sha256";

/// The digest file of a league directory.
pub fn token_file(dir: &Path) -> PathBuf {
    dir.join(TOKEN_FILE)
}

/// Writes `token`'s digest to the league directory's token file (the previous token
/// stops working).
pub fn store_digest(dir: &Path, token: &str) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
    let path = token_file(dir);
    let tmp = dir.join(format!("{TOKEN_FILE}.new"));
    let mut file = referee::create_file(&tmp, referee::Create::Replace, None)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", tmp.display()))?;
    writeln!(file, "{}", remote::hex(&remote::token_hash(token)))
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, &path)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
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
#[derive(Debug, PartialEq, Eq)]
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

#[cfg(test)]
mod tests {
    use super::*;

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

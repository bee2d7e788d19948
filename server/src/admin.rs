//! The admin token: 32 random bytes shown once (base64url), kept only as the hex of its
//! SHA-256 in `admin-token.sha256` in the league's directory, and checked by comparing
//! SHA-256 digests in constant time (`subtle`). A token of 256 random bits needs no slow
//! password hash: no one can guess it from its digest.

use std::io::Write;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The file of the token's digest in the league's directory.
pub const TOKEN_FILE: &str = "admin-token.sha256";

/// The digest file of a league directory.
pub fn token_file(dir: &Path) -> PathBuf {
    dir.join(TOKEN_FILE)
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<[u8; 32]> {
    let text = text.trim();
    if text.len() != 64 || !text.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

/// Makes a new token, writes its digest to the league directory's token file (the
/// previous token stops working) and returns the token.
pub fn new_token(dir: &Path) -> anyhow::Result<String> {
    use rand::RngCore;
    let mut raw = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut raw);
    let token = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw);
    std::fs::create_dir_all(dir)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
    let path = token_file(dir);
    let tmp = dir.join(format!("{TOKEN_FILE}.new"));
    let mut file = std::fs::File::create(&tmp)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", tmp.display()))?;
    writeln!(file, "{}", hex(&digest(&token)))
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, &path)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
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
        .and_then(|t| unhex(&t))
        .ok_or(Refusal::NoToken)?;
    if bool::from(digest(presented).ct_eq(&stored)) {
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
        let stored = std::fs::read_to_string(token_file(dir.path())).expect("read");
        assert!(!stored.contains(&first));
        assert_eq!(stored.trim().len(), 64);
        assert_eq!(check(dir.path(), Some(&first)), Ok(()));
        assert_eq!(check(dir.path(), None), Err(Refusal::Missing));
        let second = new_token(dir.path()).expect("token");
        assert_ne!(first, second);
        assert_eq!(check(dir.path(), Some(&first)), Err(Refusal::Wrong));
        assert_eq!(check(dir.path(), Some(&second)), Ok(()));
    }
}

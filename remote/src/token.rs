//! Bot tokens: 256 random bits from the operating system's generator, shown once as 64
//! hexadecimal digits; only their SHA-256 is stored (the league file's
//! `token_sha256`), and a presented token is checked by hashing it and comparing the
//! hashes in constant time (`subtle`), so that neither the stored hash nor the time a
//! comparison takes tells anything about a token.

use rand::RngCore;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Bytes of randomness in a token.
pub const TOKEN_BYTES: usize = 32;

/// A new token: 32 bytes from the operating system's generator, as 64 lowercase
/// hexadecimal digits.
pub fn new_token() -> String {
    let mut bytes = [0u8; TOKEN_BYTES];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    hex(&bytes)
}

/// The SHA-256 of a token's text (what the league file stores).
pub fn token_hash(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// Whether `token` hashes to `stored`, compared in constant time.
pub fn token_matches(token: &str, stored: &[u8; 32]) -> bool {
    token_hash(token).ct_eq(stored).into()
}

/// Lowercase hexadecimal digits.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_64_hex_digits_and_new_each_time() {
        let a = new_token();
        let b = new_token();
        assert_eq!(a.len(), 64);
        assert!(a
            .bytes()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert_ne!(a, b);
    }

    #[test]
    fn the_hash_is_sha256_of_the_text() {
        // The SHA-256 of "abc", from FIPS 180-2.
        assert_eq!(
            hex(&token_hash("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let t = new_token();
        let stored = token_hash(&t);
        assert!(token_matches(&t, &stored));
        assert!(!token_matches(&format!("{t} "), &stored));
        assert!(!token_matches("", &stored));
    }
}

//! Authors of uploaded bots (docs/upload.md): `hus token --author NAME --bots PATTERN`
//! makes an author's token like a bot's (`remote::new_token`, shown once) and keeps
//! only its SHA-256, with the bot names the author may submit, in `authors.json` in the
//! league's directory. The server reads the file afresh at each submission: a new
//! author, or an author's new token, works at once without a restart, and the old
//! token stops working. An author's token can do nothing but submit (and make an
//! earlier version active again) for the bots its patterns allow.
//!
//! A pattern is a bot's name (`alice`), or a prefix ending in `*` (`alice-*`).

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The file of the authors in the league's directory.
pub const AUTHORS_FILE: &str = "authors.json";
/// The most bytes of the authors' file that are read.
const MAX_AUTHORS_BYTES: u64 = 16 << 20;
/// The longest name or pattern.
const MAX_NAME: usize = 64;

/// One author.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Author {
    /// The author's name (letters, digits, `-`, `_`).
    pub name: String,
    /// The SHA-256 of the author's token, hexadecimal.
    pub token_sha256: String,
    /// The bot names the author may submit: names, or prefixes ending in `*`.
    pub bots: Vec<String>,
}

impl Author {
    /// Whether the author may submit versions of `bot`.
    pub fn may_submit(&self, bot: &str) -> bool {
        self.bots.iter().any(|p| match p.strip_suffix('*') {
            Some(prefix) => bot.starts_with(prefix),
            None => p == bot,
        })
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct AuthorsFile {
    authors: Vec<Author>,
}

/// The authors' file of a league directory.
pub fn authors_file(dir: &Path) -> PathBuf {
    dir.join(AUTHORS_FILE)
}

fn check_name(what: &str, name: &str, star: bool) -> anyhow::Result<()> {
    let body = if star {
        name.strip_suffix('*').unwrap_or(name)
    } else {
        name
    };
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME
        && body
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !ok {
        anyhow::bail!(
            "{what} {name:?}: use 1 to {MAX_NAME} letters, digits, '-' or '_'{}",
            if star {
                ", with a '*' at the end for every name that starts so"
            } else {
                ""
            }
        );
    }
    Ok(())
}

/// The authors of the league in `dir` (none when there is no file yet).
pub fn load(dir: &Path) -> anyhow::Result<Vec<Author>> {
    use std::io::Read;
    let path = authors_file(dir);
    let file = match referee::Dir::open(dir).and_then(|d| d.open_file(Path::new(AUTHORS_FILE))) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => anyhow::bail!("cannot read {}: {e}", path.display()),
    };
    let mut text = String::new();
    file.take(MAX_AUTHORS_BYTES)
        .read_to_string(&mut text)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    let parsed: AuthorsFile = serde_json::from_str(&text)
        .map_err(|e| anyhow::anyhow!("{} is not an authors' file: {e}", path.display()))?;
    Ok(parsed.authors)
}

/// Adds `name` with the digest of `token` and its patterns to the league in `dir`,
/// replacing an author of that name (whose token stops working).
pub fn add(dir: &Path, name: &str, bots: &[String], token: &str) -> anyhow::Result<()> {
    check_name("the author's name", name, false)?;
    if bots.is_empty() {
        anyhow::bail!("--bots: give the names (or prefixes ending in '*') the author may submit");
    }
    for pattern in bots {
        check_name("--bots", pattern, true)?;
    }
    let mut authors = load(dir)?;
    authors.retain(|a| a.name != name);
    authors.push(Author {
        name: name.to_string(),
        token_sha256: remote::hex(&remote::token_hash(token)),
        bots: bots.to_vec(),
    });
    authors.sort_by(|a, b| a.name.cmp(&b.name));
    let text = serde_json::to_string_pretty(&AuthorsFile { authors })?;
    let open = referee::Dir::create(dir)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
    let tmp = format!("{AUTHORS_FILE}.new");
    let mut file = open
        .create_file(Path::new(&tmp), referee::Create::Replace, Some(0o600))
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", open.join(&tmp).display()))?;
    writeln!(file, "{text}")
        .and_then(|()| file.sync_all())
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", open.join(&tmp).display()))?;
    open.rename(Path::new(&tmp), Path::new(AUTHORS_FILE))
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", authors_file(dir).display()))?;
    Ok(())
}

/// Why a submission's token is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// No `Authorization: Bearer` header.
    Missing,
    /// No author has this token.
    Wrong,
    /// The author may not submit this bot.
    NotAllowed {
        /// The author.
        author: String,
        /// The author's patterns.
        bots: Vec<String>,
    },
    /// The authors' file cannot be read.
    Unreadable(String),
}

impl Refusal {
    /// The answer's sentence (never the token).
    pub fn answer(&self, bot: &str) -> String {
        match self {
            Refusal::Missing => {
                "no author's token: send it as 'Authorization: Bearer TOKEN' (hus submit --token-file)".into()
            }
            Refusal::Wrong => "this token is no author's of this league".into(),
            Refusal::NotAllowed { author, bots } => format!(
                "author {author} may not submit {bot:?}: only {}",
                bots.join(", ")
            ),
            Refusal::Unreadable(why) => format!("the league's authors cannot be read: {why}"),
        }
    }
}

/// The author whose token `presented` is, if that author may submit `bot`. Every
/// author's digest is compared (in constant time each): the answer takes as long
/// whichever matched.
pub fn authorize(dir: &Path, presented: Option<&str>, bot: &str) -> Result<Author, Refusal> {
    let presented = presented.ok_or(Refusal::Missing)?;
    let authors = load(dir).map_err(|e| Refusal::Unreadable(format!("{e:#}")))?;
    let mut found = None;
    for author in authors {
        let matches = league::parse_sha256(&author.token_sha256)
            .map(|stored| remote::token_matches(presented, &stored))
            .unwrap_or(false);
        if matches && found.is_none() {
            found = Some(author);
        }
    }
    let author = found.ok_or(Refusal::Wrong)?;
    if !author.may_submit(bot) {
        return Err(Refusal::NotAllowed {
            author: author.name,
            bots: author.bots,
        });
    }
    Ok(author)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_author_submits_the_names_and_prefixes_given_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        add(
            dir.path(),
            "alice",
            &["alice-*".into(), "solo".into()],
            "t1",
        )
        .unwrap();
        add(dir.path(), "bob", &["bob".into()], "t2").unwrap();
        assert_eq!(
            authorize(dir.path(), Some("t1"), "alice-mcts")
                .unwrap()
                .name,
            "alice"
        );
        assert_eq!(
            authorize(dir.path(), Some("t1"), "solo").unwrap().name,
            "alice"
        );
        assert_eq!(
            authorize(dir.path(), Some("t1"), "bob"),
            Err(Refusal::NotAllowed {
                author: "alice".into(),
                bots: vec!["alice-*".into(), "solo".into()]
            })
        );
        assert_eq!(
            authorize(dir.path(), Some("t1"), "solo2")
                .map(|a| a.name)
                .ok(),
            None
        );
        assert_eq!(
            authorize(dir.path(), Some("t3"), "bob"),
            Err(Refusal::Wrong)
        );
        assert_eq!(authorize(dir.path(), None, "bob"), Err(Refusal::Missing));
        // A new token replaces the old one.
        add(dir.path(), "bob", &["bob".into()], "t4").unwrap();
        assert_eq!(
            authorize(dir.path(), Some("t2"), "bob"),
            Err(Refusal::Wrong)
        );
        assert_eq!(
            authorize(dir.path(), Some("t4"), "bob").unwrap().name,
            "bob"
        );
        // Only digests are kept.
        let text = std::fs::read_to_string(authors_file(dir.path())).unwrap();
        assert!(!text.contains("\"t4\"") && text.contains(&remote::hex(&remote::token_hash("t4"))));
    }

    #[test]
    fn bad_names_and_patterns_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert!(add(dir.path(), "a b", &["x".into()], "t").is_err());
        assert!(add(dir.path(), "a", &[], "t").is_err());
        assert!(add(dir.path(), "a", &["*x".into()], "t").is_err());
        assert!(add(dir.path(), "a", &["x.y".into()], "t").is_err());
        assert!(add(dir.path(), "a", &["x*".into()], "t").is_ok());
    }
}

//! The manifest `hus-bot.toml` at the root of an uploaded bot: its `language` (a preset
//! that gives the usual build and run commands) or its `build` and `run` spelled out
//! (docs/upload.md). [`Manifest::parse`] reads it; [`Manifest::commands`] gives the two
//! commands for an unpacked tree (the C and C++ presets look for a `Makefile`, the Rust
//! preset reads the package's name in `Cargo.toml`).

use std::path::Path;

use serde::Deserialize;

/// The manifest's file name, at the archive's root.
pub const MANIFEST_NAME: &str = "hus-bot.toml";

/// The most bytes a manifest may have: it is a few lines.
pub const MAX_MANIFEST_BYTES: usize = 64 * 1024;

/// A language whose usual build and run commands a manifest can ask for by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// No build; run `python3 MAIN` (`main` defaults to `bot.py`).
    Python,
    /// `make` if there is a `Makefile`, else `cc -O2 -o bot *.c -lm`; run `./bot`.
    C,
    /// `make` if there is a `Makefile`, else `c++ -O2 -std=c++17 -o bot *.cpp`; run `./bot`.
    Cpp,
    /// `cargo build --release --offline`; run `./target/release/NAME`, NAME the package's
    /// name in `Cargo.toml` (dependencies must be vendored: docs/upload.md).
    Rust,
    /// `javac -d . *.java`; run `java -cp . MAIN` (`main` defaults to `Main`).
    Java,
    /// No build; run `node MAIN` (`main` defaults to `bot.js`).
    Javascript,
}

impl Language {
    /// The name a manifest gives it.
    pub fn name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::C => "c",
            Language::Cpp => "cpp",
            Language::Rust => "rust",
            Language::Java => "java",
            Language::Javascript => "javascript",
        }
    }
}

/// A parsed `hus-bot.toml`. Unknown keys are errors (a misspelt `biuld` must not be
/// ignored).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The preset, if any.
    pub language: Option<Language>,
    /// The file (or Java class) a preset runs, instead of its default.
    pub main: Option<String>,
    /// The build command, a shell command line run in the bot's directory (it replaces
    /// the preset's; `""` for none).
    pub build: Option<String>,
    /// The command that runs the bot, split like a league file's `command` (no shell);
    /// it replaces the preset's.
    pub run: Option<String>,
}

/// The commands of a bot, once its manifest is read with its tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Commands {
    /// A shell command line run by `sh -c` in the bot's directory; `None`: no build.
    pub build: Option<String>,
    /// The bot's command, as a league file's `command`.
    pub run: String,
}

/// Why a manifest cannot be used. Each message names the key (and, for a parse error,
/// the line) at fault.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// The archive has no manifest at its root.
    #[error("the bot has no {MANIFEST_NAME} at its root (docs/upload.md: a file with `language = \"python\"`, or `build` and `run`)")]
    Missing,
    /// Too long to be a manifest.
    #[error(
        "{MANIFEST_NAME} has {0} bytes, more than the {MAX_MANIFEST_BYTES} a manifest may have"
    )]
    TooLong(usize),
    /// Not UTF-8 text.
    #[error("{MANIFEST_NAME} is not UTF-8 text")]
    NotText,
    /// TOML that does not parse, or a key that is unknown or of the wrong type.
    #[error("{MANIFEST_NAME}, line {line}: {message}")]
    Syntax {
        /// The line (from 1), or 0 where TOML gave no place.
        line: usize,
        /// What is wrong, in TOML's words (which name the key).
        message: String,
    },
    /// Neither `language` nor `run`.
    #[error("{MANIFEST_NAME} says neither `language` nor `run`: give one (docs/upload.md)")]
    NoRun,
    /// A key given an empty value where one is needed.
    #[error("{MANIFEST_NAME}: `{0}` is empty")]
    Empty(&'static str),
    /// `main` without a preset that uses it.
    #[error("{MANIFEST_NAME}: `main` needs a `language` whose run command uses it (python, java, javascript), not {0}")]
    MainUnused(String),
    /// `main` that is not a plain relative name.
    #[error("{MANIFEST_NAME}: `main` = {0:?} must be a relative path inside the bot, without `..`, spaces or quotes")]
    BadMain(String),
    /// The run command does not split into words (an open quote).
    #[error("{MANIFEST_NAME}: `run` = {0:?} is not a command line (an unclosed quote?)")]
    BadRun(String),
    /// The Rust preset with no package name to run.
    #[error("{MANIFEST_NAME}: `language = \"rust\"` runs ./target/release/NAME, NAME the package's name in Cargo.toml, and {0}; give `run`")]
    NoRustPackage(String),
}

impl Manifest {
    /// Parses the text of a manifest and checks that it says how to run the bot.
    pub fn parse(text: &str) -> Result<Manifest, ManifestError> {
        if text.len() > MAX_MANIFEST_BYTES {
            return Err(ManifestError::TooLong(text.len()));
        }
        let manifest: Manifest = toml::from_str(text).map_err(|e| ManifestError::Syntax {
            line: e
                .span()
                .map(|span| text[..span.start.min(text.len())].matches('\n').count() + 1)
                .unwrap_or(0),
            message: e.message().trim().to_string(),
        })?;
        if manifest.language.is_none() && manifest.run.is_none() {
            return Err(ManifestError::NoRun);
        }
        if let Some(run) = &manifest.run {
            if run.trim().is_empty() {
                return Err(ManifestError::Empty("run"));
            }
            if shlex::split(run).is_none() {
                return Err(ManifestError::BadRun(run.clone()));
            }
        }
        if let Some(main) = &manifest.main {
            let uses_main = matches!(
                manifest.language,
                Some(Language::Python | Language::Java | Language::Javascript)
            );
            if !uses_main || manifest.run.is_some() {
                let what = match manifest.language {
                    Some(language) if manifest.run.is_none() => language.name().to_string(),
                    Some(_) => "a `run` of its own".to_string(),
                    None => "no language".to_string(),
                };
                return Err(ManifestError::MainUnused(what));
            }
            let plain = !main.is_empty()
                && !main.starts_with('/')
                && !main.split('/').any(|part| part == "..")
                && !main
                    .chars()
                    .any(|c| c.is_whitespace() || "'\"\\$`".contains(c));
            if !plain {
                return Err(ManifestError::BadMain(main.clone()));
            }
        }
        Ok(manifest)
    }

    /// Reads the manifest at the root of the unpacked tree `dir`.
    pub fn read(dir: &Path) -> Result<Manifest, ManifestError> {
        let bytes = read_bounded(&dir.join(MANIFEST_NAME)).map_err(|_| ManifestError::Missing)?;
        if bytes.len() > MAX_MANIFEST_BYTES {
            return Err(ManifestError::TooLong(bytes.len()));
        }
        let text = String::from_utf8(bytes).map_err(|_| ManifestError::NotText)?;
        Manifest::parse(&text)
    }

    /// The build and run commands for the unpacked tree `dir`: the preset's, each
    /// replaced by `build` or `run` where the manifest gives them.
    pub fn commands(&self, dir: &Path) -> Result<Commands, ManifestError> {
        let main = self.main.as_deref();
        let makefile = ["Makefile", "makefile", "GNUmakefile"]
            .iter()
            .any(|name| dir.join(name).is_file());
        let (build, run): (Option<String>, Option<String>) = match self.language {
            None => (None, None),
            Some(Language::Python) => (None, Some(format!("python3 {}", main.unwrap_or("bot.py")))),
            Some(Language::Javascript) => {
                (None, Some(format!("node {}", main.unwrap_or("bot.js"))))
            }
            Some(Language::Java) => (
                Some("javac -d . *.java".to_string()),
                Some(format!("java -cp . {}", main.unwrap_or("Main"))),
            ),
            Some(Language::C) => (
                Some(
                    if makefile {
                        "make"
                    } else {
                        "cc -O2 -o bot *.c -lm"
                    }
                    .to_string(),
                ),
                Some("./bot".to_string()),
            ),
            Some(Language::Cpp) => (
                Some(
                    if makefile {
                        "make"
                    } else {
                        "c++ -O2 -std=c++17 -o bot *.cpp"
                    }
                    .to_string(),
                ),
                Some("./bot".to_string()),
            ),
            Some(Language::Rust) => {
                let run = match &self.run {
                    Some(_) => None,
                    None => Some(format!("./target/release/{}", rust_package(dir)?)),
                };
                (Some("cargo build --release --offline".to_string()), run)
            }
        };
        let build = match &self.build {
            Some(given) if given.trim().is_empty() => None,
            Some(given) => Some(given.clone()),
            None => build,
        };
        let run = match (&self.run, run) {
            (Some(given), _) => given.clone(),
            (None, Some(preset)) => preset,
            (None, None) => return Err(ManifestError::NoRun),
        };
        Ok(Commands { build, run })
    }
}

/// The first [`MAX_MANIFEST_BYTES`] + 1 bytes of a file: enough to tell one too long,
/// never a whole large file read.
fn read_bounded(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_MANIFEST_BYTES as u64 + 1)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The package name in `dir/Cargo.toml`, which names the binary cargo builds.
fn rust_package(dir: &Path) -> Result<String, ManifestError> {
    #[derive(Deserialize)]
    struct CargoToml {
        package: Option<Package>,
    }
    #[derive(Deserialize)]
    struct Package {
        name: Option<String>,
    }
    let text = read_bounded(&dir.join("Cargo.toml"))
        .ok()
        .filter(|bytes| bytes.len() <= MAX_MANIFEST_BYTES)
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .ok_or_else(|| {
            ManifestError::NoRustPackage(format!(
                "there is no Cargo.toml of at most {MAX_MANIFEST_BYTES} bytes of text"
            ))
        })?;
    let parsed: CargoToml = toml::from_str(&text).map_err(|e| {
        ManifestError::NoRustPackage(format!(
            "Cargo.toml does not parse ({})",
            e.message().trim()
        ))
    })?;
    let name = parsed
        .package
        .and_then(|p| p.name)
        .ok_or_else(|| ManifestError::NoRustPackage("Cargo.toml has no package.name".into()))?;
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !plain {
        return Err(ManifestError::NoRustPackage(format!(
            "its package name {name:?} is not a plain name"
        )));
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commands(text: &str, files: &[&str]) -> Commands {
        let dir = tempfile::tempdir().unwrap();
        for (name, body) in files.iter().map(|f| f.split_once('=').unwrap_or((f, ""))) {
            std::fs::write(dir.path().join(name), body).unwrap();
        }
        Manifest::parse(text).unwrap().commands(dir.path()).unwrap()
    }

    #[test]
    fn presets_give_the_usual_commands() {
        let c = |build: Option<&str>, run: &str| Commands {
            build: build.map(str::to_string),
            run: run.to_string(),
        };
        assert_eq!(
            commands("language = \"python\"", &[]),
            c(None, "python3 bot.py")
        );
        assert_eq!(
            commands("language = \"python\"\nmain = \"src/main.py\"", &[]),
            c(None, "python3 src/main.py")
        );
        assert_eq!(
            commands("language = \"c\"", &[]),
            c(Some("cc -O2 -o bot *.c -lm"), "./bot")
        );
        assert_eq!(
            commands("language = \"c\"", &["Makefile"]),
            c(Some("make"), "./bot")
        );
        assert_eq!(
            commands("language = \"cpp\"", &[]),
            c(Some("c++ -O2 -std=c++17 -o bot *.cpp"), "./bot")
        );
        assert_eq!(
            commands(
                "language = \"rust\"",
                &["Cargo.toml=[package]\nname = \"my-bot\"\n"]
            ),
            c(
                Some("cargo build --release --offline"),
                "./target/release/my-bot"
            )
        );
        assert_eq!(
            commands("language = \"java\"", &[]),
            c(Some("javac -d . *.java"), "java -cp . Main")
        );
        assert_eq!(
            commands("language = \"javascript\"", &[]),
            c(None, "node bot.js")
        );
        assert_eq!(
            commands(
                "language = \"c\"\nbuild = \"./build.sh\"\nrun = \"./out/bot --fast\"",
                &[]
            ),
            c(Some("./build.sh"), "./out/bot --fast")
        );
        assert_eq!(commands("run = \"./bot.sh\"", &[]), c(None, "./bot.sh"));
        assert_eq!(
            commands("language = \"java\"\nbuild = \"\"", &[]),
            c(None, "java -cp . Main")
        );
    }

    #[test]
    fn parse_errors_name_the_key_and_the_line() {
        let error = |text: &str| Manifest::parse(text).unwrap_err().to_string();
        assert_eq!(
            error("language = \"python\"\nbiuld = \"make\"\n"),
            "hus-bot.toml, line 2: unknown field `biuld`, expected one of `language`, `main`, `build`, `run`"
        );
        assert_eq!(
            error("# a bot\n\nlanguage = \"go\"\n"),
            "hus-bot.toml, line 3: unknown variant `go`, expected one of `python`, `c`, `cpp`, `rust`, `java`, `javascript`"
        );
        let e = error("run = 3\n");
        assert!(
            e.starts_with("hus-bot.toml, line 1: invalid type: integer `3`, expected a string"),
            "{e}"
        );
        let e = error("language = \"python\"\nrun = \"x\n");
        assert!(e.starts_with("hus-bot.toml, line 2: "), "{e}");
        assert_eq!(
            error("build = \"make\"\n"),
            "hus-bot.toml says neither `language` nor `run`: give one (docs/upload.md)"
        );
        assert_eq!(error("run = \"  \""), "hus-bot.toml: `run` is empty");
        assert_eq!(
            error("run = \"./bot 'open\""),
            "hus-bot.toml: `run` = \"./bot 'open\" is not a command line (an unclosed quote?)"
        );
        assert_eq!(
            error("language = \"c\"\nmain = \"x.c\""),
            "hus-bot.toml: `main` needs a `language` whose run command uses it (python, java, javascript), not c"
        );
        assert_eq!(
            error("language = \"python\"\nmain = \"../x.py\""),
            "hus-bot.toml: `main` = \"../x.py\" must be a relative path inside the bot, without `..`, spaces or quotes"
        );
        assert_eq!(
            error("language = \"python\"\nmain = \"x.py; rm -rf /\""),
            "hus-bot.toml: `main` = \"x.py; rm -rf /\" must be a relative path inside the bot, without `..`, spaces or quotes"
        );
    }

    #[test]
    fn the_rust_preset_needs_a_package_name_and_a_missing_manifest_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let rust = Manifest::parse("language = \"rust\"").unwrap();
        assert_eq!(
            rust.commands(dir.path()).unwrap_err().to_string(),
            "hus-bot.toml: `language = \"rust\"` runs ./target/release/NAME, NAME the package's name in Cargo.toml, and there is no Cargo.toml of at most 65536 bytes of text; give `run`"
        );
        assert!(matches!(
            Manifest::read(dir.path()),
            Err(ManifestError::Missing)
        ));
        std::fs::write(
            dir.path().join(MANIFEST_NAME),
            vec![b'#'; MAX_MANIFEST_BYTES + 1],
        )
        .unwrap();
        assert!(matches!(
            Manifest::read(dir.path()),
            Err(ManifestError::TooLong(65537))
        ));
    }
}

use std::path::{Path, PathBuf};
use std::time::Duration;

use league::{Anchor, Format, LeagueConfig};
use referee::TimeControl;

/// A directory holding `L.toml` with `text`, and a program `bot` in it.
struct Dir {
    dir: tempfile::TempDir,
}

impl Dir {
    fn new() -> Dir {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("bot"), "#!/bin/sh\n").expect("write bot");
        std::fs::create_dir(dir.path().join("work")).expect("mkdir");
        Dir { dir }
    }

    fn path(&self) -> PathBuf {
        self.dir.path().join("L.toml")
    }

    fn parse(&self, text: &str) -> Result<LeagueConfig, String> {
        LeagueConfig::parse(&self.path(), text).map_err(|e| e.to_string())
    }

    /// The error for `text`, with the file's path replaced by `L.toml`.
    fn error(&self, text: &str) -> String {
        match self.parse(text) {
            Ok(_) => panic!("accepted:\n{text}"),
            Err(e) => e.replace(&self.path().display().to_string(), "L.toml"),
        }
    }
}

const TWO_BOTS: &str = "
[[bot]]
name = \"a\"
command = \"./bot --fast\"

[[bot]]
name = \"b\"
command = \"python3 b.py\"
";

#[test]
fn a_good_file_is_read_with_defaults() {
    let d = Dir::new();
    let c = d.parse(TWO_BOTS).expect("valid");
    assert_eq!(c.rules.preset().name(), "hus");
    assert_eq!(c.rules.width(), 8);
    assert_eq!(c.games, 7);
    assert_eq!(c.time, TimeControl::PerMove(Duration::from_secs(1)));
    assert_eq!(c.ready_time, Duration::from_secs(10));
    assert_eq!(c.format, Format::RoundRobin);
    assert_eq!(c.rounds, 1);
    assert_eq!(c.seed, None);
    assert_eq!(c.anchor, Anchor::PoolAverage(1500.0));
    assert!(c.concurrency >= 1);
    assert_eq!(c.default_dir(), d.dir.path().join("L"));
    let a = &c.bots[0];
    assert_eq!(a.name, "a");
    assert_eq!(a.command(), "./bot --fast");
    let (spec, limits) = a.process().expect("a process");
    // The program path is the file's directory's; the bot runs in that directory.
    assert_eq!(
        Path::new(&spec.argv[0]),
        d.dir.path().join("./bot").as_path()
    );
    assert_eq!(spec.argv[1], "--fast");
    assert_eq!(limits.cwd.as_deref(), Some(d.dir.path()));
    assert_eq!(
        c.bots[1].process().expect("a process").0.argv,
        ["python3", "b.py"]
    );
}

#[test]
fn every_key_is_read() {
    let d = Dir::new();
    let text = "
rules = \"rulebook\"
width = 10
games = 5
clock = \"60s+1s\"
ready_time = \"3s\"
format = \"gauntlet\"
challengers = [\"b\"]
rounds = 4
concurrency = 3
seed = 99
anchor = \"a\"
anchor_rating = 2000

[[bot]]
name = \"a\"
command = \"./bot\"
dir = \"work\"
memory = \"512M\"
cpu = \"2m\"
files = 32
clean_env = true
env = [\"PATH\", \"LEVEL=3\"]

[[bot]]
name = \"b\"
command = \"./bot\"
";
    let c = d.parse(text).expect("valid");
    assert_eq!(c.rules.preset().name(), "rulebook");
    assert_eq!(c.rules.width(), 10);
    assert_eq!(c.games, 5);
    assert_eq!(
        c.time,
        TimeControl::Clock {
            base: Duration::from_secs(60),
            increment: Duration::from_secs(1)
        }
    );
    assert_eq!(c.ready_time, Duration::from_secs(3));
    assert_eq!(
        c.format,
        Format::Gauntlet {
            challengers: vec!["b".into()]
        }
    );
    assert_eq!((c.rounds, c.concurrency, c.seed), (4, 3, Some(99)));
    assert_eq!(
        c.anchor,
        Anchor::Bot {
            name: "a".into(),
            rating: 2000.0
        }
    );
    let l = c.bots[0].process().expect("a process").1;
    assert_eq!(l.memory, Some(512 << 20));
    assert_eq!(l.cpu_seconds, Some(120));
    assert_eq!(l.open_files, Some(32));
    assert_eq!(l.cwd.as_deref(), Some(d.dir.path().join("work").as_path()));
    assert_eq!(l.env, Some(vec!["PATH".to_string(), "LEVEL=3".to_string()]));
    assert_eq!(c.bots[1].process().expect("a process").1.env, None);
    assert_eq!(c.place("seed"), format!("{} line 11", d.path().display()));
    assert_eq!(c.place("games"), format!("{} line 4", d.path().display()));
}

#[test]
fn unknown_key_is_named_with_its_line() {
    let d = Dir::new();
    assert_eq!(
        d.error(&format!("games = 3\nconcurency = 2\n{TWO_BOTS}")),
        "L.toml line 2: unknown field `concurency`, expected one of `rules`, `width`, `games`, \
         `move_time`, `clock`, `ready_time`, `format`, `challengers`, `rounds`, `concurrency`, \
         `seed`, `openings`, `anchor`, `anchor_rating`, `lag_cap`, `store`, `gate`, `bot`, `team`"
    );
    assert_eq!(
        d.error(&format!("{TWO_BOTS}colour = \"red\"\n")),
        "L.toml line 9: unknown field `colour`, expected one of `name`, `command`, `remote`, `token_sha256`, `dir`, \
         `env`, `clean_env`, `memory`, `cpu`, `files`, `sandbox`, `sandbox_writable`, \
         `sandbox_ro`, `sandbox_processes`, `sandbox_tmp`, `sandbox_memory`, `sandbox_user`"
    );
}

#[test]
fn bad_values_are_named_with_their_line() {
    let d = Dir::new();
    let cases: &[(&str, &str)] = &[
        (
            "move_time = \"fast\"",
            "L.toml line 1: move_time: \"fast\" is not a duration (try 250ms, 1.5s, 2m, or a number of milliseconds)",
        ),
        (
            "move_time = \"3 weeks\"",
            "L.toml line 1: move_time: \"3 weeks\" is not a duration: unknown unit \"weeks\" (use ms, s, m or h)",
        ),
        ("move_time = \"0ms\"", "L.toml line 1: move_time: must be more than 0"),
        (
            "clock = \"60s\"",
            "L.toml line 1: clock: \"60s\" should be BASE+INCREMENT, for example 60s+1s",
        ),
        (
            "move_time = \"1s\"\nclock = \"60s+1s\"",
            "L.toml line 2: clock: give either move_time or clock, not both",
        ),
        ("ready_time = \"\"", "L.toml line 1: ready_time: \"\" is not a duration (try 250ms, 1.5s, 2m, or a number of milliseconds)"),
        ("games = 0", "L.toml line 1: games: must be between 1 and 100000, not 0"),
        (
            "games = \"seven\"",
            "L.toml line 1: games: invalid type: string \"seven\", expected a whole number of 0 or more",
        ),
        (
            "games = -1",
            "L.toml line 1: games: invalid value: integer `-1`, expected a whole number of 0 or more",
        ),
        ("games = 3\ngames = 4", "L.toml line 2: games: duplicate key"),
        ("rounds = 0", "L.toml line 1: rounds: must be between 1 and 10000, not 0"),
        ("concurrency = 0", "L.toml line 1: concurrency: must be between 1 and 1024, not 0"),
        (
            "rules = \"chess\"",
            "L.toml line 1: rules: unknown rules preset \"chess\" (expected hus, rulebook or mancala-world)",
        ),
        ("width = 7", "L.toml line 1: width: row width 7 is out of range (expected 8 to 32)"),
        (
            "format = \"swiss\"",
            "L.toml line 1: format: \"swiss\" is not a format (use \"round-robin\" or \"gauntlet\")",
        ),
        (
            "format = \"gauntlet\"",
            "L.toml line 1: format: a gauntlet needs challengers = [\"name\", ...]",
        ),
        (
            "challengers = [\"a\"]",
            "L.toml line 1: challengers: only a gauntlet has challengers (format = \"gauntlet\")",
        ),
        (
            "format = \"gauntlet\"\nchallengers = [\"a\", \"c\"]",
            "L.toml line 2: challengers: no bot is named \"c\"",
        ),
        (
            "format = \"gauntlet\"\nchallengers = [\"a\", \"b\"]",
            "L.toml line 2: challengers: a gauntlet needs at least one challenger and one bot that is not one",
        ),
        ("anchor = \"z\"", "L.toml line 1: anchor: no bot is named \"z\""),
        (
            "openings = \"book.txt\"",
            "L.toml line 1: openings: DIR/book.txt is not a file",
        ),
    ];
    let mut failures = Vec::new();
    for (head, expected) in cases {
        let text = format!("{head}\n{TWO_BOTS}");
        let got = d
            .error(&text)
            .replace(&d.dir.path().display().to_string(), "DIR");
        if &got != expected {
            failures.push(format!(
                "for {head:?}\n  got      {got}\n  expected {expected}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn bad_bots_are_named_with_their_line() {
    let d = Dir::new();
    let cases: &[(&str, &str)] = &[
        (
            "[[bot]]\nname = \"c\"\n",
            "L.toml line 10: bot \"c\": command: missing (a bot that is not remote needs a command)",
        ),
        (
            "[[bot]]\ncommand = \"x\"\n",
            "L.toml line 10: [[bot]]: missing field `name` (every bot needs a name, and a command unless it is remote)",
        ),
        (
            "[[bot]]\nname = \"a\"\ncommand = \"x\"\n",
            "L.toml line 11: name: a bot named \"a\" is already in the league; names must be unique",
        ),
        (
            "[[bot]]\nname = \"../c\"\ncommand = \"x\"\n",
            "L.toml line 11: name: \"../c\" is not a usable bot name: use 1 to 40 letters, digits, '-' or '_'",
        ),
        (
            "[[bot]]\nname = \"c\"\ncommand = \"python3 'unclosed\"\n",
            "L.toml line 12: bot \"c\": command: bot command \"python3 'unclosed\" has unbalanced quotes",
        ),
        (
            "[[bot]]\nname = \"c\"\ncommand = \"  \"\n",
            "L.toml line 12: bot \"c\": command: bot command is empty",
        ),
        (
            "[[bot]]\nname = \"c\"\ncommand = \"./missing --x\"\n",
            "L.toml line 12: bot \"c\": command: the program DIR/./missing does not exist",
        ),
        (
            "[[bot]]\nname = \"c\"\ncommand = \"x\"\ndir = \"nowhere\"\n",
            "L.toml line 13: bot \"c\": dir: DIR/nowhere is not a directory",
        ),
        (
            "[[bot]]\nname = \"c\"\ncommand = \"x\"\nmemory = \"lots\"\n",
            "L.toml line 13: bot \"c\": memory: \"lots\" is not a size (try 512M or 2G)",
        ),
        (
            "[[bot]]\nname = \"c\"\ncommand = \"x\"\ncpu = \"1x\"\n",
            "L.toml line 13: bot \"c\": cpu: \"1x\" is not a duration: unknown unit \"x\" (use ms, s, m or h)",
        ),
        (
            "[[bot]]\nname = \"c\"\ncommand = \"x\"\nfiles = 0\n",
            "L.toml line 13: bot \"c\": files: must be at least 1",
        ),
        (
            "[[bot]]\nname = \"c\"\ncommand = \"x\"\nsandbox_writable = true\n",
            "L.toml line 11: bot \"c\": sandbox_writable: only with sandbox = true",
        ),
        (
            "[[bot]]\nname = \"c\"\ncommand = \"x\"\nsandbox = false\nsandbox_tmp = \"1M\"\n",
            "L.toml line 13: bot \"c\": sandbox_tmp: only with sandbox = true",
        ),
        (
            "[[bot]]\nname = \"c\"\ncommand = \"x\"\nsandbox_user = \"daemon\"\n",
            "L.toml line 11: bot \"c\": sandbox_user: only with sandbox = true",
        ),
        (
            "[[bot]]\nname = \"c\"\ncommand = \"x\"\ndir = \".\"\nsandbox = true\nsandbox_user = \"no-such-hus-user\"\n",
            "L.toml line 15: bot \"c\": sandbox_user: there is no user \"no-such-hus-user\" on this machine",
        ),
        (
            "[[bot]]\nname = \"c\"\ncommand = \"x\"\ndir = \".\"\nsandbox = true\nsandbox_user = \"root\"\n",
            "L.toml line 15: bot \"c\": sandbox_user: user \"root\" is root (uid 0): a sandboxed bot never runs as root; name an unprivileged user",
        ),
        (
            "[[bot]]\nname = \"c\"\nremote = true\n",
            "L.toml line 10: bot \"c\": token_sha256: missing (a remote bot needs the hash of its token: run hus token)",
        ),
        (
            "[[bot]]\nname = \"c\"\nremote = true\ntoken_sha256 = \"abc\"\n",
            "L.toml line 13: bot \"c\": token_sha256: expected the 64 hexadecimal digits of a SHA-256 (as hus token prints them), got 3 characters",
        ),
        (
            &format!("[[bot]]\nname = \"c\"\nremote = true\ntoken_sha256 = \"{}g\"\n", "0".repeat(63)),
            "L.toml line 13: bot \"c\": token_sha256: \"0g\" at character 63 is not a hexadecimal digit",
        ),
        (
            &format!("[[bot]]\nname = \"c\"\nremote = true\ncommand = \"x\"\ntoken_sha256 = \"{}\"\n", "0".repeat(64)),
            "L.toml line 13: bot \"c\": command: a remote bot has no command: it runs on its author's machine and connects with hus connect",
        ),
        (
            &format!("[[bot]]\nname = \"c\"\nremote = true\nmemory = \"1G\"\ntoken_sha256 = \"{}\"\n", "0".repeat(64)),
            "L.toml line 10: bot \"c\": memory: a remote bot runs on its author's machine; memory is only for bots the league runs",
        ),
        (
            &format!("[[bot]]\nname = \"c\"\ncommand = \"x\"\ntoken_sha256 = \"{}\"\n", "0".repeat(64)),
            "L.toml line 13: bot \"c\": token_sha256: only a remote bot (remote = true) has a token",
        ),
        (
            "[[bot]]\nname = \"c\"\ncommand = \"x\"\nenv = [\"=x\"]\n",
            "L.toml line 13: bot \"c\": env: \"=x\" is not NAME=value or NAME",
        ),
    ];
    let mut failures = Vec::new();
    for (tail, expected) in cases {
        let text = format!("{TWO_BOTS}\n{tail}");
        let got = d
            .error(&text)
            .replace(&d.dir.path().display().to_string(), "DIR");
        if &got != expected {
            failures.push(format!(
                "for {tail:?}\n  got      {got}\n  expected {expected}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(
        d.error("games = 3\n[[bot]]\nname = \"a\"\ncommand = \"x\"\n"),
        "L.toml line 2: a league needs at least two bots ([[bot]] tables), this file has 1"
    );
    assert_eq!(
        d.error("games = 3\n"),
        "L.toml: a league needs at least two bots ([[bot]] tables), this file has 0"
    );
}

#[test]
fn an_unreadable_file_is_named() {
    let err = LeagueConfig::load(Path::new("/nonexistent/L.toml")).map_err(|e| e.to_string());
    assert_eq!(
        err.err().as_deref(),
        Some("cannot read the league file /nonexistent/L.toml: No such file or directory (os error 2)")
    );
}

#[test]
fn a_remote_bot_has_a_token_hash_and_no_process() {
    let d = Dir::new();
    let hash = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    let text = format!(
        "lag_cap = \"250ms\"\n{TWO_BOTS}\n[[bot]]\nname = \"far\"\nremote = true\ntoken_sha256 = \"{}\"\n",
        hash.to_uppercase()
    );
    let c = d.parse(&text).expect("valid");
    assert_eq!(c.lag_cap, Duration::from_millis(250));
    let far = c.bot("far").expect("far");
    assert!(far.is_remote());
    assert_eq!(far.command(), "remote far");
    assert!(far.process().is_none());
    assert_eq!(
        league::parse_sha256(hash),
        Ok(far.token_sha256().expect("hash"))
    );
    assert!(!c.bot("a").expect("a").is_remote());
    assert_eq!(
        d.parse(TWO_BOTS).expect("valid").lag_cap,
        Duration::from_millis(100)
    );
    assert_eq!(
        d.error(&format!("lag_cap = \"6s\"\n{TWO_BOTS}")),
        "L.toml line 1: lag_cap: at most 5000 ms, not 6000 ms"
    );
}

/// `store` names the league's PostgreSQL store; anything but a postgres:// URL is
/// refused with the key and its line, and the message never repeats the value (it may
/// hold a password).
#[test]
fn the_store_key_takes_a_postgres_url_and_never_echoes_it() {
    let d = Dir::new();
    let c = d.parse(TWO_BOTS).expect("valid");
    assert_eq!(c.store, None);
    let url = "postgres://hus:s3cret@db.example:5432/league1";
    let c = d
        .parse(&format!("games = 3\nstore = \"{url}\"\n{TWO_BOTS}"))
        .expect("valid");
    assert_eq!(c.store.as_deref(), Some(url));
    assert_eq!(c.place("store"), format!("{} line 2", d.path().display()));
    assert_eq!(
        d.error(&format!("store = \"mysql://hus:s3cret@db/x\"\n{TWO_BOTS}")),
        "L.toml line 1: store: must be a PostgreSQL URL (postgres://USER:PASSWORD@HOST:PORT/DB); \
         without the key, the league is kept in its directory's SQLite file"
    );
    let bad_port = d.error(&format!(
        "store = \"postgres://hus:s3cret@db:port/x\"\n{TWO_BOTS}"
    ));
    assert!(
        bad_port.starts_with("L.toml line 1: store: not a valid PostgreSQL URL"),
        "{bad_port}"
    );
    assert!(!bad_port.contains("s3cret"), "{bad_port}");
    assert_eq!(
        d.error(&format!("store = 5\n{TWO_BOTS}")),
        "L.toml line 1: store: invalid type: integer `5`, expected a string"
    );
}

/// `gate` takes an SPRT in `hus match --sprt`'s terms (its parser), items separated by
/// spaces or commas, and the most games; every bad value is an error naming the key
/// and its line.
#[test]
fn the_gate_key_is_an_sprt_and_its_bound_of_games() {
    let d = Dir::new();
    assert!(d.parse(TWO_BOTS).expect("valid").gate.is_none());
    let c = d
        .parse(&format!(
            "games = 3\ngate = \"sprt elo0=0 elo1=10\"\n{TWO_BOTS}"
        ))
        .expect("valid");
    let gate = c.gate.expect("a gate");
    assert_eq!(
        (
            gate.sprt.elo0(),
            gate.sprt.elo1(),
            gate.sprt.alpha(),
            gate.sprt.beta(),
            gate.games,
            gate.batch
        ),
        (
            0.0,
            10.0,
            0.05,
            0.05,
            league::DEFAULT_GATE_GAMES,
            league::DEFAULT_GATE_BATCH
        )
    );
    assert_eq!(league::DEFAULT_GATE_BATCH, 4);
    assert_eq!(c.place("gate"), format!("{} line 2", d.path().display()));
    let gate = league::parse_gate("sprt elo1=5, elo0=-5 alpha=0.1,beta=0.2 games=400 batch=16")
        .expect("valid");
    assert_eq!(
        (
            gate.sprt.elo0(),
            gate.sprt.elo1(),
            gate.sprt.alpha(),
            gate.sprt.beta(),
            gate.games,
            gate.batch
        ),
        (-5.0, 5.0, 0.1, 0.2, 400, 16)
    );
    for (value, message) in [
        (
            "elo0=0 elo1=10",
            "L.toml line 1: gate: \"elo0=0 elo1=10\" is not a gate: the one kind is an SPRT, e.g. \"sprt elo0=0 elo1=10\"",
        ),
        (
            "sprt",
            "L.toml line 1: gate: give the test's elo0 and elo1, e.g. \"sprt elo0=0 elo1=10\"",
        ),
        (
            "sprt elo0=0 elo1=ten",
            "L.toml line 1: gate: elo1=ten: \"ten\" is not a number",
        ),
        (
            "sprt elo0=0 elo2=10",
            "L.toml line 1: gate: unknown key \"elo2\" (the keys are elo0, elo1, alpha and beta)",
        ),
        (
            "sprt elo1=10",
            "L.toml line 1: gate: elo0 is missing (e.g. elo0=0,elo1=5)",
        ),
        (
            "sprt elo0=0 elo1=10 games=301",
            "L.toml line 1: gate: games=301: the most games must be even (games go in pairs), between 2 and 100000",
        ),
        (
            "sprt elo0=0 elo1=10 games=many",
            "L.toml line 1: gate: games=many: \"many\" is not a number of games",
        ),
        (
            "sprt elo0=0 elo1=10 games=2 games=4",
            "L.toml line 1: gate: games is given twice",
        ),
        (
            "sprt elo0=0 elo1=10 batch=0",
            "L.toml line 1: gate: batch=0: the game pairs of a batch must be between 1 and 1000",
        ),
        (
            "sprt elo0=0 elo1=10 batch=1001",
            "L.toml line 1: gate: batch=1001: the game pairs of a batch must be between 1 and 1000",
        ),
        (
            "sprt elo0=0 elo1=10 batch=four",
            "L.toml line 1: gate: batch=four: \"four\" is not a number of game pairs",
        ),
        (
            "sprt elo0=0 elo1=10 batch=2 batch=4",
            "L.toml line 1: gate: batch is given twice",
        ),
    ] {
        assert_eq!(
            d.error(&format!("gate = \"{value}\"\n{TWO_BOTS}")),
            message,
            "{value}"
        );
    }
    assert!(d
        .error(&format!("gate = \"sprt elo0=10 elo1=0\"\n{TWO_BOTS}"))
        .starts_with("L.toml line 1: gate: "));
}

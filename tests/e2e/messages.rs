//! What `hus` says when it cannot do what it was asked (issue 22): a port in use names
//! the option that moves it; every command that takes `--store` reads `HUS_STORE`;
//! `hus standings DIR` reads its directory even when the variable is set; `hus workers`
//! takes only the formats it documents. Each message is checked whole.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};

use crate::common::*;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `hus ARGS` with `HUS_STORE` set to `store`, or unset.
fn hus_with_store(args: &[&str], store: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hus"));
    cmd.args(args).env_remove("HUS_STORE");
    if let Some(url) = store {
        cmd.env("HUS_STORE", url);
    }
    cmd.output().expect("hus runs")
}

/// A league file of two built-in random movers, with a seed (so nothing is said of a
/// generated one).
fn league_file(dir: &Path) -> String {
    let path = dir.join("L.toml");
    std::fs::write(
        &path,
        format!(
            // With a book: `hus serve` warns of a league without one, and these tests
            // read its stderr whole.
            "games = 2\nmove_time = \"5s\"\nseed = 1\nopenings = \"{}\"\n\n[[bot]]\nname = \
             \"a\"\ncommand = \"{}\"\n\n[[bot]]\nname = \"b\"\ncommand = \"{}\"\n",
            root().join("openings/hus-8.txt").display(),
            hus_random(1).replace('\'', ""),
            hus_random(2).replace('\'', "")
        ),
    )
    .expect("write the league file");
    path.display().to_string()
}

/// The line a port in use gives, for the option that set it.
fn in_use(addr: &str, option: &str) -> String {
    format!(
        "error: cannot listen on {addr} ({option}): the address is in use; stop what holds it \
         or choose another with {option}"
    )
}

#[test]
fn a_port_in_use_names_the_option_that_moves_it() {
    let tmp = LogDir::new();
    let file = league_file(tmp.path());
    let taken = TcpListener::bind("127.0.0.1:0").expect("a port");
    let addr = taken.local_addr().expect("its address").to_string();

    // hus serve's web port.
    let dir = tmp.path().join("web").display().to_string();
    let out = hus(&["serve", &file, "--dir", &dir, "--quiet", "--listen", &addr]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        format!("{}\n", in_use(&addr, "--listen"))
    );

    // Its bot port: the dashboard opened first, on a free port.
    let dir = tmp.path().join("bots").display().to_string();
    let out = hus(&[
        "serve",
        &file,
        "--dir",
        &dir,
        "--quiet",
        "--listen",
        "127.0.0.1:0",
        "--bot-listen",
        &addr,
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(
        lines[0].starts_with("hus serve: dashboard on http://127.0.0.1:"),
        "{stderr}"
    );
    assert_eq!(lines[1], in_use(&addr, "--bot-listen"));

    // hus play --web's page.
    let logs = tmp.path().join("play").display().to_string();
    let out = hus(&[
        "play",
        "--web",
        "--listen",
        &addr,
        "--log-dir",
        &logs,
        &hus_random(3),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        format!("{}\n", in_use(&addr, "--listen"))
    );
}

/// A store URL that every command refuses before connecting, in its own words, so
/// that the message shows the command read it.
const UNUSABLE_STORE: &str =
    "postgres://hus@127.0.0.1:9/league?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem";

#[test]
fn every_command_that_takes_store_reads_hus_store() {
    let tmp = LogDir::new();
    let file = league_file(tmp.path());
    let dir = tmp.path().join("league").display().to_string();
    let refused = "error: the league store URL: sslrootcert=/nonexistent/ca.pem: cannot read \
                   it: No such file or directory (os error 2)\n";
    let commands: [&[&str]; 6] = [
        &["league", &file, "--dir", &dir, "--quiet"],
        &["standings"],
        &["serve", &file, "--dir", &dir, "--quiet"],
        &["worker", "--quiet"],
        &["workers"],
        &["export"],
    ];
    for args in commands {
        let out = hus_with_store(args, Some(UNUSABLE_STORE));
        assert_eq!(
            (out.status.code(), text(&out.stderr)),
            (Some(2), refused.to_string()),
            "hus {args:?}"
        );
    }
    // Without the variable, the commands that need a store say so (clap's words).
    for command in ["worker", "workers", "export"] {
        let out = hus_with_store(&[command], None);
        assert_eq!(out.status.code(), Some(2), "hus {command}");
        assert_eq!(
            text(&out.stderr),
            format!(
                "error: the following required arguments were not provided:\n  --store \
                 <URL>\n\nUsage: hus {command} --store <URL>\n\nFor more information, try \
                 '--help'.\n"
            )
        );
    }
}

#[test]
fn standings_reads_the_directory_given_even_with_hus_store_set() {
    let tmp = LogDir::new();
    let file = league_file(tmp.path());
    let dir = tmp.path().join("league").display().to_string();
    let out = hus_with_store(&["league", &file, "--dir", &dir, "--quiet"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let alone = hus_with_store(&["standings", &dir, "--format", "json"], None);
    assert_eq!(alone.status.code(), Some(0), "{}", text(&alone.stderr));
    let with_variable = hus_with_store(
        &["standings", &dir, "--format", "json"],
        Some(UNUSABLE_STORE),
    );
    assert_eq!(
        with_variable.status.code(),
        Some(0),
        "{}",
        text(&with_variable.stderr)
    );
    assert_eq!(text(&with_variable.stdout), text(&alone.stdout));
    // The directory and --store on the command line: which one is meant?
    let both = hus_with_store(&["standings", &dir, "--store", UNUSABLE_STORE], None);
    assert_eq!(both.status.code(), Some(2));
    assert_eq!(
        text(&both.stderr),
        "error: hus standings takes the league's directory (DIR) or --store URL, not both\n"
    );
}

#[test]
fn workers_takes_only_the_formats_it_documents() {
    for format in ["csv", "markdown"] {
        let out = hus_with_store(
            &["workers", "--store", UNUSABLE_STORE, "--format", format],
            None,
        );
        assert_eq!(out.status.code(), Some(2), "{format}");
        assert_eq!(
            text(&out.stderr),
            format!(
                "error: invalid value '{format}' for '--format <FORMAT>'\n  [possible values: \
                 text, json]\n\nFor more information, try '--help'.\n"
            )
        );
        assert_eq!(text(&out.stdout), "");
    }
}

/// No error type of the workspace says its cause twice: a `thiserror` message that
/// formats a field (`{source}`, `{0}`) while that field is also the error's source
/// (`#[source]`, `#[from]`, or a field named `source`) would have `hus`, which prints
/// an error with its chain, say the cause again. (Found: a set that could not start
/// printed its cause twice.)
#[test]
fn no_error_type_formats_its_source_in_its_message() {
    let mut found = Vec::new();
    let mut dirs: Vec<std::path::PathBuf> = std::fs::read_dir(root())
        .expect("the workspace")
        .flatten()
        .map(|e| e.path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir)
            .expect("a source directory")
            .flatten()
        {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let source = std::fs::read_to_string(&path).expect("a source file");
            // The message of the variant being read, from its `#[error(` to `)]`.
            let mut message = String::new();
            let mut in_attribute = false;
            for (i, line) in source.lines().enumerate() {
                let t = line.trim();
                if t.starts_with("#[error(") {
                    message.clear();
                    in_attribute = true;
                }
                if in_attribute {
                    message.push_str(t);
                    in_attribute = !t.ends_with(")]");
                    continue;
                }
                let is_source = t.contains("#[source]")
                    || t.contains("#[from]")
                    || t.starts_with("source:")
                    || t.starts_with("pub source:");
                if is_source && (message.contains("{source") || message.contains("{0")) {
                    found.push(format!("{}:{}: {message}", path.display(), i + 1));
                }
            }
        }
    }
    assert_eq!(found, Vec::<String>::new());
}

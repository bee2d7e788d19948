//! Bots by upload (docs/upload.md), end to end: an organiser makes authors' tokens
//! (`hus token --author`), authors send their bots' directories (`hus submit`) to a
//! running `hus serve`, which builds each version in the sandbox, checks it with a
//! validation set against the random mover, and plays it in the league as `NAME.vN`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{hus_bin, league_file, request, Server};
use crate::common::*;

/// A C bot that plays the first legal pit, built by its Makefile.
const C_BOT: &str = r#"#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static char line[1 << 17];
int main(void) {
    while (fgets(line, sizeof line, stdin)) {
        if (strstr(line, "\"type\":\"hello\"")) {
            printf("{\"type\":\"ready\",\"name\":\"c-first\"}\n");
        } else if (strstr(line, "\"type\":\"turn\"")) {
            char *legal = strstr(line, "\"legal\":[");
            printf("{\"type\":\"move\",\"pit\":%d}\n", legal ? atoi(legal + 9) : 0);
        } else if (strstr(line, "\"type\":\"bye\"")) {
            break;
        }
        fflush(stdout);
    }
    return 0;
}
"#;

/// The same bot in Rust, with no dependencies.
const RUST_BOT: &str = r#"use std::io::{BufRead, Write};
fn main() {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout();
    for line in stdin.lock().lines().map_while(Result::ok) {
        if line.contains("\"type\":\"hello\"") {
            let _ = writeln!(out, "{{\"type\":\"ready\",\"name\":\"rust-first\"}}");
        } else if line.contains("\"type\":\"turn\"") {
            let pit: String = line
                .split("\"legal\":[")
                .nth(1)
                .unwrap_or("0")
                .chars()
                .take_while(|c| c.is_ascii_digit())
                .collect();
            let _ = writeln!(out, "{{\"type\":\"move\",\"pit\":{pit}}}");
        } else if line.contains("\"type\":\"bye\"") {
            break;
        }
        let _ = out.flush();
    }
}
"#;

/// A directory the sandbox's user can pass through (tempdir makes them 0700).
fn open_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    dir
}

/// Writes a bot's directory: `files` as (path, text).
fn bot_dir(parent: &Path, name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = parent.join(name);
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
    }
    dir
}

/// `hus token --author NAME --bots PATTERNS --league FILE --dir DIR`: the token.
fn author_token(file: &Path, dir: &Path, name: &str, bots: &str) -> String {
    let out = hus(&[
        "token",
        "--author",
        name,
        "--bots",
        bots,
        "--league",
        &file.display().to_string(),
        "--dir",
        &dir.display().to_string(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .expect("the token")
        .trim()
        .to_string()
}

/// `hus submit` with the token in the environment.
fn submit(server: &Server, dir: &Path, bot: &str, token: &str) -> Output {
    hus_env(
        &[
            "submit",
            &format!("http://{}", server.addr),
            &dir.display().to_string(),
            "--bot",
            bot,
        ],
        &[("HUS_AUTHOR_TOKEN", token.to_string())],
    )
}

fn said(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The states of `bot`'s versions, by number.
fn version_states(server: &Server, bot: &str) -> Vec<String> {
    server.json(&format!("/api/bots/{bot}/versions"))["versions"]
        .as_array()
        .expect("versions")
        .iter()
        .map(|v| v["state"].as_str().unwrap_or("").to_string())
        .collect()
}

/// Waits until `name` has played one set more than it had (bounded).
fn wait_for_one_more_set(server: &Server, name: &str) {
    let before = wait_for_sets(server, name, 0)["sets"]["played"]
        .as_u64()
        .unwrap_or(0);
    wait_for_sets(server, name, before + 1);
}

/// Waits until the standings give `name` at least `sets` sets (bounded).
fn wait_for_sets(server: &Server, name: &str, sets: u64) -> Value {
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let standings = server.json("/api/standings");
        let row = standings["bots"]
            .as_array()
            .and_then(|b| b.iter().find(|b| b["name"] == name))
            .cloned();
        if let Some(row) = row {
            if row["sets"]["played"].as_u64().unwrap_or(0) >= sets {
                return row;
            }
        }
        assert!(
            Instant::now() < deadline,
            "{name} did not play {sets} sets: {standings}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

const HEAD: &str = "rules = \"hus\"\nwidth = 8\ngames = 2\nmove_time = \"10s\"\nready_time = \"30s\"\nseed = 7\nconcurrency = 2";

/// A league of two random movers, served; its directory is open to the sandbox's
/// user.
fn league(tmp: &tempfile::TempDir, extra: &[&str]) -> (Server, PathBuf, PathBuf) {
    let file = league_file(
        tmp.path(),
        HEAD,
        &[
            ("ann", format!("{} random-bot --seed 1", hus_bin())),
            ("bob", format!("{} random-bot --seed 2", hus_bin())),
        ],
    );
    let dir = tmp.path().join("league");
    let mut args = vec!["--quiet"];
    args.extend_from_slice(extra);
    let server = Server::start(&file, &dir, &args);
    (server, file, dir)
}

/// Whether `program` is where the sandbox's user finds it (under /usr, not a
/// toolchain in root's home).
fn visible(program: &str) -> bool {
    ["/usr/bin", "/bin", "/usr/local/bin"]
        .iter()
        .any(|d| Path::new(d).join(program).exists())
}

#[test]
fn uploads_in_every_language_build_pass_their_checks_and_play_rated_sets() {
    let tmp = open_dir();
    let (server, file, dir) = league(&tmp, &[]);
    let token = author_token(&file, &dir, "ada", "ada-*");
    let bots = tmp.path().join("bots");
    let mut entries: Vec<(&str, PathBuf)> = vec![
        ("ada-python", python_upload(&bots, "py", "greedy_bot.py")),
        (
            "ada-c",
            bot_dir(
                &bots,
                "c",
                &[
                    ("hus-bot.toml", "language = \"c\"\n"),
                    ("Makefile", "bot: bot.c\n\tcc -O2 -o bot bot.c\n"),
                    ("bot.c", C_BOT),
                ],
            ),
        ),
        (
            "ada-js",
            bot_dir(
                &bots,
                "js",
                &[
                    (
                        "hus-bot.toml",
                        "language = \"javascript\"\nmain = \"random_bot.js\"\n",
                    ),
                    (
                        "random_bot.js",
                        &std::fs::read_to_string(root().join("sample-bots/js/random_bot.js"))
                            .expect("js bot"),
                    ),
                ],
            ),
        ),
        (
            "ada-java",
            bot_dir(
                &bots,
                "java",
                &[
                    (
                        "hus-bot.toml",
                        "language = \"java\"\nmain = \"RandomBot\"\n",
                    ),
                    (
                        "RandomBot.java",
                        &std::fs::read_to_string(root().join("sample-bots/java/RandomBot.java"))
                            .expect("java bot"),
                    ),
                ],
            ),
        ),
    ];
    if visible("cargo") {
        entries.push((
            "ada-rust",
            bot_dir(
                &bots,
                "rust",
                &[
                    ("hus-bot.toml", "language = \"rust\"\n"),
                    (
                        "Cargo.toml",
                        "[package]\nname = \"first\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
                    ),
                    (
                        "Cargo.lock",
                        "version = 3\n\n[[package]]\nname = \"first\"\nversion = \"0.1.0\"\n",
                    ),
                    ("src/main.rs", RUST_BOT),
                    (".gitignore", "target/\n"),
                ],
            ),
        ));
    } else {
        eprintln!(
            "no cargo under /usr: the Rust upload is not tried (tests/setup.sh installs Debian's)"
        );
    }
    for (name, path) in &entries {
        let out = submit(&server, path, name, &token);
        assert!(
            out.status.success(),
            "{name}: {}\n{}",
            said(&out),
            server.json(&format!("/api/bots/{name}/versions/1"))
        );
        assert!(
            said(&out).contains(&format!("{name} version 1: active")),
            "{}",
            said(&out)
        );
    }
    for (name, _) in &entries {
        let row = wait_for_sets(&server, &format!("{name}.v1"), 1);
        assert!(row["rating"].is_object(), "{row}");
        let version = server.json(&format!("/api/bots/{name}/versions/1"));
        assert_eq!(version["state"], "active", "{version}");
        // A league set's log names the version and the hash it played.
        let sets = server.json(&format!("/api/sets?bot={name}.v1&limit=1"));
        let stem = sets["sets"][0]["set"].as_str().expect("a set").to_string();
        let (status, log) = server.get(&format!("/api/sets/{stem}/log"));
        assert_eq!(status, 200, "{log}");
        let header: Value = serde_json::from_str(log.lines().next().unwrap_or("")).expect("header");
        let seat_a = stem.split_once("-vs-").map(|(a, _)| a).unwrap_or("");
        let side = usize::from(!seat_a.ends_with(&format!("-{name}.v1")));
        let named = &header["bots"][side]["version"];
        assert_eq!(
            (
                named["bot"].as_str(),
                named["number"].as_u64(),
                named["sha256"].as_str()
            ),
            (Some(*name), Some(1), version["sha256"].as_str()),
            "{stem}: {header}"
        );
        assert_eq!(version["author"], "ada");
        assert_eq!(version["sha256"].as_str().map(str::len), Some(64));
        // The pages answer: the versions, the version, its bot page.
        for page in [
            format!("/bots/{name}/versions"),
            format!("/bots/{name}/versions/1"),
            format!("/bots/{name}.v1"),
        ] {
            let (status, body) = server.get(&page);
            assert_eq!(status, 200, "{page}: {body}");
        }
    }
    drop(server);
    // Every log, the validation sets' too, passes hus replay.
    assert!(replay_all(&dir.join("logs"), &[0]).expect("league logs replay") > 0);
    assert_eq!(
        replay_all(&dir.join("uploads/validation"), &[0]).expect("validation logs replay"),
        entries.len()
    );
}

#[test]
fn a_second_version_replaces_the_first_whose_results_stay_and_refused_versions_say_why() {
    let tmp = open_dir();
    let (server, file, dir) = league(&tmp, &["--prune-every", "1s"]);
    let token = author_token(&file, &dir, "bea", "bea");
    let bots = tmp.path().join("bots");
    let v1 = python_upload(&bots, "v1", "greedy_bot.py");
    assert!(submit(&server, &v1, "bea", &token).status.success());
    let first = wait_for_sets(&server, "bea.v1", 2);
    let v2 = python_upload(&bots, "v2", "random_bot.py");
    let out = submit(&server, &v2, "bea", &token);
    assert!(out.status.success(), "{}", said(&out));
    wait_for_sets(&server, "bea.v2", 1);
    let list = server.json("/api/bots/bea/versions");
    let states: Vec<(u64, String)> = list["versions"]
        .as_array()
        .expect("versions")
        .iter()
        .map(|v| {
            (
                v["version"].as_u64().unwrap_or(0),
                v["state"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert_eq!(states, vec![(1, "retired".into()), (2, "active".into())]);
    // The first version's built tree goes once its last sets have ended (at the
    // second look that finds it unneeded, a second apart here); the second's stays.
    let hash_of = |n: u32| {
        server.json(&format!("/api/bots/bea/versions/{n}"))["sha256"]
            .as_str()
            .expect("hash")
            .to_string()
    };
    let (h1, h2) = (hash_of(1), hash_of(2));
    // Its note and its directory (named from the hash).
    let of_hash = |h: &str| {
        std::fs::read_dir(dir.join("uploads"))
            .expect("uploads")
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(&h[..16]))
            .count()
    };
    let deadline = Instant::now() + Duration::from_secs(180);
    while of_hash(&h1) > 0 {
        assert!(Instant::now() < deadline, "bea.v1's build stays");
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(dir.join(format!("uploads/{h2}.built")).exists());
    assert_eq!(of_hash(&h2), 2, "bea.v2's note and directory");
    // The first version's results stay in the standings, and it plays no more.
    let standings = server.json("/api/standings");
    let old = standings["bots"]
        .as_array()
        .and_then(|b| b.iter().find(|b| b["name"] == "bea.v1"))
        .cloned()
        .expect("bea.v1 stays in the standings");
    assert!(old["sets"]["played"].as_u64() >= first["sets"]["played"].as_u64());
    assert_eq!(old["active"], false, "{old}");
    // The standings page says which version plays and which is retired.
    let (status, page) = server.get("/");
    assert_eq!(status, 200);
    assert!(
        page.contains(">bea.v1</a> (retired) <a class=\"versions\" href=\"/bots/bea/versions\">")
            && !page.contains(">bea.v2</a> (retired)"),
        "{page}"
    );

    // A version that faults in its validation set: rejected, with the fault.
    let faulty = bot_dir(
        &bots,
        "faulty",
        &[
            (
                "hus-bot.toml",
                "run = \"python3 misbehave.py pit-out-of-range\"\n",
            ),
            (
                "misbehave.py",
                &std::fs::read_to_string(root().join("tests/bots/misbehave.py")).expect("bot"),
            ),
        ],
    );
    let out = submit(&server, &faulty, "bea", &token);
    assert_eq!(out.status.code(), Some(1), "{}", said(&out));
    let v3 = server.json("/api/bots/bea/versions/3");
    assert_eq!(v3["state"], "rejected", "{v3}");
    let detail = v3["detail"].as_str().unwrap_or("");
    assert!(
        detail.contains("validation set against the random mover")
            && detail.contains("illegal-move"),
        "{detail}"
    );
    assert!(
        said(&out).contains(detail.lines().next().unwrap_or("-")),
        "{}",
        said(&out)
    );
    // Its built tree is gone; its validation log stays, and replays.
    let hash = v3["sha256"].as_str().expect("hash");
    assert!(!dir.join(format!("uploads/{hash}.built")).exists());
    let left: Vec<String> = std::fs::read_dir(dir.join("uploads"))
        .expect("uploads")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&hash[..16]))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(
        replay_all(&dir.join("uploads/validation/bea.v3"), &[0]).expect("replays"),
        1
    );

    // A version whose build fails: its output says why, and v2 still plays.
    let broken = bot_dir(
        &bots,
        "broken",
        &[
            ("hus-bot.toml", "language = \"c\"\n"),
            ("bot.c", "int main(void) { return missing_thing; }\n"),
        ],
    );
    let out = submit(&server, &broken, "bea", &token);
    assert_eq!(out.status.code(), Some(1), "{}", said(&out));
    let v4 = server.json("/api/bots/bea/versions/4");
    assert_eq!(v4["state"], "build failed", "{v4}");
    assert!(
        v4["output"]
            .as_str()
            .unwrap_or("")
            .contains("missing_thing"),
        "{v4}"
    );
    assert!(said(&out).contains("missing_thing"), "{}", said(&out));
    let active: Vec<String> = server.json("/api/standings")["bots"]
        .as_array()
        .expect("bots")
        .iter()
        .filter(|b| b["active"] == true)
        .filter_map(|b| b["name"].as_str().map(str::to_string))
        .collect();
    assert!(
        active.contains(&"bea.v2".to_string())
            && !active.iter().any(|n| n != "bea.v2" && n.starts_with("bea")),
        "{active:?}"
    );

    // The first version made active again by its author.
    let (status, _, body) = request(
        server.addr,
        "POST",
        "/api/bots/bea/versions/1/activate",
        &[("Authorization", &format!("Bearer {token}"))],
        b"",
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        version_states(&server, "bea"),
        ["active", "retired", "rejected", "build failed"]
    );
    wait_for_one_more_set(&server, "bea.v1");

    // Stopped and started again: the versions are as they were, and the active one
    // plays on (built again from its archive when its tree is gone).
    let (code, _) = server.stop();
    assert_eq!(code, 0);
    let trees: Vec<PathBuf> = std::fs::read_dir(dir.join("uploads"))
        .expect("uploads")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir() && !p.ends_with("validation"))
        .collect();
    for tree in trees {
        std::fs::remove_dir_all(tree).expect("remove a built version");
    }
    let server = Server::start(&file, &dir, &["--quiet"]);
    assert_eq!(
        version_states(&server, "bea"),
        ["active", "retired", "rejected", "build failed"]
    );
    wait_for_one_more_set(&server, "bea.v1");
    let standings = server.json("/api/standings");
    let active: Vec<&str> = standings["bots"]
        .as_array()
        .expect("bots")
        .iter()
        .filter(|b| b["active"] == true)
        .filter_map(|b| b["name"].as_str())
        .filter(|n| n.starts_with("bea"))
        .collect();
    assert_eq!(active, ["bea.v1"], "{standings}");
}

#[test]
fn uploads_refuse_wrong_tokens_other_names_hostile_archives_and_more_than_the_daily_limit() {
    let tmp = open_dir();
    let (server, file, dir) = league(&tmp, &["--uploads-per-day", "2"]);
    let cleo = author_token(&file, &dir, "cleo", "cleo-*");
    let dan = author_token(&file, &dir, "dan", "dan");
    let bots = tmp.path().join("bots");
    let bot = python_upload(&bots, "py", "random_bot.py");
    let post = |path: &str, token: &str, body: &[u8]| {
        request(
            server.addr,
            "POST",
            path,
            &[
                ("Authorization", &format!("Bearer {token}")),
                ("Content-Type", "application/zstd"),
            ],
            body,
        )
    };
    let packed = pack(&bot);

    // A wrong token, another author's name, the league file's bot, a bad name.
    let out = submit(&server, &bot, "cleo-x", "not-a-token");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        said(&out).contains("401") && said(&out).contains("no author's"),
        "{}",
        said(&out)
    );
    let (status, _, body) = post("/api/bots/cleo-x/versions", &dan, &packed);
    assert_eq!(status, 403, "{body}");
    assert!(
        body.contains("author dan may not submit \\\"cleo-x\\\": only dan"),
        "{body}"
    );
    let (status, _, body) = post("/api/bots/ann/versions", &cleo, &packed);
    assert_eq!(status, 409, "{body}");
    let (status, _, body) = post("/api/bots/cleo.v1/versions", &cleo, &packed);
    assert_eq!(status, 400, "{body}");
    let (status, _, _) = request(
        server.addr,
        "POST",
        "/api/bots/cleo-x/versions",
        &[],
        &packed,
    );
    assert_eq!(status, 401);

    // Hostile archives: refused with their cause, nothing kept.
    let (status, _, body) = post(
        "/api/bots/cleo-x/versions",
        &cleo,
        &tar_zst(&[("../escape", b"x")]),
    );
    assert_eq!(status, 422, "{body}");
    assert!(body.contains("a path with `..`"), "{body}");
    let (status, _, body) = post("/api/bots/cleo-x/versions", &cleo, b"not an archive");
    assert_eq!(status, 422, "{body}");
    let big = vec![7u8; (16 << 20) + 10];
    let (status, _, body) = post("/api/bots/cleo-x/versions", &cleo, &big);
    assert_eq!(status, 413, "{body}");
    let (status, _, body) = request(server.addr, "GET", "/api/bots/cleo-x/versions", &[], b"");
    assert_eq!(status, 404, "nothing was kept: {body}");

    // Two a day: the third is 429, with when to come back.
    assert!(submit(&server, &bot, "cleo-x", &cleo).status.success());
    let second = python_upload(&bots, "py2", "greedy_bot.py");
    assert!(submit(&server, &second, "cleo-x", &cleo).status.success());
    let (status, head, body) = post("/api/bots/cleo-x/versions", &cleo, &packed);
    assert_eq!(status, 429, "{body}");
    assert!(
        body.contains("has sent 2 versions in the last 24 hours"),
        "{body}"
    );
    let retry: u64 = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("retry-after: ")
                .map(str::to_string)
        })
        .and_then(|v| v.trim().parse().ok())
        .expect("Retry-After");
    assert!((86_000..=86_400).contains(&retry), "{retry}");
    // dan's own count is his.
    let dans = python_upload(&bots, "dan", "random_bot.py");
    assert!(submit(&server, &dans, "dan", &dan).status.success());
    // The server played on throughout.
    wait_for_sets(&server, "dan.v1", 1);
}

/// A directory's archive as `hus submit` sends it.
fn pack(dir: &Path) -> Vec<u8> {
    upload::pack(dir, &upload::Bounds::default())
        .expect("pack")
        .bytes
}

/// A zstd tar of `entries` written as they are, with no checks (a hostile archive).
fn tar_zst(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut tar = tar::Builder::new(Vec::new());
    for (path, data) in entries {
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_entry_type(tar::EntryType::Regular);
        // Written raw: `set_path` refuses `..`, as a careful writer would.
        let name = path.as_bytes();
        header.as_old_mut().name[..name.len()].copy_from_slice(name);
        header.set_cksum();
        tar.append(&header, *data).expect("append");
    }
    let tar = tar.into_inner().expect("tar");
    zstd::encode_all(&tar[..], 3).expect("zstd")
}

/// The sum of the sets the league's two organiser's bots have played.
fn sets_of_ann_and_bob(server: &Server) -> u64 {
    server.json("/api/standings")["bots"]
        .as_array()
        .expect("bots")
        .iter()
        .filter(|b| b["name"] == "ann" || b["name"] == "bob")
        .map(|b| b["sets"]["played"].as_u64().unwrap_or(0))
        .sum()
}

#[test]
fn hostile_builds_are_stopped_at_their_bounds_with_their_cause_shown_while_the_league_plays_on() {
    let tmp = open_dir();
    let (server, file, dir) = league(
        &tmp,
        &[
            "--build-time",
            "8s",
            "--builds",
            "1",
            "--uploads-per-day",
            "9",
        ],
    );
    let token = author_token(&file, &dir, "eve", "eve-*");
    let bots = tmp.path().join("bots");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listener");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("address").port();
    let network = format!(
        "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5)\""
    );
    let root = nix::unistd::geteuid().is_root();
    wait_for_sets(&server, "ann", 1);
    let before = sets_of_ann_and_bob(&server);
    let started = Instant::now();
    let hostile: [(&str, &str); 4] = [
        (
            "eve-bomb",
            "bomb() { bomb | bomb & }; bomb; sleep 5; exit 1",
        ),
        ("eve-loop", "echo looping; while :; do :; done"),
        ("eve-fill", "cat /dev/zero > fill"),
        ("eve-net", &network),
    ];
    for (bot, build) in hostile {
        let manifest = format!("build = {build:?}\nrun = \"./bot\"\n");
        let source = bot_dir(&bots, bot, &[("hus-bot.toml", &manifest)]);
        let out = submit(&server, &source, bot, &token);
        assert_eq!(out.status.code(), Some(1), "{bot}: {}", said(&out));
        let version = server.json(&format!("/api/bots/{bot}/versions/1"));
        assert_eq!(version["state"], "build failed", "{version}");
        let detail = version["detail"].as_str().unwrap_or("").to_string();
        let output = version["output"].as_str().unwrap_or("").to_string();
        match bot {
            // Without root there is no pids cgroup to tell the cause: the build
            // still ends, at its bound on processes (RLIMIT_NPROC) or its time.
            "eve-bomb" if root => assert!(
                detail.starts_with("the build hit its bound of 256 processes and threads ("),
                "{detail}"
            ),
            "eve-loop" => {
                assert_eq!(detail, "the build was stopped after 8s, its bound on time");
                assert!(output.starts_with("looping\n"), "{output}");
            }
            "eve-fill" => {
                assert_eq!(
                    detail,
                    "the build filled its directory, 512 MiB (sources, build products and everything else written there)"
                );
                assert!(output.contains("No space left on device"), "{output}");
            }
            "eve-net" => {
                assert_eq!(
                    detail,
                    "the build failed (exit status 1); its output says why"
                );
                assert!(
                    output.contains("Network is unreachable")
                        || output.contains("Connection refused"),
                    "{output}"
                );
            }
            _ => {}
        }
        // The author reads the same cause from `hus submit` and on the page.
        assert!(said(&out).contains(&detail), "{bot}: {}", said(&out));
        let (status, page) = server.get(&format!("/bots/{bot}/versions/1"));
        assert_eq!(status, 200);
        assert!(page.contains("build failed"), "{page}");
        // Nothing of it is kept but its record.
        let hash = version["sha256"].as_str().expect("hash");
        assert!(!dir.join(format!("uploads/{hash}.built")).exists());
    }
    // The call reached nothing on the host.
    assert_eq!(
        listener.accept().map(|_| ()).map_err(|e| e.kind()),
        Err(std::io::ErrorKind::WouldBlock)
    );
    // The loop alone held the build queue for 8 s, more than a set of two random
    // movers takes: the league played on throughout, and plays on after.
    assert!(started.elapsed() >= Duration::from_secs(8));
    let during = sets_of_ann_and_bob(&server);
    assert!(during > before, "no set was played during the builds");
    wait_for_sets(&server, "ann", during / 2 + 1);
}

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use engine::{AnyPosition, Board, Game, Player};
use serde_json::Value;

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

pub fn bot(path: &str) -> String {
    format!("python3 {}", root().join(path).display())
}

pub fn misbehave(mode: &str) -> String {
    format!("{} {mode}", bot("tests/bots/misbehave.py"))
}

pub fn random_bot() -> String {
    bot("sample-bots/python/random_bot.py")
}

pub fn greedy_bot() -> String {
    bot("sample-bots/python/greedy_bot.py")
}

/// The built-in random mover, `hus random-bot`: the healthy opponent of tests about the
/// other bot. It starts in milliseconds and answers at once, so a test's verdict never
/// hangs on how fast a healthy interpreter starts on a loaded machine.
pub fn hus_random(seed: u64) -> String {
    format!("'{}' random-bot --seed {seed}", env!("CARGO_BIN_EXE_hus"))
}

/// Allowances no healthy bot misses, even on a loaded 2-core machine. `play` puts them
/// before the test's own arguments, which override them (a later `--move-time` wins):
/// a test that is about time sets its own, and takes its margin from the misbehaving
/// bot's delay against that deadline.
pub const GENEROUS: [&str; 4] = ["--move-time", "10s", "--ready-time", "30s"];

/// A temporary directory for what a test writes: when it is dropped, every log in it
/// (each `*.jsonl`, in any subdirectory) goes to the real `hus replay`, which must
/// verify it: exit status 0 (complete, or `aborted`), or 3 (cut short, consistent) for
/// a directory whose logs may be cut ([`LogDir::cut_ok`]: a referee killed with
/// SIGKILL), and no warning (a record of a type the verifier does not know is one).
/// Every end-to-end test that writes logs keeps them in one, so no code path's log can
/// go unverified. A directory holding logs broken on purpose is a plain `TempDir`.
pub struct LogDir {
    dir: tempfile::TempDir,
    cut_ok: bool,
    /// Files broken on purpose ([`LogDir::broken`]), not checked.
    broken: std::sync::Mutex<Vec<PathBuf>>,
}

impl LogDir {
    /// A new directory under the system's temporary directory.
    pub fn new() -> LogDir {
        LogDir {
            dir: tempfile::tempdir().expect("temp dir"),
            cut_ok: false,
            broken: Default::default(),
        }
    }

    /// A new directory under `parent` (the sandbox tests' 0755 tree).
    pub fn new_in(parent: impl AsRef<Path>) -> LogDir {
        LogDir {
            dir: tempfile::tempdir_in(parent).expect("temp dir"),
            cut_ok: false,
            broken: Default::default(),
        }
    }

    /// Its logs may end without `set-end` or `aborted`: `hus replay`'s status 3 is then
    /// accepted as well as 0.
    pub fn cut_ok(mut self) -> LogDir {
        self.cut_ok = true;
        self
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The path of a file `name` in the directory that the test breaks on purpose (an
    /// altered log that `hus replay` must refuse, a file that is no log): it is not
    /// checked on drop.
    pub fn broken(&self, name: &str) -> PathBuf {
        let path = self.path().join(name);
        self.broken.lock().expect("lock").push(path.clone());
        path
    }
}

impl Drop for LogDir {
    fn drop(&mut self) {
        // A test that failed already says why; a second panic would abort the run.
        if std::thread::panicking() {
            return;
        }
        let allowed: &[i32] = if self.cut_ok { &[0, 3] } else { &[0] };
        let broken = self.broken.lock().expect("lock");
        if let Err(e) = replay_all_but(self.path(), allowed, self.cut_ok, &broken) {
            panic!("{e}");
        }
    }
}

/// The body of an HTTP/1.1 answer sent in chunks (`Transfer-Encoding: chunked`), put
/// back together; it stops at the last chunk or at anything that is not a chunk.
pub fn dechunk_bytes(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = body.windows(2).position(|w| w == b"\r\n") {
        let size = String::from_utf8_lossy(&body[..end]);
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        let rest = &body[end + 2..];
        if n == 0 || rest.len() < n {
            break;
        }
        out.extend_from_slice(&rest[..n]);
        body = rest[n..].strip_prefix(b"\r\n").unwrap_or(&rest[n..]);
    }
    out
}

/// A log's name: `*.jsonl`, a finished set's compressed log `*.jsonl.zst` (`*.jsonl.gz`
/// of an older version), or an
/// archive of finished logs `*.tar.zst` (`hus replay` verifies each of its logs).
fn is_log_name(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    [".jsonl", ".jsonl.zst", ".jsonl.gz", ".tar.zst"]
        .iter()
        .any(|end| name.ends_with(end))
}

/// A league's set log (or a bot's stderr file) as text, whether kept plain
/// (`logs/STEM.jsonl`, `logs/STEM.a.stderr`) or compressed once finished
/// (`logs/STEM.jsonl.zst`, `logs/STEM.a.stderr.zst`, found as every reader finds them:
/// `referee::open_finished_log`): `plain` is the plain name.
pub fn read_set_log(plain: &Path) -> String {
    use std::io::Read;
    let path = referee::compressed_path(plain);
    let mut text = String::new();
    referee::open_finished_log(&path)
        .and_then(|mut r| r.read_to_string(&mut text))
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text
}

/// Runs `hus replay` on every `*.jsonl` (and `*.jsonl.zst`) under `dir` (recursively);
/// an error names the
/// first log whose status is not in `allowed`, or whose replay warned, with what
/// replay said. Returns how many logs were checked.
pub fn replay_all(dir: &Path, allowed: &[i32]) -> Result<usize, String> {
    replay_all_but(dir, allowed, false, &[])
}

/// [`replay_all`], skipping the files of `broken`, and with `empty_ok` an empty file
/// (a referee killed between creating its log and writing the header in it).
fn replay_all_but(
    dir: &Path,
    allowed: &[i32],
    empty_ok: bool,
    broken: &[PathBuf],
) -> Result<usize, String> {
    let mut logs = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => dirs.push(path),
                Ok(t) if t.is_file() && is_log_name(&path) => {
                    let empty = std::fs::metadata(&path).is_ok_and(|m| m.len() == 0);
                    if !(broken.contains(&path) || empty_ok && empty) {
                        logs.push(path)
                    }
                }
                _ => {}
            }
        }
    }
    logs.sort();
    for log in &logs {
        let out = hus(&["replay", log.to_str().expect("utf-8 path")]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let code = out.status.code().unwrap_or(-1);
        if !allowed.contains(&code) || stderr.lines().any(|l| l.starts_with("warning:")) {
            return Err(format!(
                "hus replay {}: exit status {code} (allowed: {allowed:?}):\n{}{stderr}",
                log.display(),
                String::from_utf8_lossy(&out.stdout)
            ));
        }
        if !log.to_string_lossy().ends_with(".tar.zst") {
            archives_short(log)?;
        }
    }
    Ok(logs.len())
}

/// A log the referee wrote goes into an archive in its short form, every whole move
/// line left short, and comes back byte for byte (LOGS.md, "Archives"): checked on
/// every log of every test, whatever it holds (faults, teams, remote bots, clocks,
/// stopped sets).
fn archives_short(log: &Path) -> Result<(), String> {
    use std::io::Read;
    let mut text = Vec::new();
    referee::open_log(log)
        .and_then(|mut r| r.read_to_end(&mut text))
        .map_err(|e| format!("cannot read {}: {e}", log.display()))?;
    let Some(short) = referee::archive::shorten(&text) else {
        return Err(format!(
            "{}: its short form would not give it back exactly",
            log.display()
        ));
    };
    if referee::archive::lengthen(&short).as_deref() != Ok(&text[..]) {
        return Err(format!("{}: lengthened, it differs", log.display()));
    }
    // Complete lines only: a last line cut short stays as it is.
    let whole = short
        .split_inclusive(|&b| b == b'\n')
        .filter(|l| l.starts_with(br#"{"type":"move""#) && l.ends_with(b"\n"))
        .filter(|l| l.windows(11).any(|w| w == br#""position":"#))
        .count();
    if whole > 0 {
        return Err(format!(
            "{}: {whole} move lines the archive could not shorten",
            log.display()
        ));
    }
    Ok(())
}

pub fn hus(args: &[&str]) -> Output {
    hus_env(args, &[])
}

/// `hus ARGS` with these environment variables set.
pub fn hus_env(args: &[&str], env: &[(&str, String)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hus"))
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .expect("hus runs")
}

/// The result of one `hus match --json`.
pub struct Played {
    pub summary: Value,
    pub records: Vec<Value>,
    pub log: PathBuf,
    pub _dir: LogDir,
}

/// `hus match A B --json --log-dir TMP [GENEROUS] EXTRA...`, expecting exit status 0.
pub fn play(a: &str, b: &str, extra: &[&str]) -> Played {
    play_env(a, b, extra, &[])
}

/// [`play`] with these environment variables set for `hus match`.
pub fn play_env(a: &str, b: &str, extra: &[&str], env: &[(&str, String)]) -> Played {
    let dir = LogDir::new();
    let log_dir = dir.path().to_str().expect("utf-8 path").to_string();
    let mut args = vec!["match", a, b, "--json", "--log-dir", &log_dir];
    args.extend_from_slice(&GENEROUS);
    args.extend_from_slice(extra);
    let output = hus_env(&args, env);
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(output.status.success(), "hus match failed: {stderr}");
    let summary: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "summary is not JSON ({e}): {}",
            String::from_utf8_lossy(&output.stdout)
        )
    });
    let log = PathBuf::from(summary["log"].as_str().expect("log path"));
    let records = read_log(&log);
    verify_log(&records);
    // And `hus replay` agrees: every log the suite produces is verified by it too.
    let replay = hus(&["replay", log.to_str().expect("utf-8 path")]);
    assert_eq!(
        replay.status.code(),
        Some(0),
        "hus replay rejected {}: {}",
        log.display(),
        String::from_utf8_lossy(&replay.stderr)
    );
    Played {
        summary,
        records,
        log,
        _dir: dir,
    }
}

/// A log's records; a set's log is read compressed (`STEM.jsonl.zst`) when the plain
/// `path` is not there (a league compresses a finished set's log).
pub fn read_log(path: &Path) -> Vec<Value> {
    read_set_log(path)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each log line is JSON"))
        .collect()
}

/// The log's header with the bots' names as a reader gives them (LOGS.md): the header
/// is written before the bots start, so a `null` name (`bots[].name`, a team member's
/// `announced`) is taken from the bot's first `ready` before the first game.
pub fn named_header(records: &[Value]) -> Value {
    let mut header = records[0].clone();
    for r in records
        .iter()
        .take_while(|r| r["type"] != "game-start")
        .filter(|r| r["type"] == "ready")
    {
        let bot = r["bot"].as_u64().expect("bot") as usize;
        let slot = match r["mate"].as_u64() {
            Some(i) => &mut header["teams"][bot]["members"][i as usize]["announced"],
            None => &mut header["bots"][bot]["name"],
        };
        if slot.is_null() {
            *slot = r["name"].clone();
        }
    }
    header
}

pub fn of_type<'a>(records: &'a [Value], kind: &str) -> Vec<&'a Value> {
    records.iter().filter(|r| r["type"] == kind).collect()
}

/// Re-plays every game of a log with the engine and checks every board, every end and
/// the set totals. Independent of the referee's code: it reads the JSON as LOGS.md
/// describes it.
pub fn verify_log(records: &[Value]) {
    assert_eq!(records[0]["type"], "header", "a log starts with its header");
    assert_eq!(records[0]["log_version"], 1);
    let mut game: Option<(Game<AnyPosition>, u64)> = None;
    let mut totals = [0u64; 2];
    let mut played = 0;
    for (i, r) in records.iter().enumerate() {
        match r["type"].as_str().expect("type") {
            "game-start" => {
                let pos: AnyPosition = r["position"]
                    .as_str()
                    .expect("position")
                    .parse()
                    .expect("notation");
                // The bot `first` is the side to move at the start (player 0 from the
                // starting position, either from an opening): `player0` is player 0's.
                let first = r["first"].as_u64().expect("first");
                let player0 = if pos.to_move() == Player::Zero {
                    first
                } else {
                    1 - first
                };
                game = Some((Game::new(pos), player0));
            }
            "move" => {
                let (g, player0) = game.as_mut().expect("a move inside a game");
                let player = g.position().to_move();
                let bot = if player == Player::Zero {
                    *player0
                } else {
                    1 - *player0
                };
                assert_eq!(r["bot"].as_u64(), Some(bot), "record {i}: bot to move");
                assert_eq!(r["ply"].as_u64(), Some(g.plies() as u64), "record {i}: ply");
                let report = g
                    .play(r["pit"].as_u64().expect("pit") as usize)
                    .expect("logged moves are legal");
                assert_eq!(
                    r["position"].as_str(),
                    Some(g.position().to_string().as_str()),
                    "record {i}: board"
                );
                assert_eq!(
                    r["sown"].as_u64(),
                    Some(report.summary.sown as u64),
                    "record {i}: sown"
                );
                assert_eq!(r["truncated"].as_bool(), Some(report.summary.truncated));
            }
            "game-end" => {
                let (g, first) = game.take().expect("an end inside a game");
                // From here on `first` is the bot that is player 0.
                let faulted: Vec<u64> = r["faulted"]
                    .as_array()
                    .expect("faulted")
                    .iter()
                    .map(|v| v.as_u64().expect("bot"))
                    .collect();
                let points = [
                    r["points"][0].as_u64().expect("p0"),
                    r["points"][1].as_u64().expect("p1"),
                ];
                if faulted.is_empty() {
                    let end = g
                        .end()
                        .copied()
                        .expect("the engine agrees the game is over");
                    assert_eq!(r["reason"].as_str(), Some(end.reason.name()), "record {i}");
                    let by_player = g.points().expect("points");
                    let by_bot = if first == 0 {
                        by_player
                    } else {
                        [by_player[1], by_player[0]]
                    };
                    assert_eq!(points, by_bot.map(u64::from), "record {i}: points");
                    let winner = end
                        .winner
                        .map(|p| if p == Player::Zero { first } else { 1 - first });
                    assert_eq!(r["winner"].as_u64(), winner, "record {i}: winner");
                } else {
                    assert!(
                        g.end().is_none(),
                        "record {i}: a faulted game was still going"
                    );
                }
                assert_eq!(r["plies"].as_u64(), Some(g.plies() as u64));
                totals[0] += points[0];
                totals[1] += points[1];
                played += 1;
            }
            _ => {}
        }
    }
    let end = records
        .iter()
        .rev()
        .find(|r| r["type"] == "set-end")
        .expect("a complete log ends with set-end");
    assert_eq!(end["games_played"].as_u64(), Some(played));
    assert_eq!(end["points"][0].as_u64(), Some(totals[0]));
    assert_eq!(end["points"][1].as_u64(), Some(totals[1]));
}

/// The file in `dir` whose name ends with `suffix` (a log, a stderr file).
pub fn file_ending(dir: &Path, suffix: &str) -> PathBuf {
    std::fs::read_dir(dir)
        .expect("directory")
        .flatten()
        .find(|e| e.file_name().to_string_lossy().ends_with(suffix))
        .map(|e| e.path())
        .unwrap_or_else(|| panic!("no file ending in {suffix} in {}", dir.display()))
}

/// How long a process killed by the referee may take to disappear from /proc on a
/// loaded machine (a SIGKILLed process dies when it is next scheduled).
pub const DEATH_LIMIT: Duration = Duration::from_secs(10);

/// The processes with `marker` still alive after waiting up to `DEATH_LIMIT` for them
/// to be gone. The bots these tests look for hang for ever if not killed, so waiting
/// cannot turn a survivor into a pass.
pub fn survivors(marker: &str) -> Vec<u32> {
    let deadline = Instant::now() + DEATH_LIMIT;
    loop {
        let alive = alive_with(marker);
        if alive.is_empty() || Instant::now() > deadline {
            return alive;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The pids of live processes whose command line contains `marker`.
pub fn alive_with(marker: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z'));
        if String::from_utf8_lossy(&cmdline).contains(marker) && !zombie {
            pids.push(pid);
        }
    }
    pids
}

/// A move in words, written here independently of hus.
pub fn move_words(m: &Value) -> String {
    let sown = m["sown"].as_u64().expect("sown");
    let mut s = format!("pit {}: {} sown", m["pit"], plural(sown, "seed", "seeds"));
    for e in m["events"].as_array().expect("events") {
        if e["kind"] == "relay" {
            let seeds = e["seeds"].as_u64().expect("seeds");
            s += &format!(
                "; relay from {} ({})",
                e["pit"],
                plural(seeds, "seed", "seeds")
            );
        } else {
            let taken = e["taken"].as_array().expect("taken");
            let total: u64 = taken.iter().map(|t| t["seeds"].as_u64().expect("n")).sum();
            let pits: Vec<String> = taken.iter().map(|t| t["pit"].to_string()).collect();
            s += &format!(
                "; captured {total} from {} {} landing in {}",
                if pits.len() == 1 { "pit" } else { "pits" },
                pits.join(", "),
                e["landing"]
            );
            if e["own"].as_u64() != Some(0) {
                s += &format!(", lifting its own {}", e["own"]);
            }
        }
    }
    if m["truncated"] == true {
        s += "; stopped by the 3000-seed rule";
    }
    s
}

pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Sends SIGTERM to a child of the test that has not been reaped yet.
pub fn sigterm(child: &std::process::Child) {
    // SAFETY: a signal to our own child, which has not been reaped yet.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
}

/// The `sets` table of the directory's store, by id: (id, round, bot A, bot B, status,
/// attempts).
pub fn store_sets(dir: &Path) -> Vec<(i64, u32, String, String, String, u32)> {
    let out = Command::new("python3")
        .arg("-c")
        .arg(
            "import json, sqlite3, sys\n\
             c = sqlite3.connect(sys.argv[1])\n\
             print(json.dumps(c.execute('SELECT id, round, bot_a, bot_b, status, attempts \
             FROM sets ORDER BY id').fetchall()))\n",
        )
        .arg(dir.join("league.sqlite"))
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the rows as JSON")
}

thread_local! {
    /// Each thread's runtime for binding and connecting sockets.
    static CONNECTING: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .expect("a runtime");
}

/// A connection to `addr` from the loopback address `from` (bound before connecting),
/// with a receive buffer (`SO_RCVBUF`) of `recv_buffer` bytes if given, as a client
/// that means to hold the server's buffers would set it.
pub fn connect_from_with(
    from: std::net::IpAddr,
    addr: std::net::SocketAddr,
    recv_buffer: Option<u32>,
) -> std::io::Result<std::net::TcpStream> {
    let stream = CONNECTING.with(|runtime| {
        runtime.block_on(async {
            let socket = tokio::net::TcpSocket::new_v4()?;
            if let Some(bytes) = recv_buffer {
                socket.set_recv_buffer_size(bytes)?;
            }
            socket.bind(std::net::SocketAddr::new(from, 0))?;
            socket.connect(addr).await
        })
    })?;
    let stream = stream.into_std()?;
    stream.set_nonblocking(false)?;
    Ok(stream)
}

/// Held by the tests that fill the kernel's TCP buffers by the hundred megabytes (clients
/// that never read a 32 MB log) and by the test that measures the kernel's TCP memory,
/// which is the whole machine's (`/proc/net/sockstat`): never both at once in this
/// binary.
pub static TCP_MEMORY: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Takes [`TCP_MEMORY`] (a test that failed while holding it leaves it usable).
pub fn tcp_memory_lock() -> std::sync::MutexGuard<'static, ()> {
    TCP_MEMORY.lock().unwrap_or_else(|e| e.into_inner())
}

/// Plays a set of `games` between two built-in random movers through `play_set`, bot A
/// being the uploaded `version` (which the log's header names), logged in `dir`;
/// returns the log's path. What a league's set of an uploaded bot writes, without a
/// league.
pub fn play_version_set(dir: &Path, version: referee::UploadedVersion, games: u32) -> PathBuf {
    use referee::{play_set, BotSpec, Entrant, Limits, Lineup, LogWriter, SetConfig, TimeControl};
    let set = SetConfig {
        rules: engine::Rules::new(engine::Preset::Hus, 8).expect("rules"),
        games,
        seed: 5,
        time: TimeControl::PerMove(Duration::from_secs(10)),
        ready_time: Duration::from_secs(30),
        early_stop: false,
        openings: Vec::new(),
        sprt: None,
    };
    let entrants =
        [("a", 1, Some(version)), ("b", 2, None)].map(|(side, seed, version)| Entrant::Process {
            spec: BotSpec::parse(&hus_random(seed)).expect("command"),
            stderr: dir.join(format!("versions.{side}.stderr")).into(),
            limits: Limits::default(),
            version,
        });
    let (mut writer, stem) = LogWriter::create(dir, "versions").expect("log");
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(play_set(
            &set,
            entrants.map(Lineup::from).into(),
            "hus test",
            &mut writer,
        ))
        .expect("the set is played");
    drop(writer);
    dir.join(format!("{stem}.jsonl"))
}

/// A directory to send with `hus submit`: the Python sample bot `main` (of
/// sample-bots/python) with the rules module it reads, and a manifest naming it.
pub fn python_upload(parent: &Path, name: &str, main: &str) -> PathBuf {
    let py = root().join("sample-bots/python");
    let dir = parent.join(name);
    std::fs::create_dir_all(&dir).expect("mkdir");
    for f in [main, "hus_rules.py"] {
        std::fs::copy(py.join(f), dir.join(f)).expect("copy a sample bot");
    }
    std::fs::write(
        dir.join("hus-bot.toml"),
        format!("language = \"python\"\nmain = \"{main}\"\n"),
    )
    .expect("manifest");
    dir
}

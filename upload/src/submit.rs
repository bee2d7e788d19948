//! `hus submit SERVER DIR --bot NAME`: packs a bot's directory ([`crate::pack`]), sends
//! it to a server's `POST /api/bots/NAME/versions` with the author's token, then
//! follows the version through its build and checks until it plays or is refused,
//! saying each state once and, for a refusal, the build's output or the cause.
//!
//! The HTTP client is `ureq` (blocking, small), with the system's TLS (`native-tls`,
//! which the PostgreSQL client already uses) for `https://` servers: a token is sent
//! in the clear over `http://`, so anything but a loopback address should be https.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use serde_json::Value;

use crate::bounds::{human_bytes, Bounds};
use crate::pack::pack;

/// The environment variable of the author's token.
pub const TOKEN_ENV: &str = "HUS_AUTHOR_TOKEN";
/// How often a submitted version's state is read while `hus submit` waits.
const POLL: Duration = Duration::from_millis(500);
/// The most bytes of an answer read.
const MAX_ANSWER: u64 = 4 << 20;

/// `hus submit`: send a bot's code to a server as a new version.
#[derive(Args, Debug, Clone)]
pub struct SubmitArgs {
    /// The server's address, e.g. `http://127.0.0.1:8080` or `https://hus.example.org`.
    #[arg(value_name = "SERVER")]
    pub server: String,
    /// The bot's directory, with its `hus-bot.toml` (docs/upload.md).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// The bot's name in the league (your token must allow it).
    #[arg(long, value_name = "NAME")]
    pub bot: String,
    /// A file holding your author's token (else the HUS_AUTHOR_TOKEN variable).
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Return once the server has the version, without following its build and checks.
    #[arg(long)]
    pub no_wait: bool,
    /// How long to follow the version before giving up waiting, e.g. `10m` (it goes on
    /// at the server).
    #[arg(long, value_name = "DURATION", default_value = "15m")]
    pub wait: String,
    /// Only pack the directory and say what would be sent (its size and hash).
    #[arg(long)]
    pub dry_run: bool,
}

fn token(args: &SubmitArgs) -> Result<String, String> {
    let token = match &args.token_file {
        Some(path) => std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the token file {}: {e}", path.display()))?,
        None => std::env::var(TOKEN_ENV).map_err(|_| {
            format!("no token: give --token-file FILE or set {TOKEN_ENV} (the organiser makes one with hus token --author)")
        })?,
    };
    let token = token.trim().to_string();
    if token.is_empty() || !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err("the token is empty or holds spaces or control characters".into());
    }
    Ok(token)
}

fn agent() -> Result<ureq::Agent, String> {
    let tls = native_tls::TlsConnector::new().map_err(|e| format!("cannot set up TLS: {e}"))?;
    Ok(ureq::AgentBuilder::new()
        .tls_connector(Arc::new(tls))
        .timeout_connect(Duration::from_secs(10))
        .timeout(Duration::from_secs(120))
        .redirects(0)
        .build())
}

/// The server's sentence in an error answer (`{"error": "..."}`), else the answer as
/// text, cut.
fn said(response: ureq::Response) -> String {
    let mut text = String::new();
    let _ = response
        .into_reader()
        .take(MAX_ANSWER)
        .read_to_string(&mut text);
    match serde_json::from_str::<Value>(&text) {
        Ok(v) => match v.get("error").and_then(Value::as_str) {
            Some(e) => e.to_string(),
            None => text,
        },
        Err(_) => text.chars().take(500).collect(),
    }
}

fn json(response: ureq::Response) -> Result<Value, String> {
    let mut text = String::new();
    response
        .into_reader()
        .take(MAX_ANSWER)
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read the server's answer: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("the server's answer is not JSON: {e}"))
}

fn call_error(e: ureq::Error, what: &str) -> String {
    match e {
        ureq::Error::Status(status, response) => {
            let retry = response.header("retry-after").map(str::to_string);
            let mut said = format!("{what}: the server answered {status}: {}", said(response));
            if let Some(retry) = retry {
                said.push_str(&format!(" (try again in {retry} s)"));
            }
            said
        }
        ureq::Error::Transport(t) => format!("{what}: {t}"),
    }
}

/// `hus submit`. Exit 0 once the version plays (or, with `--no-wait`, once it is
/// received), 1 if its build failed or a check refused it, 2 for anything else.
pub fn run_submit(args: &SubmitArgs) -> ExitCode {
    match submit(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("hus submit: {e}");
            ExitCode::from(2)
        }
    }
}

fn submit(args: &SubmitArgs) -> Result<ExitCode, String> {
    let wait = referee::parse_duration(&args.wait).map_err(|e| format!("--wait: {e:#}"))?;
    let packed = pack(&args.dir, &Bounds::default()).map_err(|e| e.to_string())?;
    let line = format!(
        "hus submit: packed {} ({} files, {} unpacked) into {} (sha256 {})",
        args.dir.display(),
        packed.files,
        human_bytes(packed.unpacked_bytes),
        human_bytes(packed.bytes.len() as u64),
        packed.hash
    );
    if args.dry_run {
        // What would be sent is the command's answer: on stdout.
        println!("{line}");
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!("{line}");
    let token = token(args)?;
    let server = args.server.trim_end_matches('/');
    if !(server.starts_with("http://") || server.starts_with("https://")) {
        return Err(format!(
            "{server:?} is not a server's address: write http://HOST:PORT or https://HOST"
        ));
    }
    let agent = agent()?;
    let url = format!("{server}/api/bots/{}/versions", args.bot);
    // A server busy receiving other uploads (503) is asked again after the wait it
    // gives, within --wait; any other refusal is final.
    let start = Instant::now();
    let answer = loop {
        let sent = agent
            .post(&url)
            .set("authorization", &format!("Bearer {token}"))
            .set("content-type", "application/zstd")
            .send_bytes(&packed.bytes);
        match sent {
            Ok(answer) => break answer,
            Err(ureq::Error::Status(503, response)) => {
                let retry = response
                    .header("retry-after")
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .map(|s| Duration::from_secs(s.clamp(1, 60)));
                let Some(retry) = retry.filter(|r| start.elapsed() + *r < wait) else {
                    return Err(call_error(
                        ureq::Error::Status(503, response),
                        "sending the version",
                    ));
                };
                eprintln!(
                    "hus submit: the server is busy ({}); sending again in {} s",
                    said(response),
                    retry.as_secs()
                );
                std::thread::sleep(retry);
            }
            Err(e) => return Err(call_error(e, "sending the version")),
        }
    };
    let answer = json(answer)?;
    let number = answer.get("version").and_then(Value::as_u64).unwrap_or(0);
    let page = answer.get("page").and_then(Value::as_str).unwrap_or("");
    eprintln!(
        "hus submit: {} version {number} received: {server}{page}",
        args.bot
    );
    if args.no_wait {
        return Ok(ExitCode::SUCCESS);
    }
    follow(&agent, server, &args.bot, number, wait)
}

/// Reads the version's state until it plays or is refused, saying each state once.
fn follow(
    agent: &ureq::Agent,
    server: &str,
    bot: &str,
    number: u64,
    wait: Duration,
) -> Result<ExitCode, String> {
    let url = format!("{server}/api/bots/{bot}/versions/{number}");
    let start = Instant::now();
    let mut last = String::new();
    loop {
        let version = agent
            .get(&url)
            .call()
            .map_err(|e| call_error(e, "reading the version's state"))
            .and_then(json)?;
        let state = version
            .get("state")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if state != last {
            eprintln!("hus submit: {bot} version {number}: {state}");
            last = state.clone();
        }
        let text = |key: &str| {
            version
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        match state.as_str() {
            "active" | "retired" => return Ok(ExitCode::SUCCESS),
            "build failed" | "rejected" => {
                let output = text("output");
                if !output.is_empty() {
                    eprintln!("--- the build's output ---\n{}", output.trim_end());
                    eprintln!("--- end of the build's output ---");
                }
                eprintln!("hus submit: {}", text("detail"));
                return Ok(ExitCode::from(1));
            }
            _ => {}
        }
        if start.elapsed() >= wait {
            return Err(format!(
                "gave up waiting after {}: the version is still {state} at the server ({url})",
                referee::show_duration(wait)
            ));
        }
        std::thread::sleep(POLL);
    }
}

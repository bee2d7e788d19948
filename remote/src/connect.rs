//! `hus connect`: plays for a local bot program on a server. It logs in on the bot
//! port with the bot's token, waits for a set, starts the program when the server's
//! first line (`hello`) arrives, and copies lines both ways until either side closes;
//! then it connects again (at once after a set, with growing waits after failures). A
//! refused token ends it with an error: trying again would not help. Ctrl-C or SIGTERM
//! ends it with exit status 130 and a line saying which, and whether a set was cut off
//! (the program and whatever it started are killed, and the server counts the closed
//! connection as a crash).

use std::cell::Cell;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::Command;

use crate::args::ConnectArgs;
use crate::port::{read_line, AuthReply, LineProblem};

/// The first wait after a failed connection; it doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
/// The longest wait between attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// How long the server has to answer the auth line.
const REPLY_TIMEOUT: Duration = Duration::from_secs(30);
/// After a set, how long the program has to exit once its stdin is closed.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// Runs `hus connect`.
pub fn run(args: &ConnectArgs) -> Result<ExitCode> {
    let token = read_token(&args.token_file)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the runtime")?;
    let playing = Cell::new(false);
    runtime.block_on(async {
        tokio::select! {
            r = bridge(args, &token, &playing) => r,
            signal = referee::stop_signal() => {
                // The bridge is dropped with the select: the program's process group is
                // killed (its `Group` guard) and the connection closed.
                eprintln!("{}", stop_message(signal, playing.get()));
                Ok(ExitCode::from(130))
            }
        }
    })
}

/// What `hus connect` says when a signal stops it: which signal, and whether a set was
/// cut off, with what that costs the bot.
fn stop_message(signal: &str, playing: bool) -> String {
    if playing {
        format!(
            "hus connect: stopped by {signal} during a set; the bot was stopped and the \
             connection closed, which the server counts as a crash: the bot loses the game in \
             progress, and the set's later games unless it connects again within the league's \
             ready time"
        )
    } else {
        format!("hus connect: stopped by {signal}; no set was in progress")
    }
}

/// The token from its file: one line, surrounding whitespace ignored.
fn read_token(path: &std::path::Path) -> Result<String> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the token file {}", path.display()))?;
    let token = text.trim();
    if token.is_empty() {
        bail!("the token file {} is empty", path.display());
    }
    if token.len() > 512 || token.chars().any(char::is_whitespace) {
        bail!(
            "the token file {} does not hold one token (a line of 64 hexadecimal digits from hus token)",
            path.display()
        );
    }
    use std::os::unix::fs::PermissionsExt;
    if let Ok(meta) = std::fs::metadata(path) {
        if meta.permissions().mode() & 0o077 != 0 {
            eprintln!(
                "warning: the token file {} can be read by other users (chmod 600 {})",
                path.display(),
                path.display()
            );
        }
    }
    Ok(token.to_string())
}

/// What one connection came to.
enum Session {
    /// A set was played, or the server closed the connection: connect again at once.
    Ended,
    /// The server refused the login, and says trying again later may work.
    RetryLater(String, Duration),
}

/// Plays set after set; `playing` is true while a set's program runs.
async fn bridge(args: &ConnectArgs, token: &str, playing: &Cell<bool>) -> Result<ExitCode> {
    let mut backoff = FIRST_BACKOFF;
    let mut sessions = 0u32;
    loop {
        let outcome = session(args, token, playing).await;
        playing.set(false);
        let wait = match outcome {
            Ok(Session::Ended) => {
                sessions += 1;
                backoff = FIRST_BACKOFF;
                None
            }
            Ok(Session::RetryLater(reason, wait)) => {
                eprintln!("hus connect: the server refused for now: {reason}");
                Some(wait.max(backoff))
            }
            // Trying again would not help.
            Err(e) if e.downcast_ref::<Refused>().is_some() => return Err(e),
            Err(e) if e.downcast_ref::<CannotStart>().is_some() => return Err(e),
            Err(e) => {
                eprintln!("hus connect: {e:#}");
                Some(backoff)
            }
        };
        if args.sessions.is_some_and(|n| sessions >= n) {
            return Ok(ExitCode::SUCCESS);
        }
        if let Some(wait) = wait {
            eprintln!(
                "hus connect: connecting again in {:.1} s",
                wait.as_secs_f64()
            );
            tokio::time::sleep(wait).await;
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }
}

/// The bot's program cannot be started (not found, not executable).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct CannotStart(String);

/// A refusal that trying again will not change.
#[derive(Debug, thiserror::Error)]
#[error("the server at {server} refused bot {bot:?}: {reason}")]
struct Refused {
    server: String,
    bot: String,
    reason: String,
}

/// Kills a program's process group when dropped: at the end of a set, and when a
/// signal stops `hus connect` in the middle of one (what the program started dies
/// with it).
struct Group(Option<nix::unistd::Pid>);

impl Drop for Group {
    fn drop(&mut self) {
        if let Some(pgid) = self.0 {
            let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
        }
    }
}

async fn session(args: &ConnectArgs, token: &str, playing: &Cell<bool>) -> Result<Session> {
    let mut stream = tokio::time::timeout(REPLY_TIMEOUT, TcpStream::connect(&args.server))
        .await
        .map_err(|_| anyhow::anyhow!("no connection to {} within 30 s", args.server))?
        .with_context(|| format!("cannot connect to {}", args.server))?;
    stream.set_nodelay(true)?;
    let auth = serde_json::json!({"type": "auth", "bot": args.bot, "token": token});
    stream
        .write_all(format!("{auth}\n").as_bytes())
        .await
        .context("cannot send the auth line")?;
    let reply = match tokio::time::timeout(REPLY_TIMEOUT, read_line(&mut stream, 4096)).await {
        Err(_) => bail!("the server did not answer the auth line within 30 s"),
        Ok(Err(LineProblem::Closed)) => bail!("the server closed the connection at login"),
        Ok(Err(LineProblem::TooLong)) => bail!("the server's answer to the login is too long"),
        Ok(Err(LineProblem::Io(e))) => return Err(e).context("login failed"),
        Ok(Ok(line)) => line,
    };
    match serde_json::from_slice::<AuthReply>(&reply) {
        Ok(AuthReply::Welcome { .. }) => {}
        Ok(AuthReply::Refused {
            reason,
            retry_ms: Some(ms),
        }) => return Ok(Session::RetryLater(reason, Duration::from_millis(ms))),
        Ok(AuthReply::Refused {
            reason,
            retry_ms: None,
        }) => {
            return Err(Refused {
                server: args.server.clone(),
                bot: args.bot.clone(),
                reason,
            }
            .into())
        }
        Err(e) => bail!("the server's answer to the login is not understood: {e}"),
    }
    eprintln!(
        "hus connect: logged in to {} as {}; waiting for a set",
        args.server, args.bot
    );

    let (read, mut write) = stream.into_split();
    let mut from_server = BufReader::new(read);
    // The program starts with the set: when the server's first line arrives.
    if from_server
        .fill_buf()
        .await
        .context("the connection failed while waiting for a set")?
        .is_empty()
    {
        eprintln!("hus connect: the server closed the connection before a set");
        return Ok(Session::Ended);
    }
    let mut child = Command::new(&args.command[0])
        .args(&args.command[1..])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| {
            CannotStart(format!(
                "cannot start the bot {:?}: {e}",
                args.command.join(" ")
            ))
        })?;
    let group = Group(child.id().map(|id| nix::unistd::Pid::from_raw(id as i32)));
    playing.set(true);
    let (Some(mut to_bot), Some(mut from_bot)) = (child.stdin.take(), child.stdout.take()) else {
        bail!("the bot's pipes could not be set up");
    };
    eprintln!("hus connect: a set begins; the bot is running");
    let down = async move {
        let r = tokio::io::copy_buf(&mut from_server, &mut to_bot).await;
        drop(to_bot);
        r
    };
    let up = async move {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            let n = from_bot.read(&mut buf).await?;
            if n == 0 {
                break;
            }
            write.write_all(&buf[..n]).await?;
        }
        write.shutdown().await
    };
    tokio::pin!(down, up);
    tokio::select! {
        _ = &mut down => {
            // The server closed the connection (the set ended, or the bot faulted):
            // the program has read end of file and may exit by itself.
            let _ = tokio::time::timeout(EXIT_GRACE, child.wait()).await;
        }
        _ = &mut up => {
            // The program closed its stdout (it exited): the server sees the
            // connection close, and closes its end.
            let _ = tokio::time::timeout(EXIT_GRACE, &mut down).await;
            let _ = tokio::time::timeout(EXIT_GRACE, child.wait()).await;
        }
    }
    drop(group);
    let _ = child.wait().await;
    eprintln!("hus connect: the connection ended");
    Ok(Session::Ended)
}

//! The raw arguments of each command, as clap parses them. Each command validates its
//! own arguments into a configuration before doing anything; the `hus` binary only
//! gathers them into subcommands.

use anyhow::Context;
use clap::Args;

use crate::config::{parse_bytes, show_duration, BotSpec};
use crate::defaults;
use crate::sandbox::{Sandbox, SandboxOption, SandboxOptions};

/// Re-plays every move of a log with the rules engine and checks every record: boards,
/// sowing, relays and captures, game ends, points and the set's result. Without
/// options it prints a summary of the set; --game shows one game move by move, --ply
/// one position with its notation, --follow a set while it is played, --html writes a
/// self-contained viewer (of the whole set, or of --game N or --games A-B). The exit
/// statuses are in the help of LOG.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The log file (JSON Lines, LOGS.md).
    ///
    /// Exit status: 0 the log is complete (set-end, or aborted) and verified; 1 it
    /// disagrees with the rules or with itself (the first such line is named); 2 it cannot
    /// be read, is not a hus log, or has an unknown log_version; 3 it was cut short, and
    /// what it holds is consistent.
    ///
    /// An archive of logs (`logs/archive/sets-FROM-TO.tar.zst`, as `hus serve` keeps
    /// finished sets) is verified log by log, a line each; with --set, one of its logs
    /// is read as a log file would be.
    #[arg(value_name = "LOG")]
    pub log: std::path::PathBuf,
    /// LOG is an archive: read the log of this set (its stem, as `hus replay ARCHIVE`
    /// lists it) with every other option.
    #[arg(long, value_name = "STEM")]
    pub set: Option<String>,
    /// LOG is an archive: write each of its logs into this directory as `STEM.jsonl`,
    /// exactly as it was written (a file already there is not overwritten).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["set", "game", "html", "follow"])]
    pub unpack: Option<std::path::PathBuf>,
    /// Show this game move by move (games count from 1); with --html, the page holds
    /// only this game.
    #[arg(long, value_name = "N")]
    pub game: Option<u32>,
    /// With --html: the page holds only these games, a range such as 3-7 (for a log
    /// too large for one page, see --max-page-moves).
    #[arg(long, value_name = "A-B", requires = "html", conflicts_with = "game")]
    pub games: Option<String>,
    /// With --html: refuse to write a page of more moves than this (the page grows by
    /// about 9 bytes a move; a browser copes with a few million).
    #[arg(long, value_name = "N", default_value_t = 2_000_000, requires = "html")]
    pub max_page_moves: u64,
    /// With --game: show only the position after K moves (0 = the start), with its
    /// notation (for `hus perft --position` or a bug report).
    #[arg(long, value_name = "K", requires = "game")]
    pub ply: Option<u32>,
    /// Follow a log that is still being written, checking and printing each move as it
    /// arrives, until its set-end or aborted, or until the referee writing it is gone
    /// (exit status 3).
    #[arg(long)]
    pub follow: bool,
    /// With --follow: also stop (exit status 3) when no new line has come for this
    /// long, e.g. 30s or 5m. For logs whose writer cannot be watched from here (written
    /// on another machine, in a container, or by an earlier hus).
    #[arg(long, value_name = "DURATION", requires = "follow")]
    pub idle_limit: Option<String>,
    /// Write a self-contained HTML viewer of the set to this file.
    #[arg(long, value_name = "OUT.html")]
    pub html: Option<std::path::PathBuf>,
    /// Colour: auto (when stdout is a terminal), always or never.
    #[arg(long, default_value = "auto", value_name = "WHEN")]
    pub color: String,
}

/// The raw arguments of `hus check-bot`.
#[derive(Debug, Args)]
#[command(args_override_self = true)]
pub struct CheckBotArgs {
    /// The bot's command line, split like a shell would (no shell is run).
    #[arg(value_name = "BOT")]
    pub bot: String,
    /// Rules preset to check with: hus, rulebook or mancala-world.
    #[arg(long, default_value = defaults::PRESET_NAME)]
    pub rules: String,
    /// Row width, 8 to 32.
    #[arg(long, default_value_t = defaults::WIDTH)]
    pub width: usize,
    /// Games to play against the built-in random mover (1 to 1000).
    #[arg(long, default_value_t = 3)]
    pub games: u32,
    /// Time for each move: 250ms, 1.5s, 2m, or a number of milliseconds.
    #[arg(long, default_value_t = show_duration(defaults::MOVE_TIME), value_name = "DURATION")]
    pub move_time: String,
    /// Time from the bot's start to its ready.
    #[arg(long, default_value_t = show_duration(defaults::READY_TIME), value_name = "DURATION")]
    pub ready_time: String,
    /// Seed of the lots and of the random mover. Without one, a seed is picked that
    /// seats the bot both first and second.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Keep the log of the check and the bot's stderr in this directory (default: a
    /// temporary directory, deleted unless problems are found).
    #[arg(long, value_name = "DIR")]
    pub log_dir: Option<std::path::PathBuf>,
    /// Working directory of the bot; with --sandbox, the directory it sees (default:
    /// that of the file or directory its command names).
    #[arg(long, value_name = "DIR")]
    pub bot_dir: Option<std::path::PathBuf>,
    /// Sandbox options.
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

/// The sandbox options of `hus match` and `hus check-bot` (README.md, "Running untrusted
/// bots").
#[derive(Clone, Debug, Default, Args)]
pub struct SandboxArgs {
    /// Run each bot in a sandbox of its own (bubblewrap): no network, no other
    /// processes, nothing of the file system but the system's files (read-only), its
    /// own directory (--bot-dir, or that of the file its command names) and a private
    /// /tmp, a bound on processes, an environment with only PATH and HOME=/tmp (plus
    /// `hus match --bot-env`). An error before any game if this machine cannot do it.
    #[arg(long, help_heading = "Sandbox")]
    pub sandbox: bool,
    /// Let the bots write in their own directories (default: read-only).
    #[arg(long, requires = "sandbox", help_heading = "Sandbox")]
    pub sandbox_writable: bool,
    /// Also show this path to the bots, read-only: an interpreter installed outside
    /// /usr, say (--sandbox-ro /opt/python3.12). Repeat the flag for more.
    #[arg(
        long,
        value_name = "PATH",
        requires = "sandbox",
        help_heading = "Sandbox"
    )]
    pub sandbox_ro: Vec<std::path::PathBuf>,
    /// Most processes and threads in each bot's sandbox, bubblewrap's own included
    /// (default 128).
    #[arg(long, value_name = "N", requires = "sandbox", help_heading = "Sandbox")]
    pub sandbox_processes: Option<u32>,
    /// Size of each bot's private /tmp, and of its /dev/shm: they are held in memory
    /// (default 64M).
    #[arg(
        long,
        value_name = "BYTES",
        requires = "sandbox",
        help_heading = "Sandbox"
    )]
    pub sandbox_tmp: Option<String>,
    /// Memory each bot's whole sandbox may hold: its processes' pages, its /tmp and
    /// /dev/shm files, memfd files, pipe and socket buffers (default 1G). As root, a
    /// memory cgroup without swap; over it, the kernel kills the bot: a crash that says so.
    #[arg(
        long,
        value_name = "BYTES",
        requires = "sandbox",
        help_heading = "Sandbox"
    )]
    pub sandbox_memory: Option<String>,
    /// When hus runs as root, the unprivileged user the bots run as (default nobody, with
    /// its group); it must be able to reach each bot's directory. Refused if it does not
    /// exist or is root. Without root, bots run as hus's own user.
    #[arg(
        long,
        value_name = "NAME",
        requires = "sandbox",
        help_heading = "Sandbox"
    )]
    pub sandbox_user: Option<String>,
}

impl SandboxArgs {
    /// The sandbox settings these flags give (without --sandbox, none).
    pub fn options(&self) -> anyhow::Result<Option<SandboxOptions>> {
        if !self.sandbox {
            return Ok(None);
        }
        let tmp_size = match &self.sandbox_tmp {
            Some(size) => Some(parse_bytes(size).context("invalid --sandbox-tmp")?),
            None => None,
        };
        let memory = match &self.sandbox_memory {
            Some(size) => Some(parse_bytes(size).context("invalid --sandbox-memory")?),
            None => None,
        };
        Ok(Some(SandboxOptions {
            writable: self.sandbox_writable,
            read_only: self.sandbox_ro.clone(),
            max_processes: self.sandbox_processes,
            tmp_size,
            memory,
            user: self.sandbox_user.clone(),
        }))
    }

    /// With --sandbox, the sandbox of the bot `spec` and the command to run in it (a
    /// relative path that named the bot's directory made absolute); its directory is
    /// `bot_dir` if given. Without, `None` and the command unchanged.
    pub fn sandbox_for(
        &self,
        spec: &BotSpec,
        bot_dir: Option<&std::path::Path>,
    ) -> anyhow::Result<(Option<Sandbox>, BotSpec)> {
        let Some(options) = self.options()? else {
            return Ok((None, spec.clone()));
        };
        let (sandbox, spec) = options.sandbox_for(spec, bot_dir).map_err(|e| {
            let flag = match e.option {
                SandboxOption::BotDir => return anyhow::Error::new(e.error),
                SandboxOption::ReadOnly => "--sandbox-ro",
                SandboxOption::MaxProcesses => "--sandbox-processes",
                SandboxOption::TmpSize => "--sandbox-tmp",
                SandboxOption::Memory => "--sandbox-memory",
                SandboxOption::User => "--sandbox-user",
            };
            anyhow::Error::new(e.error).context(format!("invalid {flag}"))
        })?;
        Ok((Some(sandbox), spec))
    }
}

/// The raw arguments of `hus random-bot`.
#[derive(Debug, Args)]
pub struct RandomBotArgs {
    /// Seed of its choices.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

/// The raw arguments of `hus perft`.
#[derive(Debug, Args)]
pub struct PerftArgs {
    /// Rules preset: hus, rulebook or mancala-world.
    #[arg(long, default_value = defaults::PRESET_NAME)]
    pub rules: String,
    /// Row width, 8 to 32.
    #[arg(long, default_value_t = defaults::WIDTH)]
    pub width: usize,
    /// Deepest ply to count (1 or more).
    #[arg(long)]
    pub depth: u32,
    /// Start from this position (the one-line notation of RULES.md) instead of the
    /// starting position; --rules and --width are then taken from it.
    #[arg(long)]
    pub position: Option<String>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// The raw arguments of `hus line`.
#[derive(Debug, Args)]
pub struct LineArgs {
    /// The pits to play, in order, each in the numbering of the player who plays it
    /// (RULES.md section 2).
    #[arg(value_name = "PIT")]
    pub pits: Vec<usize>,
    /// Rules preset of the starting position: hus, rulebook or mancala-world.
    #[arg(long, default_value = defaults::PRESET_NAME)]
    pub rules: String,
    /// Row width of the starting position, 8 to 32.
    #[arg(long, default_value_t = defaults::WIDTH)]
    pub width: usize,
    /// Start from this position (the one-line notation of RULES.md) instead of the
    /// starting position; it counts as the start of a fresh game.
    #[arg(long, value_name = "NOTATION", conflicts_with_all = ["rules", "width"])]
    pub position: Option<String>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Draw the board after each move, as `hus replay --game` does.
    #[arg(long, conflicts_with = "json")]
    pub boards: bool,
    /// Show only the last N moves (every move is still played, and counts for the end
    /// rules).
    #[arg(long, value_name = "N", conflicts_with = "json")]
    pub last: Option<usize>,
}

/// The raw arguments of `hus match`.
#[derive(Debug, Args)]
#[command(args_override_self = true)]
pub struct MatchArgs {
    /// First bot: a command line, split like a shell would (no shell is run).
    #[arg(value_name = "BOT_A", required_unless_present = "team_a")]
    pub bot_a: Option<String>,
    /// Second bot.
    #[arg(value_name = "BOT_B", required_unless_present = "team_a")]
    pub bot_b: Option<String>,
    /// A team match instead: the bots of team A (two or more command lines), who take
    /// side A's turns one after another in an order drawn by lot for each game.
    #[arg(
        long,
        value_name = "BOT",
        num_args = 2..,
        requires = "team_b",
        conflicts_with_all = ["bot_a", "bot_b"],
        help_heading = "Teams"
    )]
    pub team_a: Vec<String>,
    /// The bots of team B (two or more command lines).
    #[arg(
        long,
        value_name = "BOT",
        num_args = 2..,
        requires = "team_a",
        help_heading = "Teams"
    )]
    pub team_b: Vec<String>,
    /// The teams' names (default team-a and team-b).
    #[arg(
        long,
        value_names = ["NAME_A", "NAME_B"],
        num_args = 2,
        requires = "team_a",
        help_heading = "Teams"
    )]
    pub team_names: Vec<String>,
    /// The rules: --rules and --width.
    #[command(flatten)]
    pub board: BoardArgs,
    /// Games in the set (default 7); with --sprt, the most to play (default 20000, an
    /// even number).
    #[arg(long, value_name = "N")]
    pub games: Option<u32>,
    /// Seed for the lots (who begins each game) and for the first opening; printed and
    /// logged so a set can be re-run. Random when not given.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Start the games from the openings of this file (docs/openings.md), in pairs:
    /// both games of a pair from the same opening, the first mover swapped. The set
    /// takes the file's openings in order from one drawn from the seed, going round the
    /// file.
    #[arg(long, value_name = "FILE")]
    pub openings: Option<std::path::PathBuf>,
    /// Play game pairs until a sequential probability ratio test decides whether bot A
    /// is elo0 or elo1 Elo stronger than bot B: elo0=0,elo1=5,alpha=0.05,beta=0.05
    /// (alpha and beta default to 0.05). --games is then the most games to play.
    #[arg(long, value_name = "elo0=E0,elo1=E1[,alpha=A,beta=B]")]
    pub sprt: Option<String>,
    /// The time control: --move-time or --clock, and --ready-time.
    #[command(flatten)]
    pub time: TimeArgs,
    /// Stop the set once its winner can no longer change.
    #[arg(long)]
    pub early_stop: bool,
    /// Directory for the log and the bots' stderr files.
    #[arg(long, default_value = defaults::LOG_DIR, value_name = "DIR")]
    pub log_dir: std::path::PathBuf,
    /// Print a machine-readable JSON summary on stdout (and nothing else); README,
    /// "The --json summary", lists its fields. Bots are indexed 0 = BOT_A, 1 = BOT_B;
    /// positions list player 0 (games[].first) first.
    #[arg(long)]
    pub json: bool,
    /// Print nothing but errors.
    #[arg(long)]
    pub quiet: bool,
    /// Memory limit per bot process (address space), e.g. 512M, 2G.
    #[arg(long, value_name = "BYTES", help_heading = "Bot limits")]
    pub bot_memory: Option<String>,
    /// CPU time limit per bot process, e.g. 60s, 10m.
    #[arg(long, value_name = "DURATION", help_heading = "Bot limits")]
    pub bot_cpu: Option<String>,
    /// Most open files per bot process.
    #[arg(long, value_name = "N", help_heading = "Bot limits")]
    pub bot_files: Option<u64>,
    /// Working directory of the bots; with --sandbox, the directory they see (default:
    /// each bot's own, that of the file or directory its command names).
    #[arg(long, value_name = "DIR", help_heading = "Bot limits")]
    pub bot_dir: Option<std::path::PathBuf>,
    /// Start bots with an empty environment plus these variables (NAME=value, or NAME
    /// to copy the referee's value); repeat the flag for more.
    #[arg(long = "bot-env", value_name = "VAR", help_heading = "Bot limits")]
    pub bot_env: Vec<String>,
    /// Start bots with an empty environment (plus any --bot-env).
    #[arg(long, help_heading = "Bot limits")]
    pub bot_clean_env: bool,
    /// Sandbox options.
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

/// The rules of a set: `--rules` and `--width` (`hus match`, `hus play`).
#[derive(Clone, Debug, Args)]
pub struct BoardArgs {
    /// Rules preset: hus, rulebook or mancala-world.
    #[arg(long, default_value = defaults::PRESET_NAME)]
    pub rules: String,
    /// Row width, 8 to 32.
    #[arg(long, default_value_t = defaults::WIDTH)]
    pub width: usize,
}

impl BoardArgs {
    /// The rules, checked.
    pub fn checked(&self) -> anyhow::Result<engine::Rules> {
        let preset: engine::Preset = self.rules.parse().context("invalid --rules")?;
        engine::Rules::new(preset, self.width).context("invalid --width")
    }
}

/// The time control of a set: `--move-time` or `--clock`, and `--ready-time` (`hus
/// match`, `hus play`).
#[derive(Clone, Debug, Args)]
pub struct TimeArgs {
    /// Time for each move: 250ms, 1.5s, 2m, or a number of milliseconds.
    #[arg(long, default_value_t = show_duration(defaults::MOVE_TIME), value_name = "DURATION")]
    pub move_time: String,
    /// A chess clock per game instead of a per-move limit: BASE+INCREMENT, e.g. 60s+1s.
    #[arg(long, value_name = "BASE+INC")]
    pub clock: Option<String>,
    /// Time a bot has from its start to answer hello with ready.
    #[arg(long, default_value_t = show_duration(defaults::READY_TIME), value_name = "DURATION")]
    pub ready_time: String,
}

impl TimeArgs {
    /// The time control and the start-up allowance, checked.
    pub fn checked(&self) -> anyhow::Result<(crate::config::TimeControl, std::time::Duration)> {
        use crate::config::{check_positive, parse_clock, parse_duration, TimeControl};
        let move_time = parse_duration(&self.move_time).context("invalid --move-time")?;
        let time = match &self.clock {
            Some(text) => parse_clock(text).context("invalid --clock")?,
            None => TimeControl::PerMove(check_positive(move_time, "--move-time")?),
        };
        let ready_time = parse_duration(&self.ready_time).context("invalid --ready-time")?;
        Ok((time, check_positive(ready_time, "--ready-time")?))
    }
}

impl MatchArgs {
    /// The per-bot limits, checked (the sandbox aside: see [`SandboxArgs::sandbox_for`]).
    pub fn limits(&self) -> anyhow::Result<crate::limits::Limits> {
        let memory = self
            .bot_memory
            .as_deref()
            .map(parse_bytes)
            .transpose()
            .context("invalid --bot-memory")?;
        let cpu_seconds = self
            .bot_cpu
            .as_deref()
            .map(|t| crate::config::parse_duration(t).map(|d| d.as_secs().max(1)))
            .transpose()
            .context("invalid --bot-cpu")?;
        if let Some(dir) = &self.bot_dir {
            if !dir.is_dir() {
                anyhow::bail!("--bot-dir {} is not a directory", dir.display());
            }
        }
        let env = if self.bot_clean_env || !self.bot_env.is_empty() {
            Some(self.bot_env.clone())
        } else {
            None
        };
        if self.bot_files == Some(0) {
            anyhow::bail!("--bot-files must be at least 1");
        }
        Ok(crate::limits::Limits {
            memory,
            cpu_seconds,
            open_files: self.bot_files,
            cwd: self.bot_dir.clone(),
            env,
            nice: None,
            sandbox: None,
        })
    }
}

//! The raw arguments of `hus play`, as clap parses them; [`PlayConfig`] checks them.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Args;
use referee::{BoardArgs, BotSpec, Side, TimeArgs, TimeControl};

/// The person's time per move when `--my-time` is not given: no limit in practice (a
/// week per move: the referee's clocks need a deadline).
pub const NO_LIMIT: Duration = Duration::from_secs(7 * 24 * 3600);

/// The raw arguments of `hus play`.
#[derive(Debug, Args)]
pub struct PlayArgs {
    /// The bot to play: a command line, split like a shell would (no shell is run), as
    /// for `hus match`; or `random` for the built-in random mover.
    #[arg(value_name = "BOT")]
    pub bot: String,
    /// The rules: --rules and --width.
    #[command(flatten)]
    pub board: BoardArgs,
    /// The bot's time control (--move-time or --clock, and --ready-time).
    #[command(flatten)]
    pub time: TimeArgs,
    /// Your own time for each move (250ms, 1.5s, 2m, 1h); default: no limit.
    #[arg(long, value_name = "DURATION")]
    pub my_time: Option<String>,
    /// Who begins the first game: me, bot, or lots (drawn from the seed, as `hus
    /// match` draws every game's). Later games are drawn by lot.
    #[arg(long, default_value = "me", value_name = "WHO")]
    pub first: String,
    /// Games in the set.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub games: u32,
    /// Seed of the lots (and of `random`'s choices); random when not given.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Directory for the log and the bot's stderr file.
    #[arg(long, default_value = referee::defaults::LOG_DIR, value_name = "DIR")]
    pub log_dir: PathBuf,
    /// Your name on the board and in the log.
    #[arg(long, default_value = "you", value_name = "NAME")]
    pub name: String,
    /// Colour: auto (when stdout is a terminal and NO_COLOR is not set), always or never.
    #[arg(long, default_value = "auto", value_name = "WHEN")]
    pub color: String,
    /// Play in a browser instead of the terminal: serve the board on loopback, print
    /// its address, and click a pit to play it.
    #[arg(long)]
    pub web: bool,
    /// With --web: the address to serve on, a loopback address (default 127.0.0.1 and
    /// a free port).
    #[arg(long, value_name = "ADDR", requires = "web")]
    pub listen: Option<String>,
}

/// Who begins the first game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum First {
    /// The person.
    Me,
    /// The bot.
    Bot,
    /// Drawn by lot from the seed.
    Lots,
}

/// `hus play`, checked.
#[derive(Clone, Debug)]
pub struct PlayConfig {
    /// The bot's command.
    pub bot: BotSpec,
    /// The set: rules, games, seed, the bot's time control.
    pub set: referee::SetConfig,
    /// The person's time control.
    pub my_time: TimeControl,
    /// Who begins the first game.
    pub first: First,
    /// Where the log goes.
    pub log_dir: PathBuf,
    /// The person's name.
    pub name: String,
    /// Colour the board.
    pub color: bool,
}

impl PlayConfig {
    /// Checks the arguments: every problem named with its flag.
    pub fn from_args(args: &PlayArgs) -> Result<PlayConfig> {
        let rules = args.board.checked()?;
        let (time, ready_time) = args.time.checked()?;
        let my_time = match &args.my_time {
            None => TimeControl::PerMove(NO_LIMIT),
            Some(text) => {
                let d = referee::parse_duration(text).context("invalid --my-time")?;
                if d.is_zero() || d > NO_LIMIT {
                    bail!("--my-time must be more than 0 and at most a week, got {text:?}");
                }
                TimeControl::PerMove(d)
            }
        };
        let first = match args.first.as_str() {
            "me" => First::Me,
            "bot" => First::Bot,
            "lots" => First::Lots,
            other => bail!("invalid --first {other:?}: use me, bot or lots"),
        };
        if args.games == 0 || args.games > 1000 {
            bail!("--games must be 1 to 1000, got {}", args.games);
        }
        let name = args.name.trim();
        if name.is_empty() || name.chars().any(char::is_control) || name.len() > 40 {
            bail!("--name must be 1 to 40 characters, none of them control characters");
        }
        let color = match args.color.as_str() {
            "auto" => {
                use std::io::IsTerminal;
                std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
            }
            "always" => true,
            "never" => false,
            other => bail!("invalid --color {other:?}: use auto, always or never"),
        };
        let seed = args.seed.unwrap_or_else(referee::fresh_seed);
        let bot = match args.bot.as_str() {
            "random" => {
                let hus = std::env::current_exe()
                    .context("cannot find the hus binary itself (to run the random mover)")?;
                BotSpec {
                    command: format!("hus random-bot --seed {seed}"),
                    argv: vec![
                        hus.display().to_string(),
                        "random-bot".into(),
                        "--seed".into(),
                        seed.to_string(),
                    ],
                }
            }
            command => BotSpec::parse(command).context("invalid BOT")?,
        };
        Ok(PlayConfig {
            bot,
            set: referee::SetConfig {
                rules,
                games: args.games,
                seed,
                time,
                ready_time,
                early_stop: false,
                openings: Vec::new(),
                sprt: None,
            },
            my_time,
            first,
            log_dir: args.log_dir.clone(),
            name: name.to_string(),
            color,
        })
    }

    /// The side the person plays: the one `--first` asks for, given the lot of the
    /// first game.
    pub fn person_side(&self) -> Side {
        let lot = self.set.first_movers().first().copied().unwrap_or(Side::A);
        match self.first {
            First::Me => lot,
            First::Bot => lot.other(),
            First::Lots => Side::A,
        }
    }
}

//! `hus match`'s arguments, checked into a [`MatchConfig`]: the bots (or teams), their
//! limits and sandboxes, and the set's [`SetConfig`].

use std::path::PathBuf;

use anyhow::{bail, Context, Result};

use crate::cli::args::MatchArgs;
use crate::config::{fresh_seed, BotSpec, SetConfig};
use crate::defaults;
use crate::limits::Limits;
use crate::side::{BySide, Side};

/// `hus match`, checked.
#[derive(Clone, Debug)]
pub struct MatchConfig {
    /// The commands to run, side A's and side B's: one each, or a team's members (with
    /// --sandbox, a relative path that named a bot's directory is made absolute).
    pub bots: BySide<Vec<BotSpec>>,
    /// Each bot's limits and sandbox, as `bots`.
    pub limits: BySide<Vec<Limits>>,
    /// A team match: the teams' names.
    pub teams: Option<BySide<String>>,
    pub set: SetConfig,
    pub log_dir: PathBuf,
    pub json: bool,
    pub quiet: bool,
}

impl MatchConfig {
    pub fn from_args(args: &MatchArgs) -> Result<MatchConfig> {
        let rules = args.board.checked()?;
        let sprt = match &args.sprt {
            Some(text) => Some(
                crate::sprt::parse_sprt(text)
                    .map_err(|e| anyhow::anyhow!("invalid --sprt: {e}"))?,
            ),
            None => None,
        };
        let games = args.games.unwrap_or(if sprt.is_some() {
            defaults::SPRT_GAMES
        } else {
            defaults::GAMES
        });
        if games == 0 {
            bail!("--games must be at least 1");
        }
        if games > 100_000 {
            bail!("--games must be at most 100000, got {games}");
        }
        if sprt.is_some() {
            if games % 2 == 1 {
                bail!("--games must be even with --sprt (games are played in pairs), got {games}");
            }
            if args.early_stop {
                bail!(
                    "--early-stop cannot be combined with --sprt (the test decides when to stop)"
                );
            }
        }
        let (time, ready_time) = args.time.checked()?;
        let seed = match args.seed {
            Some(seed) => seed,
            None => fresh_seed(),
        };
        let openings = match &args.openings {
            Some(path) => crate::openings::openings_for_set(
                &crate::openings::read_openings(path, rules).context("invalid --openings")?,
                seed,
                games,
            ),
            None => Vec::new(),
        };
        let base = args.limits()?;
        let (commands, teams) = match (&args.bot_a, &args.bot_b) {
            (Some(a), Some(b)) if args.team_a.is_empty() => {
                (BySide::new(vec![a.clone()], vec![b.clone()]), None)
            }
            _ => {
                if args.team_a.len() < 2 || args.team_b.len() < 2 {
                    bail!("a team match needs two or more bots in --team-a and in --team-b");
                }
                let names = match args.team_names.as_slice() {
                    [] => BySide::new("team-a".to_string(), "team-b".to_string()),
                    [a, b] if a.trim().is_empty() || b.trim().is_empty() => {
                        bail!("--team-names: a team's name cannot be empty")
                    }
                    [a, b] if a == b => bail!("--team-names: both teams are named {a:?}"),
                    [a, b] => BySide::new(a.clone(), b.clone()),
                    _ => bail!("--team-names takes two names"),
                };
                (
                    BySide::new(args.team_a.clone(), args.team_b.clone()),
                    Some(names),
                )
            }
        };
        let mut bots: BySide<Vec<BotSpec>> = BySide::default();
        let mut limits: BySide<Vec<Limits>> = BySide::default();
        for b in Side::BOTH {
            for (i, command) in commands[b].iter().enumerate() {
                let which = match &teams {
                    None => format!("bot {}", b.letter()),
                    Some(names) => format!("bot {} of team {}", i + 1, names[b]),
                };
                let spec = match &teams {
                    None => BotSpec::parse(command)?,
                    Some(_) => {
                        BotSpec::parse(command).with_context(|| format!("invalid {which}"))?
                    }
                };
                let (sandbox, spec) = args
                    .sandbox
                    .sandbox_for(&spec, args.bot_dir.as_deref())
                    .with_context(|| format!("--sandbox for {which}"))?;
                let mut own = base.clone();
                own.sandbox = sandbox;
                bots[b].push(spec);
                limits[b].push(own);
            }
        }
        Ok(MatchConfig {
            bots,
            limits,
            teams,
            set: SetConfig {
                rules,
                games,
                seed,
                time,
                ready_time,
                early_stop: args.early_stop,
                openings,
                sprt,
            },
            log_dir: args.log_dir.clone(),
            json: args.json,
            quiet: args.quiet,
        })
    }
}

//! What a running league shows on stderr: on a terminal, a bar with the sets done, the
//! games per second, the time left and the top of the table (indicatif); otherwise one
//! plain line per finished set, which reads well in a log file or CI output. Either
//! way, each bot that faulted in a set gets a line with its first fault
//! ([`fault_lines`]; `hus serve` prints the same).

use std::collections::HashMap;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::schedule::SetKey;
use referee::{BySide, Side};

use crate::store::SetOutcome;

/// For each bot that faulted in a set, its count of faults and the first in words, its
/// detail as the log keeps it (a crash's with the last line of the bot's stderr and
/// the file's path): `bad: 2 faults, the first in game 1: crash: closed its stdout
/// (exit status 2); last line of its stderr (...): ...`.
pub fn fault_lines(key: &SetKey, outcome: &SetOutcome) -> Vec<String> {
    let names = BySide::new(&key.a, &key.b);
    Side::BOTH
        .into_iter()
        .filter_map(|side| {
            let name = names[side];
            let mut faults = outcome.faults.iter().filter(|f| f.bot == side);
            let first = faults.next()?;
            let n = 1 + faults.count();
            Some(format!(
                "{name}: {n} fault{}, the first in game {}: {}: {}",
                if n == 1 { "" } else { "s" },
                first.game,
                first.kind,
                first.detail
            ))
        })
        .collect()
}

/// How many bots the bar's live table shows.
const TOP: usize = 3;

/// Shows a league's progress.
pub struct Reporter {
    bar: Option<ProgressBar>,
    plain: bool,
    started: Instant,
    games: u64,
    done: u64,
    total: u64,
    points: HashMap<String, u64>,
}

impl Reporter {
    /// A reporter for `total` sets of which `done` are finished, with each bot's points
    /// so far. `quiet` shows nothing; otherwise a bar on a terminal, plain lines
    /// elsewhere.
    pub fn new(total: u64, done: u64, points: HashMap<String, u64>, quiet: bool) -> Reporter {
        let terminal = !quiet && std::io::stderr().is_terminal();
        let bar = terminal.then(|| {
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template(
                "{bar:30.cyan/blue} {pos}/{len} sets, {elapsed_precise}, {eta} left  {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style.progress_chars("=> "));
            bar.set_position(done);
            bar.enable_steady_tick(Duration::from_millis(500));
            bar
        });
        let reporter = Reporter {
            bar,
            plain: !quiet && !terminal,
            started: Instant::now(),
            games: 0,
            done,
            total,
            points,
        };
        if let Some(bar) = &reporter.bar {
            bar.set_message(reporter.top());
        }
        reporter
    }

    /// A line for the user, above the bar when there is one.
    pub fn note(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }

    /// A set finished.
    pub fn finished(&mut self, key: &SetKey, outcome: &SetOutcome) {
        self.done += 1;
        self.games += outcome.games.len() as u64;
        let names = [&key.a, &key.b];
        for (name, points) in names.iter().zip(outcome.points) {
            *self.points.entry((*name).clone()).or_insert(0) += u64::from(points);
        }
        let rate = self.games as f64 / self.started.elapsed().as_secs_f64().max(1e-3);
        if let Some(bar) = &self.bar {
            bar.set_position(self.done);
            bar.set_message(format!("{rate:.1} games/s  {}", self.top()));
            for line in fault_lines(key, outcome) {
                bar.println(format!("{key}: {line}"));
            }
        } else if self.plain {
            let result = match outcome.winner {
                Some(w) => format!("{} wins the set", names[w.index()]),
                None => "the set is drawn".to_string(),
            };
            let faults = outcome.faults.len();
            eprintln!(
                "[{}/{}] {key}: {}-{}, {result} ({}, {}); {rate:.1} games/s",
                self.done,
                self.total,
                outcome.points[0],
                outcome.points[1],
                referee::plural(outcome.games.len() as u64, "game", "games"),
                referee::plural(faults as u64, "fault", "faults"),
            );
            for line in fault_lines(key, outcome) {
                eprintln!("  {line}");
            }
        }
    }

    /// The leaders by points: `alpha 40, greedy 31, random 9`.
    fn top(&self) -> String {
        let mut all: Vec<(&String, &u64)> = self.points.iter().collect();
        all.sort_by(|x, y| y.1.cmp(x.1).then(x.0.cmp(y.0)));
        all.iter()
            .take(TOP)
            .map(|(name, points)| format!("{name} {points}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

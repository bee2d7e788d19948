//! How standings are printed: a table for people, JSON (docs/league.md), CSV and
//! Markdown.

use std::fmt::Write as _;

use super::*;

/// How standings are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// A table for people.
    Text,
    /// One JSON object with every figure (docs/league.md).
    Json,
    /// One line per bot, with a header line.
    Csv,
    /// A Markdown table.
    Markdown,
}

impl Standings {
    /// The standings in `format`, ending with a newline.
    pub fn render(&self, format: OutputFormat) -> String {
        match format {
            OutputFormat::Text => self.text(),
            OutputFormat::Json => {
                let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
                s.push('\n');
                s
            }
            OutputFormat::Csv => self.csv(),
            OutputFormat::Markdown => self.markdown(),
        }
    }

    fn label(b: &BotStanding) -> String {
        if b.active {
            b.name.clone()
        } else {
            format!("{} (removed)", b.name)
        }
    }

    fn rating(b: &BotStanding) -> String {
        b.rating
            .map(|r| format!("{:.0}", r.value))
            .unwrap_or_else(|| "-".to_string())
    }

    fn interval(b: &BotStanding) -> String {
        b.rating
            .map(|r| format!("[{:.0}, {:.0}]", r.low, r.high))
            .unwrap_or_else(|| "-".to_string())
    }

    /// The probability that `a` is stronger than `b`, from the fit.
    pub(super) fn los(&self, a: &str, b: &str) -> Option<f64> {
        let r = self.ratings.as_ref()?;
        r.pairs.iter().find_map(|p| {
            if p.a == a && p.b == b {
                Some(p.los)
            } else if p.a == b && p.b == a {
                Some(1.0 - p.los)
            } else {
                None
            }
        })
    }

    /// Below the table: how the ratings were fitted, and the likelihood of superiority
    /// of each pair as a matrix (up to `MAX_LOS_MATRIX` bots; the JSON has every pair).
    fn ratings_text(&self, s: &mut String) {
        let Some(r) = &self.ratings else {
            if let Some(e) = &self.ratings_error {
                let _ = writeln!(
                    s,
                    "
no ratings: {e}"
                );
            }
            return;
        };
        let anchor = match &r.anchor {
            Some(bot) => format!("{bot} held at {:.0}", r.anchor_rating),
            None => format!("pool average {:.0}", r.anchor_rating),
        };
        let a = r.first_move_advantage;
        let _ = writeln!(
            s,
            "
ratings: Elo scale, fitted to all {} games at once, {anchor}, {:.0}% intervals; first-move advantage {:+.0} [{:+.0}, {:+.0}]",
            self.games_played,
            r.confidence * 100.0,
            a.value,
            a.low,
            a.high
        );
        let rated: Vec<&BotStanding> = self.bots.iter().filter(|b| b.rating.is_some()).collect();
        if rated.len() > MAX_LOS_MATRIX {
            return;
        }
        let width = rated.iter().map(|b| b.name.len()).max().unwrap_or(0);
        let _ = writeln!(s, "likelihood of superiority (row over column):");
        let _ = write!(s, "  {:<width$}", "");
        for b in &rated {
            let _ = write!(s, "  {:>w$}", b.name, w = b.name.len().max(4));
        }
        s.push('\n');
        for row in &rated {
            let _ = write!(s, "  {:<width$}", row.name);
            for col in &rated {
                let cell = match self.los(&row.name, &col.name) {
                    Some(p) if row.name != col.name => format!("{p:.2}"),
                    _ => "-".to_string(),
                };
                let _ = write!(s, "  {:>w$}", cell, w = col.name.len().max(4));
            }
            s.push('\n');
        }
    }

    fn ms(b: &BotStanding) -> String {
        b.mean_move_ms
            .map(|m| format!("{m:.2}"))
            .unwrap_or_else(|| "-".to_string())
    }

    /// The header of the table for people: settings and progress.
    pub fn summary_line(&self) -> String {
        let l = &self.league;
        let p = &self.progress;
        let mut s = format!(
            "{} at width {}, {}, {} games per set, seed {}\n{} of {} sets played ({} games)",
            l.rules,
            l.width,
            l.time,
            l.games_per_set,
            l.seed,
            p.sets_done,
            p.sets_scheduled,
            self.games_played
        );
        if p.sets_done_elsewhere > 0 {
            let _ = write!(
                s,
                ", and {} sets of bots no longer scheduled",
                p.sets_done_elsewhere
            );
        }
        s
    }

    fn text(&self) -> String {
        let mut s = self.summary_line();
        s.push_str("\n\n");
        let width = self
            .bots
            .iter()
            .map(|b| Self::label(b).len())
            .max()
            .unwrap_or(3)
            .max(3);
        let _ = writeln!(
            s,
            "{:>4}  {:<width$}  {:>6}  {:>14}  {:>6}  {:>10}  {:>11}  {:>6}  {:>9}",
            "rank",
            "bot",
            "rating",
            "95% interval",
            "points",
            "sets w-d-l",
            "games w-d-l",
            "faults",
            "ms/move"
        );
        for b in &self.bots {
            let _ = writeln!(
                s,
                "{:>4}  {:<width$}  {:>6}  {:>14}  {:>6}  {:>10}  {:>11}  {:>6}  {:>9}",
                b.rank,
                Self::label(b),
                Self::rating(b),
                Self::interval(b),
                b.points,
                b.sets.show(),
                b.games.show(),
                b.faults.total,
                Self::ms(b)
            );
        }
        if !self.league.teams.is_empty() {
            s.push_str("\nteams:\n");
            for t in &self.league.teams {
                let _ = writeln!(s, "  {}: {}", t.name, t.members.join(", "));
            }
        }
        let faulty: Vec<&BotStanding> = self.bots.iter().filter(|b| b.faults.total > 0).collect();
        if !faulty.is_empty() {
            s.push_str("\nfaults:\n");
            for b in faulty {
                let kinds: Vec<String> = b
                    .faults
                    .by_kind
                    .iter()
                    .map(|(k, n)| format!("{n} {k}"))
                    .collect();
                let _ = writeln!(s, "  {}: {}", b.name, kinds.join(", "));
            }
        }
        let f = &self.first_mover;
        if self.games_played > 0 {
            let _ = writeln!(
                s,
                "\nthe first mover won {}, drew {} and lost {} of {} games",
                f.won, f.drawn, f.lost, self.games_played
            );
        }
        self.ratings_text(&mut s);
        s
    }

    fn csv(&self) -> String {
        let mut s = String::from(
            "rank,name,active,rating,rating_low,rating_high,points,sets_played,sets_won,sets_drawn,sets_lost,games_played,games_won,games_drawn,games_lost,faults,faults_by_kind,moves,mean_move_ms\n",
        );
        for b in &self.bots {
            let kinds: Vec<String> = b
                .faults
                .by_kind
                .iter()
                .map(|(k, n)| format!("{k}={n}"))
                .collect();
            let _ = writeln!(
                s,
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                b.rank,
                b.name,
                b.active,
                b.rating
                    .map(|r| format!("{:.1}", r.value))
                    .unwrap_or_default(),
                b.rating
                    .map(|r| format!("{:.1}", r.low))
                    .unwrap_or_default(),
                b.rating
                    .map(|r| format!("{:.1}", r.high))
                    .unwrap_or_default(),
                b.points,
                b.sets.played,
                b.sets.won,
                b.sets.drawn,
                b.sets.lost,
                b.games.played,
                b.games.won,
                b.games.drawn,
                b.games.lost,
                b.faults.total,
                kinds.join(";"),
                b.moves,
                b.mean_move_ms
                    .map(|m| format!("{m:.3}"))
                    .unwrap_or_default()
            );
        }
        s
    }

    fn markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "{}\n", self.summary_line().replace('\n', "; "));
        s.push_str(
            "| rank | bot | rating | 95% interval | points | sets w-d-l | games w-d-l | faults | ms/move |\n",
        );
        s.push_str("|---:|---|---:|---:|---:|---:|---:|---|---:|\n");
        for b in &self.bots {
            let kinds: Vec<String> = b
                .faults
                .by_kind
                .iter()
                .map(|(k, n)| format!("{n} {k}"))
                .collect();
            let faults = if kinds.is_empty() {
                "0".to_string()
            } else {
                kinds.join(", ")
            };
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                b.rank,
                Self::label(b),
                Self::rating(b),
                Self::interval(b),
                b.points,
                b.sets.show(),
                b.games.show(),
                faults,
                Self::ms(b)
            );
        }
        s
    }
}

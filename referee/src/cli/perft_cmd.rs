//! `hus perft`: move-sequence counts per depth, then the speed.

use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use engine::{AnyPosition, Board, Preset, Rules};

use crate::cli::args::PerftArgs;

/// Deepest depth accepted: deeper counts overflow no counter but would run for days.
const MAX_DEPTH: u32 = 30;

/// `hus perft`: counts the move sequences from a position, depth by depth.
pub fn run(args: &PerftArgs) -> Result<ExitCode> {
    let start = start_position(args)?;
    if args.depth == 0 || args.depth > MAX_DEPTH {
        bail!(
            "--depth must be between 1 and {MAX_DEPTH}, got {}",
            args.depth
        );
    }
    let clock = Instant::now();
    // Matched once: each board type runs perft on itself, the narrow one at full speed.
    let counts = match start {
        AnyPosition::Narrow(p) => engine::perft(&p, args.depth),
        AnyPosition::Wide(p) => engine::perft(&p, args.depth),
    };
    let seconds = clock.elapsed().as_secs_f64();
    let nodes: u64 = counts.iter().sum();
    let nps = if seconds > 0.0 {
        nodes as f64 / seconds
    } else {
        0.0
    };

    let mut out = std::io::stdout().lock();
    if args.json {
        let json = serde_json::json!({
            "position": start.to_string(),
            "rules": start.rules().preset().name(),
            "width": start.width(),
            "counts": counts,
            "nodes": nodes,
            "seconds": seconds,
            "nodes_per_second": nps.round(),
        });
        writeln!(out, "{json}")?;
    } else {
        for (depth, count) in counts.iter().enumerate() {
            writeln!(out, "{} {}", depth + 1, count)?;
        }
        writeln!(
            out,
            "{:.0} nodes per second ({nodes} nodes in {seconds:.3} s)",
            nps
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn start_position(args: &PerftArgs) -> Result<AnyPosition> {
    if let Some(text) = &args.position {
        return text
            .parse()
            .with_context(|| format!("invalid --position {text:?}"));
    }
    let preset: Preset = args.rules.parse().context("invalid --rules")?;
    let rules = Rules::new(preset, args.width).context("invalid --width")?;
    Ok(AnyPosition::start(rules))
}

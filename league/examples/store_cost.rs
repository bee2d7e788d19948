//! The PostgreSQL store's cost per finished set, without any game: what a worker asks
//! of the store for one set (a claim, one lease renewal, the heartbeat, the result
//! with its compressed log), timed over many sets, by `threads` workers at once (one
//! connection each). Run by tests/bench/workers_bench.py, which reports the figures in
//! docs/deploy.md:
//!
//! ```text
//! cargo run --release -p league --example store_cost -- URL LOG.jsonl SETS THREADS
//! ```
//!
//! Prints one JSON line: sets, threads, wall seconds, results per second, and the
//! median and 90th percentile of one set's store time (ms) as a worker sees it.

use std::time::{Duration, Instant};

use league::{
    schedule, BotEntry, FaultRow, Format, GameRow, LogPlace, PgStore, Recorded, Schedule,
    SetOutcome,
};
use referee::{FaultKind, GameEndReason, Side};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 {
        return Err("usage: store_cost URL LOG.jsonl SETS THREADS".into());
    }
    let url = args[1].clone();
    let log = std::fs::read(&args[2])?;
    let sets: usize = args[3].parse()?;
    let threads: usize = args[4].parse()?;

    // A league with enough bots for SETS sets in one round-robin round.
    let mut n = 2;
    while n * (n - 1) / 2 < sets {
        n += 1;
    }
    let names: Vec<String> = (0..n).map(|i| format!("b{i:03}")).collect();
    let entries: Vec<BotEntry> = names
        .iter()
        .map(|name| BotEntry {
            name: name.clone(),
            command: "true".into(),
        })
        .collect();
    let plan: Vec<_> = schedule(&names, &Format::RoundRobin, 1, 1)
        .into_iter()
        .take(sets)
        .collect();
    let mut store = PgStore::connect(&url)?;
    store.sync(&entries, &plan)?;
    drop(store);

    let outcome = SetOutcome {
        games: (1..=7)
            .map(|g| GameRow {
                game: g,
                first: Side::BOTH[g as usize % 2],
                winner: Some(Side::A),
                points: [2, 0],
                reason: GameEndReason::NoMoves,
                plies: 80,
                double: false,
                faulted: Vec::new(),
            })
            .collect(),
        faults: vec![FaultRow {
            game: 3,
            ply: 12,
            bot: Side::B,
            kind: FaultKind::TimeOut,
            detail: "no move within 100 ms".into(),
        }],
        points: [14, 0],
        winner: Some(Side::A),
        moves: [280, 280],
        move_ms: [100.0, 100.0],
        // Each set's own, as a worker names it.
        log: LogPlace::Stored(0),
    };
    let lease = Duration::from_secs(30);
    let start = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let url = url.clone();
            let log = log.clone();
            let mut outcome = outcome.clone();
            std::thread::spawn(move || -> Result<Vec<f64>, String> {
                let mut store = PgStore::connect(&url).map_err(|e| e.to_string())?;
                store.set_name(&format!("bench-{t}"));
                let mut times = Vec::new();
                loop {
                    let one = Instant::now();
                    let Some(set) = store.claim(lease, &[]).map_err(|e| e.to_string())? else {
                        break;
                    };
                    store
                        .heartbeat(&league::Heartbeat {
                            concurrency: 1,
                            in_flight: 1,
                            ..Default::default()
                        })
                        .map_err(|e| e.to_string())?;
                    store
                        .renew(set.id, set.attempts, lease)
                        .map_err(|e| e.to_string())?;
                    outcome.log = LogPlace::Stored(set.id);
                    let r = store
                        .record_attempt(set.id, set.attempts, &outcome, &log)
                        .map_err(|e| e.to_string())?;
                    if r != Recorded::Counted {
                        return Err(format!("set {} not counted", set.id));
                    }
                    times.push(one.elapsed().as_secs_f64() * 1000.0);
                }
                Ok(times)
            })
        })
        .collect();
    let mut times = Vec::new();
    for h in handles {
        let part = h.join().map_err(|_| "a thread panicked")??;
        times.extend(part);
    }
    let wall = start.elapsed().as_secs_f64();
    times.sort_by(f64::total_cmp);
    let pick = |q: f64| times[((times.len() as f64 - 1.0) * q).round() as usize];
    println!(
        "{{\"sets\": {}, \"threads\": {threads}, \"wall_s\": {wall:.3}, \"results_per_s\": {:.1}, \"median_ms\": {:.3}, \"p90_ms\": {:.3}, \"log_bytes\": {}}}",
        times.len(),
        times.len() as f64 / wall,
        pick(0.5),
        pick(0.9),
        log.len()
    );
    Ok(())
}

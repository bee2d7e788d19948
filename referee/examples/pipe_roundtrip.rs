//! The physical floor of a referee ply: one line out over a pipe, one line back.
//!
//! ```text
//! cargo run --release -p referee --example pipe_roundtrip -- [N] [--json]
//! ```
//!
//! The program starts a copy of itself (`current_exe()` with the argument `echo`) with
//! its stdin and stdout on pipes. The child echoes every line it reads (buffered line
//! reader, write, flush). The parent writes a line about as long as a `turn` message
//! (~150 bytes), flushes, and waits for the echo: 1000 warm-up round trips, then N timed
//! ones (default 20000), each timed on its own with `Instant`. It prints the median and
//! mean microseconds per round trip and the round trips per second (from the mean); with
//! `--json`, one JSON object instead:
//!
//! ```text
//! {"round_trips":20000,"line_bytes":150,"median_us":..,"mean_us":..,"p90_us":..,"round_trips_per_s":..}
//! ```
//!
//! A referee ply costs at least this much: the referee writes the `turn` line to one bot
//! and reads its `move` line, with two context switches each way. `tests/bench/throughput.sh`
//! compares the referee's cost per ply with this figure.
//!
//! Standard library only.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

const WARM_UP: usize = 1000;
const DEFAULT_ROUND_TRIPS: usize = 20_000;

/// About the size of a `turn` message for width 8 (PROTOCOL.md), newline included.
const LINE: &str = concat!(
    r#"{"type":"turn","game":1,"ply":2,"you":[1,1,1,0,2,2,2,0,3,0,3,3,0,3,3,0],"#,
    r#""opponent":[1,1,1,0,2,2,2,2,2,2,2,2,2,0,3,0],"legal":[4,5,6,8,10],"last":13}"#,
    "\n"
);

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("echo") {
        return match echo() {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("pipe_roundtrip echo: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let mut round_trips = DEFAULT_ROUND_TRIPS;
    let mut json = false;
    for arg in &args {
        if arg == "--json" {
            json = true;
        } else if let Ok(n) = arg.parse::<usize>() {
            if n == 0 {
                eprintln!("pipe_roundtrip: N must be at least 1");
                return ExitCode::from(2);
            }
            round_trips = n;
        } else {
            eprintln!("usage: pipe_roundtrip [N] [--json]");
            return ExitCode::from(2);
        }
    }
    match parent(round_trips, json) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pipe_roundtrip: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The child: every line read from stdin goes back out on stdout, flushed at once.
fn echo() -> std::io::Result<()> {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in BufReader::new(stdin.lock()).lines() {
        let line = line?;
        out.write_all(line.as_bytes())?;
        out.write_all(b"\n")?;
        out.flush()?;
    }
    Ok(())
}

fn parent(round_trips: usize, json: bool) -> std::io::Result<()> {
    let exe = std::env::current_exe()?;
    let mut child = Command::new(exe)
        .arg("echo")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()?;
    let mut to_child = child.stdin.take().expect("piped stdin");
    let mut from_child = BufReader::new(child.stdout.take().expect("piped stdout"));
    let mut reply = String::with_capacity(256);
    for _ in 0..WARM_UP {
        round_trip(&mut to_child, &mut from_child, &mut reply)?;
    }
    let mut samples_ns: Vec<u64> = Vec::with_capacity(round_trips);
    let start = Instant::now();
    for _ in 0..round_trips {
        let t = Instant::now();
        round_trip(&mut to_child, &mut from_child, &mut reply)?;
        samples_ns.push(t.elapsed().as_nanos() as u64);
    }
    let total = start.elapsed();
    drop(to_child); // EOF: the child's loop ends.
    child.wait()?;

    samples_ns.sort_unstable();
    let median_us = median(&samples_ns) / 1000.0;
    let mean_us = samples_ns.iter().sum::<u64>() as f64 / round_trips as f64 / 1000.0;
    let p90_us = samples_ns[(round_trips * 9 / 10).min(round_trips - 1)] as f64 / 1000.0;
    let per_s = round_trips as f64 / total.as_secs_f64();
    let line_bytes = LINE.len() - 1;
    if json {
        println!(
            "{{\"round_trips\":{round_trips},\"line_bytes\":{line_bytes},\"median_us\":{median_us:.3},\"mean_us\":{mean_us:.3},\"p90_us\":{p90_us:.3},\"round_trips_per_s\":{per_s:.0}}}"
        );
    } else {
        println!("pipe round trip, {line_bytes}-byte line, {round_trips} round trips after {WARM_UP} warm-up:");
        println!("  median {median_us:.2} us, mean {mean_us:.2} us, p90 {p90_us:.2} us");
        println!("  {per_s:.0} round trips/s");
    }
    Ok(())
}

/// Writes the line, flushes, and reads the echo into `reply`.
fn round_trip(
    to_child: &mut impl Write,
    from_child: &mut impl BufRead,
    reply: &mut String,
) -> std::io::Result<()> {
    to_child.write_all(LINE.as_bytes())?;
    to_child.flush()?;
    reply.clear();
    if from_child.read_line(reply)? == 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "the echo child closed its stdout",
        ));
    }
    if reply.len() != LINE.len() {
        return Err(std::io::Error::other("the echo differs from the line sent"));
    }
    Ok(())
}

/// Median of sorted samples, in the samples' unit.
fn median(sorted: &[u64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2] as f64
    } else {
        (sorted[n / 2 - 1] as f64 + sorted[n / 2] as f64) / 2.0
    }
}

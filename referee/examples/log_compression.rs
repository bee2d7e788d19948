//! How a finished set's log compresses, by method: the measurement behind
//! `referee::LOG_LEVEL` (docs/league.md, Speed). Not a test.
//!
//!     cargo run --release -p referee --example log_compression -- LOG...
//!
//! For each method (gzip at level 9 through flate2, as logs were compressed before; zstd
//! at several levels, with the window and checksum `compress_log` uses), it compresses
//! every file given (plain JSON Lines logs, say a league's `logs/*.jsonl` kept plain),
//! five times each, and prints the total of the compressed sizes and the median CPU
//! time of a whole pass, with the sizes and time per file on average.

use std::io::Write;
use std::time::{Duration, Instant};

/// A way to compress a log's text.
type Compress = Box<dyn Fn(&[u8]) -> Vec<u8>>;

fn gzip9(text: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(text).expect("gzip in memory");
    gz.finish().expect("gzip in memory")
}

fn zstd_at(level: i32) -> impl Fn(&[u8]) -> Vec<u8> {
    move |text| {
        let mut z = zstd::Encoder::new(Vec::new(), level).expect("zstd");
        z.window_log(20).expect("window");
        z.include_checksum(true).expect("checksum");
        z.set_pledged_src_size(Some(text.len() as u64))
            .expect("size");
        z.write_all(text).expect("zstd in memory");
        z.finish().expect("zstd in memory")
    }
}

fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        eprintln!("usage: log_compression LOG...");
        std::process::exit(2);
    }
    let texts: Vec<Vec<u8>> = paths
        .iter()
        .map(|p| std::fs::read(p).unwrap_or_else(|e| panic!("cannot read {p}: {e}")))
        .collect();
    let plain: usize = texts.iter().map(Vec::len).sum();
    println!(
        "{} logs, {} bytes plain ({} a log)",
        texts.len(),
        plain,
        plain / texts.len()
    );
    let mut methods: Vec<(String, Compress)> =
        vec![("gzip -9 (flate2, before)".to_string(), Box::new(gzip9))];
    for level in [1, 3, 6, 8, 9, 10, 12] {
        methods.push((format!("zstd -{level}"), Box::new(zstd_at(level))));
    }
    for (name, compress) in &methods {
        let mut times: Vec<Duration> = Vec::new();
        let mut size = 0;
        for _ in 0..5 {
            let start = Instant::now();
            size = texts.iter().map(|t| compress(t).len()).sum::<usize>();
            times.push(start.elapsed());
        }
        times.sort();
        let median = times[times.len() / 2];
        println!(
            "{name:26} {size:>10} bytes ({:>7} a log, x{:.1}), {:>8.1} ms a log",
            size / texts.len(),
            plain as f64 / size as f64,
            median.as_secs_f64() * 1000.0 / texts.len() as f64
        );
    }
}

//! The names hus gives: its own, as a referee (in `hello` and in logs), and a set's
//! log's (`hus match`, `hus play`).

/// `hus 0.1.0`: the referee's name in `hello` and in logs.
pub fn referee_version() -> String {
    format!("hus {}", env!("CARGO_PKG_VERSION"))
}

/// The name of a set's log without `.jsonl`: `20261201-223156-SEED-A-vs-B`, the UTC
/// time it starts, its seed and its sides' short names (`hus match`, `hus play`).
pub fn log_stem(seed: u64, sides: [String; 2]) -> String {
    let stamp = time::OffsetDateTime::now_utc();
    format!(
        "{:04}{:02}{:02}-{:02}{:02}{:02}-{}-{}-vs-{}",
        stamp.year(),
        stamp.month() as u8,
        stamp.day(),
        stamp.hour(),
        stamp.minute(),
        stamp.second(),
        seed,
        sides[0],
        sides[1]
    )
}

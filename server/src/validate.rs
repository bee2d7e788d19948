//! The validation of an uploaded version before it enters the league: a set against
//! the built-in random mover (`hus random-bot`, this very binary) at the league's
//! rules, width, time control and number of games, played by `play_set` like every
//! set, the version in its sandbox. Any fault of the version rejects it, with the
//! fault's place, kind and detail and the end of its stderr, for its author. The set's
//! log is kept beside the version's build (`VALIDATION_DIR`), and passes `hus replay`
//! like every log.

use std::path::{Path, PathBuf};

use league::{BotConfig, LeagueConfig, Transport};
use referee::{
    play_set, BotSpec, Entrant, FilePlace, Limits, LogWriter, Record, RecordSink, SetConfig, Side,
    WriteError,
};

/// The validation logs' directory, in the uploads' directory.
pub const VALIDATION_DIR: &str = "validation";
/// The most bytes of the version's stderr shown with a rejection.
const STDERR_SHOWN: u64 = 4096;

/// A sink that writes the log and keeps the version's first fault.
struct Watch {
    log: LogWriter,
    /// Where the version's first fault happened, its kind and detail.
    first_fault: Option<String>,
}

impl RecordSink for Watch {
    fn record(&mut self, record: &Record) -> Result<(), WriteError> {
        if let Record::Fault(fault) = record {
            if fault.bot == Side::A && self.first_fault.is_none() {
                self.first_fault = Some(format!(
                    "{}: {}: {}",
                    fault.place(),
                    fault.kind,
                    fault.detail
                ));
            }
        }
        self.log.record(record)
    }
}

/// The end of a file, at most `bytes` of it, as text.
fn tail(path: &Path, bytes: u64) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut file) = std::fs::File::open(path) else {
        return String::new();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = file.seek(SeekFrom::Start(len.saturating_sub(bytes)));
    let mut buf = Vec::new();
    let _ = file.take(bytes).read_to_end(&mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

/// Plays the validation set of `bot` (the version `name`) against the random mover;
/// `Err` says why it is rejected. `dir` is the uploads' directory.
pub async fn validate(
    bot: &BotConfig,
    league: &LeagueConfig,
    name: &str,
    dir: &Path,
) -> Result<(), String> {
    let Transport::Process { spec, limits } = &bot.transport else {
        return Err("an uploaded version is a process".into());
    };
    let logs = dir.join(VALIDATION_DIR);
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot find the hus binary (the random mover): {e}"))?;
    let seed = referee::fresh_seed();
    let opponent = BotSpec {
        command: format!("hus random-bot --seed {seed}"),
        argv: vec![
            exe.to_string_lossy().into_owned(),
            "random-bot".into(),
            "--seed".into(),
            seed.to_string(),
        ],
    };
    let config = SetConfig {
        rules: league.rules,
        games: league.games,
        seed,
        time: league.time,
        ready_time: league.ready_time,
        early_stop: false,
        openings: Vec::new(),
        sprt: None,
    };
    let stem = format!("{name}-validation");
    let (log, stem) = LogWriter::create(&logs, &stem)
        .map_err(|e| format!("cannot write the validation set's log: {e:#}"))?;
    let stderr: [PathBuf; 2] = [
        logs.join(format!("{stem}.a.stderr")),
        logs.join(format!("{stem}.b.stderr")),
    ];
    let lineups = [
        Entrant::Process {
            spec: spec.clone(),
            stderr: FilePlace::Path(stderr[0].clone()),
            limits: limits.clone(),
        },
        Entrant::Process {
            spec: opponent,
            stderr: FilePlace::Path(stderr[1].clone()),
            limits: Limits::default(),
        },
    ];
    let mut watch = Watch {
        log,
        first_fault: None,
    };
    let lineups: [referee::Lineup; 2] = lineups.map(referee::Lineup::from);
    let played = play_set(
        &config,
        lineups.into(),
        &referee::referee_version(),
        &mut watch,
    )
    .await;
    let said = |what: String| {
        let err = tail(&stderr[0], STDERR_SHOWN);
        if err.trim().is_empty() {
            what
        } else {
            format!("{what}\n--- the end of its stderr ---\n{}", err.trim_end())
        }
    };
    match played {
        Err(e) => Err(said(format!("the validation set could not be played: {e}"))),
        Ok(_) => match watch.first_fault {
            None => Ok(()),
            Some(fault) => Err(said(format!(
                "it faulted in its validation set against the random mover, {fault}"
            ))),
        },
    }
}

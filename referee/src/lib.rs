//! `referee`: plays sets of Hus between bot programs, and reads what they leave behind.
//!
//! Every game, whichever command asks for it, is played by [`play_set`]: it starts both
//! bots ([`Entrant`]s), speaks protocol v1 with them, checks each move with the
//! `engine`, keeps the clocks of a [`SetConfig`], and hands every event as a [`Record`]
//! to a [`RecordSink`] (a [`LogWriter`] for the JSON Lines log of LOGS.md, a [`Console`]
//! for people). Around it sit the commands a bot author or organiser runs:
//! [`run_match`] (`hus match`), [`run_replay`] (`hus replay`: verify, show, follow, HTML
//! viewer), [`run_check_bot`] (`hus check-bot`), [`run_perft`], [`run_line`] (`hus
//! line`: a line of moves judged as a game, for rules questions) and the built-in random
//! mover [`run_random_bot`]. Each command takes its raw arguments (the clap structs of
//! this crate, e.g. [`MatchArgs`]) and validates them before doing anything.
//!
//! A set's games start from the preset's starting position, or from openings
//! ([`SetConfig::openings`], read from a file with [`read_openings`] and chosen for a
//! set with [`openings_for_set`]), in pairs with the first mover swapped; a set can
//! also run a sequential probability ratio test ([`SetConfig::sprt`], [`parse_sprt`])
//! and stop when it decides.
//!
//! Each [`Entrant`] carries its own [`Limits`]: resource limits, and optionally a
//! [`Sandbox`] (bubblewrap: no network, no other processes, only its own directory and
//! the system's files, a bound on processes), which a caller checks once with
//! [`Sandbox::probe`] before a set.
//!
//! ```
//! use referee::{lots, parse_duration};
//! // The lots of a set follow from its seed alone.
//! assert_eq!(lots(7, 7), lots(7, 7));
//! assert_eq!(parse_duration("1.5s").unwrap(), std::time::Duration::from_millis(1500));
//! ```

#![deny(missing_docs)]

pub mod archive;
mod bot;
mod cli;
mod config;
pub mod defaults;
mod files;
mod lifetime;
mod limits;
mod link;
mod listen;
mod logfile;
mod names;
mod once;
mod openings;
mod records;
mod replay;
mod report;
mod sandbox;
mod set;
mod side;
mod sprt;
mod stderr;
mod stop;
pub mod web_host;

pub use bot::describe_status;
pub use cli::args::{
    BoardArgs, CheckBotArgs, LineArgs, MatchArgs, PerftArgs, RandomBotArgs, ReplayArgs,
    SandboxArgs, TimeArgs,
};
pub use cli::check_bot::run as run_check_bot;
pub use cli::check_bot::{
    check_bot, check_seed, CheckConfig, CheckFault, CheckVerdict, STDERR_EXCERPT,
};
pub use cli::line_cmd::run as run_line;
pub use cli::match_cmd::run as run_match;
pub use cli::perft_cmd::run as run_perft;
pub use cli::random_bot::run as run_random_bot;
pub use cli::replay_cmd::run as run_replay;
pub use config::{
    first_movers, fresh_seed, lots, parse_bytes, parse_clock, parse_duration, sanitize,
    show_duration, BotSpec, SetConfig, TimeControl,
};
pub use files::{
    create_dir, create_file, open_parent, refuse_symlink, symlink_error, Create, Dir, Entry,
    FilePlace,
};
pub use limits::{raise_referee_priority, Limits};
pub use link::{Connect, ConnectFuture, Link, LinkReader, LinkWriter, RttProbe};
pub use listen::ListenError;
pub use logfile::{
    compress_log, compress_log_in, compressed_path, finished_log_candidates, is_compressed,
    is_gzip, is_zstd, open_finished_log, open_log, unpacked, LogReader, COMPRESSED_SUFFIX,
    GZIP_SUFFIX, LOG_LEVEL,
};
pub use names::{log_stem, referee_version};
pub use once::OnceProcess;
pub use openings::{
    openings_for_set, openings_from_text, read_openings, LineProblem, OpeningsError,
};
pub use records::{
    now_rfc3339, Aborted, FaultKind, GameEndReason, Record, StoppedBy, UploadedVersion, Writer,
};
pub use replay::text::{draw_board, draw_board_from, plural, report_words, Marks, Style};
pub use replay::watch::{writer_state, WriterState};
pub use replay::{verify_records, viewer_page};
pub use report::{Console, LogWriter};
pub use sandbox::{
    MemoryEvents, Sandbox, SandboxError, SandboxOption, SandboxOptionError, SandboxOptions,
    SandboxUser, DEFAULT_MAX_PROCESSES, DEFAULT_SANDBOX_MEMORY, DEFAULT_SANDBOX_USER,
    DEFAULT_TMP_SIZE,
};
pub use set::{
    play_set, team_orders, Entrant, Lineup, Member, RecordSink, SetError, Team, WriteError,
};
pub use side::{BySide, Seating, Side};
pub use sprt::{parse_sprt, SprtTally};
pub use stop::stop_signal;

/// The replay viewer's board, for other pages that show one (`hus play --web` serves
/// them as files under its own Content-Security-Policy): one drawing of the board
/// everywhere.
pub mod viewer_assets {
    pub use crate::replay::html::{loads_from_elsewhere, BOARD_JS, CSS as VIEWER_CSS, RULES_JS};

    /// The policy of the pages served over HTTP (the dashboard of `hus serve`, the page
    /// of `hus play --web`): only their own origin's scripts, styles and connections; no
    /// frames, no forms, no plugins, no base element.
    pub const PAGE_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
         img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; \
         frame-ancestors 'none'";
}

//! The defaults of a set's settings, each defined once: the command lines (`hus match`,
//! `hus check-bot`, `hus perft`, `hus line`, `hus play`, `hus rate`: their clap
//! `default_value`s) and the league file take them from here, so that `hus match`
//! without options and a league file without keys play the same sets.

use std::time::Duration;

use engine::Preset;

/// The rules preset (`--rules`, the league file's `rules`).
pub const PRESET: Preset = Preset::Hus;
/// [`PRESET`] as the command line and the league file write it.
pub const PRESET_NAME: &str = "hus";
/// The row width (`--width`, `width`).
pub const WIDTH: usize = 8;
/// Games in a set (`hus match --games`, the league file's `games`).
pub const GAMES: u32 = 7;
/// The most games of `hus match --sprt` without `--games`.
pub const SPRT_GAMES: u32 = 20_000;
/// Time for each move (`--move-time`, `move_time`).
pub const MOVE_TIME: Duration = Duration::from_secs(1);
/// Time from a bot's start to its `ready` (`--ready-time`, `ready_time`).
pub const READY_TIME: Duration = Duration::from_secs(10);
/// Where logs and the bots' stderr files go (`--log-dir`).
pub const LOG_DIR: &str = "hus-logs";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_preset_s_name_is_the_preset_and_the_durations_read_back() {
        assert_eq!(PRESET_NAME.parse::<Preset>().ok(), Some(PRESET));
        for d in [MOVE_TIME, READY_TIME] {
            let text = crate::config::show_duration(d);
            assert_eq!(crate::config::parse_duration(&text).expect("a duration"), d);
        }
        assert_eq!(crate::config::show_duration(MOVE_TIME), "1s");
        assert_eq!(crate::config::show_duration(READY_TIME), "10s");
    }
}

//! `hus random-bot [--seed N]`: a bot built into the binary that answers every turn
//! with a random pit from `legal`. It is the opponent `hus check-bot` plays against,
//! and a ready-made sparring partner: `hus match "my_bot" "hus random-bot"`.
//!
//! It speaks protocol v1 on stdin/stdout with the `protocol` crate's blocking helpers,
//! ignores messages it does not know or cannot read, and exits on `bye` or at the end
//! of stdin. Its choices depend only on `--seed` and the turns it is sent.

use std::io::{self, ErrorKind};
use std::process::ExitCode;

use anyhow::{Context, Result};
use protocol::{read_referee_message, write_message, BotMessage, RefereeMessage};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::cli::args::RandomBotArgs;

/// The name it gives in `ready`.
pub const NAME: &str = "hus-random";

/// `hus random-bot`: a bot on stdin/stdout that plays random legal moves.
pub fn run(args: &RandomBotArgs) -> Result<ExitCode> {
    let stdin = io::stdin();
    let stdout = io::stdout();
    play(args.seed, &mut stdin.lock(), &mut stdout.lock())?;
    Ok(ExitCode::SUCCESS)
}

/// Reads messages until `bye` or the end of the input, answering `hello` and `turn`.
/// Only failing to write (or to read at all) is an error; a line that does not decode
/// is skipped.
fn play(seed: u64, input: &mut impl io::BufRead, output: &mut impl io::Write) -> Result<()> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    loop {
        let message = match read_referee_message(input) {
            Ok(Some(message)) => message,
            Ok(None) => return Ok(()),
            // Undecodable, too long or not UTF-8: not for us, as far as we can tell.
            Err(e) if e.kind() == ErrorKind::InvalidData => continue,
            // A last line without its newline: the referee is gone.
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e).context("cannot read stdin"),
        };
        let answer = match message {
            RefereeMessage::Hello(_) => BotMessage::Ready {
                name: Some(NAME.to_string()),
            },
            RefereeMessage::Turn(turn) if !turn.legal.is_empty() => BotMessage::Move {
                pit: u64::from(turn.legal[rng.gen_range(0..turn.legal.len())]),
            },
            RefereeMessage::Bye(_) => return Ok(()),
            _ => continue,
        };
        write_message(output, &answer).context("cannot write to stdout")?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(seed: u64, input: &str) -> String {
        let mut out = Vec::new();
        let result = play(seed, &mut input.as_bytes(), &mut out);
        assert!(result.is_ok(), "{result:?}");
        String::from_utf8(out).unwrap_or_default()
    }

    const TURN: &str = r#"{"type":"turn","game":1,"ply":0,"you":[0,0,0,0,2,2,2,2,2,2,2,2,2,2,2,2],"opponent":[0,0,0,0,2,2,2,2,2,2,2,2,2,2,2,2],"legal":[4,5,6,7,8,9,10,11,12,13,14,15],"last":null,"time_ms":1000}"#;

    #[test]
    fn answers_hello_and_turns_and_ignores_the_rest() {
        let hello = r#"{"type":"hello","protocol":1,"referee":"hus 0.1.0","rules":{"preset":"hus","width":8,"sowing":"clockwise","capture":"front-run","captured_sown_from":"landing","scoring":"wins","double_win":true,"min_seeds_to_move":2,"max_sown_per_move":3000,"no_capture_limit":200,"repetition":true,"seeds_per_player":24},"time":{"mode":"per-move","move_ms":1000,"ready_ms":10000},"games":2,"line_limit":65536}"#;
        let input = format!(
            "{hello}\n{{\"type\":\"news\",\"x\":1}}\nnot json\n\n{TURN}\n{TURN}\n{{\"type\":\"bye\",\"points\":{{\"you\":1,\"opponent\":0}},\"outcome\":\"win\"}}\n{TURN}\n"
        );
        let out = session(7, &input);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3, "{out}");
        assert_eq!(lines[0], r#"{"type":"ready","name":"hus-random"}"#);
        for line in &lines[1..] {
            match protocol::decode_bot_message(line.as_bytes()) {
                Ok(BotMessage::Move { pit }) => assert!((4..=15).contains(&pit), "{line}"),
                other => panic!("{line}: {other:?}"),
            }
        }
        // Deterministic for a seed.
        assert_eq!(session(7, &input), out);
    }

    #[test]
    fn stops_at_the_end_of_input() {
        assert_eq!(session(0, ""), "");
        let out = session(0, &format!("{TURN}\n{{\"type\":\"tu"));
        assert_eq!(out.lines().count(), 1);
    }
}

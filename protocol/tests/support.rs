use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use protocol::{
    Bye, Capture, CapturedSownFrom, GameResult, GameStart, Hello, Outcome, Points, Preset, Reason,
    RefereeMessage, RulesInfo, Scoring, Sowing, TimeControl, Turn,
};
use tokio::io::{AsyncRead, ReadBuf};

/// An `AsyncRead` that yields the given chunks one per read (split further if the
/// caller's buffer is smaller), then end of stream.
pub struct ChunkReader {
    chunks: VecDeque<Vec<u8>>,
}

impl ChunkReader {
    pub fn new<I, C>(chunks: I) -> ChunkReader
    where
        I: IntoIterator<Item = C>,
        C: AsRef<[u8]>,
    {
        ChunkReader {
            chunks: chunks
                .into_iter()
                .map(|c| c.as_ref().to_vec())
                .filter(|c| !c.is_empty())
                .collect(),
        }
    }
}

impl AsyncRead for ChunkReader {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if let Some(front) = self.chunks.front_mut() {
            let n = front.len().min(buf.remaining());
            buf.put_slice(&front[..n]);
            front.drain(..n);
            if front.is_empty() {
                self.chunks.pop_front();
            }
        }
        Poll::Ready(Ok(()))
    }
}

/// Runs a future on a fresh single-threaded runtime (for property tests).
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime builds")
        .block_on(future)
}

pub fn start_pits() -> Vec<u32> {
    vec![0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]
}

pub fn hus_rules() -> RulesInfo {
    RulesInfo {
        preset: Preset::Hus,
        width: 8,
        sowing: Sowing::Clockwise,
        capture: Capture::FrontRun,
        captured_sown_from: CapturedSownFrom::Landing,
        scoring: Scoring::Wins,
        double_win: true,
        min_seeds_to_move: 2,
        max_sown_per_move: 3000,
        no_capture_limit: 200,
        repetition: true,
        seeds_per_player: 24,
    }
}

pub fn hello() -> RefereeMessage {
    RefereeMessage::Hello(Hello {
        protocol: 1,
        referee: "hus 0.1.0".to_owned(),
        rules: hus_rules(),
        time: TimeControl::PerMove {
            move_ms: 1000,
            ready_ms: 10000,
        },
        games: 7,
        line_limit: 65536,
        team: None,
    })
}

pub fn game() -> RefereeMessage {
    RefereeMessage::Game(GameStart {
        game: 1,
        first: true,
        you: start_pits(),
        opponent: start_pits(),
        order: None,
        opponent_order: None,
    })
}

pub fn turn() -> RefereeMessage {
    RefereeMessage::Turn(Turn {
        game: 1,
        ply: 0,
        you: start_pits(),
        opponent: start_pits(),
        legal: (4..16).collect(),
        last: None,
        time_ms: 1000,
        opponent_time_ms: None,
    })
}

pub fn result() -> RefereeMessage {
    RefereeMessage::Result(GameResult {
        game: 1,
        outcome: Outcome::Win,
        reason: Reason::NoMoves,
        points: Points {
            you: 1,
            opponent: 0,
        },
        last: Some(7),
        you: vec![0, 0, 0, 0, 0, 0, 0, 3, 5, 0, 0, 1, 0, 0, 0, 9],
        opponent: vec![1; 16],
        plies: 37,
        fault_by: None,
        detail: None,
    })
}

pub fn bye() -> RefereeMessage {
    RefereeMessage::Bye(Bye {
        points: Points {
            you: 5,
            opponent: 2,
        },
        outcome: Outcome::Win,
    })
}

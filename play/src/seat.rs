//! The person's seat: a seat like a bot's. [`PersonSeat`] is a [`Connect`] whose links
//! are in-memory duplex streams; the other end of each, a [`SeatEnd`], goes to the user
//! interface (the terminal, or the browser of `hus play --web`), which speaks protocol
//! v1 on it exactly as a bot does. The referee cannot tell the difference: the game is
//! played by the same `play_set`, with the same checks, clocks and log.

use std::sync::atomic::{AtomicUsize, Ordering};

use protocol::{decode_referee_message, BotMessage, RefereeMessage};
use referee::{Connect, ConnectFuture, Link};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use tokio::io::{ReadHalf, WriteHalf};
use tokio::sync::mpsc;
use tokio::time::Instant;

/// Room in each direction of a seat's duplex: many protocol lines.
const DUPLEX_BYTES: usize = 1 << 16;

/// A person's seat in a set: hands each link's far end to the user interface.
pub struct PersonSeat {
    ends: mpsc::UnboundedSender<SeatEnd>,
    /// Where the person is, for the log's `ready.peer` (`terminal`, `browser`).
    peer: String,
    /// The name they play under: the log's header names them before the set starts.
    name: String,
    made: AtomicUsize,
}

impl PersonSeat {
    /// A seat whose links are reported as coming from `peer`, for a person playing as
    /// `name` (which the user interface announces in `ready`), and the receiver the user
    /// interface takes each link's far end from: one at the start of the set, and one
    /// more after each fault of the person's (the referee closes a faulted seat's link
    /// and asks for a new one before the next game, as it restarts a bot).
    pub fn new(peer: &str, name: &str) -> (PersonSeat, mpsc::UnboundedReceiver<SeatEnd>) {
        let (ends, rx) = mpsc::unbounded_channel();
        let seat = PersonSeat {
            ends,
            peer: peer.to_string(),
            name: name.to_string(),
            made: AtomicUsize::new(0),
        };
        (seat, rx)
    }

    /// How many links the referee has asked for so far.
    pub fn links_made(&self) -> usize {
        self.made.load(Ordering::SeqCst)
    }
}

impl Connect for PersonSeat {
    fn known_name(&self) -> Option<String> {
        Some(self.name.clone())
    }

    fn connect(&self, _deadline: Instant) -> ConnectFuture<'_> {
        self.made.fetch_add(1, Ordering::SeqCst);
        let (ours, theirs) = tokio::io::duplex(DUPLEX_BYTES);
        let (read, write) = tokio::io::split(theirs);
        let end = SeatEnd {
            lines: BufReader::new(read).lines(),
            writer: write,
        };
        let sent = self.ends.send(end);
        let (reader, writer) = tokio::io::split(ours);
        let peer = self.peer.clone();
        Box::pin(async move {
            sent.map_err(|_| "the person has left (their seat is closed)".to_string())?;
            Ok(Link {
                reader: Box::new(reader),
                writer: Box::new(writer),
                peer,
                connect_rtt: None,
                probe: None,
                lag_cap: std::time::Duration::ZERO,
            })
        })
    }
}

/// The user interface's end of one link: the referee's lines come out, the person's
/// lines go in. It speaks protocol v1 as a bot does.
pub struct SeatEnd {
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    writer: WriteHalf<DuplexStream>,
}

impl SeatEnd {
    /// The referee's next message; `None` when the referee has closed the link (after
    /// `bye`, or after a fault of the person's). A line that is not a message of
    /// protocol v1 is an error naming what is wrong (the referee never sends one).
    pub async fn next(&mut self) -> Option<Result<RefereeMessage, String>> {
        match self.lines.next_line().await {
            Ok(Some(line)) => {
                Some(decode_referee_message(&line).map_err(|e| format!("{e}: {line:?}")))
            }
            Ok(None) => None,
            Err(e) => Some(Err(format!("the referee's line could not be read: {e}"))),
        }
    }

    /// Sends the person's `ready` or `move`; an error when the referee has closed the
    /// link (the set is over or the seat faulted).
    pub async fn send(&mut self, message: &BotMessage) -> std::io::Result<()> {
        self.writer.write_all(message.to_line().as_bytes()).await?;
        self.writer.flush().await
    }
}

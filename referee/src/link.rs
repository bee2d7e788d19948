//! Bots reached over a line stream instead of a process the referee starts: a TCP
//! connection from a remote bot (the `remote` crate makes those), or an in-memory
//! duplex in tests. `play_set` drives a [`Link`] through the same `BotProcess` as a
//! child process, so the checks, clocks and faults are the same; a disconnect is a
//! crash, and the network's round-trip time can be credited to the bot, up to a cap
//! (PROTOCOL.md, "Remote bots").

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::Instant;

/// The read half of a link: the bot's lines arrive here.
pub type LinkReader = Box<dyn AsyncRead + Send + Unpin>;
/// The write half of a link: the referee's lines go here.
pub type LinkWriter = Box<dyn AsyncWrite + Send + Unpin>;

/// Measures the current round-trip time of a link (for TCP, the kernel's smoothed
/// estimate from `TCP_INFO`).
pub trait RttProbe: Send + Sync {
    /// The current estimate, or `None` when it cannot be read.
    fn rtt(&self) -> Option<Duration>;
}

/// One connection to a bot, for one set (or for the rest of one, after a restart).
pub struct Link {
    /// What the bot writes.
    pub reader: LinkReader,
    /// What the bot reads.
    pub writer: LinkWriter,
    /// Where the bot is, for the log (`127.0.0.1:40312`).
    pub peer: String,
    /// The round-trip time measured when the bot connected.
    pub connect_rtt: Option<Duration>,
    /// Measures the round-trip time before each turn; `None` credits no lag.
    pub probe: Option<Box<dyn RttProbe>>,
    /// The most network time credited to the bot per message it answers (the lag
    /// allowance): a turn's deadline is extended, and its time on the clock reduced,
    /// by the round-trip time measured before the turn, up to this cap. Zero counts all
    /// network time against the bot.
    pub lag_cap: Duration,
}

/// A future boxed for a trait object.
pub type ConnectFuture<'a> = Pin<Box<dyn Future<Output = Result<Link, String>> + Send + 'a>>;

/// Where `play_set` gets a link to a remote bot: at the start of the set, and again to
/// restart it after a fault (the referee closes the link of a bot that faulted, as it
/// kills a faulted process; the bot connects again).
pub trait Connect: Send + Sync {
    /// A fresh link to the bot, waiting for it until `deadline`; the error says why
    /// there is none (not connected, the server is stopping...).
    fn connect(&self, deadline: Instant) -> ConnectFuture<'_>;

    /// The name the bot will announce, when it is known before it connects (a person's
    /// seat of `hus play`: the name they play under); the log's header then holds it.
    /// `None` (the default): the header's name is null, and the name is in `ready`.
    fn known_name(&self) -> Option<String> {
        None
    }
}

#[cfg(test)]
mod tests {
    //! `play_set` driving bots over in-memory duplex links, on tokio's paused clock:
    //! the times below are exact, whatever the machine's load.
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use protocol::{BotMessage, RefereeMessage};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};

    use super::*;
    use crate::config::{SetConfig, TimeControl};
    use crate::records::{Record, StoppedBy};
    use crate::set::{play_set, Entrant, RecordSink};

    /// How a test bot behaves on one connection.
    #[derive(Clone, Copy)]
    enum Behaviour {
        /// Plays the first legal move at once.
        Healthy,
        /// Plays at once, but disconnects when asked for its `n`-th move.
        DropAtTurn(usize),
        /// Takes this long over every move.
        Slow(Duration),
        /// Stalls the referee as long as the first at every move (the paused clock
        /// jumps while the referee's runtime cannot run, as a stopped process finds on
        /// resuming), then takes as long as the second itself before it plays.
        Freeze(Duration, Duration),
        /// Stalls the referee as long as the first at `hello`, then takes as long as
        /// the second itself before its `ready`; plays at once.
        FreezeAtHello(Duration, Duration),
    }

    struct FixedRtt(Duration);
    impl RttProbe for FixedRtt {
        fn rtt(&self) -> Option<Duration> {
            Some(self.0)
        }
    }

    /// Hands out a fresh link per connection, the `n`-th behaving as `plan[n]` (the
    /// last entry for every later one), with a fixed round-trip time and cap.
    struct TestConnect {
        plan: Vec<Behaviour>,
        made: AtomicUsize,
        rtt: Option<Duration>,
        lag_cap: Duration,
    }

    impl Connect for TestConnect {
        fn connect(&self, _deadline: Instant) -> ConnectFuture<'_> {
            let n = self.made.fetch_add(1, Ordering::SeqCst);
            let behaviour = self.plan[n.min(self.plan.len() - 1)];
            let (ours, theirs) = tokio::io::duplex(1 << 16);
            tokio::spawn(test_bot(theirs, behaviour));
            let (reader, writer) = tokio::io::split(ours);
            let rtt = self.rtt;
            Box::pin(async move {
                Ok(Link {
                    reader: Box::new(reader),
                    writer: Box::new(writer),
                    peer: format!("test:{n}"),
                    connect_rtt: rtt,
                    probe: rtt.map(|d| Box::new(FixedRtt(d)) as Box<dyn RttProbe>),
                    lag_cap: self.lag_cap,
                })
            })
        }
    }

    async fn test_bot(stream: DuplexStream, behaviour: Behaviour) {
        let (read, mut write) = tokio::io::split(stream);
        let mut lines = BufReader::new(read).lines();
        let mut turns = 0;
        while let Ok(Some(line)) = lines.next_line().await {
            let answer = match serde_json::from_str::<RefereeMessage>(&line) {
                Ok(RefereeMessage::Hello(_)) => {
                    if let Behaviour::FreezeAtHello(stall, own) = behaviour {
                        tokio::time::advance(stall).await;
                        tokio::time::sleep(own).await;
                    }
                    BotMessage::Ready {
                        name: Some("duplex".into()),
                    }
                }
                Ok(RefereeMessage::Turn(t)) => {
                    turns += 1;
                    match behaviour {
                        Behaviour::DropAtTurn(n) if turns == n => return,
                        Behaviour::Slow(d) => tokio::time::sleep(d).await,
                        Behaviour::Freeze(stall, own) => {
                            tokio::time::advance(stall).await;
                            tokio::time::sleep(own).await;
                        }
                        _ => {}
                    }
                    BotMessage::Move {
                        pit: u64::from(t.legal[0]),
                    }
                }
                Ok(RefereeMessage::Bye(_)) => return,
                _ => continue,
            };
            let mut out = serde_json::to_string(&answer).unwrap_or_default();
            out.push('\n');
            if write.write_all(out.as_bytes()).await.is_err() {
                return;
            }
        }
    }

    #[derive(Default)]
    struct Collect(Vec<Record>);
    impl RecordSink for Collect {
        fn record(&mut self, record: &Record) -> Result<(), crate::WriteError> {
            self.0.push(record.clone());
            Ok(())
        }
    }

    fn config(games: u32, time: TimeControl) -> SetConfig {
        SetConfig {
            rules: engine::Rules::new(engine::Preset::Hus, 8).expect("rules"),
            games,
            seed: 3,
            time,
            ready_time: Duration::from_secs(5),
            early_stop: false,
            openings: Vec::new(),
            sprt: None,
        }
    }

    fn entrant(connect: TestConnect) -> Entrant {
        Entrant::Link {
            command: "remote test".into(),
            connect: Arc::new(connect),
            time: None,
        }
    }

    fn plan(plan: Vec<Behaviour>, rtt: Option<Duration>, lag_cap: Duration) -> TestConnect {
        TestConnect {
            plan,
            made: AtomicUsize::new(0),
            rtt,
            lag_cap,
        }
    }

    async fn play(config: &SetConfig, a: TestConnect, b: TestConnect) -> Vec<Record> {
        let mut sink = Collect::default();
        play_set(
            config,
            [entrant(a), entrant(b)]
                .map(crate::set::Lineup::from)
                .into(),
            "hus test",
            &mut sink,
        )
        .await
        .expect("the set is played");
        // The log these records make passes `hus replay`, `closed` shutdowns included.
        assert_eq!(crate::verify_records(&sink.0), Ok(0));
        sink.0
    }

    fn faults(records: &[Record]) -> Vec<(u32, usize, String, String)> {
        records
            .iter()
            .filter_map(|r| match r {
                Record::Fault(f) => {
                    Some((f.game, f.bot.index(), f.kind.to_string(), f.detail.clone()))
                }
                _ => None,
            })
            .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn a_set_over_links_is_played_and_logged_like_any_other() {
        let healthy = || plan(vec![Behaviour::Healthy], None, Duration::ZERO);
        let records = play(
            &config(3, TimeControl::PerMove(Duration::from_millis(100))),
            healthy(),
            healthy(),
        )
        .await;
        let Some(Record::SetEnd(end)) = records.last() else {
            panic!("no set-end: {records:?}");
        };
        assert_eq!(end.games_played, 3);
        assert_eq!(end.faults.into_array(), [0, 0]);
        let readies: Vec<_> = records
            .iter()
            .filter_map(|r| match r {
                Record::Ready(r) => Some((r.bot.index(), r.name.clone(), r.peer.clone(), r.rtt_ms)),
                _ => None,
            })
            .collect();
        assert_eq!(
            readies,
            [
                (0, Some("duplex".into()), Some("test:0".into()), None),
                (1, Some("duplex".into()), Some("test:0".into()), None)
            ]
        );
        // No probe: no round-trip time, no credit, but the fields say it was a link.
        for r in &records {
            if let Record::Move(m) = r {
                assert_eq!((m.rtt_ms, m.lag_ms), (None, Some(0.0)));
            }
        }
        // The referee closes each link after `bye`; the bot had closed its end first.
        let stops: Vec<_> = records
            .iter()
            .filter_map(|r| match r {
                Record::Shutdown(s) => Some((s.bot.index(), s.status.clone(), s.stopped_by)),
                _ => None,
            })
            .collect();
        assert_eq!(
            stops,
            [(0, None, StoppedBy::Itself), (1, None, StoppedBy::Itself)]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_disconnect_mid_game_is_a_crash_and_the_bot_is_reconnected_for_the_next() {
        let a = plan(vec![Behaviour::Healthy], None, Duration::ZERO);
        let b = plan(
            vec![Behaviour::DropAtTurn(2), Behaviour::Healthy],
            None,
            Duration::ZERO,
        );
        let records = play(
            &config(2, TimeControl::PerMove(Duration::from_millis(100))),
            a,
            b,
        )
        .await;
        assert_eq!(
            faults(&records),
            [(1, 1, "crash".to_string(), "disconnected".to_string())]
        );
        let restarts: Vec<_> = records
            .iter()
            .filter_map(|r| match r {
                Record::Restart(r) => Some((r.bot.index(), r.game)),
                _ => None,
            })
            .collect();
        assert_eq!(restarts, [(1, 2)]);
        let ends: Vec<_> = records
            .iter()
            .filter_map(|r| match r {
                Record::GameEnd(e) => Some((
                    e.game,
                    e.reason.to_string(),
                    e.winner.map(crate::Side::index),
                )),
                _ => None,
            })
            .collect();
        assert_eq!(ends[0], (1, "crash".to_string(), Some(0)));
        // The second game is played to its end on the new link.
        assert_ne!(ends[1].1, "crash");
        let peers: Vec<_> = records
            .iter()
            .filter_map(|r| match r {
                Record::Ready(r) if r.bot == crate::Side::B => r.peer.clone(),
                _ => None,
            })
            .collect();
        assert_eq!(peers, ["test:0", "test:1"]);
    }

    /// Issue 34, part 7: a stall of the referee during a move is not charged to the
    /// bot. The referee stalls 3 s at each of bot A's moves while A answers at once:
    /// the 1 s move is in time, its 3000 ms less the 2900 ms stall seen (the stall
    /// less the wake-up tick it began after) logged as `stall_ms`. A bot that takes
    /// the same 3 s itself, on an awake referee, is timed out at its deadline, and so
    /// is one whose referee stalls for 500 ms and then takes 700 ms itself (the stall
    /// ended before the deadline).
    #[tokio::test(start_paused = true)]
    async fn a_stall_of_the_referee_is_credited_and_a_slow_bot_is_still_timed_out() {
        let per_move = TimeControl::PerMove(Duration::from_secs(1));
        let three = Duration::from_secs(3);
        let fast = || plan(vec![Behaviour::Healthy], None, Duration::ZERO);
        let stalls = |records: &[Record]| -> Vec<(usize, f64, Option<f64>)> {
            records
                .iter()
                .filter_map(|r| match r {
                    Record::Move(m) => Some((m.bot.index(), m.ms, m.stall_ms)),
                    _ => None,
                })
                .collect()
        };

        let frozen = play(
            &config(2, per_move),
            plan(
                vec![Behaviour::Freeze(three, Duration::ZERO)],
                None,
                Duration::ZERO,
            ),
            fast(),
        )
        .await;
        assert_eq!(faults(&frozen), []);
        let moves = stalls(&frozen);
        assert!(moves.iter().any(|m| m.0 == 0), "{moves:?}");
        for m in moves {
            let expected = match m.0 {
                0 => (0, 3000.0, Some(2900.0)),
                _ => (1, 0.0, None),
            };
            assert_eq!(m, expected);
        }

        let slow = play(
            &config(1, per_move),
            plan(vec![Behaviour::Slow(three)], None, Duration::ZERO),
            fast(),
        )
        .await;
        let f = faults(&slow);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(
            (f[0].1, f[0].2.as_str(), f[0].3.as_str()),
            (0, "time-out", "no move within 1000 ms")
        );
        assert!(stalls(&slow).iter().all(|m| m.2.is_none()));

        // A stall that ends before the deadline credits nothing: 500 ms of stall, then
        // 700 ms of the bot's own, is 1200 ms against 1000, whatever the referee did.
        let stalled_early = play(
            &config(1, per_move),
            plan(
                vec![Behaviour::Freeze(
                    Duration::from_millis(500),
                    Duration::from_millis(700),
                )],
                None,
                Duration::ZERO,
            ),
            fast(),
        )
        .await;
        let f = faults(&stalled_early);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(
            (f[0].1, f[0].2.as_str(), f[0].3.as_str()),
            (0, "time-out", "no move within 1000 ms")
        );
    }

    /// A stall of the referee while it waits for `ready` moves the start-up allowance
    /// too: bot A stalls the referee 8 s at `hello` and then takes 3 s of its own, 11 s
    /// against its 5 s allowance, and is in time (the allowance ends 7.9 s later, at
    /// 12.9 s); its `ready` record has the whole wait, the stall included (as a move's
    /// `ms` has). Charged the stall, it would be a start-up fault.
    #[tokio::test(start_paused = true)]
    async fn a_stall_of_the_referee_while_it_waits_for_ready_is_no_start_up_fault() {
        let per_move = TimeControl::PerMove(Duration::from_millis(100));
        let frozen = play(
            &config(1, per_move),
            plan(
                vec![Behaviour::FreezeAtHello(
                    Duration::from_secs(8),
                    Duration::from_secs(3),
                )],
                None,
                Duration::ZERO,
            ),
            plan(vec![Behaviour::Healthy], None, Duration::ZERO),
        )
        .await;
        assert_eq!(faults(&frozen), []);
        let readies: Vec<_> = frozen
            .iter()
            .filter_map(|r| match r {
                Record::Ready(r) => Some((r.bot.index(), r.ms)),
                _ => None,
            })
            .collect();
        assert_eq!(readies.len(), 2, "{readies:?}");
        assert_eq!(readies[0], (0, 11000.0));
    }

    /// On a clock, a stall comes off the time charged: bot A, on a 2 s clock with an
    /// increment of 100 ms, stalls the referee 3 s at each move and is charged 100 ms
    /// a move (3000 ms less the 2900 ms stall seen), as much as it gains: in time on
    /// every move of a whole game. Charged the stalls, its first move would be out of
    /// time.
    #[tokio::test(start_paused = true)]
    async fn a_stall_of_the_referee_comes_off_the_clock() {
        let clock = TimeControl::Clock {
            base: Duration::from_secs(2),
            increment: Duration::from_millis(100),
        };
        let fast = || plan(vec![Behaviour::Healthy], None, Duration::ZERO);
        let frozen = play(
            &config(1, clock),
            plan(
                vec![Behaviour::Freeze(Duration::from_secs(3), Duration::ZERO)],
                None,
                Duration::ZERO,
            ),
            fast(),
        )
        .await;
        assert_eq!(faults(&frozen), []);
        let a_moves: Vec<_> = frozen
            .iter()
            .filter_map(|r| match r {
                Record::Move(m) if m.bot == crate::Side::A => Some((m.ms, m.stall_ms)),
                _ => None,
            })
            .collect();
        assert!(a_moves.len() >= 3, "{a_moves:?}");
        assert!(
            a_moves.iter().all(|&m| m == (3000.0, Some(2900.0))),
            "{a_moves:?}"
        );
    }

    /// A bot that answers 500 ms after the 500 ms per move: in time with a lag
    /// allowance of 1 s (a measured round-trip time of 1 s, capped at 1 s), out of time
    /// with none.
    #[tokio::test(start_paused = true)]
    async fn the_lag_allowance_extends_the_deadline_up_to_its_cap() {
        let per_move = TimeControl::PerMove(Duration::from_millis(500));
        let slow = Behaviour::Slow(Duration::from_millis(1000));
        let rtt = Some(Duration::from_millis(1500));
        let fast = || plan(vec![Behaviour::Healthy], None, Duration::ZERO);

        let credited = play(
            &config(1, per_move),
            plan(vec![slow], rtt, Duration::from_millis(1000)),
            fast(),
        )
        .await;
        assert_eq!(faults(&credited), []);
        let moves: Vec<_> = credited
            .iter()
            .filter_map(|r| match r {
                Record::Move(m) if m.bot == crate::Side::A => Some((m.ms, m.rtt_ms, m.lag_ms)),
                _ => None,
            })
            .collect();
        assert!(!moves.is_empty());
        for (ms, rtt_ms, lag_ms) in moves {
            assert_eq!((ms, rtt_ms, lag_ms), (1000.0, Some(1500.0), Some(1000.0)));
        }

        let uncredited = play(
            &config(1, per_move),
            plan(vec![slow], rtt, Duration::ZERO),
            fast(),
        )
        .await;
        let f = faults(&uncredited);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(
            (f[0].1, f[0].2.as_str(), f[0].3.as_str()),
            (0, "time-out", "no move within 500 ms")
        );
    }

    /// A seat with a time control of its own (the person's seat of `hus play`) plays on
    /// it, the other on the set's: a bot taking 1 s a move is in time on its own 10 s,
    /// out of time on the set's 100 ms; the header records the seat's own.
    #[tokio::test(start_paused = true)]
    async fn a_seat_with_its_own_time_plays_on_it_and_the_header_says_so() {
        let set = config(1, TimeControl::PerMove(Duration::from_millis(100)));
        let slow = || {
            plan(
                vec![Behaviour::Slow(Duration::from_secs(1))],
                None,
                Duration::ZERO,
            )
        };
        let fast = || plan(vec![Behaviour::Healthy], None, Duration::ZERO);
        let own = Entrant::Link {
            command: "remote test".into(),
            connect: Arc::new(slow()),
            time: Some(TimeControl::PerMove(Duration::from_secs(10))),
        };
        let mut sink = Collect::default();
        play_set(
            &set,
            [own, entrant(fast())].map(crate::set::Lineup::from).into(),
            "hus test",
            &mut sink,
        )
        .await
        .expect("the set is played");
        let records = sink.0;
        assert_eq!(crate::verify_records(&records), Ok(0));
        assert_eq!(faults(&records), []);
        let Some(Record::Header(header)) = records.first() else {
            panic!("no header: {records:?}");
        };
        assert_eq!(
            header.bots.each_ref().map(|b| b.time).into_array(),
            [
                Some(protocol::TimeControl::PerMove {
                    move_ms: 10_000,
                    ready_ms: 5_000
                }),
                None
            ]
        );
        let slow_moves: Vec<f64> = records
            .iter()
            .filter_map(|r| match r {
                Record::Move(m) if m.bot == crate::Side::A => Some(m.ms),
                _ => None,
            })
            .collect();
        assert!(!slow_moves.is_empty());
        assert!(slow_moves.iter().all(|&ms| ms == 1000.0), "{slow_moves:?}");

        // The same bot on the set's time is out of time at its first move.
        let records = play(&set, slow(), fast()).await;
        let f = faults(&records);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(
            (f[0].1, f[0].2.as_str(), f[0].3.as_str()),
            (0, "time-out", "no move within 100 ms")
        );
    }

    /// On a clock, the credit comes off the time charged: a bot that takes 1000 ms a
    /// move on a 1500 ms clock, credited 400 ms a move, is charged 600 ms: it has 900
    /// ms left after its first move, 300 after its second, and its third (due within
    /// 300 + 400 ms) is late. Without the credit its second is late already.
    #[tokio::test(start_paused = true)]
    async fn the_lag_allowance_comes_off_the_clock() {
        let clock = TimeControl::Clock {
            base: Duration::from_millis(1500),
            increment: Duration::ZERO,
        };
        let slow = Behaviour::Slow(Duration::from_millis(1000));
        let rtt = Some(Duration::from_millis(400));
        let fast = || plan(vec![Behaviour::Healthy], None, Duration::ZERO);
        let moves_of_a = |records: &[Record]| {
            records
                .iter()
                .filter(|r| matches!(r, Record::Move(m) if m.bot == crate::Side::A))
                .count()
        };

        let credited = play(
            &config(1, clock),
            plan(vec![slow], rtt, Duration::from_millis(2000)),
            fast(),
        )
        .await;
        assert_eq!(moves_of_a(&credited), 2);
        let f = faults(&credited);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(
            (f[0].1, f[0].2.as_str(), f[0].3.as_str()),
            (
                0,
                "time-out",
                "no move within 300 ms and a lag allowance of 400.0 ms"
            )
        );

        let uncredited = play(
            &config(1, clock),
            plan(vec![slow], rtt, Duration::ZERO),
            fast(),
        )
        .await;
        assert_eq!(moves_of_a(&uncredited), 1);
        let f = faults(&uncredited);
        assert_eq!(
            (f[0].1, f[0].2.as_str(), f[0].3.as_str()),
            (0, "time-out", "no move within 500 ms")
        );
    }
}

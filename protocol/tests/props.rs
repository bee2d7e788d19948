use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;

use protocol::{
    decode_bot_message, decode_referee_message, BotMessage, Bye, Capture, CapturedSownFrom,
    FaultKind, GameResult, GameStart, Hello, LineError, LineReader, Outcome, Points, Preset,
    Reason, RefereeMessage, RulesInfo, Scoring, Side, Sowing, TimeControl, Turn, READ_CHUNK,
};

use crate::support::{block_on, ChunkReader};

fn pits() -> impl Strategy<Value = Vec<u32>> {
    vec(0u32..100, 16..=32)
}

fn points() -> impl Strategy<Value = Points> {
    (any::<u32>(), any::<u32>()).prop_map(|(you, opponent)| Points { you, opponent })
}

fn outcome() -> impl Strategy<Value = Outcome> {
    prop_oneof![Just(Outcome::Win), Just(Outcome::Loss), Just(Outcome::Draw)]
}

fn reason() -> impl Strategy<Value = Reason> {
    prop_oneof![
        Just(Reason::NoMoves),
        Just(Reason::Repetition),
        Just(Reason::NoCaptureLimit),
        proptest::sample::select(FaultKind::ALL.to_vec()).prop_map(Reason::Fault),
        // Built through from_wire, so a known name never hides in Other.
        "[a-z-]{1,20}".prop_map(|name| Reason::from_wire(&name)),
    ]
}

fn rules() -> impl Strategy<Value = RulesInfo> {
    (
        proptest::sample::select(vec![Preset::Hus, Preset::Rulebook, Preset::MancalaWorld]),
        8u32..=16,
        prop_oneof![Just(Sowing::Clockwise), Just(Sowing::Anticlockwise)],
        proptest::sample::select(vec![
            Capture::FrontRun,
            Capture::LandingAndAcross,
            Capture::AcrossAndBehind,
        ]),
        prop_oneof![
            Just(CapturedSownFrom::Landing),
            Just(CapturedSownFrom::Next)
        ],
        prop_oneof![Just(Scoring::Wins), Just(Scoring::Seeds)],
        any::<(bool, bool)>(),
        any::<(u32, u32, u32, u32)>(),
    )
        .prop_map(
            |(preset, width, sowing, capture, from, scoring, (double_win, repetition), n)| {
                RulesInfo {
                    preset,
                    width,
                    sowing,
                    capture,
                    captured_sown_from: from,
                    scoring,
                    double_win,
                    min_seeds_to_move: n.0,
                    max_sown_per_move: n.1,
                    no_capture_limit: n.2,
                    repetition,
                    seeds_per_player: n.3,
                }
            },
        )
}

fn time_control() -> impl Strategy<Value = TimeControl> {
    prop_oneof![
        any::<(u64, u64)>()
            .prop_map(|(move_ms, ready_ms)| TimeControl::PerMove { move_ms, ready_ms }),
        any::<(u64, u64, u64)>().prop_map(|(base_ms, increment_ms, ready_ms)| {
            TimeControl::Clock {
                base_ms,
                increment_ms,
                ready_ms,
            }
        }),
    ]
}

fn referee_message() -> impl Strategy<Value = RefereeMessage> {
    prop_oneof![
        (
            any::<u32>(),
            ".{0,20}",
            rules(),
            time_control(),
            any::<u32>(),
            any::<u64>()
        )
            .prop_map(|(protocol, referee, rules, time, games, line_limit)| {
                RefereeMessage::Hello(Hello {
                    protocol,
                    referee,
                    rules,
                    time,
                    games,
                    line_limit,
                    team: None,
                })
            }),
        (any::<u32>(), any::<bool>(), pits(), pits()).prop_map(|(game, first, you, opponent)| {
            RefereeMessage::Game(GameStart {
                game,
                first,
                you,
                opponent,
                order: None,
                opponent_order: None,
            })
        }),
        (
            any::<(u32, u32)>(),
            pits(),
            pits(),
            vec(0u32..32, 1..32),
            option::of(0u32..32),
            any::<u64>(),
            option::of(any::<u64>()),
        )
            .prop_map(
                |((game, ply), you, opponent, legal, last, time_ms, opponent_time_ms)| {
                    RefereeMessage::Turn(Turn {
                        game,
                        ply,
                        you,
                        opponent,
                        legal,
                        last,
                        time_ms,
                        opponent_time_ms,
                    })
                }
            ),
        (
            (any::<u32>(), outcome(), reason(), points()),
            option::of(0u32..32),
            pits(),
            pits(),
            any::<u32>(),
            option::of(prop_oneof![Just(Side::You), Just(Side::Opponent)]),
            option::of(".{0,40}"),
        )
            .prop_map(
                |(
                    (game, outcome, reason, points),
                    last,
                    you,
                    opponent,
                    plies,
                    fault_by,
                    detail,
                )| {
                    RefereeMessage::Result(GameResult {
                        game,
                        outcome,
                        reason,
                        points,
                        last,
                        you,
                        opponent,
                        plies,
                        fault_by,
                        detail,
                    })
                }
            ),
        (points(), outcome())
            .prop_map(|(points, outcome)| RefereeMessage::Bye(Bye { points, outcome })),
    ]
}

fn bot_message() -> impl Strategy<Value = BotMessage> {
    prop_oneof![
        option::of(".{0,30}").prop_map(|name| BotMessage::Ready { name }),
        any::<u64>().prop_map(|pit| BotMessage::Move { pit }),
    ]
}

/// Bytes that often look like lines: plenty of newlines and blanks.
fn line_ish_bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    vec(
        prop_oneof![
            3 => any::<u8>(),
            1 => Just(b'\n'),
            1 => Just(b' '),
            1 => Just(b'\r'),
            1 => Just(b'\t'),
        ],
        0..max,
    )
}

/// Cuts `bytes` at the given points (taken modulo its length).
fn split_at_points(bytes: &[u8], points: &[usize]) -> Vec<Vec<u8>> {
    let mut cuts: Vec<usize> = points.iter().map(|p| p % (bytes.len() + 1)).collect();
    cuts.push(0);
    cuts.push(bytes.len());
    cuts.sort_unstable();
    cuts.windows(2)
        .map(|w| bytes[w[0]..w[1]].to_vec())
        .collect()
}

#[derive(Debug, PartialEq)]
enum End {
    Clean,
    TooLong,
    EofMidLine(usize),
}

/// What `LineReader` must produce, worked out the simple way.
fn model(bytes: &[u8], limit: usize) -> (Vec<Vec<u8>>, End) {
    let trim = |s: &[u8]| -> Vec<u8> {
        let blank = |b: &u8| matches!(b, b' ' | b'\t' | b'\r');
        let start = s.iter().position(|b| !blank(b)).unwrap_or(s.len());
        let end = s.iter().rposition(|b| !blank(b)).map_or(start, |e| e + 1);
        s[start..end].to_vec()
    };
    let mut lines = Vec::new();
    let mut segments: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    let last = segments.pop().unwrap_or(&[]);
    for segment in segments {
        if segment.len() > limit {
            return (lines, End::TooLong);
        }
        let line = trim(segment);
        if !line.is_empty() {
            lines.push(line);
        }
    }
    if last.len() > limit {
        (lines, End::TooLong)
    } else if trim(last).is_empty() {
        (lines, End::Clean)
    } else {
        (lines, End::EofMidLine(last.len()))
    }
}

proptest! {
    #[test]
    fn random_bytes_never_panic_the_decoder(bytes in vec(any::<u8>(), 0..200)) {
        let _ = decode_bot_message(&bytes);
    }

    #[test]
    fn near_valid_moves_never_panic_and_decode_only_plain_digits(
        pit in "[-+0-9.eE\"a-z\\[\\]{}]{0,30}",
    ) {
        let line = format!(r#"{{"type":"move","pit":{pit}}}"#);
        if let Ok(msg) = decode_bot_message(line.as_bytes()) {
            prop_assert!(pit.bytes().all(|b| b.is_ascii_digit()), "{pit}");
            prop_assert_eq!(msg, BotMessage::Move { pit: pit.parse().unwrap_or(u64::MAX) });
        }
    }

    #[test]
    fn decimal_pits_agree_with_exact_arithmetic(
        int in 0u64..1_000_000,
        frac in "[0-9]{0,6}",
        exp in -10i32..25,
    ) {
        let text = if frac.is_empty() {
            format!("{int}e{exp}")
        } else {
            format!("{int}.{frac}e{exp}")
        };
        let line = format!(r#"{{"type":"move","pit":{text}}}"#);
        let error = decode_bot_message(line.as_bytes()).expect_err("never plain digits");
        let problem = match error {
            protocol::DecodeError::InvalidPit { problem, .. } => problem,
            other => return Err(TestCaseError::fail(format!("{other:?}"))),
        };
        // value = digits * 10^(exp - frac.len()), worked out in u128 where it fits.
        let digits: u128 = format!("{int}{frac}").parse().expect("digits");
        let scale = exp - frac.len() as i32;
        let expected = if digits == 0 {
            protocol::PitProblem::DecimalForm
        } else if scale < 0 {
            let divisor = 10u128.pow(scale.unsigned_abs());
            if !digits.is_multiple_of(divisor) {
                protocol::PitProblem::NotWhole
            } else if digits / divisor > u128::from(u64::MAX) {
                protocol::PitProblem::TooLarge
            } else {
                protocol::PitProblem::DecimalForm
            }
        } else {
            match 10u128.checked_pow(scale as u32).and_then(|p| digits.checked_mul(p)) {
                Some(v) if v <= u128::from(u64::MAX) => protocol::PitProblem::DecimalForm,
                _ => protocol::PitProblem::TooLarge,
            }
        };
        prop_assert_eq!(problem, expected, "{}", text);
    }

    #[test]
    fn referee_messages_round_trip(msg in referee_message()) {
        let line = msg.to_line();
        prop_assert!(line.ends_with('\n'));
        prop_assert_eq!(line.matches('\n').count(), 1);
        prop_assert_eq!(decode_referee_message(&line).expect("decodes"), msg);
    }

    #[test]
    fn bot_messages_round_trip(msg in bot_message()) {
        let line = msg.to_line();
        prop_assert_eq!(line.matches('\n').count(), 1);
        prop_assert_eq!(decode_bot_message(line.as_bytes()), Ok(msg));
    }

    #[test]
    fn split_stream_of_messages_decodes_to_the_same_messages(
        msgs in vec(bot_message(), 0..20),
        blanks in vec((0usize..3, any::<bool>()), 20),
        cuts in vec(any::<usize>(), 0..10),
    ) {
        let mut stream = Vec::new();
        for (msg, (blank_lines, crlf)) in msgs.iter().zip(&blanks) {
            for _ in 0..*blank_lines {
                stream.extend_from_slice(b" \t\r\n");
            }
            let line = msg.to_line();
            stream.extend_from_slice(line.trim_end().as_bytes());
            stream.extend_from_slice(if *crlf { b"\r\n" } else { b"\n" });
        }
        let chunks = split_at_points(&stream, &cuts);
        let decoded = block_on(async {
            let mut reader = LineReader::new(ChunkReader::new(chunks));
            let mut decoded = Vec::new();
            while let Some(line) = reader.next_line().await.expect("valid stream") {
                decoded.push(decode_bot_message(line.as_bytes()).expect("valid line"));
            }
            decoded
        });
        prop_assert_eq!(decoded, msgs);
    }

    #[test]
    fn line_reader_matches_the_model_and_stays_bounded(
        bytes in line_ish_bytes(400),
        cuts in vec(any::<usize>(), 0..20),
        limit in 0usize..40,
    ) {
        let chunks = split_at_points(&bytes, &cuts);
        let (lines, end) = block_on(async {
            let mut reader = LineReader::with_limit(ChunkReader::new(chunks), limit);
            let mut lines = Vec::new();
            let end = loop {
                let result = reader.next_line().await;
                assert!(reader.buffered_len() <= limit + READ_CHUNK);
                match result {
                    Ok(Some(line)) => lines.push(line.into_bytes()),
                    Ok(None) => break End::Clean,
                    Err(LineError::TooLong { .. }) => {
                        assert!(reader.is_poisoned());
                        break End::TooLong;
                    }
                    Err(LineError::EofMidLine { partial, len }) => {
                        assert!(partial.len() <= protocol::PARTIAL_KEEP);
                        break End::EofMidLine(len);
                    }
                    Err(LineError::Io(e)) => panic!("{e}"),
                }
            };
            (lines, end)
        });
        let expected = model(&bytes, limit);
        prop_assert_eq!(lines, expected.0);
        prop_assert_eq!(end, expected.1);
    }
}

/// Cheap pseudo-random line-ish bytes: generating tens of kilobytes byte by byte
/// through strategies is too slow for a debug build.
fn xorshift_bytes(mut seed: u64, len: usize, newline_every: u64) -> Vec<u8> {
    seed |= 1;
    (0..len)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            if seed.is_multiple_of(newline_every) {
                b'\n'
            } else {
                (seed >> 32) as u8
            }
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn big_random_streams_stay_bounded(
        seed in any::<u64>(),
        len in 0usize..100_000,
        newline_every in 1u64..3000,
        cuts in vec(any::<usize>(), 0..20),
    ) {
        let limit = 1000;
        let bytes = xorshift_bytes(seed, len, newline_every);
        let chunks = split_at_points(&bytes, &cuts);
        let (lines, end) = block_on(async {
            let mut reader = LineReader::with_limit(ChunkReader::new(chunks), limit);
            let mut lines = Vec::new();
            let end = loop {
                let result = reader.next_line().await;
                assert!(reader.buffered_len() <= limit + READ_CHUNK);
                match result {
                    Ok(Some(line)) => lines.push(line.into_bytes()),
                    Ok(None) => break End::Clean,
                    Err(LineError::TooLong { .. }) => break End::TooLong,
                    Err(LineError::EofMidLine { len, .. }) => break End::EofMidLine(len),
                    Err(LineError::Io(e)) => panic!("{e}"),
                }
            };
            (lines, end)
        });
        let expected = model(&bytes, limit);
        prop_assert_eq!(lines, expected.0);
        prop_assert_eq!(end, expected.1);
    }
}

/// Any JSON value, with the keys a bot line may have mixed in among random ones.
fn any_json() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        any::<u64>().prop_map(serde_json::Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(serde_json::Value::from),
        prop_oneof![
            Just("move".to_string()),
            Just("ready".to_string()),
            "[a-z]{0,8}",
            any::<String>()
        ]
        .prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(3, 32, 6, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..6).prop_map(serde_json::Value::from),
            vec(
                (
                    prop_oneof![
                        Just("type".to_string()),
                        Just("pit".to_string()),
                        Just("name".to_string()),
                        "[a-z]{1,6}"
                    ],
                    inner
                ),
                0..6
            )
            .prop_map(|fields| serde_json::Value::Object(fields.into_iter().collect())),
        ]
    })
}

proptest! {
    /// Random JSON never panics the decoder, and whatever it accepts is exactly what the
    /// JSON says: a `move` with an unsigned integer `pit`, or a `ready` with an optional
    /// string `name`.
    #[test]
    fn random_json_decodes_only_to_what_it_says(value in any_json()) {
        let line = serde_json::to_vec(&value).expect("serializes");
        match decode_bot_message(&line) {
            Ok(BotMessage::Move { pit }) => {
                prop_assert_eq!(&value["type"], "move");
                prop_assert_eq!(value["pit"].as_u64(), Some(pit));
            }
            Ok(BotMessage::Ready { name }) => {
                prop_assert_eq!(&value["type"], "ready");
                prop_assert_eq!(value["name"].as_str().map(str::to_string), name);
            }
            Err(e) => {
                let _ = (e.kind(), e.to_string());
                let is_move = value["type"] == "move" && value["pit"].is_u64();
                let is_ready = value["type"] == "ready"
                    && (value["name"].is_string() || value["name"].is_null());
                prop_assert!(!is_move && !is_ready, "{} was refused: {}", value, e);
            }
        }
    }
}

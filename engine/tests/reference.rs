//! A deliberately plain implementation of RULINGS.md, written from the rules text apart
//! from the engine: vectors, string notation, one seed at a time. The property tests
//! compare the engine against it on random positions.

/// A move that never ends on its own (found by a search with this implementation): it
/// is stopped by the 3000-seed rule.
/// The opponent's front row is empty, so nothing can be captured, and the relays that
/// start when pit 4 sows 5, 6 and 7 never end a lap in an empty pit.
pub const FOREVER: &str = "hus 8 0,1,0,1,3,1,0,1/0,1,0,1,0,1,0,1 0,0,0,0,0,0,0,0/1,1,1,1,1,1,1,1 0";
/// The pit to play in [`FOREVER`].
pub const FOREVER_PIT: usize = 4;

pub struct Board {
    pub preset: String,
    pub w: usize,
    pub pits: [Vec<u32>; 2],
    pub to_move: usize,
}

pub struct Outcome {
    pub after: String,
    pub sown: u32,
    pub captures: u32,
    pub truncated: bool,
}

pub fn parse(text: &str) -> Board {
    let f: Vec<&str> = text.split(' ').collect();
    let w: usize = f[1].parse().expect("width");
    let side = |s: &str| -> Vec<u32> {
        s.replace('/', ",")
            .split(',')
            .map(|x| x.parse().expect("seeds"))
            .collect()
    };
    Board {
        preset: f[0].to_string(),
        w,
        pits: [side(f[2]), side(f[3])],
        to_move: f[4].parse().expect("to move"),
    }
}

pub fn format(b: &Board) -> String {
    let side = |p: &Vec<u32>| {
        let s: Vec<String> = p.iter().map(|x| x.to_string()).collect();
        format!("{}/{}", s[..b.w].join(","), s[b.w..].join(","))
    };
    format!(
        "{} {} {} {} {}",
        b.preset,
        b.w,
        side(&b.pits[0]),
        side(&b.pits[1]),
        b.to_move
    )
}

/// Plays `pit` on `board`; `None` when it is illegal.
pub fn play(board: &Board, pit: usize) -> Option<Outcome> {
    let w = board.w;
    let n = 2 * w;
    let me = board.to_move;
    let mut mine = board.pits[me].clone();
    let mut theirs = board.pits[1 - me].clone();
    if pit >= n || mine[pit] < 2 {
        return None;
    }
    let mut hand = mine[pit];
    mine[pit] = 0;
    let mut next = (pit + 1) % n; // where the next seed goes
    let mut sown = 0;
    let mut captures = 0;
    let mut truncated = false;
    loop {
        let mut last = next;
        while hand > 0 {
            mine[next] += 1;
            last = next;
            next = (next + 1) % n;
            hand -= 1;
            sown += 1;
        }
        if sown >= 3000 {
            truncated = true;
            break;
        }
        if mine[last] == 1 {
            break;
        }
        let front = last < w;
        let across = if front { w - 1 - last } else { 0 };
        if front && theirs[across] > 0 {
            captures += 1;
            match board.preset.as_str() {
                "hus" => {
                    let mut take = vec![across];
                    let mut down = Vec::new();
                    let mut j = across;
                    while j > 0 && theirs[j - 1] > 0 {
                        j -= 1;
                        down.push(j);
                    }
                    let mut up = Vec::new();
                    let mut j = across;
                    while j + 1 < w && theirs[j + 1] > 0 {
                        j += 1;
                        up.push(j);
                    }
                    let sum = |v: &Vec<usize>| v.iter().map(|&k| theirs[k]).sum::<u32>();
                    if sum(&down) >= sum(&up) {
                        take.extend(down);
                    } else {
                        take.extend(up);
                    }
                    for k in take {
                        hand += theirs[k];
                        theirs[k] = 0;
                    }
                    next = last; // sown from the landing pit itself
                }
                "rulebook" => {
                    hand = mine[last] + theirs[across] + theirs[w + last];
                    mine[last] = 0;
                    theirs[across] = 0;
                    theirs[w + last] = 0;
                }
                _ => {
                    hand = theirs[across] + theirs[w + last];
                    theirs[across] = 0;
                    theirs[w + last] = 0;
                }
            }
            continue;
        }
        hand = mine[last];
        mine[last] = 0;
    }
    let mut pits = [Vec::new(), Vec::new()];
    pits[me] = mine;
    pits[1 - me] = theirs;
    let after = Board {
        preset: board.preset.clone(),
        w,
        pits,
        to_move: 1 - me,
    };
    Some(Outcome {
        after: format(&after),
        sown,
        captures,
        truncated,
    })
}

/// Perft the plain way (RULES.md section 8): positions as notation strings, the line's
/// history as a list of them, the end rules re-stated here. Element `d - 1` is the count
/// for depth `d`.
pub fn perft(start: &str, depth: usize) -> Vec<u64> {
    let mut counts = vec![0u64; depth];
    let mut line = vec![start.to_string()];
    if depth > 0 && !over(start, &line[..0], 0) {
        walk(start, 0, &mut line, &mut counts);
    }
    counts
}

/// Whether the game is over at `text`, reached with `earlier` positions before it on
/// the line and `quiet` plies without a capture.
fn over(text: &str, earlier: &[String], quiet: u32) -> bool {
    let board = parse(text);
    let no_moves = board.pits[board.to_move].iter().all(|&s| s < 2);
    no_moves || earlier.iter().any(|p| p == text) || quiet >= 200
}

fn walk(text: &str, quiet: u32, line: &mut Vec<String>, counts: &mut [u64]) {
    let ply = line.len() - 1;
    let board = parse(text);
    for pit in 0..2 * board.w {
        let Some(outcome) = play(&board, pit) else {
            continue;
        };
        counts[ply] += 1;
        let quiet = if outcome.captures > 0 { 0 } else { quiet + 1 };
        if ply + 1 < counts.len() && !over(&outcome.after, line, quiet) {
            line.push(outcome.after.clone());
            walk(&outcome.after, quiet, line, counts);
            line.pop();
        }
    }
}

/// How [`play_out`] ended: the end rule (as the protocol names it), the winner (`None`
/// for a draw), the last position and the plies played.
pub struct PlayedOut {
    pub reason: &'static str,
    pub winner: Option<usize>,
    pub last: String,
    pub plies: u32,
}

/// A game played on from `start` the plain way: before every ply the end rules of
/// RULINGS.md in their order (no move for the player to move; the position occurred
/// before, in `earlier` or on the way; 200 plies without a capture, counting `quiet`
/// already), then the move `choose` picks among the legal pits in increasing order
/// (given their number).
pub fn play_out(
    start: &str,
    earlier: &[String],
    mut quiet: u32,
    mut choose: impl FnMut(usize) -> usize,
) -> PlayedOut {
    let mut seen: Vec<String> = earlier.to_vec();
    let mut text = start.to_string();
    let mut plies = 0;
    loop {
        let board = parse(&text);
        let mover = board.to_move;
        let legal: Vec<usize> = (0..2 * board.w)
            .filter(|&pit| board.pits[mover][pit] >= 2)
            .collect();
        let reason = if legal.is_empty() {
            Some("no-moves")
        } else if seen.contains(&text) {
            Some("repetition")
        } else if quiet >= 200 {
            Some("no-capture-limit")
        } else {
            None
        };
        if let Some(reason) = reason {
            let winner = if reason == "no-moves" {
                Some(1 - mover)
            } else {
                let mine: u32 = board.pits[mover].iter().sum();
                let theirs: u32 = board.pits[1 - mover].iter().sum();
                match mine.cmp(&theirs) {
                    std::cmp::Ordering::Greater => Some(mover),
                    std::cmp::Ordering::Less => Some(1 - mover),
                    std::cmp::Ordering::Equal => None,
                }
            };
            return PlayedOut {
                reason,
                winner,
                last: text,
                plies,
            };
        }
        let pit = legal[choose(legal.len())];
        let outcome = play(&board, pit).expect("a legal pit");
        quiet = if outcome.captures > 0 { 0 } else { quiet + 1 };
        seen.push(text);
        text = outcome.after;
        plies += 1;
    }
}

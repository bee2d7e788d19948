//! A fixed amount of perft work for instruction counts (RULES.md, "Engine speed"):
//! `valgrind --tool=callgrind target/release/examples/perft_work 6` runs perft to depth 6
//! from the start of every preset at width 8. `perft_work DEPTH WIDTH` runs another
//! width (wide boards above 16). Prints the counts, so the work cannot be optimized away.

use engine::{perft, AnyPosition, Preset, Rules};

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>().ok());
    let depth = args.next().flatten().unwrap_or(6) as u32;
    let width = args.next().flatten().unwrap_or(8);
    for preset in Preset::ALL {
        let Ok(rules) = Rules::new(preset, width) else {
            eprintln!("width {width} is out of range");
            return;
        };
        let counts = match AnyPosition::start(rules) {
            AnyPosition::Narrow(p) => perft(&p, depth),
            AnyPosition::Wide(p) => perft(&p, depth),
        };
        println!("{preset} {width} {counts:?}");
    }
}

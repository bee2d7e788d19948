//! The hot path allocates nothing: perft, `play_unchecked` and `Playouts` under a
//! counting allocator.
//! (Its own test binary, since a global allocator applies to the whole binary.)
//!
//! Allocations are counted per thread: the test harness's own thread allocates now and
//! then while the test runs (more often the longer the test takes, on a loaded
//! machine), and those are not the engine's.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use engine::{perft, Game, Playouts, Position, Preset, Rules};

struct Counting;

thread_local! {
    // A const-initialised Cell: reading it neither allocates nor registers a destructor,
    // so the allocator itself may use it.
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

/// Allocations made so far by this thread.
fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: forwards the caller's layout to the system allocator unchanged.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn moves_and_perft_do_not_allocate_per_move() {
    for preset in Preset::ALL {
        let start = Position::start(Rules::new(preset, 8).expect("valid"));
        let before = allocations();
        let mut pos = start;
        let mut plies = 0;
        while let Some(pit) = pos.legal_moves().next() {
            pos.play_unchecked(pit, &mut ());
            plies += 1;
            if plies == 500 {
                break;
            }
        }
        assert_eq!(allocations(), before, "{preset}: play allocated");
        assert!(plies > 5);

        // perft allocates its counts and its line once, whatever the number of nodes.
        let before = allocations();
        let nodes: u64 = perft(&start, 5).iter().sum();
        let allocations = allocations() - before;
        assert!(nodes > 50_000);
        assert!(
            allocations <= 2,
            "{preset}: perft made {allocations} allocations"
        );
    }
    assert_eq!(std::mem::size_of::<Position>(), 64);
}

/// `Playouts` allocates nothing once its history has grown to the longest playout:
/// the same playouts played a second time allocate nothing at all.
#[test]
fn playouts_do_not_allocate_once_grown() {
    for preset in Preset::ALL {
        let game = Game::new(Position::start(Rules::new(preset, 8).expect("valid")));
        let mut playouts = Playouts::new(&game);
        let run = |playouts: &mut Playouts| -> u64 {
            let mut seed = 0x2545_f491_4f6c_dd1du64;
            let mut plies = 0;
            for _ in 0..300 {
                let end = playouts.play(|moves| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    (seed % moves as u64) as usize
                });
                plies += u64::from(end.plies);
            }
            plies
        };
        let first = run(&mut playouts);
        let before = allocations();
        let again = run(&mut playouts);
        assert_eq!(allocations(), before, "{preset}: playouts allocated");
        assert_eq!(again, first);
        assert!(first > 300 * 10, "{preset}: {first} plies");
    }
}

//! The hot path allocates nothing: perft and `play_unchecked` under a counting allocator.
//! (Its own test binary, since a global allocator applies to the whole binary.)

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use engine::{perft, Position, Preset, Rules};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
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
        let before = ALLOCATIONS.load(Ordering::SeqCst);
        let mut pos = start;
        let mut plies = 0;
        while let Some(pit) = pos.legal_moves().next() {
            pos.play_unchecked(pit, &mut ());
            plies += 1;
            if plies == 500 {
                break;
            }
        }
        assert_eq!(
            ALLOCATIONS.load(Ordering::SeqCst),
            before,
            "{preset}: play allocated"
        );
        assert!(plies > 5);

        // perft allocates its counts and its line once, whatever the number of nodes.
        let before = ALLOCATIONS.load(Ordering::SeqCst);
        let nodes: u64 = perft(&start, 5).iter().sum();
        let allocations = ALLOCATIONS.load(Ordering::SeqCst) - before;
        assert!(nodes > 50_000);
        assert!(
            allocations <= 2,
            "{preset}: perft made {allocations} allocations"
        );
    }
    assert_eq!(std::mem::size_of::<Position>(), 64);
}

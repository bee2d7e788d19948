//! The free-space floor: below it, `hus league`, `hus worker` and `hus serve` start no
//! new set, say why once, and go on by themselves once the space is back. A set that a
//! full disk cuts anyway (its log or stderr could not be written) fails and is played
//! again as the same set, as any set that fails.
//!
//! The floor is checked on every directory the command writes (a league's directory
//! and its `logs/`, a worker's scratch directory), each on its own file system, with
//! `statvfs`: the space an unprivileged writer may still use (`f_bavail`), not the
//! root's reserve, so the floor holds before the disk is full for anyone.

use std::fmt;
use std::path::{Path, PathBuf};

/// The floor unless told otherwise (`--min-free-space`): room for a few hundred of the
/// longest logs, and for the store's journal.
pub const DEFAULT_MIN_FREE_SPACE: u64 = 1 << 30;
/// While below the floor, how often the free space is read again.
pub const FLOOR_RECHECK: std::time::Duration = std::time::Duration::from_secs(2);

/// What was found below the floor: the directory, its file system's free space and the
/// floor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LowSpace {
    /// The directory whose file system is short.
    pub dir: PathBuf,
    /// The bytes an unprivileged writer may still use there.
    pub free: u64,
    /// The floor.
    pub floor: u64,
}

impl fmt::Display for LowSpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "only {} free on the file system of {}, below the floor of {} \
             (--min-free-space): no new set starts until there is more",
            size(self.free),
            self.dir.display(),
            size(self.floor)
        )
    }
}

/// A size for people: `512 MiB`, `1.5 GiB`, `200 KiB`, `17 bytes`.
pub fn size(bytes: u64) -> String {
    const UNITS: [(u32, &str); 4] = [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")];
    for (shift, unit) in UNITS {
        if bytes >= 1 << shift {
            let value = bytes as f64 / (1u64 << shift) as f64;
            return if value.fract() == 0.0 || value >= 100.0 {
                format!("{value:.0} {unit}")
            } else {
                format!("{value:.1} {unit}")
            };
        }
    }
    format!("{bytes} bytes")
}

/// The free-space floor of a command's directories.
#[derive(Clone, Debug)]
pub struct DiskFloor {
    dirs: Vec<PathBuf>,
    floor: u64,
    /// Below the floor as of the last [`DiskFloor::update`].
    low: Option<LowSpace>,
}

/// What changed at an [`DiskFloor::update`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FloorChange {
    /// Nothing: as it was.
    Same,
    /// Just went below the floor: new sets wait.
    Low(LowSpace),
    /// Back above it (its free space now, when it can be read): new sets start again.
    Back(Option<u64>),
}

impl FloorChange {
    /// What a runner says when the room is back: `1.5 GiB free again`, or `room again`
    /// when the free space could not be read.
    pub fn back_words(free: Option<u64>) -> String {
        match free {
            Some(free) => format!("{} free again", size(free)),
            None => "room again".to_string(),
        }
    }
}

impl DiskFloor {
    /// The floor `floor` (bytes; 0 checks nothing) for `dirs`.
    pub fn new(dirs: Vec<PathBuf>, floor: u64) -> DiskFloor {
        DiskFloor {
            dirs,
            floor,
            low: None,
        }
    }

    /// The first directory below the floor, now; `None` when every one has room (or
    /// its space cannot be read: a floor never stops a league by itself).
    pub fn check(&self) -> Option<LowSpace> {
        if self.floor == 0 {
            return None;
        }
        self.dirs.iter().find_map(|dir| {
            let free = free_space(dir)?;
            (free < self.floor).then(|| LowSpace {
                dir: dir.clone(),
                free,
                floor: self.floor,
            })
        })
    }

    /// Checks again, and says what changed since the last time.
    pub fn update(&mut self) -> FloorChange {
        let now = self.check();
        let change = match (&self.low, &now) {
            (None, Some(low)) => FloorChange::Low(low.clone()),
            (Some(was), None) => FloorChange::Back(free_space(&was.dir)),
            _ => FloorChange::Same,
        };
        self.low = now;
        change
    }

    /// Below the floor, as of the last [`DiskFloor::update`].
    pub fn low(&self) -> Option<&LowSpace> {
        self.low.as_ref()
    }
}

/// The bytes an unprivileged writer may still use on the file system of `dir`.
pub fn free_space(dir: &Path) -> Option<u64> {
    let stat = nix::sys::statvfs::statvfs(dir).ok()?;
    Some((stat.blocks_available() as u64).saturating_mul(stat.fragment_size() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(size(17), "17 bytes");
        assert_eq!(size(200 << 10), "200 KiB");
        assert_eq!(size(512 << 20), "512 MiB");
        assert_eq!(size(3 << 29), "1.5 GiB");
        assert_eq!(size(1 << 30), "1 GiB");
    }

    #[test]
    fn a_floor_above_the_free_space_is_low_once_and_back_once() {
        let dir = tempfile::tempdir().expect("temp dir");
        let free = free_space(dir.path()).expect("statvfs");
        // A floor no file system has: low; then a floor of 1 byte: back.
        let mut floor = DiskFloor::new(vec![dir.path().to_path_buf()], u64::MAX);
        let FloorChange::Low(low) = floor.update() else {
            panic!("not low")
        };
        assert_eq!(low.dir, dir.path());
        assert!(low.free <= free + (64 << 20), "{low:?}");
        assert_eq!(floor.update(), FloorChange::Same);
        assert!(floor.low().is_some());
        floor.floor = 1;
        assert!(matches!(floor.update(), FloorChange::Back(_)));
        assert_eq!(floor.update(), FloorChange::Same);
        assert_eq!(floor.low(), None);
        // 0 checks nothing; an unreadable directory never stops anything.
        assert_eq!(DiskFloor::new(vec![dir.path().into()], 0).check(), None);
        let gone = DiskFloor::new(vec![dir.path().join("missing")], u64::MAX);
        assert_eq!(gone.check(), None);
        assert_eq!(
            LowSpace {
                dir: PathBuf::from("/srv/league/logs"),
                free: 300 << 20,
                floor: 1 << 30
            }
            .to_string(),
            "only 300 MiB free on the file system of /srv/league/logs, below the floor of \
             1 GiB (--min-free-space): no new set starts until there is more"
        );
    }
}

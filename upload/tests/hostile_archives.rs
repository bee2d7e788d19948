//! Hostile archives: each is refused with an error naming it, and nothing is written,
//! in the store or anywhere else. The archives are made byte by byte (a tar header
//! written by hand), since the `tar` crate's builder refuses to write most of them.

use std::io::Write;
use std::path::Path;

use referee::Dir;
use upload::{pack, unpack_archive, Bounds, UnpackError, ARCHIVE_LEVEL};

/// A raw tar header: `name` as given (not checked), the type byte, size and link name.
fn header(name: &[u8], kind: u8, size: u64, link: &[u8]) -> [u8; 512] {
    let mut h = [0u8; 512];
    h[..name.len()].copy_from_slice(name);
    h[100..107].copy_from_slice(b"0000644");
    h[108..115].copy_from_slice(b"0000000");
    h[116..123].copy_from_slice(b"0000000");
    let size = format!("{size:011o}");
    h[124..135].copy_from_slice(size.as_bytes());
    h[136..147].copy_from_slice(b"00000000000");
    h[156] = kind;
    h[157..157 + link.len()].copy_from_slice(link);
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    h[148..156].copy_from_slice(b"        ");
    let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
    h[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
    h
}

/// A tar of `entries` (header, data), padded and ended, compressed with zstd.
fn archive(entries: &[([u8; 512], &[u8])]) -> Vec<u8> {
    let mut tar = Vec::new();
    for (h, data) in entries {
        tar.extend_from_slice(h);
        tar.extend_from_slice(data);
        tar.resize(tar.len().div_ceil(512) * 512, 0);
    }
    tar.extend_from_slice(&[0u8; 1024]);
    zstd::encode_all(&tar[..], ARCHIVE_LEVEL).unwrap()
}

const MANIFEST: &[u8] = b"language = \"python\"\n";

fn manifest() -> ([u8; 512], &'static [u8]) {
    (
        header(b"hus-bot.toml", b'0', MANIFEST.len() as u64, b""),
        MANIFEST,
    )
}

/// A store (an empty directory), inside a directory of its own so that a write beside
/// the store would be seen too.
struct Place {
    outer: tempfile::TempDir,
}

impl Place {
    fn new() -> Place {
        let outer = tempfile::tempdir().unwrap();
        std::fs::create_dir(outer.path().join("store")).unwrap();
        Place { outer }
    }

    fn store(&self) -> Dir {
        Dir::open(&self.outer.path().join("store")).unwrap()
    }

    /// Every path under the outer directory.
    fn all(&self) -> Vec<String> {
        fn walk(dir: &Path, base: &Path, out: &mut Vec<String>) {
            for e in std::fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                out.push(p.strip_prefix(base).unwrap().display().to_string());
                if p.symlink_metadata().unwrap().is_dir() {
                    walk(&p, base, out);
                }
            }
        }
        let mut out = Vec::new();
        walk(self.outer.path(), self.outer.path(), &mut out);
        out.sort();
        out
    }

    /// Unpacks `bytes` with `bounds`: must be refused, with the store left empty and
    /// nothing beside it.
    fn refused(&self, bytes: &[u8], bounds: &Bounds) -> UnpackError {
        let error = unpack_archive(bytes, &self.store(), bounds).unwrap_err();
        assert_eq!(self.all(), ["store"], "written after {error}");
        error
    }
}

#[test]
fn a_parent_path_is_refused_before_anything_is_written() {
    let place = Place::new();
    let bytes = archive(&[manifest(), (header(b"../escaped", b'0', 2, b""), b"hi")]);
    let e = place.refused(&bytes, &Bounds::default());
    assert_eq!(
        e.to_string(),
        "\"../escaped\" in the archive: a path with `..` (it would be written outside the bot's directory) (nothing written)"
    );
    let deeper = archive(&[
        manifest(),
        (header(b"a/b/../../../escaped", b'0', 2, b""), b"hi"),
    ]);
    assert!(
        matches!(place.refused(&deeper, &Bounds::default()), UnpackError::Path { path, .. } if path == "a/b/../../../escaped")
    );
}

#[test]
fn an_absolute_path_is_refused_before_anything_is_written() {
    let place = Place::new();
    let target = format!("/tmp/hus-upload-absolute-{}", std::process::id());
    let bytes = archive(&[manifest(), (header(target.as_bytes(), b'0', 2, b""), b"hi")]);
    let e = place.refused(&bytes, &Bounds::default());
    assert_eq!(
        e.to_string(),
        format!("{target:?} in the archive: an absolute path (it would be written outside the bot's directory) (nothing written)")
    );
    assert!(!Path::new(&target).exists());
}

#[test]
fn a_link_to_etc_is_refused_and_nothing_is_written_through_it() {
    let place = Place::new();
    let bytes = archive(&[
        manifest(),
        (header(b"etc", b'2', 0, b"/etc"), b""),
        (header(b"etc/hus-upload-planted", b'0', 2, b""), b"hi"),
    ]);
    let e = place.refused(&bytes, &Bounds::default());
    assert_eq!(
        e.to_string(),
        "\"etc\" in the archive is a symbolic link (to \"/etc\"); an uploaded bot may hold no link (nothing written)"
    );
    assert!(!Path::new("/etc/hus-upload-planted").exists());
    // A link that stays inside the tree is refused all the same, and so is a hard link.
    let inside = archive(&[manifest(), (header(b"me", b'2', 0, b"hus-bot.toml"), b"")]);
    assert!(
        matches!(place.refused(&inside, &Bounds::default()), UnpackError::SymbolicLink { path, target } if path == "me" && target == "hus-bot.toml")
    );
    let hard = archive(&[
        manifest(),
        (header(b"passwd", b'1', 0, b"/etc/passwd"), b""),
    ]);
    assert_eq!(
        place.refused(&hard, &Bounds::default()).to_string(),
        "\"passwd\" in the archive is a hard link (to \"/etc/passwd\"); an uploaded bot may hold no link (nothing written)"
    );
}

#[test]
fn device_nodes_and_fifos_are_refused() {
    let place = Place::new();
    let char_dev = archive(&[manifest(), (header(b"mem", b'3', 0, b""), b"")]);
    assert_eq!(
        place.refused(&char_dev, &Bounds::default()).to_string(),
        "\"mem\" in the archive is a character device; an uploaded bot may hold only files and directories (nothing written)"
    );
    let block = archive(&[manifest(), (header(b"sda", b'4', 0, b""), b"")]);
    assert!(matches!(
        place.refused(&block, &Bounds::default()),
        UnpackError::Device { kind: "block", .. }
    ));
    let fifo = archive(&[manifest(), (header(b"pipe", b'6', 0, b""), b"")]);
    assert!(
        matches!(place.refused(&fifo, &Bounds::default()), UnpackError::Fifo { path } if path == "pipe")
    );
}

/// A zstd stream of `header` then `mib` MiB of zeros, as concatenated frames (each MiB
/// compresses to a few dozen bytes): a small archive that unpacks to a lot.
fn bomb(header: [u8; 512], mib: usize) -> Vec<u8> {
    let mut out = zstd::encode_all(&header[..], 19).unwrap();
    let frame = zstd::encode_all(&vec![0u8; 1 << 20][..], 19).unwrap();
    for _ in 0..mib {
        out.write_all(&frame).unwrap();
    }
    out
}

#[test]
fn a_100_kb_archive_that_unpacks_to_a_gigabyte_is_refused_at_the_bound() {
    let place = Place::new();
    let gib = bomb(header(b"big", b'0', 1 << 30, b""), 1024);
    assert!(gib.len() < 100_000, "{} bytes", gib.len());
    eprintln!("a 1 GiB file packed in {} bytes", gib.len());
    let started = std::time::Instant::now();
    let e = place.refused(&gib, &Bounds::default());
    assert_eq!(
        e.to_string(),
        "the archive unpacks to more than 256 MiB, the bound of an upload (refused at the bound; nothing written)"
    );
    // Refused at the header, which declares the size: not a gigabyte decompressed.
    eprintln!("refused in {:?}", started.elapsed());
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    // Many files that add up past the bound: refused at the first that passes it.
    let bounds = Bounds {
        unpacked_bytes: 4 << 20,
        ..Bounds::default()
    };
    let mut many = Vec::new();
    for i in 0..8 {
        many.extend(bomb(
            header(format!("f{i}").as_bytes(), b'0', 1 << 20, b""),
            1,
        ));
    }
    assert!(
        matches!(place.refused(&many, &bounds), UnpackError::UnpackedTooBig { bound } if bound == 4 << 20)
    );
    // A GNU long name as big as the files may be: the decompressed stream's own bound
    // stops it, and the tar reader never holds it whole.
    let long = bomb(header(b"././@LongLink", b'L', 64 << 20, b""), 64);
    assert!(matches!(
        place.refused(&long, &bounds),
        UnpackError::UnpackedTooBig { .. }
    ));
}

#[test]
fn a_hundred_thousand_files_are_refused_at_the_bound() {
    let place = Place::new();
    let mut tar = Vec::new();
    tar.extend_from_slice(&manifest().0);
    tar.extend_from_slice(MANIFEST);
    tar.resize(1024, 0);
    for i in 0..100_000 {
        tar.extend_from_slice(&header(format!("f/{i}").as_bytes(), b'0', 0, b""));
    }
    tar.extend_from_slice(&[0u8; 1024]);
    let bytes = zstd::encode_all(&tar[..], 3).unwrap();
    let e = place.refused(&bytes, &Bounds::default());
    assert_eq!(
        e.to_string(),
        "the archive holds more than 10000 files and directories, the bound of an upload (nothing written)"
    );
}

#[test]
fn other_bounds_each_have_their_own_error() {
    let place = Place::new();
    let small = archive(&[manifest()]);
    let tight = Bounds {
        archive_bytes: 10,
        ..Bounds::default()
    };
    assert_eq!(
        place.refused(&small, &tight).to_string(),
        format!(
            "the archive has {} bytes, more than 10 bytes, the bound of an upload",
            small.len()
        )
    );
    let deep = archive(&[manifest(), (header(b"a/b/c/d/e", b'0', 0, b""), b"")]);
    let shallow = Bounds {
        depth: 4,
        ..Bounds::default()
    };
    assert_eq!(
        place.refused(&deep, &shallow).to_string(),
        "\"a/b/c/d/e\" in the archive: a path of 5 components, deeper than the bound of 4 (nothing written)"
    );
    let long = archive(&[manifest(), (header(b"abcdefgh/ijklmn", b'0', 0, b""), b"")]);
    let short = Bounds {
        path_bytes: 14,
        ..Bounds::default()
    };
    assert!(
        matches!(place.refused(&long, &short), UnpackError::Path { problem, .. } if problem == "a path of 15 bytes, longer than the bound of 14")
    );
    let twice = archive(&[manifest(), manifest()]);
    assert!(
        matches!(place.refused(&twice, &Bounds::default()), UnpackError::Duplicate { path } if path == "hus-bot.toml")
    );
    let under_file = archive(&[manifest(), (header(b"hus-bot.toml/x", b'0', 0, b""), b"")]);
    assert!(matches!(
        place.refused(&under_file, &Bounds::default()),
        UnpackError::Duplicate { .. }
    ));
    assert!(matches!(
        place.refused(b"not zstd at all", &Bounds::default()),
        UnpackError::Corrupt(_)
    ));
}

#[test]
fn a_packed_bot_unpacks_to_the_same_files_in_a_new_directory_each_time() {
    let bot = tempfile::tempdir().unwrap();
    std::fs::write(bot.path().join("hus-bot.toml"), MANIFEST).unwrap();
    std::fs::create_dir_all(bot.path().join("lib/deep")).unwrap();
    std::fs::write(bot.path().join("lib/deep/x.py"), "x = 1\n").unwrap();
    std::fs::create_dir(bot.path().join("empty")).unwrap();
    std::fs::write(bot.path().join("run.sh"), "#!/bin/sh\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        bot.path().join("run.sh"),
        std::fs::Permissions::from_mode(0o775),
    )
    .unwrap();
    let packed = pack(bot.path(), &Bounds::default()).unwrap();
    let place = Place::new();
    let one = unpack_archive(&packed.bytes, &place.store(), &Bounds::default()).unwrap();
    let two = unpack_archive(&packed.bytes, &place.store(), &Bounds::default()).unwrap();
    assert_ne!(one.dir, two.dir);
    assert_eq!(one.hash, packed.hash);
    assert!(one
        .dir
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .starts_with(&packed.hash[..16]));
    assert_eq!(one.unpacked.files, 6);
    assert_eq!(one.unpacked.bytes, MANIFEST.len() as u64 + 6 + 10);
    assert_eq!(
        std::fs::read_to_string(one.sources.join("lib/deep/x.py")).unwrap(),
        "x = 1\n"
    );
    assert!(one.sources.join("empty").is_dir());
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&one.sources.join("run.sh")) & 0o111, 0o111);
    assert_eq!(mode(&one.sources.join("hus-bot.toml")) & 0o111, 0);
}

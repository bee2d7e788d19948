//! A real PostgreSQL server for tests: Debian's binaries (installed by tests/setup.sh),
//! a fresh cluster made by `initdb` in a temporary directory, started by `pg_ctl` on a
//! free port, run as the unprivileged user `nobody` when the tests run as root
//! (PostgreSQL refuses to run as root), and stopped when the value is dropped (or, for
//! the cluster a whole test binary shares, when the process exits).
//!
//! Shared by the league crate's store tests and the end-to-end tests (`#[path]`).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};

/// The unprivileged account the server runs as when the tests run as root.
const NOBODY: (u32, u32) = (65534, 65534);

/// A running cluster.
pub struct Postgres {
    /// The temporary directory: `data/`, the server's log and its socket.
    root: tempfile::TempDir,
    bin: PathBuf,
    /// The TCP port it listens on (every address: tests in network namespaces reach it
    /// over their virtual network).
    pub port: u16,
    stopped: bool,
}

/// The directory of Debian's PostgreSQL binaries (the newest version installed).
fn bin_dir() -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path().join("bin"))
                .filter(|p| p.join("initdb").is_file())
                .collect()
        })
        .unwrap_or_default();
    found.sort_by_key(|p| {
        p.parent()
            .and_then(|v| v.file_name())
            .and_then(|v| v.to_str())
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0)
    });
    match found.pop() {
        Some(dir) => dir,
        None => panic!(
            "PostgreSQL's server binaries are not installed (no /usr/lib/postgresql/*/bin/initdb): \
             run tests/setup.sh"
        ),
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A free TCP port (the race with another process taking it before the server does is
/// accepted: the server then fails to start and says so).
fn free_port() -> u16 {
    std::net::TcpListener::bind("0.0.0.0:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn run(cmd: &mut Command, what: &str) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

impl Postgres {
    /// Makes and starts a fresh cluster whose superuser is `hus`, trusting local
    /// connections (it listens only inside this machine and the tests' namespaces).
    pub fn start() -> Postgres {
        Postgres::start_with(None)
    }

    /// The same, taking only TLS connections over TCP (`ssl = on` with the server
    /// certificate of `certs`, and only `hostssl` lines in `pg_hba.conf` for TCP):
    /// a connection without TLS is refused by the server.
    pub fn start_tls(certs: &Certs) -> Postgres {
        Postgres::start_with(Some(certs))
    }

    fn start_with(tls: Option<&Certs>) -> Postgres {
        let bin = bin_dir();
        // Under /var/tmp: a directory every user can reach (the server runs as nobody).
        let root = tempfile::Builder::new()
            .prefix("hus-pg-")
            .tempdir_in("/var/tmp")
            .expect("temp dir");
        if is_root() {
            std::os::unix::fs::chown(root.path(), Some(NOBODY.0), Some(NOBODY.1))
                .expect("chown the cluster's directory to nobody");
        }
        let mut pg = Postgres {
            root,
            bin,
            port: free_port(),
            stopped: true,
        };
        let data = pg.data();
        run(
            pg.as_owner(&pg.bin.join("initdb"))
                .arg("-D")
                .arg(&data)
                .args(["-U", "hus", "--auth=trust", "-E", "UTF8", "--no-sync"])
                .args(["--locale=C"]),
            "initdb",
        );
        let mut settings = format!(
            "port = {}\nlisten_addresses = '*'\nunix_socket_directories = '{}'\n\
             fsync = off\nfull_page_writes = off\nmax_connections = 100\n",
            pg.port,
            pg.root.path().display()
        );
        if let Some(certs) = tls {
            // The server reads its key only if no one else may (0600, its own).
            for (from, to, mode) in [
                (certs.path("server.pem"), "server.crt", 0o644),
                (certs.path("server.key"), "server.key", 0o600),
            ] {
                let to = data.join(to);
                std::fs::copy(&from, &to).expect("copy the server's certificate");
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&to, std::fs::Permissions::from_mode(mode))
                    .expect("chmod the server's certificate");
                if is_root() {
                    std::os::unix::fs::chown(&to, Some(NOBODY.0), Some(NOBODY.1))
                        .expect("chown the server's certificate");
                }
            }
            settings.push_str("ssl = on\n");
        }
        std::fs::write(data.join("postgresql.auto.conf"), settings)
            .expect("write the server's settings");
        if is_root() {
            std::os::unix::fs::chown(
                data.join("postgresql.auto.conf"),
                Some(NOBODY.0),
                Some(NOBODY.1),
            )
            .expect("chown the settings");
        }
        // Every address may connect without a password: the cluster lives only for
        // this test, on this machine and its test namespaces.
        let tcp = match tls {
            // `localhost` may be ::1 too.
            Some(_) => "hostssl all all 0.0.0.0/0 trust\nhostssl all all ::/0 trust\n",
            None => "host all all 0.0.0.0/0 trust\n",
        };
        std::fs::write(
            data.join("pg_hba.conf"),
            format!("local all all trust\n{tcp}"),
        )
        .expect("write pg_hba.conf");
        pg.up();
        pg
    }

    fn data(&self) -> PathBuf {
        self.root.path().join("data")
    }

    /// The server's own log (for a failing test's message).
    pub fn log_path(&self) -> PathBuf {
        self.root.path().join("server.log")
    }

    fn as_owner(&self, program: &Path) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(self.root.path())
            .env("HOME", self.root.path())
            .env_remove("PGDATA");
        if is_root() {
            use std::os::unix::process::CommandExt;
            cmd.uid(NOBODY.0).gid(NOBODY.1);
        }
        cmd
    }

    /// Starts the server and waits until it accepts connections.
    pub fn up(&mut self) {
        run(
            self.as_owner(&self.bin.join("pg_ctl"))
                .arg("-D")
                .arg(self.data())
                .arg("-l")
                .arg(self.log_path())
                .args(["-w", "-t", "120", "start"]),
            "pg_ctl start",
        );
        self.stopped = false;
    }

    /// Stops the server at once, as a crash or a power cut of the database's process
    /// would (`-m immediate`); committed transactions survive (they are in the WAL).
    pub fn down(&mut self) {
        if self.stopped {
            return;
        }
        let _ = self
            .as_owner(&self.bin.join("pg_ctl"))
            .arg("-D")
            .arg(self.data())
            .args(["-w", "-t", "120", "-m", "immediate", "stop"])
            .output();
        self.stopped = true;
    }

    /// The URL of database `db` over TCP at `host`.
    pub fn url_at(&self, host: &str, db: &str) -> String {
        format!("postgres://hus@{host}:{}/{db}", self.port)
    }

    /// The URL of database `db` on the loopback address.
    pub fn url(&self, db: &str) -> String {
        self.url_at("127.0.0.1", db)
    }

    /// Runs one SQL command with psql in database `db`; returns its output (unaligned,
    /// tuples only).
    pub fn psql(&self, db: &str, sql: &str) -> String {
        let out = run(
            Command::new(self.bin.join("psql"))
                .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d"])
                .arg(self.url(db))
                .args(["-c", sql]),
            &format!("psql {sql}"),
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// A new, empty database; returns its URL.
    pub fn fresh_db(&self) -> String {
        static NEXT: AtomicU32 = AtomicU32::new(1);
        let name = format!(
            "t{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        );
        self.psql("postgres", &format!("CREATE DATABASE {name}"));
        self.url(&name)
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.down();
    }
}

/// Certificates made for a test by the `openssl` command (elliptic-curve keys: made
/// at once): a CA (`ca.pem`), a server certificate it signed for `localhost` and
/// 127.0.0.1 (`server.pem`, `server.key`), and a second CA that signed nothing
/// (`other-ca.pem`).
pub struct Certs {
    dir: tempfile::TempDir,
}

impl Certs {
    pub fn make() -> Certs {
        let dir = tempfile::tempdir().expect("temp dir");
        let openssl = |args: &[&str], what: &str| {
            run(
                Command::new("openssl").current_dir(dir.path()).args(args),
                what,
            )
        };
        let key = [
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
        ];
        for (name, subject) in [("ca", "/CN=hus test CA"), ("other-ca", "/CN=another CA")] {
            let (pem, key_file) = (format!("{name}.pem"), format!("{name}.key"));
            let mut args = vec!["req", "-x509", "-days", "2", "-subj", subject];
            args.extend(key);
            args.extend(["-keyout", &key_file, "-out", &pem]);
            openssl(&args, "openssl req -x509 (a CA)");
        }
        let mut args = vec!["req", "-subj", "/CN=localhost"];
        args.extend(key);
        args.extend(["-keyout", "server.key", "-out", "server.csr"]);
        openssl(&args, "openssl req (the server's request)");
        std::fs::write(
            dir.path().join("server.ext"),
            "subjectAltName = DNS:localhost, IP:127.0.0.1\nbasicConstraints = CA:FALSE\n\
             keyUsage = digitalSignature\nextendedKeyUsage = serverAuth\n",
        )
        .expect("write the extensions");
        openssl(
            &[
                "x509",
                "-req",
                "-in",
                "server.csr",
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-days",
                "2",
                "-extfile",
                "server.ext",
                "-out",
                "server.pem",
            ],
            "openssl x509 -req (the server's certificate)",
        );
        Certs { dir }
    }

    /// A file of the set: `ca.pem`, `other-ca.pem`, `server.pem`, `server.key`.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

/// One cluster for a whole test binary (started at the first call), stopped when the
/// process exits.
pub fn shared() -> &'static Mutex<Postgres> {
    static SHARED: OnceLock<Mutex<Postgres>> = OnceLock::new();
    SHARED.get_or_init(|| {
        extern "C" fn stop_shared() {
            if let Some(pg) = SHARED.get() {
                if let Ok(mut pg) = pg.lock() {
                    pg.down();
                    // A static is never dropped: its directory goes here.
                    let _ = std::fs::remove_dir_all(pg.root.path());
                }
            }
        }
        let pg = Postgres::start();
        // SAFETY: registering a function without arguments to run at exit.
        unsafe {
            libc::atexit(stop_shared);
        }
        Mutex::new(pg)
    })
}

/// A fresh database on the shared cluster.
pub fn fresh_shared_db() -> String {
    let pg = shared().lock().unwrap_or_else(|p| p.into_inner());
    pg.fresh_db()
}

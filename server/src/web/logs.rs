//! A set's log, found where it is kept (a file of the league's logs directory, the
//! archive of its number's range, or the shared store for a set a worker played), and
//! downloads of logs (streamed by `crate::download`). Nothing outside the logs
//! directory is served (`confined`).

use std::net::SocketAddr;
use std::path::{Component, Path as FsPath, PathBuf};
use std::sync::Arc;

use axum::extract::{ConnectInfo, Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::sets::finished_set;
use crate::download;
use crate::error::{not_found_error, ApiError};
use crate::state::AppState;

/// A file name alone (no directory part, no `..`, not hidden) in `dir`, after
/// resolving links, or `None`: nothing outside the league's logs can be served.
pub fn confined(dir: &FsPath, name: &str) -> Option<PathBuf> {
    let mut parts = FsPath::new(name).components();
    let ok = matches!(parts.next(), Some(Component::Normal(_)))
        && parts.next().is_none()
        && !name.starts_with('.')
        && !name.contains(['/', '\\', '\0']);
    if !ok {
        return None;
    }
    let base = dir.canonicalize().ok()?;
    let path = base.join(name).canonicalize().ok()?;
    (path.starts_with(&base) && path.is_file()).then_some(path)
}

pub(super) fn logs_dir(app: &AppState) -> PathBuf {
    app.dir.join(league::LOGS_DIR)
}

/// Where a set's log is: a file of the league's logs directory, or (a set a worker
/// played, its log `store:ID`) the shared store.
pub(super) enum LogSource {
    File(PathBuf),
    Stored(league::SetId),
    /// In the archive of its number's range (`league::archive_logs`), unless the
    /// archive left it out: then its own file, if it had one.
    Archived(PathBuf, Option<PathBuf>),
}

/// A set's log, found: where it is, whether the set is finished, and the moves it
/// holds (known before the log is read: from the store for a finished set, from the
/// live hub for a running one).
pub(super) struct FoundLog {
    pub(super) source: LogSource,
    pub(super) finished: bool,
    pub(super) moves: u64,
}

/// A set's log: the finished set's, or a running set's.
pub(super) async fn set_log_source(app: &AppState, set: &str) -> Result<FoundLog, ApiError> {
    let view = finished_set(app, set).await?;
    let view = view.as_deref();
    let finished = view.is_some();
    let moves = match view {
        Some(v) => v.moves[0] + v.moves[1],
        None => match app.hub.moves(set) {
            Some(moves) => moves,
            None => return Err(not_found_error(format!("no set named {set:?}"))),
        },
    };
    let found = |source| FoundLog {
        source,
        finished,
        moves,
    };
    if view.is_some_and(|v| v.pruned) {
        return Err(ApiError(
            StatusCode::GONE,
            format!(
                "the log of {set} was pruned (hus serve --keep-logs, hus prune); its result stays"
            ),
        ));
    }
    if let Some(&league::LogPlace::Stored(id)) = view.map(|v| &v.log) {
        return Ok(found(LogSource::Stored(id)));
    }
    // A finished set's log is the file the store names (`STEM.jsonl.zst`; the plain
    // `STEM.jsonl` until its compression is whole); a running set's is being written,
    // `STEM.jsonl`.
    let name = match view {
        Some(v) => v.log.file_name().unwrap_or_default(),
        None => format!("{set}.jsonl"),
    };
    let file = referee::finished_log_candidates(FsPath::new(&name))
        .iter()
        .find_map(|candidate| confined(&logs_dir(app), &candidate.to_string_lossy()));
    // Once the archive of its number's range is there, a finished set's log is read
    // from it (its own file is about to go, or gone); a log the archive left out
    // (larger than an archive takes) is still its file.
    match view.map(|v| league::archive_path(&logs_dir(app), v.number)) {
        Some(archive) if archive.is_file() => Ok(found(LogSource::Archived(archive, file))),
        _ => match file {
            Some(path) => Ok(found(LogSource::File(path))),
            None => Err(not_found_error(format!("the log of {set:?} is missing"))),
        },
    }
}

/// The log of `set` read from `archive` into a file of a new private directory
/// (removed when the directory is dropped), named as the set's log; or, when the
/// archive does not hold it, its own `file`.
pub(super) async fn archived_copy(
    set: &str,
    archive: PathBuf,
    file: Option<PathBuf>,
) -> Result<(PathBuf, Option<tempfile::TempDir>), ApiError> {
    let stem = set.to_string();
    let text = tokio::task::spawn_blocking(move || referee::archive::read_log(&archive, &stem))
        .await
        .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
        .map_err(|e| {
            ApiError(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("cannot read the archived log of {set:?}: {e}"),
            )
        })?;
    let Some(text) = text else {
        return file
            .map(|path| (path, None))
            .ok_or_else(|| not_found_error(format!("the log of {set:?} is missing")));
    };
    private_copy(set, text.as_slice())
        .map(|(path, dir)| (path, Some(dir)))
        .map_err(|e| {
            ApiError(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("cannot copy the log of {set:?}: {e}"),
            )
        })
}

/// A log the store keeps, as it keeps it (gzip).
pub(super) async fn stored_log(
    app: &AppState,
    set: &str,
    id: league::SetId,
) -> Result<league::PackedLog, ApiError> {
    match app.reader.log(id).await {
        Ok(Some(log)) => Ok(log),
        Ok(None) => Err(not_found_error(format!(
            "the store keeps no log of {set:?}"
        ))),
        Err(e) => Err(ApiError(StatusCode::SERVICE_UNAVAILABLE, e)),
    }
}

/// A set's log as a download, streamed (`download.rs`), if a download's place is free.
async fn download_source(
    app: &AppState,
    peer: SocketAddr,
    set: &str,
    source: LogSource,
) -> Result<Response, ApiError> {
    let ticket = match app.downloads.start(peer.ip()) {
        Ok(ticket) => ticket,
        Err(busy) => return Ok(busy.into_response()),
    };
    match source {
        LogSource::File(path) => download_file(path, ticket, Some(&format!("{set}.jsonl"))).await,
        LogSource::Archived(archive, file) => {
            // The copy is opened before its directory goes: the download reads the
            // open file.
            let (path, _copy) = archived_copy(set, archive, file).await?;
            download_file(path, ticket, Some(&format!("{set}.jsonl"))).await
        }
        LogSource::Stored(id) => {
            let log = stored_log(app, set, id).await?;
            Ok(download::packed_download(
                &format!("{set}.jsonl"),
                log,
                ticket,
            ))
        }
    }
}

/// The file at `path` (resolved inside the logs directory by `confined`) as a download:
/// as it is, or with `text` (a set's log, named so), a compressed log unpacked as it is
/// sent.
async fn download_file(
    path: PathBuf,
    ticket: download::Ticket,
    text: Option<&str>,
) -> Result<Response, ApiError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let log = download::open_log(&path).await.map_err(|e| {
        ApiError(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("cannot read {name}: {e}"),
        )
    })?;
    match text {
        Some(text) if log.is_compressed().await => {
            Ok(download::unpacked_download(text, log, ticket).await)
        }
        _ => Ok(download::file_download(&name, log, ticket)),
    }
}

pub(super) async fn set_log(
    State(app): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Path(set): Path<String>,
) -> Result<Response, ApiError> {
    let found = set_log_source(&app, &set).await?;
    download_source(&app, peer, &set, found.source).await
}

pub(super) async fn log_file(
    State(app): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Path(file): Path<String>,
) -> Result<Response, ApiError> {
    match confined(&logs_dir(&app), &file) {
        Some(path) => match app.downloads.start(peer.ip()) {
            Ok(ticket) => download_file(path, ticket, None).await,
            Err(busy) => Ok(busy.into_response()),
        },
        None => Err(ApiError(
            StatusCode::NOT_FOUND,
            "no such log: give a file name of the league's logs directory".into(),
        )),
    }
}

/// The log `text` of `set` written into a file of a new private directory (removed
/// when the directory is dropped), named as the set's log: for a log that is not a file
/// of its own (the store's copy, an archive's member).
pub(super) fn private_copy(
    set: &str,
    mut text: impl std::io::Read,
) -> std::io::Result<(PathBuf, tempfile::TempDir)> {
    let copy = tempfile::tempdir()?;
    let path = copy.path().join(format!("{set}.jsonl"));
    let mut file = std::fs::File::create(&path)?;
    std::io::copy(&mut text, &mut file)?;
    Ok((path, copy))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An archived set's log is a private copy of the archive's text; a set the
    /// archive left out is read from its own file; with neither, 404.
    #[test]
    fn an_archived_log_is_copied_from_its_archive_or_read_from_its_file() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let dir = tempfile::tempdir().expect("tmp");
        let held = dir.path().join("r1-a-vs-b.jsonl");
        std::fs::write(&held, "{\"type\":\"header\"}\n").expect("write");
        let archive = dir.path().join("sets-000000001-000000064.tar.zst");
        referee::archive::write_archive(
            &referee::Dir::open(dir.path()).expect("dir"),
            "sets-000000001-000000064.tar.zst",
            &[("r1-a-vs-b".to_string(), held.as_path())],
            &[],
        )
        .expect("archive");
        let (path, copy) = runtime
            .block_on(archived_copy("r1-a-vs-b", archive.clone(), None))
            .map_err(|e| e.1)
            .expect("copied");
        assert!(copy.is_some());
        assert_eq!(
            path.file_name().and_then(|n| n.to_str()),
            Some("r1-a-vs-b.jsonl")
        );
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            "{\"type\":\"header\"}\n"
        );
        let own = dir.path().join("r2-b-vs-a.jsonl.gz");
        std::fs::write(&own, "x").expect("write");
        let (path, copy) = runtime
            .block_on(archived_copy(
                "r2-b-vs-a",
                archive.clone(),
                Some(own.clone()),
            ))
            .map_err(|e| e.1)
            .expect("its file");
        assert_eq!((path, copy.is_none()), (own, true));
        let missing = runtime.block_on(archived_copy("r3-a-vs-b", archive, None));
        assert_eq!(missing.err().map(|e| e.0), Some(StatusCode::NOT_FOUND));
    }

    #[test]
    fn only_plain_names_of_the_directory_are_served() {
        let dir = tempfile::tempdir().expect("temp dir");
        let logs = dir.path().join("logs");
        std::fs::create_dir(&logs).expect("mkdir");
        std::fs::write(logs.join("r1-a-vs-b.jsonl"), "{}").expect("write");
        std::fs::write(dir.path().join("secret"), "no").expect("write");
        std::os::unix::fs::symlink(dir.path().join("secret"), logs.join("link")).expect("link");
        assert!(confined(&logs, "r1-a-vs-b.jsonl").is_some());
        for bad in [
            "../secret",
            "link",
            "..",
            ".",
            "/etc/passwd",
            "a/../../secret",
            ".hidden",
            "",
        ] {
            assert_eq!(confined(&logs, bad), None, "{bad}");
        }
    }
}

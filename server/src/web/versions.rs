//! Bots by upload, the API (docs/api.md, docs/upload.md): an author sends a version
//! (`POST /api/bots/NAME/versions`, the author's token, the archive as the body), reads
//! its state, and makes an earlier one active again; anyone reads the versions.
//!
//! A submission is refused before its body is read when the token is not an author's
//! who may submit the bot (401, 403), when the name is the league file's (409), or when
//! [`crate::uploads::RECEIVING`] uploads are being received (503); then the body is
//! read up to the archive's bound (413 past it) and checked whole, writing nothing
//! (422 with the cause); then the daily limit and the one version on its way per author
//! (429, with `Retry-After`); only then is the version kept, `queued`, and answered 202.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{ConnectInfo, Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use league::{NewVersion, VersionRow, VersionState};
use serde_json::{json, Value};

use crate::authors;
use crate::error::ApiError;
use crate::state::AppState;
use crate::uploads::{day_ago, now_utc, seconds_until_a_day_after};

/// Seconds an author is told to wait while their previous version is on its way.
const PENDING_RETRY_S: u64 = 30;
/// Seconds a sender is told to wait while the server receives as many uploads as it
/// takes at once.
const BUSY_RETRY_S: u64 = 10;
/// The longest bot name an author may use (as a league file's).
const MAX_NAME: usize = 64;

fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")
        .map(str::trim)
}

/// A refusal with `Retry-After`.
fn retry_after(status: StatusCode, seconds: u64, what: String) -> Response {
    let mut response = ApiError::new(status, what).into_response();
    if let Ok(v) = HeaderValue::from_str(&seconds.to_string()) {
        response.headers_mut().insert(header::RETRY_AFTER, v);
    }
    response
}

/// A version as the API shows it; `full` adds its build's output and detail.
pub(crate) fn version_json(v: &VersionRow, full: bool) -> Value {
    let mut out = json!({
        "bot": v.bot,
        "version": v.number,
        "name": v.league_name(),
        "author": v.author,
        "sha256": v.hash,
        "submitted": v.submitted,
        "changed": v.changed,
        "state": v.state.as_str(),
        "page": format!("/bots/{}/versions/{}", v.bot, v.number),
    });
    if full {
        out["output"] = json!(v.output);
        out["detail"] = json!(v.detail);
    }
    out
}

/// Whether `name` may be an uploaded bot's: a league file's bot name.
fn check_bot_name(name: &str) -> Result<(), ApiError> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("{name:?} is not a bot name: use 1 to {MAX_NAME} letters, digits, '-' or '_'"),
        ))
    }
}

/// `POST /api/bots/NAME/versions`.
pub(super) async fn submit(
    State(app): State<Arc<AppState>>,
    ConnectInfo(_peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Path(name): Path<String>,
    body: Body,
) -> Response {
    match receive(&app, &headers, &name, body).await {
        Ok(answer) => answer,
        Err(refused) => refused,
    }
}

async fn receive(
    app: &Arc<AppState>,
    headers: &HeaderMap,
    name: &str,
    body: Body,
) -> Result<Response, Response> {
    let uploads = &app.uploads;
    check_bot_name(name).map_err(IntoResponse::into_response)?;
    if uploads.has_teams() {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "this league plays teams: its entrants are the league file's",
        )
        .into_response());
    }
    if uploads.is_organisers(name) {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!(
                "{name:?} is a bot of the league file, not an uploaded one: choose another name"
            ),
        )
        .into_response());
    }
    let author = check_author(app, headers, name)
        .await
        .map_err(IntoResponse::into_response)?;
    let Ok(_receiving) = uploads.receiving.clone().try_acquire_owned() else {
        return Err(retry_after(
            StatusCode::SERVICE_UNAVAILABLE,
            BUSY_RETRY_S,
            "the server is receiving as many uploads as it takes at once: send again soon".into(),
        ));
    };
    let bound = uploads.settings.bounds.archive_bytes;
    let archive = axum::body::to_bytes(body, bound as usize + 1)
        .await
        .map_err(|e| {
            let too_big = std::error::Error::source(&e)
                .is_some_and(|s| s.is::<http_body_util::LengthLimitError>());
            if too_big {
                ApiError::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!(
                        "the archive is larger than {} bytes, the bound of an upload",
                        bound
                    ),
                )
            } else {
                ApiError::new(
                    StatusCode::BAD_REQUEST,
                    format!("the archive could not be received: {e}"),
                )
            }
            .into_response()
        })?
        .to_vec();
    let bounds = uploads.settings.bounds;
    let archive = tokio::task::spawn_blocking(move || {
        upload::check_archive(&archive, &bounds).map(|_| archive)
    })
    .await
    .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response())?
    .map_err(|e| {
        let status = match e {
            upload::UnpackError::ArchiveTooBig { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            _ => StatusCode::UNPROCESSABLE_ENTITY,
        };
        ApiError::new(status, e.to_string()).into_response()
    })?;
    let version = NewVersion {
        bot: name.to_string(),
        author: author.name.clone(),
        hash: upload::sha256_hex(&archive),
        archive,
        submitted: now_utc(),
    };
    let (per_day, since) = (uploads.settings.per_day, day_ago());
    // The limits' reads and the new row in one call on the store's thread: no other
    // submission comes between them.
    let kept = uploads
        .call(
            move |s| -> Result<Result<u32, Refused>, league::StoreError> {
                let sent = s.submitted_since(&version.author, &since)?;
                if sent.len() as u32 >= per_day {
                    return Ok(Err(Refused::Daily(
                        sent.first().cloned().unwrap_or_default(),
                    )));
                }
                let on_its_way = s
                    .versions_in(&[
                        VersionState::Queued,
                        VersionState::Building,
                        VersionState::Checking,
                    ])?
                    .into_iter()
                    .find(|v| v.author == version.author);
                if let Some(v) = on_its_way {
                    return Ok(Err(Refused::Pending(v.league_name(), v.state)));
                }
                Ok(Ok(s.add_version(&version)?))
            },
        )
        .await
        .map_err(|e| {
            ApiError::new(StatusCode::SERVICE_UNAVAILABLE, e.to_string()).into_response()
        })?;
    let number = match kept {
        Ok(number) => number,
        Err(Refused::Daily(oldest)) => {
            let wait = seconds_until_a_day_after(&oldest);
            return Err(retry_after(
                StatusCode::TOO_MANY_REQUESTS,
                wait,
                format!(
                    "author {} has sent {per_day} versions in the last 24 hours, the league's limit: the next can be sent in {wait} s",
                    author.name
                ),
            ));
        }
        Err(Refused::Pending(version, state)) => {
            return Err(retry_after(
                StatusCode::TOO_MANY_REQUESTS,
                PENDING_RETRY_S,
                format!(
                    "author {}'s version {version} is still {state}: one version on its way at a time",
                    author.name
                ),
            ));
        }
    };
    uploads.wake();
    let row = app
        .uploads
        .call({
            let name = name.to_string();
            move |s| s.version(&name, number)
        })
        .await
        .ok()
        .flatten();
    let body = match row {
        Some(row) => version_json(&row, false),
        None => json!({ "bot": name, "version": number, "state": "queued",
                        "page": format!("/bots/{name}/versions/{number}") }),
    };
    Ok((StatusCode::ACCEPTED, Json(body)).into_response())
}

/// Why a kept archive is not queued.
enum Refused {
    /// The daily limit; the oldest submission of the day.
    Daily(String),
    /// A version of the author's is on its way.
    Pending(String, VersionState),
}

/// `GET /api/bots/NAME/versions`.
pub(super) async fn list(
    State(app): State<Arc<AppState>>,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    check_bot_name(&name)?;
    let versions = app
        .reader
        .versions_of(&name)
        .await
        .map_err(|e| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, e))?;
    if versions.is_empty() {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            format!("{name:?} has no uploaded version"),
        ));
    }
    let list: Vec<Value> = versions.iter().map(|v| version_json(v, false)).collect();
    Ok(Json(json!({ "bot": name, "versions": list })))
}

/// `GET /api/bots/NAME/versions/N`: with its build's output and the cause of a
/// refusal.
pub(super) async fn one(
    State(app): State<Arc<AppState>>,
    Path((name, number)): Path<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    let (name, number) = version_path(&name, &number)?;
    let version = read_version(&app, &name, number).await?;
    Ok(Json(version_json(&version, true)))
}

/// Version `number` of `name`, whole (its output and detail too): 404 if there is none.
async fn read_version(app: &AppState, name: &str, number: u32) -> Result<VersionRow, ApiError> {
    app.reader
        .version(name, number)
        .await
        .map_err(|e| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, e))?
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::NOT_FOUND,
                format!("{name:?} has no version {number}"),
            )
        })
}

fn version_path(name: &str, number: &str) -> Result<(String, u32), ApiError> {
    check_bot_name(name)?;
    let n = number
        .parse::<u32>()
        .ok()
        .filter(|n| *n >= 1 && n.to_string() == number)
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                format!("{number:?} is not a version number (1, 2, ...)"),
            )
        })?;
    Ok((name.to_string(), n))
}

/// `POST /api/bots/NAME/versions/N/activate` (the author's token): an earlier version,
/// one that played, plays again in place of the active one.
pub(super) async fn activate(
    State(app): State<Arc<AppState>>,
    headers: HeaderMap,
    Path((name, number)): Path<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    let (name, number) = version_path(&name, &number)?;
    check_author(&app, &headers, &name).await?;
    let version = read_version(&app, &name, number).await?;
    match version.state {
        VersionState::Active => {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                format!("{} is the active version already", version.league_name()),
            ))
        }
        VersionState::Retired => {}
        other => {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                format!(
                    "{} is {other}: only a version that played (retired) can be made active again",
                    version.league_name()
                ),
            ))
        }
    }
    let said = app
        .uploads
        .reactivate(version)
        .await
        .map_err(|e| ApiError::new(StatusCode::CONFLICT, e))?;
    Ok(Json(json!({ "ok": said })))
}

/// `/bots/NAME/versions`: the page of an uploaded bot's versions.
pub(super) async fn versions_page(
    State(app): State<Arc<AppState>>,
    Path(name): Path<String>,
) -> Response {
    use super::dashboard::{problem_page, respond};
    if let Err(e) = check_bot_name(&name) {
        return problem_page(&app, StatusCode::NOT_FOUND, e.what());
    }
    match app.reader.versions_of(&name).await {
        Ok(versions) if versions.is_empty() => problem_page(
            &app,
            StatusCode::NOT_FOUND,
            &format!("{name:?} has no uploaded version"),
        ),
        Ok(versions) => {
            let s = app.snapshot();
            respond(
                StatusCode::OK,
                crate::html::page(
                    &format!("{name}: versions"),
                    &crate::html::Status::of(&app),
                    crate::html::versions::versions_main(&name, &versions, &s.standings.bots),
                ),
            )
        }
        Err(e) => problem_page(&app, StatusCode::SERVICE_UNAVAILABLE, &e),
    }
}

/// `/bots/NAME/versions/N`: one version's page.
pub(super) async fn version_page(
    State(app): State<Arc<AppState>>,
    Path((name, number)): Path<(String, String)>,
) -> Response {
    use super::dashboard::{problem_page, respond};
    let (name, number) = match version_path(&name, &number) {
        Ok(found) => found,
        Err(e) => return problem_page(&app, StatusCode::NOT_FOUND, e.what()),
    };
    match app.reader.version(&name, number).await {
        Ok(Some(version)) => {
            let s = app.snapshot();
            let standing = s
                .standings
                .bots
                .iter()
                .find(|b| b.name == version.league_name());
            let (dir, name_v) = (app.uploads.settings.cache.clone(), version.league_name());
            let tests = tokio::task::spawn_blocking(move || crate::gate::results_of(&dir, &name_v))
                .await
                .unwrap_or_default();
            respond(
                StatusCode::OK,
                crate::html::page(
                    &format!("{name} v{number}"),
                    &crate::html::Status::of(&app),
                    crate::html::versions::version_main(&version, standing, &tests),
                ),
            )
        }
        Ok(None) => problem_page(
            &app,
            StatusCode::NOT_FOUND,
            &format!("{name:?} has no version {number}"),
        ),
        Err(e) => problem_page(&app, StatusCode::SERVICE_UNAVAILABLE, &e),
    }
}

/// The author whose token the request carries, if that author may submit bot `name`:
/// every author's request is checked so (401 without a token or with a wrong one, 403
/// for another author's bot).
async fn check_author(
    app: &Arc<AppState>,
    headers: &HeaderMap,
    name: &str,
) -> Result<authors::Author, ApiError> {
    let (dir, token, bot) = (
        app.dir.clone(),
        bearer(headers).map(str::to_string),
        name.to_string(),
    );
    let author =
        tokio::task::spawn_blocking(move || authors::authorize(&dir, token.as_deref(), &bot))
            .await
            .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    author.map_err(|refusal| {
        let status = match refusal {
            authors::Refusal::Missing | authors::Refusal::Wrong => StatusCode::UNAUTHORIZED,
            authors::Refusal::NotAllowed { .. } => StatusCode::FORBIDDEN,
            authors::Refusal::Unreadable(_) => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError::new(status, refusal.answer(name))
    })
}

/// Seconds an author is told to wait while another test asked for is running.
const TEST_RETRY_S: u64 = 60;

/// The query of `POST /api/bots/NAME/versions/N/sprt`.
#[derive(serde::Deserialize)]
pub(super) struct SprtQuery {
    /// The version to play against instead of the active one.
    against: Option<String>,
}

/// Whether a version can play a test: it was built and passed its checks (active,
/// retired, or refused by the gate itself).
fn can_be_tested(v: &VersionRow) -> bool {
    v.state.has_played()
        || (v.state == VersionState::Rejected && v.detail.starts_with(crate::gate::REFUSED_BY_GATE))
}

/// `POST /api/bots/NAME/versions/N/sprt` (the author's token, `?against=M` optional):
/// the gate's SPRT of version N against the bot's active version (or version M), with
/// the league's `gate` settings or, without a gate, [`DEFAULT_TEST`]. It changes
/// nothing of which version is active; the test runs on the server after the answer
/// (202), one asked-for test at a time (429 while one runs), and its result, growing
/// pair by pair, is read at `GET` on the same path.
pub(super) async fn sprt(
    State(app): State<Arc<AppState>>,
    headers: HeaderMap,
    Path((name, number)): Path<(String, String)>,
    axum::extract::Query(query): axum::extract::Query<SprtQuery>,
) -> Result<Response, ApiError> {
    let (name, number) = version_path(&name, &number)?;
    check_author(&app, &headers, &name).await?;
    let versions = app
        .reader
        .versions_of(&name)
        .await
        .map_err(|e| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, e))?;
    let find = |n: u32| {
        versions
            .iter()
            .find(|v| v.number == n)
            .cloned()
            .ok_or_else(|| {
                ApiError::new(
                    StatusCode::NOT_FOUND,
                    format!("{name:?} has no version {n}"),
                )
            })
    };
    let candidate = find(number)?;
    let against = match &query.against {
        Some(text) => find(version_path(&name, text)?.1)?,
        None => versions
            .iter()
            .find(|v| v.state == VersionState::Active)
            .cloned()
            .ok_or_else(|| {
                ApiError::new(
                    StatusCode::CONFLICT,
                    format!("{name:?} has no active version to test against: give ?against=M"),
                )
            })?,
    };
    if against.number == candidate.number {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!(
                "{} would play itself: give ?against=M, another version",
                candidate.league_name()
            ),
        ));
    }
    // The lists leave out each version's detail, which says whether the gate refused
    // it: the two versions are read whole.
    let whole = [
        read_version(&app, &name, candidate.number).await?,
        read_version(&app, &name, against.number).await?,
    ];
    for v in &whole {
        if !can_be_tested(v) {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                format!(
                    "{} is {}: only a version that passed its checks (active, retired, or refused by the SPRT gate) can play a test",
                    v.league_name(),
                    v.state
                ),
            ));
        }
    }
    let Some(slot) = crate::gate::AskedSlot::take() else {
        return Ok(retry_after(
            StatusCode::TOO_MANY_REQUESTS,
            TEST_RETRY_S,
            "a test asked for is running: one at a time, ask again when it ends".into(),
        ));
    };
    let uploads = app.uploads.clone();
    let gate = match uploads.league.gate {
        Some(gate) => gate,
        None => league::parse_gate(league::DEFAULT_GATE)
            .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e))?,
    };
    let answer = json!({
        "candidate": candidate.league_name(),
        "active": against.league_name(),
        "state": "running",
        "test": {
            "elo0": gate.sprt.elo0(), "elo1": gate.sprt.elo1(),
            "alpha": gate.sprt.alpha(), "beta": gate.sprt.beta(), "games": gate.games,
            "batch": gate.batch,
        },
        "result": format!("/api/bots/{name}/versions/{number}/sprt"),
    });
    tokio::spawn(async move {
        let _slot = slot;
        // Both trees stay for the test's length, whatever the versions' states.
        let _pins = [
            uploads.pins.pin(&candidate.hash),
            uploads.pins.pin(&against.hash),
        ];
        let dir = uploads.settings.cache.clone();
        let mut bots = Vec::new();
        for v in [&candidate, &against] {
            let bot = match uploads.built(v).await {
                Ok(built) => uploads.bot_config(v, &built),
                Err(e) => Err(e),
            };
            match bot {
                Ok(bot) => bots.push(bot),
                Err(e) => {
                    crate::gate::failed_to_start(
                        &candidate.league_name(),
                        &against.league_name(),
                        &uploads.league,
                        &gate,
                        &dir,
                        format!("{} cannot play: {e}", v.league_name()),
                    );
                    return;
                }
            }
        }
        let result = uploads.play_gate(&bots[0], &bots[1], &gate).await;
        tracing::info!(
            "uploads: the test asked for of {} against {}: {} after {} pairs",
            result.candidate,
            result.active,
            result.verdict.as_str(),
            result.pairs()
        );
    });
    Ok((StatusCode::ACCEPTED, Json(answer)).into_response())
}

/// `GET /api/bots/NAME/versions/N/sprt`: the tests of version N (the gate's and those
/// asked for), oldest first, each with the LLR after every pair.
pub(super) async fn sprt_results(
    State(app): State<Arc<AppState>>,
    Path((name, number)): Path<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    let (name, number) = version_path(&name, &number)?;
    let (dir, candidate) = (
        app.uploads.settings.cache.clone(),
        league::version_name(&name, number),
    );
    let tests = tokio::task::spawn_blocking(move || crate::gate::results_of(&dir, &candidate))
        .await
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    Ok(Json(json!({
        "bot": name,
        "version": number,
        "name": league::version_name(&name, number),
        "tests": tests,
    })))
}

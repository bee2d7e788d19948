//! Replay pages (`/sets/SET/replay`): `referee::viewer_page` built from the set's log
//! (`logs`), kept and shared by `crate::pages::ReplayPages`, sent with a content
//! policy of its inline code's hashes and the server's links on top
//! (`crate::html::replay_nav`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{ConnectInfo, Path, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use futures_util::FutureExt;
use sha2::{Digest, Sha256};

use super::logs::{archived_copy, private_copy, set_log_source, stored_log, LogSource};
use super::sets::{finished_set, pair_page};
use crate::capacity::Client;
use crate::error::ApiError;
use crate::state::AppState;
use crate::{html, pages};

/// The `'sha256-...'` source of an inline element's text, for the CSP.
fn inline_hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// The text of every `<tag>...</tag>` element (without attributes) of a page.
fn inline_elements<'p>(page: &'p str, tag: &str) -> Vec<&'p str> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let mut out = Vec::new();
    let mut rest = page;
    while let Some(start) = rest.find(&open) {
        let after = &rest[start + open.len()..];
        let Some(end) = after.find(&close) else { break };
        out.push(&after[..end]);
        rest = &after[end + close.len()..];
    }
    out
}

/// The replay viewer of `hus replay --html` for a set. Its script and style are
/// inline: the page's policy allows exactly those, by their SHA-256. A finished set's
/// page is built once and kept; builds are shared and bounded (`pages.rs`).
///
/// A page that cannot be built costs less than a build: a set of more moves than a
/// page may hold (the store's count, or the live hub's) is refused before its log is
/// read; a log that fails to make a page is refused once and the refusal kept like a
/// page; and an address that was refused `refused::PER_CLIENT` pages in a minute is
/// answered 429 before anything is looked up.
pub(super) async fn replay(
    State(app): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Path(set): Path<String>,
) -> Result<Response, ApiError> {
    let client = Client::of(peer.ip());
    if let Err(wait) = app.page_refusals.check(client) {
        let mut response = ApiError(
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "{client} asked for {} replay pages that cannot be built this minute, the \
                 most one address may: try again in {} s",
                app.page_refusals.per_client(),
                wait.as_secs().max(1)
            ),
        )
        .into_response();
        response.headers_mut().insert(
            header::RETRY_AFTER,
            HeaderValue::from(wait.as_secs().max(1)),
        );
        return Ok(response);
    }
    let found = set_log_source(&app, &set).await?;
    let page = if found.moves > app.max_page_moves {
        Err(too_many_moves(&set, found.moves, app.max_page_moves))
    } else {
        let build = {
            let (app, set, source) = (app.clone(), set.clone(), found.source);
            move |ticket| build_replay(app, set, source, ticket).boxed()
        };
        app.pages.get(&set, found.finished, build).await
    };
    let page = page.inspect_err(|e| {
        if e.0 == StatusCode::UNPROCESSABLE_ENTITY {
            app.page_refusals.note(client);
        }
    })?;
    let html = with_replay_nav(&page.html, &replay_links(&app, &set).await);
    Ok((
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            ),
            (header::CONTENT_SECURITY_POLICY, page.csp.clone()),
        ],
        html,
    )
        .into_response())
}

/// The links of a replay page (`html::replay_nav`): the set's, and the pair's
/// previous and next finished sets (the next one looked for among the sets finished
/// within two of the league's rounds after it; the pair's page lists them all). A
/// running set, or a store that does not answer: the links that need no store.
async fn replay_links(app: &AppState, set: &str) -> maud::Markup {
    let Ok(Some(view)) = finished_set(app, set).await else {
        return html::replay_nav(set, None, None, None);
    };
    let [a, b] = view.bots.clone();
    let previous = pair_page(app, &a, &b, Some(view.number), 1)
        .await
        .ok()
        .and_then(|v| v.into_iter().next())
        .map(|v| v.set);
    let bots = app.snapshot().standings.bots.len().max(2) as u64;
    let window = bots * (bots - 1) * 2 + 2;
    let next = pair_page(app, &a, &b, Some(view.number + window + 1), window as usize)
        .await
        .ok()
        .and_then(|v| {
            v.into_iter()
                .filter(|s| s.number > view.number)
                .min_by_key(|s| s.number)
        })
        .map(|v| v.set);
    html::replay_nav(set, Some(&view), previous.as_deref(), next.as_deref())
}

/// The viewer's page with `nav` first in its body.
fn with_replay_nav(page: &[u8], nav: &maud::Markup) -> Vec<u8> {
    const BODY: &[u8] = b"<body>";
    let nav = nav.0.as_bytes();
    let Some(at) = page.windows(BODY.len()).position(|w| w == BODY) else {
        return page.to_vec();
    };
    let at = at + BODY.len();
    let mut out = Vec::with_capacity(page.len() + nav.len() + 1);
    out.extend_from_slice(&page[..at]);
    out.push(b'\n');
    out.extend_from_slice(nav);
    out.extend_from_slice(&page[at..]);
    out
}

/// The refusal of a page of `moves` moves, over `max`.
fn too_many_moves(set: &str, moves: u64, max: u64) -> ApiError {
    ApiError(
        StatusCode::UNPROCESSABLE_ENTITY,
        format!(
            "the page of {set} would hold {moves} moves, more than {max}: download its log \
             instead (/api/sets/{set}/log)"
        ),
    )
}

/// A log to build a page from: a file, or the store's packed copy.
enum ReplayLog {
    File(PathBuf),
    Packed(league::PackedLog),
    /// A private copy of an archived log, removed with its directory.
    Copy(PathBuf, tempfile::TempDir),
}

/// Builds a set's page on a blocking thread, which gives up when `ticket` says nobody
/// waits for the page any more.
async fn build_replay(
    app: Arc<AppState>,
    set: String,
    source: LogSource,
    ticket: pages::Ticket,
) -> Result<pages::Page, ApiError> {
    let log = match source {
        LogSource::File(path) => ReplayLog::File(path),
        LogSource::Stored(id) => ReplayLog::Packed(stored_log(&app, &set, id).await?),
        LogSource::Archived(archive, file) => match archived_copy(&set, archive, file).await? {
            (path, Some(dir)) => ReplayLog::Copy(path, dir),
            (path, None) => ReplayLog::File(path),
        },
    };
    tokio::task::spawn_blocking(move || {
        // A log the store keeps is read from a private copy, named as the set's log.
        let (path, _copy) = match log {
            ReplayLog::File(path) => (path, None),
            ReplayLog::Copy(path, dir) => (path, Some(dir)),
            ReplayLog::Packed(packed) => {
                let (path, copy) = private_copy(&set, packed.reader()).map_err(|e| {
                    ApiError(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        format!("cannot copy the log of {set:?}: {e}"),
                    )
                })?;
                (path, Some(copy))
            }
        };
        let html = referee::viewer_page(&path, app.max_page_moves, ticket.stop()).map_err(|e| {
            // A build nobody waits for any more is not a refusal of the page.
            if ticket.stop().load(Ordering::Relaxed) {
                ApiError(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the build was stopped".into(),
                )
            } else {
                ApiError(StatusCode::UNPROCESSABLE_ENTITY, format!("{e:#}"))
            }
        })?;
        drop(ticket);
        with_policy(html)
    })
    .await
    .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
}

/// A page with the policy that allows its inline scripts and styles, by their hashes.
fn with_policy(html: String) -> Result<pages::Page, ApiError> {
    let scripts: Vec<String> = inline_elements(&html, "script")
        .into_iter()
        .map(inline_hash)
        .collect();
    let styles: Vec<String> = inline_elements(&html, "style")
        .into_iter()
        .map(inline_hash)
        .collect();
    let csp = format!(
        "default-src 'none'; script-src {}; style-src {}; img-src data:; base-uri 'none'; \
         form-action 'none'; frame-ancestors 'none'",
        scripts.join(" "),
        styles.join(" ")
    );
    let csp = HeaderValue::from_str(&csp)
        .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    Ok(pages::Page {
        html: Bytes::from(html),
        csp,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_elements_and_their_hashes() {
        let page = "<style>a{}</style><script type=\"x\">no</script><script>go()</script>";
        assert_eq!(inline_elements(page, "script"), ["go()"]);
        assert_eq!(inline_elements(page, "style"), ["a{}"]);
        // echo -n 'go()' | openssl dgst -sha256 -binary | base64
        assert!(inline_hash("go()").starts_with("'sha256-"));
    }
}

//! The dashboard's own files, compiled in: `app.js`, `app.css`, the icon, and the
//! replay viewer's board drawing (`/board.js`), which `app.js` draws live games with.

use axum::http::header;
use axum::response::{IntoResponse, Response};

const APP_JS: &str = include_str!("../../assets/app.js");
const APP_CSS: &str = include_str!("../../assets/app.css");
/// The pages' icon (a board of six pits), at `/favicon.svg` and `/favicon.ico`.
const FAVICON: &str = include_str!("../../assets/favicon.svg");

fn asset(kind: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

pub(super) async fn app_js() -> Response {
    asset("text/javascript; charset=utf-8", APP_JS)
}

/// `HusBoard`, the replay viewer's board drawing (`referee/src/replay/board.js`): the
/// dashboard draws the live games with it.
pub(super) async fn board_js() -> Response {
    asset(
        "text/javascript; charset=utf-8",
        referee::viewer_assets::BOARD_JS,
    )
}

pub(super) async fn app_css() -> Response {
    asset("text/css; charset=utf-8", APP_CSS)
}

pub(super) async fn favicon() -> Response {
    asset("image/svg+xml", FAVICON)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dashboard_loads_nothing_from_elsewhere() {
        for source in [APP_JS, APP_CSS, referee::viewer_assets::BOARD_JS] {
            assert_eq!(referee::viewer_assets::loads_from_elsewhere(source), None);
        }
    }
}

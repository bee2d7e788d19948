//! The error every handler of the web server returns: a status and a sentence, sent
//! as `{"error": "..."}` (the API's errors, docs/api.md); the pages show its sentence
//! in their frame.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

/// An API error: a status and a sentence, as `{"error": "..."}`.
#[derive(Clone, Debug)]
pub struct ApiError(pub(crate) StatusCode, pub(crate) String);

impl ApiError {
    /// An error of status `status` that says `what`.
    pub fn new(status: StatusCode, what: impl Into<String>) -> ApiError {
        ApiError(status, what.into())
    }

    /// What it says.
    pub fn what(&self) -> &str {
        &self.1
    }

    /// Its status.
    pub fn status(&self) -> StatusCode {
        self.0
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(json!({ "error": self.1 }))).into_response()
    }
}

/// A 404 that says `what`.
pub(crate) fn not_found_error(what: String) -> ApiError {
    ApiError(StatusCode::NOT_FOUND, what)
}

//! `GET /changelog`: the interface changelog.

use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};

use super::{CHANGELOG_MARKDOWN, MARKDOWN_CONTENT_TYPE};

/// The changelog.
#[utoipa::path(
    get,
    path = "/changelog",
    tag = "platform",
    operation_id = "changelog",
    summary = "Changelog (Markdown)",
    description = "One entry per interface version, newest first. Returned as is.",
    responses((status = 200, description = "Markdown", content_type = "text/markdown", body = String))
)]
pub async fn changelog() -> Response {
    ([(CONTENT_TYPE, MARKDOWN_CONTENT_TYPE)], CHANGELOG_MARKDOWN).into_response()
}

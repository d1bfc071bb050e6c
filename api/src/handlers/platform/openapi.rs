//! `GET /openapi.json`: the OpenAPI 3.1 document of the served endpoints.

use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};

use super::JSON_CONTENT_TYPE;
use crate::state::AppState;

/// The OpenAPI 3.1 document.
#[utoipa::path(
    get,
    path = "/openapi.json",
    tag = "platform",
    operation_id = "openapi",
    summary = "OpenAPI 3.1 document",
    description = "This document. Returned as is, not in the envelope.",
    responses((status = 200, description = "OpenAPI 3.1 JSON", body = serde_json::Value))
)]
pub async fn openapi(State(state): State<AppState>) -> Response {
    (
        [(CONTENT_TYPE, JSON_CONTENT_TYPE)],
        state.catalogue.openapi_json.clone(),
    )
        .into_response()
}

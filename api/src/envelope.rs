//! The success envelope and the extractors that turn axum's rejections into [`ApiError`]s.
//!
//! Handlers take [`ApiJson`], [`ApiPath`] and [`ApiQuery`] instead of axum's `Json`, `Path`
//! and `Query`, so a bad body, a missing `Content-Type`, an undecodable path segment or a query
//! that does not deserialize is a 400 envelope with axum's reason, not a plain-text body. (The
//! router also wraps any plain-text error that slips through; see `router.rs`.)

use axum::Json;
use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Path, Query, Request};
use axum::http::request::Parts;
use serde::Serialize;
use serde::de::DeserializeOwned;
use utoipa::ToSchema;

use crate::error::ApiError;

/// `{"success": true, "data": …}`: every successful JSON response.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Envelope<T> {
    /// Always true.
    pub success: bool,
    /// The payload.
    pub data: T,
}

/// Wraps `data` in the success envelope.
pub fn ok<T: Serialize>(data: T) -> Json<Envelope<T>> {
    Json(Envelope {
        success: true,
        data,
    })
}

/// A JSON body; any rejection (syntax, wrong shape, missing `Content-Type: application/json`,
/// body too large) is a 400 saying why.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApiJson<T>(pub T);

impl<S, T> FromRequest<S> for ApiJson<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        Json::<T>::from_request(req, state)
            .await
            .map(|Json(value)| Self(value))
            .map_err(ApiError::from)
    }
}

impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> Self {
        Self::BadRequest(rejection.body_text())
    }
}

/// Path parameters; a segment that does not decode or deserialize is a 400.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApiPath<T>(pub T);

impl<S, T> FromRequestParts<S> for ApiPath<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Path::<T>::from_request_parts(parts, state)
            .await
            .map(|Path(value)| Self(value))
            .map_err(ApiError::from)
    }
}

impl From<PathRejection> for ApiError {
    fn from(rejection: PathRejection) -> Self {
        Self::BadRequest(rejection.body_text())
    }
}

/// A query string deserialized with serde; a rejection is a 400. For the registry's typed,
/// clamped parameters use [`crate::QueryParams`] instead.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApiQuery<T>(pub T);

impl<S, T> FromRequestParts<S> for ApiQuery<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Query::<T>::from_request_parts(parts, state)
            .await
            .map(|Query(value)| Self(value))
            .map_err(ApiError::from)
    }
}

impl From<QueryRejection> for ApiError {
    fn from(rejection: QueryRejection) -> Self {
        Self::BadRequest(rejection.body_text())
    }
}

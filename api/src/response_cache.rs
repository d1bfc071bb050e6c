//! Serialised answers of the GET data endpoints, reused while nothing they depend on changes.
//!
//! A data payload is a pure function of the request (path, query, whether it comes from a
//! service client, which selects the compact window), the market data held (every snapshot
//! swap bumps the reader's [`generation`](crate::MarketDataReader::generation)) and the clock
//! (freshness fields), so an answer built once is served again, byte for byte, to every
//! request with the same path, query and client kind in the same generation and the same
//! second of the clock. Hot reads then cost a map lookup and a reference-counted copy instead
//! of rebuilding and serialising a payload of up to megabytes.
//!
//! The cache sits inside the token gate: every request is still authenticated, authorised and
//! metered, and the gate's rate-limit headers are added to the cached answer. Only `200`
//! answers are kept; errors are rebuilt each time. Readers without a generation (test
//! doubles) are never cached.

use std::collections::HashMap;
use std::sync::RwLock;

use axum::body::{Body, Bytes, HttpBody as _};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::state::AppState;
use crate::window::is_service_client;

/// The largest body kept (larger answers are served uncached).
const MAX_BODY_BYTES: u64 = 16 << 20;
/// The most body bytes held in all; reaching it empties the cache (entries are rebuilt on
/// the next request, so a full clear is only a burst of misses).
const MAX_TOTAL_BYTES: usize = 256 << 20;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct CacheKey {
    /// Path and query as sent.
    uri: String,
    /// Whether the request came from a service client (compact windows).
    service_client: bool,
}

#[derive(Debug, Clone)]
struct CachedAnswer {
    generation: u64,
    second: i64,
    headers: HeaderMap,
    body: Bytes,
}

/// The cache shared by every route of one router.
#[derive(Debug, Default)]
pub struct ResponseCache {
    inner: RwLock<Entries>,
}

#[derive(Debug, Default)]
struct Entries {
    answers: HashMap<CacheKey, CachedAnswer>,
    bytes: usize,
}

impl ResponseCache {
    fn get(&self, key: &CacheKey, generation: u64, second: i64) -> Option<CachedAnswer> {
        let inner = self
            .inner
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        inner
            .answers
            .get(key)
            .filter(|a| a.generation == generation && a.second == second)
            .cloned()
    }

    fn put(&self, key: CacheKey, answer: CachedAnswer) {
        let mut inner = self
            .inner
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if inner.bytes + answer.body.len() > MAX_TOTAL_BYTES {
            inner.answers.clear();
            inner.bytes = 0;
        }
        inner.bytes += answer.body.len();
        if let Some(previous) = inner.answers.insert(key, answer) {
            inner.bytes -= previous.body.len();
        }
    }
}

/// The middleware: serve a held answer or build, keep and serve a fresh one.
pub(crate) async fn cached(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let generation = state
        .market_data()
        .ok()
        .and_then(|reader| reader.generation());
    let Some(generation) = generation.filter(|_| request.method() == Method::GET) else {
        return next.run(request).await;
    };
    let key = CacheKey {
        uri: request
            .uri()
            .path_and_query()
            .map_or_else(String::new, |pq| pq.as_str().to_owned()),
        service_client: is_service_client(request.headers()),
    };
    let second = state.now().timestamp();
    let cache = state.response_cache();
    if let Some(answer) = cache.get(&key, generation, second) {
        return (StatusCode::OK, answer.headers, answer.body).into_response();
    }

    let response = next.run(request).await;
    let fits = response
        .body()
        .size_hint()
        .exact()
        .is_some_and(|len| len <= MAX_BODY_BYTES);
    if response.status() != StatusCode::OK || !fits {
        return response;
    }
    let (parts, body) = response.into_parts();
    let Ok(body) = axum::body::to_bytes(body, MAX_BODY_BYTES as usize).await else {
        // The body's exact size was announced above; a failure here is a broken body.
        return ApiError::internal("reading a response body", "the body failed").into_response();
    };
    cache.put(
        key,
        CachedAnswer {
            generation,
            second,
            headers: parts.headers.clone(),
            body: body.clone(),
        },
    );
    Response::from_parts(parts, Body::from(body))
}

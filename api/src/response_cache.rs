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
//! Clients that accept gzip (`Accept-Encoding`, as curl `--compressed`, browsers and the usual
//! HTTP libraries send) get answers of [`MIN_GZIP_BYTES`] and more gzip-encoded. The encoded copy
//! is made once per held answer, on the first request that asks for it, and served to every
//! later one: JSON of numbers shrinks several-fold, so a multi-megabyte payload (the full flow
//! of SPY) costs a fraction of the bytes to send. Answers that are not held go out as built.
//!
//! The cache sits inside the token gate: every request is still authenticated, authorised and
//! counted against the per-minute and per-hour limits, and the gate's rate-limit headers are
//! added to the cached answer. A held answer is marked [`ServedFromCache`], so the gate gives
//! back the budget units it reserved: it read no upstream data. Only `200` answers are kept;
//! errors are rebuilt each time. Readers without a generation (test doubles) are never cached.

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::{Arc, OnceLock, RwLock};

use axum::body::{Bytes, HttpBody as _};
use axum::extract::{Request, State};
use axum::http::header::{ACCEPT_ENCODING, CONTENT_ENCODING, CONTENT_LENGTH, VARY};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::state::AppState;
use crate::window::is_service_client;

/// The largest body kept (larger answers are served uncached).
const MAX_BODY_BYTES: u64 = 16 << 20;
/// The most bytes (keys, headers and bodies) held in all; reaching it empties the cache
/// (entries are rebuilt on the next request, so a full clear is only a burst of misses).
const MAX_TOTAL_BYTES: usize = 256 << 20;
/// Smallest answer sent gzip-encoded: below about one network packet, encoding saves nothing.
pub const MIN_GZIP_BYTES: usize = 1400;

/// Response extension of an answer served from the cache (not built by its handler), which
/// [`crate::auth::settlement_of`] does not charge to the monthly budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServedFromCache;

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
    /// The gzip encoding of `body`, made on first demand and shared by the clones.
    gzip: Arc<OnceLock<Bytes>>,
}

impl CachedAnswer {
    /// The answer for a client that does (`true`) or does not accept gzip.
    fn respond(&self, accepts_gzip: bool) -> Response {
        let mut headers = self.headers.clone();
        if self.body.len() < MIN_GZIP_BYTES {
            return (StatusCode::OK, headers, self.body.clone()).into_response();
        }
        headers.insert(VARY, HeaderValue::from_static("accept-encoding"));
        if !accepts_gzip {
            return (StatusCode::OK, headers, self.body.clone()).into_response();
        }
        let encoded = self.gzip.get_or_init(|| gzip(&self.body)).clone();
        headers.insert(CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        headers.insert(CONTENT_LENGTH, HeaderValue::from(encoded.len()));
        (StatusCode::OK, headers, encoded).into_response()
    }
}

/// gzip at the fastest level: the answer is encoded once a second at most, but on the request
/// path of the client that asked first.
fn gzip(body: &[u8]) -> Bytes {
    let mut encoder = flate2::write::GzEncoder::new(
        Vec::with_capacity(body.len() / 4),
        flate2::Compression::fast(),
    );
    // Writing to a Vec cannot fail.
    let _ = encoder.write_all(body);
    Bytes::from(encoder.finish().unwrap_or_default())
}

/// Whether `Accept-Encoding` admits gzip: listed (or `*`) with a non-zero quality.
pub fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get_all(ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|item| {
            let mut parts = item.split(';');
            let coding = parts.next().unwrap_or_default().trim();
            let quality = parts
                .filter_map(|p| p.trim().strip_prefix("q="))
                .find_map(|q| q.trim().parse::<f64>().ok())
                .unwrap_or(1.0);
            (coding.eq_ignore_ascii_case("gzip") || coding == "*") && quality > 0.0
        })
}

/// The cache shared by every route of one router.
#[derive(Debug, Default)]
pub struct ResponseCache {
    inner: RwLock<Entries>,
}

#[derive(Debug, Default)]
struct Entries {
    answers: HashMap<CacheKey, CachedAnswer>,
    /// Bytes of the held keys, headers and bodies.
    bytes: usize,
    /// The clock second of the last sweep of stale answers.
    swept_second: i64,
}

impl CachedAnswer {
    /// What the entry costs the byte budget: its key, headers and body (the gzip copy is made
    /// later, on demand, and bounded by the body).
    fn held_bytes(&self, key: &CacheKey) -> usize {
        key.uri.len()
            + self.body.len()
            + self
                .headers
                .iter()
                .map(|(name, value)| name.as_str().len() + value.len())
                .sum::<usize>()
    }
}

/// The cache key of a request: the path and query with empty `&` segments dropped, so
/// `?a=1&&&` does not make another entry for the same answer.
fn key_uri(uri: &axum::http::Uri) -> String {
    let path = uri.path();
    match uri.query() {
        Some(query) => {
            let segments: Vec<&str> = query.split('&').filter(|s| !s.is_empty()).collect();
            if segments.is_empty() {
                path.to_owned()
            } else {
                format!("{path}?{}", segments.join("&"))
            }
        }
        None => path.to_owned(),
    }
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
        // An answer is served only in its own clock second: once a second, drop the older
        // ones (they would only be replaced, never served).
        if inner.swept_second != answer.second {
            let now = answer.second;
            inner.answers.retain(|_, held| held.second >= now);
            inner.bytes = inner
                .answers
                .iter()
                .map(|(key, held)| held.held_bytes(key))
                .sum();
            inner.swept_second = now;
        }
        let size = answer.held_bytes(&key);
        if inner.bytes + size > MAX_TOTAL_BYTES {
            inner.answers.clear();
            inner.bytes = 0;
        }
        inner.bytes += size;
        if let Some(previous) = inner.answers.remove(&key) {
            inner.bytes -= previous.held_bytes(&key);
        }
        inner.answers.insert(key, answer);
    }
}

/// What the cache holds: `response_cache` (items: answers held; bytes: their bodies, gzip
/// copies, keys and headers), at most [`MAX_TOTAL_BYTES`] of bodies.
impl optics_schemas::memory::MemoryHolder for ResponseCache {
    fn held_memory(&self, out: &mut Vec<optics_schemas::memory::HeldMemory>) {
        let inner = self
            .inner
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let bytes: usize = inner
            .answers
            .iter()
            .map(|(key, answer)| {
                std::mem::size_of::<(CacheKey, CachedAnswer)>()
                    + key.uri.capacity()
                    + answer.body.len()
                    + answer.gzip.get().map_or(0, Bytes::len)
                    + answer
                        .headers
                        .iter()
                        .map(|(name, value)| name.as_str().len() + value.len())
                        .sum::<usize>()
            })
            .sum();
        out.push(optics_schemas::memory::HeldMemory::new(
            "response_cache",
            inner.answers.len(),
            bytes,
        ));
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
        uri: key_uri(request.uri()),
        service_client: is_service_client(request.headers()),
    };
    let second = state.now().timestamp();
    let wants_gzip = accepts_gzip(request.headers());
    let cache = state.response_cache();
    if let Some(answer) = cache.get(&key, generation, second) {
        let mut response = answer.respond(wants_gzip);
        response.extensions_mut().insert(ServedFromCache);
        return response;
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
    let answer = CachedAnswer {
        generation,
        second,
        headers: parts.headers,
        body,
        gzip: Arc::default(),
    };
    cache.put(key, answer.clone());
    answer.respond(wants_gzip)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepts(value: &str) -> bool {
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT_ENCODING, HeaderValue::from_str(value).unwrap());
        accepts_gzip(&headers)
    }

    fn answer(second: i64, body: &'static str) -> CachedAnswer {
        CachedAnswer {
            generation: 1,
            second,
            headers: HeaderMap::new(),
            body: Bytes::from_static(body.as_bytes()),
            gzip: Arc::default(),
        }
    }

    fn key(uri: &str) -> CacheKey {
        CacheKey {
            uri: key_uri(&uri.parse().unwrap()),
            service_client: false,
        }
    }

    #[test]
    fn empty_query_segments_share_one_key() {
        assert_eq!(key("/a?x=1&&&").uri, "/a?x=1");
        assert_eq!(key("/a?&&").uri, "/a");
        assert_eq!(key("/a?x=1&y=2").uri, "/a?x=1&y=2");
    }

    #[test]
    fn keys_count_and_answers_of_past_seconds_are_swept() {
        let cache = ResponseCache::default();
        let long = format!("/a?{}", "x".repeat(1000));
        cache.put(key(&long), answer(10, "body"));
        cache.put(key("/b"), answer(10, "body"));
        {
            let inner = cache.inner.read().unwrap();
            // Keys count: 1,003 + 2 bytes of keys, 8 of bodies.
            assert_eq!(inner.bytes, 1003 + 4 + 2 + 4);
        }
        assert!(cache.get(&key(&long), 1, 10).is_some());
        // The next second's first answer sweeps the ones no request can be served any more.
        cache.put(key("/b"), answer(11, "fresh"));
        let inner = cache.inner.read().unwrap();
        assert_eq!(inner.answers.len(), 1);
        assert_eq!(inner.bytes, 2 + 5);
    }

    #[test]
    fn accept_encoding_is_read_with_its_qualities() {
        assert!(accepts("gzip"));
        assert!(accepts("gzip, deflate, br"));
        assert!(accepts("br;q=1.0, GZIP;q=0.5"));
        assert!(accepts("*"));
        assert!(!accepts("gzip;q=0"));
        assert!(!accepts("gzip; q=0.0, identity"));
        assert!(!accepts("deflate, br"));
        assert!(!accepts("x-gzip-like"));
        assert!(!accepts_gzip(&HeaderMap::new()));
    }
}

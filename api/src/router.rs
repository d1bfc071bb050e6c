//! The router factory and the layers every request passes through.
//!
//! ```text
//!  request ─► observe (span, metrics, plain-text errors → envelope)
//!           ─► catch panic (→ 500 envelope)
//!           ─► route ─► MatchedEndpoint extension ─► handler
//!              └─ no route: 404 envelope with did_you_mean; wrong method: 405 envelope
//! ```
//!
//! Data routes are full paths (`/api/mcp/data/chain/{ticker}`); the index answers both
//! `/api/mcp/data/` and `/api/mcp/data`. `/metrics` and `/health` sit outside the data prefix.
//!
//! Authentication, plans and limits (issue 6) plug in as the state's [`crate::RouteGate`]: it
//! runs per registered route, inside the [`MatchedEndpoint`] extension (so it reads the tier and
//! cost) and inside `observe`/`catch panic` (so refusals are counted and enveloped). It answers
//! with [`ApiError::Unauthorized`], [`ApiError::Forbidden`] and [`ApiError::RateLimited`].

use std::any::Any;
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::header::{ALLOW, CONTENT_TYPE, RETRY_AFTER};
use axum::http::{Method, StatusCode, Uri};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get};
use axum::{Extension, Json, Router};
use tower_http::catch_panic::CatchPanicLayer;
use tracing::Instrument;

use optics_compute::time::Clock;

use crate::auth;
use crate::error::{ApiError, ErrorBody, INTERNAL_ERROR_MESSAGE, NotFound, Suggestion};
use crate::handlers;
use crate::metrics::{OPENMETRICS_CONTENT_TYPE, UNMATCHED_ROUTE};
use crate::registry::{self, DATA_PREFIX, Endpoint, EndpointSpec, Registry};
use crate::state::{AppState, Catalogue};
use crate::suggest;

/// Request extension naming the registry entry of the matched route; [`crate::QueryParams`]
/// reads its parameter specs, and an auth layer its tier and cost.
#[derive(Debug, Clone, Copy)]
pub struct MatchedEndpoint(pub &'static EndpointSpec);

/// Longest error body read back when wrapping a plain-text error response.
const PLAIN_ERROR_LIMIT_BYTES: usize = 16 * 1024;
/// Longest request path echoed in a 404 message.
const ECHOED_PATH_MAX_CHARS: usize = 200;

/// Builds the whole service: the mounted routes (platform + [`handlers::data_routes`]), the
/// catalogue derived from them (registry, index, reference, OpenAPI), `/metrics`, the 404/405
/// fallbacks and the layers.
pub fn router(state: AppState) -> Router {
    router_with(state, handlers::data_routes())
}

/// [`router`] with the given data routes (registry endpoint → handler) instead of
/// [`handlers::data_routes`]: for tests and benchmarks that mount handlers of their own under
/// real registry entries.
pub fn router_with(
    state: AppState,
    data_routes: Vec<(Endpoint, MethodRouter<AppState>)>,
) -> Router {
    router_with_more(state, data_routes, Router::new())
}

/// [`router_with`] and `more` routes of their own state (the account area), all behind the
/// same panic guard, request span, metrics and error envelope.
pub fn router_with_more(
    state: AppState,
    data_routes: Vec<(Endpoint, MethodRouter<AppState>)>,
    more: Router,
) -> Router {
    let mut routes = Vec::new();
    let platform = handlers::platform::routes().into_iter().map(|r| (r, false));
    let data = data_routes.into_iter().map(|r| (r, true));
    for ((endpoint, method_router), is_data) in platform.chain(data) {
        let spec = endpoint.spec();
        // Data answers depend only on the request, the market data and the clock's second
        // (see `response_cache`); the usage report is per caller and never cached.
        if is_data && spec.method == registry::Method::Get && endpoint != Endpoint::MeUsage {
            let method_router = method_router.layer(middleware::from_fn_with_state(
                state.clone(),
                crate::response_cache::cached,
            ));
            routes.push((spec, method_router));
        } else {
            routes.push((spec, method_router));
        }
    }
    let registry = Registry::new(routes.iter().map(|(spec, _)| *spec));

    let mut state = state;
    state.catalogue = Arc::new(Catalogue {
        reference_markdown: handlers::platform::docs::reference_markdown(&registry),
        openapi_json: crate::openapi::document_json(&registry),
        index_json: handlers::platform::index::index_json(&registry),
        registry,
    });

    let mut app = Router::new();
    let mut mounted_paths: Vec<String> = Vec::new();
    for (spec, method_router) in routes {
        let path = spec.full_path();
        if mounted_paths.contains(&path) {
            // Two handlers for one path would make axum panic; the first one wins and the
            // registry test names the duplicate.
            tracing::error!(path, "duplicate route ignored");
            continue;
        }
        // The gate (auth, plans, limits) sits inside the extension so it can read the tier.
        let method_router = match state.gate().cloned() {
            Some(gate) => method_router.layer(middleware::from_fn(move |request, next| {
                let gate = gate.clone();
                async move { gate.run(request, next).await }
            })),
            None => method_router,
        };
        let method_router = method_router.layer(Extension(MatchedEndpoint(spec)));
        if spec.path == "/" {
            app = app.route(DATA_PREFIX, method_router.clone());
        }
        app = app.route(&path, method_router);
        mounted_paths.push(path);
    }

    let observed = state.clone();
    app.route("/metrics", get(metrics_handler))
        .route("/health", get(health_handler))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state)
        .merge(more)
        .layer(CatchPanicLayer::custom(panic_response))
        .layer(middleware::from_fn_with_state(observed, observe))
}

/// Serves [`router`] on `listener` until `shutdown` resolves, then finishes in-flight requests.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(state))
        .with_graceful_shutdown(shutdown)
        .await
}

/// One span per request; metrics by route template and status; any plain-text error body
/// (an axum rejection from a handler that used the plain extractors) rewritten as the envelope.
async fn observe(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| UNMATCHED_ROUTE.to_owned(), |p| p.as_str().to_owned());
    // Path only: the query string and headers (tokens) are never logged.
    let span = tracing::info_span!(
        "request",
        method = %method,
        route = %route,
        path = %request.uri().path(),
        status = tracing::field::Empty,
    );
    let response = next.run(request).instrument(span.clone()).await;
    let response = envelope_plain_errors(response).await;
    let status = response.status().as_u16();
    let elapsed = started.elapsed();
    span.record("status", status);
    tracing::debug!(parent: &span, elapsed_us = elapsed.as_micros() as u64, "answered");
    state
        .metrics()
        .observe_request(method.as_str(), &route, status, elapsed);
    response
}

/// Rewrites an error response whose body is not JSON into the error envelope. Axum's
/// rejection statuses 415 (content type) and 422 (body shape) become 400, as the interface
/// answers every malformed request; a 5xx never echoes its text.
async fn envelope_plain_errors(response: Response) -> Response {
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let is_json = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("application/json"));
    if is_json {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, PLAIN_ERROR_LIMIT_BYTES)
        .await
        .map(|bytes| String::from_utf8_lossy(&bytes).trim().to_owned())
        .unwrap_or_default();
    let status = match parts.status {
        StatusCode::UNSUPPORTED_MEDIA_TYPE | StatusCode::UNPROCESSABLE_ENTITY => {
            StatusCode::BAD_REQUEST
        }
        other => other,
    };
    let message = if status.is_server_error() {
        INTERNAL_ERROR_MESSAGE.to_owned()
    } else if text.is_empty() {
        status
            .canonical_reason()
            .unwrap_or("Request failed")
            .to_owned()
    } else {
        text
    };
    let mut wrapped = (status, Json(ErrorBody::new(message))).into_response();
    // The headers that are part of the interface survive the rewrite: the method list of a
    // 405, the wait of a 429, and the quota the gate put on every answer to a valid token.
    for name in [
        ALLOW,
        RETRY_AFTER,
        auth::X_RATELIMIT_LIMIT_MINUTE,
        auth::X_RATELIMIT_REMAINING_MINUTE,
        auth::X_RATELIMIT_LIMIT_HOUR,
        auth::X_RATELIMIT_REMAINING_HOUR,
        auth::X_MONTHLY_BUDGET_REMAINING,
    ] {
        if let Some(value) = parts.headers.get(&name) {
            wrapped.headers_mut().insert(name, value.clone());
        }
    }
    wrapped
}

fn panic_response(panic: Box<dyn Any + Send + 'static>) -> Response {
    let detail = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-text panic payload".to_owned());
    tracing::error!(panic = %detail, "handler panicked");
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        Json(ErrorBody::new(INTERNAL_ERROR_MESSAGE)),
    )
        .into_response()
}

fn echoed(path: &str) -> String {
    if path.chars().count() <= ECHOED_PATH_MAX_CHARS {
        path.to_owned()
    } else {
        let cut: String = path.chars().take(ECHOED_PATH_MAX_CHARS).collect();
        format!("{cut}…")
    }
}

/// Response extension of the "no such endpoint" answer (not of a resource a known endpoint
/// did not find), so an outer layer can record the path for the caller's token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnknownEndpoint;

async fn not_found(State(state): State<AppState>, uri: Uri) -> Response {
    let mut response = unknown_endpoint(&state, &uri).into_response();
    response.extensions_mut().insert(UnknownEndpoint);
    response
}

fn unknown_endpoint(state: &AppState, uri: &Uri) -> ApiError {
    let path = uri.path();
    let registry = state.registry();
    let did_you_mean = suggest::nearest(path, registry.mounted())
        .into_iter()
        .map(|e| Suggestion {
            method: e.method.as_str(),
            path: e.full_path(),
            docs: e.docs_link(),
        })
        .collect();
    ApiError::NotFound(Box::new(NotFound {
        error: format!("No endpoint at {}", echoed(path)),
        did_you_mean,
        docs: Some(format!("{DATA_PREFIX}/docs")),
        index: Some(format!("{DATA_PREFIX}/")),
        endpoint_count: Some(registry.endpoint_count()),
    }))
}

async fn method_not_allowed(State(state): State<AppState>, method: Method, uri: Uri) -> ApiError {
    let path = uri.path();
    let mut allowed: Vec<&'static str> = match path.strip_prefix(DATA_PREFIX) {
        Some(relative) => state
            .registry()
            .mounted()
            .iter()
            .filter(|e| suggest::matches_template(relative, e.path))
            .map(|e| e.method.as_str())
            .collect(),
        None => vec!["GET"],
    };
    if allowed.is_empty() {
        allowed.push("GET");
    }
    if allowed.contains(&"GET") {
        allowed.push("HEAD");
    }
    ApiError::MethodNotAllowed {
        method: method.to_string(),
        path: echoed(path),
        allowed,
    }
}

/// `GET /health`: whether the parts of the process that can fail while it serves are working
/// ([`Metrics::watch_health`](crate::metrics::Metrics::watch_health)). Always 200 while the
/// process answers: reads go on from the last snapshots when, say, the store refuses writes.
/// `status` is `degraded` when any part's last attempt failed, and that part says since when
/// and why (a category, never a path: this route takes no token).
async fn health_handler(State(state): State<AppState>) -> Response {
    Json(state.metrics().health_document(state.now())).into_response()
}

/// `/health` and `/metrics` alone, for the processes that serve no API (`optics ingest`,
/// `optics compute` with `--health-listen`): the same documents the API serves, from `metrics`,
/// with `clock` for ages.
pub fn observability_router(metrics: crate::metrics::Metrics, clock: Arc<dyn Clock>) -> Router {
    let health = {
        let (metrics, clock) = (metrics.clone(), Arc::clone(&clock));
        move || {
            let document = metrics.health_document(clock.now());
            async move { Json(document) }
        }
    };
    let prometheus = move || {
        let response = metrics_response(&metrics, clock.now(), &[]);
        async move { response }
    };
    Router::new()
        .route("/health", get(health))
        .route("/metrics", get(prometheus))
}

async fn metrics_handler(State(state): State<AppState>) -> Response {
    metrics_response(
        state.metrics(),
        state.now(),
        &[state.response_cache(), state.universe_cache()],
    )
}

/// The OpenMetrics page of `metrics` at `now`, with `also` among the memory holders.
fn metrics_response(
    metrics: &crate::metrics::Metrics,
    now: chrono::DateTime<chrono::Utc>,
    also: &[&dyn optics_schemas::memory::MemoryHolder],
) -> Response {
    match metrics.render_with(now, also) {
        Ok(text) => ([(CONTENT_TYPE, OPENMETRICS_CONTENT_TYPE)], text).into_response(),
        Err(e) => ApiError::internal("encoding metrics", e).into_response(),
    }
}

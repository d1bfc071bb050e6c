//! The dashboard at `/`: one static page, its script and stylesheet, and the vendored uPlot
//! (1.6.32, MIT; its licence is served beside it), all embedded in the binary so the page works
//! with no network beyond the server. The page signs in with the account area's session and
//! asks `POST /api/account/dashboard-token` for a bearer token it keeps in memory; every panel
//! then reads the same JSON data routes as any client, through the same gate and budget.
//!
//! The answers carry a content security policy that allows scripts, styles and connections
//! from this origin only (uPlot sets element styles from script, hence `'unsafe-inline'` for
//! styles alone), no framing, and no referrer.

use axum::Router;
use axum::http::header::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, REFERRER_POLICY};
use axum::http::{HeaderName, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

const PAGE: &str = include_str!("../static/dashboard/index.html");
const SCRIPT: &str = include_str!("../static/dashboard/app.js");
const STYLE: &str = include_str!("../static/dashboard/app.css");
const UPLOT_SCRIPT: &str = include_str!("../static/dashboard/vendor/uPlot.iife.min.js");
const UPLOT_STYLE: &str = include_str!("../static/dashboard/vendor/uPlot.min.css");
const UPLOT_LICENSE: &str = include_str!("../static/dashboard/vendor/uPlot-LICENSE.txt");

/// The policy every dashboard answer carries.
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
                      connect-src 'self'; img-src 'self' data:; base-uri 'none'; \
                      form-action 'self'; frame-ancestors 'none'";

/// Every answer of the dashboard: path, content type, body.
const ASSETS: [(&str, &str, &str); 6] = [
    ("/", "text/html; charset=utf-8", PAGE),
    (
        "/dashboard/app.js",
        "text/javascript; charset=utf-8",
        SCRIPT,
    ),
    ("/dashboard/app.css", "text/css; charset=utf-8", STYLE),
    (
        "/dashboard/uPlot.iife.min.js",
        "text/javascript; charset=utf-8",
        UPLOT_SCRIPT,
    ),
    (
        "/dashboard/uPlot.min.css",
        "text/css; charset=utf-8",
        UPLOT_STYLE,
    ),
    (
        "/dashboard/uPlot-LICENSE.txt",
        "text/plain; charset=utf-8",
        UPLOT_LICENSE,
    ),
];

/// The dashboard's routes, mergeable into a router of any state.
pub fn dashboard_router<S>() -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    ASSETS
        .into_iter()
        .fold(Router::new(), |router, (path, content_type, body)| {
            router.route(path, get(move || async move { asset(content_type, body) }))
        })
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    // Revalidated on every load: a new binary's page never runs an old script.
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(CONTENT_SECURITY_POLICY, HeaderValue::from_static(POLICY));
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(
        HeaderName::from_static("x-content-type-options"),
        HeaderValue::from_static("nosniff"),
    );
    response
}

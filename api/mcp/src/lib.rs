//! optics' MCP tool server (spec parts 1 and 5.7): the interface's 43 assistant tools plus
//! `help`, built on the official Rust SDK (`rmcp`), answered by the API's own handlers in
//! process.
//!
//! ```text
//!  tools/call ─► catalog (schema, description) ─► routes (tool → endpoint request)
//!             ─► invoke: the API router in process, with the caller's bearer token and
//!                X-Service-Client (compact windows) ─► envelope ─► structured content + text
//! ```
//!
//! Two transports: stdio for a local client (`optics mcp`, one token from the environment),
//! and streamable HTTP at `/mcp-server` on the API server (each request's own bearer token,
//! obtained by the hosted connector's OAuth flow). Because every call passes the full router,
//! a tool call is authenticated, plan-checked, rate-limited and charged like the REST call it
//! makes; refusals become tool errors an assistant can act on (retry after N s, upgrade
//! needed, not covered with suggestions).

#![forbid(unsafe_code)]

pub mod args;
pub mod catalog;
pub mod invoke;
pub mod oauth;
pub mod routes;
pub mod server;

use axum::Router;
use axum::extract::Request;
use axum::http::header::{AUTHORIZATION, WWW_AUTHENTICATE};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use optics_api::auth::AccessControl;

pub use catalog::{TOOLS, ToolSpec};
pub use oauth::PublicBase;
pub use server::{OpticsTools, serve_stdio};

/// Where the hosted connector is served.
pub const MCP_PATH: &str = "/mcp-server";

/// The `/mcp-server` route and its authorization server ([`oauth`]): the streamable-HTTP tool
/// server over `data_router` (the service's router, whose gate meters each call), behind a
/// token check: a request without a token, or with one that is unknown, revoked or expired,
/// gets 401 with `WWW-Authenticate: Bearer resource_metadata="…"` so the client rediscovers
/// the authorization server (MCP authorization spec) — which is how revoking a connector's
/// token on the account page disconnects the assistant at its next call.
///
/// `public_url` is the address clients reach the service at (`--public-url`); without it the
/// addresses are built from the request's `Host` over plain HTTP (a local service).
/// `Host` values accepted at `/mcp-server` (DNS-rebinding defence): loopback names and the
/// public URL's host.
pub fn mcp_routes(
    data_router: Router,
    access: AccessControl,
    public_url: Option<String>,
) -> Router {
    let base = PublicBase::new(public_url);
    let mut allowed_hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
    if let Some(host) = base.configured_host() {
        allowed_hosts.push(host);
    }
    let service = server::http_service(data_router, allowed_hosts);
    let authorization_server = oauth::oauth_routes(access.clone(), base.clone());
    Router::new()
        .route_service(MCP_PATH, service)
        .layer(axum::middleware::from_fn(
            move |request: Request, next: Next| {
                let access = access.clone();
                let base = base.clone();
                async move { require_active_token(access, base, request, next).await }
            },
        ))
        .merge(authorization_server)
}

/// The protected-resource metadata address of `/mcp-server` (RFC 9728: the well-known prefix,
/// then the resource's path).
pub fn resource_metadata_url(base_url: &str) -> String {
    format!(
        "{}/.well-known/oauth-protected-resource{MCP_PATH}",
        base_url.trim_end_matches('/')
    )
}

/// Lets requests with an active token through and answers the others with the discovery
/// challenge (`error="invalid_token"` when a token was sent).
async fn require_active_token(
    access: AccessControl,
    base: PublicBase,
    request: Request,
    next: Next,
) -> Response {
    let authorization = request.headers().get(AUTHORIZATION).cloned();
    if access
        .active_token_id(authorization.as_ref())
        .await
        .is_some()
    {
        return next.run(request).await;
    }
    let base = base.for_request(request.headers());
    let mut challenge = format!(
        "Bearer resource_metadata=\"{}\"",
        resource_metadata_url(&base)
    );
    if authorization.is_some() {
        challenge.push_str(", error=\"invalid_token\"");
    }
    let challenge =
        HeaderValue::from_str(&challenge).unwrap_or_else(|_| HeaderValue::from_static("Bearer"));
    let mut response = (
        StatusCode::UNAUTHORIZED,
        axum::Json(serde_json::json!({
            "success": false,
            "error": "Missing or invalid API token: connect through the account's approval \
                      page or send Authorization: Bearer <token>",
        })),
    )
        .into_response();
    response.headers_mut().insert(WWW_AUTHENTICATE, challenge);
    response
}

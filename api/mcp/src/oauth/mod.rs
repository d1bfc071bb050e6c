//! The hosted connector's authorization server (MCP authorization, OAuth 2.1): how an
//! assistant gets a token for `/mcp-server` without the account holder copying one.
//!
//! | route | what |
//! | --- | --- |
//! | `GET /.well-known/oauth-protected-resource[/mcp-server]` | RFC 9728: the resource and its server |
//! | `GET /.well-known/oauth-authorization-server` | RFC 8414: the endpoints below |
//! | `POST /oauth/register` | RFC 7591 dynamic registration of a public client |
//! | `GET /oauth/authorize` | the consent page: sign in, see who asks, approve or deny |
//! | `POST /oauth/authorize` | the decision (signed-in, JSON) → where to send the browser |
//! | `POST /oauth/token` | authorization code + PKCE verifier → an API token |
//!
//! The flow: the client meets a 401 at `/mcp-server` whose challenge names the resource
//! metadata, reads both documents, registers, sends the account holder's browser to the
//! consent page with a PKCE S256 challenge and `resource=<base>/mcp-server`, and trades the
//! code for a token. The token is an ordinary API token of the account, named after the
//! client: it counts in the active-token cap, is listed on the account page, and revoking it
//! there makes the next tool call a 401 (which sends the client back to the consent page).
//!
//! Codes are random 256-bit secrets kept as SHA-256 digests, valid ten minutes and deleted by
//! the first redemption attempt (a wrong verifier spends the code too). The resource
//! (audience) must be exactly `<base>/mcp-server`, where the base is `--public-url` — or, for a
//! local service without one, `http://<Host>` — so a `www.`-prefixed form of the public host
//! fails. The decision is a same-origin JSON request carrying the `SameSite=Strict` session
//! cookie, which another site cannot forge; the page may not be framed.

mod authorize;
mod metadata;
mod register;
mod token;

use axum::Router;
use axum::extract::{DefaultBodyLimit, FromRef};
use axum::http::header::{
    ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS, ACCESS_CONTROL_ALLOW_ORIGIN, HOST,
    PRAGMA,
};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use chrono::TimeDelta;
use optics_api::accounts::throttle::LoginThrottle;
use optics_api::auth::AccessControl;
use serde::Serialize;

use crate::MCP_PATH;

/// How long an authorization code may wait for its exchange.
pub const CODE_LIFETIME: TimeDelta = TimeDelta::minutes(10);
/// Registered clients held at most; past it, clients nobody approved within a day make room.
pub const MAX_CLIENTS: u64 = 10_000;
/// How long a registered client nobody approved is kept when the table is full.
pub const UNUSED_CLIENT_GRACE: TimeDelta = TimeDelta::days(1);
/// Registrations one address may make per hour.
pub const REGISTRATIONS_PER_ADDRESS: u32 = 20;
/// Registrations all addresses together may make per hour (what a burst can add to the table).
pub const REGISTRATIONS_PER_HOUR: u32 = 500;
/// Approvals one account may give per hour.
pub const APPROVALS_PER_ACCOUNT: u32 = 30;
/// Largest registration or token request body.
pub const MAX_REQUEST_BYTES: usize = 16 * 1024;
/// The one scope: reading the account's data through the tools.
pub const SCOPE: &str = "read";

/// Where clients reach the service: the configured public URL, or the request's `Host` over
/// plain HTTP for a local service.
#[derive(Debug, Clone)]
pub struct PublicBase {
    configured: Option<String>,
}

impl PublicBase {
    /// `public_url` as configured (`--public-url`), trailing slashes dropped.
    pub fn new(public_url: Option<String>) -> Self {
        Self {
            configured: public_url.map(|u| u.trim().trim_end_matches('/').to_owned()),
        }
    }

    /// The host of the configured URL, if any (`https://options.example.com:8443/x` →
    /// `options.example.com`).
    pub fn configured_host(&self) -> Option<String> {
        let url = self.configured.as_deref()?;
        let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
        let authority = rest.split('/').next()?;
        let host = authority
            .rsplit_once(':')
            .map_or(authority, |(host, _)| host);
        (!host.is_empty()).then(|| host.to_ascii_lowercase())
    }

    /// The base URL a request is answered under.
    pub fn for_request(&self, headers: &HeaderMap) -> String {
        self.configured.clone().unwrap_or_else(|| {
            let host = headers
                .get(HOST)
                .and_then(|h| h.to_str().ok())
                .filter(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_graphic() && b != b'"'))
                .unwrap_or("localhost");
            format!("http://{host}")
        })
    }

    /// The resource identifier (audience) of the tool server under `base`.
    pub fn resource(base: &str) -> String {
        format!("{base}{MCP_PATH}")
    }
}

/// What the authorization-server routes share.
#[derive(Debug, Clone)]
pub(crate) struct OAuthState {
    pub(crate) access: AccessControl,
    pub(crate) base: PublicBase,
    /// Registrations per address and in all, approvals per account.
    pub(crate) throttle: std::sync::Arc<LoginThrottle>,
}

impl FromRef<OAuthState> for AccessControl {
    fn from_ref(state: &OAuthState) -> Self {
        state.access.clone()
    }
}

/// The authorization server's routes (see the module docs).
pub fn oauth_routes(access: AccessControl, base: PublicBase) -> Router {
    let state = OAuthState {
        access,
        base,
        // Hour windows; each attempt names its keys with their limits (`attempt_keys`).
        throttle: std::sync::Arc::new(LoginThrottle::new(
            0,
            0,
            3_600,
            optics_api::accounts::throttle::MAX_KEYS,
        )),
    };
    // Discovery, registration and the token endpoint are called by clients that may run in a
    // browser on another origin; they carry no cookie, so any origin may read them.
    let cross_origin = Router::new()
        .route(
            "/.well-known/oauth-protected-resource",
            get(metadata::protected_resource),
        )
        .route(
            &format!("/.well-known/oauth-protected-resource{MCP_PATH}"),
            get(metadata::protected_resource),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            get(metadata::authorization_server),
        )
        .route("/oauth/register", post(register::register))
        .route("/oauth/token", post(token::exchange))
        .layer(axum::middleware::from_fn(allow_any_origin));
    Router::new()
        .route(
            "/oauth/authorize",
            get(authorize::consent_page).post(authorize::decide),
        )
        .merge(cross_origin)
        .layer(DefaultBodyLimit::max(MAX_REQUEST_BYTES))
        .with_state(state)
}

/// `Access-Control-Allow-Origin: *` on every answer, and the preflight answered here.
async fn allow_any_origin(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let mut response = if request.method() == Method::OPTIONS {
        StatusCode::NO_CONTENT.into_response()
    } else {
        next.run(request).await
    };
    let headers = response.headers_mut();
    headers.insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    headers.insert(
        ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST, OPTIONS"),
    );
    headers.insert(
        ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("content-type, authorization, mcp-protocol-version"),
    );
    response
}

/// An OAuth error answer (RFC 6749 §5.2 / RFC 7591 §3.2.2): the error code and a sentence,
/// with `success: false` so it also reads as the service's envelope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OAuthError {
    #[serde(skip)]
    status: StatusCode,
    success: bool,
    /// The OAuth error code (`invalid_request`, `invalid_grant`, …).
    pub error: &'static str,
    /// What is wrong, for a person.
    pub error_description: String,
    /// Seconds to wait, for throttled requests.
    #[serde(skip_serializing_if = "Option::is_none")]
    retry_after_seconds: Option<u64>,
}

impl OAuthError {
    /// A 400 with `error` and `description`.
    pub fn bad(error: &'static str, description: impl Into<String>) -> Self {
        Self::with_status(StatusCode::BAD_REQUEST, error, description)
    }

    fn with_status(
        status: StatusCode,
        error: &'static str,
        description: impl Into<String>,
    ) -> Self {
        Self {
            status,
            success: false,
            error,
            error_description: description.into(),
            retry_after_seconds: None,
        }
    }

    fn throttled(retry_after_secs: u64) -> Self {
        let mut error = Self::with_status(
            StatusCode::TOO_MANY_REQUESTS,
            "slow_down",
            format!("Too many requests; retry in {retry_after_secs} s"),
        );
        error.retry_after_seconds = Some(retry_after_secs);
        error
    }

    fn internal(context: &str, error: impl std::fmt::Display) -> Self {
        tracing::error!(%error, "{context}");
        Self::with_status(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            format!("{context} failed; retry later"),
        )
    }
}

impl IntoResponse for OAuthError {
    fn into_response(self) -> Response {
        let retry = self.retry_after_seconds;
        let mut response = (self.status, axum::Json(&self)).into_response();
        if let Some(seconds) = retry {
            response
                .headers_mut()
                .insert(axum::http::header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        no_store(response)
    }
}

/// The account area's `no-store`, plus the `Pragma: no-cache` RFC 6749 §5.1 asks of token
/// answers (codes, tokens, client ids).
pub(crate) fn no_store(response: Response) -> Response {
    let mut response = optics_api::accounts::http::no_store(response);
    response
        .headers_mut()
        .insert(PRAGMA, HeaderValue::from_static("no-cache"));
    response
}

/// The first value of each of `names` in form-encoded `text`; other names are ignored.
pub(crate) fn form_fields<const N: usize>(text: &[u8], names: [&str; N]) -> [Option<String>; N] {
    let mut values: [Option<String>; N] = std::array::from_fn(|_| None);
    for (name, value) in form_urlencoded::parse(text) {
        if let Some(slot) = names
            .iter()
            .position(|n| *n == name)
            .map(|i| &mut values[i])
            && slot.is_none()
        {
            *slot = Some(value.into_owned());
        }
    }
    values
}

/// `$ty { field, … }` from the first value of each field's name in form-encoded `$text`.
macro_rules! from_form {
    ($ty:ident, $text:expr, $($field:ident),+ $(,)?) => {{
        let [$($field),+] = $crate::oauth::form_fields($text, [$(stringify!($field)),+]);
        $ty { $($field),+ }
    }};
}
pub(crate) use from_form;

/// True for text of 1 to `max` characters without control characters.
pub(crate) fn plain_text(text: &str, max: usize) -> bool {
    !text.is_empty() && text.chars().count() <= max && !text.chars().any(char::is_control)
}

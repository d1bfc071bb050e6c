//! The authorization endpoint: the consent page (`GET`) and the signed-in decision (`POST`).
//!
//! A request naming an unknown client or a redirect URI the client did not register is shown
//! to the person as an error and never redirected (RFC 6749 §4.1.2.1: the URI cannot be
//! trusted); every other fault goes back to the client's redirect URI as `error=…`.

use axum::extract::{RawQuery, State};
use axum::http::header::{CONTENT_SECURITY_POLICY, REFERRER_POLICY, X_FRAME_OPTIONS};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use optics_api::accounts::http::Session;
use optics_api::accounts::{AuthorizationCode, OAuthClient, TokenStatus};
use optics_api::auth::TokenHash;
use optics_api::auth::token::random_secret;
use optics_api::envelope::ApiJson;
use serde::{Deserialize, Serialize};

use super::token::is_pkce_value;
use super::{
    APPROVALS_PER_ACCOUNT, CODE_LIFETIME, OAuthError, OAuthState, PublicBase, from_form, no_store,
};

/// The consent page; `__REQUEST__` is replaced by the request as script-safe JSON.
const CONSENT_PAGE: &str = include_str!("../../static/authorize.html");
/// Longest `state` echoed back, in bytes.
pub const MAX_STATE_BYTES: usize = 1_000;
/// Longest `scope` accepted, in bytes.
pub const MAX_SCOPE_BYTES: usize = 200;
/// The consent page may run its own script, talk to this origin only, and never be framed.
const PAGE_POLICY: &str = "default-src 'none'; script-src 'unsafe-inline'; \
     style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'";

/// The authorization request's parameters, from the query (`GET`) or the page's JSON (`POST`).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub(crate) struct AuthorizationRequest {
    #[serde(default)]
    response_type: Option<String>,
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    redirect_uri: Option<String>,
    #[serde(default)]
    code_challenge: Option<String>,
    #[serde(default)]
    code_challenge_method: Option<String>,
    #[serde(default)]
    state: Option<String>,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    resource: Option<String>,
}

impl AuthorizationRequest {
    /// The parameters of a query string (the first of repeated names).
    fn from_query(query: &str) -> Self {
        from_form!(
            AuthorizationRequest,
            query.as_bytes(),
            response_type,
            client_id,
            redirect_uri,
            code_challenge,
            code_challenge_method,
            state,
            scope,
            resource,
        )
    }
}

/// An authorization request that passed every check.
#[derive(Debug)]
struct Validated {
    client: OAuthClient,
    redirect_uri: String,
    code_challenge: String,
    state: Option<String>,
    resource: String,
}

/// Why a request is refused, and to whom it is said.
#[derive(Debug)]
enum Refusal {
    /// To the person: the client or its redirect URI is not known.
    Person(String),
    /// To the client: its redirect URI with `error=…` (see [`client_address`]).
    Client(String),
    /// The store failed.
    Internal(OAuthError),
}

impl Refusal {
    /// The answer to the page's GET: the error, or a redirect to the client.
    fn into_response(self) -> Response {
        match self {
            Self::Person(message) => OAuthError::bad("invalid_request", message).into_response(),
            Self::Client(address) => Redirect::to(&address).into_response(),
            Self::Internal(error) => error.into_response(),
        }
    }
}

/// The client's `redirect_uri` with `pairs`, then `state` (when the request had one) and `iss`
/// (RFC 9207) appended to its query: every answer sent back to a client.
fn client_address(
    redirect_uri: &str,
    mut pairs: Vec<(&'static str, String)>,
    state: Option<&str>,
    base: &str,
) -> String {
    if let Some(state) = state {
        pairs.push(("state", state.to_owned()));
    }
    pairs.push(("iss", base.to_owned()));
    match url::Url::parse(redirect_uri) {
        Ok(mut url) => {
            url.query_pairs_mut()
                .extend_pairs(pairs.iter().map(|(k, v)| (*k, v.as_str())));
            url.into()
        }
        // Registered URIs were parsed at registration; keep the URI rather than fail.
        Err(_) => redirect_uri.to_owned(),
    }
}

/// [`client_address`] for an OAuth error.
fn error_address(
    redirect_uri: &str,
    state: Option<&str>,
    base: &str,
    error: &'static str,
    description: String,
) -> String {
    client_address(
        redirect_uri,
        vec![
            ("error", error.to_owned()),
            ("error_description", description),
        ],
        state,
        base,
    )
}

/// Checks a request against the registered client, OAuth 2.1 and the audience rule.
async fn validate(
    state: &OAuthState,
    base: &str,
    request: &AuthorizationRequest,
) -> Result<Validated, Refusal> {
    let client_id = request
        .client_id
        .as_deref()
        .filter(|id| id.len() <= 64)
        .ok_or_else(|| Refusal::Person("client_id is missing".into()))?;
    let client = state
        .access
        .store()
        .oauth_client(client_id)
        .await
        .map_err(|e| Refusal::Internal(OAuthError::internal("reading the client", e)))?
        .ok_or_else(|| {
            Refusal::Person(format!(
                "unknown client_id {client_id:?}: the client must register at /oauth/register"
            ))
        })?;
    let redirect_uri = match request.redirect_uri.as_deref() {
        Some(uri) if client.redirect_uris.iter().any(|r| r == uri) => uri.to_owned(),
        Some(uri) => {
            return Err(Refusal::Person(format!(
                "redirect_uri {uri:?} is not one the client registered"
            )));
        }
        None if client.redirect_uris.len() == 1 => client.redirect_uris[0].clone(),
        None => {
            return Err(Refusal::Person(
                "redirect_uri is required: the client registered several".into(),
            ));
        }
    };
    let state_param = request.state.clone();
    let refuse = |error: &'static str, description: String| {
        Refusal::Client(error_address(
            &redirect_uri,
            state_param.as_deref(),
            base,
            error,
            description,
        ))
    };
    if state_param
        .as_ref()
        .is_some_and(|s| s.len() > MAX_STATE_BYTES)
    {
        return Err(refuse(
            "invalid_request",
            format!("state must be at most {MAX_STATE_BYTES} bytes"),
        ));
    }
    if request.response_type.as_deref() != Some("code") {
        return Err(refuse(
            "unsupported_response_type",
            "response_type must be code".into(),
        ));
    }
    if request.code_challenge_method.as_deref() != Some("S256") {
        return Err(refuse(
            "invalid_request",
            "code_challenge_method must be S256 (PKCE is required; plain is not accepted)".into(),
        ));
    }
    let code_challenge = request
        .code_challenge
        .clone()
        .filter(|c| c.len() == 43 && is_pkce_value(c))
        .ok_or_else(|| {
            refuse(
                "invalid_request",
                "code_challenge must be the 43-character base64url SHA-256 of the verifier".into(),
            )
        })?;
    if request
        .scope
        .as_ref()
        .is_some_and(|s| s.len() > MAX_SCOPE_BYTES)
    {
        return Err(refuse(
            "invalid_scope",
            format!("scope must be at most {MAX_SCOPE_BYTES} bytes"),
        ));
    }
    let resource = PublicBase::resource(base);
    if let Some(asked) = request.resource.as_deref()
        && asked != resource
    {
        return Err(refuse(
            "invalid_target",
            format!("resource must be exactly {resource} (the tool server this service runs)"),
        ));
    }
    Ok(Validated {
        client,
        redirect_uri,
        code_challenge,
        state: state_param,
        resource,
    })
}

/// What the consent page shows and sends back.
#[derive(Debug, Serialize)]
struct PageData<'a> {
    client_name: &'a str,
    redirect_host: String,
    max_active_tokens: u32,
    request: &'a AuthorizationRequest,
}

/// JSON safe inside a `<script>` element.
fn script_json(value: &impl Serialize) -> String {
    serde_json::to_string(value)
        .unwrap_or_else(|_| "null".into())
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

pub(crate) async fn consent_page(
    State(state): State<OAuthState>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let base = state.base.for_request(&headers);
    let request = AuthorizationRequest::from_query(query.as_deref().unwrap_or(""));
    let validated = match validate(&state, &base, &request).await {
        Ok(validated) => validated,
        Err(refusal) => return refusal.into_response(),
    };
    let redirect_host = url::Url::parse(&validated.redirect_uri)
        .ok()
        .and_then(|u| {
            u.host_str()
                .map(str::to_owned)
                .or(Some(u.scheme().to_owned()))
        })
        .unwrap_or_default();
    // The page posts back exactly what was checked here (the resolved redirect URI included).
    let request = AuthorizationRequest {
        redirect_uri: Some(validated.redirect_uri.clone()),
        ..request
    };
    let data = PageData {
        client_name: &validated.client.client_name,
        redirect_host,
        max_active_tokens: state.access.config().tokens.max_active,
        request: &request,
    };
    let page = CONSENT_PAGE.replace("__REQUEST__", &script_json(&data));
    let mut response = no_store(Html(page).into_response());
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(PAGE_POLICY),
    );
    headers.insert(X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

/// The page's decision: the request it showed, and whether the person approved.
#[derive(Debug, Deserialize)]
pub(crate) struct Decision {
    #[serde(flatten)]
    request: AuthorizationRequest,
    approve: bool,
}

/// Where the page sends the browser next.
#[derive(Debug, Serialize)]
struct Next {
    success: bool,
    redirect_to: String,
}

fn next(redirect_to: String) -> Response {
    no_store(
        axum::Json(Next {
            success: true,
            redirect_to,
        })
        .into_response(),
    )
}

pub(crate) async fn decide(
    State(state): State<OAuthState>,
    headers: HeaderMap,
    session: Session,
    ApiJson(decision): ApiJson<Decision>,
) -> Response {
    let base = state.base.for_request(&headers);
    let validated = match validate(&state, &base, &decision.request).await {
        Ok(validated) => validated,
        // The page sends the browser there itself.
        Err(Refusal::Client(address)) => return next(address),
        Err(refusal) => return refusal.into_response(),
    };
    let state_param = validated.state.as_deref();
    if !decision.approve {
        return next(error_address(
            &validated.redirect_uri,
            state_param,
            &base,
            "access_denied",
            "the account holder denied access".to_owned(),
        ));
    }
    match approve(&state, &session, &validated).await {
        Ok(code) => next(client_address(
            &validated.redirect_uri,
            vec![("code", code)],
            state_param,
            &base,
        )),
        Err(error) => error.into_response(),
    }
}

/// Stores a code for the approval and returns it.
async fn approve(
    state: &OAuthState,
    session: &Session,
    validated: &Validated,
) -> Result<String, OAuthError> {
    let access = &state.access;
    let now = access.now();
    let account_id = session.account.id;
    // The token is created at the exchange; say now, on the page, when there is no room.
    let max_active = access.config().tokens.max_active;
    let active = access
        .store()
        .list_tokens(account_id)
        .await
        .map_err(|e| OAuthError::internal("reading the account's tokens", e))?
        .iter()
        .filter(|t| t.status(now) == TokenStatus::Active)
        .count();
    if active >= max_active as usize {
        return Err(OAuthError::with_status(
            StatusCode::CONFLICT,
            "token_cap_reached",
            format!(
                "This account already has {max_active} active API tokens; revoke one on the \
                 account page, then approve again"
            ),
        ));
    }
    state
        .throttle
        .attempt_keys(
            vec![(format!("approve:{account_id}"), APPROVALS_PER_ACCOUNT)],
            now,
        )
        .map_err(OAuthError::throttled)?;
    let code = random_secret().map_err(|e| OAuthError::internal("making a code", e))?;
    access
        .store()
        .insert_authorization_code(AuthorizationCode {
            hash: TokenHash::of(code.as_bytes()),
            client_id: validated.client.client_id.clone(),
            account_id,
            redirect_uri: validated.redirect_uri.clone(),
            code_challenge: validated.code_challenge.clone(),
            resource: validated.resource.clone(),
            created_at: now,
            expires_at: now + CODE_LIFETIME,
        })
        .await
        .map_err(|e| OAuthError::internal("storing the code", e))?;
    Ok(code)
}

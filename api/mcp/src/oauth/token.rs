//! The token endpoint: an authorization code and its PKCE verifier for an API token of the
//! approving account (RFC 6749 §4.1.3, RFC 7636 §4.6, RFC 8707 for `resource`).

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use optics_api::accounts::tokens::{MAX_TOKEN_NAME_CHARS, issue_token};
use optics_api::accounts::{AccountError, OAuthClient};
use optics_api::auth::TokenHash;
use serde::Serialize;

use super::{OAuthError, OAuthState, PublicBase, SCOPE, from_form, no_store};

/// Shortest and longest PKCE verifier (RFC 7636 §4.1).
const VERIFIER_CHARS: std::ops::RangeInclusive<usize> = 43..=128;

/// True when `value` uses only PKCE's unreserved characters (`A–Z a–z 0–9 - . _ ~`).
pub(crate) fn is_pkce_value(value: &str) -> bool {
    value
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// The S256 challenge of a verifier: base64url (no padding) of its SHA-256.
pub(crate) fn pkce_challenge(verifier: &str) -> String {
    base64url(&TokenHash::of(verifier.as_bytes()).0)
}

/// Base64url without padding (RFC 4648 §5).
fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
        }
    }
    out
}

/// The token response (RFC 6749 §5.1).
#[derive(Debug, Serialize)]
pub(crate) struct TokenResponse {
    access_token: String,
    token_type: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    expires_in: Option<i64>,
    scope: &'static str,
}

/// The form fields read, first of repeated names.
#[derive(Debug, Default)]
struct TokenRequest {
    grant_type: Option<String>,
    code: Option<String>,
    redirect_uri: Option<String>,
    client_id: Option<String>,
    code_verifier: Option<String>,
    resource: Option<String>,
}

impl TokenRequest {
    fn parse(body: &[u8]) -> Self {
        from_form!(
            TokenRequest,
            body,
            grant_type,
            code,
            redirect_uri,
            client_id,
            code_verifier,
            resource,
        )
    }
}

fn required<'a>(value: &'a Option<String>, name: &str) -> Result<&'a str, OAuthError> {
    value
        .as_deref()
        .filter(|v| !v.is_empty())
        .ok_or_else(|| OAuthError::bad("invalid_request", format!("{name} is required")))
}

pub(crate) async fn exchange(
    State(state): State<OAuthState>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Result<Response, OAuthError> {
    let is_form = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
    if !is_form {
        return Err(OAuthError::bad(
            "invalid_request",
            "the token request must be application/x-www-form-urlencoded",
        ));
    }
    let request = TokenRequest::parse(&body);
    match required(&request.grant_type, "grant_type")? {
        "authorization_code" => {}
        other => {
            return Err(OAuthError::bad(
                "unsupported_grant_type",
                format!("grant_type {other:?} is not served; use authorization_code"),
            ));
        }
    }
    let code = required(&request.code, "code")?;
    let client_id = required(&request.client_id, "client_id")?;
    let verifier = required(&request.code_verifier, "code_verifier")?;
    let access = &state.access;
    let now = access.now();
    // Taken before anything else is checked: one attempt per code, right or wrong.
    let stored = access
        .store()
        .take_authorization_code(&TokenHash::of(code.as_bytes()), now)
        .await
        .map_err(|e| OAuthError::internal("reading the code", e))?
        .ok_or_else(|| {
            OAuthError::bad(
                "invalid_grant",
                "the code is unknown, already used or expired (codes live 10 minutes)",
            )
        })?;
    if stored.client_id != client_id {
        return Err(OAuthError::bad(
            "invalid_grant",
            "the code was issued to another client",
        ));
    }
    if let Some(redirect_uri) = request.redirect_uri.as_deref()
        && redirect_uri != stored.redirect_uri
    {
        return Err(OAuthError::bad(
            "invalid_grant",
            "redirect_uri differs from the authorization request's",
        ));
    }
    if !VERIFIER_CHARS.contains(&verifier.len()) || !is_pkce_value(verifier) {
        return Err(OAuthError::bad(
            "invalid_grant",
            "code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~",
        ));
    }
    if pkce_challenge(verifier) != stored.code_challenge {
        return Err(OAuthError::bad(
            "invalid_grant",
            "code_verifier does not match the code_challenge",
        ));
    }
    let audience = PublicBase::resource(&state.base.for_request(&headers));
    let asked = request.resource.as_deref().unwrap_or(&stored.resource);
    if asked != stored.resource || stored.resource != audience {
        return Err(OAuthError::bad(
            "invalid_target",
            format!("resource must be exactly {audience}"),
        ));
    }
    let client = access
        .store()
        .oauth_client(client_id)
        .await
        .map_err(|e| OAuthError::internal("reading the client", e))?
        .ok_or_else(|| OAuthError::bad("invalid_client", "the client is no longer registered"))?;
    access
        .token_throttle()
        .attempt_account(stored.account_id, now)
        .map_err(OAuthError::throttled)?;
    let issued = issue_token(
        &**access.store(),
        &access.config().tokens,
        stored.account_id,
        Some(&connector_token_name(&client)),
        None,
        now,
    )
    .await
    .map_err(|e| match e {
        AccountError::TokenCapReached { max } => OAuthError::bad(
            "invalid_grant",
            format!("the account has {max} active API tokens; revoke one on the account page"),
        ),
        other => OAuthError::internal("issuing the token", other),
    })?;
    tracing::info!(
        token_id = issued.info.id,
        account_id = stored.account_id,
        client_id,
        "connector token issued"
    );
    Ok(no_store(
        axum::Json(TokenResponse {
            access_token: issued.token.expose().to_owned(),
            token_type: "Bearer",
            expires_in: issued.info.expires_at.map(|at| (at - now).num_seconds()),
            scope: SCOPE,
        })
        .into_response(),
    ))
}

/// The token's name on the account page: which assistant holds it.
fn connector_token_name(client: &OAuthClient) -> String {
    format!("MCP connector: {}", client.client_name)
        .chars()
        .take(MAX_TOKEN_NAME_CHARS)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_s256_challenge_of_rfc_7636_appendix_b() {
        assert_eq!(
            pkce_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn base64url_of_rfc_4648_vectors() {
        // RFC 4648 §10 (padding dropped, the URL alphabet is the same for these).
        for (input, expected) in [
            ("", ""),
            ("f", "Zg"),
            ("fo", "Zm8"),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg"),
            ("fooba", "Zm9vYmE"),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64url(input.as_bytes()), expected);
        }
        assert_eq!(base64url(&[0xfb, 0xff]), "-_8");
    }

    #[test]
    fn forms_take_the_first_of_repeated_fields() {
        let request = TokenRequest::parse(b"grant_type=authorization_code&code=a&code=b&x=1");
        assert_eq!(request.grant_type.as_deref(), Some("authorization_code"));
        assert_eq!(request.code.as_deref(), Some("a"));
    }
}

//! Dynamic client registration (RFC 7591) for public clients: a name and the redirect URIs
//! codes may be sent to. Every client is public (PKCE instead of a secret), so what a client
//! asks for beyond that is answered with what it gets: `token_endpoint_auth_method: none`,
//! the authorization-code grant, the `code` response type.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use optics_api::accounts::http::ClientAddress;
use optics_api::accounts::{AccountError, OAuthClient};
use optics_api::auth::token::random_public_id;
use serde::{Deserialize, Serialize};

use super::{
    MAX_CLIENTS, OAuthError, OAuthState, REGISTRATIONS_PER_ADDRESS, REGISTRATIONS_PER_HOUR,
    UNUSED_CLIENT_GRACE, no_store, plain_text,
};

/// Most redirect URIs one client may register.
pub const MAX_REDIRECT_URIS: usize = 5;
/// Longest redirect URI, in bytes.
pub const MAX_REDIRECT_URI_BYTES: usize = 2_000;
/// Longest client name, in characters.
pub const MAX_CLIENT_NAME_CHARS: usize = 100;

/// The registration request: the fields read; the others a client may send are ignored.
#[derive(Debug, Deserialize)]
pub(crate) struct RegistrationRequest {
    #[serde(default)]
    redirect_uris: Vec<String>,
    #[serde(default)]
    client_name: Option<String>,
    #[serde(default)]
    grant_types: Option<Vec<String>>,
    #[serde(default)]
    response_types: Option<Vec<String>>,
}

/// The registered client as RFC 7591 §3.2.1 answers it.
#[derive(Debug, Serialize)]
pub(crate) struct RegisteredClient {
    client_id: String,
    client_id_issued_at: i64,
    client_name: String,
    redirect_uris: Vec<String>,
    grant_types: [&'static str; 1],
    response_types: [&'static str; 1],
    token_endpoint_auth_method: &'static str,
    scope: &'static str,
}

/// Checks one redirect URI: absolute, no fragment, and either `https`, `http` to a loopback
/// host (native apps, RFC 8252 §7.3), or a private-use scheme (`com.example.app:/cb`, RFC 8252
/// §7.1). Schemes that run code or read files are refused.
pub fn check_redirect_uri(uri: &str) -> Result<(), String> {
    if uri.len() > MAX_REDIRECT_URI_BYTES {
        return Err(format!(
            "redirect URI longer than {MAX_REDIRECT_URI_BYTES} bytes"
        ));
    }
    let parsed = url::Url::parse(uri).map_err(|e| format!("redirect URI {uri:?}: {e}"))?;
    if parsed.fragment().is_some() {
        return Err(format!("redirect URI {uri:?} must not have a fragment"));
    }
    match parsed.scheme() {
        "https" if parsed.host().is_some() => Ok(()),
        "http" => match parsed.host_str() {
            Some("localhost" | "127.0.0.1" | "[::1]") => Ok(()),
            _ => Err(format!(
                "redirect URI {uri:?}: plain http is allowed to loopback hosts only"
            )),
        },
        "javascript" | "data" | "file" | "vbscript" | "about" | "blob" | "ftp" | "ws" | "wss" => {
            Err(format!("redirect URI {uri:?}: scheme not allowed"))
        }
        "https" => Err(format!("redirect URI {uri:?} has no host")),
        // A private-use scheme names an app: reverse-domain form, with a dot.
        scheme if scheme.contains('.') || scheme.len() >= 3 => Ok(()),
        _ => Err(format!("redirect URI {uri:?}: unknown scheme")),
    }
}

pub(crate) async fn register(
    State(state): State<OAuthState>,
    ClientAddress(address): ClientAddress,
    body: axum::body::Bytes,
) -> Result<Response, OAuthError> {
    let now = state.access.now();
    let mut keys = vec![("registrations".to_owned(), REGISTRATIONS_PER_HOUR)];
    if let Some(address) = address {
        keys.push((format!("register:{address}"), REGISTRATIONS_PER_ADDRESS));
    }
    state
        .throttle
        .attempt_keys(keys, now)
        .map_err(OAuthError::throttled)?;
    let request: RegistrationRequest = serde_json::from_slice(&body)
        .map_err(|e| OAuthError::bad("invalid_client_metadata", format!("body: {e}")))?;
    if request.redirect_uris.is_empty() || request.redirect_uris.len() > MAX_REDIRECT_URIS {
        return Err(OAuthError::bad(
            "invalid_redirect_uri",
            format!("redirect_uris must list 1 to {MAX_REDIRECT_URIS} URIs"),
        ));
    }
    for uri in &request.redirect_uris {
        check_redirect_uri(uri).map_err(|e| OAuthError::bad("invalid_redirect_uri", e))?;
    }
    if let Some(grants) = &request.grant_types
        && !grants.iter().any(|g| g == "authorization_code")
    {
        return Err(OAuthError::bad(
            "invalid_client_metadata",
            "grant_types must include authorization_code (the only grant served)",
        ));
    }
    if let Some(types) = &request.response_types
        && !types.iter().any(|t| t == "code")
    {
        return Err(OAuthError::bad(
            "invalid_client_metadata",
            "response_types must include code (the only response type served)",
        ));
    }
    let client_name = match request.client_name.as_deref().map(str::trim) {
        None | Some("") => "MCP client".to_owned(),
        Some(name) if plain_text(name, MAX_CLIENT_NAME_CHARS) => name.to_owned(),
        Some(_) => {
            return Err(OAuthError::bad(
                "invalid_client_metadata",
                format!(
                    "client_name must be at most {MAX_CLIENT_NAME_CHARS} characters without \
                     control characters"
                ),
            ));
        }
    };
    let client = OAuthClient {
        client_id: random_public_id("cli_")
            .map_err(|e| OAuthError::internal("client registration", e))?,
        client_name,
        redirect_uris: request.redirect_uris,
        created_at: now,
        last_used_at: None,
    };
    match state
        .access
        .store()
        .register_oauth_client(client.clone(), MAX_CLIENTS, now - UNUSED_CLIENT_GRACE)
        .await
    {
        Ok(()) => {}
        Err(AccountError::ClientCapReached) => return Err(OAuthError::throttled(3_600)),
        Err(e) => return Err(OAuthError::internal("client registration", e)),
    }
    let answer = RegisteredClient {
        client_id: client.client_id,
        client_id_issued_at: now.timestamp(),
        client_name: client.client_name,
        redirect_uris: client.redirect_uris,
        grant_types: ["authorization_code"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
        scope: super::SCOPE,
    };
    Ok(no_store(
        (StatusCode::CREATED, axum::Json(answer)).into_response(),
    ))
}

#[cfg(test)]
mod tests {
    use super::check_redirect_uri;

    #[test]
    fn redirect_uris_are_https_loopback_http_or_an_app_scheme() {
        for good in [
            "https://claude.ai/api/mcp/auth_callback",
            "http://127.0.0.1:33418/callback",
            "http://localhost:6274/oauth/callback",
            "http://[::1]:8080/cb",
            "cursor://anysphere.cursor-retrieval/oauth/callback",
            "com.example.app:/oauth2redirect",
        ] {
            assert_eq!(check_redirect_uri(good), Ok(()), "{good}");
        }
        for bad in [
            "http://evil.example/cb",
            "javascript:alert(1)",
            "data:text/html,hi",
            "file:///etc/passwd",
            "https://x.example/cb#frag",
            "/relative/path",
            "not a url",
        ] {
            assert!(check_redirect_uri(bad).is_err(), "{bad}");
        }
        assert!(check_redirect_uri(&format!("https://x.example/{}", "a".repeat(2_000))).is_err());
    }
}

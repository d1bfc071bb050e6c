//! The two discovery documents: the tool server as a protected resource (RFC 9728) and the
//! authorization server that issues its tokens (RFC 8414).

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use serde::Serialize;

use super::{OAuthState, PublicBase, SCOPE};

/// `/.well-known/oauth-protected-resource[/mcp-server]`.
#[derive(Debug, Serialize)]
pub(crate) struct ProtectedResource {
    resource: String,
    authorization_servers: Vec<String>,
    bearer_methods_supported: [&'static str; 1],
    scopes_supported: [&'static str; 1],
    resource_name: &'static str,
    resource_documentation: String,
}

pub(crate) async fn protected_resource(
    State(state): State<OAuthState>,
    headers: HeaderMap,
) -> Json<ProtectedResource> {
    let base = state.base.for_request(&headers);
    Json(ProtectedResource {
        resource: PublicBase::resource(&base),
        authorization_servers: vec![base.clone()],
        bearer_methods_supported: ["header"],
        scopes_supported: [SCOPE],
        resource_name: "optics options analytics",
        resource_documentation: format!("{base}/docs"),
    })
}

/// `/.well-known/oauth-authorization-server`.
#[derive(Debug, Serialize)]
pub(crate) struct AuthorizationServer {
    issuer: String,
    authorization_endpoint: String,
    token_endpoint: String,
    registration_endpoint: String,
    scopes_supported: [&'static str; 1],
    response_types_supported: [&'static str; 1],
    response_modes_supported: [&'static str; 1],
    grant_types_supported: [&'static str; 1],
    token_endpoint_auth_methods_supported: [&'static str; 1],
    code_challenge_methods_supported: [&'static str; 1],
    authorization_response_iss_parameter_supported: bool,
    service_documentation: String,
}

pub(crate) async fn authorization_server(
    State(state): State<OAuthState>,
    headers: HeaderMap,
) -> Json<AuthorizationServer> {
    let base = state.base.for_request(&headers);
    Json(AuthorizationServer {
        authorization_endpoint: format!("{base}/oauth/authorize"),
        token_endpoint: format!("{base}/oauth/token"),
        registration_endpoint: format!("{base}/oauth/register"),
        scopes_supported: [SCOPE],
        response_types_supported: ["code"],
        response_modes_supported: ["query"],
        grant_types_supported: ["authorization_code"],
        token_endpoint_auth_methods_supported: ["none"],
        code_challenge_methods_supported: ["S256"],
        authorization_response_iss_parameter_supported: true,
        service_documentation: format!("{base}/docs"),
        issuer: base,
    })
}

//! The hosted connector's OAuth flow end to end, in process against the whole service (data
//! routes, account area, tool server, authorization server): discovery from the 401 challenge,
//! registration, sign-in, approval, the code exchanged with its PKCE verifier, a tool call
//! with the token, revocation on the account page and the next call refused; wrong audiences,
//! wrong verifiers and spent codes refused on the way.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use optics_api::accounts::Plan;
use serde_json::{Value, json};

#[path = "../../tests/common/mod.rs"]
mod common;
mod support;

use common::send;

const BASE: &str = "https://options.example.com";
const CALLBACK: &str = "https://assistant.example/callback";
/// RFC 7636 appendix B: a verifier and its S256 challenge, written out by the RFC.
const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

fn get(path: &str) -> Request<Body> {
    Request::get(path)
        .header("host", "options.example.com")
        .body(Body::empty())
        .unwrap()
}

fn post_json(path: &str, cookie: Option<&str>, body: &Value) -> Request<Body> {
    let mut request = Request::post(path)
        .header("host", "options.example.com")
        .header("content-type", "application/json");
    if let Some(cookie) = cookie {
        request = request.header("cookie", cookie);
    }
    request.body(Body::from(body.to_string())).unwrap()
}

fn post_form(path: &str, fields: &[(&str, &str)]) -> Request<Body> {
    let body = form_urlencoded::Serializer::new(String::new())
        .extend_pairs(fields)
        .finish();
    Request::post(path)
        .header("host", "options.example.com")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(Body::from(body))
        .unwrap()
}

/// A tools/call of `get_expirations` on SPY through `/mcp-server`.
fn tool_call(token: Option<&str>) -> Request<Body> {
    let mut request = Request::post(optics_mcp::MCP_PATH)
        .header("host", "options.example.com")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18");
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    request
        .body(Body::from(
            json!({
                "jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": {"name": "get_expirations", "arguments": {"ticker": "SPY"}}
            })
            .to_string(),
        ))
        .unwrap()
}

/// Signs `email` in on the account area; the session cookie (`name=value`).
async fn sign_in(app: &axum::Router, email: &str) -> String {
    let login = send(
        app,
        post_json(
            "/api/account/login",
            None,
            &json!({"email": email, "password": support::PASSWORD}),
        ),
    )
    .await;
    assert_eq!(login.status, StatusCode::OK, "{}", login.text());
    let cookie = login.header("set-cookie").expect("a session cookie");
    cookie.split(';').next().unwrap().to_owned()
}

/// The query parameters of a redirect address.
fn query_of(address: &str) -> Vec<(String, String)> {
    let query = address.split_once('?').map_or("", |(_, q)| q);
    form_urlencoded::parse(query.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

fn param(pairs: &[(String, String)], name: &str) -> Option<String> {
    pairs
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.clone())
}

fn authorize_query(client_id: &str, resource: &str) -> String {
    form_urlencoded::Serializer::new(String::new())
        .extend_pairs([
            ("response_type", "code"),
            ("client_id", client_id),
            ("redirect_uri", CALLBACK),
            ("code_challenge", CHALLENGE),
            ("code_challenge_method", "S256"),
            ("state", "st-42"),
            ("scope", "read"),
            ("resource", resource),
        ])
        .finish()
}

fn decision(client_id: &str, approve: bool) -> Value {
    json!({
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": CALLBACK,
        "code_challenge": CHALLENGE,
        "code_challenge_method": "S256",
        "state": "st-42",
        "scope": "read",
        "resource": format!("{BASE}/mcp-server"),
        "approve": approve,
    })
}

fn exchange<'a>(client_id: &'a str, code: &'a str, verifier: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", CALLBACK),
        ("client_id", client_id),
        ("code_verifier", verifier),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_assistant_connects_through_oauth_and_revoking_disconnects_it() {
    let fx = support::fixture(60);
    let email = "holder@example.com";
    fx.account(email, Plan::Pro).await;
    let app = fx.router.clone().merge(optics_mcp::mcp_routes(
        fx.router.clone(),
        fx.access.clone(),
        Some(BASE.into()),
    ));

    // Discovery: the 401 names the resource metadata, which names the authorization server.
    let refused = send(&app, tool_call(None)).await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
    let metadata_url = format!("{BASE}/.well-known/oauth-protected-resource/mcp-server");
    assert_eq!(
        refused.header("www-authenticate"),
        Some(format!("Bearer resource_metadata=\"{metadata_url}\"").as_str())
    );
    let resource = send(&app, get(metadata_url.strip_prefix(BASE).unwrap())).await;
    assert_eq!(resource.status, StatusCode::OK);
    assert_eq!(resource.header("access-control-allow-origin"), Some("*"));
    let resource = resource.json();
    assert_eq!(resource["resource"], format!("{BASE}/mcp-server"));
    assert_eq!(resource["authorization_servers"], json!([BASE]));
    let server = send(&app, get("/.well-known/oauth-authorization-server")).await;
    assert_eq!(server.status, StatusCode::OK);
    let server = server.json();
    assert_eq!(server["issuer"], BASE);
    assert_eq!(server["code_challenge_methods_supported"], json!(["S256"]));
    assert_eq!(
        server["grant_types_supported"],
        json!(["authorization_code"])
    );
    for (field, path) in [
        ("authorization_endpoint", "/oauth/authorize"),
        ("token_endpoint", "/oauth/token"),
        ("registration_endpoint", "/oauth/register"),
    ] {
        assert_eq!(server[field], format!("{BASE}{path}"));
    }

    // Registration.
    let bad = send(
        &app,
        post_json(
            "/oauth/register",
            None,
            &json!({"redirect_uris": ["http://evil.example/cb"]}),
        ),
    )
    .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert_eq!(bad.json()["error"], "invalid_redirect_uri");
    let registered = send(
        &app,
        post_json(
            "/oauth/register",
            None,
            &json!({
                "client_name": "Test assistant",
                "redirect_uris": [CALLBACK],
                "grant_types": ["authorization_code", "refresh_token"],
                "token_endpoint_auth_method": "none",
            }),
        ),
    )
    .await;
    assert_eq!(
        registered.status,
        StatusCode::CREATED,
        "{}",
        registered.text()
    );
    let registered = registered.json();
    let client_id = registered["client_id"].as_str().unwrap().to_owned();
    assert_eq!(registered["token_endpoint_auth_method"], "none");
    assert_eq!(registered["redirect_uris"], json!([CALLBACK]));

    // The consent page, for the right audience; the www. form of the host is sent back.
    let page = send(
        &app,
        get(&format!(
            "/oauth/authorize?{}",
            authorize_query(&client_id, &format!("{BASE}/mcp-server"))
        )),
    )
    .await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.text().contains("Test assistant"));
    assert!(
        page.header("content-security-policy")
            .unwrap_or_default()
            .contains("frame-ancestors 'none'")
    );
    assert_eq!(page.header("x-frame-options"), Some("DENY"));
    let wrong_audience = send(
        &app,
        get(&format!(
            "/oauth/authorize?{}",
            authorize_query(&client_id, "https://www.options.example.com/mcp-server")
        )),
    )
    .await;
    assert!(wrong_audience.status.is_redirection());
    let location = wrong_audience.header("location").unwrap_or_default();
    assert!(location.starts_with(CALLBACK), "{location}");
    let back = query_of(location);
    assert_eq!(param(&back, "error").as_deref(), Some("invalid_target"));
    assert_eq!(param(&back, "state").as_deref(), Some("st-42"));
    // An unknown client is told to the person, never redirected.
    let unknown = send(
        &app,
        get(&format!(
            "/oauth/authorize?{}",
            authorize_query("cli_unknown", &format!("{BASE}/mcp-server"))
        )),
    )
    .await;
    assert_eq!(unknown.status, StatusCode::BAD_REQUEST);
    assert!(unknown.header("location").is_none());

    // The decision needs a session.
    let anonymous = send(
        &app,
        post_json("/oauth/authorize", None, &decision(&client_id, true)),
    )
    .await;
    assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED);
    let cookie = sign_in(&app, email).await;
    let approve = async || {
        let answer = send(
            &app,
            post_json(
                "/oauth/authorize",
                Some(&cookie),
                &decision(&client_id, true),
            ),
        )
        .await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
        let redirect_to = answer.json()["redirect_to"].as_str().unwrap().to_owned();
        assert!(redirect_to.starts_with(CALLBACK));
        let back = query_of(&redirect_to);
        assert_eq!(param(&back, "state").as_deref(), Some("st-42"));
        assert_eq!(param(&back, "iss").as_deref(), Some(BASE));
        param(&back, "code").unwrap()
    };

    // Denying sends the client access_denied.
    let denied = send(
        &app,
        post_json(
            "/oauth/authorize",
            Some(&cookie),
            &decision(&client_id, false),
        ),
    )
    .await;
    let denied = query_of(denied.json()["redirect_to"].as_str().unwrap());
    assert_eq!(param(&denied, "error").as_deref(), Some("access_denied"));

    // A wrong verifier spends the code.
    let code = approve().await;
    let wrong = send(
        &app,
        post_form(
            "/oauth/token",
            &exchange(&client_id, &code, &"x".repeat(43)),
        ),
    )
    .await;
    assert_eq!(wrong.status, StatusCode::BAD_REQUEST);
    assert_eq!(wrong.json()["error"], "invalid_grant");
    let spent = send(
        &app,
        post_form("/oauth/token", &exchange(&client_id, &code, VERIFIER)),
    )
    .await;
    assert_eq!(spent.json()["error"], "invalid_grant");

    // A wrong audience at the exchange is refused.
    let code = approve().await;
    let mut fields = exchange(&client_id, &code, VERIFIER);
    fields.push(("resource", "https://www.options.example.com/mcp-server"));
    let wrong_resource = send(&app, post_form("/oauth/token", &fields)).await;
    assert_eq!(wrong_resource.status, StatusCode::BAD_REQUEST);
    assert_eq!(wrong_resource.json()["error"], "invalid_target");

    // The exchange.
    let code = approve().await;
    let mut fields = exchange(&client_id, &code, VERIFIER);
    let resource_value = format!("{BASE}/mcp-server");
    fields.push(("resource", &resource_value));
    let issued = send(&app, post_form("/oauth/token", &fields)).await;
    assert_eq!(issued.status, StatusCode::OK, "{}", issued.text());
    assert_eq!(issued.header("cache-control"), Some("no-store"));
    let issued = issued.json();
    assert_eq!(issued["token_type"], "Bearer");
    assert_eq!(issued["expires_in"], 365 * 86_400);
    let token = issued["access_token"].as_str().unwrap().to_owned();
    let again = send(&app, post_form("/oauth/token", &fields)).await;
    assert_eq!(again.json()["error"], "invalid_grant");

    // The token is the account's, listed on the account page under the client's name.
    let listed = send(
        &app,
        Request::get("/api/account/api-tokens")
            .header("cookie", &cookie)
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    let listed = listed.json();
    let connector = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "MCP connector: Test assistant")
        .expect("the connector's token is listed")
        .clone();
    assert_eq!(connector["status"], "active");

    // A tool call with it.
    let called = send(&app, tool_call(Some(&token))).await;
    assert_eq!(called.status, StatusCode::OK, "{}", called.text());
    let called = called.json();
    assert_eq!(called["result"]["isError"], false, "{called}");
    assert_eq!(called["result"]["structuredContent"]["ticker"], "SPY");

    // Revoked on the account page: the next call is refused with the discovery challenge.
    let revoked = send(
        &app,
        Request::delete(format!(
            "/api/account/api-tokens/{}",
            connector["id"].as_str().unwrap()
        ))
        .header("cookie", &cookie)
        .body(Body::empty())
        .unwrap(),
    )
    .await;
    assert_eq!(revoked.status, StatusCode::OK);
    let refused = send(&app, tool_call(Some(&token))).await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
    assert!(
        refused
            .header("www-authenticate")
            .unwrap_or_default()
            .ends_with("error=\"invalid_token\"")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_says_when_the_account_has_no_room_for_another_token() {
    let fx = support::fixture(60);
    let email = "full@example.com";
    let account = fx.account(email, Plan::Basic).await;
    for _ in 0..3 {
        fx.token(account).await;
    }
    let app =
        optics_mcp::mcp_routes(fx.router.clone(), fx.access.clone(), None).merge(fx.router.clone());
    let registered = send(
        &app,
        post_json(
            "/oauth/register",
            None,
            &json!({"client_name": "Full", "redirect_uris": [CALLBACK]}),
        ),
    )
    .await
    .json();
    let client_id = registered["client_id"].as_str().unwrap();
    let cookie = sign_in(&app, email).await;
    // Without --public-url the audience is the request's host over http.
    let mut body = decision(client_id, true);
    body["resource"] = json!("http://options.example.com/mcp-server");
    let full = send(&app, post_json("/oauth/authorize", Some(&cookie), &body)).await;
    assert_eq!(full.status, StatusCode::CONFLICT, "{}", full.text());
    assert_eq!(full.json()["error"], "token_cap_reached");
    assert!(
        full.json()["error_description"]
            .as_str()
            .unwrap()
            .contains("revoke one")
    );
}

//! The tool server against the service's real router (gate, limits, plans) in process: the
//! catalog holds the reference's tools, tool calls are metered and refused exactly like REST
//! calls (and say so in words an assistant can act on), and the HTTP transport refuses a
//! missing or revoked token with the discovery challenge.

use std::path::PathBuf;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use optics_api::accounts::Plan;
use optics_api::registry;
use optics_compute::time::Clock;
use optics_mcp::{OpticsTools, TOOLS, mcp_routes};
use serde_json::{Map, Value, json};
use tower::ServiceExt;

mod support;

use support::fixture;

fn arguments(value: Value) -> Option<Map<String, Value>> {
    value.as_object().cloned()
}

/// Calls `tool` with `args` (a JSON object) on `tools`' own token.
async fn call(tools: &OpticsTools, tool: &str, args: Value) -> rmcp::model::CallToolResult {
    tools.call(tool, arguments(args), None).await.unwrap()
}

fn positions() -> Value {
    json!([{
        "ticker": "spy", "position_type": "call", "quantity": "2", "strike": 600,
        "expiration": "2026-12-18", "delta": 0.5, "gamma": 0.02, "theta": -0.3,
        "vega": 0.4, "iv": 18, "current_price": 5.0
    }])
}

#[test]
fn the_catalog_holds_the_reference_tools_with_their_arguments() {
    let records: Value = serde_json::from_str(
        &std::fs::read_to_string(
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../../shared/spec/reference-records.json"),
        )
        .expect("the reference records beside the repository"),
    )
    .unwrap();
    let reference = records["tools"].as_array().unwrap();
    assert_eq!(reference.len(), 43);
    for tool in reference {
        let name = tool["name"].as_str().unwrap();
        let spec = optics_mcp::catalog::tool(name).unwrap_or_else(|| panic!("{name} missing"));
        let names = spec.arg_names();
        for argument in tool["arguments"].as_array().unwrap() {
            let argument = argument.as_str().unwrap();
            assert!(
                names.contains(&argument),
                "{name}: argument {argument} missing"
            );
        }
        let endpoints: Vec<&str> = tool["endpoints"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e.as_str().unwrap())
            .collect();
        assert_eq!(spec.endpoints, &endpoints[..], "{name}: endpoints");
        assert!(spec.description().len() > 80, "{name}: description");
    }
    // The reference's 43 and help, nothing else.
    assert_eq!(TOOLS.len(), 44);
}

/// Where a tool argument is also a parameter of the endpoint it calls (same name), the
/// schema's default and bounds are the registry's.
#[test]
fn tool_defaults_and_bounds_are_the_endpoints() {
    use optics_api::registry::ParamKind;
    use optics_mcp::catalog::ArgKind;
    let mut compared = 0;
    for tool in TOOLS {
        for arg in tool.args {
            for slug in tool.endpoints {
                let endpoint = registry::endpoint(slug).unwrap();
                let Some(param) = endpoint.param(arg.name) else {
                    continue;
                };
                if let (
                    ArgKind::Integer { min, max },
                    ParamKind::Int {
                        min: pmin,
                        max: pmax,
                    },
                ) = (arg.kind, param.kind)
                {
                    // A tool over several endpoints spans their ranges (vrp's lookback_days).
                    assert!(
                        min <= pmin && max >= pmax,
                        "{}.{}: bounds",
                        tool.name,
                        arg.name
                    );
                    compared += 1;
                }
                if let (Some(default), Some(param_default)) = (arg.default, param.default_float())
                    && tool.endpoints.len() == 1
                {
                    let ours: f64 = default.trim_matches('"').parse().unwrap();
                    assert_eq!(ours, param_default, "{}.{}: default", tool.name, arg.name);
                    compared += 1;
                }
                if let ArgKind::Choice(choices) = arg.kind
                    && let ParamKind::Choice(params) = param.kind
                {
                    for choice in params {
                        assert!(
                            choices.contains(choice),
                            "{}.{}: {choice} not offered",
                            tool.name,
                            arg.name
                        );
                    }
                    compared += 1;
                }
            }
        }
    }
    assert!(compared > 20, "only {compared} arguments compared");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_calls_are_metered_and_refused_like_rest_calls() {
    let fx = fixture(3);
    let pro = fx.account("pro@example.com", Plan::Pro).await;
    let basic = fx.account("basic@example.com", Plan::Basic).await;
    let (pro_token, pro_token_id) = fx.token(pro).await;
    let (basic_token, _) = fx.token(basic).await;
    let tools = OpticsTools::with_token(fx.router.clone(), &pro_token).unwrap();

    // A Pro tool with lenient arguments: quantity as a string, lower-case enum, iv in points.
    let result = call(
        &tools,
        "calculate_portfolio_greeks",
        json!({"positions": positions().to_string()}),
    )
    .await;
    assert_eq!(result.is_error, Some(false), "{:?}", result.content);
    let data = result.structured_content.unwrap();
    assert!(
        data["portfolio_summary"]["total_delta"].is_number(),
        "{data}"
    );
    assert!(
        data["tool_notes"][0]
            .as_str()
            .unwrap()
            .contains("percentage points"),
        "{data}"
    );

    // Two more calls use up the minute; the fourth is a readable retry-after error.
    for _ in 0..2 {
        let ok = call(
            &tools,
            "calculate_portfolio_greeks",
            json!({"positions": positions()}),
        )
        .await;
        assert_eq!(ok.is_error, Some(false));
    }
    let limited = call(
        &tools,
        "calculate_portfolio_greeks",
        json!({"positions": positions()}),
    )
    .await;
    assert_eq!(limited.is_error, Some(true));
    let text = format!("{:?}", limited.content);
    assert!(text.contains("Retry after 40 s"), "{text}");
    assert_eq!(
        limited.structured_content.unwrap()["retry_after_seconds"],
        40
    );

    // A Basic token on a Pro tool: upgrade needed, in words.
    let basic_tools = OpticsTools::with_token(fx.router.clone(), &basic_token).unwrap();
    let refused = call(
        &basic_tools,
        "generate_stress_tests",
        json!({"positions": positions()}),
    )
    .await;
    assert_eq!(refused.is_error, Some(true));
    let text = format!("{:?}", refused.content);
    assert!(
        text.contains("upgrade needed") && text.contains("pro plan"),
        "{text}"
    );
    assert_eq!(refused.structured_content.unwrap()["action"], "upgrade");

    // A bad argument names the argument; an unknown tool is a protocol error.
    let bad = call(
        &tools,
        "get_iv_rank",
        json!({"ticker": "SPY", "lookback_days": "1y"}),
    )
    .await;
    assert!(format!("{:?}", bad.content).contains("argument `lookback_days`"));
    assert!(tools.call("get_everything", None, None).await.is_err());

    // Revoked: the next call is refused.
    fx.access
        .store()
        .revoke_token(Some(pro), &pro_token_id, fx.clock.now())
        .await
        .unwrap();
    let revoked = tools.call("get_vix_snapshot", None, None).await.unwrap();
    assert!(format!("{:?}", revoked.content).contains("token was refused"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_http_connector_challenges_a_missing_or_revoked_token() {
    let fx = fixture(60);
    let pro = fx.account("pro@example.com", Plan::Pro).await;
    let (token, token_id) = fx.token(pro).await;
    let app = mcp_routes(
        fx.router.clone(),
        fx.access.clone(),
        Some("https://options.example.com".into()),
    );
    let list = |authorization: Option<String>| {
        let mut request = Request::post(optics_mcp::MCP_PATH)
            .header("host", "options.example.com")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18");
        if let Some(value) = authorization {
            request = request.header("authorization", value);
        }
        request
            .body(Body::from(
                json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string(),
            ))
            .unwrap()
    };
    let challenge = |response: &axum::response::Response| {
        response
            .headers()
            .get("www-authenticate")
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default()
    };

    let missing = app.clone().oneshot(list(None)).await.unwrap();
    assert_eq!(missing.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        challenge(&missing),
        "Bearer resource_metadata=\"https://options.example.com/.well-known/\
         oauth-protected-resource/mcp-server\""
    );

    let listed = app
        .clone()
        .oneshot(list(Some(format!("Bearer {token}"))))
        .await
        .unwrap();
    assert_eq!(listed.status(), StatusCode::OK);
    let body = axum::body::to_bytes(listed.into_body(), usize::MAX)
        .await
        .unwrap();
    let answer: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        answer["result"]["tools"].as_array().unwrap().len(),
        TOOLS.len()
    );

    fx.access
        .store()
        .revoke_token(Some(pro), &token_id, fx.clock.now())
        .await
        .unwrap();
    let revoked = app
        .oneshot(list(Some(format!("Bearer {token}"))))
        .await
        .unwrap();
    assert_eq!(revoked.status(), StatusCode::UNAUTHORIZED);
    assert!(challenge(&revoked).ends_with("error=\"invalid_token\""));
}

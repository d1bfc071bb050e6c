//! The served OpenAPI document is valid OpenAPI 3.1 — checked against the official 3.1 JSON
//! schema (`tests/data/openapi-3.1-schema.json`, id `https://spec.openapis.org/oas/3.1/schema/2022-10-07`,
//! as shipped in the `openapi-spec-validator` 0.9.0 package) with an independent validator — and
//! describes exactly the mounted endpoints with the registry's parameters.

mod common;

use axum::Json;
use axum::routing::{get, post};
use common::{friday_morning, get as get_req, state_at};
use optics_api::{ApiError, Envelope, QueryParams, ok, router, router_with};
use serde_json::Value;

const OAS_31_SCHEMA: &str = include_str!("data/openapi-3.1-schema.json");

fn validation_errors(doc: &Value) -> Vec<String> {
    let schema: Value = serde_json::from_str(OAS_31_SCHEMA).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the 3.1 schema compiles");
    validator
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

async fn echo(params: QueryParams) -> Result<Json<Envelope<i64>>, ApiError> {
    Ok(ok(params.int("num_expirations")?.value))
}

async fn served_document(app: &axum::Router) -> Value {
    let answer = get_req(app, "/api/mcp/data/openapi.json", &[]).await;
    assert_eq!(answer.status, axum::http::StatusCode::OK);
    assert_eq!(answer.header("content-type"), Some("application/json"));
    answer.json()
}

#[tokio::test]
async fn the_platform_document_is_valid_openapi_31() {
    let doc = served_document(&router(state_at(friday_morning()))).await;
    assert!(
        doc["openapi"].as_str().unwrap().starts_with("3.1."),
        "{}",
        doc["openapi"]
    );
    assert_eq!(doc["info"]["version"], "1.10");
    assert_eq!(doc["servers"][0]["url"], "/api/mcp/data");
    let errors = validation_errors(&doc);
    assert!(errors.is_empty(), "{errors:#?}");
    let paths: std::collections::BTreeSet<&str> = doc["paths"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    // Exactly the mounted endpoints: the platform routes and every data route of this build.
    let mut mounted: std::collections::BTreeSet<&str> =
        ["/", "/changelog", "/docs", "/openapi.json"].into();
    let specs: Vec<_> = optics_api::handlers::data_routes()
        .into_iter()
        .map(|(slug, _)| optics_api::registry::endpoint(slug).unwrap())
        .collect();
    mounted.extend(specs.iter().map(|spec| spec.path));
    assert_eq!(paths, mounted);
    // Every operation answers errors in the envelope.
    assert_eq!(
        doc["paths"]["/"]["get"]["responses"]["default"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/ErrorBody"
    );
}

#[tokio::test]
async fn the_validator_rejects_broken_documents() {
    // The check can fail: a document without info, or claiming 3.0, is refused.
    let mut doc = served_document(&router(state_at(friday_morning()))).await;
    doc.as_object_mut().unwrap().remove("info");
    assert!(!validation_errors(&doc).is_empty());
    let mut doc = served_document(&router(state_at(friday_morning()))).await;
    doc["openapi"] = "3.0.3".into();
    assert!(!validation_errors(&doc).is_empty());
    let mut doc = served_document(&router(state_at(friday_morning()))).await;
    doc["paths"]["/"]["get"]["responses"]["200"] = Value::from("nope");
    assert!(!validation_errors(&doc).is_empty());
}

#[tokio::test]
async fn component_schemas_are_valid_json_schema_2020_12() {
    let doc = served_document(&router(state_at(friday_morning()))).await;
    let schemas = doc["components"]["schemas"].as_object().unwrap();
    for name in ["ErrorBody", "Freshness", "Window", "ClampNotice"] {
        assert!(schemas.contains_key(name), "{name} missing");
    }
    for (name, schema) in schemas {
        let result = jsonschema::draft202012::meta::validate(schema);
        assert!(result.is_ok(), "{name}: {result:?}");
    }
}

#[tokio::test]
async fn mounted_data_endpoints_get_operations_with_registry_parameters() {
    let app = router_with(
        state_at(friday_morning()),
        vec![("chain", get(echo)), ("pop", post(|| async { ok(()) }))],
    );
    let doc = served_document(&app).await;
    let errors = validation_errors(&doc);
    assert!(errors.is_empty(), "{errors:#?}");

    let chain = &doc["paths"]["/chain/{ticker}"]["get"];
    assert_eq!(chain["operationId"], "chain");
    assert_eq!(chain["tags"][0], "options-chain-api");
    let params = chain["parameters"].as_array().unwrap();
    let param = |name: &str| params.iter().find(|p| p["name"] == name).unwrap().clone();
    let ticker = param("ticker");
    assert_eq!(
        (ticker["in"].as_str(), ticker["required"].as_bool()),
        (Some("path"), Some(true))
    );
    let n = param("num_expirations");
    assert_eq!(n["in"], "query");
    assert_eq!(n["required"], false);
    assert_eq!(n["schema"]["type"], "integer");
    assert_eq!(n["schema"]["minimum"], 1);
    assert_eq!(n["schema"]["maximum"], 10);
    assert_eq!(n["schema"]["default"], 1);
    let expiration = param("expiration");
    assert_eq!(expiration["schema"]["format"], "date");

    let pop = &doc["paths"]["/pop"]["post"];
    let body = &pop["requestBody"]["content"]["application/json"]["schema"];
    assert_eq!(body["type"], "object");
    let mut required: Vec<&str> = body["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    required.sort_unstable();
    assert_eq!(required, ["days_to_exp", "legs", "stock_price"]);
    assert!(pop["parameters"].is_null());

    // Only mounted operations: /pop has no GET, and nothing else of the contract appears.
    assert!(doc["paths"]["/pop"]["get"].is_null());
    assert!(doc["paths"]["/gex/{ticker}"].is_null());
    assert_eq!(doc["paths"].as_object().unwrap().len(), 6);
}

#[tokio::test]
async fn operations_behind_the_token_gate_declare_the_bearer_scheme() {
    let doc = served_document(&router(state_at(friday_morning()))).await;
    let scheme = &doc["components"]["securitySchemes"]["bearerAuth"];
    assert_eq!(scheme["type"], "http");
    assert_eq!(scheme["scheme"], "bearer");
    let specs = ["index", "openapi", "docs", "changelog"]
        .into_iter()
        .chain(
            optics_api::handlers::data_routes()
                .into_iter()
                .map(|(slug, _)| slug),
        )
        .map(|slug| optics_api::registry::endpoint(slug).unwrap());
    let mut open = Vec::new();
    for spec in specs {
        let method = format!("{:?}", spec.method).to_lowercase();
        let operation = &doc["paths"][spec.path][method.as_str()];
        assert!(operation.is_object(), "{method} {}", spec.path);
        // The document says what the gate does.
        if optics_api::auth::requires_token(spec) {
            assert_eq!(
                operation["security"],
                serde_json::json!([{"bearerAuth": []}]),
                "{method} {}",
                spec.path
            );
        } else {
            assert!(operation["security"].is_null(), "{method} {}", spec.path);
            open.push(spec.slug);
        }
    }
    // The documentation routes are open; the chain is not.
    open.sort_unstable();
    assert_eq!(open, ["changelog", "docs", "openapi"]);
    assert!(doc["paths"]["/chain/{ticker}"]["get"]["security"].is_array());
}

//! The served OpenAPI document is valid OpenAPI 3.1 — checked against the official 3.1 JSON
//! schema (`tests/data/openapi-3.1-schema.json`, id `https://spec.openapis.org/oas/3.1/schema/2022-10-07`,
//! as shipped in the `openapi-spec-validator` 0.9.0 package) with an independent validator — and
//! describes exactly the mounted endpoints with the registry's parameters and, where a family
//! declares them, the payload types its handlers serialize.

mod common;

use axum::Json;
use axum::routing::{get, post};
use common::{friday_morning, get as get_req, state_at};
use optics_api::{ApiError, Endpoint, Envelope, QueryParams, ok, router, router_with};
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
        .map(|(endpoint, _)| endpoint.spec())
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
        vec![
            (Endpoint::Chain, get(echo)),
            (Endpoint::Pop, post(|| async { ok(()) })),
        ],
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
    // Clamped, not refused (spec part 7): the range is an extension, not `minimum` /
    // `maximum`, which would make 0 or 11 invalid requests.
    assert_eq!(n["schema"]["x-clamped-to"]["minimum"], 1);
    assert_eq!(n["schema"]["x-clamped-to"]["maximum"], 10);
    assert!(n["schema"].get("minimum").is_none());
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
                .map(|(endpoint, _)| endpoint.slug()),
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

/// `node` with its `$ref` followed in `doc`.
fn resolve<'a>(doc: &'a Value, node: &'a Value) -> &'a Value {
    match node["$ref"].as_str() {
        Some(reference) => {
            let name = reference.strip_prefix("#/components/schemas/").unwrap();
            let target = &doc["components"]["schemas"][name];
            assert!(target.is_object(), "{reference} is not in the components");
            resolve(doc, target)
        }
        None => node,
    }
}

/// The property `name` of the object schema `node`, looking through refs, `allOf` parts (serde
/// flatten) and nullable `oneOf`s.
fn property<'a>(doc: &'a Value, node: &'a Value, name: &str) -> Option<&'a Value> {
    let node = resolve(doc, node);
    if let Some(found) = node["properties"].get(name) {
        return Some(found);
    }
    for key in ["allOf", "oneOf"] {
        for part in node[key].as_array().into_iter().flatten() {
            if let Some(found) = property(doc, part, name) {
                return Some(found);
            }
        }
    }
    None
}

#[tokio::test]
async fn the_chain_response_is_described_down_to_its_row_keys() {
    let doc = served_document(&router(state_at(friday_morning()))).await;
    let errors = validation_errors(&doc);
    assert!(errors.is_empty(), "{errors:#?}");
    let envelope = &doc["paths"]["/chain/{ticker}"]["get"]["responses"]["200"]["content"]["application/json"]
        ["schema"];
    assert_eq!(envelope["required"], serde_json::json!(["success", "data"]));
    let data = property(&doc, envelope, "data").expect("data");
    assert!(data["$ref"].is_string(), "data is a named payload: {data}");

    // chains: a map from expiration to a list of rows with the spec's keys.
    let chains = resolve(&doc, property(&doc, data, "chains").expect("chains"));
    assert_eq!(chains["type"], "object");
    let rows = resolve(&doc, &chains["additionalProperties"]);
    assert_eq!(rows["type"], "array");
    let row = resolve(&doc, &rows["items"]);
    for key in [
        "Strike",
        "Call Bid",
        "Call Ask",
        "Put Bid",
        "Put Ask",
        "IV Call",
        "IV Put",
        "Delta Call",
        "Gamma Put",
        "Theta Call",
        "Vega Put",
        "Rho Call",
        "Rho Put",
        "Epsilon Call",
        "Extrinsic Put",
        "Call Volume",
        "Put Volume",
        "Call OI",
        "Put OI",
    ] {
        assert!(
            row["properties"].get(key).is_some(),
            "row lacks {key}: {row}"
        );
    }
    // Every key the handler serializes is described, and nothing else (the row type is the
    // payload type, so the two cannot drift).
    let described: std::collections::BTreeSet<&str> = row["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let row_json = serde_json::to_value(
        optics_api::handlers::chain::rows::ChainRowPayload::from_row(&sample_chain_row()),
    )
    .unwrap();
    let serialized: std::collections::BTreeSet<&str> = row_json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(described, serialized);

    let window = property(&doc, data, "strike_window").expect("strike_window");
    let truncated = property(&doc, window, "truncated").expect("truncated");
    assert_eq!(truncated["type"], "boolean");
    // Freshness at the top of data, and the nested block.
    for key in [
        "is_market_hours",
        "data_freshness",
        "message",
        "freshness",
        "iv_units",
    ] {
        assert!(
            property(&doc, data, key).is_some(),
            "chain data lacks {key}"
        );
    }
    let price = property(&doc, data, "priced_on_forward").expect("priced_on_forward");
    assert_eq!(price["type"], "boolean");
}

fn sample_chain_row() -> optics_schemas::ChainRow {
    use chrono::{NaiveDate, TimeZone, Utc};
    let date = NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
    optics_schemas::ChainRow {
        underlying: "SPY".to_owned(),
        trade_date: date,
        as_of: Utc.with_ymd_and_hms(2026, 11, 20, 15, 0, 0).unwrap(),
        expiration: date,
        settlement: optics_schemas::SettlementStyle::Pm,
        dte: 0,
        years_to_expiry: 0.001,
        strike: 600.0,
        spot: 600.0,
        forward: 600.0,
        forward_source: optics_schemas::ForwardSource::Parity,
        forward_strike_count: 4,
        rate: 0.04,
        carry_yield: 0.01,
        model: optics_schemas::PricingModelCode::Bsm,
        call: optics_schemas::ChainSide::default(),
        put: optics_schemas::ChainSide::default(),
    }
}

#[tokio::test]
async fn every_declared_payload_is_the_data_of_its_operation() {
    let doc = served_document(&router(state_at(friday_morning()))).await;
    let schemas = optics_api::handlers::data_schemas();
    let slugs: Vec<&str> = schemas.iter().map(|s| s.slug).collect();
    for slug in [
        "index",
        "chain",
        "chain-at-time",
        "expirations",
        "options-by-delta",
        "stock",
        "search",
    ] {
        assert!(slugs.contains(&slug), "{slug} declares no payload type");
    }
    for schema in &schemas {
        let spec = optics_api::registry::endpoint(schema.slug).unwrap();
        let method = format!("{:?}", spec.method).to_lowercase();
        let envelope = &doc["paths"][spec.path][method.as_str()]["responses"]["200"]["content"]["application/json"]
            ["schema"];
        assert_eq!(
            envelope["properties"]["data"]["$ref"],
            format!("#/components/schemas/{}", schema.name()),
            "{}",
            schema.slug
        );
    }
    // Two types never share a component name (the document would describe one wrongly).
    assert_eq!(
        optics_api::openapi::schema_name_conflicts(&schemas),
        Vec::<String>::new()
    );
    // A mounted endpoint whose family declares no type still documents the envelope.
    let undeclared = optics_api::handlers::data_routes()
        .into_iter()
        .map(|(endpoint, _)| endpoint.spec())
        .find(|spec| !slugs.contains(&spec.slug));
    if let Some(spec) = undeclared {
        let method = format!("{:?}", spec.method).to_lowercase();
        let data = &doc["paths"][spec.path][method.as_str()]["responses"]["200"]["content"]["application/json"]
            ["schema"]["properties"]["data"];
        assert_eq!(data["type"], "object", "{}", spec.slug);
    }
}

#[test]
fn the_conflict_check_can_fail() {
    use optics_api::openapi::{DataSchema, schema_name_conflicts};
    // Two different types under one component name.
    #[derive(utoipa::ToSchema)]
    #[schema(as = ChainRow)]
    #[allow(dead_code)]
    struct Impostor {
        strike: String,
    }
    let schemas = [
        DataSchema::of::<optics_api::handlers::chain::chain::ChainPayload>(Endpoint::Chain),
        DataSchema::of::<Impostor>(Endpoint::Stock),
    ];
    assert_eq!(schema_name_conflicts(&schemas), ["ChainRow"]);
}

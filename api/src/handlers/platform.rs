//! The platform routes: the index of served endpoints, the Markdown reference, the changelog
//! and the OpenAPI document. Their bodies are built once from the registry when the router is
//! built; the index fills in its example dates per request from the clock.

use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get};
use chrono::{DateTime, Datelike, Days, NaiveDate, Utc, Weekday};
use optics_compute::time::{NyseCalendar, new_york_date};
use serde::Serialize;
use utoipa::ToSchema;

use crate::API_VERSION;
use crate::envelope::Envelope;
use crate::registry::{
    Cost, DATA_PREFIX, Endpoint, EndpointSpec, Method, ParamKind, ParamLocation, Registry,
};
use crate::state::AppState;

/// The reference text written by hand; the endpoint sections are generated after it.
pub const REFERENCE_MARKDOWN: &str = include_str!("../../docs/reference.md");
/// The changelog, newest version first.
pub const CHANGELOG_MARKDOWN: &str = include_str!("../../docs/CHANGELOG.md");

const MARKDOWN_CONTENT_TYPE: &str = "text/markdown; charset=utf-8";
const JSON_CONTENT_TYPE: &str = "application/json";

/// Placeholder in examples for the trade date of the last closed session.
pub const LAST_SESSION_PLACEHOLDER: &str = "{last_session}";
/// Placeholder in examples for next month's standard monthly expiration.
pub const MONTHLY_EXPIRY_PLACEHOLDER: &str = "{monthly_expiry}";

/// The payload of the index (the documents are served as they are, outside the envelope).
pub fn data_schemas() -> Vec<crate::openapi::DataSchema> {
    vec![crate::openapi::DataSchema::of::<IndexPayload>("index")]
}

/// The platform routes by registry slug.
pub fn routes() -> Vec<(Endpoint, MethodRouter<AppState>)> {
    vec![
        (Endpoint::Index, get(index)),
        (Endpoint::Openapi, get(openapi)),
        (Endpoint::Docs, get(docs)),
        (Endpoint::Changelog, get(changelog)),
    ]
}

/// The index payload (`GET /api/mcp/data/`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct IndexPayload {
    /// Interface version (`1.10`).
    pub version: &'static str,
    /// Prefix of every data path.
    pub base_path: &'static str,
    /// How many endpoints are served (the length of `endpoints`).
    pub endpoint_count: usize,
    /// Every served endpoint.
    pub endpoints: Vec<IndexEntry>,
    /// The families with at least one served endpoint.
    pub families: Vec<FamilyEntry>,
    /// The OpenAPI 3.1 document.
    pub openapi: String,
    /// The one-file Markdown reference.
    pub markdown: String,
    /// The changelog.
    pub changelog: String,
}

/// One served endpoint in the index.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct IndexEntry {
    /// Stable short name; the anchor of its reference section.
    pub slug: &'static str,
    /// `GET` or `POST`.
    pub method: &'static str,
    /// Full path; `{ticker}` marks a path parameter.
    pub path: String,
    /// Family slug.
    pub family: &'static str,
    /// Lowest plan allowed: `any`, `basic`, `premium` or `pro`.
    pub tier: &'static str,
    /// What it answers.
    pub summary: &'static str,
    /// Budget cost of a call.
    pub cost: CostEntry,
    /// Path, query and body parameters with defaults and bounds.
    pub params: Vec<IndexParam>,
    /// Its section of the reference.
    pub docs: String,
    /// A request that works as written.
    pub example: IndexExample,
}

/// Budget cost: `units` per call, or per symbol requested when `per` is `symbol`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CostEntry {
    /// Units charged (0 = free).
    pub units: u32,
    /// `call` or `symbol`.
    pub per: &'static str,
}

/// One parameter in the index.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct IndexParam {
    /// Name.
    pub name: &'static str,
    /// `path`, `query` or `body`.
    #[serde(rename = "in")]
    pub location: &'static str,
    /// Whether the call fails without it.
    pub required: bool,
    /// The default as documented.
    pub default: Option<&'static str>,
    /// The documented bounds.
    pub bounds: &'static str,
}

/// A runnable example request.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct IndexExample {
    /// Method and full path with query, e.g. `GET /api/mcp/data/chain/SPY?num_expirations=2`.
    pub request: String,
    /// JSON body for POST examples.
    #[schema(value_type = Option<Object>)]
    pub body: Option<serde_json::Value>,
}

/// A family in the index.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FamilyEntry {
    /// Family slug.
    pub slug: &'static str,
    /// Display name.
    pub name: &'static str,
    /// Served endpoints in the family.
    pub endpoint_count: usize,
    /// Its part of the reference.
    pub docs: String,
}

fn location_word(location: ParamLocation) -> &'static str {
    match location {
        ParamLocation::Path => "path",
        ParamLocation::Query => "query",
        ParamLocation::Body => "body",
    }
}

fn cost_entry(cost: Cost) -> CostEntry {
    match cost {
        Cost::Free => CostEntry {
            units: 0,
            per: "call",
        },
        Cost::Units(units) => CostEntry { units, per: "call" },
        Cost::PerSymbol => CostEntry {
            units: 1,
            per: "symbol",
        },
    }
}

fn index_entry(spec: &EndpointSpec) -> IndexEntry {
    IndexEntry {
        slug: spec.slug,
        method: spec.method.as_str(),
        path: spec.full_path(),
        family: spec.family,
        tier: spec.tier.as_str(),
        summary: spec.summary,
        cost: cost_entry(spec.cost),
        params: spec
            .params
            .iter()
            .map(|p| IndexParam {
                name: p.name,
                location: location_word(p.location),
                required: p.required,
                default: p.default,
                bounds: p.bounds,
            })
            .collect(),
        docs: spec.docs_link(),
        example: IndexExample {
            request: format!(
                "{} {DATA_PREFIX}{}",
                spec.method.as_str(),
                spec.example.request
            ),
            body: spec
                .example
                .body
                .and_then(|body| serde_json::from_str(body).ok()),
        },
    }
}

/// The index payload of `registry`'s mounted endpoints.
pub fn index_payload(registry: &Registry) -> IndexPayload {
    IndexPayload {
        version: API_VERSION,
        base_path: DATA_PREFIX,
        endpoint_count: registry.endpoint_count(),
        endpoints: registry.mounted().iter().map(|e| index_entry(e)).collect(),
        families: registry
            .families()
            .into_iter()
            .map(|(family, count)| FamilyEntry {
                slug: family.slug,
                name: family.name,
                endpoint_count: count,
                docs: format!("{DATA_PREFIX}/docs#family-{}", family.slug),
            })
            .collect(),
        openapi: format!("{DATA_PREFIX}/openapi.json"),
        markdown: format!("{DATA_PREFIX}/docs"),
        changelog: format!("{DATA_PREFIX}/changelog"),
    }
}

/// The index response body, serialized once, with the example-date placeholders left in.
pub fn index_json(registry: &Registry) -> String {
    let envelope = Envelope {
        success: true,
        data: index_payload(registry),
    };
    // Serializing plain structs of strings and numbers cannot fail; an empty body would show
    // up at once in the index tests.
    serde_json::to_string(&envelope).unwrap_or_default()
}

/// The dates the examples use at `now`: the last closed session, and next month's standard
/// monthly expiration (third Friday, or the trading day before it when that is a holiday).
pub fn example_dates(now: DateTime<Utc>, calendar: &NyseCalendar) -> (NaiveDate, NaiveDate) {
    let state = calendar.market_state(now);
    let last_session = if state.is_open {
        calendar.previous_trading_day(state.trade_date)
    } else {
        state.trade_date
    };
    let today = new_york_date(now);
    let (year, month) = if today.month() == 12 {
        (today.year() + 1, 1)
    } else {
        (today.year(), today.month() + 1)
    };
    let monthly = NaiveDate::from_ymd_opt(year, month, 1)
        .and_then(|first| {
            let to_friday = (Weekday::Fri.num_days_from_monday() + 7
                - first.weekday().num_days_from_monday())
                % 7;
            first.checked_add_days(Days::new(u64::from(to_friday) + 14))
        })
        .map_or(last_session, |friday| {
            if calendar.is_trading_day(friday) {
                friday
            } else {
                calendar.previous_trading_day(friday)
            }
        });
    (last_session, monthly)
}

fn with_example_dates(text: &str, state: &AppState) -> String {
    let (last_session, monthly) = example_dates(state.now(), state.calendar());
    text.replace(LAST_SESSION_PLACEHOLDER, &last_session.to_string())
        .replace(MONTHLY_EXPIRY_PLACEHOLDER, &monthly.to_string())
}

/// The index of served endpoints.
#[utoipa::path(
    get,
    path = "/",
    tag = "platform",
    operation_id = "index",
    summary = "Index of the served endpoints",
    description = "Every endpoint this server answers, with method, path, tier, parameters \
                   (defaults and bounds), budget cost, docs link and a runnable example.",
    responses((status = 200, description = "The index"))
)]
pub async fn index(State(state): State<AppState>) -> Response {
    let body = with_example_dates(&state.catalogue.index_json, &state);
    ([(CONTENT_TYPE, JSON_CONTENT_TYPE)], body).into_response()
}

/// The OpenAPI 3.1 document.
#[utoipa::path(
    get,
    path = "/openapi.json",
    tag = "platform",
    operation_id = "openapi",
    summary = "OpenAPI 3.1 document",
    description = "This document. Returned as is, not in the envelope.",
    responses((status = 200, description = "OpenAPI 3.1 JSON", body = serde_json::Value))
)]
pub async fn openapi(State(state): State<AppState>) -> Response {
    (
        [(CONTENT_TYPE, JSON_CONTENT_TYPE)],
        state.catalogue.openapi_json.clone(),
    )
        .into_response()
}

/// The Markdown reference.
#[utoipa::path(
    get,
    path = "/docs",
    tag = "platform",
    operation_id = "docs",
    summary = "One-file API reference (Markdown)",
    description = "The whole API in one Markdown file. Returned as is, not in the envelope.",
    responses((status = 200, description = "Markdown", content_type = "text/markdown", body = String))
)]
pub async fn docs(State(state): State<AppState>) -> Response {
    (
        [(CONTENT_TYPE, MARKDOWN_CONTENT_TYPE)],
        state.catalogue.reference_markdown.clone(),
    )
        .into_response()
}

/// The changelog.
#[utoipa::path(
    get,
    path = "/changelog",
    tag = "platform",
    operation_id = "changelog",
    summary = "Changelog (Markdown)",
    description = "One entry per interface version, newest first. Returned as is.",
    responses((status = 200, description = "Markdown", content_type = "text/markdown", body = String))
)]
pub async fn changelog() -> Response {
    ([(CONTENT_TYPE, MARKDOWN_CONTENT_TYPE)], CHANGELOG_MARKDOWN).into_response()
}

fn kind_word(kind: ParamKind) -> String {
    match kind {
        ParamKind::Int { min, max } => format!("whole number, {min} to {max} (clamped)"),
        ParamKind::Float { min, max } => match (min, max) {
            (Some(min), Some(max)) => format!("number, {min} to {max} (clamped)"),
            (Some(min), None) => format!("number, at least {min} (clamped)"),
            (None, Some(max)) => format!("number, at most {max} (clamped)"),
            (None, None) => "number".to_owned(),
        },
        ParamKind::Choice(words) => format!("one of {}", words.join(", ")),
        ParamKind::Bool => "true or false".to_owned(),
        ParamKind::Date => "date YYYY-MM-DD".to_owned(),
        ParamKind::Symbol => "ticker".to_owned(),
        ParamKind::SymbolList { max_len } => format!("comma-separated tickers, at most {max_len}"),
        ParamKind::IntList { min, max, max_len } => {
            format!("comma-separated whole numbers {min} to {max} (clamped), at most {max_len}")
        }
        ParamKind::NameList => "comma-separated names".to_owned(),
        ParamKind::Text => "text".to_owned(),
        ParamKind::Number => "JSON number".to_owned(),
        ParamKind::Array => "JSON array".to_owned(),
        ParamKind::Object => "JSON object".to_owned(),
    }
}

fn cost_words(cost: Cost) -> String {
    match cost {
        Cost::Free => "free".to_owned(),
        Cost::Units(1) => "1 unit per call".to_owned(),
        Cost::Units(n) => format!("{n} units per call"),
        Cost::PerSymbol => "1 unit per symbol requested".to_owned(),
    }
}

/// A table cell: pipes escaped, on one line.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// The served reference: the hand-written text, then one section per mounted endpoint grouped
/// by family (anchors `#<slug>` and `#family-<slug>`, which the index links to), with its
/// parameters from the registry and, where the family declares its payload type, the response
/// fields from that type's schema.
pub fn reference_markdown(registry: &Registry) -> String {
    let data_schemas = crate::handlers::data_schemas();
    let mut out = String::with_capacity(REFERENCE_MARKDOWN.len() + 4096);
    out.push_str(REFERENCE_MARKDOWN);
    out.push_str("\n## Endpoints served by this build\n\n");
    out.push_str(&format!(
        "{} endpoints are served. Paths are relative to `{DATA_PREFIX}`. An endpoint of the \
         interface that is not listed here is not served by this build and answers 404.\n",
        registry.endpoint_count()
    ));
    for (family, _) in registry.families() {
        out.push_str(&format!(
            "\n### <a id=\"family-{}\"></a>{}\n",
            family.slug, family.name
        ));
        for spec in registry
            .mounted()
            .iter()
            .filter(|e| e.family == family.slug)
        {
            out.push_str(&format!(
                "\n#### <a id=\"{}\"></a>{} {}\n\n{}\n\n- tier: {}\n- cost: {}\n",
                spec.slug,
                spec.method.as_str(),
                spec.path,
                spec.summary,
                spec.tier.as_str(),
                cost_words(spec.cost)
            ));
            let example = match (spec.method, spec.example.body) {
                (Method::Post, Some(body)) => {
                    format!(
                        "POST {}{} with body `{body}`",
                        DATA_PREFIX, spec.example.request
                    )
                }
                _ => format!(
                    "{} {}{}",
                    spec.method.as_str(),
                    DATA_PREFIX,
                    spec.example.request
                ),
            };
            out.push_str(&format!("- example: `{example}`\n"));
            if !spec.params.is_empty() {
                out.push_str(
                    "\n| parameter | in | required | default | accepts |\n| --- | --- | --- | --- | --- |\n",
                );
                for p in spec.params {
                    out.push_str(&format!(
                        "| `{}` | {} | {} | {} | {} |\n",
                        p.name,
                        location_word(p.location),
                        if p.required { "yes" } else { "no" },
                        p.default.unwrap_or("—"),
                        kind_word(p.kind)
                    ));
                }
            }
            let fields = data_schemas
                .iter()
                .find(|d| d.slug == spec.slug)
                .map(crate::openapi::data_fields)
                .unwrap_or_default();
            if !fields.is_empty() {
                out.push_str(
                    "\nResponse fields, under `data` (`[]`: each item of a list, `<key>`: each \
                     key of a map):\n\n| field | type | meaning |\n| --- | --- | --- |\n",
                );
                for field in fields {
                    out.push_str(&format!(
                        "| `{}` | {} | {} |\n",
                        cell(&field.path),
                        cell(&field.kind),
                        cell(&field.description)
                    ));
                }
            }
        }
    }
    out
}

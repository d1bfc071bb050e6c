//! `GET /`: the index of served endpoints, with their parameters, costs and examples.

use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Datelike, Days, NaiveDate, Utc, Weekday};
use optics_compute::time::{NyseCalendar, new_york_date};
use serde::Serialize;
use utoipa::ToSchema;

use super::{
    JSON_CONTENT_TYPE, LAST_SESSION_PLACEHOLDER, MONTHLY_EXPIRY_PLACEHOLDER, location_word,
};
use crate::API_VERSION;
use crate::envelope::Envelope;
use crate::registry::{Cost, DATA_PREFIX, EndpointSpec, Registry};
use crate::state::AppState;

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

//! Route handlers. [`platform`] serves the index and the documentation; the data families
//! (chain, exposures, flow, …) are added to [`data_routes`].
//!
//! # Adding a data endpoint
//!
//! 1. Write the handler in `handlers/<family>.rs`: take `State<AppState>`, the [`crate::Ticker`]
//!    path extractor (or [`crate::ApiPath`]), [`crate::QueryParams`] for the query (typed,
//!    clamped with the registry's bounds) and [`crate::ApiJson`] for POST bodies; read data
//!    through [`crate::AppState::market_data`]; return `Result<Json<Envelope<T>>, ApiError>`
//!    via [`crate::ok`]. Put [`crate::AppState::freshness_of`] (the served data's session) and, for trimmed lists, the
//!    [`crate::window`] block and `QueryParams::clamp_notices()` in the payload.
//! 2. Derive `utoipa::ToSchema` on `T` and the structs it nests, and list it in the family's
//!    `data_schemas()` as `DataSchema::of::<T>("<slug>")` (see [`crate::openapi`] for the
//!    stand-ins of dates, timestamps and stored enums); add that function to
//!    [`data_schemas`] once per family. The OpenAPI document then describes `data` with `T`
//!    and the reference lists its fields. An endpoint without one is still documented, with
//!    `data` as a plain object. Parameters always come from the registry.
//! 3. Add `("<slug>", get(handler))` to [`data_routes`]. The slug must be the registry's; the
//!    route is then mounted at the registry's path, listed in the index, counted, suggested by
//!    `did_you_mean` and documented in `/docs` and `/openapi.json`.

pub mod chain;
pub mod exposure;
pub mod flow;
pub mod greeks;
pub mod platform;
pub mod risk;
pub mod strategy;

use axum::routing::MethodRouter;

use crate::openapi::DataSchema;
use crate::state::AppState;

/// The payload type of every endpoint whose family declares one, by registry slug: the
/// `data` schema of its OpenAPI 200 response and the field list of its reference section.
pub fn data_schemas() -> Vec<DataSchema> {
    let mut schemas = platform::data_schemas();
    schemas.extend(chain::data_schemas());
    schemas.extend(exposure::data_schemas());
    schemas.extend(greeks::data_schemas());
    schemas.extend(flow::data_schemas());
    schemas
}

/// The data endpoints this build serves, by registry slug; nothing unimplemented is mounted
/// or advertised. `me-usage` needs the token gate (it reads the caller it admitted).
pub fn data_routes() -> Vec<(&'static str, MethodRouter<AppState>)> {
    vec![
        (
            "me-usage",
            axum::routing::get(crate::limits::usage::me_usage),
        ),
        ("stock", axum::routing::get(chain::stock)),
        ("search", axum::routing::get(chain::search)),
        (
            "options-by-delta",
            axum::routing::get(chain::options_by_delta),
        ),
        ("chain-at-time", axum::routing::get(chain::chain_at_time)),
        ("expirations", axum::routing::get(chain::expirations)),
        ("chain", axum::routing::get(chain::chain)),
        ("gex", axum::routing::get(exposure::gex)),
        ("expected-move", axum::routing::get(exposure::expected_move)),
        ("max-pain", axum::routing::get(exposure::max_pain_of)),
        ("charm", axum::routing::get(exposure::charm)),
        ("gex-batch", axum::routing::get(exposure::batch_gex)),
        (
            "expected-move-batch",
            axum::routing::get(exposure::batch_expected_move),
        ),
        (
            "cross-index-gex",
            axum::routing::get(exposure::cross_index_gex),
        ),
        (
            "greeks-exposure",
            axum::routing::get(exposure::greeks_exposure),
        ),
        ("zero-dte", axum::routing::get(exposure::zero_dte)),
        (
            "third-order-greeks",
            axum::routing::get(greeks::third_order_greeks),
        ),
        ("greeks-heatmap", axum::routing::get(greeks::greeks_heatmap)),
        ("flow", axum::routing::get(flow::flow)),
        ("smart-money", axum::routing::get(flow::smart_money_flow)),
        (
            "volume-profile",
            axum::routing::get(flow::volume_profile_of),
        ),
        ("pop", axum::routing::post(strategy::pop)),
        (
            "analyze-strategy",
            axum::routing::post(strategy::analyze_strategy),
        ),
        (
            "simulate-chain",
            axum::routing::post(strategy::simulate_chain),
        ),
        (
            "build-strategy",
            axum::routing::post(strategy::build_strategy),
        ),
        (
            "optimize-strategy",
            axum::routing::post(strategy::optimize_strategy),
        ),
        (
            "portfolio-greeks",
            axum::routing::post(risk::portfolio_greeks),
        ),
        (
            "scenario-analysis",
            axum::routing::post(risk::scenario_analysis),
        ),
        ("stress-tests", axum::routing::post(risk::stress_tests)),
        (
            "hedge-recommendations",
            axum::routing::post(risk::hedge_recommendations),
        ),
    ]
}

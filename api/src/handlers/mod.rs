//! Route handlers. [`platform`] serves the index and the documentation; the data families
//! (chain, exposures, flow, …) are added to [`data_routes`].
//!
//! # Adding a data endpoint
//!
//! 1. Write the handler in its own file, `handlers/<family>/<endpoint>.rs`, next to its payload
//!    types; helpers several endpoints of the family use go to the family's `mod.rs`, never
//!    copied. The handler is thin: parse, read a snapshot or call `optics_compute`, shape the
//!    payload. Analytics (pricing, regimes, picks) are pure functions in `optics_compute`, with
//!    the thresholds a payload quotes as `pub const`s there.
//! 2. Take what it needs as extractors: `State<AppState>`; [`crate::CoveredChain`] (a covered
//!    ticker and its latest chain), [`crate::CoveredTicker`] (a covered ticker) or
//!    [`crate::Ticker`] (any well-formed one); [`crate::QueryParams`] for the query (typed,
//!    clamped with the registry's bounds) and [`crate::ApiJson`] for POST bodies. Return
//!    `Result<Json<Envelope<T>>, ApiError>` via [`crate::ok`], and let `?` turn compute errors
//!    into statuses through the `From` impls of [`crate::error`] (add one there for a new error
//!    type rather than choosing a status in the handler). Put
//!    [`crate::AppState::freshness_of`] (the served data's session) and, for trimmed lists, the
//!    [`crate::window`] block and `QueryParams::clamp_notices()` in the payload.
//! 3. Derive `utoipa::ToSchema` on `T` and the structs it nests, and list it in the family's
//!    `data_schemas()` as `DataSchema::of::<T>(Endpoint::<Variant>)` (see [`crate::openapi`] for the
//!    stand-ins of dates, timestamps and stored enums); add that function to
//!    [`data_schemas`] once per family. The OpenAPI document then describes `data` with `T`
//!    and the reference lists its fields. An endpoint without one is still documented, with
//!    `data` as a plain object. Parameters always come from the registry.
//! 4. Add `(Endpoint::<Variant>, get(<family>::<handler>))` to [`data_routes`]. [`Endpoint`]
//!    is generated with the registry table (`make registry`), one variant per endpoint, so the
//!    pairing is checked at compile time; the route is then mounted at the registry's path,
//!    listed in the index, counted, suggested by `did_you_mean` and documented in `/docs` and
//!    `/openapi.json`.

pub mod batch;
pub mod chain;
pub mod earnings;
pub mod events;
pub mod exposure;
pub mod flow;
pub mod greeks;
pub mod platform;
pub mod risk;
pub mod screeners;
pub mod stock;
pub mod strategy;
pub mod volatility;

use axum::routing::MethodRouter;

use crate::openapi::DataSchema;
use crate::registry::Endpoint;
use crate::state::AppState;

/// The payload type of every endpoint whose family declares one, by endpoint: the
/// `data` schema of its OpenAPI 200 response and the field list of its reference section.
pub fn data_schemas() -> Vec<DataSchema> {
    let mut schemas = platform::data_schemas();
    schemas.extend(chain::data_schemas());
    schemas.extend(exposure::data_schemas());
    schemas.extend(greeks::data_schemas());
    schemas.extend(flow::data_schemas());
    schemas.extend(volatility::data_schemas());
    schemas.extend(earnings::data_schemas());
    schemas.extend(events::data_schemas());
    schemas.extend(stock::data_schemas());
    schemas.extend(screeners::data_schemas());
    schemas
}

/// The data endpoints this build serves, each paired with its registry row; nothing
/// unimplemented is mounted or advertised. `me-usage` needs the token gate (it reads the caller it admitted).
pub fn data_routes() -> Vec<(Endpoint, MethodRouter<AppState>)> {
    vec![
        (
            Endpoint::MeUsage,
            axum::routing::get(crate::limits::usage::me_usage),
        ),
        (Endpoint::Stock, axum::routing::get(chain::stock::stock)),
        (Endpoint::Search, axum::routing::get(chain::search::search)),
        (
            Endpoint::OptionsByDelta,
            axum::routing::get(chain::options_by_delta::options_by_delta),
        ),
        (
            Endpoint::ChainAtTime,
            axum::routing::get(chain::chain_at_time::chain_at_time),
        ),
        (
            Endpoint::Expirations,
            axum::routing::get(chain::expirations::expirations),
        ),
        (Endpoint::Chain, axum::routing::get(chain::chain::chain)),
        (Endpoint::Gex, axum::routing::get(exposure::gex::gex)),
        (
            Endpoint::ExpectedMove,
            axum::routing::get(exposure::expected_move::expected_move),
        ),
        (
            Endpoint::MaxPain,
            axum::routing::get(exposure::max_pain::max_pain_of),
        ),
        (Endpoint::Charm, axum::routing::get(exposure::charm::charm)),
        (
            Endpoint::GexBatch,
            axum::routing::get(exposure::gex_batch::batch_gex),
        ),
        (
            Endpoint::ExpectedMoveBatch,
            axum::routing::get(exposure::expected_move_batch::batch_expected_move),
        ),
        (
            Endpoint::CrossIndexGex,
            axum::routing::get(exposure::cross_index_gex::cross_index_gex),
        ),
        (
            Endpoint::GreeksExposure,
            axum::routing::get(exposure::greeks_exposure::greeks_exposure),
        ),
        (
            Endpoint::ZeroDte,
            axum::routing::get(exposure::zero_dte::zero_dte),
        ),
        (
            Endpoint::ThirdOrderGreeks,
            axum::routing::get(greeks::third_order_greeks::third_order_greeks),
        ),
        (
            Endpoint::GreeksHeatmap,
            axum::routing::get(greeks::greeks_heatmap::greeks_heatmap),
        ),
        (Endpoint::Flow, axum::routing::get(flow::flow::flow)),
        (
            Endpoint::SmartMoney,
            axum::routing::get(flow::smart_money::smart_money_flow),
        ),
        (
            Endpoint::VolumeProfile,
            axum::routing::get(flow::volume_profile::volume_profile_of),
        ),
        (
            Endpoint::IvRank,
            axum::routing::get(volatility::iv_rank::iv_rank),
        ),
        (
            Endpoint::IvRankBatch,
            axum::routing::get(volatility::iv_rank_batch::batch_iv_rank),
        ),
        (
            Endpoint::IvOpportunities,
            axum::routing::get(volatility::iv_opportunities::iv_opportunities),
        ),
        (
            Endpoint::TermStructure,
            axum::routing::get(volatility::term_structure::term_structure),
        ),
        (Endpoint::Vrp, axum::routing::get(volatility::vrp::vrp_of)),
        (
            Endpoint::VrpExpirations,
            axum::routing::get(volatility::vrp_expirations::vrp_expirations),
        ),
        (
            Endpoint::VrpTimeseries,
            axum::routing::get(volatility::vrp_timeseries::vrp_timeseries),
        ),
        (
            Endpoint::VolatilityCone,
            axum::routing::get(volatility::volatility_cone::volatility_cone),
        ),
        (
            Endpoint::HvRegimes,
            axum::routing::get(volatility::hv_regimes::hv_regimes),
        ),
        (
            Endpoint::Monies,
            axum::routing::get(volatility::monies::monies),
        ),
        (Endpoint::Skew, axum::routing::get(volatility::skew::skew)),
        (Endpoint::Vix, axum::routing::get(volatility::vix::vix)),
        (
            Endpoint::HistoricalMoves,
            axum::routing::get(earnings::historical_moves::historical_moves),
        ),
        (
            Endpoint::ExpectedVsActual,
            axum::routing::get(earnings::expected_vs_actual::expected_vs_actual),
        ),
        (
            Endpoint::MispricingAssessment,
            axum::routing::get(earnings::mispricing_assessment::mispricing_assessment),
        ),
        (
            Endpoint::Seasonality,
            axum::routing::get(events::seasonality::seasonality_of),
        ),
        (
            Endpoint::Correlation,
            axum::routing::get(stock::correlation::correlation_of),
        ),
        (
            Endpoint::Dividend,
            axum::routing::get(stock::dividend::dividend),
        ),
        (Endpoint::Cores, axum::routing::get(stock::cores::cores)),
        (
            Endpoint::BorrowRate,
            axum::routing::get(stock::borrow_rate::borrow_rate),
        ),
        (
            Endpoint::PriceContext,
            axum::routing::get(stock::price_context::price_context),
        ),
        (
            Endpoint::VolArbScan,
            axum::routing::get(screeners::vol_arb_scan::vol_arb_scan),
        ),
        (
            Endpoint::Screen,
            axum::routing::get(screeners::screen::screen),
        ),
        (
            Endpoint::MarketOverview,
            axum::routing::get(screeners::market_overview::market_overview),
        ),
        (
            Endpoint::CorrelationCompare,
            axum::routing::get(stock::correlation_compare::correlation_compare),
        ),
        (
            Endpoint::RelativeValue,
            axum::routing::get(stock::relative_value::relative_value),
        ),
        (
            Endpoint::RelativeValueScan,
            axum::routing::get(screeners::relative_value_scan::relative_value_scan),
        ),
        (
            Endpoint::EarningsHistory,
            axum::routing::get(earnings::earnings_history::earnings_history),
        ),
        (
            Endpoint::PostEarningsDrift,
            axum::routing::get(earnings::post_earnings_drift::post_earnings_drift),
        ),
        (
            Endpoint::IvCrush,
            axum::routing::get(earnings::iv_crush::iv_crush),
        ),
        (
            Endpoint::EarningsVerdict,
            axum::routing::get(earnings::earnings_verdict::earnings_verdict),
        ),
        (Endpoint::Pop, axum::routing::post(strategy::pop)),
        (
            Endpoint::AnalyzeStrategy,
            axum::routing::post(strategy::analyze_strategy),
        ),
        (
            Endpoint::SimulateChain,
            axum::routing::post(strategy::simulate_chain),
        ),
        (
            Endpoint::BuildStrategy,
            axum::routing::post(strategy::build_strategy),
        ),
        (
            Endpoint::OptimizeStrategy,
            axum::routing::post(strategy::optimize_strategy),
        ),
        (
            Endpoint::PortfolioGreeks,
            axum::routing::post(risk::portfolio_greeks),
        ),
        (
            Endpoint::ScenarioAnalysis,
            axum::routing::post(risk::scenario_analysis),
        ),
        (
            Endpoint::StressTests,
            axum::routing::post(risk::stress_tests),
        ),
        (
            Endpoint::HedgeRecommendations,
            axum::routing::post(risk::hedge_recommendations),
        ),
        (
            Endpoint::EarningsCalendar,
            axum::routing::get(events::earnings_calendar::earnings_calendar),
        ),
        (
            Endpoint::EconomicCalendar,
            axum::routing::get(events::economic_calendar::economic_calendar),
        ),
    ]
}

//! optics-api: the HTTP interface of optics (axum).
//!
//! One factory, [`router`], builds the whole service from an [`AppState`]; tests drive it
//! in-process with `tower::ServiceExt::oneshot`, the binary serves it with [`serve`].
//!
//! What every route gets from this crate:
//!
//! - **Envelope and errors** ([`envelope`], [`error`]): `{"success": true, "data": …}` on
//!   success; `{"success": false, "error": …}` with the status of the interface's error table
//!   from the one [`ApiError`]. Axum's own rejections (bad JSON, wrong content type, bad path or
//!   query) and handler panics come out in the same envelope, never as plain text.
//! - **Registry** ([`registry`]): the contract's endpoints (generated from the reference
//!   records) and the set actually mounted. The index (`GET /api/mcp/data/`), the
//!   `did_you_mean` of unknown paths, the served reference and the OpenAPI document list mounted
//!   endpoints only.
//! - **Parameters** ([`params`]): typed query parsing with the registry's bounds — whole
//!   numbers clamped (and the clamp reported), enums, dates, lists, booleans, tickers.
//! - **Compact windows** ([`window`]): the `X-Service-Client` signal, `detail`,
//!   `strikes_around`/`limit`, and the trimming helpers that return the `window` block.
//! - **Freshness** ([`freshness`]): `is_market_hours`, `data_freshness`, `message` from the
//!   injected clock and the NYSE calendar.
//! - **Docs** ([`openapi`]): OpenAPI 3.1 at `/api/mcp/data/openapi.json`, the Markdown reference
//!   at `/api/mcp/data/docs`, the changelog at `/api/mcp/data/changelog`.
//! - **Observability** ([`metrics`]): Prometheus `GET /metrics` (requests and latency by route
//!   template and status, snapshot age) and one `tracing` span per request.
//!
//! The data handlers (chain, exposures, flow, …) plug into [`handlers::data_routes`] and read
//! market data through the [`MarketDataReader`] held by [`AppState`].

#![forbid(unsafe_code)]

pub mod accounts;
pub mod auth;
pub mod body;
pub mod dashboard;
pub mod envelope;
pub mod error;
pub mod extract;
pub mod freshness;
pub mod handlers;
pub mod limits;
pub mod market;
pub mod metrics;
pub mod openapi;
pub mod params;
pub mod registry;
pub mod response_cache;
mod router;
pub mod serve;
pub mod sql;
mod state;
mod suggest;
pub mod ticker;
pub mod window;

pub use envelope::{ApiJson, ApiPath, ApiQuery, Envelope, ok};
pub use error::{ApiError, ErrorBody, NotFound, RateLimit, Suggestion};
pub use extract::{CoveredChain, CoveredTicker};
pub use freshness::{DataFreshness, Freshness};
pub use params::{Clamped, QueryParams};
pub use registry::{DATA_PREFIX, Endpoint, EndpointSpec, Registry, Tier};
pub use router::{MatchedEndpoint, observability_router, router, router_with, serve};
pub use state::{AppState, MarketDataReader, ReadFuture, RouteGate, VolSeries};
pub use ticker::Ticker;

/// The interface version this build implements (spec part 9).
pub const API_VERSION: &str = "1.10";

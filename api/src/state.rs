//! The state every handler shares: the clock, the calendar, metrics, the market-data reader and
//! the catalogue (registry, reference, OpenAPI) the router builds.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;

use chrono::{DateTime, NaiveDate, Utc};
use optics_compute::cores::CoresHistory;
use optics_compute::time::{Clock, NyseCalendar};
use optics_schemas::{ChainRow, VolDailyRow};

use crate::error::ApiError;
use crate::freshness::{Freshness, freshness, freshness_of_session};
use crate::market::{
    ChainView, Coverage, ExposureView, FlowAggregatesView, FlowView, UniverseCache, UniverseTable,
    VixSession,
};
use crate::metrics::Metrics;
use crate::registry::Registry;
use crate::response_cache::ResponseCache;
use crate::ticker::Ticker;

/// Where data handlers read market data (see [`crate::market`]): the latest snapshot of each
/// dataset per ticker, decoded once when published and shared by every request, and history
/// through DataFusion. [`crate::market::StoreMarketData`] implements it over the snapshot
/// store; tests may implement it in memory.
pub trait MarketDataReader: Send + Sync + fmt::Debug + 'static {
    /// Whether `ticker` is in the coverage universe (has listed options).
    fn covers(&self, ticker: &Ticker) -> bool;

    /// The latest chain of `ticker` (the live session's, or the last session's end of day).
    fn chain(&self, ticker: &Ticker) -> Option<Arc<ChainView>>;

    /// The latest dealer exposures of `ticker`.
    fn exposures(&self, ticker: &Ticker) -> Option<Arc<ExposureView>>;

    /// The latest session flow of `ticker`.
    fn flow(&self, ticker: &Ticker) -> Option<Arc<FlowView>>;

    /// The latest `flow_aggregates` of `ticker` (its flow summed by strike and by
    /// expiration). The default holds none: `/flow` then sums the flow rows itself.
    fn flow_aggregates(&self, _ticker: &Ticker) -> Option<Arc<FlowAggregatesView>> {
        None
    }

    /// The coverage universe (company map), by symbol.
    fn coverage(&self) -> Arc<Coverage>;

    /// The end-of-day chain rows of `ticker` for `expiration` as priced at the close of
    /// `trade_date`; `Ok(None)` when that session is not carried.
    fn chain_at_time<'a>(
        &'a self,
        ticker: &'a Ticker,
        trade_date: NaiveDate,
        expiration: NaiveDate,
    ) -> ReadFuture<'a, Result<Option<Vec<ChainRow>>, ApiError>>;

    /// The expirations listed in the end-of-day chain of `ticker` on `trade_date`, ascending;
    /// `Ok(None)` when that session is not carried (the default: none is).
    fn expirations_at<'a>(
        &'a self,
        _ticker: &'a Ticker,
        _trade_date: NaiveDate,
    ) -> ReadFuture<'a, Result<Option<Vec<NaiveDate>>, ApiError>> {
        Box::pin(async { Ok(None) })
    }

    /// Every stored `vol_daily` row of `ticker` (one per session: close, realized and implied
    /// vols and the other session statistics), ascending by trade date, shared: callers slice
    /// the sessions they read. Empty when none is stored (the default stores none).
    fn vol_history<'a>(
        &'a self,
        _ticker: &'a Ticker,
    ) -> ReadFuture<'a, Result<VolSeries, ApiError>> {
        Box::pin(async { Ok(VolSeries::default()) })
    }

    /// What the cores row reads of each ticker's stored `vol_daily` series, for rows computed
    /// on `today`, aligned with `tickers` (a universe build asks for every covered ticker at
    /// once). The default cuts each ticker's [`vol_history`](Self::vol_history); a reader
    /// over files reads every ticker's in one pass and holds none of the full series.
    fn cores_histories<'a>(
        &'a self,
        tickers: &'a [Ticker],
        today: NaiveDate,
    ) -> ReadFuture<'a, Result<Vec<CoresHistory>, ApiError>> {
        Box::pin(async move {
            let mut histories = Vec::with_capacity(tickers.len());
            for ticker in tickers {
                let rows = self.vol_history(ticker).await?;
                histories.push(CoresHistory::from_rows(&rows, today));
            }
            Ok(histories)
        })
    }

    /// A number that changes whenever the stored `vol_daily` series change (a session closed,
    /// a past one restated): a [`CoresHistory`] cut at one value serves every build of the
    /// same day at that value. `None` (the default): unknown, so histories are cut afresh for
    /// every build.
    fn vol_generation(&self) -> Option<u64> {
        None
    }

    /// The VIX prints of the newest session this reader has computed from the SPX chains it
    /// installed ([`crate::market::VixTape`]); `None` (the default) when it keeps no tape.
    fn vix_session(&self) -> Option<VixSession> {
        None
    }

    /// A number that changes whenever anything this reader serves changes (a snapshot swapped
    /// in, the reference data reloaded). Answers built from the reader are reused while it
    /// stays the same ([`crate::response_cache`]); `None` (the default) turns that off.
    fn generation(&self) -> Option<u64> {
        None
    }
}

/// One underlying's stored `vol_daily` rows, ascending by session, shared between requests.
pub type VolSeries = Arc<Vec<VolDailyRow>>;

/// The future a history read returns (boxed: the reader is a trait object).
pub type ReadFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

type GateFn = dyn Fn(Request, Next) -> Pin<Box<dyn Future<Output = Response> + Send>> + Send + Sync;

/// A middleware run in front of every registered route (the index, the documentation routes
/// and every data route; not `/metrics` nor the 404/405 fallbacks): the place for
/// authentication, plans and limits. It runs inside the route's [`crate::MatchedEndpoint`]
/// extension, so it can read the endpoint's tier and cost, and outside the metrics and panic
/// layers, so its refusals are counted and enveloped like any answer.
///
/// ```ignore
/// let gate = RouteGate::new(move |request, next| require_token(State(access.clone()), request, next));
/// let state = AppState::new(clock).with_gate(gate);
/// ```
#[derive(Clone)]
pub struct RouteGate(Arc<GateFn>);

impl RouteGate {
    /// A gate from an async function of the request and the rest of the stack.
    pub fn new<F, Fut>(gate: F) -> Self
    where
        F: Fn(Request, Next) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Response> + Send + 'static,
    {
        Self(Arc::new(move |request, next| Box::pin(gate(request, next))))
    }

    /// Runs the gate.
    pub async fn run(&self, request: Request, next: Next) -> Response {
        (self.0)(request, next).await
    }
}

impl fmt::Debug for RouteGate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RouteGate")
    }
}

/// Read-only catalogue derived from the mounted routes once, at router construction.
#[derive(Debug, Default)]
pub(crate) struct Catalogue {
    pub(crate) registry: Registry,
    /// The served Markdown reference (static text + the mounted endpoints' sections).
    pub(crate) reference_markdown: String,
    /// The OpenAPI document, serialized.
    pub(crate) openapi_json: String,
    /// The index payload, serialized with `{last_session}` placeholders.
    pub(crate) index_json: String,
}

/// Shared state of the service; cheap to clone.
#[derive(Debug, Clone)]
pub struct AppState {
    clock: Arc<dyn Clock>,
    calendar: NyseCalendar,
    metrics: Metrics,
    market_data: Option<Arc<dyn MarketDataReader>>,
    gate: Option<RouteGate>,
    response_cache: Arc<ResponseCache>,
    universe: Arc<UniverseCache>,
    /// Slots for CPU-heavy request work ([`AppState::run_heavy`]), one per core.
    heavy_slots: Arc<tokio::sync::Semaphore>,
    pub(crate) catalogue: Arc<Catalogue>,
}

impl AppState {
    /// State with the given clock, fresh metrics and no market data yet. Tests pass a
    /// `ManualClock`; the binary a `SystemClock` (or an `AcceleratedClock`).
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        Self {
            clock,
            calendar: NyseCalendar,
            metrics: Metrics::new(),
            market_data: None,
            gate: None,
            response_cache: Arc::new(ResponseCache::default()),
            universe: Arc::new(UniverseCache::default()),
            heavy_slots: Arc::new(tokio::sync::Semaphore::new(
                std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
            )),
            catalogue: Arc::new(Catalogue::default()),
        }
    }

    /// Attaches the market-data reader the data handlers use.
    #[must_use]
    pub fn with_market_data(mut self, reader: Arc<dyn MarketDataReader>) -> Self {
        self.market_data = Some(reader);
        self
    }

    /// Runs `gate` in front of every registered route (see [`RouteGate`]).
    #[must_use]
    pub fn with_gate(mut self, gate: RouteGate) -> Self {
        self.gate = Some(gate);
        self
    }

    /// The gate in front of registered routes, if any.
    pub fn gate(&self) -> Option<&RouteGate> {
        self.gate.as_ref()
    }

    /// Uses `metrics` (e.g. shared with another component) instead of fresh ones.
    #[must_use]
    pub fn with_metrics(mut self, metrics: Metrics) -> Self {
        self.metrics = metrics;
        self
    }

    /// The current instant, from the injected clock.
    pub fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    /// The answers of data routes held for reuse.
    pub fn response_cache(&self) -> &ResponseCache {
        &self.response_cache
    }

    /// The universe table held (what `/metrics` reports of it).
    pub fn universe_cache(&self) -> &UniverseCache {
        &self.universe
    }

    /// The session's universe table (one row per covered underlying) at the reader's current
    /// generation: built on the first read of a generation, shared until the next.
    pub async fn universe_table(&self) -> Result<Arc<UniverseTable>, ApiError> {
        self.universe
            .table(self.market_data()?.as_ref(), self.now())
            .await
    }

    /// Builds the universe table now if the reader's generation moved since the last build
    /// (the binary's refresh task calls it, so requests find it built); whether it built.
    pub async fn refresh_universe_table(&self) -> Result<bool, ApiError> {
        self.universe
            .refresh(self.market_data()?.as_ref(), self.now())
            .await
    }

    /// How long the refresh task waits before its next [`refresh_universe_table`]
    /// (Self::refresh_universe_table): spaced by the builds' own cost.
    pub fn universe_refresh_pause(&self) -> std::time::Duration {
        self.universe.refresh_pause()
    }

    /// Runs `work` (CPU-heavy: a search, a simulation) on the blocking pool, never more at
    /// once than there are cores, so a burst of heavy requests cannot starve the async
    /// runtime that answers everyone else. Waiting for a slot and the work itself each get
    /// `deadline`; past either the caller gets a 503 with `Retry-After` (the work already
    /// started still finishes and frees its slot).
    pub async fn run_heavy<T: Send + 'static>(
        &self,
        what: &'static str,
        deadline: std::time::Duration,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, ApiError> {
        let retry_after_secs = deadline.as_secs().max(1);
        let permit = tokio::time::timeout(deadline, Arc::clone(&self.heavy_slots).acquire_owned())
            .await
            .map_err(|_| ApiError::Busy {
                reason: format!(
                    "The server is busy with other {what} requests; retry in {retry_after_secs} s"
                ),
                retry_after_secs,
            })?
            .map_err(|e| ApiError::internal("heavy-work slots", e))?;
        let task = tokio::task::spawn_blocking(move || {
            let _slot = permit;
            work()
        });
        match tokio::time::timeout(deadline, task).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(join)) => Err(ApiError::internal("heavy request work", join)),
            Err(_) => Err(ApiError::Busy {
                reason: format!(
                    "The {what} took longer than {} s; narrow the request or retry later",
                    deadline.as_secs_f64()
                ),
                retry_after_secs,
            }),
        }
    }

    /// The clock itself.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// The NYSE calendar.
    pub fn calendar(&self) -> &NyseCalendar {
        &self.calendar
    }

    /// The metrics (the binary reports snapshot publications through them).
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The endpoints this router mounts (empty until [`crate::router`] has built the state).
    pub fn registry(&self) -> &Registry {
        &self.catalogue.registry
    }

    /// Freshness of data served now (`is_market_hours`, `data_freshness`, `message`).
    pub fn freshness(&self) -> Freshness {
        freshness(self.now(), &self.calendar)
    }

    /// Freshness of data of the session `data_trade_date` served now: `LIVE` only while that
    /// session is open; data of an earlier session is that session's `EOD`, whatever the clock
    /// says. What payloads report; [`Self::freshness`] is the clock's alone.
    pub fn freshness_of(&self, data_trade_date: NaiveDate) -> Freshness {
        freshness_of_session(self.now(), &self.calendar, data_trade_date)
    }

    /// The market-data reader, or a 424 when none is attached (the store is not loaded).
    pub fn market_data(&self) -> Result<&Arc<dyn MarketDataReader>, ApiError> {
        self.market_data.as_ref().ok_or_else(|| {
            ApiError::upstream("Market data is not loaded yet; retry in a few seconds")
        })
    }

    /// Validates `raw` as a ticker and checks that it is covered: 400 for a malformed symbol,
    /// 404 for a symbol without listed options, 424 when no market data is attached.
    pub fn covered_ticker(&self, raw: &str) -> Result<Ticker, ApiError> {
        let ticker = Ticker::parse(raw)?;
        if self.market_data()?.covers(&ticker) {
            Ok(ticker)
        } else {
            Err(ApiError::not_found(format!(
                "No options data for ticker {ticker}: it is not in the coverage universe \
                 (see {}/search)",
                crate::registry::DATA_PREFIX
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use axum::http::StatusCode;
    use optics_compute::time::ManualClock;

    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn heavy_work_past_its_deadline_or_without_a_slot_is_a_503_with_retry_after() {
        let state = AppState::new(Arc::new(ManualClock::new(DateTime::<Utc>::MIN_UTC)));
        assert_eq!(
            state
                .run_heavy("test", Duration::from_secs(1), || 7)
                .await
                .unwrap(),
            7
        );
        // Every slot taken by work that outlives the deadline.
        let slots = state.heavy_slots.available_permits();
        let (release, gate) = std::sync::mpsc::channel::<()>();
        let gate = Arc::new(std::sync::Mutex::new(gate));
        let mut running = Vec::new();
        for _ in 0..slots {
            let (state, gate) = (state.clone(), Arc::clone(&gate));
            running.push(tokio::spawn(async move {
                state
                    .run_heavy("test", Duration::from_millis(200), move || {
                        let _ = gate.lock().map(|g| g.recv_timeout(Duration::from_secs(5)));
                    })
                    .await
            }));
        }
        for task in running {
            let error = task.await.unwrap().unwrap_err();
            assert_eq!(error.status(), StatusCode::SERVICE_UNAVAILABLE);
            assert!(error.to_string().contains("took longer than"), "{error}");
        }
        // The slots are still held by the work: the next caller waits, then is refused.
        let error = state
            .run_heavy("test", Duration::from_millis(100), || ())
            .await
            .unwrap_err();
        assert!(error.to_string().contains("busy"), "{error}");
        assert_eq!(error.body().retry_after_seconds, Some(1));
        for _ in 0..slots {
            let _ = release.send(());
        }
    }
}

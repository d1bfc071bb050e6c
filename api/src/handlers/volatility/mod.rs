//! The implied-volatility family, one file per endpoint: [`iv_rank`], [`iv_rank_batch`],
//! [`iv_opportunities`], [`term_structure`], [`vrp`], [`vrp_expirations`],
//! [`vrp_timeseries`], [`volatility_cone`], [`hv_regimes`], [`monies`] and [`skew`].
//!
//! Every endpoint reads the same two things ([`VolRead`]): the ticker's live chain (today's
//! implied vols) and its stored `vol_daily` history (one row per session close: the close,
//! realized vols, the 30-day constant-maturity IV), with the earnings reaction sessions of
//! that history. The statistics are `optics_compute::vol`'s; the labels and their thresholds
//! `optics_compute::vol::signals`' and `optics_compute::vol::regimes`'.
//!
//! Bases, stated on every payload:
//! - realized vol (`hv_basis`): close-to-close, the sample standard deviation of exactly N
//!   daily log returns of the stored session closes, × √252, percentage points;
//! - `iv30d` (`iv_basis`): the forward-ATM IVs of the listed expirations interpolated in total
//!   variance to 30 calendar days; today's from the live chain, earlier sessions' as stored at
//!   their close.

pub mod hv_regimes;
pub mod iv_opportunities;
pub mod iv_rank;
pub mod iv_rank_batch;
pub mod monies;
pub mod skew;
pub mod term_structure;
pub mod vix;
pub mod volatility_cone;
pub mod vrp;
pub mod vrp_expirations;
pub mod vrp_timeseries;

use std::sync::Arc;

use chrono::{DateTime, NaiveDate, Utc};
use optics_compute::time::NyseCalendar;
use optics_compute::vol::close::reaction_sessions;
use optics_compute::vol::{ConstantMaturityIv, ExpirationVol, hv};
use optics_schemas::{EarningsEvent, VolDailyRow};
use serde::Serialize;
use utoipa::ToSchema;

use self::hv_regimes::HvRegimesPayload;
use self::iv_opportunities::IvOpportunitiesPayload;
use self::iv_rank::IvRankPayload;
use self::monies::MoniesPayload;
use self::skew::SkewPayload;
use self::term_structure::TermStructurePayload;
use self::volatility_cone::VolatilityConePayload;
use self::vrp::VrpPayload;
use self::vrp_expirations::VrpExpirationsPayload;
use self::vrp_timeseries::VrpTimeseriesPayload;
use super::batch::BatchPayload;
use crate::error::ApiError;
use crate::extract::latest_chain;
use crate::freshness::Freshness;
use crate::market::ChainView;
use crate::openapi::{DataSchema, IsoDate, Timestamp};
use crate::params::{ClampNotice, QueryParams};
use crate::registry::Endpoint;
use crate::state::{AppState, VolSeries};
use crate::ticker::Ticker;

/// `hv_basis` of every realized figure.
pub const HV_BASIS: &str = "close-to-close: sample standard deviation (n - 1) of exactly N daily \
                            log returns of session closes, x sqrt(252), percentage points";
/// `iv_basis` of every 30-day IV figure.
pub const IV30_BASIS: &str = "iv30d: forward-ATM implied vols of the listed expirations \
                              interpolated in total variance to 30 calendar days; today's from \
                              the live chain, earlier sessions' as stored at their close";
/// `iv_units` / `units` of every volatility figure.
pub const VOL_UNITS: &str = "annualised percentage points (25.0 = 25 %)";

/// Stored sessions a volatility read fetches at most: the longest lookback any endpoint takes
/// (iv-rank's 1,260) plus the longest realized window (252) and its extra close.
pub const MAX_HISTORY_SESSIONS: usize = 1_260 + 253;

/// The payload type of each endpoint of the family.
pub fn data_schemas() -> Vec<DataSchema> {
    vec![
        DataSchema::of::<IvRankPayload>(Endpoint::IvRank),
        DataSchema::named::<BatchPayload<IvRankPayload>>(
            Endpoint::IvRankBatch,
            "IvRankBatchPayload",
        ),
        DataSchema::of::<IvOpportunitiesPayload>(Endpoint::IvOpportunities),
        DataSchema::of::<TermStructurePayload>(Endpoint::TermStructure),
        DataSchema::of::<VrpPayload>(Endpoint::Vrp),
        DataSchema::of::<VrpExpirationsPayload>(Endpoint::VrpExpirations),
        DataSchema::of::<VrpTimeseriesPayload>(Endpoint::VrpTimeseries),
        DataSchema::of::<VolatilityConePayload>(Endpoint::VolatilityCone),
        DataSchema::of::<HvRegimesPayload>(Endpoint::HvRegimes),
        DataSchema::of::<MoniesPayload>(Endpoint::Monies),
        DataSchema::of::<SkewPayload>(Endpoint::Skew),
        DataSchema::of::<vix::VixPayload>(Endpoint::Vix),
    ]
}

/// What a volatility endpoint reads: the live chain and the stored history before it.
#[derive(Debug, Clone)]
pub struct VolRead {
    /// The covered ticker.
    pub ticker: Ticker,
    /// Its latest chain.
    pub chain: Arc<ChainView>,
    /// Per-expiration ATM IVs of the chain (forward ATM, 25-delta wings).
    pub expirations: Vec<ExpirationVol>,
    /// The chain's constant-maturity IVs.
    pub constant_maturity: ConstantMaturityIv,
    /// The ticker's stored series (shared); [`VolRead::history`] is its window.
    series: VolSeries,
    /// The window of `series` read: the sessions on or before the chain's, at most
    /// [`MAX_HISTORY_SESSIONS`].
    window: std::ops::Range<usize>,
    /// Indices into [`VolRead::history`] of the sessions whose close first reflects an earnings report.
    pub reaction_sessions: Vec<usize>,
}

impl VolRead {
    /// Reads `ticker`'s chain (424 while none is built) and history (424 when the store cannot
    /// be read; an empty history is not an error: figures that need it are null with a reason).
    pub async fn of(state: &AppState, ticker: Ticker) -> Result<Self, ApiError> {
        let chain = latest_chain(state, &ticker)?;
        let reader = state.market_data()?.clone();
        let series = reader.vol_history(&ticker).await?;
        let end = series.partition_point(|r| r.trade_date <= chain.trade_date);
        let window = end.saturating_sub(MAX_HISTORY_SESSIONS)..end;
        let coverage = reader.coverage();
        let reports: Vec<&EarningsEvent> = coverage.reports_of(ticker.as_str()).iter().collect();
        let dates: Vec<NaiveDate> = series[window.clone()]
            .iter()
            .map(|r| r.trade_date)
            .collect();
        let reaction_sessions = reaction_sessions(&dates, &reports);
        let implied = chain.implied();
        let (expirations, constant_maturity) =
            (implied.expirations.clone(), implied.constant_maturity);
        Ok(Self {
            ticker,
            chain,
            expirations,
            constant_maturity,
            series,
            window,
            reaction_sessions,
        })
    }

    /// Stored sessions on or before the chain's, ascending (at most
    /// [`MAX_HISTORY_SESSIONS`]).
    pub fn history(&self) -> &[VolDailyRow] {
        &self.series[self.window.clone()]
    }

    /// Today's 30-day constant-maturity IV: the live chain's, else the stored row of the
    /// chain's session.
    pub fn iv30d(&self) -> Option<f64> {
        self.constant_maturity.iv30d_pct.or_else(|| {
            self.history()
                .last()
                .filter(|r| r.trade_date == self.chain.trade_date)
                .and_then(|r| r.iv30d_pct)
        })
    }

    /// The stored `iv30d` of the sessions before the chain's, oldest first, skipping sessions
    /// without one.
    pub fn prior_iv30d(&self) -> Vec<f64> {
        self.history()
            .iter()
            .filter(|r| r.trade_date < self.chain.trade_date)
            .filter_map(|r| r.iv30d_pct)
            .filter(|v| v.is_finite() && *v > 0.0)
            .collect()
    }

    /// Session closes of the history, oldest first.
    pub fn closes(&self) -> Vec<f64> {
        self.history().iter().map(|r| r.close).collect()
    }

    /// The last stored session, the end of every realized window.
    pub fn last_session(&self) -> Option<NaiveDate> {
        self.history().last().map(|r| r.trade_date)
    }
}

/// The session and instant a volatility payload describes, its freshness, why any figure is
/// null and which parameters were clamped: flattened into every payload of the family.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Served {
    /// The session of the chain the current figures come from.
    #[schema(value_type = IsoDate)]
    pub trade_date: NaiveDate,
    /// The instant that chain was priced.
    #[schema(value_type = Timestamp)]
    pub as_of: DateTime<Utc>,
    /// `LIVE` or `EOD`, market hours and a sentence.
    #[serde(flatten)]
    pub freshness: Freshness,
    /// Why figures are null, when they are.
    pub reason: Option<String>,
    /// Parameters moved into their documented range.
    pub clamped: Vec<ClampNotice>,
}

impl Served {
    /// The block of a payload built from `chain`, with the reason for its null figures and
    /// the clamp notices of its parameters.
    pub fn of(
        state: &AppState,
        chain: &ChainView,
        reason: Option<String>,
        clamped: Vec<ClampNotice>,
    ) -> Self {
        Self {
            trade_date: chain.trade_date,
            as_of: chain.as_of,
            freshness: state.freshness_of(chain.trade_date),
            reason,
            clamped,
        }
    }
}

impl VolRead {
    /// The [`Served`] block of a payload built from this read.
    pub fn served(&self, state: &AppState, reason: Option<String>, params: &QueryParams) -> Served {
        Served::of(state, &self.chain, reason, params.clamp_notices())
    }
}

/// Each stored session's premium, its iv30d minus its realized vol over `window` sessions
/// ending at its close, for the last `sessions` sessions before the chain's that have both,
/// oldest first (today's own premium is not among them).
pub fn premium_history(read: &VolRead, window: usize, sessions: usize) -> Vec<f64> {
    let closes = read.closes();
    let prior = read
        .history()
        .partition_point(|r| r.trade_date < read.chain.trade_date);
    let first = prior.saturating_sub(sessions);
    (first..prior)
        .filter_map(|i| {
            let iv = read.history()[i].iv30d_pct?;
            let rv = hv(&closes[..=i], window)?;
            Some(iv - rv).filter(|p| p.is_finite())
        })
        .collect()
}

/// NYSE sessions after `from` up to and including `to`.
pub fn sessions_between(from: NaiveDate, to: NaiveDate) -> usize {
    let calendar = NyseCalendar;
    from.iter_days()
        .skip(1)
        .take_while(|d| *d <= to)
        .filter(|d| calendar.is_trading_day(*d))
        .count()
}

/// The reason beside figures that need today's iv30d.
pub fn no_iv30d(read: &VolRead) -> String {
    format!(
        "{} has no 30-day IV now: the chain has no expiration with an at-the-money IV",
        read.ticker
    )
}

/// The reason beside figures that need `window` + 1 stored closes.
pub fn short_history(read: &VolRead, window: usize) -> String {
    format!(
        "{} stored session closes; a {window}-session realized vol needs {}",
        read.history().len(),
        window + 1
    )
}

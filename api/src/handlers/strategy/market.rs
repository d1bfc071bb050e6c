//! The live chain as the strategy math reads it: its market (rate, carry, forwards), its open
//! expirations and one series per strike.

use chrono::NaiveDate;
use optics_compute::strategy::{self, Market};
use optics_compute::time::years_to_expiry;
use optics_schemas::ChainRow;

use crate::error::ApiError;
use crate::market::ChainView;
use crate::state::AppState;
use crate::ticker::Ticker;

use super::fields::body_ticker;
use super::{DEFAULT_DTE, DEFAULT_RATE, MAX_DAYS_TO_EXP};

/// The market of a live chain at the chain's own price ([`ChainView::stock_price`]): the
/// rate and carry yield of its rows at `expiration` (the chain's first row when no row has
/// that expiration) and, for chains priced on the forward, the forward of every expiration
/// still open at `now`. [`Market::with_underlying_price`] moves it to a supplied price.
pub(crate) fn chain_market(
    chain: &ChainView,
    expiration: Option<NaiveDate>,
    now: chrono::DateTime<chrono::Utc>,
) -> Market {
    let (rate, carry) = chain_rate_and_carry(chain, expiration);
    let rate = rate.unwrap_or(DEFAULT_RATE);
    if chain.priced_on_forward() {
        let curve = chain
            .expirations
            .iter()
            .filter_map(|&e| {
                let years = years_to_expiry(now, e);
                let forward = chain.rows_of(e).first()?.forward;
                (years > 0.0 && forward.is_finite() && forward > 0.0)
                    .then_some(strategy::ForwardPoint { years, forward })
            })
            .collect();
        Market::forward_curve(chain.stock_price(), rate, curve)
    } else {
        Market::spot(chain.stock_price(), rate, carry.unwrap_or(0.0))
    }
}

/// The rate and carry yield of `chain`'s rows at `expiration` (the chain's first row when no
/// row has that expiration), each `None` when the row does not carry a finite one.
pub(crate) fn chain_rate_and_carry(
    chain: &ChainView,
    expiration: Option<NaiveDate>,
) -> (Option<f64>, Option<f64>) {
    let row = expiration
        .and_then(|e| chain.rows_of(e).first())
        .or_else(|| chain.rows.first());
    let finite = |v: f64| v.is_finite().then_some(v);
    (
        row.and_then(|r| finite(r.rate)),
        row.and_then(|r| finite(r.carry_yield)),
    )
}

/// The chain row of `expiration` at `strike`.
pub(crate) fn chain_row(
    chain: &ChainView,
    expiration: NaiveDate,
    strike: f64,
) -> Option<&ChainRow> {
    chain
        .rows_of(expiration)
        .iter()
        .find(|r| strategy::same_strike(r.strike, strike))
}

/// An expiration of a live chain still open at some instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct OpenExpiration {
    /// The date.
    pub expiration: NaiveDate,
    /// Years to it from that instant (calendar days / 365), > 0.
    pub years_to_expiry: f64,
}

/// The expirations of `chain` still open at `now`, ascending.
pub(crate) fn open_expirations(
    chain: &ChainView,
    now: chrono::DateTime<chrono::Utc>,
) -> Vec<OpenExpiration> {
    chain
        .expirations
        .iter()
        .filter_map(|&expiration| {
            let years = years_to_expiry(now, expiration);
            (years.is_finite() && years > 0.0).then_some(OpenExpiration {
                expiration,
                years_to_expiry: years,
            })
        })
        .collect()
}

/// One expiration of the live chain as the builders, the optimizer and the hedge selector see
/// it: one series per strike ([`first_series_per_strike`]), each side with its bid, ask,
/// Greeks and IV when all are known.
pub(crate) fn expiration_chain(
    chain: &ChainView,
    open: OpenExpiration,
) -> strategy::ExpirationChain {
    strategy::ExpirationChain {
        expiration: Some(open.expiration),
        years_to_expiry: open.years_to_expiry,
        rows: first_series_per_strike(chain.rows_of(open.expiration))
            .into_iter()
            .map(|row| strategy::ChainRow {
                strike: row.strike,
                call: side_quote(&row.call),
                put: side_quote(&row.put),
            })
            .collect(),
    }
}

/// The rows of one expiration with one series per strike: of rows at the same strike
/// ([`optics_schemas::StrikeKey`]), the first listed (AM before PM when a date has both), in
/// the order listed ([`strategy::first_per_strike`]).
pub(crate) fn first_series_per_strike(rows: &[ChainRow]) -> Vec<&ChainRow> {
    strategy::first_per_strike(rows, |row| row.strike)
}

pub(crate) fn side_quote(side: &optics_schemas::ChainSide) -> Option<strategy::SideQuote> {
    Some(strategy::SideQuote {
        bid: side.bid?,
        ask: side.ask?,
        delta: side.greeks.delta?,
        theta: side.greeks.theta?,
        vega: side.greeks.vega?,
        iv: side.iv?,
    })
}

/// The request type of an endpoint that searches one expiration of a live chain (build,
/// optimize): `ticker`, `expiration` and `dte`, then its own fields.
macro_rules! live_chain_request {
    ($(#[$meta:meta])* $name:ident { $($(#[$field_meta:meta])* $field:ident: $ty:ty,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default, serde::Deserialize, utoipa::ToSchema)]
        #[serde(expecting = "a JSON object")]
        pub struct $name {
            /// The underlying (required).
            #[serde(default, deserialize_with = "crate::body::text")]
            #[schema(required = true)]
            pub ticker: Option<String>,
            /// The expiration to use, YYYY-MM-DD (default: the open one nearest `dte`).
            #[serde(default, deserialize_with = "crate::body::date")]
            #[schema(value_type = Option<crate::openapi::IsoDate>)]
            pub expiration: Option<chrono::NaiveDate>,
            /// Target days to expiration, 0 to 3650 (default 30).
            #[serde(default, deserialize_with = "crate::body::number")]
            pub dte: Option<f64>,
            $($(#[$field_meta])* pub $field: $ty,)*
        }
    };
}
pub(crate) use live_chain_request;

/// The live chain of the body's ticker, by expiration, with its market.
pub(crate) struct LiveChain {
    pub(crate) ticker: Ticker,
    pub(crate) view: std::sync::Arc<ChainView>,
    /// The expirations still open at `now`; only the ones a request uses are read into
    /// [`strategy::ExpirationChain`]s ([`LiveChain::chain`]).
    pub(crate) open: Vec<OpenExpiration>,
    /// The service clock's time the years were computed at.
    pub(crate) now: chrono::DateTime<chrono::Utc>,
}

impl LiveChain {
    /// The `index`-th open expiration as the builders and the optimizer read it.
    pub(crate) fn chain(&self, index: usize) -> strategy::ExpirationChain {
        expiration_chain(&self.view, self.open[index])
    }
}

pub(crate) fn live_chain(state: &AppState, ticker: Option<&str>) -> Result<LiveChain, ApiError> {
    let ticker = body_ticker(state, ticker)?;
    let view = state
        .market_data()?
        .chain(&ticker)
        .ok_or_else(|| ApiError::upstream(format!("No live chain for {ticker} yet")))?;
    if !(view.stock_price().is_finite() && view.stock_price() > 0.0) {
        return Err(ApiError::upstream(format!(
            "The live price of {ticker} is not usable"
        )));
    }
    let now = state.now();
    let open = open_expirations(&view, now);
    Ok(LiveChain {
        ticker,
        view,
        open,
        now,
    })
}

/// The index of the expiration asked for: `expiration` exactly, else the one nearest `dte`
/// days (a tie goes to the later).
pub(crate) fn pick_expiration(
    live: &LiveChain,
    expiration: Option<NaiveDate>,
    dte: f64,
) -> Result<usize, ApiError> {
    if let Some(expiration) = expiration {
        return live
            .open
            .iter()
            .position(|o| o.expiration == expiration)
            .ok_or_else(|| {
                ApiError::upstream(format!(
                    "{} has no open {expiration} expiration in the live chain (see /expirations)",
                    live.ticker
                ))
            });
    }
    let years: Vec<f64> = live.open.iter().map(|o| o.years_to_expiry).collect();
    strategy::nearest_horizon(&years, dte).ok_or_else(|| {
        ApiError::upstream(format!(
            "{} has no open expiration in the live chain",
            live.ticker
        ))
    })
}

/// The `dte` sent (default [`DEFAULT_DTE`]), within 0 to [`MAX_DAYS_TO_EXP`] days.
pub(crate) fn days_param(dte: Option<f64>) -> Result<f64, ApiError> {
    let dte = dte.unwrap_or(DEFAULT_DTE);
    if !(0.0..=MAX_DAYS_TO_EXP).contains(&dte) {
        return Err(ApiError::bad_request(format!(
            "dte: must be between 0 and {MAX_DAYS_TO_EXP} days"
        )));
    }
    Ok(dte)
}

//! The live chain as the strategy math reads it: its market (rate, carry, forwards), its open
//! expirations and one series per strike.

use chrono::NaiveDate;
use optics_compute::strategy::{self, Market};
use optics_compute::time::{DAYS_PER_YEAR, years_to_expiry};
use optics_schemas::ChainRow;

use crate::error::ApiError;
use crate::market::ChainView;
use crate::state::AppState;
use crate::ticker::Ticker;

use super::fields::*;
use super::*;

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
        .find(|r| (r.strike - strike).abs() < STRIKE_TOLERANCE)
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

/// The rows of one expiration with one series per strike: of rows whose strikes are closer
/// than [`STRIKE_TOLERANCE`], the first listed (AM before PM when a date has both), in the
/// order listed.
///
/// `rows` is [`ChainView::rows_of`]: one run of ascending strikes per settlement style. Each
/// strike is compared with the last strike kept in its own run and, through a cursor that
/// only moves forward, with the strikes kept from the earlier runs (merged in ascending
/// order), so the pass is linear in the rows rather than quadratic.
pub(crate) fn first_series_per_strike(rows: &[ChainRow]) -> Vec<&ChainRow> {
    let mut kept: Vec<&ChainRow> = Vec::with_capacity(rows.len());
    // Strikes kept from the runs already read, ascending, and from the current run.
    let mut earlier: Vec<f64> = Vec::new();
    let mut current: Vec<f64> = Vec::new();
    let mut cursor = 0;
    let mut previous = f64::NEG_INFINITY;
    for row in rows {
        let strike = row.strike;
        if !strike.is_finite() {
            // |NaN − x| and |±∞ − x| are never below the tolerance: never a repeat.
            kept.push(row);
            continue;
        }
        if strike < previous {
            // The next settlement style's run begins.
            earlier = merge_ascending(&earlier, &current);
            current.clear();
            cursor = 0;
        }
        previous = strike;
        // Skip the earlier strikes too far below this one (they are for the next ones too:
        // the run ascends).
        while cursor < earlier.len()
            && earlier[cursor] < strike
            && strike - earlier[cursor] >= STRIKE_TOLERANCE
        {
            cursor += 1;
        }
        let repeats_earlier = earlier
            .get(cursor)
            .is_some_and(|k| (k - strike).abs() < STRIKE_TOLERANCE);
        let repeats_current = current
            .last()
            .is_some_and(|k| strike - k < STRIKE_TOLERANCE);
        if !(repeats_earlier || repeats_current) {
            kept.push(row);
            current.push(strike);
        }
    }
    kept
}

/// Two ascending lists merged into one.
pub(crate) fn merge_ascending(a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut merged = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i] <= b[j] {
            merged.push(a[i]);
            i += 1;
        } else {
            merged.push(b[j]);
            j += 1;
        }
    }
    merged.extend_from_slice(&a[i..]);
    merged.extend_from_slice(&b[j..]);
    merged
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
    let miss = |o: &OpenExpiration| (o.years_to_expiry * DAYS_PER_YEAR - dte).abs();
    let mut best: Option<usize> = None;
    for (index, open) in live.open.iter().enumerate() {
        if best.is_none_or(|b| miss(open) <= miss(&live.open[b])) {
            best = Some(index);
        }
    }
    best.ok_or_else(|| {
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

#[cfg(test)]
mod tests {
    use super::*;
    use optics_schemas::{ChainSide, ForwardSource, PricingModelCode, SettlementStyle};

    fn row(settlement: SettlementStyle, strike: f64) -> ChainRow {
        let as_of = chrono::DateTime::<chrono::Utc>::UNIX_EPOCH;
        ChainRow {
            underlying: "SPX".into(),
            trade_date: as_of.date_naive(),
            as_of,
            expiration: as_of.date_naive(),
            settlement,
            dte: 0,
            years_to_expiry: 0.0,
            strike,
            spot: 100.0,
            forward: 100.0,
            forward_source: ForwardSource::Carry,
            forward_strike_count: 0,
            rate: 0.0,
            carry_yield: 0.0,
            model: PricingModelCode::Bsm,
            call: ChainSide::default(),
            put: ChainSide::default(),
        }
    }

    /// The rule the linear pass replaced: keep a row unless a kept row is within tolerance.
    fn quadratic(rows: &[ChainRow]) -> Vec<&ChainRow> {
        let mut kept: Vec<&ChainRow> = Vec::new();
        for row in rows {
            if !kept
                .iter()
                .any(|r| (r.strike - row.strike).abs() < STRIKE_TOLERANCE)
            {
                kept.push(row);
            }
        }
        kept
    }

    #[test]
    fn first_series_per_strike_keeps_what_the_quadratic_rule_kept() {
        use SettlementStyle::{Am, Pm};
        let tol = STRIKE_TOLERANCE;
        // An AM run and a PM run, each ascending (the order of ChainView::rows_of), with
        // shared strikes, PM-only strikes between and beyond the AM ones, strikes a hair
        // inside and outside the tolerance, chains of near-equal strikes, and strikes that
        // are not numbers.
        let am = [
            90.0,
            95.0,
            100.0,
            100.0 + 0.6 * tol,
            100.0 + 1.2 * tol,
            105.0,
            110.0,
            f64::NAN,
        ];
        let pm = [
            80.0,
            95.0 - 0.5 * tol,
            97.5,
            100.0 + 0.9 * tol,
            102.5,
            105.0 + tol,
            110.0 + 0.99 * tol,
            120.0,
            120.0,
            f64::INFINITY,
        ];
        let rows: Vec<ChainRow> = am
            .iter()
            .map(|&k| row(Am, k))
            .chain(pm.iter().map(|&k| row(Pm, k)))
            .collect();
        let expected: Vec<*const ChainRow> = quadratic(&rows)
            .into_iter()
            .map(|r| r as *const _)
            .collect();
        let linear: Vec<*const ChainRow> = first_series_per_strike(&rows)
            .into_iter()
            .map(|r| r as *const _)
            .collect();
        assert_eq!(linear, expected);
        // And on a single run and on nothing.
        assert_eq!(
            first_series_per_strike(&rows[..am.len()]).len(),
            quadratic(&rows[..am.len()]).len()
        );
        assert!(first_series_per_strike(&[]).is_empty());
    }
}

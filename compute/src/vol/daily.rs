//! One underlying's `vol_daily` row at a session close, assembled from plain inputs with the
//! functions of [`super::realized`], [`super::implied`] and [`super::stats`].

use chrono::{DateTime, NaiveDate, Utc};
use optics_schemas::{ChainRow, VolDailyRow, VolTermRow};

use super::implied::{
    ConstantMaturityIv, ExpirationVol, expiration_vols, front_atm, skew25_constant_maturity,
    smile_shape_at,
};
use super::realized::{HvSet, earnings_in_window, hv_ex_earnings};
use super::stats::{
    CORRELATION_WINDOW_1Y, EarningsMove, correlation_beta, earnings_move_stats, iv_rank_percentile,
    vrp,
};
use super::{VolError, check_positive};

/// Sessions in the IV rank and percentile lookback (one year, today included).
pub const IV_RANK_LOOKBACK_SESSIONS: usize = 252;
/// Fewest sessions (today included) for an IV rank and percentile; below it both are null.
pub const IV_RANK_MIN_SESSIONS: usize = 20;
/// The HV window the VRP and the ex-earnings figure use.
const VRP_HV_WINDOW: usize = 30;

/// What one underlying's daily volatility row is computed from.
#[derive(Debug, Clone, Copy)]
pub struct DailyVolInputs<'a> {
    /// Underlying symbol.
    pub underlying: &'a str,
    /// The session.
    pub trade_date: NaiveDate,
    /// The session close instant.
    pub as_of: DateTime<Utc>,
    /// Daily closes, oldest first, the last one the trade date's; dollars.
    pub closes: &'a [f64],
    /// Earnings reaction sessions as indices into `closes` (see
    /// [`super::realized::earnings_in_window`]).
    pub reaction_sessions: &'a [usize],
    /// The underlying's closing chain snapshot of the trade date (may be empty).
    pub chain: &'a [ChainRow],
    /// `iv30d_pct` of the previous sessions, oldest first (only the last 251 are used).
    pub prior_iv30d_pct: &'a [f64],
    /// SPY closes on the same dates as `closes` (same length), when available.
    pub spy_closes: Option<&'a [f64]>,
    /// The underlying's past earnings moves up to the trade date (see
    /// [`super::close::earnings_moves`]); `None` when it has no earnings reports at all (an
    /// ETF or index), which leaves the earnings statistics null.
    pub earnings_moves: Option<&'a [EarningsMove]>,
}

/// The `vol_daily` row of one underlying and session.
///
/// IV rank and percentile rank today's `iv30d` within the last [`IV_RANK_LOOKBACK_SESSIONS`]
/// sessions including today (null below [`IV_RANK_MIN_SESSIONS`]); VRP is `iv30d − hv30`;
/// beta and correlation use the last 252 returns against SPY (null with a shorter history).
///
/// Errors when `closes` is empty or holds a bad last close, the chain belongs to another
/// underlying or session, the SPY series is not aligned with the closes, or an input value is
/// not a usable number.
pub fn vol_daily_row(inputs: &DailyVolInputs<'_>) -> Result<VolDailyRow, VolError> {
    vol_daily_and_term_rows(inputs).map(|(row, _)| row)
}

/// [`vol_daily_row`] and the underlying's ATM term structure at the close: one
/// [`VolTermRow`] per expiration of the chain ([`expiration_vols`]), nearest first (none
/// without a chain).
pub fn vol_daily_and_term_rows(
    inputs: &DailyVolInputs<'_>,
) -> Result<(VolDailyRow, Vec<VolTermRow>), VolError> {
    let closes = inputs.closes;
    let Some(&close) = closes.last() else {
        return Err(VolError::TooFewObservations {
            what: "daily closes",
            needed: 1,
            got: 0,
        });
    };
    check_positive("closes", &[close]).map_err(|_| VolError::BadValue {
        what: "closes",
        index: closes.len() - 1,
        value: close,
        rule: "a finite number > 0",
    })?;
    if let Some(row) = inputs.chain.first() {
        for (what, ours, theirs) in [
            (
                "underlyings",
                inputs.underlying.to_owned(),
                row.underlying.clone(),
            ),
            (
                "trade dates",
                inputs.trade_date.to_string(),
                row.trade_date.to_string(),
            ),
        ] {
            if ours != theirs {
                return Err(VolError::MixedChain {
                    what,
                    first: ours,
                    other: theirs,
                });
            }
        }
    }

    let hv = HvSet::from_closes(closes);
    let vols = expiration_vols(inputs.chain)?;
    let cm = ConstantMaturityIv::from_expirations(&vols);
    let front = front_atm(&vols);

    let (iv_rank, iv_percentile) = match cm.iv30d_pct {
        Some(today) => iv_rank_against_prior(inputs.prior_iv30d_pct, today)?,
        None => (None, None),
    };
    let premium = match (cm.iv30d_pct, hv.hv_30d_pct) {
        (Some(iv), Some(realized)) => Some(vrp(iv, realized)?),
        _ => None,
    };
    let spy = match inputs.spy_closes {
        Some(spy) => match correlation_beta(closes, spy, CORRELATION_WINDOW_1Y) {
            Ok(fit) => Some(fit),
            Err(VolError::TooFewObservations { .. }) => None,
            Err(other) => return Err(other),
        },
        None => None,
    };

    let earnings = inputs.earnings_moves.map(earnings_move_stats).transpose()?;

    let mut row = VolDailyRow::new(inputs.underlying, inputs.trade_date, inputs.as_of, close);
    row.log_return_1d = match closes {
        [.., previous, _] => Some(previous)
            .filter(|p| p.is_finite() && **p > 0.0)
            .map(|p| (close / p).ln()),
        _ => None,
    };
    if let Some(stats) = earnings {
        let count = |n: usize| Some(n as u64);
        row.earnings_count = count(stats.total_earnings);
        row.earnings_up_count = count(stats.up_count);
        row.earnings_down_count = count(stats.down_count);
        row.earnings_beat_count = count(stats.beat_count);
        row.earnings_miss_count = count(stats.miss_count);
        row.earnings_avg_move_pct = stats.avg_move_pct;
        row.earnings_avg_abs_move_pct = stats.avg_abs_move_pct;
        row.earnings_avg_up_move_pct = stats.avg_up_move_pct;
        row.earnings_avg_down_move_pct = stats.avg_down_move_pct;
        row.earnings_avg_beat_move_pct = stats.avg_beat_move_pct;
        row.earnings_avg_miss_move_pct = stats.avg_miss_move_pct;
        row.earnings_max_up_pct = stats.max_up_pct;
        row.earnings_max_down_pct = stats.max_down_pct;
    }
    row.hv_5d_pct = hv.hv_5d_pct;
    row.hv_10d_pct = hv.hv_10d_pct;
    row.hv_20d_pct = hv.hv_20d_pct;
    row.hv_30d_pct = hv.hv_30d_pct;
    row.hv_60d_pct = hv.hv_60d_pct;
    row.hv_90d_pct = hv.hv_90d_pct;
    row.hv_120d_pct = hv.hv_120d_pct;
    row.hv_180d_pct = hv.hv_180d_pct;
    row.hv_252d_pct = hv.hv_252d_pct;
    row.hv_30d_ex_earnings_pct = hv_ex_earnings(closes, VRP_HV_WINDOW, inputs.reaction_sessions);
    row.earnings_in_hv_30d_window = hv
        .hv_30d_pct
        .map(|_| earnings_in_window(closes.len(), VRP_HV_WINDOW, inputs.reaction_sessions));
    row.iv10d_pct = cm.iv10d_pct;
    row.iv20d_pct = cm.iv20d_pct;
    row.iv30d_pct = cm.iv30d_pct;
    row.iv60d_pct = cm.iv60d_pct;
    row.iv90d_pct = cm.iv90d_pct;
    row.iv6m_pct = cm.iv6m_pct;
    row.iv1yr_pct = cm.iv1yr_pct;
    row.front_expiration = front.map(|e| e.expiration);
    row.front_atm_iv_pct = front.and_then(|e| e.atm_iv_pct);
    row.skew25_30d_pct = skew25_constant_maturity(&vols, 30.0);
    if let Some(shape) = smile_shape_at(inputs.chain, 30.0) {
        row.skew_slope_30d = Some(shape.slope);
        row.smile_curvature_30d = Some(shape.curvature);
    }
    row.iv_rank = iv_rank;
    row.iv_percentile = iv_percentile;
    row.vrp_30d_pct = premium.map(|p| p.premium_pct);
    row.vrp_ratio = premium.and_then(|p| p.ratio);
    row.beta_spy_1y = spy.and_then(|s| s.beta);
    row.correlation_spy_1y = spy.and_then(|s| s.correlation);
    // A same-day expiration still trading before the close is no term-structure point.
    let term = vols
        .iter()
        .filter(|v| v.expiration > inputs.trade_date)
        .map(|v| term_row(inputs, v))
        .collect::<Vec<_>>();
    Ok((row, term))
}

fn term_row(inputs: &DailyVolInputs<'_>, v: &ExpirationVol) -> VolTermRow {
    VolTermRow {
        underlying: inputs.underlying.to_owned(),
        trade_date: inputs.trade_date,
        as_of: inputs.as_of,
        expiration: v.expiration,
        settlement: v.settlement,
        dte: v.dte,
        years_to_expiry: v.years_to_expiry,
        forward: v.forward,
        atm_iv_pct: v.atm_iv_pct,
        call25_iv_pct: v.call25_iv_pct,
        put25_iv_pct: v.put25_iv_pct,
        skew25_pct: v.skew25_pct,
    }
}

/// IV rank and percentile of `today`'s 30-day IV against the `prior` sessions' (oldest
/// first): the last [`IV_RANK_LOOKBACK_SESSIONS`] sessions including today, `(None, None)`
/// below [`IV_RANK_MIN_SESSIONS`]. The one rule of the session close and the seeded history.
pub fn iv_rank_against_prior(
    prior: &[f64],
    today: f64,
) -> Result<(Option<f64>, Option<f64>), VolError> {
    let keep = prior.len().min(IV_RANK_LOOKBACK_SESSIONS - 1);
    let mut lookback = prior[prior.len() - keep..].to_vec();
    lookback.push(today);
    if lookback.len() < IV_RANK_MIN_SESSIONS {
        return Ok((None, None));
    }
    let ranked = iv_rank_percentile(&lookback, today)?;
    Ok((ranked.iv_rank, Some(ranked.iv_percentile)))
}

//! `GET /zero-dte/{ticker}`: the same-day expiration: gamma, decay, skew and levels.

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use chrono::{DateTime, NaiveDate, Utc};
use optics_compute::exposure::contracts_from_chain;
use optics_compute::same_day::{
    HOURS_PER_YEAR, atm_pick, gamma_regime_label, risk_reversal_points, skew_label, theta_burn,
};
use optics_schemas::{ExposureRow, VolatilityRegimeCode};
use serde::Serialize;
use utoipa::ToSchema;

use super::{chain_and_exposures, expiration_summary, strike_profile};
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::{CoveredTicker, no_chain};
use crate::freshness::Freshness;
use crate::handlers::flow::listed_or_nearest;
use crate::openapi::{IsoDate, Timestamp, VolatilityRegimeSchema};
use crate::params::{ClampNotice, QueryParams};
use crate::state::AppState;
use crate::ticker::Ticker;
use crate::window::{self, Detail, Window, WindowRequest};

/// One strike of the zero-dte `by_strike[]`: dealer gamma and the per-share Greeks.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct ZeroDteStrike {
    /// Strike, dollars.
    pub strike: f64,
    /// Call GEX, dollars per 1 % move.
    pub call_gex: f64,
    /// Put GEX (dealer-signed), dollars per 1 % move.
    pub put_gex: f64,
    /// call + put.
    pub net_gex: f64,
    /// Call open interest, contracts.
    pub call_oi: u64,
    /// Put open interest, contracts.
    pub put_oi: u64,
    /// Per-share call gamma (per $1).
    pub call_gamma: Option<f64>,
    /// Per-share put gamma (per $1).
    pub put_gamma: Option<f64>,
    /// Call delta.
    pub call_delta: Option<f64>,
    /// Put delta.
    pub put_delta: Option<f64>,
}

/// One strike of the zero-dte `chain_table[]`: quotes, IVs and volume.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct ZeroDteQuote {
    /// Strike, dollars.
    pub strike: f64,
    /// Call bid, dollars per share.
    pub call_bid: Option<f64>,
    /// Call ask.
    pub call_ask: Option<f64>,
    /// Call mid.
    pub call_mid: Option<f64>,
    /// Call IV, percentage points.
    pub call_iv: Option<f64>,
    /// Call volume, contracts.
    pub call_volume: Option<u64>,
    /// Put bid, dollars per share.
    pub put_bid: Option<f64>,
    /// Put ask.
    pub put_ask: Option<f64>,
    /// Put mid.
    pub put_mid: Option<f64>,
    /// Put IV, percentage points.
    pub put_iv: Option<f64>,
    /// Put volume, contracts.
    pub put_volume: Option<u64>,
    /// Call theta, dollars per share per calendar day.
    pub call_theta: Option<f64>,
    /// Put theta.
    pub put_theta: Option<f64>,
}

/// The priced move of the session.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct ZeroDteMetrics {
    /// The ATM straddle in percentage points of spot (1.91 = 1.91 %).
    pub expected_move: f64,
    /// The ATM straddle, dollars.
    pub expected_move_dollars: f64,
    /// Mean of the call and put IV at the listed strike nearest the forward, percentage points.
    pub atm_iv: Option<f64>,
    /// That strike, dollars.
    pub atm_strike: Option<f64>,
    /// The expiration's forward, dollars.
    pub forward: f64,
    /// Hours (calendar) to the expiration day's close (16:00 New York, 13:00 on early-close days).
    pub hours_to_expiry: f64,
}

/// The dealer-gamma read of the expiration.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct ZeroDteGammaRegime {
    /// `POSITIVE_GAMMA` (net GEX > 0: hedging dampens moves), `NEGATIVE_GAMMA` or `NEUTRAL`.
    pub regime: &'static str,
    /// Net GEX of the expiration, dollars per 1 % move.
    pub total_net_gex: f64,
    /// Re-priced flip level, dollars.
    pub flip_level: Option<f64>,
    /// `SUPPRESSED`, `AMPLIFIED` or `NEUTRAL`.
    #[schema(value_type = VolatilityRegimeSchema)]
    pub volatility_regime: VolatilityRegimeCode,
}

/// Levels for the session, dollars.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct ZeroDteLevels {
    /// Largest call GEX.
    pub call_wall: Option<f64>,
    /// Largest |put GEX|.
    pub put_wall: Option<f64>,
    /// Max-pain strike.
    pub max_pain: Option<f64>,
    /// Spot + the expected move.
    pub em_upper: f64,
    /// Spot − the expected move.
    pub em_lower: f64,
}

/// One hour of `theta_burn.hourly_decay[]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct HourlyDecay {
    /// The end of the hour.
    #[schema(value_type = Timestamp)]
    pub hour_ending: DateTime<Utc>,
    /// Hours left to expiry at its end.
    pub hours_to_expiry: f64,
    /// Model value of the ATM straddle then, dollars per share.
    pub straddle_value: f64,
    /// Value lost during the hour, dollars per share.
    pub decay: f64,
    /// Value lost so far as percent of the value now.
    pub cumulative_decay_pct: f64,
}

/// How the ATM straddle decays to expiry with spot, forward and IV held.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ThetaBurn {
    /// Model value of the ATM straddle now (Black-76 on the forward at the ATM IV), dollars per
    /// share.
    pub straddle_value_now: f64,
    /// One entry per remaining hour (the last may be partial).
    pub hourly_decay: Vec<HourlyDecay>,
    /// What is held fixed.
    pub basis: &'static str,
}

/// The skew read: 25-delta risk reversal.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct SkewSignal {
    /// IV of the put nearest −0.25 delta minus IV of the call nearest +0.25 delta,
    /// percentage points.
    pub risk_reversal_25d: f64,
    /// `PUTS_RICH` above +1 point, `CALLS_RICH` below −1, `FLAT` in between.
    pub signal: &'static str,
}

/// How the scored read of `/zero-dte` was computed (`optics_compute::zero_dte`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ScoredRead {
    /// Stored `vol_daily` sessions read (the most recent on or before the chain's session).
    pub sessions_read: usize,
    /// Sessions scored: a session after a stored one with a front ATM IV, at most
    /// `window_sessions` of the most recent.
    pub sessions_scored: usize,
    /// The most scored sessions used.
    pub window_sessions: usize,
    /// Fewer scored sessions give no `em_hit_rate` or `edge_score`.
    pub min_sessions: usize,
    /// Scored sessions whose move stayed within the expected move.
    pub hits: Option<usize>,
    /// The first scored session.
    #[schema(value_type = Option<IsoDate>)]
    pub first_session: Option<NaiveDate>,
    /// The last scored session.
    #[schema(value_type = Option<IsoDate>)]
    pub last_session: Option<NaiveDate>,
    /// Root mean square of the expected moves, percent of the previous close.
    pub implied_rms_move_pct: Option<f64>,
    /// Root mean square of the realized moves, percent of the previous close.
    pub realized_rms_move_pct: Option<f64>,
    /// implied / realized root-mean-square move (1 = priced fairly).
    pub implied_realized_ratio: Option<f64>,
    /// HAR realized volatility of the stored closes, percentage points.
    pub har_realized_vol_pct: Option<f64>,
    /// The ATM IV blended into `iv_forecast` (`metrics.atm_iv`), percentage points.
    pub atm_iv_pct: Option<f64>,
    /// Why `em_hit_rate` is null.
    pub em_hit_rate_reason: Option<String>,
    /// Why `edge_score` is null.
    pub edge_score_reason: Option<String>,
    /// Why `iv_forecast` is null.
    pub iv_forecast_reason: Option<String>,
    /// How `em_hit_rate` is computed.
    pub em_hit_rate_rule: String,
    /// How `edge_score` is computed.
    pub edge_score_rule: String,
    /// How `iv_forecast` is computed.
    pub iv_forecast_rule: String,
}

/// The scored read of `ticker` from its stored sessions through `through`; a history that
/// cannot be read leaves every figure null with the reason (the rest of the payload stands).
async fn scored_read(
    reader: &dyn crate::state::MarketDataReader,
    ticker: &Ticker,
    through: NaiveDate,
    atm_iv_pct: Option<f64>,
) -> (Option<f64>, Option<f64>, Option<f64>, ScoredRead) {
    use optics_compute::zero_dte::{
        HAR_SESSIONS, MIN_SCORED_SESSIONS, SCORED_WINDOW_SESSIONS, SessionClose, edge_score_rule,
        em_hit_rate_rule, har_realized_vol, iv_forecast_pct, iv_forecast_rule, move_score,
        scored_moves,
    };
    let sessions_wanted = (SCORED_WINDOW_SESSIONS + 1).max(HAR_SESSIONS[2] + 1);
    let mut read = ScoredRead {
        sessions_read: 0,
        sessions_scored: 0,
        window_sessions: SCORED_WINDOW_SESSIONS,
        min_sessions: MIN_SCORED_SESSIONS,
        hits: None,
        first_session: None,
        last_session: None,
        implied_rms_move_pct: None,
        realized_rms_move_pct: None,
        implied_realized_ratio: None,
        har_realized_vol_pct: None,
        atm_iv_pct,
        em_hit_rate_reason: None,
        edge_score_reason: None,
        iv_forecast_reason: None,
        em_hit_rate_rule: em_hit_rate_rule(),
        edge_score_rule: edge_score_rule(),
        iv_forecast_rule: iv_forecast_rule(),
    };
    let series = match reader.vol_history(ticker).await {
        Ok(series) => series,
        Err(e) => {
            tracing::warn!(%ticker, error = %e, "vol_daily history unreadable for zero-dte");
            let reason = format!("the stored session history of {ticker} could not be read");
            read.em_hit_rate_reason = Some(reason.clone());
            read.edge_score_reason = Some(reason.clone());
            read.iv_forecast_reason = Some(reason);
            return (None, None, None, read);
        }
    };
    // The last `sessions_wanted` stored sessions on or before `through`.
    let end = series.partition_point(|r| r.trade_date <= through);
    let rows = &series[end.saturating_sub(sessions_wanted)..end];
    read.sessions_read = rows.len();
    let history: Vec<SessionClose> = rows
        .iter()
        .map(|r| SessionClose {
            trade_date: r.trade_date,
            close: r.close,
            front_atm_iv_pct: r.front_atm_iv_pct,
        })
        .collect();
    let score = scored_moves(&history, SCORED_WINDOW_SESSIONS).and_then(|moves| {
        read.sessions_scored = moves.len();
        move_score(&moves, MIN_SCORED_SESSIONS)
    });
    let (em_hit_rate, edge_score) = match score {
        Ok(score) => {
            read.hits = Some(score.hits);
            read.first_session = Some(score.first);
            read.last_session = Some(score.last);
            read.implied_rms_move_pct = Some(score.implied_rms_move_pct);
            read.realized_rms_move_pct = Some(score.realized_rms_move_pct);
            read.implied_realized_ratio = score.implied_realized_ratio;
            (Some(score.hit_rate_pct), Some(score.edge_score))
        }
        Err(e) => {
            read.em_hit_rate_reason = Some(e.to_string());
            read.edge_score_reason = Some(e.to_string());
            (None, None)
        }
    };
    let forecast = har_realized_vol(&history).and_then(|har| {
        read.har_realized_vol_pct = Some(har.har_pct);
        let atm = atm_iv_pct.ok_or(optics_compute::zero_dte::ZeroDteError::Input {
            field: "atm_iv",
            reason: "no ATM IV on the expiration read",
        })?;
        iv_forecast_pct(atm, har.har_pct)
    });
    let iv_forecast = match forecast {
        Ok(value) => Some(value),
        Err(e) => {
            read.iv_forecast_reason = Some(e.to_string());
            None
        }
    };
    (em_hit_rate, edge_score, iv_forecast, read)
}

/// The `/zero-dte/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ZeroDtePayload {
    /// Underlying symbol.
    pub ticker: String,
    /// The expiration read: today's, or the next one when none expires today.
    #[schema(value_type = IsoDate)]
    pub expiration: NaiveDate,
    /// Calendar days to it (0 on the day).
    pub dte: i32,
    /// True when it expires today.
    pub is_same_day: bool,
    /// The chain's price, dollars.
    pub stock_price: f64,
    /// The priced move.
    pub metrics: ZeroDteMetrics,
    /// Dealer gamma.
    pub gamma_regime: ZeroDteGammaRegime,
    /// Levels for the session.
    pub key_levels: ZeroDteLevels,
    /// Gamma and Greeks per strike (windowed under compact detail).
    pub by_strike: Vec<ZeroDteStrike>,
    /// Quotes per strike (windowed under compact detail).
    pub chain_table: Vec<ZeroDteQuote>,
    /// Hourly decay of the ATM straddle.
    pub theta_burn: ThetaBurn,
    /// The skew read; null without 25-delta IVs on both sides.
    pub skew_signal: Option<SkewSignal>,
    /// Percent of the scored past sessions whose previous-close-to-close move stayed within
    /// the one-session expected move priced at the previous close (`scored_read` says how);
    /// null with `scored_read.em_hit_rate_reason` when the stored history is too short.
    pub em_hit_rate: Option<f64>,
    /// 0–100: 100 × implied variance / (implied + realized variance) over the same sessions;
    /// 50 = moves priced fairly, above 50 options priced more movement than followed. Null
    /// with `scored_read.edge_score_reason` when the history is too short.
    pub edge_score: Option<f64>,
    /// Blend of the ATM IV and the HAR realized volatility of the stored closes, percentage
    /// points; null with `scored_read.iv_forecast_reason` when either is missing.
    pub iv_forecast: Option<f64>,
    /// The inputs, rules and reasons behind `em_hit_rate`, `edge_score` and `iv_forecast`.
    pub scored_read: ScoredRead,
    /// Units of the IV fields.
    pub iv_units: &'static str,
    /// The instant the chain was priced.
    #[schema(value_type = Timestamp)]
    pub as_of: DateTime<Utc>,
    /// `LIVE` or `EOD`, market hours and a sentence.
    #[serde(flatten)]
    pub freshness: Freshness,
    /// What compact detail trimmed (by_strike and chain_table, the same strikes; 30 each side
    /// of spot by default).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Window)]
    pub window: Option<Window>,
    /// Parameters moved into their documented range (empty when none was).
    pub clamped: Vec<ClampNotice>,
}

/// `GET /zero-dte/{ticker}`.
pub async fn zero_dte(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    headers: HeaderMap,
    params: QueryParams,
) -> Result<Json<Envelope<ZeroDtePayload>>, ApiError> {
    use optics_compute::expected_move::ExpectedMoveRequest;

    let window_request = WindowRequest::from_request(&headers, &params)?;
    let reader = state.market_data()?;
    let (chain, exposures) = chain_and_exposures(reader.as_ref(), &ticker)?;
    let expiration = listed_or_nearest(&ticker, &chain, None)?;
    let summary = expiration_summary(&ticker, &exposures, expiration)?;
    let rows = chain.rows_of(expiration);
    let first = rows.first().ok_or_else(|| no_chain(&ticker))?;
    let (contracts, context) = contracts_from_chain(rows)?;
    let moved = optics_compute::expected_move::expected_move(
        &contracts,
        &context,
        &ExpectedMoveRequest {
            expiration: Some(expiration),
            include_same_day: true,
        },
    )?;
    let forward = first.forward;
    let years = first.years_to_expiry.max(0.0);
    let atm = atm_pick(rows, forward);
    let atm_iv = atm.map(|a| a.iv);
    let burn = theta_burn(atm, forward, first.rate, years);
    let hourly_decay = burn
        .hourly
        .iter()
        .map(|h| HourlyDecay {
            hour_ending: chain.as_of + chrono::Duration::minutes(h.elapsed_minutes),
            hours_to_expiry: h.hours_to_expiry,
            straddle_value: h.straddle_value,
            decay: h.decay,
            cumulative_decay_pct: h.cumulative_decay_pct,
        })
        .collect();
    let skew_signal = risk_reversal_points(rows).map(|rr| SkewSignal {
        risk_reversal_25d: rr,
        signal: skew_label(rr),
    });

    // Per strike: exposures joined with the chain's quotes (one row per strike; for an
    // expiration with AM and PM series the exposures are summed and the first series quoted).
    let exposure_rows: Vec<&ExposureRow> = exposures
        .rows
        .iter()
        .filter(|r| r.expiration == expiration)
        .collect();
    let profile = strike_profile(&exposure_rows);
    let mut by_strike = Vec::with_capacity(profile.len());
    let mut chain_table = Vec::with_capacity(profile.len());
    for point in &profile {
        let strike = point.point.strike;
        let row = rows.iter().find(|r| r.strike == strike);
        let (call_oi, put_oi) =
            exposure_rows
                .iter()
                .filter(|r| r.strike == strike)
                .fold((0u64, 0u64), |(c, p), r| {
                    (
                        c.saturating_add(r.call_open_interest),
                        p.saturating_add(r.put_open_interest),
                    )
                });
        by_strike.push(ZeroDteStrike {
            strike,
            call_gex: point.point.call_gex,
            put_gex: point.point.put_gex,
            net_gex: point.point.net_gex,
            call_oi,
            put_oi,
            call_gamma: row.and_then(|r| r.call.greeks.gamma),
            put_gamma: row.and_then(|r| r.put.greeks.gamma),
            call_delta: row.and_then(|r| r.call.greeks.delta),
            put_delta: row.and_then(|r| r.put.greeks.delta),
        });
        chain_table.push(ZeroDteQuote {
            strike,
            call_bid: row.and_then(|r| r.call.bid),
            call_ask: row.and_then(|r| r.call.ask),
            call_mid: row.and_then(|r| r.call.mid),
            call_iv: row.and_then(|r| r.call.iv).map(|iv| 100.0 * iv),
            call_volume: row.and_then(|r| r.call.volume),
            put_bid: row.and_then(|r| r.put.bid),
            put_ask: row.and_then(|r| r.put.ask),
            put_mid: row.and_then(|r| r.put.mid),
            put_iv: row.and_then(|r| r.put.iv).map(|iv| 100.0 * iv),
            put_volume: row.and_then(|r| r.put.volume),
            call_theta: row.and_then(|r| r.call.greeks.theta),
            put_theta: row.and_then(|r| r.put.greeks.theta),
        });
    }
    let spot = moved.spot;
    let per_side = window_request.strikes_per_side(window::ZERO_DTE_STRIKES_PER_SIDE);
    let (range, strike_window) = window::window_around_strike(
        &by_strike,
        |s| s.strike,
        spot,
        per_side,
        window_request.detail,
    );
    let by_strike = by_strike[range.clone()].to_vec();
    let chain_table = chain_table[range].to_vec();
    let total_net_gex = summary.net.gamma;
    let atm_iv_pct = atm_iv.map(|iv| 100.0 * iv);
    let (em_hit_rate, edge_score, iv_forecast, scored) =
        scored_read(reader.as_ref(), &ticker, chain.trade_date, atm_iv_pct).await;
    Ok(ok(ZeroDtePayload {
        ticker: ticker.to_string(),
        expiration,
        dte: first.dte,
        is_same_day: first.dte == 0,
        stock_price: spot,
        metrics: ZeroDteMetrics {
            expected_move: 100.0 * moved.expected_move_fraction,
            expected_move_dollars: moved.expected_move_dollars,
            atm_iv: atm_iv_pct,
            atm_strike: atm.map(|a| a.strike),
            forward,
            hours_to_expiry: years * HOURS_PER_YEAR,
        },
        gamma_regime: ZeroDteGammaRegime {
            regime: gamma_regime_label(total_net_gex),
            total_net_gex,
            flip_level: summary.flip_level,
            volatility_regime: summary.volatility_regime,
        },
        key_levels: ZeroDteLevels {
            call_wall: summary.call_wall,
            put_wall: summary.put_wall,
            max_pain: summary.max_pain_strike,
            em_upper: moved.upper_bound,
            em_lower: moved.lower_bound,
        },
        by_strike,
        chain_table,
        theta_burn: ThetaBurn {
            straddle_value_now: burn.value_now,
            hourly_decay,
            basis: "Black-76 on the expiration's forward at the ATM IV, forward and IV held; \
                    calendar hours to the expiration day's close",
        },
        skew_signal,
        em_hit_rate,
        edge_score,
        iv_forecast,
        scored_read: scored,
        iv_units: "percent",
        as_of: chain.as_of,
        freshness: state.freshness_of(chain.trade_date),
        window: (window_request.detail == Detail::Compact).then_some(strike_window),
        clamped: params.clamp_notices(),
    }))
}

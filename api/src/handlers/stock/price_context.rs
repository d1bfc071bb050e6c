//! `GET /price-context/{ticker}`: one flat payload of price, returns, the 52-week range,
//! momentum / vol / flow labels, IV, HV and VRP, earnings timing, option activity and the
//! sentences built from those numbers.

use axum::Json;
use axum::extract::State;
use chrono::NaiveDate;
use optics_compute::price_context::{
    FLOW_BULLISH_SHARE, Facts, IV_PCTILE_SESSIONS, MOMENTUM_MILD_PCT, MOMENTUM_STRONG_PCT,
    RANGE_SESSIONS, VOL_ELEVATED_PCTILE, VOL_HIGH_PCTILE, VOL_NORMAL_PCTILE, essentials_summary,
    flow_sentiment, iv_pctile_1y, momentum_regime, period_return, quick_take, range_52w,
    vol_regime,
};
use optics_compute::time::new_york_date;
use optics_schemas::OptionType;
use serde::Serialize;
use utoipa::ToSchema;

use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::CoveredTicker;
use crate::handlers::stock::correlation::iv30d_of;
use crate::openapi::IsoDate;
use crate::state::AppState;

/// The label rules, printed from the compute constants.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct PriceContextRules {
    /// Momentum thresholds on return_3m.
    pub momentum_regime: String,
    /// Vol thresholds on iv_pctile_1y.
    pub vol_regime: String,
    /// Flow thresholds on the call share of premium.
    pub flow_sentiment: String,
}

/// The `/price-context/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct PriceContextPayload {
    /// Underlying symbol.
    pub ticker: String,
    /// Last stored close on or before today (New York), dollars.
    pub price: Option<f64>,
    /// Session of that close.
    #[schema(value_type = Option<IsoDate>)]
    pub price_date: Option<NaiveDate>,
    /// Return over 5 sessions of stored closes, percent.
    pub return_1w: Option<f64>,
    /// Return over 21 sessions, percent.
    pub return_1m: Option<f64>,
    /// Return over 63 sessions, percent.
    pub return_3m: Option<f64>,
    /// Return over 126 sessions, percent.
    pub return_6m: Option<f64>,
    /// Return over 252 sessions, percent.
    pub return_1y: Option<f64>,
    /// Highest close of the last 252 sessions, dollars.
    pub high_52w: Option<f64>,
    /// Lowest close of the last 252 sessions, dollars.
    pub low_52w: Option<f64>,
    /// (price − low_52w) ÷ (high_52w − low_52w) × 100, 0–100.
    pub range_position: Option<f64>,
    /// (price ÷ high_52w − 1) × 100, percent (≤ 0).
    pub pct_from_high: Option<f64>,
    /// (price ÷ low_52w − 1) × 100, percent (≥ 0).
    pub pct_from_low: Option<f64>,
    /// Momentum label from return_3m (rules in `rules`).
    pub momentum_regime: Option<&'static str>,
    /// Its color.
    pub momentum_color: Option<&'static str>,
    /// Vol label from iv_pctile_1y (rules in `rules`).
    pub vol_regime: Option<&'static str>,
    /// Its color.
    pub vol_color: Option<&'static str>,
    /// Flow label from today's flow: the call share of option premium (rules in `rules`).
    pub flow_sentiment: Option<&'static str>,
    /// Its color.
    pub flow_sentiment_color: Option<&'static str>,
    /// Call premium ÷ (call + put premium) of today's flow, 0–1.
    pub flow_call_premium_share: Option<f64>,
    /// 30-day constant-maturity IV, points (live chain, else last stored vol_daily).
    pub iv_30d: Option<f64>,
    /// Where iv_30d came from.
    pub iv_source: String,
    /// Close-to-close 20-session HV of the last stored vol_daily row, points.
    pub hv_20d: Option<f64>,
    /// iv_30d − hv_20d, points.
    pub vrp: Option<f64>,
    /// Share of the last 252 stored iv30d values strictly below iv_30d, 0–100.
    pub iv_pctile_1y: Option<f64>,
    /// Next earnings report on or after today.
    #[schema(value_type = Option<IsoDate>)]
    pub next_earnings: Option<NaiveDate>,
    /// Calendar days from today to it.
    pub days_to_earnings: Option<i64>,
    /// Call volume of the live chain, contracts.
    pub call_volume: Option<u64>,
    /// Put volume of the live chain, contracts.
    pub put_volume: Option<u64>,
    /// Call open interest of the live chain, contracts.
    pub call_oi: Option<u64>,
    /// Put open interest of the live chain, contracts.
    pub put_oi: Option<u64>,
    /// put_volume ÷ call_volume; null for no call volume.
    pub put_call_volume_ratio: Option<f64>,
    /// put_oi ÷ call_oi; null for no call open interest.
    pub put_call_oi_ratio: Option<f64>,
    /// One sentence built from the numbers above.
    pub quick_take: String,
    /// A few sentences built from the numbers above.
    pub essentials_summary: String,
    /// Label rules.
    pub rules: PriceContextRules,
    /// How the figures are measured.
    pub basis: &'static str,
    /// Units.
    pub units: &'static str,
    /// Why figures are null, when some are.
    pub reason: Option<String>,
}

const BASIS: &str = "returns and the 52-week range from the stored daily closes up to today \
                     (New York), counted in sessions (5/21/63/126/252); iv_30d the live chain's \
                     30-day constant-maturity IV, else the last stored vol_daily iv30d; hv_20d \
                     the last stored vol_daily close-to-close 20-session HV; flow from today's \
                     flow snapshot; option activity from the live chain";

const UNITS: &str = "price in dollars; returns and pct_from_* in percent; IV, HV and vrp in \
                     points; volumes and open interest in contracts; percentiles 0 to 100";

/// The rules, printed from the constants.
pub fn rules() -> PriceContextRules {
    PriceContextRules {
        momentum_regime: format!(
            "return_3m >= {MOMENTUM_STRONG_PCT}%: STRONG_UPTREND (green); >= \
             {MOMENTUM_MILD_PCT}%: UPTREND (lightgreen); > -{MOMENTUM_MILD_PCT}%: SIDEWAYS \
             (gray); > -{MOMENTUM_STRONG_PCT}%: DOWNTREND (orange); else STRONG_DOWNTREND (red)"
        ),
        vol_regime: format!(
            "iv_pctile_1y >= {VOL_HIGH_PCTILE}: HIGH (red); >= {VOL_ELEVATED_PCTILE}: ELEVATED \
             (orange); >= {VOL_NORMAL_PCTILE}: NORMAL (gray); else LOW (green); percentile \
             over {IV_PCTILE_SESSIONS} stored sessions; range over {RANGE_SESSIONS}"
        ),
        flow_sentiment: format!(
            "call share of premium >= {FLOW_BULLISH_SHARE}: BULLISH (green); <= 1 - \
             {FLOW_BULLISH_SHARE}: BEARISH (red); else NEUTRAL (gray)"
        ),
    }
}

/// `GET /price-context/{ticker}`.
pub async fn price_context(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
) -> Result<Json<Envelope<PriceContextPayload>>, ApiError> {
    let market = state.market_data()?;
    let coverage = market.coverage();
    let today = new_york_date(state.now());
    let bars: Vec<_> = coverage
        .bars_of(ticker.as_str())
        .iter()
        .take_while(|b| b.date <= today)
        .collect();
    let closes: Vec<f64> = bars.iter().map(|b| b.close).collect();
    let mut reasons = Vec::new();
    if closes.is_empty() {
        reasons.push(format!("no daily bars are stored for {ticker}"));
    }
    let ret = |n| period_return(&closes, n);
    let (return_1w, return_1m, return_3m, return_6m, return_1y) =
        (ret(5), ret(21), ret(63), ret(126), ret(252));
    if !closes.is_empty() && return_1y.is_none() {
        reasons.push(format!(
            "{} closes stored; a return needs its sessions plus one",
            closes.len()
        ));
    }
    let range = range_52w(&closes);
    let momentum = return_3m.map(momentum_regime);

    let (iv_30d, iv_source) = iv30d_of(&state, &ticker).await;
    let history = market.vol_history(&ticker).await.ok();
    let rows: Vec<_> = history
        .as_deref()
        .map(|h| h.iter().filter(|r| r.trade_date <= today).collect())
        .unwrap_or_default();
    let hv_20d = rows.iter().rev().find_map(|r| r.hv_20d_pct);
    let ivs: Vec<f64> = rows.iter().filter_map(|r| r.iv30d_pct).collect();
    let iv_pctile = iv_30d.and_then(|iv| iv_pctile_1y(&ivs, iv));
    let vol = iv_pctile.map(vol_regime);
    if hv_20d.is_none() || iv_pctile.is_none() {
        reasons.push(format!(
            "{} stored vol_daily rows with iv30d; hv_20d or iv_pctile_1y needs them",
            ivs.len()
        ));
    }

    let flow = market.flow(&ticker).and_then(|f| {
        let (mut call, mut put) = (0.0, 0.0);
        for row in &f.rows {
            let premium = row.premium_usd.unwrap_or(0.0);
            match row.option_type {
                OptionType::Call => call += premium,
                OptionType::Put => put += premium,
            }
        }
        flow_sentiment(call, put)
    });
    if flow.is_none() {
        reasons.push(format!("no option flow with premium today for {ticker}"));
    }

    let chain = market.chain(&ticker);
    let sum = |f: fn(&optics_schemas::ChainRow) -> Option<u64>| {
        chain
            .as_ref()
            .map(|c| c.rows.iter().filter_map(f).sum::<u64>())
    };
    let call_volume = sum(|r| r.call.volume);
    let put_volume = sum(|r| r.put.volume);
    let call_oi = sum(|r| r.call.open_interest);
    let put_oi = sum(|r| r.put.open_interest);
    let ratio = |p: Option<u64>, c: Option<u64>| match (p, c) {
        (Some(p), Some(c)) if c > 0 => Some(p as f64 / c as f64),
        _ => None,
    };
    if chain.is_none() {
        reasons.push(format!("no live chain for {ticker}"));
    }

    let next_earnings = coverage.next_earnings(ticker.as_str(), today);
    let days_to_earnings = next_earnings.map(|d| (d - today).num_days());
    let price = closes.last().copied();
    let facts = Facts {
        ticker: ticker.as_str(),
        price: price.unwrap_or(f64::NAN),
        return_1m,
        return_1y,
        range_position: range.map(|r| r.position),
        momentum: momentum.map(|m| m.0),
        vol: vol.map(|v| v.0),
        iv_30d,
        hv_20d,
        days_to_earnings,
        flow: flow.map(|f| f.0.0),
    };
    let (quick, essentials) = if price.is_some() {
        (quick_take(&facts), essentials_summary(&facts))
    } else {
        let none = format!("No stored closes for {ticker}.");
        (none.clone(), none)
    };

    Ok(ok(PriceContextPayload {
        ticker: ticker.to_string(),
        price,
        price_date: bars.last().map(|b| b.date),
        return_1w,
        return_1m,
        return_3m,
        return_6m,
        return_1y,
        high_52w: range.map(|r| r.high),
        low_52w: range.map(|r| r.low),
        range_position: range.map(|r| r.position),
        pct_from_high: range.map(|r| r.pct_from_high),
        pct_from_low: range.map(|r| r.pct_from_low),
        momentum_regime: momentum.map(|m| m.0),
        momentum_color: momentum.map(|m| m.1),
        vol_regime: vol.map(|v| v.0),
        vol_color: vol.map(|v| v.1),
        flow_sentiment: flow.map(|f| f.0.0),
        flow_sentiment_color: flow.map(|f| f.0.1),
        flow_call_premium_share: flow.map(|f| f.1),
        iv_30d,
        iv_source,
        hv_20d,
        vrp: iv_30d.zip(hv_20d).map(|(iv, hv)| iv - hv),
        iv_pctile_1y: iv_pctile,
        next_earnings,
        days_to_earnings,
        call_volume,
        put_volume,
        call_oi,
        put_oi,
        put_call_volume_ratio: ratio(put_volume, call_volume),
        put_call_oi_ratio: ratio(put_oi, call_oi),
        quick_take: quick,
        essentials_summary: essentials,
        rules: rules(),
        basis: BASIS,
        units: UNITS,
        reason: (!reasons.is_empty()).then(|| reasons.join("; ")),
    }))
}

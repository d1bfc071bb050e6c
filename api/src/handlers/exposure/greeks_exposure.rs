//! `GET /greeks-exposure/{ticker}`: dealer exposure of each Greek with its levels.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, NaiveDate, Utc};
use optics_compute::exposure::{
    ExposureKind, ExposureVector, GammaLevels, GreekLevels, KeyLevels, PriceLevel, StrikeExposure,
    StrikeLevel, cumulative_net,
};
use optics_schemas::{ExposureRow, ExposureSummaryRow};
use serde::Serialize;
use utoipa::ToSchema;

use super::{GexSelection, USD_PER_BILLION, no_exposures};
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::CoveredTicker;
use crate::freshness::Freshness;
use crate::openapi::{IsoDate, Timestamp};
use crate::params::QueryParams;
use crate::state::AppState;

/// One strike of a Greek's `profile[]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct GreekProfilePoint {
    /// Strike, dollars.
    pub strike: f64,
    /// Call exposure (the Greek's unit).
    pub call: f64,
    /// Put exposure, dealer-signed.
    pub put: f64,
    /// call + put.
    pub net: f64,
}

/// The gamma-only fields of `exposures.gamma`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct GammaExtras {
    /// Re-priced flip level, dollars; null when degenerate.
    pub flip_level: Option<f64>,
    /// total in billions.
    pub gex_billions: f64,
    /// Call GEX weighted by |delta|, dollars per 1 % move.
    pub delta_adj_call_total: f64,
    /// Put GEX weighted by |delta|.
    pub delta_adj_put_total: f64,
    /// call + put.
    pub delta_adj_total: f64,
    /// Re-priced flip level of delta-adjusted GEX, dollars.
    pub delta_adj_flip_level: Option<f64>,
    /// Delta-adjusted GEX per strike.
    pub delta_adj_profile: Vec<GreekProfilePoint>,
}

/// `exposures.<greek>`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct GreekExposure {
    /// Σ call exposure.
    pub call_total: f64,
    /// Σ put exposure (dealer-signed).
    pub put_total: f64,
    /// call + put.
    pub total: f64,
    /// The unit of every figure of this Greek.
    pub unit: &'static str,
    /// Per strike, ascending.
    pub profile: Vec<GreekProfilePoint>,
    /// Gamma only.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = gamma_extras_schema)]
    pub gamma: Option<GammaExtras>,
}

/// The flattened gamma fields in the document: [`GammaExtras`] on gamma, nothing on the other
/// Greeks. (The derived `oneOf [null, GammaExtras]` would be read as "the whole object is null
/// or a GammaExtras", which no delta, vanna or charm object is.)
fn gamma_extras_schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    use utoipa::openapi::schema::{AnyOfBuilder, ObjectBuilder, Type};
    AnyOfBuilder::new()
        .item(utoipa::openapi::Ref::from_schema_name("GammaExtras"))
        .item(ObjectBuilder::new().schema_type(Type::Object))
        .description(Some(
            "On gamma, the fields of GammaExtras; the other Greeks carry none of them",
        ))
        .into()
}

/// A strike and the exposure there, with its distance from spot.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct ExposureLevel {
    /// Strike, dollars.
    pub strike: f64,
    /// Dealer-signed exposure there (the Greek's unit).
    pub exposure: f64,
    /// (strike − spot)/spot, percent.
    pub distance_pct: f64,
}

impl From<StrikeLevel> for ExposureLevel {
    fn from(level: StrikeLevel) -> Self {
        Self {
            strike: level.strike,
            exposure: level.exposure,
            distance_pct: level.distance_pct,
        }
    }
}

/// A gamma level: strike, GEX there, distance from spot.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct GexLevel {
    /// Strike, dollars.
    pub strike: f64,
    /// GEX there, dollars per 1 % move.
    pub gex: f64,
    /// (strike − spot)/spot, percent.
    pub distance_pct: f64,
}

impl From<StrikeLevel> for GexLevel {
    fn from(level: StrikeLevel) -> Self {
        Self {
            strike: level.strike,
            gex: level.exposure,
            distance_pct: level.distance_pct,
        }
    }
}

/// A price level with its distance from spot.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct PricePoint {
    /// Price, dollars.
    pub strike: f64,
    /// (price − spot)/spot, percent.
    pub distance_pct: f64,
}

impl From<PriceLevel> for PricePoint {
    fn from(level: PriceLevel) -> Self {
        Self {
            strike: level.price,
            distance_pct: level.distance_pct,
        }
    }
}

/// `greek_levels.<greek>`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct GreekLevelsPayload {
    /// Largest |net exposure|.
    pub key_strike: Option<ExposureLevel>,
    /// Largest |call exposure|.
    pub max_call: Option<ExposureLevel>,
    /// Largest |put exposure|.
    pub max_put: Option<ExposureLevel>,
    /// |call total| / |put total|.
    pub ratio: Option<f64>,
    /// Where cumulative net exposure by strike changes sign (nearest spot).
    pub flip_level: Option<PricePoint>,
}

/// `key_levels` of `/greeks-exposure`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct NamedLevels {
    /// Largest call GEX.
    pub call_wall: Option<GexLevel>,
    /// Largest |put GEX|.
    pub put_wall: Option<GexLevel>,
    /// Largest |net GEX|.
    pub key_gamma_strike: Option<GexLevel>,
    /// Largest |net charm exposure|.
    pub charm_pressure: Option<ExposureLevel>,
    /// At or above spot: largest |net vanna exposure|.
    pub vanna_resistance: Option<ExposureLevel>,
    /// Below spot: largest |net vanna exposure|.
    pub vanna_support: Option<ExposureLevel>,
    /// The listed strike nearest the re-priced flip level.
    pub vol_trigger: Option<PricePoint>,
}

/// The `/greeks-exposure/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct GreeksExposurePayload {
    /// Underlying symbol.
    pub ticker: String,
    /// The spot the exposures were scaled with, dollars.
    pub stock_price: f64,
    /// True when summed across expirations; false when the top-level figures are one
    /// expiration's (`expiration`, or with `aggregate=false` the nearest one).
    pub aggregate: bool,
    /// The expirations in the top-level figures.
    #[schema(value_type = Vec<IsoDate>)]
    pub expirations: Vec<NaiveDate>,
    /// How many.
    pub expirations_included: usize,
    /// The strikes of the profiles, ascending.
    pub strikes: Vec<f64>,
    /// Totals and profiles per Greek.
    pub exposures: BTreeMap<&'static str, GreekExposure>,
    /// Key strikes per Greek (gamma's are in `key_levels`).
    pub greek_levels: BTreeMap<&'static str, GreekLevelsPayload>,
    /// Named levels with distance from spot.
    pub key_levels: NamedLevels,
    /// With `aggregate=false`: one block per expiration selected (every listed one, or the
    /// one `expiration` names), each with every Greek's totals and profile. Absent otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub by_expiration: Vec<GreeksExpiration>,
    /// Unit string per Greek.
    pub units: BTreeMap<&'static str, &'static str>,
    /// The instant the exposures were priced.
    #[schema(value_type = Timestamp)]
    pub as_of: DateTime<Utc>,
    /// `LIVE` or `EOD`, market hours and a sentence.
    #[serde(flatten)]
    pub freshness: Freshness,
}

/// One expiration of the `/greeks-exposure` `by_expiration[]` breakdown.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct GreeksExpiration {
    /// The expiration.
    #[schema(value_type = IsoDate)]
    pub expiration: NaiveDate,
    /// Calendar days to it.
    pub dte: Option<i32>,
    /// The strikes of its profiles, ascending.
    pub strikes: Vec<f64>,
    /// Totals and profiles per Greek, as the top-level `exposures` (gamma with its flip
    /// levels and delta-adjusted figures).
    pub exposures: BTreeMap<&'static str, GreekExposure>,
}

/// The strike profile of `rows` (any expirations) in the compute crate's type, ascending.
fn strike_exposures(rows: &[&ExposureRow]) -> Vec<StrikeExposure> {
    let mut sorted: Vec<&ExposureRow> = rows.to_vec();
    sorted.sort_by(|a, b| a.strike.total_cmp(&b.strike));
    let mut out: Vec<StrikeExposure> = Vec::new();
    for row in sorted {
        let (call, put) = (
            ExposureVector(row.call.to_array()),
            ExposureVector(row.put.to_array()),
        );
        match out.last_mut() {
            Some(last) if last.strike == row.strike => {
                last.call += call;
                last.put += put;
                last.call_open_interest = last
                    .call_open_interest
                    .saturating_add(row.call_open_interest);
                last.put_open_interest =
                    last.put_open_interest.saturating_add(row.put_open_interest);
            }
            _ => out.push(StrikeExposure {
                strike: row.strike,
                call_open_interest: row.call_open_interest,
                put_open_interest: row.put_open_interest,
                call,
                put,
            }),
        }
    }
    out
}

/// Every Greek's totals and strike profile (`exposures.<greek>`) over `strikes`, with the totals
/// and flip levels of `summary`.
fn greek_exposures(
    strikes: &[StrikeExposure],
    summary: &ExposureSummaryRow,
) -> BTreeMap<&'static str, GreekExposure> {
    let call_totals = ExposureVector(summary.call.to_array());
    let put_totals = ExposureVector(summary.put.to_array());
    let profile_of = |kind: ExposureKind| -> Vec<GreekProfilePoint> {
        strikes
            .iter()
            .map(|s| GreekProfilePoint {
                strike: s.strike,
                call: s.call[kind],
                put: s.put[kind],
                net: s.call[kind] + s.put[kind],
            })
            .collect()
    };
    let mut by_greek = BTreeMap::new();
    for kind in ExposureKind::ALL {
        if kind == ExposureKind::DeltaAdjustedGamma {
            continue; // reported inside `gamma`
        }
        let total = call_totals[kind] + put_totals[kind];
        let gamma = (kind == ExposureKind::Gamma).then(|| {
            let adjusted = ExposureKind::DeltaAdjustedGamma;
            GammaExtras {
                flip_level: summary.flip_level,
                gex_billions: total / USD_PER_BILLION,
                delta_adj_call_total: call_totals[adjusted],
                delta_adj_put_total: put_totals[adjusted],
                delta_adj_total: call_totals[adjusted] + put_totals[adjusted],
                delta_adj_flip_level: summary.delta_adjusted_flip_level,
                delta_adj_profile: profile_of(adjusted),
            }
        });
        by_greek.insert(
            kind.name(),
            GreekExposure {
                call_total: call_totals[kind],
                put_total: put_totals[kind],
                total,
                unit: kind.unit(),
                profile: profile_of(kind),
                gamma,
            },
        );
    }
    by_greek
}

/// `GET /greeks-exposure/{ticker}`: every Greek's dealer exposure, aggregate or one expiration;
/// with `aggregate=false` also broken out per expiration.
pub async fn greeks_exposure(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    params: QueryParams,
) -> Result<Json<Envelope<GreeksExposurePayload>>, ApiError> {
    let expiration = params.date("expiration")?;
    let aggregate = params.bool("aggregate")?;
    let exposures = state
        .market_data()?
        .exposures(&ticker)
        .ok_or_else(|| no_exposures(&ticker))?;
    let selection = GexSelection::from_params(expiration, aggregate, &exposures)?;
    let (summary, broken_out) = selection.resolve(&ticker, &exposures)?;
    let included: Vec<NaiveDate> = match selection.top_expiration() {
        Some(expiration) => vec![expiration],
        None => broken_out.iter().filter_map(|s| s.expiration).collect(),
    };
    let rows: Vec<&ExposureRow> = exposures
        .rows
        .iter()
        .filter(|r| selection.includes(r))
        .collect();
    let spot = summary.spot;
    let strikes = strike_exposures(&rows);
    let cumulative = cumulative_net(&strikes);
    let call_totals = ExposureVector(summary.call.to_array());
    let put_totals = ExposureVector(summary.put.to_array());
    let mut greek_levels = BTreeMap::new();
    let mut units = BTreeMap::new();
    for kind in ExposureKind::ALL {
        if kind == ExposureKind::DeltaAdjustedGamma {
            continue; // reported inside `gamma`
        }
        units.insert(kind.name(), kind.unit());
        if kind != ExposureKind::Gamma {
            let levels = GreekLevels::from_profile(
                kind,
                &strikes,
                &cumulative,
                call_totals[kind],
                put_totals[kind],
                spot,
            );
            greek_levels.insert(
                kind.name(),
                GreekLevelsPayload {
                    key_strike: levels.key_strike.map(Into::into),
                    max_call: levels.max_call.map(Into::into),
                    max_put: levels.max_put.map(Into::into),
                    ratio: levels.ratio,
                    flip_level: levels.flip_level.map(Into::into),
                },
            );
        }
    }
    // The breakdown is asked for with aggregate=false only: it repeats every profile per
    // expiration, which the aggregate read does not need.
    let by_expiration = if aggregate {
        Vec::new()
    } else {
        broken_out
            .iter()
            .map(|s| {
                let rows: Vec<&ExposureRow> = exposures
                    .rows
                    .iter()
                    .filter(|r| Some(r.expiration) == s.expiration)
                    .collect();
                let strikes = strike_exposures(&rows);
                GreeksExpiration {
                    expiration: s.expiration.unwrap_or_default(),
                    dte: s.dte,
                    strikes: strikes.iter().map(|k| k.strike).collect(),
                    exposures: greek_exposures(&strikes, s),
                }
            })
            .collect()
    };
    let gamma_levels = GammaLevels::from_profile(&strikes, spot);
    let key = KeyLevels::from_profile(&strikes, &gamma_levels, summary.flip_level, spot);
    Ok(ok(GreeksExposurePayload {
        ticker: ticker.to_string(),
        stock_price: spot,
        aggregate: selection == GexSelection::Aggregate,
        expirations_included: included.len(),
        expirations: included,
        strikes: strikes.iter().map(|s| s.strike).collect(),
        exposures: greek_exposures(&strikes, summary),
        greek_levels,
        key_levels: NamedLevels {
            call_wall: key.call_wall.map(Into::into),
            put_wall: key.put_wall.map(Into::into),
            key_gamma_strike: key.key_gamma_strike.map(Into::into),
            charm_pressure: key.charm_pressure.map(Into::into),
            vanna_resistance: key.vanna_resistance.map(Into::into),
            vanna_support: key.vanna_support.map(Into::into),
            vol_trigger: key.vol_trigger.map(Into::into),
        },
        by_expiration,
        units,
        as_of: summary.as_of,
        freshness: state.freshness_of(summary.trade_date),
    }))
}

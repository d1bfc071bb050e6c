//! Between the chain / exposure snapshot datasets of `optics-schemas` and this module's plain
//! types: chain rows in ([`contracts_from_chain`]; a chain just built carries the same inputs,
//! [`crate::chain::ChainBatch::exposure_inputs`]), exposure and summary rows out
//! ([`exposure_rows`], [`exposure_summary_rows`]; the worker writes the strike rows as columns,
//! [`exposure_batch`]). Pure mappings.

use std::collections::BTreeMap;

use arrow_array::RecordBatch;
use chrono::NaiveDate;
use optics_schemas::{
    ChainRow, ChainSide, DirectionalBiasCode, ExposureBatchBuilder, ExposureMeasures, ExposureRow,
    ExposureSummaryRow, FlipDegeneracyCode, PositioningCode, SchemaError, VolatilityRegimeCode,
    calendar_dte,
};

use super::flip::FlipDegeneracy;
use super::levels::{DirectionalBias, Positioning, VolatilityRegime};
use super::{
    ContractAnalytics, ExposureError, ExposureReport, ExposureSummary, ExposureVector,
    StrikeExposure, UnderlyingContext,
};
use crate::chain::SolvedSide;
use crate::pricing::{OptionInputs, OptionType, greeks};

/// The exposure inputs of one underlying's chain snapshot (every row the same underlying, as
/// the chain dataset is partitioned).
///
/// - Context: spot, rate, model and `as_of` of the first row; every expiration's forward
///   (when an expiration lists an AM and a PM series, the later row's forward is kept: they
///   differ by the carry of a few hours); `dividend_yield` is the first row's carry yield,
///   used only for an expiration without a forward (none here).
/// - Contracts: every listed side. Missing open interest or volume reads as 0. The Greeks are
///   recomputed from the side's IV with [`crate::pricing::greeks`] on the expiration's forward
///   — the closed forms the chain used, so the values agree to rounding — because the chain
///   does not store the price and dual delta of a full [`crate::pricing::Greeks`]; this costs
///   about 0.1 µs per contract. A side without an IV has no Greeks.
///
/// A chain build yields the same contracts and context directly
/// ([`crate::chain::ChainBatch::exposure_inputs`], tested equal), reusing its kernel's Greeks.
pub fn contracts_from_chain(
    rows: &[ChainRow],
) -> Result<(Vec<ContractAnalytics>, UnderlyingContext), ExposureError> {
    let first = rows.first().ok_or_else(|| ExposureError::Context {
        field: "chain",
        reason: "has no rows".to_owned(),
    })?;
    if let Some(other) = rows.iter().find(|r| r.underlying != first.underlying) {
        return Err(ExposureError::Context {
            field: "underlying",
            reason: format!(
                "the chain mixes {} and {}; pass one underlying",
                first.underlying, other.underlying
            ),
        });
    }
    let context = UnderlyingContext {
        underlying: first.underlying.clone(),
        spot: first.spot,
        rate: first.rate,
        dividend_yield: first.carry_yield,
        model: first.model.into(),
        forwards: forwards_by_date(rows.iter().map(|r| (r.expiration, r.forward))),
        as_of: first.as_of,
    };
    context.validate()?;
    let mut contracts = Vec::with_capacity(2 * rows.len());
    for row in rows {
        for (side, option_type) in [(&row.call, OptionType::Call), (&row.put, OptionType::Put)] {
            if side.is_listed() {
                contracts.push(contract_of(row, side, option_type, &context));
            }
        }
    }
    Ok((contracts, context))
}

/// Each expiration date's forward from `(expiration, forward)` in row order: when a date lists
/// an AM and a PM series, the later one's (they differ by the carry of a few hours).
pub(crate) fn forwards_by_date(
    forwards: impl IntoIterator<Item = (NaiveDate, f64)>,
) -> BTreeMap<NaiveDate, f64> {
    forwards.into_iter().collect()
}

fn contract_of(
    row: &ChainRow,
    side: &ChainSide,
    option_type: OptionType,
    context: &UnderlyingContext,
) -> ContractAnalytics {
    with_greeks(
        ContractAnalytics {
            expiration: row.expiration,
            strike: row.strike,
            option_type,
            open_interest: side.open_interest.unwrap_or(0),
            volume: side.volume.unwrap_or(0),
            bid: side.bid,
            ask: side.ask,
            mid: side.mid,
            iv: side.iv,
            greeks: None,
            years_to_expiry: row.years_to_expiry,
            dte: i64::from(row.dte),
        },
        context,
        None,
    )
}

/// `contract` with the Greeks of its IV (none without one): [`crate::pricing::greeks`] on the
/// expiration's forward in `context`, or `solved`'s Greeks when they were solved on exactly
/// those inputs (bit for bit: then they are the same value, without the work; a chain build
/// passes its kernel's, see [`crate::chain::ChainBatch::exposure_inputs`]).
pub(crate) fn with_greeks(
    mut contract: ContractAnalytics,
    context: &UnderlyingContext,
    solved: Option<SolvedSide>,
) -> ContractAnalytics {
    contract.greeks = contract.iv.and_then(|iv| {
        let inputs = context_inputs(&contract, context)?;
        match solved {
            Some(solved) if same_bits(&solved.inputs, &inputs) && iv.is_finite() && iv > 0.0 => {
                Some(solved.greeks)
            }
            _ => greeks(&inputs, iv).ok(),
        }
    });
    contract
}

/// The inputs `context` prices `contract` on: its expiration's forward, today's spot.
fn context_inputs(
    contract: &ContractAnalytics,
    context: &UnderlyingContext,
) -> Option<OptionInputs> {
    let forward = context.forward(contract.expiration, contract.years_to_expiry);
    contract.pricing_inputs(context, forward, context.spot)
}

/// Whether `context` prices `contract` on exactly the inputs the kernel solved it on (bit for
/// bit), so that [`with_greeks`] would take `solved`'s Greeks for it at a valid IV.
pub(crate) fn priced_as_solved(
    contract: &ContractAnalytics,
    context: &UnderlyingContext,
    solved: &SolvedSide,
) -> bool {
    context_inputs(contract, context).is_some_and(|inputs| same_bits(&solved.inputs, &inputs))
}

/// The same inputs bit for bit (a sign of zero or a last-bit difference counts as different).
fn same_bits(a: &OptionInputs, b: &OptionInputs) -> bool {
    a.option_type == b.option_type
        && a.model == b.model
        && a.underlying.to_bits() == b.underlying.to_bits()
        && a.strike.to_bits() == b.strike.to_bits()
        && a.years.to_bits() == b.years.to_bits()
        && a.rate.to_bits() == b.rate.to_bits()
        && a.dividend_yield.to_bits() == b.dividend_yield.to_bits()
}

fn measures(v: &ExposureVector) -> ExposureMeasures {
    // ExposureKind::ALL order is the schema's measure order (checked in the tests).
    ExposureMeasures::from_array(v.0)
}

/// The strike rows of a report in the `exposures` dataset's order (by expiration, then
/// strike), with their count.
fn strike_rows(
    report: &ExposureReport,
) -> (usize, impl Iterator<Item = (NaiveDate, &StrikeExposure)>) {
    let count = report.expirations.iter().map(|s| s.strikes.len()).sum();
    let rows = report
        .expirations
        .iter()
        .filter_map(|summary| summary.expiration.map(|e| (e, summary)))
        .flat_map(|(expiration, summary)| summary.strikes.iter().map(move |s| (expiration, s)));
    (count, rows)
}

/// The `exposures` rows of a report: one per expiration × strike, sorted by expiration then
/// strike.
pub fn exposure_rows(report: &ExposureReport, trade_date: NaiveDate) -> Vec<ExposureRow> {
    let (count, strikes) = strike_rows(report);
    let mut rows = Vec::with_capacity(count);
    rows.extend(strikes.map(|(expiration, s)| ExposureRow {
        underlying: report.underlying.clone(),
        trade_date,
        as_of: report.as_of,
        expiration,
        dte: calendar_dte(trade_date, expiration),
        strike: s.strike,
        spot: report.spot,
        call_open_interest: s.call_open_interest,
        put_open_interest: s.put_open_interest,
        call: measures(&s.call),
        put: measures(&s.put),
        net: measures(&s.net()),
    }));
    rows
}

/// The `exposures` batch of a report, the rows of [`exposure_rows`] written column by column
/// (the worker's path: no row structs).
pub fn exposure_batch(
    report: &ExposureReport,
    trade_date: NaiveDate,
) -> Result<RecordBatch, SchemaError> {
    let count = report.expirations.iter().map(|s| s.strikes.len()).sum();
    let mut batch = ExposureBatchBuilder::new(
        &report.underlying,
        trade_date,
        report.as_of,
        report.spot,
        count,
    );
    // The rows of `strike_rows`, an expiration at a time.
    for summary in &report.expirations {
        let Some(expiration) = summary.expiration else {
            continue;
        };
        let strikes = &summary.strikes;
        batch.push_expiration(
            expiration,
            strikes.len(),
            |i| strikes[i].strike,
            |i| (strikes[i].call_open_interest, strikes[i].put_open_interest),
            |i| &strikes[i].call.0,
            |i| &strikes[i].put.0,
        );
    }
    batch.finish()
}

/// The `exposure_summary` rows of a report: the aggregate (expiration null) first, then one per
/// expiration.
pub fn exposure_summary_rows(
    report: &ExposureReport,
    trade_date: NaiveDate,
) -> Vec<ExposureSummaryRow> {
    std::iter::once(&report.aggregate)
        .chain(&report.expirations)
        .map(|s| summary_row(report, s, trade_date))
        .collect()
}

fn summary_row(
    report: &ExposureReport,
    s: &ExposureSummary,
    trade_date: NaiveDate,
) -> ExposureSummaryRow {
    let g = &s.gamma_levels;
    let k = &s.key_levels;
    ExposureSummaryRow {
        underlying: report.underlying.clone(),
        trade_date,
        as_of: report.as_of,
        expiration: s.expiration,
        dte: s.expiration.map(|e| calendar_dte(trade_date, e)),
        spot: report.spot,
        contracts: s.contracts as u64,
        call_open_interest: s.call_open_interest,
        put_open_interest: s.put_open_interest,
        call: measures(&s.call_totals),
        put: measures(&s.put_totals),
        net: measures(&s.net_totals()),
        flip_level: s.flip.level,
        flip_degeneracy: s.flip.degeneracy.map(|d| match d {
            FlipDegeneracy::NoExposure => FlipDegeneracyCode::NoExposure,
            FlipDegeneracy::AlwaysPositive => FlipDegeneracyCode::AlwaysPositive,
            FlipDegeneracy::AlwaysNegative => FlipDegeneracyCode::AlwaysNegative,
        }),
        delta_adjusted_flip_level: s.delta_adjusted_flip.level,
        gamma_flip: s.gamma_flip,
        call_wall: g.call_wall.map(|l| l.strike),
        call_wall_gex: g.call_wall.map(|l| l.exposure),
        put_wall: g.put_wall.map(|l| l.strike),
        put_wall_gex: g.put_wall.map(|l| l.exposure),
        key_gamma_strike: g.key_gamma_strike.map(|l| l.strike),
        key_gamma_gex: g.key_gamma_strike.map(|l| l.exposure),
        max_gamma_strike: g.max_gamma_strike.map(|l| l.strike),
        min_gamma_strike: g.min_gamma_strike.map(|l| l.strike),
        vol_trigger: k.vol_trigger.map(|l| l.price),
        charm_pressure_strike: k.charm_pressure.map(|l| l.strike),
        vanna_resistance_strike: k.vanna_resistance.map(|l| l.strike),
        vanna_support_strike: k.vanna_support.map(|l| l.strike),
        max_pain_strike: s.max_pain.as_ref().map(|m| m.strike),
        max_pain_usd: s.max_pain.as_ref().map(|m| m.total_pain_usd),
        gex_ratio: s.gex_ratio,
        volatility_regime: match s.implications.volatility_regime {
            VolatilityRegime::Suppressed => VolatilityRegimeCode::Suppressed,
            VolatilityRegime::Amplified => VolatilityRegimeCode::Amplified,
            VolatilityRegime::Neutral => VolatilityRegimeCode::Neutral,
        },
        positioning: match s.implications.positioning {
            Positioning::CallDominated => PositioningCode::CallDominated,
            Positioning::PutDominated => PositioningCode::PutDominated,
            Positioning::Balanced => PositioningCode::Balanced,
        },
        directional_bias: match s.implications.directional_bias {
            DirectionalBias::Bullish => DirectionalBiasCode::Bullish,
            DirectionalBias::Bearish => DirectionalBiasCode::Bearish,
            DirectionalBias::Neutral => DirectionalBiasCode::Neutral,
        },
    }
}

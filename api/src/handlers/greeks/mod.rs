//! Per-contract Greeks read straight from the chain (not dealer exposure), one file per endpoint:
//! `/third-order-greeks/{ticker}` — the higher-order sensitivities of one expiration by strike
//! and by contract — and `/greeks-heatmap/{ticker}` — expiration × strike matrices of the
//! first-order Greeks and IV for one side, with sums along each axis and the open-interest
//! levels.
//!
//! Every number is the chain's own Greek at the contract's implied volatility (the worker's
//! closed forms), so the same strike's gamma here, in `/chain` and in the `/gex` contract list
//! is one value.

pub mod greeks_heatmap;
pub mod third_order_greeks;

use std::collections::BTreeMap;

use optics_compute::pricing::OptionType;
use optics_schemas::{ChainRow, SettlementStyle, StrikeKey};

use self::greeks_heatmap::HeatmapPayload;
use self::third_order_greeks::ThirdOrderPayload;
use crate::handlers::exposure::type_code;
use crate::market::ChainView;
use crate::openapi::DataSchema;
use crate::registry::Endpoint;

/// The payload type of each endpoint of the family, for the OpenAPI document and the reference.
pub fn data_schemas() -> Vec<DataSchema> {
    vec![
        DataSchema::of::<ThirdOrderPayload>(Endpoint::ThirdOrderGreeks),
        DataSchema::of::<HeatmapPayload>(Endpoint::GreeksHeatmap),
    ]
}

/// The rows of one expiration with one row per strike: where an expiration lists both an AM-
/// and a PM-settled series (SPX monthlies beside the SPXW weeklies), the PM series, which is
/// the one that trades every day; otherwise whichever is listed.
fn one_row_per_strike(rows: &[ChainRow]) -> Vec<&ChainRow> {
    let mut by_strike: BTreeMap<StrikeKey, &ChainRow> = BTreeMap::new();
    for row in rows {
        by_strike
            .entry(StrikeKey::from_dollars(row.strike))
            .and_modify(|kept| {
                if row.settlement == SettlementStyle::Pm && kept.settlement != SettlementStyle::Pm {
                    *kept = row;
                }
            })
            .or_insert(row);
    }
    by_strike.into_values().collect()
}

/// What the Greeks are taken with respect to: the spot for stocks and ETFs, the forward for
/// cash indices priced with Black-76.
fn underlying_basis(chain: &ChainView) -> &'static str {
    if chain.priced_on_forward() {
        "forward"
    } else {
        "spot"
    }
}

/// `C` or `P`.
fn side_code(is_call: bool) -> &'static str {
    type_code(if is_call {
        OptionType::Call
    } else {
        OptionType::Put
    })
}

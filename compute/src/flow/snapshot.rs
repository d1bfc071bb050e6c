//! Flow rows out as the `flow` and `flow_aggregates` snapshot datasets' rows
//! (`optics-schemas`), and the stored aggregates back in. Pure mappings; the worker and the API
//! call them.

use arrow_array::RecordBatch;
use chrono::{DateTime, NaiveDate, Utc};
use optics_schemas::{
    FlowAggregateKey, FlowAggregateRow, FlowSnapshotRow, FlowTotals, FlowValues, MoneynessCode,
    SchemaError,
};

use super::{
    ExpirationFlow, FlowGroup, FlowRow, Moneyness, StrikeFlow, expiration_flows, strike_flows,
};
use crate::pricing::OptionType;

/// The `flow` rows of one underlying's flow, in the order given (sorted by expiration, strike,
/// call before put when it comes from [`super::flow_rows`]). `dte` is recomputed from the dates
/// as the schema stores it.
pub fn flow_snapshot_rows(
    rows: &[FlowRow],
    underlying: &str,
    trade_date: NaiveDate,
    as_of: DateTime<Utc>,
) -> Vec<FlowSnapshotRow> {
    rows.iter()
        .map(|r| FlowSnapshotRow::new(underlying, trade_date, as_of, flow_values(r)))
        .collect()
}

/// The `flow` batch of one underlying's flow: exactly [`flow_snapshot_rows`] as a batch, written
/// column by column (the worker's path; no row or symbol copy per contract).
pub fn flow_batch(
    rows: &[FlowRow],
    underlying: &str,
    trade_date: NaiveDate,
    as_of: DateTime<Utc>,
) -> Result<RecordBatch, SchemaError> {
    FlowSnapshotRow::batch_of(underlying, trade_date, as_of, rows, flow_values)
}

/// A flow row's values as the `flow` dataset stores them.
fn flow_values(r: &FlowRow) -> FlowValues {
    FlowValues {
        expiration: r.expiration,
        strike: r.strike,
        option_type: match r.option_type {
            OptionType::Call => optics_schemas::OptionType::Call,
            OptionType::Put => optics_schemas::OptionType::Put,
        },
        bid: r.bid,
        ask: r.ask,
        mid: r.mid,
        delta: r.delta,
        volume: r.volume,
        open_interest: r.open_interest,
        premium_usd: r.premium_usd,
        volume_oi_ratio: r.volume_oi_ratio,
        is_unusual: r.is_unusual,
        moneyness: match r.moneyness {
            Moneyness::Itm => MoneynessCode::Itm,
            Moneyness::Otm => MoneynessCode::Otm,
        },
    }
}

/// The `flow_aggregates` rows of one underlying's flow rows: every expiration, then every
/// strike (across expirations), each ascending — the dataset's row order.
pub fn flow_aggregate_rows(
    rows: &[FlowRow],
    underlying: &str,
    trade_date: NaiveDate,
    as_of: DateTime<Utc>,
) -> Vec<FlowAggregateRow> {
    aggregate_groups(rows)
        .into_iter()
        .map(|(key, totals)| FlowAggregateRow {
            underlying: underlying.to_owned(),
            trade_date,
            as_of,
            key,
            totals,
        })
        .collect()
}

/// Every expiration's group, then every strike's (across expirations), each ascending: the
/// keys and totals of the `flow_aggregates` rows, in the dataset's row order.
fn aggregate_groups(rows: &[FlowRow]) -> Vec<(FlowAggregateKey, FlowTotals)> {
    let expirations = expiration_flows(rows)
        .into_iter()
        .map(|g| (FlowAggregateKey::Expiration(g.key), g.totals));
    let strikes = strike_flows(rows)
        .into_iter()
        .map(|g| (FlowAggregateKey::Strike(g.key), g.totals));
    expirations.chain(strikes).collect()
}

/// The `flow_aggregates` batch of one underlying's flow rows: exactly
/// [`FlowAggregateRow::to_batch_trusted`] of [`flow_aggregate_rows`], written column by column
/// from the groups (the worker's path; no row or symbol copy per group).
pub fn flow_aggregates_batch(
    rows: &[FlowRow],
    underlying: &str,
    trade_date: NaiveDate,
    as_of: DateTime<Utc>,
) -> Result<RecordBatch, SchemaError> {
    FlowAggregateRow::batch_of(underlying, trade_date, as_of, &aggregate_groups(rows))
}

/// The strike and expiration groups `flow_aggregates` rows store (the inverse of
/// [`flow_aggregate_rows`]), each in the rows' order.
pub fn flow_groups(rows: &[FlowAggregateRow]) -> (Vec<StrikeFlow>, Vec<ExpirationFlow>) {
    let mut strikes = Vec::new();
    let mut expirations = Vec::new();
    for r in rows {
        let totals = r.totals;
        match r.key {
            FlowAggregateKey::Strike(key) => strikes.push(FlowGroup { key, totals }),
            FlowAggregateKey::Expiration(key) => expirations.push(FlowGroup { key, totals }),
        }
    }
    (strikes, expirations)
}

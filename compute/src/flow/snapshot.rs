//! Flow rows out as the `flow` snapshot dataset's rows (`optics-schemas`). A pure mapping; the
//! worker calls it.

use chrono::{DateTime, NaiveDate, Utc};
use optics_schemas::{FlowSnapshotRow, MoneynessCode};

use super::{FlowRow, Moneyness};
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
        .map(|r| {
            let days = r.expiration.signed_duration_since(trade_date).num_days();
            FlowSnapshotRow {
                underlying: underlying.to_owned(),
                trade_date,
                as_of,
                expiration: r.expiration,
                dte: i32::try_from(days).unwrap_or(if days < 0 { i32::MIN } else { i32::MAX }),
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
        })
        .collect()
}

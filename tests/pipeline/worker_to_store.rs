use std::time::Duration;

use chrono::NaiveDate;
use optics_compute::pricing::{OptionInputs, OptionType, PricingModel, greeks, implied_vol};
use optics_compute::time::years_to_expiry;
use optics_pipeline::store::SnapshotKey;
use optics_pipeline::worker::WorkerConfig;
use optics_schemas::bus::{snapshot_datasets, topics};
use optics_schemas::{
    ChainRow, DataBatch, ExposureRow, FlowAggregateKey, FlowAggregateRow, FlowSnapshotRow, Message,
    OptionQuote, PricingModelCode,
};
use optics_tests::reference::flow_group_totals;

use crate::support::{
    RATE, instant, memory_store, next_snapshot_events, read_rows, rows_of, runtime,
    simulated_chain, start_price, trade_date, worker_on_embedded_bus,
};

/// An underlying's simulated quotes with the forward of each expiration they were priced on.
type SimulatedChain = (String, Vec<OptionQuote>, Vec<(NaiveDate, f64)>);

/// Chains from the simulator, with the forwards they were priced on.
fn simulated(symbols: &[&str]) -> Vec<SimulatedChain> {
    symbols
        .iter()
        .map(|symbol| {
            let simulated = simulated_chain(symbol, instant(), start_price(symbol), 11);
            let mut forwards: Vec<(NaiveDate, f64)> = simulated
                .iter()
                .map(|q| (q.quote.expiration, q.forward))
                .collect();
            forwards.dedup_by_key(|f| f.0);
            let quotes = simulated.into_iter().map(|q| q.quote).collect();
            ((*symbol).to_owned(), quotes, forwards)
        })
        .collect()
}

#[test]
fn simulated_quotes_become_chain_snapshots_that_match_the_pricing_core() {
    let chains = simulated(&["SPY", "AAPL", "SPX"]);
    let runtime = runtime();
    let store = memory_store();
    let (stats, events) = runtime.block_on(async {
        let config = WorkerConfig {
            interval: Duration::from_millis(20),
            rate: RATE,
            ..WorkerConfig::default()
        };
        let (bus, mut announcements, worker) =
            worker_on_embedded_bus(&store, instant(), config).await;
        for (symbol, quotes, _) in &chains {
            for part in quotes.chunks(1000) {
                let batch = DataBatch::from_rows(symbol.as_str(), part).unwrap();
                bus.publish(topics::OPTION_QUOTES, Message::Data(batch))
                    .await
                    .unwrap();
            }
        }
        // The worker announces each publication; a chain may take several cycles to fill
        // (quotes keep arriving), so wait until every underlying's latest snapshot has all of
        // its contracts.
        let mut events = Vec::new();
        loop {
            events.extend(next_snapshot_events(&mut announcements, 16).await);
            announcements.commit().await.unwrap();
            let mut complete = true;
            for (symbol, quotes, _) in &chains {
                let key = SnapshotKey::new(snapshot_datasets::CHAIN, trade_date(), symbol.as_str());
                complete &= match store.read(&key).await.unwrap() {
                    Some(snapshot) => {
                        contracts_in(&rows_of(&snapshot, ChainRow::from_batch)) == quotes.len()
                    }
                    None => false,
                };
            }
            if complete {
                break;
            }
        }
        let stats = worker.stop().await;
        (stats, events)
    });
    let total: usize = chains.iter().map(|c| c.1.len()).sum();
    assert_eq!(stats.quotes_accepted, total as u64);
    for dataset in [
        snapshot_datasets::CHAIN,
        snapshot_datasets::EXPOSURES,
        snapshot_datasets::EXPOSURE_SUMMARY,
        snapshot_datasets::FLOW,
        snapshot_datasets::FLOW_AGGREGATES,
    ] {
        assert!(
            events.iter().any(|e| e.dataset == dataset),
            "no {dataset} snapshot announced"
        );
    }

    for (symbol, quotes, forwards) in &chains {
        let key = SnapshotKey::new(snapshot_datasets::CHAIN, trade_date(), symbol.as_str());
        let rows = runtime.block_on(read_rows(&store, &key, ChainRow::from_batch));
        assert_eq!(
            contracts_in(&rows),
            quotes.len(),
            "{symbol}: every contract has a side"
        );
        check_rows_against_core(symbol, &rows, forwards);
        let key = SnapshotKey::new(snapshot_datasets::EXPOSURES, trade_date(), symbol.as_str());
        let exposures = runtime.block_on(read_rows(&store, &key, ExposureRow::from_batch));
        check_gex_against_chain(symbol, &exposures, &rows);
        let key = SnapshotKey::new(snapshot_datasets::FLOW, trade_date(), symbol.as_str());
        let flow = runtime.block_on(read_rows(&store, &key, FlowSnapshotRow::from_batch));
        let key = SnapshotKey::new(
            snapshot_datasets::FLOW_AGGREGATES,
            trade_date(),
            symbol.as_str(),
        );
        let aggregates = runtime.block_on(read_rows(&store, &key, FlowAggregateRow::from_batch));
        check_aggregates_against_flow(symbol, &aggregates, &flow);
    }
}

/// The stored strike and expiration aggregates against the stored flow rows: of the flow's
/// cycle, each the reference sums of its rows (premiums added in the flow's order, as the
/// worker does: equal to the bit), every row of the flow counted once per grouping.
fn check_aggregates_against_flow(
    symbol: &str,
    aggregates: &[FlowAggregateRow],
    flow: &[FlowSnapshotRow],
) {
    assert!(!flow.is_empty(), "{symbol}: contracts traded");
    let (mut strike_rows, mut expiration_rows) = (0, 0);
    for aggregate in aggregates {
        assert_eq!(
            (aggregate.trade_date, aggregate.as_of),
            (flow[0].trade_date, flow[0].as_of),
            "{symbol}: aggregates of the flow's cycle"
        );
        let totals = flow_group_totals(flow, aggregate.key);
        assert_eq!(aggregate.totals, totals, "{symbol} {:?}", aggregate.key);
        match aggregate.key {
            FlowAggregateKey::Strike(_) => strike_rows += totals.contracts,
            FlowAggregateKey::Expiration(_) => expiration_rows += totals.contracts,
        }
    }
    let rows = flow.len() as u64;
    assert_eq!(
        (strike_rows, expiration_rows),
        (rows, rows),
        "{symbol}: every flow row in one strike and one expiration"
    );
}

/// Listed contracts (sides) of a chain.
fn contracts_in(rows: &[ChainRow]) -> usize {
    rows.iter()
        .map(|r| usize::from(r.call.is_listed()) + usize::from(r.put.is_listed()))
        .sum()
}

/// Dealer GEX per strike recomputed from the chain's own gamma and open interest:
/// γ·OI·100·S²·0.01, calls +, puts −.
fn check_gex_against_chain(symbol: &str, exposures: &[ExposureRow], chain: &[ChainRow]) {
    assert!(!exposures.is_empty());
    for exposure in exposures {
        let rows: Vec<&ChainRow> = chain
            .iter()
            .filter(|r| r.expiration == exposure.expiration && r.strike == exposure.strike)
            .collect();
        assert!(
            !rows.is_empty(),
            "{symbol}: exposure strike not in the chain"
        );
        let spot = exposure.spot;
        let side_gex = |gamma: Option<f64>, oi: Option<u64>| {
            gamma.unwrap_or(0.0) * oi.unwrap_or(0) as f64 * 100.0 * spot * spot * 0.01
        };
        let expected: f64 = rows
            .iter()
            .map(|r| {
                side_gex(r.call.greeks.gamma, r.call.open_interest)
                    - side_gex(r.put.greeks.gamma, r.put.open_interest)
            })
            .sum();
        let got = exposure.net.gamma;
        assert!(
            (got - expected).abs() <= 1e-9 * expected.abs().max(1.0),
            "{symbol} {} {}: GEX {got} vs {expected}",
            exposure.expiration,
            exposure.strike
        );
    }
}

/// Recomputes IV and Greeks of every two-sided side with the core, on the row's own forward,
/// and checks the forward against the simulator's.
fn check_rows_against_core(symbol: &str, rows: &[ChainRow], forwards: &[(NaiveDate, f64)]) {
    let mut checked = 0;
    for row in rows {
        assert_eq!(row.underlying, symbol);
        assert_eq!(row.trade_date, trade_date());
        let years = years_to_expiry(instant(), row.expiration);
        assert!((row.years_to_expiry - years).abs() < 1e-12);
        let true_forward = forwards
            .iter()
            .find(|(e, _)| *e == row.expiration)
            .map(|f| f.1)
            .unwrap();
        // Parity on quotes rounded to ticks (and, for AAPL, American early-exercise premia)
        // recovers the forward to a few basis points.
        let forward_error = (row.forward / true_forward - 1.0).abs();
        assert!(
            forward_error < 2e-3,
            "{symbol} {}: forward {} vs {true_forward}",
            row.expiration,
            row.forward
        );
        for (side, option_type) in [(&row.call, OptionType::Call), (&row.put, OptionType::Put)] {
            let (Some(bid), Some(ask)) = (side.bid, side.ask) else {
                continue;
            };
            if !(bid > 0.0 && ask >= bid) {
                assert!(side.iv.is_none(), "no two-sided quote → no IV");
                continue;
            }
            // The simulator quotes in cents: the mid is the double nearest the decimal half
            // cent.
            let mid: f64 = format!("{:.3}", 0.5 * (bid + ask)).parse().unwrap();
            assert_eq!(side.mid, Some(mid));
            // Stocks and ETFs: BSM on spot with the parity-implied carry as yield (so delta is
            // per $1 of spot); indices: Black-76 on the forward.
            let inputs = match row.model {
                PricingModelCode::Bsm => OptionInputs {
                    option_type,
                    model: PricingModel::BlackScholesMerton,
                    underlying: row.spot,
                    strike: row.strike,
                    years,
                    rate: row.rate,
                    dividend_yield: row.carry_yield,
                },
                PricingModelCode::Black76 => OptionInputs {
                    option_type,
                    model: PricingModel::Black76,
                    underlying: row.forward,
                    strike: row.strike,
                    years,
                    rate: row.rate,
                    dividend_yield: 0.0,
                },
            };
            match implied_vol(&inputs, mid) {
                Ok(iv) => {
                    let got = side.iv.expect("an IV where the core finds one");
                    assert!(
                        (got - iv).abs() <= 1e-12 * iv.max(1.0),
                        "{symbol} {} {}: iv {got} vs {iv}",
                        row.expiration,
                        row.strike
                    );
                    let g = greeks(&inputs, iv).unwrap();
                    let delta = side.greeks.delta.unwrap();
                    let gamma = side.greeks.gamma.unwrap();
                    assert!(
                        (delta - g.delta).abs() < 1e-9,
                        "delta {delta} vs {}",
                        g.delta
                    );
                    assert!((gamma - g.gamma).abs() <= 1e-9 * g.gamma.abs().max(1e-6));
                    checked += 1;
                }
                Err(_) => assert!(side.iv.is_none() && side.iv_status.is_some()),
            }
        }
    }
    assert!(checked > 100, "{symbol}: only {checked} sides checked");
}

//! Flow tests: every aggregate is recomputed here with plain loops over the hand-built chain.

use chrono::NaiveDate;

use super::*;
use crate::pricing::Greeks;

const SPOT: f64 = 100.0;

fn date(d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 12, d).unwrap()
}

#[allow(clippy::too_many_arguments)]
fn contract(
    day: u32,
    strike: f64,
    option_type: OptionType,
    volume: u64,
    open_interest: u64,
    bid: f64,
    ask: f64,
    delta: f64,
) -> ContractAnalytics {
    ContractAnalytics {
        expiration: date(day),
        strike,
        option_type,
        open_interest,
        volume,
        bid: Some(bid),
        ask: Some(ask),
        mid: (bid > 0.0).then_some(0.5 * (bid + ask)),
        iv: Some(0.2),
        greeks: Some(Greeks {
            delta,
            ..Greeks::default()
        }),
        years_to_expiry: f64::from(day) / 365.0,
        dte: i64::from(day) - 1,
    }
}

fn chain() -> Vec<ContractAnalytics> {
    use OptionType::{Call, Put};
    vec![
        // Exactly 2× OI and 100 contracts: unusual (both bounds inclusive).
        contract(4, 100.0, Call, 100, 50, 1.90, 2.10, 0.52),
        // 2× OI but 99 contracts: not unusual.
        contract(4, 105.0, Call, 99, 40, 0.40, 0.50, 0.21),
        // OI 0: unusual once volume ≥ 100; ratio undefined.
        contract(4, 95.0, Put, 150, 0, 0.45, 0.55, -0.20),
        // Large ITM put.
        contract(18, 110.0, Put, 2_000, 5_000, 10.20, 10.40, -0.80),
        // No volume: not a flow row.
        contract(18, 100.0, Call, 0, 9_000, 3.00, 3.20, 0.5),
        // Zero bid: premium at (0 + ask)/2.
        contract(18, 130.0, Call, 500, 100, 0.0, 0.10, 0.02),
        // Large OTM call with time, opening.
        contract(31, 115.0, Call, 3_000, 1_000, 1.10, 1.20, 0.25),
    ]
}

fn rows() -> Vec<FlowRow> {
    flow_rows(&chain(), SPOT, &FlowConfig::default()).unwrap()
}

fn find(rows: &[FlowRow], day: u32, strike: f64, option_type: OptionType) -> FlowRow {
    *rows
        .iter()
        .find(|r| r.expiration == date(day) && r.strike == strike && r.option_type == option_type)
        .unwrap()
}

#[test]
fn rows_premium_ratio_flag_and_moneyness() {
    let rows = rows();
    assert_eq!(rows.len(), 6, "the no-volume contract is not a flow row");
    let r = find(&rows, 4, 100.0, OptionType::Call);
    assert!((r.premium_usd.unwrap() - 100.0 * 2.0 * 100.0).abs() < 1e-9);
    assert_eq!(r.volume_oi_ratio, Some(2.0));
    assert!(r.is_unusual);
    assert_eq!(r.moneyness, Moneyness::Otm, "at the money counts as OTM");
    assert_eq!(r.delta, Some(0.52));
    assert!(!find(&rows, 4, 105.0, OptionType::Call).is_unusual);
    let zero_oi = find(&rows, 4, 95.0, OptionType::Put);
    assert_eq!(zero_oi.volume_oi_ratio, None);
    assert!(zero_oi.is_unusual);
    assert_eq!(zero_oi.moneyness, Moneyness::Otm);
    let itm_put = find(&rows, 18, 110.0, OptionType::Put);
    assert_eq!(itm_put.moneyness, Moneyness::Itm);
    assert!(!itm_put.is_unusual);
    assert!((itm_put.premium_usd.unwrap() - 2_000.0 * 10.30 * 100.0).abs() < 1e-6);
    let no_bid = find(&rows, 18, 130.0, OptionType::Call);
    assert_eq!(no_bid.mid, None);
    assert!((no_bid.premium_usd.unwrap() - 500.0 * 0.05 * 100.0).abs() < 1e-9);
    // Sorted by expiration, strike, call first.
    let keys: Vec<(NaiveDate, f64)> = rows.iter().map(|r| (r.expiration, r.strike)).collect();
    let mut sorted = keys.clone();
    sorted.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    assert_eq!(keys, sorted);
}

#[test]
fn unusual_thresholds_are_parameters() {
    let config = FlowConfig {
        unusual_volume_multiple: 3.0,
        unusual_min_volume: 10,
        ..FlowConfig::default()
    };
    let rows = flow_rows(&chain(), SPOT, &config).unwrap();
    // 2× is no longer enough; 99 contracts at 2.475× is not 3× either.
    assert!(!find(&rows, 4, 100.0, OptionType::Call).is_unusual);
    assert!(!find(&rows, 4, 105.0, OptionType::Call).is_unusual);
    assert!(
        find(&rows, 18, 130.0, OptionType::Call).is_unusual,
        "500 vs 100 OI is 5×"
    );
}

#[test]
fn summary_totals_ratios_and_sentiment() {
    let rows = rows();
    let s = summarize_flow(&rows, &FlowConfig::default());
    let (mut cp, mut pp, mut cv, mut pv) = (0.0, 0.0, 0u64, 0u64);
    for c in chain().iter().filter(|c| c.volume > 0) {
        let price = c.mid.unwrap_or(0.5 * (c.bid.unwrap() + c.ask.unwrap()));
        let premium = c.volume as f64 * price * 100.0;
        match c.option_type {
            OptionType::Call => {
                cp += premium;
                cv += c.volume;
            }
            OptionType::Put => {
                pp += premium;
                pv += c.volume;
            }
        }
    }
    assert!((s.total_call_premium - cp).abs() < 1e-6);
    assert!((s.total_put_premium - pp).abs() < 1e-6);
    assert_eq!((s.total_call_volume, s.total_put_volume), (cv, pv));
    assert_eq!(s.total_flow_count, 6);
    assert!((s.call_put_ratio.unwrap() - cv as f64 / pv as f64).abs() < 1e-12);
    assert!((s.put_call_ratio.unwrap() - pv as f64 / cv as f64).abs() < 1e-12);
    assert!((s.net_premium - (cp - pp)).abs() < 1e-6);
    // Puts: 150·0.5·100 + 2000·10.3·100 = 2,067,500; calls: 20,000 + 4,455 + 2,500 + 345,000.
    let expected = if cp - pp > 0.1 * (cp + pp) {
        Sentiment::Bullish
    } else if cp - pp < -0.1 * (cp + pp) {
        Sentiment::Bearish
    } else {
        Sentiment::Neutral
    };
    assert_eq!(s.sentiment, expected);
    assert_eq!(s.sentiment, Sentiment::Bearish);
}

#[test]
fn sentiment_threshold_boundaries() {
    let call = |premium_dollars: f64| FlowRow {
        expiration: date(4),
        strike: 100.0,
        option_type: OptionType::Call,
        dte: 3,
        bid: None,
        ask: None,
        mid: None,
        delta: None,
        volume: 1,
        open_interest: 1,
        premium_usd: Some(premium_dollars),
        volume_oi_ratio: Some(1.0),
        is_unusual: false,
        moneyness: Moneyness::Otm,
    };
    let put = |premium_dollars: f64| FlowRow {
        option_type: OptionType::Put,
        ..call(premium_dollars)
    };
    let config = FlowConfig::default();
    // 55 % calls: net = exactly 10 % of total, not above it.
    let s = summarize_flow(&[call(55.0), put(45.0)], &config);
    assert_eq!(s.sentiment, Sentiment::Neutral);
    let s = summarize_flow(&[call(56.0), put(44.0)], &config);
    assert_eq!(s.sentiment, Sentiment::Bullish);
    let s = summarize_flow(&[call(44.0), put(56.0)], &config);
    assert_eq!(s.sentiment, Sentiment::Bearish);
    let s = summarize_flow(&[], &config);
    assert_eq!(s.sentiment, Sentiment::Neutral);
    assert_eq!(s.call_put_ratio, None);
}

#[test]
fn rankings() {
    let rows = rows();
    let largest = largest_flows(&rows, 2);
    assert_eq!(largest.len(), 2);
    let mut premiums: Vec<f64> = rows.iter().map(|r| r.premium_or_zero()).collect();
    premiums.sort_by(|a, b| b.total_cmp(a));
    assert_eq!(largest[0].premium_or_zero(), premiums[0]);
    assert_eq!(largest[1].premium_or_zero(), premiums[1]);

    let unusual = unusual_activity(&rows, 10);
    let flagged = rows.iter().filter(|r| r.is_unusual).count();
    assert_eq!(unusual.len(), flagged);
    // OI 0 first (infinite ratio), then by ratio.
    assert_eq!(unusual[0].open_interest, 0);
    for w in unusual.windows(2).skip(1) {
        assert!(w[0].volume_oi_ratio.unwrap() >= w[1].volume_oi_ratio.unwrap());
    }

    let expirations = top_flow_groups(expiration_flows(&rows), 10);
    for e in &expirations {
        let premium: f64 = rows
            .iter()
            .filter(|r| r.expiration == e.key)
            .map(|r| r.premium_or_zero())
            .sum();
        let volume: u64 = rows
            .iter()
            .filter(|r| r.expiration == e.key)
            .map(|r| r.volume)
            .sum();
        assert!((e.totals.premium_usd - premium).abs() < 1e-6);
        assert_eq!(e.totals.volume, volume);
    }
    assert!(
        expirations
            .windows(2)
            .all(|w| w[0].totals.premium_usd >= w[1].totals.premium_usd)
    );
    assert_eq!(expirations.len(), 3);

    let strikes = top_flow_groups(strike_flows(&rows), 3);
    assert_eq!(strikes.len(), 3);
    assert!(
        strikes
            .windows(2)
            .all(|w| w[0].totals.premium_usd >= w[1].totals.premium_usd)
    );
    let at_110 = strikes.iter().find(|s| s.key == 110.0).unwrap();
    assert_eq!(
        (at_110.totals.call_volume, at_110.totals.put_volume),
        (0, 2_000)
    );

    // Equal premium and volume: the lower key first.
    let totals = strikes[0].totals;
    let tied = top_flow_groups(
        vec![
            FlowGroup { key: 2.0, totals },
            FlowGroup { key: 1.0, totals },
        ],
        5,
    );
    let keys: Vec<f64> = tied.iter().map(|g| g.key).collect();
    assert_eq!(keys, [1.0, 2.0]);
}

/// A put at 100 on the 18th, where the chain has only an untraded call.
fn put_100_of_the_18th() -> ContractAnalytics {
    contract(18, 100.0, OptionType::Put, 700, 1_000, 2.0, 2.2, -0.5)
}

#[test]
fn aggregate_rows_are_the_sums_of_the_flow_rows_by_strike_and_by_expiration() {
    use optics_schemas::{FlowAggregateKey, FlowAggregateRow};
    use optics_tests::reference::flow_group_totals;
    let mut contracts = chain();
    // Strikes that trade in two expirations: 100 (a call on the 4th, a put on the 18th) and
    // 110 (a put on the 18th, a call without a price on the 31st).
    contracts.push(put_100_of_the_18th());
    let mut unpriced = contract(31, 110.0, OptionType::Call, 40, 10, 0.0, 0.0, 0.3);
    (unpriced.bid, unpriced.ask, unpriced.mid) = (None, None, None);
    contracts.push(unpriced);
    let rows = flow_rows(&contracts, SPOT, &FlowConfig::default()).unwrap();
    let trade_date = date(1);
    let as_of = chrono::DateTime::from_timestamp(1_796_000_000, 0).unwrap();
    let aggregates = flow_aggregate_rows(&rows, "TEST", trade_date, as_of);

    // Each aggregate against the reference sums of the flow rows (premiums added in the rows'
    // order, as the worker does: equal to the bit).
    let flow = flow_snapshot_rows(&rows, "TEST", trade_date, as_of);
    for aggregate in &aggregates {
        let key = aggregate.key;
        assert_eq!(aggregate.totals, flow_group_totals(&flow, key), "{key:?}");
        assert_eq!(
            (
                aggregate.underlying.as_str(),
                aggregate.trade_date,
                aggregate.as_of
            ),
            ("TEST", trade_date, as_of)
        );
    }
    // Every expiration, then every strike that traded, once each, ascending.
    let mut strikes: Vec<f64> = rows.iter().map(|r| r.strike).collect();
    strikes.sort_by(f64::total_cmp);
    strikes.dedup();
    let mut expirations: Vec<NaiveDate> = rows.iter().map(|r| r.expiration).collect();
    expirations.dedup();
    let expected: Vec<FlowAggregateKey> = expirations
        .into_iter()
        .map(FlowAggregateKey::Expiration)
        .chain(strikes.into_iter().map(FlowAggregateKey::Strike))
        .collect();
    let keys: Vec<FlowAggregateKey> = aggregates.iter().map(|a| a.key).collect();
    assert_eq!(keys, expected);
    let at = |strike: f64| {
        aggregates
            .iter()
            .find(|a| a.key == FlowAggregateKey::Strike(strike))
            .unwrap()
            .totals
    };
    assert_eq!(
        (
            at(100.0).call_volume,
            at(100.0).put_volume,
            at(100.0).contracts
        ),
        (100, 700, 2)
    );
    // The call without a price adds its volume, not premium.
    assert_eq!((at(110.0).call_volume, at(110.0).contracts), (40, 2));
    assert_eq!(at(110.0).call_premium_usd, 0.0);

    // The schema takes them as they are, and the stored rows read back to the same groups.
    let batch = FlowAggregateRow::to_batch(&aggregates).unwrap();
    // The worker's column-by-column batch is the same batch.
    assert_eq!(
        flow_aggregates_batch(&rows, "TEST", trade_date, as_of).unwrap(),
        batch
    );
    let back = FlowAggregateRow::from_batch(&batch).unwrap();
    assert_eq!(back, aggregates);
    assert_eq!(
        flow_groups(&back),
        (strike_flows(&rows), expiration_flows(&rows))
    );
}

#[test]
fn volume_profile_of_one_expiration() {
    let mut contracts = chain();
    contracts.push(put_100_of_the_18th());
    let p = volume_profile(&contracts, date(18), 2);
    assert_eq!(p.expiration, date(18));
    let strikes: Vec<f64> = p.rows.iter().map(|r| r.strike).collect();
    assert_eq!(strikes, vec![100.0, 110.0, 130.0]);
    let at_100 = p.rows[0];
    assert_eq!(
        (
            at_100.call_volume,
            at_100.put_volume,
            at_100.call_oi,
            at_100.put_oi
        ),
        (0, 700, 9_000, 1_000)
    );
    assert_eq!(p.total_call_volume, 500);
    assert_eq!(p.total_put_volume, 2_700);
    assert_eq!(p.put_call_ratio, Some(2_700.0 / 500.0));
    assert_eq!(p.top_volume_strikes, vec![110.0, 100.0]);
    assert_eq!(p.top_oi_strikes, vec![100.0, 110.0]);
}

#[test]
fn smart_money_filters_and_scores() {
    let rows = rows();
    let trades = smart_money(&rows, &SmartMoneyConfig::default());
    // ITM put: $2.06M premium, not opening (2,000 < 5,000 OI), ITM → size only: excluded.
    // OTM call 115: $345k, 3,000 > 1,000 OI, OTM with 30 days → all three: 100.
    assert_eq!(trades.len(), 1);
    let t = &trades[0];
    assert_eq!(t.row.strike, 115.0);
    assert_eq!(t.score, 100);
    assert_eq!(
        t.criteria,
        vec![
            SmartMoneyCriterion::LargePremium,
            SmartMoneyCriterion::LikelyOpening,
            SmartMoneyCriterion::OutOfTheMoneyWithTime
        ]
    );
    // With a lower size bar the ITM put still fails (one filter), the near OTM put with zero
    // OI qualifies on size + opening but not time (3 days): 67.
    let config = SmartMoneyConfig {
        min_premium_usd: 5_000.0,
        ..SmartMoneyConfig::default()
    };
    let trades = smart_money(&rows, &config);
    let near_put = trades.iter().find(|t| t.row.strike == 95.0).unwrap();
    assert_eq!(near_put.score, 67);
    assert!(trades.iter().all(|t| t.row.strike != 110.0));
    assert!(trades.windows(2).all(|w| w[0].score >= w[1].score));
}

#[test]
fn bad_input_is_a_typed_error() {
    assert!(matches!(
        flow_rows(&chain(), f64::NAN, &FlowConfig::default()),
        Err(FlowError::Spot(s)) if s.is_nan()
    ));
    assert!(matches!(
        flow_rows(&chain(), 0.0, &FlowConfig::default()),
        Err(FlowError::Spot(_))
    ));
    let mut contracts = chain();
    contracts[2].mid = Some(-1.0);
    let err = flow_rows(&contracts, SPOT, &FlowConfig::default()).unwrap_err();
    assert!(err.to_string().contains("mid"), "{err}");
    let config = FlowConfig {
        sentiment_threshold: 1.5,
        ..FlowConfig::default()
    };
    assert!(matches!(
        flow_rows(&chain(), SPOT, &config),
        Err(FlowError::Config { .. })
    ));
}

#[test]
fn snapshot_rows_pass_the_schema_and_round_trip() {
    use optics_schemas::{FlowSnapshotRow, MoneynessCode};
    let rows = rows();
    let trade_date = date(1);
    let as_of = chrono::DateTime::from_timestamp(1_796_000_000, 0).unwrap();
    let snapshot = flow_snapshot_rows(&rows, "TEST", trade_date, as_of);
    assert_eq!(snapshot.len(), rows.len());
    let batch = FlowSnapshotRow::to_batch(&snapshot).unwrap();
    let back = FlowSnapshotRow::from_batch(&batch).unwrap();
    assert_eq!(back, snapshot);
    // The worker's column-by-column batch is the same batch.
    assert_eq!(flow_batch(&rows, "TEST", trade_date, as_of).unwrap(), batch);
    for (s, r) in back.iter().zip(&rows) {
        assert_eq!(
            (s.expiration, s.strike, s.volume),
            (r.expiration, r.strike, r.volume)
        );
        assert_eq!(s.premium_usd, r.premium_usd);
        assert_eq!(s.dte, (r.expiration - trade_date).num_days() as i32);
        assert_eq!(
            s.moneyness == MoneynessCode::Itm,
            r.moneyness == Moneyness::Itm
        );
        assert_eq!(s.moneyness.as_str(), r.moneyness.code());
    }
}

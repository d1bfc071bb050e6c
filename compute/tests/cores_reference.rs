//! The cores row against independent references.
//!
//! `tests/data/cores_vectors.json` was written by `scripts/reference/cores_vectors.py` (pandas
//! and numpy) from a deterministic stock and SPY OHLCV series, a stored IV history at every
//! tenor, a borrow-fee series, dividends, earnings dates and a live chain with three pending
//! reports (activity, the strikes of most open interest and volume, `impErnMv`, the
//! ex-earnings IVs). Nothing in it comes from this crate. Every expected field is compared
//! by name with [`cores_row`]'s value (null against null).
//!
//! Tolerance: 1e-9 relative (the same sums, standard deviations and ratios, summed in another
//! order), absolute floor 1e-9.

mod reference_support;

use reference_support::{close, date, f};

use chrono::{DateTime, NaiveDate, Utc};
use optics_compute::cores::{
    Bar, ChainInput, CoresHistory, CoresInput, cores_row, ex_event_iv, expected_abs_move_pct,
    field_index, implied_event, iv_at_call_delta,
};
use optics_compute::vol::{ConstantMaturityIv, ExpirationVol};
use optics_schemas::{
    BorrowRate, ChainRow, ChainSide, Dividend, DividendFrequency, EarningsEvent, EarningsTiming,
    ForwardSource, PricingModelCode, SettlementStyle, VolDailyRow,
};
use serde_json::Value;

fn bars(v: &Value) -> Vec<Bar> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|b| Bar {
            date: date(&b["date"]),
            open: f(&b["open"]),
            high: f(&b["high"]),
            low: f(&b["low"]),
            close: f(&b["close"]),
            volume: b["volume"].as_u64().unwrap(),
        })
        .collect()
}

fn vectors() -> Value {
    reference_support::vectors("cores_vectors.json")
}

#[test]
fn row_fields_match_pandas() {
    let v = vectors();
    let today = date(&v["today"]);
    let stock = bars(&v["stock"]);
    let spy = bars(&v["spy"]);
    let iv = |tenor: &str, i: usize| f(&v["iv"][tenor][i]);
    let as_of: DateTime<Utc> = DateTime::default();
    let vol: Vec<VolDailyRow> = stock
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let mut r = VolDailyRow::new("XYZ", b.date, as_of, b.close);
            r.iv10d_pct = Some(iv("10d", i));
            r.iv20d_pct = Some(iv("20d", i));
            r.iv30d_pct = Some(iv("30d", i));
            r.iv60d_pct = Some(iv("60d", i));
            r.iv90d_pct = Some(iv("90d", i));
            r.iv6m_pct = Some(iv("6m", i));
            r.iv1yr_pct = Some(iv("1yr", i));
            r.skew_slope_30d = Some(f(&v["slope"][i]));
            r
        })
        .collect();
    let borrow: Vec<BorrowRate> = v["borrow"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| BorrowRate {
            symbol: "XYZ".to_owned(),
            date: date(&b["date"]),
            borrow_rate: f(&b["rate"]),
            is_hard_to_borrow: false,
        })
        .collect();
    let dividends: Vec<Dividend> = v["dividends"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| Dividend {
            symbol: "XYZ".to_owned(),
            ex_date: date(&d["ex_date"]),
            pay_date: date(&d["ex_date"]),
            amount: f(&d["amount"]),
            frequency: DividendFrequency::Quarterly,
        })
        .collect();
    let reports: Vec<EarningsEvent> = v["reports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| EarningsEvent {
            symbol: "XYZ".to_owned(),
            report_date: date(d),
            timing: EarningsTiming::BeforeOpen,
            fiscal_quarter: "Q".to_owned(),
            eps_estimate: 1.0,
            eps_actual: None,
            revenue_estimate: None,
            revenue_actual: None,
        })
        .collect();
    let benchmarks = [("Spy", spy.as_slice())];
    let row = cores_row(&CoresInput {
        ticker: "XYZ",
        today,
        bars: &stock,
        benchmarks: &benchmarks,
        vol: &CoresHistory::from_rows(&vol, today),
        chain: None,
        flow: None,
        market_cap: None,
        reports: &reports,
        borrow: &borrow,
        dividends: &dividends,
    });
    let expected = v["expected"].as_object().unwrap();
    assert!(expected.len() > 250);
    for (name, want) in expected {
        assert!(field_index(name).is_some(), "{name} is not a catalog field");
        let got = row.get(name);
        match want.as_f64() {
            Some(w) => close(got.unwrap_or(f64::NAN), w, name),
            None => assert_eq!(got, None, "{name}"),
        }
    }
}

fn count(v: &Value) -> Option<u64> {
    v.as_u64()
}

/// The vectors' live chain: only volume and open interest matter to the fields compared.
fn chain_rows(v: &Value, today: NaiveDate) -> Vec<ChainRow> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let expiration = date(&r["expiration"]);
            let side = |volume: &str, oi: &str| ChainSide {
                volume: count(&r[volume]),
                open_interest: count(&r[oi]),
                ..ChainSide::default()
            };
            let dte = (expiration - today).num_days() as i32;
            ChainRow {
                underlying: "XYZ".to_owned(),
                trade_date: today,
                as_of: DateTime::default(),
                expiration,
                settlement: SettlementStyle::Pm,
                dte,
                years_to_expiry: f64::from(dte) / 365.0,
                strike: f(&r["strike"]),
                spot: 100.0,
                forward: 100.0,
                forward_source: ForwardSource::Parity,
                forward_strike_count: 3,
                rate: 0.04,
                carry_yield: 0.0,
                model: PricingModelCode::Bsm,
                call: side("call_volume", "call_oi"),
                put: side("put_volume", "put_oi"),
            }
        })
        .collect()
}

/// The chain-derived fields (activity, the strikes of most open interest and volume, the
/// implied earnings move and the ex-earnings IVs) for three pending reports.
#[test]
fn chain_fields_match_pandas() {
    let v = vectors();
    let today = date(&v["today"]);
    let chain = &v["chain"];
    let rows = chain_rows(&chain["rows"], today);
    let open: Vec<NaiveDate> = chain["open_expirations"]
        .as_array()
        .unwrap()
        .iter()
        .map(date)
        .collect();
    let cm = |tenor: &str| Some(f(&chain["constant_maturity"][tenor]));
    let constant_maturity = ConstantMaturityIv {
        iv10d_pct: cm("10d"),
        iv20d_pct: cm("20d"),
        iv30d_pct: cm("30d"),
        iv60d_pct: cm("60d"),
        iv90d_pct: cm("90d"),
        iv6m_pct: cm("6m"),
        iv1yr_pct: cm("1yr"),
    };
    let cases = chain["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 3);
    for case in cases {
        let expirations: Vec<ExpirationVol> = case["expirations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                let expiration = date(&e["expiration"]);
                ExpirationVol {
                    expiration,
                    settlement: SettlementStyle::Pm,
                    dte: (expiration - today).num_days() as i32,
                    years_to_expiry: f(&e["years"]),
                    forward: 100.0,
                    atm_iv_pct: Some(f(&e["atm_iv"])),
                    call25_iv_pct: None,
                    put25_iv_pct: None,
                    skew25_pct: None,
                }
            })
            .collect();
        let report = EarningsEvent {
            symbol: "XYZ".to_owned(),
            report_date: date(&case["report"]),
            timing: match case["timing"].as_str().unwrap() {
                "before_open" => EarningsTiming::BeforeOpen,
                _ => EarningsTiming::AfterClose,
            },
            fiscal_quarter: "Q".to_owned(),
            eps_estimate: 1.0,
            eps_actual: None,
            revenue_estimate: None,
            revenue_actual: None,
        };
        let row = cores_row(&CoresInput {
            ticker: "XYZ",
            today,
            bars: &[],
            benchmarks: &[],
            vol: &CoresHistory::default(),
            chain: Some(ChainInput {
                trade_date: today,
                rows: &rows,
                expirations: &expirations,
                constant_maturity: &constant_maturity,
                open_expirations: &open,
            }),
            flow: None,
            market_cap: None,
            reports: std::slice::from_ref(&report),
            borrow: &[],
            dividends: &[],
        });
        let expected = case["expected"].as_object().unwrap();
        assert!(expected.contains_key("oiMaxStrike") && expected.contains_key("impErnMv"));
        for (name, want) in expected {
            let what = format!("{name} ({} {})", case["timing"], case["report"]);
            match want.as_f64() {
                Some(w) => close(row.get(name).unwrap_or(f64::NAN), w, &what),
                None => assert_eq!(row.get(name), None, "{what}"),
            }
        }
    }
}

#[test]
fn implied_events_match_the_closed_form() {
    let v = vectors();
    for e in v["events"].as_array().unwrap() {
        let got = implied_event(f(&e["t1"]), f(&e["iv1"]), f(&e["t2"]), f(&e["iv2"]));
        match e["event"].as_f64() {
            Some(want) => {
                let g = got.unwrap();
                close(g, want, "event");
                close(expected_abs_move_pct(g), f(&e["abs_move_pct"]), "abs move");
                close(
                    ex_event_iv(f(&e["iv1"]), 30.0 / 365.0, g).unwrap(),
                    f(&e["ex_iv_30d_of_iv1"]),
                    "ex-event IV",
                );
            }
            None => assert_eq!(got, None, "{e}"),
        }
    }
}

#[test]
fn delta_smiles_match_numpy_interp() {
    let v = vectors();
    for smile in v["smiles"].as_array().unwrap() {
        let points: Vec<(f64, f64)> = smile["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (f(&p[0]), f(&p[1])))
            .collect();
        for (t, want) in smile["targets"]
            .as_array()
            .unwrap()
            .iter()
            .zip(smile["expected"].as_array().unwrap())
        {
            let got = iv_at_call_delta(&points, f(t));
            match want.as_f64() {
                Some(w) => close(got.unwrap_or(f64::NAN), w, "iv at delta"),
                None => assert_eq!(got, None, "delta {t}"),
            }
        }
    }
}

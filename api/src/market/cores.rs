//! The gather behind the cores row: reads one ticker's already-loaded data (coverage, live
//! chain, the cut of its stored vol_daily rows, session flow) into [`optics_compute::cores::CoresInput`] and
//! computes the row. Synchronous, so a market-wide table can call it per underlying.

use chrono::NaiveDate;
use optics_compute::cores::{Bar, ChainInput, CoresHistory, CoresInput, CoresRow};

use super::{ChainView, Coverage, FlowView, SessionBar};

/// The benchmark symbols of the correlation fields by catalog code (`Etf` is the sector ETF).
pub const BENCHMARK_SYMBOLS: [(&str, &str); 3] = [("Spy", "SPY"), ("Qqq", "QQQ"), ("Iwm", "IWM")];

fn bars(bars: &[SessionBar]) -> Vec<Bar> {
    bars.iter()
        .map(|b| Bar {
            date: b.date,
            open: b.open,
            high: b.high,
            low: b.low,
            close: b.close,
            volume: b.volume,
        })
        .collect()
}

/// The cores row of `ticker` on `today` (New York) from the data already loaded.
pub fn cores_row(
    coverage: &Coverage,
    chain: Option<&ChainView>,
    vol: &CoresHistory,
    flow: Option<&FlowView>,
    ticker: &str,
    today: NaiveDate,
) -> CoresRow {
    let company = coverage.get(ticker);
    let own = bars(coverage.bars_of(ticker));
    let mut symbols: Vec<(&str, String)> = BENCHMARK_SYMBOLS
        .iter()
        .map(|(code, s)| (*code, (*s).to_owned()))
        .collect();
    if let Some(etf) = company.and_then(|c| c.sector_etf.clone()) {
        symbols.push(("Etf", etf));
    }
    let bench_bars: Vec<(&str, Vec<Bar>)> = symbols
        .iter()
        .filter(|(_, s)| !coverage.bars_of(s).is_empty())
        .map(|(code, s)| (*code, bars(coverage.bars_of(s))))
        .collect();
    let benchmarks: Vec<(&str, &[Bar])> = bench_bars
        .iter()
        .map(|(code, b)| (*code, b.as_slice()))
        .collect();
    let chain = chain.map(|c| {
        let implied = c.implied();
        ChainInput {
            trade_date: c.trade_date,
            rows: &c.rows,
            expirations: &implied.expirations,
            constant_maturity: &implied.constant_maturity,
            open_expirations: c.open_expirations(),
        }
    });
    optics_compute::cores::cores_row(&CoresInput {
        ticker,
        today,
        bars: &own,
        benchmarks: &benchmarks,
        vol,
        chain,
        flow: flow.map(|f| f.rows.as_slice()),
        market_cap: company.and_then(|c| c.market_cap),
        reports: coverage.reports_of(ticker),
        borrow: coverage.borrow_of(ticker),
        dividends: coverage.dividends_of(ticker),
    })
}

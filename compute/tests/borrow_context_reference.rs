//! Borrow and price-context math against independent references.
//!
//! `tests/data/borrow_context_vectors.json` was written by
//! `scripts/reference/borrow_context_vectors.py` (pandas rolling windows and numpy) from a
//! deterministic fee series with planted multiplicative bursts and a deterministic close
//! series. Nothing in it comes from this crate.
//!
//! Tolerance: 1e-9 relative (the same means, standard deviations and ratios; pandas' rolling
//! std sums in its own order).

mod reference_support;

use reference_support::{close, floats};

use optics_compute::borrow::{
    borrow_2yr, borrow_class, htb_streak, is_spike, pctile_1y, sector_standing, severity,
    squeeze_score, z_scores,
};
use optics_compute::price_context::{period_return, range_52w};
use serde_json::Value;

fn vectors() -> Value {
    reference_support::vectors("borrow_context_vectors.json")
}

#[test]
fn borrow_statistics_match_pandas() {
    let v = vectors();
    let fees = floats(&v["fees_pct"]);
    let flags: Vec<bool> = v["htb"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_bool().unwrap())
        .collect();
    let z = z_scores(&fees);
    for (i, (ours, theirs)) in z.iter().zip(v["z_scores"].as_array().unwrap()).enumerate() {
        match (ours, theirs.as_f64()) {
            (Some(a), Some(b)) => close(*a, b, &format!("z[{i}]")),
            (None, None) => {}
            other => panic!("z[{i}]: {other:?}"),
        }
    }
    let spikes: Vec<usize> = (0..z.len()).filter(|&i| is_spike(z[i])).collect();
    let expected: Vec<usize> = v["spikes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as usize)
        .collect();
    assert_eq!(spikes, expected);
    assert_eq!(severity(*z.last().unwrap()), v["severity_last"]);
    for (fee, class) in v["classes"].as_object().unwrap() {
        assert_eq!(borrow_class(fee.parse().unwrap()), class, "{fee}");
    }
    let pctile = pctile_1y(&fees);
    close(pctile.unwrap(), v["pctile_1y"].as_f64().unwrap(), "pctile");
    close(
        borrow_2yr(&fees).unwrap(),
        v["borrow_2yr"].as_f64().unwrap(),
        "borrow2yr",
    );
    let streak = htb_streak(&flags);
    assert_eq!(streak as u64, v["htb_streak"].as_u64().unwrap());
    close(
        squeeze_score(pctile, *z.last().unwrap(), streak),
        v["squeeze_score"].as_f64().unwrap(),
        "squeeze",
    );
    let s = &v["sector"];
    let found = sector_standing(s["own"].as_f64().unwrap(), &floats(&s["fees"])).unwrap();
    close(found.median, s["median"].as_f64().unwrap(), "median");
    close(found.ratio.unwrap(), s["ratio"].as_f64().unwrap(), "ratio");
    close(found.pctile, s["pctile"].as_f64().unwrap(), "sector pctile");
}

#[test]
fn returns_and_range_match_pandas() {
    let v = vectors();
    let closes = floats(&v["closes"]);
    for (n, expected) in v["returns"].as_object().unwrap() {
        let n: usize = n.parse().unwrap();
        close(
            period_return(&closes, n).unwrap(),
            expected.as_f64().unwrap(),
            &format!("return {n}"),
        );
    }
    let r = range_52w(&closes).unwrap();
    let e = &v["range"];
    close(r.high, e["high"].as_f64().unwrap(), "high");
    close(r.low, e["low"].as_f64().unwrap(), "low");
    close(r.position, e["position"].as_f64().unwrap(), "position");
    close(
        r.pct_from_high,
        e["pct_from_high"].as_f64().unwrap(),
        "from high",
    );
    close(
        r.pct_from_low,
        e["pct_from_low"].as_f64().unwrap(),
        "from low",
    );
}

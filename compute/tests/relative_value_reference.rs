//! Relative-value statistics and the compare series against independent references.
//!
//! `tests/data/relative_value_vectors.json` was written by
//! `scripts/reference/relative_value_vectors.py` (pandas) from seeded series; nothing in it comes
//! from this crate.
//!
//! Tolerance: 1e-9 relative (pandas sums in another order); counts, dates and which figures
//! are null exactly.

mod reference_support;

use reference_support::{close, close_opt, dated};

use optics_compute::correlation::{align, rolling};
use optics_compute::relative_value::{ratio_series, ratio_stats, sigma_bands};
use serde_json::Value;

fn vectors() -> Value {
    reference_support::vectors("relative_value_vectors.json")
}

#[test]
fn ratio_statistics_match_pandas_at_every_prefix() {
    let v = vectors();
    let points = ratio_series(&dated(&v["ticker_iv"]), &dated(&v["benchmark_iv"]));
    assert_eq!(points.len() as u64, v["joined"].as_u64().unwrap());
    let ratios: Vec<f64> = points.iter().map(|p| p.ratio).collect();
    for (a, e) in ratios[ratios.len() - 5..]
        .iter()
        .zip(v["ratios_tail"].as_array().unwrap())
    {
        close(*a, e.as_f64().unwrap(), "ratio");
    }
    let prefixes = v["prefixes"].as_array().unwrap();
    assert_eq!(prefixes.len(), 40);
    for p in prefixes {
        let k = p["len"].as_u64().unwrap() as usize;
        let s = ratio_stats(&ratios[..k]).unwrap();
        let at = format!("prefix {k}");
        close(s.current, p["current"].as_f64().unwrap(), &at);
        close_opt(s.avg_1m, &p["avg_1m"], &format!("{at} avg_1m"));
        close_opt(s.avg_1y, &p["avg_1y"], &format!("{at} avg_1y"));
        close_opt(s.std_1y, &p["std_1y"], &format!("{at} std_1y"));
        close_opt(s.z, &p["z"], &format!("{at} z"));
        close_opt(s.percentile, &p["percentile"], &format!("{at} percentile"));
        let bands = sigma_bands(
            s.avg_1y.unwrap(),
            s.std_1y.unwrap(),
            points[k - 1].benchmark_iv,
        );
        let expected = p["bands"].as_array().unwrap();
        assert_eq!(bands.len(), expected.len());
        for (b, e) in bands.iter().zip(expected) {
            assert_eq!(b.sigmas, e[0].as_f64().unwrap());
            close(b.ratio, e[1].as_f64().unwrap(), &format!("{at} band"));
            close(
                b.implied_iv,
                e[2].as_f64().unwrap(),
                &format!("{at} implied"),
            );
        }
    }
}

#[test]
fn compare_series_matches_pandas_rolling() {
    let v = vectors();
    let pairs = align(&dated(&v["x_returns"]), &dated(&v["y_returns"]));
    let days = v["rolling_days"].as_u64().unwrap() as usize;
    let series = rolling(&pairs, days);
    let expected = v["rolling"].as_array().unwrap();
    assert_eq!(series.len(), expected.len());
    for (p, e) in series.iter().zip(expected) {
        let at = e[0].as_str().unwrap();
        assert_eq!(p.date.to_string(), at);
        close_opt(p.correl_1m, &e[1], &format!("{at} correl1m"));
        close_opt(p.correl_1y, &e[2], &format!("{at} correl1y"));
        close_opt(p.beta_1m, &e[3], &format!("{at} beta1m"));
    }
}

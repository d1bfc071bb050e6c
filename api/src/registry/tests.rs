use super::*;
use crate::params::QueryParams;
use crate::window;

fn data_endpoints() -> &'static [EndpointSpec] {
    table::DATA_ENDPOINTS
}

#[test]
fn the_contract_has_every_endpoint_of_the_reference_once() {
    // The reference lists 64 data endpoints.
    assert_eq!(data_endpoints().len(), 64);
    let mut slugs: Vec<&str> = all_endpoints().map(|e| e.slug).collect();
    let before = slugs.len();
    slugs.sort_unstable();
    slugs.dedup();
    assert_eq!(slugs.len(), before, "duplicate slug");
    let mut routes: Vec<(&str, &str)> = all_endpoints()
        .map(|e| (e.method.as_str(), e.path))
        .collect();
    routes.sort_unstable();
    routes.dedup();
    assert_eq!(routes.len(), before, "duplicate method + path");
    for family in all_endpoints().map(|e| e.family) {
        assert!(families().any(|f| f.slug == family), "{family}");
    }
}

#[test]
fn path_placeholders_and_path_params_agree() {
    for e in all_endpoints() {
        let placeholders: Vec<&str> = e
            .path
            .split('/')
            .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .collect();
        let path_params: Vec<&str> = e
            .params
            .iter()
            .filter(|p| p.location == ParamLocation::Path)
            .map(|p| p.name)
            .collect();
        assert_eq!(placeholders, path_params, "{}", e.slug);
    }
}

#[test]
fn defaults_lie_inside_their_bounds() {
    for e in all_endpoints() {
        for p in e.params {
            match p.kind {
                ParamKind::Int { min, max } => {
                    assert!(min <= max, "{}.{}", e.slug, p.name);
                    if let Some(d) = p.default_int() {
                        assert!(
                            (min..=max).contains(&d),
                            "{}.{} default {d}",
                            e.slug,
                            p.name
                        );
                    } else {
                        assert!(p.default.is_none(), "{}.{}", e.slug, p.name);
                    }
                }
                ParamKind::Float { min, max } => {
                    let d = p.default_float();
                    if let (Some(d), Some(min)) = (d, min) {
                        assert!(d >= min, "{}.{}", e.slug, p.name);
                    }
                    if let (Some(d), Some(max)) = (d, max) {
                        assert!(d <= max, "{}.{}", e.slug, p.name);
                    }
                }
                ParamKind::Choice(words) => {
                    if let Some(d) = p.default
                        && p.name != "detail"
                    {
                        assert!(words.contains(&d), "{}.{} default {d}", e.slug, p.name);
                    }
                }
                _ => {}
            }
        }
    }
}

#[test]
fn tiers_follow_the_spec() {
    // Spec part 5: strategy endpoints Basic, risk endpoints Pro, utility endpoints any plan.
    for slug in [
        "analyze-strategy",
        "build-strategy",
        "optimize-strategy",
        "pop",
        "simulate-chain",
    ] {
        assert_eq!(endpoint(slug).unwrap().tier, Tier::Basic, "{slug}");
    }
    for slug in [
        "hedge-recommendations",
        "portfolio-greeks",
        "scenario-analysis",
        "stress-tests",
    ] {
        assert_eq!(endpoint(slug).unwrap().tier, Tier::Pro, "{slug}");
    }
    for slug in [
        "index",
        "search",
        "expirations",
        "earnings-calendar",
        "economic-calendar",
        "me-usage",
        "docs",
        "openapi",
        "changelog",
    ] {
        assert_eq!(endpoint(slug).unwrap().tier, Tier::Any, "{slug}");
    }
    assert_eq!(endpoint("chain-at-time").unwrap().tier, Tier::Pro);
    assert_eq!(endpoint("gex").unwrap().tier, Tier::Premium);
}

#[test]
fn costs_are_free_for_the_catalogue_and_scale_with_symbols_for_batches() {
    for slug in ["index", "me-usage", "docs", "openapi", "changelog"] {
        assert_eq!(endpoint(slug).unwrap().cost, Cost::Free, "{slug}");
    }
    for slug in [
        "iv-rank-batch",
        "gex-batch",
        "expected-move-batch",
        "cross-index-gex",
    ] {
        assert_eq!(endpoint(slug).unwrap().cost, Cost::PerSymbol, "{slug}");
    }
    assert_eq!(endpoint("screen").unwrap().cost, Cost::Units(2));
    assert_eq!(endpoint("chain").unwrap().cost, Cost::Units(1));
}

#[test]
fn every_example_is_accepted_by_the_parameter_parser() {
    for e in all_endpoints() {
        let request = e
            .example
            .request
            .replace("{last_session}", "2026-11-20")
            .replace("{monthly_expiry}", "2026-12-18");
        let (path, query) = match request.split_once('?') {
            Some((path, query)) => (path, Some(query)),
            None => (request.as_str(), None),
        };
        assert!(
            crate::suggest::matches_template(path, e.path),
            "{}: example path {path} does not match {}",
            e.slug,
            e.path
        );
        if e.method == Method::Get {
            let params = QueryParams::parse(e, query);
            assert!(params.is_ok(), "{}: {:?}", e.slug, params.err());
            assert!(e.example.body.is_none(), "{}", e.slug);
        } else {
            let body: serde_json::Value =
                serde_json::from_str(e.example.body.expect("POST example has a body")).unwrap();
            for p in e.params.iter().filter(|p| p.required) {
                assert!(
                    body.get(p.name).is_some(),
                    "{}: body lacks {}",
                    e.slug,
                    p.name
                );
            }
        }
    }
}

#[test]
fn compact_defaults_match_the_registry() {
    let default_of = |slug: &str, name: &str| {
        endpoint(slug)
            .and_then(|e| e.param(name))
            .and_then(ParamSpec::default_int)
            .and_then(|d| usize::try_from(d).ok())
    };
    assert_eq!(
        default_of("gex", "strikes_around"),
        Some(window::GEX_STRIKES_PER_SIDE)
    );
    assert_eq!(
        default_of("zero-dte", "strikes_around"),
        Some(window::ZERO_DTE_STRIKES_PER_SIDE)
    );
    assert_eq!(
        default_of("flow", "limit"),
        Some(window::FLOW_ALL_FLOW_ROWS)
    );
}

#[test]
fn registry_keeps_contract_order_and_counts_families() {
    let registry = Registry::new([
        endpoint("docs").unwrap(),
        endpoint("chain").unwrap(),
        endpoint("index").unwrap(),
        endpoint("chain").unwrap(),
    ]);
    let slugs: Vec<&str> = registry.mounted().iter().map(|e| e.slug).collect();
    assert_eq!(slugs, ["index", "chain", "docs"]);
    assert_eq!(registry.endpoint_count(), 3);
    assert!(registry.is_mounted("chain"));
    assert!(!registry.is_mounted("gex"));
    let families: Vec<(&str, usize)> = registry
        .families()
        .into_iter()
        .map(|(f, n)| (f.slug, n))
        .collect();
    assert_eq!(
        families,
        [
            ("options-chain-api", 1),
            ("account-api", 1),
            ("platform", 1)
        ]
    );
}

#[test]
fn every_endpoint_variant_names_its_own_registry_row() {
    let slugs: Vec<&str> = Endpoint::ALL.iter().map(|e| e.slug()).collect();
    let contract: Vec<&str> = all_endpoints().map(|e| e.slug).collect();
    assert_eq!(slugs, contract);
    assert_eq!(Endpoint::Gex.slug(), "gex");
    assert_eq!(Endpoint::ZeroDte.spec().path, "/zero-dte/{ticker}");
    assert_eq!(Endpoint::Changelog.spec().path, "/changelog");
}

//! `compose/compose.yaml` checked against the binary it runs, without a container engine: the
//! file is valid YAML; every optics service's command and `OPTICS_*` variables are ones its
//! subcommand reads, and together they parse as the container would run them; its `AWS_*`
//! variables are ones the S3 client reads; and the parts must agree with each other (the topics
//! the workers use are the ones created, the replicas share accounts and limits, the health
//! checks ask the ports the services listen on, the proxy trusts its own address).

use std::collections::BTreeMap;
use std::str::FromStr;

use clap::{ArgAction, CommandFactory, Parser};
use optics_schemas::bus::topics;
use serde_norway::Value;

use crate::Cli;

const COMPOSE: &str = include_str!("../compose/compose.yaml");
const NGINX: &str = include_str!("../compose/nginx.conf");

/// The compose file with its merge keys (`<<: *anchor`) applied.
fn compose() -> Value {
    let mut file: Value = serde_norway::from_str(COMPOSE).expect("compose.yaml is valid YAML");
    file.apply_merge().expect("merge keys");
    // A merge inside a merged mapping (x-worker-env pulls in x-s3) needs a second pass.
    file.apply_merge().expect("merge keys");
    file
}

/// One service running the optics image: its name, command and environment.
struct OpticsService {
    name: String,
    command: Vec<String>,
    environment: BTreeMap<String, String>,
    healthcheck: String,
}

fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        other => panic!("not a scalar: {other:?}"),
    }
}

fn optics_services(file: &Value) -> Vec<OpticsService> {
    let services = file["services"].as_mapping().expect("services");
    services
        .iter()
        .filter(|(_, service)| service["image"].as_str() == Some("optics:local"))
        .map(|(name, service)| OpticsService {
            name: text(name),
            command: service["command"]
                .as_sequence()
                .expect("command as a list")
                .iter()
                .map(text)
                .collect(),
            environment: service["environment"]
                .as_mapping()
                .map(|env| env.iter().map(|(k, v)| (text(k), text(v))).collect())
                .unwrap_or_default(),
            healthcheck: service["healthcheck"]["test"]
                .as_sequence()
                .map(|test| test.iter().map(text).collect::<Vec<_>>().join(" "))
                .unwrap_or_default(),
        })
        .collect()
}

/// The long option and action of every argument of `optics <subcommand>` (its own, its
/// flattened groups' and the global ones), by the variable it reads.
fn options_by_variable(subcommand: &str) -> BTreeMap<String, (String, ArgAction)> {
    let cli = Cli::command();
    let sub = cli
        .find_subcommand(subcommand)
        .unwrap_or_else(|| panic!("optics has no subcommand {subcommand}"));
    cli.get_arguments()
        .chain(sub.get_arguments())
        .filter_map(|arg| {
            let env = arg.get_env()?.to_string_lossy().into_owned();
            let long = arg.get_long()?.to_owned();
            Some((env, (long, arg.get_action().clone())))
        })
        .collect()
}

#[test]
fn every_optics_service_runs_a_command_line_the_binary_accepts() {
    let file = compose();
    let services = optics_services(&file);
    let names: Vec<&str> = services.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        ["ingest", "compute-a", "compute-b", "api-a", "api-b"],
        "the services of the deployment"
    );
    for service in &services {
        let subcommand = service.command.first().expect("a subcommand").clone();
        let options = options_by_variable(&subcommand);
        // What the container runs, as arguments: its command, then each variable as the option
        // it sets (clap reads the variable the same way; the test process's own environment
        // stays out of it).
        let mut argv = vec!["optics".to_owned()];
        argv.extend(service.command.iter().cloned());
        for (variable, value) in &service.environment {
            if let Some(aws) = variable.strip_prefix("AWS_") {
                // What object_store's `AmazonS3Builder::from_env` reads.
                assert!(
                    object_store::aws::AmazonS3ConfigKey::from_str(&format!(
                        "aws_{}",
                        aws.to_ascii_lowercase()
                    ))
                    .is_ok(),
                    "{}: the S3 client does not read {variable}",
                    service.name
                );
                continue;
            }
            let (long, action) = options.get(variable).unwrap_or_else(|| {
                panic!(
                    "{}: `optics {subcommand}` reads no {variable}",
                    service.name
                )
            });
            match action {
                ArgAction::SetTrue => {
                    assert!(
                        ["true", "false"].contains(&value.as_str()),
                        "{}: {variable}={value}",
                        service.name
                    );
                    if value == "true" {
                        argv.push(format!("--{long}"));
                    }
                }
                _ => argv.push(format!("--{long}={value}")),
            }
        }
        if let Err(error) = Cli::try_parse_from(&argv) {
            panic!("{}: {argv:?} does not parse:\n{error}", service.name);
        }
    }
}

#[test]
fn the_services_agree_with_each_other() {
    let file = compose();
    let services = optics_services(&file);
    let by_name = |name: &str| services.iter().find(|s| s.name == name).unwrap();
    let env = |name: &str, variable: &str| {
        by_name(name)
            .environment
            .get(variable)
            .cloned()
            .unwrap_or_else(|| panic!("{name} sets no {variable}"))
    };

    // Every topic the bus uses is created, with the partitions the workers split.
    let kafka_init = file["services"]["kafka-init"]["command"][0]
        .as_str()
        .unwrap();
    for topic in [
        topics::OPTION_QUOTES,
        topics::UNDERLYING_TICKS,
        topics::DAILY_BARS,
        topics::REFERENCE,
        topics::SNAPSHOTS,
    ] {
        assert!(
            kafka_init.contains(&format!("{topic}:")),
            "{topic} is not created"
        );
    }

    // One consumer group, two workers, one of them closing sessions; all on the same bus and
    // store.
    assert_eq!(
        env("compute-a", "OPTICS_COMPUTE_GROUP"),
        env("compute-b", "OPTICS_COMPUTE_GROUP")
    );
    assert_ne!(
        env("compute-a", "OPTICS_WORKER_ID"),
        env("compute-b", "OPTICS_WORKER_ID")
    );
    let closers = ["compute-a", "compute-b"]
        .iter()
        .filter(|w| {
            by_name(w)
                .environment
                .get("OPTICS_SESSION_CLOSE")
                .map(String::as_str)
                == Some("true")
        })
        .count();
    assert_eq!(
        closers, 1,
        "exactly one worker publishes the session closes"
    );
    for name in ["ingest", "compute-a", "compute-b", "api-a", "api-b"] {
        assert_eq!(env(name, "OPTICS_STORE"), env("compute-a", "OPTICS_STORE"));
    }
    for name in ["ingest", "compute-b"] {
        assert_eq!(env(name, "OPTICS_BUS"), env("compute-a", "OPTICS_BUS"));
    }

    // The replicas share accounts in PostgreSQL and limits in Redis (the binary refuses
    // PostgreSQL accounts with limits kept in each process).
    for variable in ["OPTICS_DB", "OPTICS_LIMITER", "OPTICS_PUBLIC_URL"] {
        assert_eq!(env("api-a", variable), env("api-b", variable), "{variable}");
    }
    assert!(env("api-a", "OPTICS_DB").starts_with("postgres://"));
    assert!(env("api-a", "OPTICS_LIMITER").starts_with("redis://"));

    // Each health check asks the port its service listens on.
    for (name, variable) in [
        ("ingest", "OPTICS_HEALTH_LISTEN"),
        ("compute-a", "OPTICS_HEALTH_LISTEN"),
        ("compute-b", "OPTICS_HEALTH_LISTEN"),
        ("api-a", "OPTICS_LISTEN"),
        ("api-b", "OPTICS_LISTEN"),
    ] {
        let listen = env(name, variable);
        let port = listen.rsplit(':').next().unwrap();
        let check = &by_name(name).healthcheck;
        assert!(
            check.contains(&format!("127.0.0.1:{port}/health")),
            "{name}: the health check `{check}` does not ask port {port}"
        );
    }

    // The proxy sends to both replicas, and the replicas trust the proxy's own address.
    let proxy_address = file["services"]["proxy"]["networks"]["default"]["ipv4_address"]
        .as_str()
        .expect("the proxy's fixed address");
    for name in ["api-a", "api-b"] {
        assert_eq!(env(name, "OPTICS_TRUSTED_PROXIES"), proxy_address);
        let port = env(name, "OPTICS_LISTEN")
            .rsplit(':')
            .next()
            .unwrap()
            .to_owned();
        assert!(
            NGINX.contains(&format!("server {name}:{port}")),
            "nginx.conf does not send to {name}:{port}"
        );
    }
}

//! Configuration of the Kafka bus: the `kafka://` URL, prefixes, timeouts and extra librdkafka
//! properties, validated before any client is created.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// The port of a broker address that names none (Kafka's registered port).
pub const DEFAULT_KAFKA_PORT: u16 = 9092;

/// Longest legal Kafka topic name (the broker's limit).
const MAX_TOPIC_LEN: usize = 249;

/// librdkafka properties that carry the bus's guarantees (or its identity) and so cannot be
/// overridden through [`KafkaBusConfig::producer_properties`] or
/// [`KafkaBusConfig::consumer_properties`].
pub const PROTECTED_PROPERTIES: &[&str] = &[
    "bootstrap.servers",
    "metadata.broker.list",
    "group.id",
    "enable.idempotence",
    "acks",
    "request.required.acks",
    "enable.auto.commit",
    "enable.auto.offset.store",
    "auto.offset.reset",
    "enable.partition.eof",
];

/// What can be wrong with a Kafka bus configuration or its client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KafkaBusError {
    /// The `kafka://` URL is malformed.
    #[error("invalid Kafka URL `{url}`: {reason}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// What is wrong.
        reason: String,
    },
    /// An option (URL query parameter or config field) has a bad value.
    #[error("invalid Kafka bus option `{name}` = `{value}`: {reason}")]
    InvalidOption {
        /// The option's name.
        name: String,
        /// The value given.
        value: String,
        /// What is wrong.
        reason: String,
    },
    /// An extra librdkafka property would override one the bus's guarantees rest on.
    #[error("the librdkafka property `{name}` is set by the Kafka bus and cannot be overridden")]
    ProtectedProperty {
        /// The property.
        name: String,
    },
    /// librdkafka refused the configuration or could not create the client.
    #[error("Kafka client: {0}")]
    Client(String),
}

/// One bootstrap broker, `host:port`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerAddress {
    /// Host name, IPv4 address, or IPv6 address without brackets.
    pub host: String,
    /// TCP port.
    pub port: u16,
}

impl fmt::Display for BrokerAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

/// [`KafkaBusConfig::max_message_bytes`] by default.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 900_000;
/// The smallest accepted `max_message_bytes`: a few rows of any dataset fit.
pub const MIN_MESSAGE_BYTES: usize = 16 * 1024;
/// The largest accepted `max_message_bytes` (librdkafka's own ceiling is 1,000,000,000).
pub const MAX_MESSAGE_BYTES: usize = 100 * 1024 * 1024;
/// The accepted `session_timeout_ms`, milliseconds (librdkafka's default is 45,000).
const SESSION_TIMEOUT_MS: std::ops::RangeInclusive<u32> = 6_000..=300_000;

/// Everything a [`KafkaBus`](super::KafkaBus) needs. Build it from a URL
/// ([`KafkaBusConfig::from_url`]) or from [`KafkaBusConfig::new`] and set fields; it is
/// validated again when the bus is created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KafkaBusConfig {
    /// The brokers the clients bootstrap from (at least one).
    pub brokers: Vec<BrokerAddress>,
    /// Prepended to every topic name (`"prod."` turns `optics.option_quotes` into
    /// `prod.optics.option_quotes`), so deployments can share a cluster. Legal topic
    /// characters only (`A–Z a–z 0–9 . _ -`); empty by default.
    pub topic_prefix: String,
    /// Prepended to every consumer group id, for the same reason. Empty by default.
    pub group_prefix: String,
    /// The `client.id` the brokers see (logs, quotas). `optics` by default.
    pub client_id: String,
    /// Messages the producer queues before a publish waits (librdkafka
    /// `queue.buffering.max.messages`); the capacity [`Bus::pressure`](optics_schemas::Bus::pressure) reports.
    pub producer_queue_messages: u32,
    /// Bytes the producer queues before a publish waits (librdkafka
    /// `queue.buffering.max.kbytes`, rounded up to KiB). Whichever bound is hit first holds
    /// publishers back.
    pub producer_queue_bytes: u64,
    /// How long the producer waits to fill a request (librdkafka `linger.ms`).
    pub linger: Duration,
    /// How long librdkafka keeps trying to deliver a message before reporting it failed
    /// (`message.timeout.ms`); it bounds how long [`Bus::flush`](optics_schemas::Bus::flush) can wait.
    pub delivery_timeout: Duration,
    /// How long [`Bus::subscribe`](optics_schemas::Bus::subscribe) waits for the member's first partition assignment.
    pub group_join_timeout: Duration,
    /// How long a commit keeps retrying while the group rebalances.
    pub commit_timeout: Duration,
    /// Timeout of the metadata, watermark and committed-offset requests made while a closed
    /// bus drains.
    pub request_timeout: Duration,
    /// The largest record value the bus sends: a data batch that encodes larger is sent as
    /// several consecutive messages of fewer rows (same key, so same partition, in order).
    /// Kafka's brokers refuse records above `message.max.bytes` (about 1 MB by default) and
    /// librdkafka refuses them before sending: a whole index chain's quotes are larger. The
    /// default, 900,000 bytes, stays under both with room for the record's overhead;
    /// `kafka://…?max_message_bytes=N` changes it.
    pub max_message_bytes: usize,
    /// Extra librdkafka producer properties, applied after the bus's own (tuning only: the
    /// [`PROTECTED_PROPERTIES`] are refused).
    pub producer_properties: Vec<(String, String)>,
    /// Extra librdkafka consumer properties (`session.timeout.ms`, `fetch.wait.max.ms`, …),
    /// under the same rule.
    pub consumer_properties: Vec<(String, String)>,
}

impl KafkaBusConfig {
    /// A configuration with the given brokers and every other field at its default.
    pub fn new(brokers: Vec<BrokerAddress>) -> Self {
        Self {
            brokers,
            topic_prefix: String::new(),
            group_prefix: String::new(),
            client_id: "optics".to_owned(),
            producer_queue_messages: 4_096,
            producer_queue_bytes: 256 * 1024 * 1024,
            linger: Duration::from_millis(5),
            delivery_timeout: Duration::from_secs(120),
            group_join_timeout: Duration::from_secs(60),
            commit_timeout: Duration::from_secs(30),
            request_timeout: Duration::from_secs(10),
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            producer_properties: Vec::new(),
            consumer_properties: Vec::new(),
        }
    }

    /// Parses `kafka://host[:port][,host[:port]…][/][?option=value&…]`.
    ///
    /// A broker without a port uses [`DEFAULT_KAFKA_PORT`]; IPv6 addresses go in brackets
    /// (`[::1]:9092`). Options: `topic_prefix`, `group_prefix`, `client_id`. Credentials
    /// (`user@host`) are refused: this build speaks plaintext Kafka only (no TLS, no SASL).
    ///
    /// # Errors
    /// [`KafkaBusError::InvalidUrl`] for a malformed URL, [`KafkaBusError::InvalidOption`] for
    /// an unknown option or a bad value.
    pub fn from_url(url: &str) -> Result<Self, KafkaBusError> {
        let invalid = |reason: &str| KafkaBusError::InvalidUrl {
            url: url.to_owned(),
            reason: reason.to_owned(),
        };
        let Some((scheme, rest)) = url.split_once("://") else {
            return Err(invalid("expected `kafka://host:port`"));
        };
        if !scheme.eq_ignore_ascii_case("kafka") {
            return Err(invalid(&format!(
                "unsupported scheme `{scheme}` (only `kafka`: plaintext, no TLS or SASL in this build)"
            )));
        }
        let (authority, query) = match rest.split_once('?') {
            Some((a, q)) => (a, Some(q)),
            None => (rest, None),
        };
        let authority = authority.strip_suffix('/').unwrap_or(authority);
        if authority.contains('/') {
            return Err(invalid("a Kafka URL has no path"));
        }
        if authority.contains('@') {
            return Err(invalid(
                "credentials in the URL are not supported (this build has no SASL)",
            ));
        }
        if authority.is_empty() {
            return Err(invalid("no broker"));
        }
        let brokers = authority
            .split(',')
            .map(|b| parse_broker(b).map_err(|reason| invalid(&reason)))
            .collect::<Result<Vec<_>, _>>()?;
        let mut config = Self::new(brokers);
        for pair in query.into_iter().flat_map(|q| q.split('&')) {
            if pair.is_empty() {
                continue;
            }
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            match name {
                "topic_prefix" => config.topic_prefix = value.to_owned(),
                "group_prefix" => config.group_prefix = value.to_owned(),
                "client_id" => config.client_id = value.to_owned(),
                "session_timeout_ms" => {
                    let millis = number_option(name, value, SESSION_TIMEOUT_MS)?;
                    // A tenth of the session between heartbeats (librdkafka's default is a
                    // fixed 3 s): a member learns of a rebalance, and rejoins, that much sooner.
                    config.consumer_properties.extend([
                        ("session.timeout.ms".to_owned(), millis.to_string()),
                        (
                            "heartbeat.interval.ms".to_owned(),
                            (millis / 10).to_string(),
                        ),
                    ]);
                }
                "max_message_bytes" => {
                    config.max_message_bytes =
                        number_option(name, value, MIN_MESSAGE_BYTES..=MAX_MESSAGE_BYTES)?;
                }
                _ => {
                    return Err(KafkaBusError::InvalidOption {
                        name: name.to_owned(),
                        value: value.to_owned(),
                        reason: "unknown option (known: topic_prefix, group_prefix, client_id, \
                                 max_message_bytes, session_timeout_ms)"
                            .to_owned(),
                    });
                }
            }
        }
        config.validate()?;
        Ok(config)
    }

    /// The `bootstrap.servers` value: the brokers, comma-separated.
    pub fn bootstrap_servers(&self) -> String {
        self.brokers
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The Kafka topic a bus topic maps to: the prefix, then the name.
    ///
    /// # Errors
    /// [`KafkaBusError::InvalidOption`] if the result is not a legal Kafka topic name.
    pub fn kafka_topic(&self, topic: &str) -> Result<String, KafkaBusError> {
        let full = format!("{}{topic}", self.topic_prefix);
        check_topic_name(&full).map_err(|reason| KafkaBusError::InvalidOption {
            name: "topic".to_owned(),
            value: full.clone(),
            reason,
        })?;
        Ok(full)
    }

    /// The Kafka consumer group id a bus group maps to: the prefix, then the name.
    ///
    /// # Errors
    /// [`KafkaBusError::InvalidOption`] for an empty group or one with control characters.
    pub fn kafka_group(&self, group: &str) -> Result<String, KafkaBusError> {
        if group.is_empty() || group.chars().any(char::is_control) {
            return Err(KafkaBusError::InvalidOption {
                name: "group".to_owned(),
                value: group.to_owned(),
                reason: "a group must be non-empty without control characters".to_owned(),
            });
        }
        Ok(format!("{}{group}", self.group_prefix))
    }

    /// Checks every field's rule.
    ///
    /// # Errors
    /// [`KafkaBusError::InvalidOption`] naming the first bad field, or
    /// [`KafkaBusError::ProtectedProperty`].
    pub fn validate(&self) -> Result<(), KafkaBusError> {
        let invalid = |name: &str, value: String, reason: &str| KafkaBusError::InvalidOption {
            name: name.to_owned(),
            value,
            reason: reason.to_owned(),
        };
        if self.brokers.is_empty() {
            return Err(invalid("brokers", String::new(), "at least one broker"));
        }
        for broker in &self.brokers {
            if let Err(reason) = check_host(&broker.host) {
                return Err(invalid("brokers", broker.to_string(), &reason));
            }
            if broker.port == 0 {
                return Err(invalid("brokers", broker.to_string(), "port 0"));
            }
        }
        if !self.topic_prefix.is_empty() && !self.topic_prefix.bytes().all(is_topic_byte) {
            return Err(invalid(
                "topic_prefix",
                self.topic_prefix.clone(),
                "only A-Z a-z 0-9 . _ - may appear in a Kafka topic name",
            ));
        }
        if self.topic_prefix.len() >= MAX_TOPIC_LEN {
            return Err(invalid(
                "topic_prefix",
                self.topic_prefix.clone(),
                "leaves no room for the topic name (249 characters at most)",
            ));
        }
        if self.group_prefix.chars().any(char::is_control) {
            return Err(invalid(
                "group_prefix",
                self.group_prefix.clone(),
                "control characters",
            ));
        }
        if self.client_id.is_empty() || !self.client_id.bytes().all(is_topic_byte) {
            return Err(invalid(
                "client_id",
                self.client_id.clone(),
                "must be non-empty A-Z a-z 0-9 . _ -",
            ));
        }
        if self.producer_queue_messages == 0 {
            return Err(invalid(
                "producer_queue_messages",
                "0".to_owned(),
                "at least 1",
            ));
        }
        if self.producer_queue_bytes < 1024 {
            return Err(invalid(
                "producer_queue_bytes",
                self.producer_queue_bytes.to_string(),
                "at least 1 KiB",
            ));
        }
        for (name, value) in [
            ("delivery_timeout", self.delivery_timeout),
            ("group_join_timeout", self.group_join_timeout),
            ("commit_timeout", self.commit_timeout),
            ("request_timeout", self.request_timeout),
        ] {
            if value.is_zero() {
                return Err(invalid(name, "0s".to_owned(), "must be positive"));
            }
        }
        for (name, _) in self
            .producer_properties
            .iter()
            .chain(&self.consumer_properties)
        {
            if PROTECTED_PROPERTIES.contains(&name.as_str()) {
                return Err(KafkaBusError::ProtectedProperty { name: name.clone() });
            }
        }
        Ok(())
    }
}

impl FromStr for KafkaBusConfig {
    type Err = KafkaBusError;

    fn from_str(url: &str) -> Result<Self, Self::Err> {
        Self::from_url(url)
    }
}

/// `host`, `host:port`, `[v6]` or `[v6]:port`.
fn parse_broker(text: &str) -> Result<BrokerAddress, String> {
    if text.is_empty() {
        return Err("empty broker in the list".to_owned());
    }
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest
            .split_once(']')
            .ok_or_else(|| format!("`{text}`: unclosed `[`"))?;
        let port = match after {
            "" => None,
            p => Some(
                p.strip_prefix(':')
                    .ok_or_else(|| format!("`{text}`: expected `:port` after `]`"))?,
            ),
        };
        (host, port)
    } else {
        match text.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (text, None),
        }
    };
    check_host(host).map_err(|reason| format!("`{text}`: {reason}"))?;
    let port = match port {
        None => DEFAULT_KAFKA_PORT,
        Some(p) => match p.parse::<u16>() {
            Ok(0) | Err(_) => return Err(format!("`{text}`: the port must be 1 to 65535")),
            Ok(port) => port,
        },
    };
    Ok(BrokerAddress {
        host: host.to_owned(),
        port,
    })
}

fn check_host(host: &str) -> Result<(), String> {
    if host.is_empty() {
        return Err("empty host".to_owned());
    }
    if host.contains(':') {
        // IPv6: hex digits, colons, dots (embedded IPv4).
        return if host
            .bytes()
            .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.')
        {
            Ok(())
        } else {
            Err(format!("`{host}` is not an IPv6 address"))
        };
    }
    if host
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_')
    {
        Ok(())
    } else {
        Err(format!(
            "`{host}` is not a host name (letters, digits, `-`, `.`, `_`)"
        ))
    }
}

fn is_topic_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-'
}

/// Kafka's rule for topic names.
fn check_topic_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name == "." || name == ".." {
        return Err("not a usable topic name".to_owned());
    }
    if name.len() > MAX_TOPIC_LEN {
        return Err(format!("longer than {MAX_TOPIC_LEN} characters"));
    }
    if !name.bytes().all(is_topic_byte) {
        return Err("only A-Z a-z 0-9 . _ - may appear in a Kafka topic name".to_owned());
    }
    Ok(())
}

/// The URL option `name`'s `value` as a whole number in `range`, or an
/// [`KafkaBusError::InvalidOption`] that states the range.
fn number_option<T>(
    name: &str,
    value: &str,
    range: std::ops::RangeInclusive<T>,
) -> Result<T, KafkaBusError>
where
    T: std::str::FromStr + PartialOrd + fmt::Display,
{
    value
        .parse::<T>()
        .ok()
        .filter(|n| range.contains(n))
        .ok_or_else(|| KafkaBusError::InvalidOption {
            name: name.to_owned(),
            value: value.to_owned(),
            reason: format!("a whole number from {} to {}", range.start(), range.end()),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brokers_parse_with_and_without_ports() {
        assert_eq!(
            parse_broker("kafka-1:19092").unwrap(),
            BrokerAddress {
                host: "kafka-1".to_owned(),
                port: 19092
            }
        );
        assert_eq!(parse_broker("broker_2").unwrap().port, DEFAULT_KAFKA_PORT);
        let v6 = parse_broker("[::1]:9093").unwrap();
        assert_eq!((v6.host.as_str(), v6.port), ("::1", 9093));
        assert_eq!(v6.to_string(), "[::1]:9093");
        assert_eq!(parse_broker("[fe80::2]").unwrap().port, DEFAULT_KAFKA_PORT);
        for bad in [
            "",
            ":9092",
            "h:0",
            "h:70000",
            "h:x",
            "[::1",
            "[::1]9092",
            "h st:1",
        ] {
            assert!(parse_broker(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn topic_names_follow_kafka_rules() {
        assert!(check_topic_name("optics.option_quotes").is_ok());
        assert!(check_topic_name(&"a".repeat(249)).is_ok());
        for bad in ["", ".", "..", "a b", "a/b", "ü"] {
            assert!(check_topic_name(bad).is_err(), "{bad:?}");
        }
        assert!(check_topic_name(&"a".repeat(250)).is_err());
    }
}

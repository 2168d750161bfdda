//! What a link is asked to be, written the way an operator types it, and the named profiles.
//!
//! ```text
//! rtt:85ms,jitter:5ms,loss:0.5%            a transatlantic path
//! rtt:320ms,jitter:30ms,loss:5%,burst:4    losses come in bursts of 4 datagrams on average
//! rtt:40ms,jitter:10ms,reorder             jitter independent per datagram: reorders
//! rate:10mbit,queue:50ms                   a 10 Mbit/s bottleneck, 50 ms of tail-drop queue
//! off                                      no conditions (what the relay was before links)
//! ```
//!
//! Every figure applies to each direction on its own, so a handshake meets it too: `rtt` is split
//! evenly into two one-way delays; `jitter:J` lets the round trip vary within ±J (each one-way
//! delay within ±J/2), as a slowly varying queueing delay that never reorders unless `reorder`
//! asks for independent jitter per datagram; `loss` is each direction's share of datagrams lost
//! (a round trip loses about twice that); `burst:B` makes the losses bursty with a mean burst of
//! B datagrams at the same average (Gilbert–Elliott, see [`crate::loss`]); `rate` caps each
//! direction's bandwidth behind a tail-drop queue of `queue` bytes (or that much time at the
//! rate; 100 ms by default).

use std::{fmt, str::FromStr, time::Duration};

/// The conditions of one node's link, the same in both directions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LinkSpec {
    pub rtt: Duration,
    /// The round trip varies within ±`jitter`.
    pub jitter: Duration,
    /// Jitter independent per datagram (which reorders) instead of a slowly varying delay.
    pub reorder: bool,
    /// Each direction's share of datagrams lost, 0 to 1.
    pub loss: f64,
    /// Mean length of a loss burst in datagrams; `None` for independent losses.
    pub burst: Option<f64>,
    /// Bandwidth cap in bits per second.
    pub rate: Option<u64>,
    /// Tail-drop queue in bytes in front of the cap (only with `rate`).
    pub queue: Option<u64>,
}

/// A link spec or profile name that does not parse, with what was expected.
#[derive(Debug, Clone, PartialEq)]
pub struct SpecError(pub String);

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SpecError {}

fn bad(what: impl Into<String>) -> SpecError {
    SpecError(what.into())
}

/// The queue a cap gets when none is given: this long at the capped rate.
const DEFAULT_QUEUE_TIME: Duration = Duration::from_millis(100);
/// The smallest default queue: two full datagrams, so a slow cap still takes a datagram or two.
const MIN_QUEUE: u64 = 2 * 1500;

impl LinkSpec {
    /// No conditions at all: datagrams go straight through.
    pub fn is_clean(&self) -> bool {
        *self == LinkSpec::default()
    }

    /// Each direction's fixed delay: half the round trip.
    pub fn one_way(&self) -> Duration {
        self.rtt / 2
    }

    /// How far each direction's delay strays from [`LinkSpec::one_way`]: half the RTT's jitter.
    pub fn one_way_jitter(&self) -> Duration {
        self.jitter / 2
    }

    /// The tail-drop queue in bytes, when there is a cap: as given, or 100 ms at the rate.
    pub fn queue_bytes(&self) -> Option<u64> {
        let rate = self.rate?;
        Some(self.queue.unwrap_or_else(|| {
            ((rate as f64 / 8.0 * DEFAULT_QUEUE_TIME.as_secs_f64()).round() as u64).max(MIN_QUEUE)
        }))
    }

    fn check(self) -> Result<LinkSpec, SpecError> {
        if !(0.0..=1.0).contains(&self.loss) {
            return Err(bad("loss must be between 0% and 100%"));
        }
        if let Some(burst) = self.burst {
            if !burst.is_finite() || burst < 1.0 {
                return Err(bad("burst is a mean burst length in datagrams: 1 or more"));
            }
            if self.loss <= 0.0 || self.loss >= 1.0 {
                return Err(bad("burst needs a loss between 0% and 100% (exclusive)"));
            }
        }
        if self.rate == Some(0) {
            return Err(bad("rate must be above 0"));
        }
        if self.queue.is_some() && self.rate.is_none() {
            return Err(bad(
                "queue needs a rate: it is the queue in front of the cap",
            ));
        }
        Ok(self)
    }
}

impl FromStr for LinkSpec {
    type Err = SpecError;

    fn from_str(text: &str) -> Result<LinkSpec, SpecError> {
        let text = text.trim();
        if text.is_empty() || text == "off" || text == "none" {
            return Ok(LinkSpec::default());
        }
        let mut spec = LinkSpec::default();
        let mut queue_time = None;
        for item in text.split(',').map(str::trim) {
            if item == "reorder" {
                spec.reorder = true;
                continue;
            }
            let (key, value) = item.split_once(':').ok_or_else(|| {
                bad(format!(
                    "{item:?} is not key:value (keys: rtt, jitter, loss, burst, rate, queue; \
                     or the word reorder)"
                ))
            })?;
            match key.trim() {
                "rtt" => spec.rtt = duration(value)?,
                "jitter" => spec.jitter = duration(value)?,
                "loss" => spec.loss = share(value)?,
                "burst" => {
                    spec.burst = Some(
                        value
                            .trim()
                            .parse()
                            .map_err(|_| bad(format!("burst {value:?} is not a number")))?,
                    )
                }
                "rate" => spec.rate = Some(rate(value)?),
                "queue" => match duration(value) {
                    Ok(time) => queue_time = Some(time),
                    Err(_) => spec.queue = Some(bytes(value)?),
                },
                other => {
                    return Err(bad(format!(
                        "unknown key {other:?}: rtt, jitter, loss, burst, rate, queue or reorder"
                    )));
                }
            }
        }
        if let (Some(time), Some(rate)) = (queue_time, spec.rate) {
            spec.queue = Some((rate as f64 / 8.0 * time.as_secs_f64()).round() as u64);
        } else if queue_time.is_some() {
            return Err(bad(
                "queue needs a rate: it is the queue in front of the cap",
            ));
        }
        spec.check()
    }
}

impl fmt::Display for LinkSpec {
    /// The canonical form, which parses back to the same spec.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_clean() {
            return f.write_str("off");
        }
        let mut items = Vec::new();
        if !self.rtt.is_zero() {
            items.push(format!("rtt:{}", ms(self.rtt)));
        }
        if !self.jitter.is_zero() {
            items.push(format!("jitter:{}", ms(self.jitter)));
        }
        if self.reorder {
            items.push("reorder".to_string());
        }
        if self.loss > 0.0 {
            items.push(format!("loss:{}%", trim(self.loss * 100.0)));
        }
        if let Some(burst) = self.burst {
            items.push(format!("burst:{}", trim(burst)));
        }
        if let Some(rate) = self.rate {
            items.push(format!("rate:{}", rate_text(rate)));
        }
        if let Some(queue) = self.queue {
            items.push(format!("queue:{queue}B"));
        }
        f.write_str(&items.join(","))
    }
}

fn ms(d: Duration) -> String {
    format!("{}ms", trim(d.as_secs_f64() * 1e3))
}

/// At most 6 decimals, trailing zeros cut: `0.5`, not `0.5000000000000001`.
fn trim(x: f64) -> String {
    let text = format!("{x:.6}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn rate_text(bits: u64) -> String {
    for (unit, size) in [
        ("gbit", 1_000_000_000),
        ("mbit", 1_000_000),
        ("kbit", 1_000),
    ] {
        if bits.is_multiple_of(size) {
            return format!("{}{unit}", bits / size);
        }
    }
    format!("{bits}bit")
}

/// A number and the suffix after it.
fn split_number(text: &str) -> Result<(f64, &str), SpecError> {
    let text = text.trim();
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let number: f64 = text[..end]
        .parse()
        .map_err(|_| bad(format!("{text:?} does not start with a number")))?;
    Ok((number, text[end..].trim()))
}

/// `85ms`, `0.3s`, `500us`.
pub fn duration(text: &str) -> Result<Duration, SpecError> {
    let (n, unit) = split_number(text)?;
    let secs = match unit {
        "s" => n,
        "ms" => n / 1e3,
        "us" | "µs" => n / 1e6,
        _ => {
            return Err(bad(format!(
                "{text:?} is not a duration (85ms, 0.3s, 500us)"
            )));
        }
    };
    Ok(Duration::from_secs_f64(secs))
}

/// `0.5%` or a fraction `0.005`.
fn share(text: &str) -> Result<f64, SpecError> {
    let (n, unit) = split_number(text)?;
    match unit {
        "%" => Ok(n / 100.0),
        "" => Ok(n),
        _ => Err(bad(format!("{text:?} is not a share (0.5% or 0.005)"))),
    }
}

/// `10mbit`, `500kbit`, `1gbit`, `64000bit`.
fn rate(text: &str) -> Result<u64, SpecError> {
    let (n, unit) = split_number(text)?;
    let scale = match unit {
        "bit" => 1.0,
        "kbit" => 1e3,
        "mbit" => 1e6,
        "gbit" => 1e9,
        _ => {
            return Err(bad(format!(
                "{text:?} is not a rate (10mbit, 500kbit, 1gbit)"
            )));
        }
    };
    Ok((n * scale).round() as u64)
}

/// `64kB`, `1MB`, `3000B` or a bare byte count.
fn bytes(text: &str) -> Result<u64, SpecError> {
    let (n, unit) = split_number(text)?;
    let scale = match unit {
        "" | "B" => 1.0,
        "kB" | "KB" => 1e3,
        "MB" => 1e6,
        _ => {
            return Err(bad(format!(
                "{text:?} is not a queue size (64kB, 3000B) or time (50ms)"
            )));
        }
    };
    Ok((n * scale).round() as u64)
}

/// The named profiles, from measurements of the real network (about 70% of stake in Europe,
/// 20% in North America; Agave treats 320 ms as the largest legitimate RTT). A profile with
/// several links gives them to the nodes in turn.
pub const PROFILES: [(&str, &[&str]); 5] = [
    ("eu", &[EU]),
    ("na", &[NA]),
    ("apac", &[APAC]),
    ("hostile", &["rtt:320ms,jitter:30ms,loss:5%,burst:4"]),
    ("mainnet", &[EU, NA, APAC]),
];
const EU: &str = "rtt:20ms,jitter:2ms,loss:0.1%";
const NA: &str = "rtt:85ms,jitter:5ms,loss:0.5%";
const APAC: &str = "rtt:230ms,jitter:15ms,loss:2%";

/// Each of `nodes` nodes' link under the profile `name`: node K gets the profile's K-th link,
/// counting round (so `mainnet` puts nodes 0, 1, 2 in eu, na, apac).
pub fn profile(name: &str, nodes: usize) -> Result<Vec<LinkSpec>, SpecError> {
    let (_, links) = PROFILES.iter().find(|(n, _)| *n == name).ok_or_else(|| {
        let names: Vec<&str> = PROFILES.iter().map(|(n, _)| *n).collect();
        bad(format!("unknown profile {name:?}: {}", names.join(", ")))
    })?;
    (0..nodes).map(|k| links[k % links.len()].parse()).collect()
}

/// One node's link as `--link` takes it: `N=SPEC`.
pub fn node_link(text: &str) -> Result<(usize, LinkSpec), SpecError> {
    let (node, spec) = text
        .split_once('=')
        .ok_or_else(|| bad(format!("{text:?} is not N=SPEC (1=rtt:85ms,loss:0.5%)")))?;
    let node = node
        .trim()
        .parse()
        .map_err(|_| bad(format!("{node:?} is not a node number")))?;
    Ok((node, spec.parse()?))
}

/// Every node's link at the start: the profile's (none without one), then each node's own.
pub fn node_links(
    profile_name: Option<&str>,
    own: &[(usize, LinkSpec)],
    nodes: usize,
) -> Result<Vec<LinkSpec>, SpecError> {
    let mut links = match profile_name {
        Some(name) => profile(name, nodes)?,
        None => vec![LinkSpec::default(); nodes],
    };
    for (node, link) in own {
        let slot = links.get_mut(*node).ok_or_else(|| {
            bad(format!(
                "--link {node}=…: no node {node} (nodes 0 to {})",
                nodes.saturating_sub(1)
            ))
        })?;
        *slot = link.clone();
    }
    Ok(links)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_parses_and_prints_back_the_same() {
        let spec: LinkSpec = "rtt:85ms,jitter:5ms,loss:0.5%".parse().unwrap();
        assert_eq!(spec.rtt, Duration::from_millis(85));
        assert_eq!(spec.one_way(), Duration::from_micros(42_500));
        assert_eq!(spec.one_way_jitter(), Duration::from_micros(2_500));
        assert!((spec.loss - 0.005).abs() < 1e-12);
        assert_eq!(spec.to_string(), "rtt:85ms,jitter:5ms,loss:0.5%");
        let all = "rtt:320ms,jitter:30ms,reorder,loss:5%,burst:4,rate:10mbit,queue:62500B";
        assert_eq!(all.parse::<LinkSpec>().unwrap().to_string(), all);
        assert_eq!("off".parse::<LinkSpec>().unwrap(), LinkSpec::default());
    }

    #[test]
    fn a_queue_given_in_time_is_that_long_at_the_rate() {
        let spec: LinkSpec = "rate:8mbit,queue:50ms".parse().unwrap();
        assert_eq!(spec.queue_bytes(), Some(50_000));
        let default: LinkSpec = "rate:8mbit".parse().unwrap();
        assert_eq!(default.queue_bytes(), Some(100_000));
    }

    #[test]
    fn nonsense_is_refused_with_what_was_expected() {
        for (text, says) in [
            ("rtt:85", "duration"),
            ("loss:150%", "between"),
            ("burst:3", "needs a loss"),
            ("queue:10kB", "needs a rate"),
            ("speed:1", "unknown key"),
            ("rtt", "key:value"),
        ] {
            let error = text.parse::<LinkSpec>().unwrap_err().to_string();
            assert!(error.contains(says), "{text}: {error}");
        }
    }

    #[test]
    fn mainnet_puts_three_nodes_in_three_regions() {
        let links = profile("mainnet", 4).unwrap();
        let rtts: Vec<u64> = links.iter().map(|l| l.rtt.as_millis() as u64).collect();
        assert_eq!(rtts, [20, 85, 230, 20]);
        let hostile = &profile("hostile", 1).unwrap()[0];
        assert_eq!((hostile.loss, hostile.burst), (0.05, Some(4.0)));
        assert!(profile("moon", 3).unwrap_err().0.contains("mainnet"));
    }

    #[test]
    fn a_node_s_own_link_replaces_the_profile_s() {
        let own = [node_link("1=rtt:85ms,jitter:5ms,loss:0.5%").unwrap()];
        let links = node_links(Some("eu"), &own, 3).unwrap();
        let text: Vec<String> = links.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            [
                "rtt:20ms,jitter:2ms,loss:0.1%",
                "rtt:85ms,jitter:5ms,loss:0.5%",
                "rtt:20ms,jitter:2ms,loss:0.1%"
            ]
        );
        assert_eq!(node_links(None, &[], 2).unwrap()[1].to_string(), "off");
        let far = [node_link("3=rtt:1ms").unwrap()];
        assert!(
            node_links(None, &far, 3)
                .unwrap_err()
                .0
                .contains("no node 3")
        );
        assert!(node_link("rtt:1ms").is_err());
    }
}

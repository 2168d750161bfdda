//! The values several commands' flags take: a pace, a resend interval, a compute-unit price,
//! a route, and their bounds. Each parses with a message that says what to give instead.

/// `--with-compute-unit-price`: a price, or `auto` to take it from recent fees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnitPrice {
    /// Micro-lamports per compute unit.
    Fixed(u64),
    Auto,
}

pub(super) fn parse_unit_price(s: &str) -> Result<UnitPrice, String> {
    if s.eq_ignore_ascii_case("auto") {
        return Ok(UnitPrice::Auto);
    }
    s.parse::<u64>().map(UnitPrice::Fixed).map_err(|_| {
        format!(
            "{s:?} is neither a price in micro-lamports (0 to {}) nor `auto`",
            u64::MAX
        )
    })
}

/// The compute-unit limit a transaction can ask for (the runtime's `MAX_COMPUTE_UNIT_LIMIT`).
pub const MAX_CU_LIMIT: u32 = crate::deploy::compute::MAX_UNIT_LIMIT;

/// The highest fixed pace accepted, in transactions per second: far above what one sender
/// reaches, low enough that the pacer's interval stays a meaningful duration.
pub const MAX_RATE: f64 = 1_000_000.0;

/// A target pace: a number of transactions per second, or `max` for the closed loop.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RateArg {
    Fixed(f64),
    Max,
}

impl std::str::FromStr for RateArg {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.eq_ignore_ascii_case("max") {
            return Ok(RateArg::Max);
        }
        match s.trim().parse::<f64>() {
            Ok(r) if r.is_finite() && (1.0..=MAX_RATE).contains(&r) => Ok(RateArg::Fixed(r)),
            Ok(r) if r.is_finite() && r > MAX_RATE => Err(format!(
                "{s:?} is too fast: give at most {MAX_RATE} transactions per second, or `max`"
            )),
            _ => Err(format!(
                "{s:?} is not a rate: give transactions per second (at least 1) or `max`"
            )),
        }
    }
}

/// The resend interval: a number of slots (`10`, `10slots`) or a time (`4s`, `1500ms`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ResendInterval(pub std::time::Duration);

/// Slot time the interval's slot count is converted with.
pub const SLOT_MS: u64 = 400;

/// The longest resend interval: a blockhash expires after about a minute, so a longer wait
/// only matters for durable-nonce transactions, and an hour is plenty for those.
pub const MAX_RESEND_INTERVAL: std::time::Duration = std::time::Duration::from_secs(3600);

impl std::str::FromStr for ResendInterval {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        let (num, unit_ms) = if let Some(n) = t.strip_suffix("ms") {
            (n, 1.0)
        } else if let Some(n) = t.strip_suffix('s').filter(|n| !n.ends_with("slot")) {
            (n, 1000.0)
        } else if let Some(n) = t.strip_suffix("slots").or_else(|| t.strip_suffix("slot")) {
            (n, SLOT_MS as f64)
        } else {
            (t, SLOT_MS as f64)
        };
        let secs = match num.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 => v * unit_ms / 1000.0,
            _ => {
                return Err(format!(
                    "{s:?} is not an interval: give slots (`10`) or a time (`4s`, `1500ms`)"
                ));
            }
        };
        // Compared as seconds first: a huge count of slots does not fit in a Duration.
        if secs > MAX_RESEND_INTERVAL.as_secs_f64() {
            return Err(format!(
                "{s:?} is too long: the resend interval is at most {} s",
                MAX_RESEND_INTERVAL.as_secs()
            ));
        }
        Ok(ResendInterval(std::time::Duration::from_secs_f64(secs)))
    }
}

/// `--via`: where sends go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    /// QUIC streams to the leaders' TPUs.
    Tpu,
    /// An RPC node's `sendTransaction`: at `-u`'s URL (`None`) or this one.
    Rpc(Option<String>),
}

impl std::str::FromStr for Route {
    type Err = String;

    /// The value is never quoted back: `rpc=URL` may carry an API key.
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "tpu" => Ok(Route::Tpu),
            "rpc" => Ok(Route::Rpc(None)),
            _ => match s.strip_prefix("rpc=") {
                Some(url) if !url.is_empty() => {
                    crate::redact::register_url(url);
                    Ok(Route::Rpc(Some(url.to_string())))
                }
                _ => Err("--via takes tpu, rpc, or rpc=URL".to_string()),
            },
        }
    }
}

/// The most upcoming leaders `--fanout` may add to each send: every one multiplies the load on
/// the leaders' stream budgets, and the schedule window the engine follows is only so long.
pub const MAX_FANOUT: usize = 16;

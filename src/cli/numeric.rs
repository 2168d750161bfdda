//! Value parsers of the fractional numeric flags. Each rejects what is not a number, NaN,
//! infinities, negatives and values out of the flag's range with a message that says why;
//! clap prefixes it with the flag and exits with 2, a usage error, before anything runs (so no
//! such value can reach `Duration::from_secs_f64`, which panics on them).

/// `--send-timeout`: shorter than 50 ms no QUIC handshake completes; longer than 10
/// minutes a stuck send would hold its slot in the pipeline for no purpose.
pub const SEND_TIMEOUT_S: std::ops::RangeInclusive<f64> = 0.05..=600.0;
/// `--deadline`: positive, at most a year (it must fit a `Duration` with room to add).
pub const MAX_DEADLINE_S: f64 = 365.0 * 24.0 * 3600.0;
/// `--metrics-linger`: up to an hour, several scrape intervals of any setup.
pub const MAX_LINGER_S: f64 = 3600.0;

/// A finite, non-negative number of seconds.
fn seconds(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if v.is_nan() {
        return Err(format!("{s:?} is not a number of seconds"));
    }
    if v.is_infinite() {
        return Err(format!("{s:?} is not a finite number of seconds"));
    }
    if v < 0.0 {
        return Err(format!("{s:?} is negative: give a number of seconds"));
    }
    Ok(v)
}

pub fn send_timeout(s: &str) -> Result<f64, String> {
    let v = seconds(s)?;
    if !SEND_TIMEOUT_S.contains(&v) {
        return Err(format!(
            "{s:?} is out of range: give {} to {} seconds",
            SEND_TIMEOUT_S.start(),
            SEND_TIMEOUT_S.end()
        ));
    }
    Ok(v)
}

pub fn linger(s: &str) -> Result<f64, String> {
    let v = seconds(s)?;
    if v > MAX_LINGER_S {
        return Err(format!(
            "{s:?} is out of range: give 0 to {MAX_LINGER_S} seconds"
        ));
    }
    Ok(v)
}

pub fn deadline(s: &str) -> Result<f64, String> {
    let v = seconds(s)?;
    if v <= 0.0 || v > MAX_DEADLINE_S {
        return Err(format!(
            "{s:?} is out of range: give more than 0 and at most {MAX_DEADLINE_S} seconds"
        ));
    }
    Ok(v)
}

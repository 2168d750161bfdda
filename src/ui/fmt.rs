//! Number and key formatting shared by the panels. Everything here is total: NaN, infinities
//! and `u64::MAX` print as something readable instead of panicking or printing "NaN".

use std::time::Duration;

use solana_pubkey::Pubkey;
use solana_signature::Signature;

/// `"<N> tx/s"`: whole rates without decimals ("55 tx/s"), since that is how the user sets them.
pub fn rate(r: f64) -> String {
    if !r.is_finite() || r < 0.0 {
        return "- tx/s".into();
    }
    if (r - r.round()).abs() < 1e-9 {
        format!("{} tx/s", r.round() as u64)
    } else {
        format!("{r:.1} tx/s")
    }
}

/// A measured rate, always with one decimal so it doesn't flicker in width.
pub fn measured(r: f64) -> String {
    if !r.is_finite() || r < 0.0 {
        "- tx/s".into()
    } else {
        format!("{r:.1} tx/s")
    }
}

/// Thousands separated, for counts people compare at a glance.
pub fn count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A short span: "850 ms", "12.3 s", "4m05s", "2h03m".
pub fn span(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1_000 {
        format!("{ms} ms")
    } else if ms < 60_000 {
        format!("{:.1} s", d.as_secs_f64())
    } else {
        let s = d.as_secs();
        if s < 3_600 {
            format!("{}m{:02}s", s / 60, s % 60)
        } else {
            format!("{}h{:02}m", s / 3_600, (s / 60) % 60)
        }
    }
}

/// Wall-clock-like run time: "00:01:02".
pub fn clock(d: Duration) -> String {
    let s = d.as_secs();
    format!("{:02}:{:02}:{:02}", s / 3_600, (s / 60) % 60, s % 60)
}

/// A moment in the run, to the millisecond: "+12.345 s".
pub fn at(d: Duration) -> String {
    format!("+{}.{:03} s", d.as_secs(), d.subsec_millis())
}

fn abbreviate(full: &str, head: usize, tail: usize) -> String {
    let n = full.chars().count();
    if n <= head + tail + 1 {
        return full.to_string();
    }
    let h: String = full.chars().take(head).collect();
    let t: String = full.chars().skip(n - tail).collect();
    format!("{h}…{t}")
}

/// A base58 key or signature as txpace shows it everywhere (dashboard, progress lines): its
/// first 8 and last 4 characters, the first 8 being what people match against explorers.
pub fn short(base58: &str) -> String {
    abbreviate(base58, 8, 4)
}

pub fn short_sig(sig: &Signature) -> String {
    short(&sig.to_string())
}

pub fn short_key(key: &Pubkey) -> String {
    short(&key.to_string())
}

/// Latency bucket bound: "400ms", "1.6s", "12s".
pub fn bound_ms(ms: u64) -> String {
    if ms < 1_000 {
        format!("{ms}ms")
    } else if ms < 10_000 && !ms.is_multiple_of(1_000) {
        format!("{:.1}s", ms as f64 / 1_000.0)
    } else {
        format!("{}s", ms / 1_000)
    }
}

/// Final transactions, like `Counts::finished` but saturating: a screen must not panic on a
/// snapshot whose counters are nonsense.
pub fn finished(c: &crate::engine::snapshot::Counts) -> u64 {
    c.confirmed
        .saturating_add(c.failed)
        .saturating_add(c.expired)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_keep_their_first_8_and_last_4_characters() {
        let key = "7Np41oeYqPefeNQEHSv1UDhYrehxin3NStELsSKCT4K2";
        assert_eq!(short(key), "7Np41oeY…T4K2");
        assert_eq!(short_key(&key.parse().expect("a pubkey")), "7Np41oeY…T4K2");
        // Nothing to gain from abbreviating 13 characters or fewer.
        assert_eq!(short("1234567890123"), "1234567890123");
        assert_eq!(short("12345678901234"), "12345678…1234");
    }
}

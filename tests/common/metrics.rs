//! Scraping `txpace --metrics` the way Prometheus does (plain HTTP/1.0 `GET /metrics`), for the
//! end-to-end tests.

use std::{
    collections::HashMap,
    io::{Read, Write},
    net::{SocketAddr, TcpStream},
    time::Duration,
};

/// One scrape: `name{labels}` → value.
pub type Scrape = HashMap<String, f64>;

pub fn scrape(addr: SocketAddr) -> Option<Scrape> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    s.write_all(b"GET /metrics HTTP/1.0\r\nHost: txpace\r\n\r\n")
        .ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    assert!(head.starts_with("HTTP/1.0 200"), "{head}");
    assert!(head.contains("text/plain; version=0.0.4"), "{head}");
    Some(
        body.lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .filter_map(|l| {
                let (k, v) = l.rsplit_once(' ')?;
                Some((k.to_string(), v.parse().ok()?))
            })
            .collect(),
    )
}

pub fn get(s: &Scrape, key: &str) -> f64 {
    *s.get(key)
        .unwrap_or_else(|| panic!("no series {key}; have {:?}", s.keys()))
}

/// The address a run announced (`metrics: http://ADDR/metrics`) in `text`, if it did.
pub fn announced(text: &str) -> Option<SocketAddr> {
    text.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("metrics: http://")?;
        rest.split("/metrics").next()?.parse().ok()
    })
}

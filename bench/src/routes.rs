//! The routes benchmark: the founding workload's kind of batch (unique self-transfers at
//! 1,000,000 µlamports/CU) through txpace over QUIC to the leaders (`--via tpu`) and through the
//! RPC node's `sendTransaction` (`--via rpc`), on the same validator in one run, each route
//! measured as its own process; the order alternates between rounds so neither always goes
//! first onto a fresh validator.

use anyhow::{Result, bail};
use serde::Serialize;

use crate::{
    measure::Usage,
    send::{Endpoint, generate, start_validator, tempfile_dir, txpace_send},
};
use txpace::validator::ValidatorOptions;

#[derive(clap::Args)]
pub struct Args {
    /// Transactions per run
    #[arg(long, default_value_t = 2000)]
    count: usize,
    /// Pace of every run, in tx/s
    #[arg(long, default_value_t = 100.0)]
    rate: f64,
    /// Rounds (each runs both routes)
    #[arg(long, default_value_t = 2)]
    rounds: usize,
    /// Also write the figures as JSON here
    #[arg(long)]
    json: Option<std::path::PathBuf>,
}

#[derive(Debug, Serialize)]
struct RouteRun {
    route: &'static str,
    round: usize,
    landed: u64,
    total: u64,
    usage: Usage,
    /// Wall time over the N/rate bound.
    vs_bound: f64,
    sends_per_landed: Option<f64>,
    p50_ms: Option<u64>,
    p90_ms: Option<u64>,
}

pub fn run(args: Args) -> Result<()> {
    if !(args.rate.is_finite() && args.rate > 0.0) {
        bail!("--rate must be a positive number of tx/s");
    }
    let dir = tempfile_dir()?;
    let v = start_validator(ValidatorOptions::default())?;
    let ep = Endpoint::of_validator(&v);
    let bound = args.count as f64 / args.rate;
    let rate = args.rate.to_string();
    let mut runs = Vec::new();
    for round in 1..=args.rounds {
        let order: [&'static str; 2] = if round % 2 == 1 {
            ["tpu", "rpc"]
        } else {
            ["rpc", "tpu"]
        };
        for route in order {
            let file = generate(&ep, &dir, &format!("{route}-{round}.b64"), args.count, 4)?;
            let (usage, report) = txpace_send(&ep, &file, &["--rate", &rate, "--via", route])?;
            let s = &report["summary"];
            runs.push(RouteRun {
                route,
                round,
                landed: s["confirmed"].as_u64().unwrap_or(0),
                total: s["total"].as_u64().unwrap_or(0),
                vs_bound: usage.wall_s / bound,
                sends_per_landed: s["sends_per_landed"].as_f64(),
                p50_ms: s["latency_ms"]["p50"].as_u64(),
                p90_ms: s["latency_ms"]["p90"].as_u64(),
                usage,
            });
        }
    }
    println!(
        "\nRoutes: {} self-transfers over 4 payers at {} tx/s (bound N/rate = {bound:.1} s)",
        args.count, args.rate
    );
    println!(
        "{:<12} {:>5} {:>11} {:>7} {:>8} {:>6} {:>9} {:>8} {:>8}",
        "route", "round", "landed", "wall s", "x bound", "CPU s", "sends/tx", "p50 ms", "p90 ms"
    );
    let ms = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    for r in &runs {
        println!(
            "{:<12} {:>5} {:>11} {:>7.1} {:>8.3} {:>6.2} {:>9} {:>8} {:>8}",
            format!("--via {}", r.route),
            r.round,
            format!("{}/{}", r.landed, r.total),
            r.usage.wall_s,
            r.vs_bound,
            r.usage.cpu_s,
            r.sends_per_landed
                .map_or("n/a".to_string(), |v| format!("{v:.3}")),
            ms(r.p50_ms),
            ms(r.p90_ms),
        );
    }
    if let Some(path) = args.json {
        std::fs::write(&path, serde_json::to_string_pretty(&runs)?)?;
    }
    Ok(())
}

//! The routes benchmark: the founding workload's kind of batch (unique self-transfers at
//! 1,000,000 µlamports/CU) through txpace over QUIC to the leaders (`--via tpu`) and through the
//! RPC node's `sendTransaction` (`--via rpc`), on the same validator in one run, each route
//! measured as its own process; the order alternates between rounds so neither always goes
//! first onto a fresh validator. Landings are counted from the chain (the statuses of the
//! signatures in each run's report); a run whose process failed stops the benchmark with its
//! stderr tail.

use anyhow::{Result, bail};
use serde::Serialize;

use crate::{
    chain::{landed_slots, report_signatures},
    markdown::{self, Section},
    measure::Usage,
    txpace_child::txpace_send,
    workload::{Endpoint, generate, start_validator, tempfile_dir},
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
    /// Also write the table as Markdown here, headed by this command line
    #[arg(long)]
    markdown: Option<std::path::PathBuf>,
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
    let rpc = v.rpc_client();
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
            let run = txpace_send(&ep, &file, &["--rate", &rate, "--via", route])?;
            if let Some(f) = &run.failure {
                bail!("txpace --via {route} failed: {f}");
            }
            let (usage, s) = (run.usage, &run.report["summary"]);
            let landed = landed_slots(&rpc, &report_signatures(&run.report)?)?.len() as u64;
            runs.push(RouteRun {
                route,
                round,
                landed,
                total: args.count as u64,
                vs_bound: usage.wall_s / bound,
                // Sends of a transaction, whatever the route and however many leaders each
                // went to (the unit both routes share), over the landed count from the chain.
                sends_per_landed: s["sends"]
                    .as_u64()
                    .filter(|_| landed > 0)
                    .map(|n| n as f64 / landed as f64),
                p50_ms: s["latency_ms"]["p50"].as_u64(),
                p90_ms: s["latency_ms"]["p90"].as_u64(),
                usage,
            });
        }
    }
    let mut table = Section::new(format!(
        "Routes: {} self-transfers over 4 payers at {} tx/s (bound N/rate = {bound:.1} s)",
        args.count, args.rate
    ))
    .left("route")
    .right("round")
    .right("landed")
    .right("wall s")
    .right("x bound")
    .right("CPU s")
    .right("sends/tx")
    .right("p50 ms")
    .right("p90 ms");
    let ms = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    for r in &runs {
        table.row(vec![
            format!("--via {}", r.route),
            r.round.to_string(),
            format!("{}/{}", r.landed, r.total),
            format!("{:.1}", r.usage.wall_s),
            format!("{:.3}", r.vs_bound),
            format!("{:.2}", r.usage.cpu_s),
            r.sends_per_landed
                .map_or("n/a".to_string(), |v| format!("{v:.3}")),
            ms(r.p50_ms),
            ms(r.p90_ms),
        ]);
    }
    markdown::emit(&[table], args.markdown.as_deref())?;
    if let Some(path) = args.json {
        std::fs::write(&path, serde_json::to_string_pretty(&runs)?)?;
    }
    Ok(())
}

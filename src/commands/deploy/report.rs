//! The deploy's `--report` and its closing lines.

use std::time::Duration;

use serde::Serialize;
use solana_pubkey::Pubkey;

use super::{budget::Budget, program_id::ProgramId};
use crate::{
    deploy::{
        DeployError,
        compute::PriceSource,
        drive::Outcome,
        plan::{Action, Plan},
    },
    report::Report,
};

/// The machine-readable account of a deploy (`--report`).
#[derive(Serialize)]
pub(super) struct DeployReport {
    /// deployed, upgraded, interrupted or failed.
    outcome: &'static str,
    error: Option<String>,
    program_id: String,
    buffer: String,
    program_len: usize,
    chunk_size: usize,
    chunks: usize,
    /// Chunks this run had to write (all but those the buffer already held).
    chunks_to_write: usize,
    bytes_already_in_buffer: u64,
    signature: Option<String>,
    elapsed_s: f64,
    /// `--final`: the deploy or upgrade also removed the program's upgrade authority.
    #[serde(rename = "final")]
    finalize: bool,
    compute_budget: BudgetReport,
    phases: Vec<PhaseReport>,
}

/// The compute budget the deploy's transactions carried.
#[derive(Serialize)]
struct BudgetReport {
    /// Micro-lamports per compute unit; null when no price was set.
    unit_price: Option<u64>,
    /// `flag`, `recent` (from getRecentPrioritizationFees), or null without a price.
    price_from: Option<&'static str>,
    /// With `recent`: the percentile paid and how many slots' fees it was taken from.
    percentile: Option<u8>,
    fee_samples: Option<usize>,
    /// The --with-compute-unit-limit given; null when each phase's was measured or none set.
    unit_limit: Option<u32>,
}

#[derive(Serialize)]
struct PhaseReport {
    name: &'static str,
    /// Re-signings with a fresh blockhash, over all of the phase's transactions.
    resigns: u64,
    /// The compute-unit limit its transactions carried; null when none was set.
    unit_limit: Option<u32>,
    report: Report,
}

impl DeployReport {
    pub(super) fn new(
        plan: &Plan,
        program_id: &ProgramId,
        buffer: &Pubkey,
        budget: &Budget,
        finalize: bool,
        outcome: &Outcome,
        elapsed: Duration,
    ) -> Self {
        let outcome_name = match (&outcome.result, &plan.action) {
            (Ok(_), Action::Deploy { .. }) => "deployed",
            (Ok(_), Action::Upgrade { .. }) => "upgraded",
            (Ok(_), Action::BufferOnly { .. }) => "buffer-written",
            (Err(DeployError::Interrupted(_)), _) => "interrupted",
            (Err(_), _) => "failed",
        };
        DeployReport {
            outcome: outcome_name,
            error: outcome.result.as_ref().err().map(|e| e.to_string()),
            program_id: program_id.pubkey.to_string(),
            buffer: buffer.to_string(),
            program_len: plan.chunks.len,
            chunk_size: plan.chunks.size,
            chunks: plan.chunks.count(),
            chunks_to_write: plan.writes.len(),
            bytes_already_in_buffer: plan.bytes_present(),
            signature: outcome
                .result
                .as_ref()
                .ok()
                .and_then(|s| s.map(|s| s.to_string())),
            elapsed_s: (elapsed.as_secs_f64() * 1000.0).round() / 1000.0,
            finalize,
            compute_budget: BudgetReport {
                unit_price: budget.budget.price,
                price_from: budget.source.map(|s| match s {
                    PriceSource::Flag => "flag",
                    PriceSource::Recent { .. } => "recent",
                }),
                percentile: match budget.source {
                    Some(PriceSource::Recent { percentile, .. }) => Some(percentile),
                    _ => None,
                },
                fee_samples: match budget.source {
                    Some(PriceSource::Recent { samples, .. }) => Some(samples),
                    _ => None,
                },
                unit_limit: budget.budget.limit,
            },
            phases: outcome
                .phases
                .iter()
                .map(|p| PhaseReport {
                    name: p.name,
                    unit_limit: p.unit_limit,
                    resigns: p
                        .outcome
                        .snapshot
                        .txs
                        .iter()
                        .map(|v| u64::from(v.resigns))
                        .sum(),
                    report: Report::new(&p.outcome, &[]),
                })
                .collect(),
        }
    }
}

impl DeployReport {
    /// `--report-sends`: every phase's transactions with their streams.
    pub(super) fn add_streams(&mut self) {
        for p in &mut self.phases {
            p.report.add_streams();
        }
    }
}

/// The closing lines for people: on standard output, or standard error when `aside` (standard
/// output carries data).
pub(super) fn print_summary(r: &DeployReport, outcome: &Outcome, aside: bool) {
    let say = |line: String| crate::commands::session::print_aside(aside, &line);
    for p in &r.phases {
        let s = &p.report.summary;
        say(format!(
            "{:<8} {} of {} confirmed in {:.1} s, {} sends ({} per landed), {} re-signed{}",
            p.name,
            s.confirmed,
            s.total,
            s.elapsed_s,
            s.sends,
            s.sends_per_landed
                .map_or("-".to_string(), |v| format!("{v:.2}")),
            p.resigns,
            if s.failed + s.expired > 0 {
                format!(", {} failed, {} expired", s.failed, s.expired)
            } else {
                String::new()
            }
        ));
    }
    match &outcome.result {
        Ok(None) => say(format!(
            "{} {} in {:.1} s ({} of {} chunks written this run)",
            r.outcome, r.buffer, r.elapsed_s, r.chunks_to_write, r.chunks
        )),
        Ok(Some(sig)) if r.outcome == "buffer-written" => say(format!(
            "{} {} in {:.1} s ({} of {} chunks written this run) and handed over (signature {sig})",
            r.outcome, r.buffer, r.elapsed_s, r.chunks_to_write, r.chunks
        )),
        Ok(Some(sig)) => say(format!(
            "{} program {} in {:.1} s ({} of {} chunks written this run; signature {sig})",
            r.outcome, r.program_id, r.elapsed_s, r.chunks_to_write, r.chunks
        )),
        Err(_) => say(format!(
            "{}: program {} not deployed",
            r.outcome, r.program_id
        )),
    }
}

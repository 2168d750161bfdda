//! `txpace inspect`: decode and check signed transactions, one row each, before anything is sent.
//!
//! The exit code is the verdict (0 all valid, 2 any invalid) so scripts can gate a send on it;
//! every invalid item is also printed to stderr as `FILE:LINE: reason`, the form editors and
//! terminals turn into a link. Offline unless a cluster is named (`-u/--url`, `TXPACE_URL` or
//! txpace.toml): then each price is also placed among the cluster's recent fees.

use std::{
    cell::Cell,
    io::{self, IsTerminal, Write},
    time::{Duration, Instant},
};

use serde::Serialize;

use crate::{
    cli::{GlobalOpts, InspectArgs, OutputMode},
    source::{self, Entry, Progress, TxSummary},
    ui::fmt::short,
};

/// One transaction as shown; fields are `None` when the item did not decode as a transaction.
#[derive(Debug, Serialize)]
struct Row {
    position: String,
    valid: bool,
    /// `null` when valid.
    error: Option<String>,
    signature: Option<String>,
    fee_payer: Option<String>,
    version: Option<&'static str>,
    /// `null` for a durable-nonce transaction, whose "blockhash" is the nonce value.
    recent_blockhash: Option<String>,
    durable_nonce: Option<bool>,
    /// Micro-lamports per CU; `null` when no instruction sets it.
    cu_price: Option<u64>,
    /// `null` when no instruction sets it.
    cu_limit: Option<u32>,
    /// With a cluster named: the share of recent slots (percent) its price pays at least as
    /// much as, for the batch's most-written accounts; otherwise `null`.
    fee_percentile: Option<u8>,
    size: Option<usize>,
    instructions: Option<usize>,
}

#[derive(Debug, Serialize)]
struct Summary {
    total: usize,
    valid: usize,
    invalid: usize,
}

/// What recent slots charged for the batch's most-written accounts.
#[derive(Debug, Serialize)]
struct Fees {
    slots: usize,
    /// Micro-lamports per compute unit.
    median: u64,
    /// Valid transactions paying less than the median.
    below_median: usize,
}

#[derive(Debug, Serialize)]
struct Report {
    transactions: Vec<Row>,
    summary: Summary,
    /// With a cluster named and answering; otherwise `null`.
    fees: Option<Fees>,
}

pub fn run(global: &GlobalOpts, args: InspectArgs) -> anyhow::Result<u8> {
    let mut rows = Vec::new();
    let mut valid_txs = Vec::new();
    let asks_fees = global.url.is_some();
    let meter = ProgressLine::new();
    let loaded = source::for_each_entry(
        &args.input.files,
        args.input.format,
        &|p| meter.show(p),
        &mut |entry| {
            rows.push(row(&entry));
            if let (true, Entry::Valid(tx)) = (asks_fees, &entry) {
                valid_txs.push(tx.clone());
            }
        },
    );
    meter.clear();
    loaded?;
    let fees = if asks_fees {
        recent_fees(global, &valid_txs, &mut rows)
    } else {
        None
    };

    let mut stderr = io::stderr().lock();
    for row in rows.iter().filter(|r| !r.valid) {
        let reason = row.error.as_deref().unwrap_or_default();
        // Losing stderr (closed) must not hide the verdict, which is the exit code.
        let _ = writeln!(stderr, "{}: {reason}", row.position);
    }
    drop(stderr);

    let valid = rows.iter().filter(|r| r.valid).count();
    let report = Report {
        summary: Summary {
            total: rows.len(),
            valid,
            invalid: rows.len() - valid,
        },
        transactions: rows,
        fees,
    };
    let code = if report.summary.invalid == 0 { 0 } else { 2 };

    let mut out = io::stdout().lock();
    let written = if args.json || global.output == OutputMode::Json {
        serde_json::to_writer_pretty(&mut out, &report)
            .map_err(io::Error::from)
            .and_then(|()| writeln!(out))
    } else if global.output == OutputMode::JsonCompact {
        serde_json::to_writer(&mut out, &report)
            .map_err(io::Error::from)
            .and_then(|()| writeln!(out))
    } else {
        write_table(&mut out, &report)
    };
    match written.and_then(|()| out.flush()) {
        // `txpace inspect big.txt | head` is normal use, not a failure.
        Err(err) if err.kind() != io::ErrorKind::BrokenPipe => {
            Err(anyhow::Error::new(err).context("cannot write the report"))
        }
        _ => Ok(code),
    }
}

fn row(entry: &Entry) -> Row {
    let (position, error, wire) = match entry {
        Entry::Valid(tx) => (tx.origin.to_string(), None, Some(&tx.wire)),
        Entry::Invalid { problem, wire } => (
            problem.origin.clone(),
            Some(problem.reason.clone()),
            wire.as_ref(),
        ),
    };
    let summary: Option<TxSummary> = wire.and_then(|wire| {
        source::parse_wire(wire)
            .ok()
            .map(|tx| source::summarize(&tx, wire.len()))
    });
    let s = summary.as_ref();
    Row {
        position,
        valid: error.is_none(),
        error,
        signature: s.and_then(|s| s.signature).map(|v| v.to_string()),
        fee_payer: s.and_then(|s| s.fee_payer).map(|v| v.to_string()),
        version: s.map(|s| s.version),
        recent_blockhash: s
            .filter(|s| !s.durable_nonce)
            .map(|s| s.recent_blockhash.to_string()),
        durable_nonce: s.map(|s| s.durable_nonce),
        cu_price: s.and_then(|s| s.cu_price),
        cu_limit: s.and_then(|s| s.cu_limit),
        fee_percentile: None,
        size: s.map(|s| s.size),
        instructions: s.map(|s| s.instructions),
    }
}

const HEADERS: [&str; 10] = [
    "POSITION",
    "SIGNATURE",
    "FEE PAYER",
    "VERSION",
    "BLOCKHASH",
    "CU PRICE",
    "CU LIMIT",
    "SIZE",
    "IXS",
    "STATUS",
];
/// Columns holding numbers, aligned right.
const NUMERIC: [bool; 10] = [
    false, false, false, false, false, true, true, true, true, false,
];

fn cells(row: &Row) -> [String; 10] {
    let dash = || "-".to_string();
    let decoded = row.version.is_some();
    let or_default = |v: Option<String>| match (v, decoded) {
        (Some(v), _) => v,
        (None, true) => "default".to_string(),
        (None, false) => dash(),
    };
    [
        row.position.clone(),
        row.signature.as_deref().map_or_else(dash, short),
        row.fee_payer.as_deref().map_or_else(dash, short),
        row.version.map_or_else(dash, str::to_string),
        match (row.durable_nonce, &row.recent_blockhash) {
            (Some(true), _) => "durable nonce".to_string(),
            (_, Some(hash)) => short(hash),
            _ => dash(),
        },
        match (row.cu_price, row.fee_percentile) {
            (Some(v), Some(p)) => format!("{v} (p{p})"),
            (None, Some(p)) if decoded => format!("default (p{p})"),
            (v, _) => or_default(v.map(|v| v.to_string())),
        },
        or_default(row.cu_limit.map(|v| v.to_string())),
        row.size.map_or_else(dash, |v| v.to_string()),
        row.instructions.map_or_else(dash, |v| v.to_string()),
        row.error.clone().unwrap_or_else(|| "OK".to_string()),
    ]
}

fn write_table(out: &mut impl Write, report: &Report) -> io::Result<()> {
    let table: Vec<[String; 10]> = report.transactions.iter().map(cells).collect();
    let mut widths = HEADERS.map(|h| h.chars().count());
    for cells in &table {
        for (width, cell) in widths.iter_mut().zip(cells) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let headers = HEADERS.map(str::to_string);
    for cells in std::iter::once(&headers).chain(&table) {
        let mut line = String::new();
        for (i, cell) in cells.iter().enumerate() {
            let width = widths.get(i).copied().unwrap_or(0);
            let pad = " ".repeat(width.saturating_sub(cell.chars().count()));
            let last = i + 1 == cells.len();
            if i > 0 {
                line.push_str("  ");
            }
            match (NUMERIC.get(i), last) {
                (Some(true), _) => {
                    line.push_str(&pad);
                    line.push_str(cell);
                }
                (_, true) => line.push_str(cell),
                _ => {
                    line.push_str(cell);
                    line.push_str(&pad);
                }
            }
        }
        writeln!(out, "{line}")?;
    }
    let s = &report.summary;
    let noun = if s.total == 1 {
        "transaction"
    } else {
        "transactions"
    };
    writeln!(
        out,
        "{} {noun}: {} valid, {} invalid",
        s.total, s.valid, s.invalid
    )?;
    if let Some(f) = &report.fees {
        writeln!(
            out,
            "recent fees for the batch's most-written accounts: median {} µlamports/CU over {} slots \
             (CU PRICE shows each price's percentile); {} below the median",
            f.median, f.slots, f.below_median
        )?;
    }
    Ok(())
}

/// Asks the named cluster what recent slots charged for the batch's most-written accounts and
/// places every row's price among them. A cluster that cannot be asked is a warning: the exit
/// code stays the verdict on the transactions.
fn recent_fees(global: &GlobalOpts, txs: &[source::LoadedTx], rows: &mut [Row]) -> Option<Fees> {
    let asked = (|| -> anyhow::Result<Vec<u64>> {
        let resolved = crate::config::resolve(&global.to_args(None))?;
        let rpc = solana_rpc_client::rpc_client::RpcClient::new_with_timeout(
            resolved.rpc_url,
            Duration::from_secs(20),
        );
        Ok(rpc
            .get_recent_prioritization_fees(&crate::fees::most_written(txs))?
            .iter()
            .map(|f| f.prioritization_fee)
            .collect())
    })();
    let recent = match asked {
        Ok(r) if !r.is_empty() => r,
        Ok(_) => {
            say!("recent fees: the cluster reported none for these accounts");
            return None;
        }
        Err(e) => {
            say!(
                "warning: recent fees: {}",
                crate::redact::scrub(format!("{e:#}"))
            );
            return None;
        }
    };
    let median = crate::fees::percentile(&recent, 50);
    let mut below_median = 0;
    for row in rows.iter_mut().filter(|r| r.valid) {
        let price = row.cu_price.unwrap_or(0);
        row.fee_percentile = Some(crate::fees::rank(&recent, price));
        below_median += usize::from(price < median);
    }
    Some(Fees {
        slots: recent.len(),
        median,
        below_median,
    })
}

/// A `loading…` line on a terminal's stderr, only once loading has taken long enough to wonder.
struct ProgressLine {
    start: Instant,
    last: Cell<Option<Instant>>,
    enabled: bool,
}

impl ProgressLine {
    const DELAY: Duration = Duration::from_millis(500);
    const EVERY: Duration = Duration::from_millis(100);

    fn new() -> Self {
        Self {
            start: Instant::now(),
            last: Cell::new(None),
            enabled: io::stderr().is_terminal(),
        }
    }

    fn show(&self, p: Progress) {
        let now = Instant::now();
        let due = self
            .last
            .get()
            .map_or(now - self.start >= Self::DELAY, |last| {
                now - last >= Self::EVERY
            });
        if !self.enabled || !due {
            return;
        }
        self.last.set(Some(now));
        let total = p.total.map_or(String::new(), |t| format!(" of {t}"));
        // A progress line is decoration: failing to draw it is not worth an error.
        let _ = write!(
            io::stderr(),
            "\rloading… {} read, {} verified{total}\x1b[K",
            p.decoded,
            p.verified
        );
    }

    fn clear(&self) {
        if self.last.get().is_some() {
            let _ = write!(io::stderr(), "\r\x1b[K");
        }
    }
}

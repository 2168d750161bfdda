//! `--with-compute-unit-price` and `--with-compute-unit-limit`, resolved against the cluster
//! before the deploy is planned: `auto` reads the recent prioritization fees for the accounts
//! the deploy writes.

use anyhow::{Context, Result};
use solana_pubkey::Pubkey;
use solana_rpc_client::rpc_client::RpcClient;

use crate::{
    cli::{DeployArgs, UnitPrice},
    commands::blocking::block_on,
    deploy::compute::{ComputeBudget, PriceSource, recent_price},
    ui::fmt,
};

/// The deploy's compute budget, and where its price came from (`None` without a price).
pub(super) struct Budget {
    pub budget: ComputeBudget,
    pub source: Option<PriceSource>,
}

impl Budget {
    pub(super) fn resolve(rpc: &RpcClient, args: &DeployArgs, written: &[Pubkey]) -> Result<Self> {
        let limit = args.with_compute_unit_limit;
        let (price, source) = match args.with_compute_unit_price {
            None => (None, None),
            Some(UnitPrice::Fixed(p)) => (Some(p), Some(PriceSource::Flag)),
            Some(UnitPrice::Auto) => {
                let (price, source) = block_on(
                    rpc,
                    recent_price(rpc.get_inner_client(), written, args.fee_percentile),
                )
                .context("getRecentPrioritizationFees for --with-compute-unit-price auto")?;
                (Some(price), Some(source))
            }
        };
        Ok(Budget {
            budget: ComputeBudget { price, limit },
            source,
        })
    }

    /// For the plan's lines and the dashboard's title, e.g. `CU price 1,200 µlamports (p75 of
    /// 150 slots), limit measured per phase`; `None` when the deploy sets no budget.
    pub(super) fn describe(&self) -> Option<String> {
        let b = &self.budget;
        let limit = match (b.limit, b.price) {
            (Some(l), _) => format!("limit {} CU", fmt::count(u64::from(l))),
            (None, Some(_)) => "limit measured per phase".to_string(),
            (None, None) => return None,
        };
        let price = match (b.price, self.source) {
            (
                Some(p),
                Some(PriceSource::Recent {
                    percentile,
                    samples,
                }),
            ) => format!(
                "CU price {} µlamports (p{percentile} of {samples} slots), ",
                fmt::count(p)
            ),
            (Some(p), _) => format!("CU price {} µlamports, ", fmt::count(p)),
            (None, _) => String::new(),
        };
        Some(format!("{price}{limit}"))
    }
}

//! The contenders of `txpace-bench wan`, and the order they meet the wire in.

use serde::Serialize;

use crate::{next_child, rpc_child};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub(crate) enum Sender {
    #[serde(rename = "txpace")]
    Txpace,
    #[serde(rename = "Agave TpuClient")]
    Legacy,
    #[serde(rename = "Agave tpu-client-next")]
    Next,
    #[serde(rename = "Agave RPC sendTransaction")]
    Rpc,
}

impl Sender {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Sender::Txpace => "txpace",
            Sender::Legacy => "Agave TpuClient",
            Sender::Next => next_child::NAME,
            Sender::Rpc => rpc_child::NAME,
        }
    }

    /// Agave's clients that send to the leaders' TPU themselves: the ones txpace's goals are
    /// judged against (the RPC contender's node sends for it).
    pub(crate) fn agave_tpu(self) -> bool {
        matches!(self, Sender::Legacy | Sender::Next)
    }
}

/// A contender by its short name on the command line (`--senders`).
pub(crate) fn parse(name: &str) -> Result<Sender, String> {
    match name {
        "txpace" => Ok(Sender::Txpace),
        "legacy" => Ok(Sender::Legacy),
        "next" => Ok(Sender::Next),
        "rpc" => Ok(Sender::Rpc),
        other => Err(format!(
            "no contender {other:?}: the contenders are txpace, legacy, next and rpc"
        )),
    }
}

/// Every other round runs the contenders in reverse, so none always meets the wire first.
pub(super) fn order(round: u32) -> [Sender; 4] {
    let mut senders = [Sender::Txpace, Sender::Legacy, Sender::Next, Sender::Rpc];
    if round.is_multiple_of(2) {
        senders.reverse();
    }
    senders
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contenders_are_named_by_their_short_names() {
        assert_eq!(parse("next"), Ok(Sender::Next));
        assert!(
            parse("agave")
                .unwrap_err()
                .contains("txpace, legacy, next and rpc")
        );
    }

    #[test]
    fn the_order_alternates_between_rounds() {
        assert_eq!(
            order(1),
            [Sender::Txpace, Sender::Legacy, Sender::Next, Sender::Rpc]
        );
        assert_eq!(
            order(2),
            [Sender::Rpc, Sender::Next, Sender::Legacy, Sender::Txpace]
        );
    }
}

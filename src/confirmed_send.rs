//! Sending one transaction through RPC and waiting for it to confirm, riding out a node that is
//! briefly behind.
//!
//! A node a slot or two behind its cluster answers `sendTransaction` with `-32005` ("Node is
//! behind by N slots") and does not take the transaction; on a busy cluster that lasts a moment.
//! The same signed transaction is offered again until the node is healthy or
//! `NODE_BEHIND_WAIT` (20 s) has passed: it has one signature, so offering it twice can never pay
//! twice. Any other error is returned at once.

use std::time::{Duration, Instant};

use solana_rpc_client::rpc_client::{RpcClient, SerializableTransaction};
use solana_rpc_client_api::{
    client_error::{Error as ClientError, ErrorKind},
    custom_error::JSON_RPC_SERVER_ERROR_NODE_UNHEALTHY,
    request::RpcError,
};
use solana_signature::Signature;

/// How long a node that says it is behind is waited for: well inside a blockhash's life
/// (about 60 s), so the transaction offered again can still land.
const NODE_BEHIND_WAIT: Duration = Duration::from_secs(20);

/// Between offers to a node that is behind: one slot.
const PAUSE: Duration = Duration::from_millis(400);

/// `rpc.send_and_confirm_transaction(tx)`, offered again while the node says it is behind.
pub fn send_and_confirm(
    rpc: &RpcClient,
    tx: &impl SerializableTransaction,
) -> Result<Signature, ClientError> {
    while_node_behind(NODE_BEHIND_WAIT, PAUSE, || {
        rpc.send_and_confirm_transaction(tx)
    })
}

/// Runs `attempt` until it returns anything but "node behind", or `wait` has passed (then its
/// last answer is returned), pausing `pause` between attempts.
fn while_node_behind<T>(
    wait: Duration,
    pause: Duration,
    mut attempt: impl FnMut() -> Result<T, ClientError>,
) -> Result<T, ClientError> {
    let deadline = Instant::now() + wait;
    loop {
        match attempt() {
            Err(e) if is_node_behind(&e) && Instant::now() + pause < deadline => {
                log::info!("{e}: offering the transaction again");
                std::thread::sleep(pause);
            }
            answer => return answer,
        }
    }
}

/// The node refused the call because it is behind its cluster (`-32005`).
fn is_node_behind(e: &ClientError) -> bool {
    matches!(
        e.kind(),
        ErrorKind::RpcError(RpcError::RpcResponseError { code, .. })
            if *code == JSON_RPC_SERVER_ERROR_NODE_UNHEALTHY
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use solana_rpc_client_api::request::RpcResponseErrorData;

    fn rpc_error(code: i64, message: &str) -> ClientError {
        ErrorKind::RpcError(RpcError::RpcResponseError {
            code,
            message: message.into(),
            data: RpcResponseErrorData::Empty,
        })
        .into()
    }

    fn behind() -> ClientError {
        rpc_error(-32005, "Node is behind by 1 slots")
    }

    #[test]
    fn a_node_behind_is_asked_again_until_it_answers() {
        let mut answers = vec![Ok(7), Err(behind()), Err(behind())];
        let mut calls = 0;
        let got = while_node_behind(Duration::from_secs(5), Duration::ZERO, || {
            calls += 1;
            answers.pop().expect("asked once too often")
        });
        assert_eq!(got.ok(), Some(7));
        assert_eq!(calls, 3);
    }

    #[test]
    fn any_other_error_is_returned_at_once() {
        let mut calls = 0;
        let got: Result<(), _> = while_node_behind(Duration::from_secs(5), Duration::ZERO, || {
            calls += 1;
            Err(rpc_error(-32002, "Transaction simulation failed"))
        });
        assert!(!is_node_behind(&got.expect_err("an error")));
        assert_eq!(calls, 1);
    }

    #[test]
    fn a_node_behind_for_longer_than_the_wait_is_the_answer() {
        let started = Instant::now();
        let got: Result<(), _> =
            while_node_behind(Duration::from_millis(50), Duration::from_millis(10), || {
                Err(behind())
            });
        assert!(is_node_behind(&got.expect_err("still behind")));
        assert!(started.elapsed() < Duration::from_secs(1));
    }
}

//! Awaiting the asynchronous RPC client's calls from a command's synchronous steps.
//!
//! The deploy driver and the domain modules read the chain with one client flavour, the
//! asynchronous one; a command that plans before its session's runtime exists holds a blocking
//! `RpcClient`, which wraps exactly such a client and a runtime of its own. [`block_on`] runs a
//! domain read on that wrapped client, as the blocking client runs each of its own calls, so a
//! read is written once, asynchronously. Only on that runtime: the wrapped client's pooled
//! connections are driven by the runtime that opened them, which is idle between calls, so
//! work in the session's runtime (the deploy driver) holds an asynchronous client of its own.

use std::future::Future;

use solana_rpc_client::rpc_client::RpcClient;

/// Runs `read` — a future over `rpc.get_inner_client()` — to completion on `rpc`'s runtime.
/// Safe inside the session's multi-threaded runtime too (`block_in_place`).
pub(crate) fn block_on<F: Future>(rpc: &RpcClient, read: F) -> F::Output {
    tokio::task::block_in_place(|| rpc.runtime().block_on(read))
}

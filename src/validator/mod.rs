//! The local solana-test-validator harness (being written).

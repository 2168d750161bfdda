//! Reading users' signed transactions (being written).

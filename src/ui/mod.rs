//! The terminal dashboard (being written).

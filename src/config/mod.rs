//! Scenario configuration.
pub mod types;
pub use types::*;

//! The clock every entry point reads, in one place: the system's, or the
//! time `MNEMO_NOW` pins (RFC 3339 UTC or a date) so tests and reproductions
//! see one fixed moment. A short-lived command reads it once; the MCP server
//! per call; the language server per request.

use anyhow::{Context as _, anyhow};
use mnemo_core::Timestamp;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    System,
    Pinned(Timestamp),
}

impl Clock {
    /// `MNEMO_NOW` when set (refused when it is not a time), else the system clock.
    pub fn from_env() -> anyhow::Result<Clock> {
        match std::env::var("MNEMO_NOW") {
            Ok(text) => Timestamp::parse(&text)
                .map(Clock::Pinned)
                .ok_or_else(|| anyhow!("MNEMO_NOW '{text}' is not RFC 3339 UTC (2026-08-01T12:00:00Z) or a date")),
            Err(_) => Ok(Clock::System),
        }
    }

    pub fn now(self) -> anyhow::Result<Timestamp> {
        match self {
            Clock::Pinned(at) => Ok(at),
            Clock::System => {
                let secs = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .context("the system clock is before 1970")?
                    .as_secs();
                Ok(Timestamp(secs as i64))
            }
        }
    }
}

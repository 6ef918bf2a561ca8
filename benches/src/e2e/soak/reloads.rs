//! The reloads of the soak: each `mwctl reload` of a changed
//! configuration must be applied.

use serde_json::{Value, json};

use super::checks::Checks;
use crate::e2e::Result;

/// What the reloads did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reloads {
    /// Reloads asked for.
    pub n: u64,
    /// Reloads applied.
    pub ok: u64,
    /// Changes they applied.
    pub changes: usize,
    /// Why the others were not.
    pub failed: Vec<String>,
}

impl Reloads {
    /// Records one reload's answer (`who`: which router, in messages).
    pub fn record(&mut self, r: Result<usize>, who: &str) {
        self.n += 1;
        match r {
            Ok(c) => {
                self.ok += 1;
                self.changes += c;
            }
            Err(e) => self.failed.push(format!("{who}{e}")),
        }
    }

    /// The check: every reload applied.
    pub fn check(&self, checks: &mut Checks) {
        checks.add(
            "every reload applied",
            self.n > 0 && self.ok == self.n,
            format!(
                "{} of {} reloads applied, {} changes{}",
                self.ok,
                self.n,
                self.changes,
                if self.failed.is_empty() {
                    String::new()
                } else {
                    format!("; failed: {:?}", &self.failed[..self.failed.len().min(3)])
                }
            ),
        );
    }

    /// The JSON record.
    pub fn to_json(&self) -> Value {
        json!({"n": self.n, "ok": self.ok, "changes": self.changes, "failed": self.failed})
    }
}

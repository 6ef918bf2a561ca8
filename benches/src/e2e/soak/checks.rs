//! The soak's verdicts: each check named, passed or failed, with the
//! figures that decided it; printed as they are made and kept for the
//! report.

use serde_json::{Value, json};

/// One check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// What is checked.
    pub name: String,
    /// Whether it held.
    pub ok: bool,
    /// The figures.
    pub detail: String,
}

/// The checks of a run, in the order they were made.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Checks {
    items: Vec<Check>,
    quiet: bool,
}

impl Checks {
    /// Checks that print each line as it is added.
    pub fn new() -> Checks {
        Checks::default()
    }

    /// Checks that print nothing (tests).
    pub fn quiet() -> Checks {
        Checks {
            items: Vec::new(),
            quiet: true,
        }
    }

    /// Records (and prints) a check.
    pub fn add(&mut self, name: impl Into<String>, ok: bool, detail: impl Into<String>) {
        let c = Check {
            name: name.into(),
            ok,
            detail: detail.into(),
        };
        if !self.quiet {
            println!(
                "  [{}] {}: {}",
                if c.ok { "ok" } else { "FAIL" },
                c.name,
                c.detail
            );
        }
        self.items.push(c);
    }

    /// Every check so far.
    pub fn items(&self) -> &[Check] {
        &self.items
    }

    /// The names of the checks that failed.
    pub fn failed(&self) -> Vec<&str> {
        self.items
            .iter()
            .filter(|c| !c.ok)
            .map(|c| c.name.as_str())
            .collect()
    }

    /// Whether every check held.
    pub fn passed(&self) -> bool {
        self.items.iter().all(|c| c.ok)
    }

    /// The check named `name`, if made.
    pub fn get(&self, name: &str) -> Option<&Check> {
        self.items.iter().find(|c| c.name == name)
    }

    /// The JSON list of the checks.
    pub fn to_json(&self) -> Value {
        Value::Array(
            self.items
                .iter()
                .map(|c| json!({"check": c.name, "ok": c.ok, "detail": c.detail}))
                .collect(),
        )
    }
}

//! The SAN manager's states and the controls one manager sends another
//! (docs/manager.md "States"): InfiniBand's SM state machine and SMInfo
//! control codes, with their numbers.

use std::fmt;

rrp::code_points! {
    /// A manager's state (SMInfo's SMState).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum SmState: u8 {
        /// Not active: told to stop (DISABLE), until told DISCOVER.
        NotActive = 0 => "not-active",
        /// Looking for the SAN's managers.
        Discovering = 1 => "discovering",
        /// Another manager is master (or about to be): polling it.
        Standby = 2 => "standby",
        /// The SAN's manager.
        Master = 3 => "master",
    }
}

impl fmt::Display for SmState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What an SMInfo Set asks of the manager it is sent to (its attribute
/// modifier).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Control {
    /// Take over as master (from the master that stops).
    Handover = 1,
    /// The handover is taken.
    Acknowledge = 2,
    /// Stop: Not-active until DISCOVER.
    Disable = 3,
    /// Go standby.
    Standby = 4,
    /// Start discovering again (out of Not-active).
    Discover = 5,
}

impl Control {
    /// The control of a modifier; `None` for anything else.
    pub const fn from_modifier(m: u32) -> Option<Control> {
        Some(match m {
            1 => Control::Handover,
            2 => Control::Acknowledge,
            3 => Control::Disable,
            4 => Control::Standby,
            5 => Control::Discover,
            _ => return None,
        })
    }

    /// Its name in logs.
    pub const fn name(self) -> &'static str {
        match self {
            Control::Handover => "HANDOVER",
            Control::Acknowledge => "ACKNOWLEDGE",
            Control::Disable => "DISABLE",
            Control::Standby => "STANDBY",
            Control::Discover => "DISCOVER",
        }
    }
}

/// Whether manager `a` (priority, identity) outranks `b`: the higher
/// priority, then the lower identity (docs/manager.md "Election").
pub fn outranks(a: (u8, u64), b: (u8, u64)) -> bool {
    a.0 > b.0 || (a.0 == b.0 && a.1 < b.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes() {
        for s in [
            SmState::NotActive,
            SmState::Discovering,
            SmState::Standby,
            SmState::Master,
        ] {
            assert_eq!(SmState::from_code(s as u8), Some(s));
        }
        assert_eq!(SmState::from_code(4), None);
        for c in 1..=5 {
            assert_eq!(Control::from_modifier(c).unwrap() as u32, c);
        }
        assert_eq!(Control::from_modifier(0), None);
        assert_eq!(Control::from_modifier(6), None);
    }

    #[test]
    fn ranking() {
        assert!(outranks((7, 5), (3, 1)));
        assert!(outranks((7, 1), (7, 5)));
        assert!(!outranks((7, 5), (7, 5)));
        assert!(!outranks((3, 1), (7, 9)));
    }
}

//! Spreading a device's MessageWay frames over the workers' receive queues
//! with `rte_flow` rules (docs/backends.md "More than one worker").
//!
//! A NIC's RSS hashes IP and L4 headers; MessageWay frames (EtherType
//! 0x88B5) all land on one queue. Where the device takes `rte_flow` rules,
//! one rule per value of the low bits of the source MAC sends each
//! neighbour's frames to one queue: a neighbour's packets stay in order
//! (one queue, one worker) and the neighbours of a SAN spread over the
//! workers. Elsewhere (no rules, vdevs) a port is received from by one
//! worker, and the workers share the ports.

use std::ffi::CStr;
use std::ptr;

use dpdk_sys as sys;

use super::ethdev::ETHERTYPE_MW;

/// How the frames of a device are spread over the workers, as asked
/// ([`StartOptions::spread`](super::StartOptions::spread)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Spread {
    /// Flow rules where the device takes them, else one worker per port.
    #[default]
    Auto,
    /// One receive queue per port, received from by one worker.
    Ports,
    /// Flow rules on every device with more than one worker; a device that
    /// refuses them is an error.
    Flows,
}

impl Spread {
    /// The configuration's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Spread::Auto => "auto",
            Spread::Ports => "ports",
            Spread::Flows => "flows",
        }
    }
}

/// How the frames of one started device reach the workers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RxSpread {
    /// One receive queue (queue 0), for one worker; `why` says why not
    /// flow rules ("one worker", "spread = ports", the driver's refusal).
    Single {
        /// Why the device is not spread by rules.
        why: String,
    },
    /// One receive queue per worker, fed by `rules` flow rules on the
    /// source MAC's low bits.
    Flows {
        /// Rules installed.
        rules: u16,
    },
}

impl RxSpread {
    /// Whether every worker has a receive queue of the device.
    pub fn is_flows(&self) -> bool {
        matches!(self, RxSpread::Flows { .. })
    }
}

impl std::fmt::Display for RxSpread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RxSpread::Single { why } => write!(f, "one receive queue ({why})"),
            RxSpread::Flows { rules } => {
                write!(f, "flow rules on the source MAC ({rules} rules)")
            }
        }
    }
}

/// The rules for `queues` queues: `(value, mask, queue)` of the source
/// MAC's last byte. The mask keeps the low `k` bits, `2^k` the smallest
/// power of two of at least `queues`; value `v` goes to queue `v mod
/// queues` (with a count that is not a power of two the first queues get
/// two values each where others get one, at most 2:1).
pub fn rules(queues: u16) -> Vec<(u8, u8, u16)> {
    let n = queues.clamp(1, 256).next_power_of_two();
    let mask = (n - 1) as u8;
    (0..n).map(|v| (v as u8, mask, v % queues.max(1))).collect()
}

/// What a device said when it refused a rule.
fn refusal(call: &str, rc: i32, e: &sys::rte_flow_error) -> String {
    let msg = if e.message.is_null() {
        String::new()
    } else {
        // SAFETY: a non-null message of an rte_flow_error is a
        // NUL-terminated string of the driver (static or in the device's
        // private data, alive while the port is).
        unsafe { CStr::from_ptr(e.message) }
            .to_string_lossy()
            .into_owned()
    };
    let errno = std::io::Error::from_raw_os_error(rc.unsigned_abs() as i32);
    if msg.is_empty() {
        format!("{call}: {errno}")
    } else {
        format!("{call}: {msg} ({errno})")
    }
}

/// One rule's pattern and action, built in place (the rte_flow structures
/// point into each other).
struct Rule {
    attr: sys::rte_flow_attr,
    spec: sys::rte_flow_item_eth,
    mask: sys::rte_flow_item_eth,
    queue: sys::rte_flow_action_queue,
}

impl Rule {
    fn new(value: u8, mask: u8, queue: u16) -> Rule {
        let mut attr = sys::rte_flow_attr::default();
        attr.set_ingress(1);
        let eth = |src_last: u8, ty: u16| {
            let mut src = [0u8; 6];
            src[5] = src_last;
            // The union's dst/src/type view (a whole-field write: safe).
            sys::rte_flow_item_eth {
                __bindgen_anon_1: sys::rte_flow_item_eth__bindgen_ty_1 {
                    __bindgen_anon_1: sys::rte_flow_item_eth__bindgen_ty_1__bindgen_ty_1 {
                        dst: sys::rte_ether_addr { addr_bytes: [0; 6] },
                        src: sys::rte_ether_addr { addr_bytes: src },
                        type_: ty,
                    },
                },
                ..Default::default()
            }
        };
        let (spec, m) = (eth(value, ETHERTYPE_MW.to_be()), eth(mask, 0xFFFF));
        Rule {
            attr,
            spec,
            mask: m,
            queue: sys::rte_flow_action_queue { index: queue },
        }
    }

    /// Validates (`create == false`) or creates the rule on `port`.
    fn apply(&self, port: u16, create: bool) -> Result<(), String> {
        let pattern = [
            sys::rte_flow_item {
                type_: sys::rte_flow_item_type_RTE_FLOW_ITEM_TYPE_ETH,
                spec: (&raw const self.spec).cast(),
                last: ptr::null(),
                mask: (&raw const self.mask).cast(),
            },
            sys::rte_flow_item {
                type_: sys::rte_flow_item_type_RTE_FLOW_ITEM_TYPE_END,
                spec: ptr::null(),
                last: ptr::null(),
                mask: ptr::null(),
            },
        ];
        let actions = [
            sys::rte_flow_action {
                type_: sys::rte_flow_action_type_RTE_FLOW_ACTION_TYPE_QUEUE,
                conf: (&raw const self.queue).cast(),
            },
            sys::rte_flow_action {
                type_: sys::rte_flow_action_type_RTE_FLOW_ACTION_TYPE_END,
                conf: ptr::null(),
            },
        ];
        let mut err = sys::rte_flow_error::default();
        if create {
            // SAFETY: a valid, configured port; attr, pattern (END-terminated)
            // and actions (END-terminated) and what they point to live across
            // the call; `err` is a valid out-pointer.
            let flow = unsafe {
                sys::rte_flow_create(
                    port,
                    &self.attr,
                    pattern.as_ptr(),
                    actions.as_ptr(),
                    &mut err,
                )
            };
            if flow.is_null() {
                // rte_errno (per lcore) says why.
                let rc = sys::mw_errno();
                return Err(refusal("rte_flow_create", rc, &err));
            }
            Ok(())
        } else {
            // SAFETY: as above.
            let rc = unsafe {
                sys::rte_flow_validate(
                    port,
                    &self.attr,
                    pattern.as_ptr(),
                    actions.as_ptr(),
                    &mut err,
                )
            };
            if rc != 0 {
                return Err(refusal("rte_flow_validate", rc, &err));
            }
            Ok(())
        }
    }
}

/// Whether `port` (configured, with at least `queues` receive queues) takes
/// every rule for `queues` queues ([`rules`]). Changes nothing.
pub(crate) fn validate(port: u16, queues: u16) -> Result<(), String> {
    for (v, m, q) in rules(queues) {
        Rule::new(v, m, q).apply(port, false)?;
    }
    Ok(())
}

/// Creates the rules for `queues` queues on `port` (started); on a refusal
/// the rules created so far are flushed. Returns how many were created.
pub(crate) fn install(port: u16, queues: u16) -> Result<u16, String> {
    let all = rules(queues);
    for &(v, m, q) in &all {
        if let Err(e) = Rule::new(v, m, q).apply(port, true) {
            flush(port);
            return Err(e);
        }
    }
    Ok(all.len() as u16)
}

/// Removes every rule of `port`.
pub(crate) fn flush(port: u16) {
    let mut err = sys::rte_flow_error::default();
    // SAFETY: a valid port id; `err` is a valid out-pointer. A device
    // without rte_flow returns an error, which changes nothing.
    unsafe { sys::rte_flow_flush(port, &mut err) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_cover_every_value_of_the_mask_once() {
        for q in 1..=16u16 {
            let r = rules(q);
            let n = q.next_power_of_two();
            assert_eq!(r.len(), n as usize);
            for (i, &(v, m, queue)) in r.iter().enumerate() {
                assert_eq!(v as usize, i);
                assert_eq!(m as u16, n - 1);
                assert!(queue < q);
            }
            // Every queue gets at least one value, none more than two.
            for queue in 0..q {
                let k = r.iter().filter(|x| x.2 == queue).count();
                assert!((1..=2).contains(&k), "{q} queues: queue {queue} has {k}");
            }
        }
    }

    #[test]
    fn one_queue_is_one_catch_all_rule() {
        assert_eq!(rules(1), vec![(0, 0, 0)]);
    }

    #[test]
    fn a_rule_matches_the_ethertype_and_the_low_bits() {
        let r = Rule::new(3, 7, 3);
        // SAFETY: Rule::new wrote this view of the unions whole.
        let (s, m) = unsafe {
            (
                &r.spec.__bindgen_anon_1.__bindgen_anon_1,
                &r.mask.__bindgen_anon_1.__bindgen_anon_1,
            )
        };
        assert_eq!(s.type_, 0x88B5u16.to_be());
        assert_eq!(m.type_, 0xFFFF);
        assert_eq!(s.src.addr_bytes, [0, 0, 0, 0, 0, 3]);
        assert_eq!(m.src.addr_bytes, [0, 0, 0, 0, 0, 7]);
        assert_eq!(m.dst.addr_bytes, [0; 6]);
        assert_eq!(r.attr.ingress(), 1);
        assert_eq!(r.queue.index, 3);
    }
}

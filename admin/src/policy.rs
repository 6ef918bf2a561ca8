//! Who may use the admin socket (docs/admin-protocol.md "Privileges").
//!
//! The daemon reads each peer's credentials from the kernel (`SO_PEERCRED`:
//! pid, uid, gid at connect time) and its supplementary groups from
//! `/proc/PID/status`, and maps them to a [`Privilege`] with a [`Policy`]:
//!
//! - root (uid 0) and the daemon's own uid: admin;
//! - a member of the admin group: admin;
//! - a member of the read-only group, or anyone when `readonly_everyone`:
//!   read-only;
//! - anyone else: refused.
//!
//! The socket file's mode and group follow the policy, so that the file
//! system already keeps out whom the daemon would refuse: mode 0660 and
//! the admin group by default, the read-only group when one is configured
//! (its members and the admin group's then both need it: make the admins
//! members of the read-only group too), 0666 when everyone may read.

use std::io;
use std::os::unix::net::UnixStream;

use crate::proto::Privilege;

/// A peer's credentials.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Peer {
    /// Its process, when known.
    pub pid: Option<u32>,
    /// Effective uid.
    pub uid: u32,
    /// Effective gid.
    pub gid: u32,
    /// Supplementary groups (may be empty when unknown).
    pub groups: Vec<u32>,
}

impl Peer {
    /// Whether the peer is in group `g` (primary or supplementary).
    pub fn in_group(&self, g: u32) -> bool {
        self.gid == g || self.groups.contains(&g)
    }
}

/// The access policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Policy {
    /// Members may change things.
    pub admin_group: Option<u32>,
    /// Members may read.
    pub readonly_group: Option<u32>,
    /// Everyone may read (the socket is then 0666).
    pub readonly_everyone: bool,
}

impl Policy {
    /// The privilege of `peer`, for a daemon running as `daemon_uid`;
    /// `None`: refused.
    pub fn privilege(&self, peer: &Peer, daemon_uid: u32) -> Option<Privilege> {
        if peer.uid == 0 || peer.uid == daemon_uid {
            return Some(Privilege::Admin);
        }
        if self.admin_group.is_some_and(|g| peer.in_group(g)) {
            return Some(Privilege::Admin);
        }
        if self.readonly_everyone || self.readonly_group.is_some_and(|g| peer.in_group(g)) {
            return Some(Privilege::ReadOnly);
        }
        None
    }

    /// The socket file's mode: 0666 when everyone may read, else 0660.
    pub fn socket_mode(&self) -> u32 {
        if self.readonly_everyone { 0o666 } else { 0o660 }
    }

    /// The socket file's group: the read-only group if configured, else
    /// the admin group; `None`: left as created (the daemon's group).
    pub fn socket_group(&self) -> Option<u32> {
        self.readonly_group.or(self.admin_group)
    }
}

/// The gid of group `name` from `/etc/group`.
pub fn group_gid(name: &str) -> Option<u32> {
    let text = std::fs::read_to_string("/etc/group").ok()?;
    group_gid_in(&text, name)
}

/// The gid of group `name` in the text of an `/etc/group` file.
pub fn group_gid_in(text: &str, name: &str) -> Option<u32> {
    text.lines().find_map(|l| {
        let mut f = l.split(':');
        let n = f.next()?;
        let _pw = f.next()?;
        let gid = f.next()?;
        (n == name).then(|| gid.trim().parse().ok()).flatten()
    })
}

/// The supplementary groups in the text of `/proc/PID/status`, if its
/// effective uid is `uid` (so that a recycled pid is not believed).
pub fn groups_from_status(status: &str, uid: u32) -> Option<Vec<u32>> {
    let mut uid_ok = false;
    let mut groups = None;
    for l in status.lines() {
        if let Some(rest) = l.strip_prefix("Uid:") {
            // real, effective, saved, filesystem
            uid_ok = rest.split_whitespace().nth(1) == Some(&uid.to_string());
        } else if let Some(rest) = l.strip_prefix("Groups:") {
            groups = Some(
                rest.split_whitespace()
                    .filter_map(|g| g.parse().ok())
                    .collect(),
            );
        }
    }
    if uid_ok { groups } else { None }
}

/// The credentials of the process at the other end of `stream`.
pub fn peer_credentials(stream: &UnixStream) -> io::Result<Peer> {
    let c = rustix::net::sockopt::socket_peercred(stream)?;
    let pid = u32::try_from(c.pid.as_raw_nonzero().get()).ok();
    let uid = c.uid.as_raw();
    let gid = c.gid.as_raw();
    let groups = pid
        .and_then(|p| std::fs::read_to_string(format!("/proc/{p}/status")).ok())
        .and_then(|s| groups_from_status(&s, uid))
        .unwrap_or_default();
    Ok(Peer {
        pid,
        uid,
        gid,
        groups,
    })
}

/// The daemon's own effective uid.
pub fn own_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(uid: u32, gid: u32, groups: &[u32]) -> Peer {
        Peer {
            pid: Some(1234),
            uid,
            gid,
            groups: groups.to_vec(),
        }
    }

    #[test]
    fn policy_maps_credentials() {
        let p = Policy {
            admin_group: Some(900),
            readonly_group: Some(901),
            readonly_everyone: false,
        };
        let me = 500;
        assert_eq!(p.privilege(&peer(0, 0, &[]), me), Some(Privilege::Admin));
        assert_eq!(
            p.privilege(&peer(500, 500, &[]), me),
            Some(Privilege::Admin)
        );
        assert_eq!(
            p.privilege(&peer(1000, 900, &[]), me),
            Some(Privilege::Admin)
        );
        assert_eq!(
            p.privilege(&peer(1000, 100, &[7, 900]), me),
            Some(Privilege::Admin)
        );
        assert_eq!(
            p.privilege(&peer(1000, 100, &[901]), me),
            Some(Privilege::ReadOnly)
        );
        assert_eq!(
            p.privilege(&peer(1000, 901, &[]), me),
            Some(Privilege::ReadOnly)
        );
        assert_eq!(p.privilege(&peer(1000, 100, &[7]), me), None);
        let open = Policy {
            readonly_everyone: true,
            ..p
        };
        assert_eq!(
            open.privilege(&peer(1000, 100, &[7]), me),
            Some(Privilege::ReadOnly)
        );
        assert_eq!(open.socket_mode(), 0o666);
        assert_eq!(p.socket_mode(), 0o660);
        assert_eq!(p.socket_group(), Some(901));
        let d = Policy::default();
        assert_eq!(d.socket_mode(), 0o660);
        assert_eq!(d.socket_group(), None);
        assert_eq!(d.privilege(&peer(1000, 100, &[]), me), None);
        assert_eq!(d.privilege(&peer(0, 0, &[]), me), Some(Privilege::Admin));
    }

    #[test]
    fn etc_group_and_proc_status() {
        let g = "root:x:0:\nmwadmin:x:900:alice,bob\nmwread:x:901:\n";
        assert_eq!(group_gid_in(g, "mwadmin"), Some(900));
        assert_eq!(group_gid_in(g, "mwread"), Some(901));
        assert_eq!(group_gid_in(g, "nope"), None);
        let s = "Name:\tmwctl\nUid:\t1000\t1000\t1000\t1000\nGid:\t100\t100\t100\t100\nGroups:\t4 24 900 \n";
        assert_eq!(groups_from_status(s, 1000), Some(vec![4, 24, 900]));
        assert_eq!(groups_from_status(s, 1001), None);
    }

    #[test]
    fn own_credentials() {
        let (a, _b) = UnixStream::pair().unwrap();
        let p = peer_credentials(&a).unwrap();
        assert_eq!(p.uid, own_uid());
        assert_eq!(p.pid, Some(std::process::id()));
    }
}

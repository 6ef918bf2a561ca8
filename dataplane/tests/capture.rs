//! Capture copies received or dropped packets of one port without stopping
//! forwarding.

use dataplane::{
    CaptureWhat, ChannelConfig, EngineConfig, FibSet, NextHop, Worker, capture_rings, channels,
    fib_channel,
};
use ports::memory::mem_link;
use rrp::Address;
use rrp::DropReason;
use rrp::NativeAddr;
use rrp::PortId;
use rrp::kind::PacketType;
use rrp::wire::{HeaderRepr, PacketRepr};

fn packet(dst: u16) -> Vec<u8> {
    PacketRepr {
        l2rhs: vec![],
        header: HeaderRepr {
            dst: Address(dst),
            src: Address(0x0101),
            packet_type: PacketType(0x0100),
            ..Default::default()
        },
        data: vec![dst as u8; 10],
        ei: 0,
    }
    .to_bytes()
    .unwrap()
}

#[test]
fn received_and_dropped_packets_are_copied_while_forwarding_goes_on() {
    let (mut host_a, r0) = mem_link(
        64,
        NativeAddr::mac([2, 0, 0, 0, 0, 1]),
        NativeAddr::mac([2, 0, 0, 0, 1, 0]),
    );
    let (mut host_b, r1) = mem_link(
        64,
        NativeAddr::mac([2, 0, 0, 0, 0, 2]),
        NativeAddr::mac([2, 0, 0, 0, 1, 1]),
    );
    let cfg = EngineConfig {
        hrs: vec![Address(0x0110), Address(0x0120)],
        mtus: vec![1500, 1500],
    };
    let mut fib = FibSet::new(2, &cfg.hrs);
    fib.set_all(
        Address(0x0202),
        NextHop {
            port: PortId(1),
            native: NativeAddr::mac([2, 0, 0, 0, 0, 2]),
            mtu: 1500,
            redirect: false,
        },
    );
    let (_p, mut readers) = fib_channel(fib, 1);
    let (wch, _cch) = channels(ChannelConfig::default());
    let (ctl, mut taps) = capture_rings(1, 16);
    let mut w = Worker::new(0, &cfg, vec![r0, r1], readers.remove(0), wch);
    w.set_capture(taps.remove(0));

    // Nothing armed: nothing copied.
    assert!(host_a.send_bytes(&packet(0x0202)));
    w.poll_once();
    assert!(ctl.next().is_none());

    // Received packets of port 0.
    ctl.arm(PortId(0), CaptureWhat::Received);
    assert!(host_a.send_bytes(&packet(0x0202)));
    assert!(host_a.send_bytes(&packet(0x0777)));
    w.poll_once();
    let got: Vec<_> = std::iter::from_fn(|| ctl.next()).collect();
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].1.data, packet(0x0202));
    assert_eq!(got[1].1.reason, None);

    // Dropped packets only, with their reason; forwarding goes on.
    ctl.arm(PortId(0), CaptureWhat::Dropped);
    assert!(host_a.send_bytes(&packet(0x0202)));
    assert!(host_a.send_bytes(&packet(0x0777)));
    w.poll_once();
    let got: Vec<_> = std::iter::from_fn(|| ctl.next()).collect();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].1.reason, Some(DropReason::NoRoute));
    assert_eq!(got[0].1.data, packet(0x0777));
    // Port 1's capture does not see port 0's traffic.
    ctl.arm(PortId(1), CaptureWhat::Received);
    assert!(host_a.send_bytes(&packet(0x0202)));
    w.poll_once();
    assert!(ctl.next().is_none());
    // What port 1 transmits: the forwarded packet as it leaves (EI shifted
    // in the trailer), not what port 0 received or dropped.
    ctl.arm(PortId(1), CaptureWhat::Transmitted);
    assert!(host_a.send_bytes(&packet(0x0202)));
    assert!(host_a.send_bytes(&packet(0x0777)));
    w.poll_once();
    let got: Vec<_> = std::iter::from_fn(|| ctl.next()).collect();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].1.port, PortId(1));
    assert_eq!(got[0].1.reason, None);
    assert_eq!(got[0].1.data.len(), packet(0x0202).len());
    assert_eq!(&got[0].1.data[..2], &[0x02, 0x02]);
    ctl.disarm();
    let mut n = 0;
    while host_b.recv().is_some() {
        n += 1;
    }
    assert_eq!(n, 5, "every routed packet was forwarded");
    assert!(w.counters()[0].balanced());
}

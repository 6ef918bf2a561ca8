//! What a DPDK driver unmaps on EAL's interrupt thread waits for the workers
//! (`ports::dpdk::unmap`, `ports::grace`): a memif server whose client goes
//! away unmaps the client's rings from that thread; while a worker that has
//! not started a pass since holds its mark, the rings stay mapped; once it
//! passes, they are unmapped. Without the `dpdk` feature the file holds one
//! test that reports a skip.

#[cfg(not(feature = "dpdk"))]
#[test]
fn dpdk_unmap() {
    testkit::skip(
        "ports::dpdk_unmap",
        "built without the `dpdk` feature (cargo test -p ports --features dpdk)",
    );
}

#[cfg(feature = "dpdk")]
mod with_dpdk {
    use std::time::{Duration, Instant};

    use ports::dpdk::{DeviceSpec, Eal, StartOptions, unmap};
    use ports::grace::Mark;

    fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !f() {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn a_memif_peer_leaving_unmaps_only_after_the_workers_pass() {
        let eal = match Eal::init(testkit::dpdk_eal_args()) {
            Ok(e) => e,
            Err(e) => {
                testkit::skip(
                    "ports::dpdk_unmap",
                    &format!("EAL does not start here: {e}"),
                );
                return;
            }
        };
        ports::dpdk::register_thread();
        let sock = std::env::temp_dir().join(format!("mwrouter-unmap-{}.sock", std::process::id()));
        let args = |role: &str| {
            format!(
                "role={role},id=0,socket={},socket-abstract=no",
                sock.display()
            )
        };
        let server = eal
            .create_vdev("net_memif_unmap0", &args("server"))
            .unwrap();
        let client = eal
            .create_vdev("net_memif_unmap1", &args("client"))
            .unwrap();
        let opts = StartOptions {
            queues: 1,
            cache: 32,
            extra_mbufs: 256,
            ..StartOptions::default()
        };
        let mut devs = eal
            .start_ports(
                &[
                    DeviceSpec::new(&server).rings(256, 256),
                    DeviceSpec::new(&client).rings(256, 256),
                ],
                &opts,
            )
            .expect("start the memif pair");
        wait_for("the memif pair to connect", || {
            devs.iter().all(|d| d.link_up())
        });

        // A worker in the middle of a pass: it holds a mark it has not moved.
        let worker = Mark::new();
        let (deferred, reclaimed, _) = unmap::counts();
        // The client goes away (stopped and closed on this thread); the
        // server notices on EAL's interrupt thread and unmaps the rings.
        let client = devs.pop().unwrap();
        drop(client);
        wait_for("the server to unmap the client's rings", || {
            unmap::counts().0 > deferred
        });
        assert!(
            unmap::pending() > 0,
            "kept mapped while the worker has not passed"
        );
        unmap::reclaim();
        assert!(
            unmap::pending() > 0,
            "a reclaim before the worker passes keeps them"
        );
        assert_eq!(unmap::counts().1, reclaimed);

        // The worker starts its next pass: nothing of the old rings in use.
        worker.quiescent();
        unmap::reclaim();
        assert_eq!(unmap::pending(), 0);
        assert!(unmap::counts().1 > reclaimed);
        assert_eq!(unmap::counts().2, 0, "none forced");
        assert!(!devs[0].link_up(), "the server's link is down");
        drop(devs);
        let _ = std::fs::remove_file(&sock);
    }
}

//! How a worker wakes the control thread when it punted a packet or queued
//! a notice while the control thread sleeps (docs/architecture.md "The
//! control thread's loop").
//!
//! One [`Wake`] per worker, shared by that worker and the control thread
//! only (with the worker's rings). Without lost wake-ups, by the Dekker
//! pattern: the control thread sets `sleeping`, fences, looks at every
//! ring once more and parks only if all are empty; a worker that queued
//! something in a pass fences after the push and loads `sleeping`, and
//! unparks the control thread only if it is set. Either the control thread
//! sees the packet, or the worker sees the flag (and a park that follows
//! an unpark returns at once). A busy control thread costs a worker one
//! fence and one load per pass that punted, never a system call; the unpark
//! (a futex wake) happens only when the control thread sleeps and a packet
//! was punted, which is the exception path. The control thread's park is
//! bounded in any case, so that nothing can hold a punt longer than its
//! tick.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering, fence};
use std::thread::Thread;

use arc_swap::ArcSwapOption;

/// The wake-up shared by one worker and the control thread.
#[derive(Debug, Default)]
pub struct Wake {
    /// Set by the control thread before it parks, cleared when it wakes.
    sleeping: AtomicBool,
    /// The control thread, once it runs (another thread when the control
    /// plane is spawned again).
    thread: ArcSwapOption<Thread>,
}

impl Wake {
    /// Names the thread to wake (the control thread, when it starts).
    pub fn register(&self, thread: Thread) {
        self.thread.store(Some(Arc::new(thread)));
    }

    /// Says that the control thread is about to park. The caller then
    /// fences ([`Wake::fence`]) and looks at the rings once more before it
    /// parks.
    pub fn sleep(&self) {
        self.sleeping.store(true, Ordering::Relaxed);
    }

    /// Says that the control thread is awake.
    pub fn awake(&self) {
        self.sleeping.store(false, Ordering::Relaxed);
    }

    /// The fence between the control thread's flag and its last look at
    /// the rings (one for all the workers' flags).
    pub fn fence() {
        fence(Ordering::SeqCst);
    }

    /// Called by a worker after it queued something: unparks the control
    /// thread if it sleeps. The fence orders the push before the load of
    /// the flag.
    #[cold]
    #[inline(never)]
    pub fn wake(&self) {
        fence(Ordering::SeqCst);
        if self.sleeping.load(Ordering::Relaxed)
            && let Some(t) = self.thread.load().as_ref()
        {
            t.unpark();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn a_sleeping_thread_is_woken_and_an_awake_one_is_not() {
        let w = Arc::new(Wake::default());
        // Nobody registered: nothing to wake, nothing fails.
        w.wake();
        let w2 = w.clone();
        let t = std::thread::spawn(move || {
            w2.register(std::thread::current());
            w2.sleep();
            Wake::fence();
            let start = Instant::now();
            std::thread::park_timeout(Duration::from_secs(10));
            w2.awake();
            start.elapsed()
        });
        // Wake it until it has parked and come back (an unpark before its
        // park makes the park return at once).
        while !t.is_finished() {
            w.wake();
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(t.join().unwrap() < Duration::from_secs(5));
        assert!(!w.sleeping.load(Ordering::Relaxed));
    }
}

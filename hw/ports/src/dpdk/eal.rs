//! EAL initialisation (once per process), typed errors, and the
//! registration of non-EAL threads.

use std::cell::Cell;
use std::ffi::{CStr, CString, c_char, c_int};
use std::fmt;
use std::sync::OnceLock;

use dpdk_sys as sys;

/// An error of the DPDK backend. DPDK's own failures carry the errno value
/// (`rte_errno`, or the negative return value of an ethdev call) and its
/// text from `rte_strerror`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DpdkError {
    /// An EAL argument holds a NUL byte.
    BadArgument(String),
    /// `rte_eal_init` failed.
    EalInit {
        /// `rte_errno`.
        errno: i32,
        /// Its text.
        text: String,
    },
    /// `rte_eal_init` left arguments it did not parse (non-option words).
    /// EAL is initialised nevertheless, but this configuration is refused.
    UnparsedArguments(Vec<String>),
    /// EAL was initialised in this process already, with other arguments
    /// (EAL can be initialised once per process: a second `rte_eal_init`
    /// fails with `EALREADY`, also after `rte_eal_cleanup`).
    AlreadyInitialised {
        /// The arguments of the first initialisation.
        args: Vec<String>,
    },
    /// EAL is not initialised (no successful [`Eal::init`] yet).
    NotInitialised,
    /// A DPDK call failed.
    Call {
        /// The function.
        call: &'static str,
        /// What it was called on (a device, a pool, a queue).
        subject: String,
        /// The errno value.
        errno: i32,
        /// Its text.
        text: String,
    },
    /// No ethdev of that name.
    NoSuchDevice(String),
    /// A configuration DPDK cannot satisfy, or an inconsistent one.
    Config(String),
    /// The queue is owned by another [`DpdkPort`](super::DpdkPort) or
    /// [`RawQueue`](super::RawQueue) already.
    QueueTaken {
        /// The ethdev port id.
        port: u16,
        /// The queue.
        queue: u16,
    },
}

/// The name EAL gives its interrupt thread, where drivers handle link and
/// control-channel events.
pub const INTERRUPT_THREAD: &str = "eal-intr-thread";

impl fmt::Display for DpdkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DpdkError::BadArgument(a) => write!(f, "EAL argument {a:?} holds a NUL byte"),
            DpdkError::EalInit { errno, text } => {
                write!(f, "rte_eal_init failed: {text} (rte_errno {errno})")
            }
            DpdkError::UnparsedArguments(a) => {
                write!(f, "rte_eal_init did not parse the arguments {a:?}")
            }
            DpdkError::AlreadyInitialised { args } => write!(
                f,
                "EAL is initialised in this process already, with other arguments {args:?} \
                 (one EAL initialisation per process)"
            ),
            DpdkError::NotInitialised => f.write_str("EAL is not initialised (call Eal::init)"),
            DpdkError::Call {
                call,
                subject,
                errno,
                text,
            } => write!(f, "{call}({subject}) failed: {text} (errno {errno})"),
            DpdkError::NoSuchDevice(n) => write!(f, "no DPDK ethdev named {n:?}"),
            DpdkError::Config(s) => f.write_str(s),
            DpdkError::QueueTaken { port, queue } => {
                write!(f, "queue {queue} of ethdev port {port} is taken already")
            }
        }
    }
}

impl std::error::Error for DpdkError {}

/// `rte_strerror(errno)` as a `String`.
pub(crate) fn strerror(errno: i32) -> String {
    // SAFETY: rte_strerror accepts any value and returns a NUL-terminated
    // string (static, or in a thread-local buffer valid until the next call
    // on this thread); it is copied before returning.
    unsafe { CStr::from_ptr(sys::rte_strerror(errno)) }
        .to_string_lossy()
        .into_owned()
}

/// A failed call whose error is in `rte_errno`.
pub(crate) fn errno_error(call: &'static str, subject: impl Into<String>) -> DpdkError {
    let errno = sys::mw_errno();
    DpdkError::Call {
        call,
        subject: subject.into(),
        errno,
        text: strerror(errno),
    }
}

/// A failed call that returned `-errno` (the ethdev convention).
pub(crate) fn rc_error(call: &'static str, subject: impl Into<String>, rc: c_int) -> DpdkError {
    let errno = rc.saturating_neg();
    DpdkError::Call {
        call,
        subject: subject.into(),
        errno,
        text: strerror(errno),
    }
}

/// The initialised EAL of this process.
#[derive(Debug)]
pub struct Eal {
    args: Vec<String>,
    main_lcore: u32,
    lcores: u32,
}

static EAL: OnceLock<Result<Eal, DpdkError>> = OnceLock::new();

impl Eal {
    /// Initialises EAL with `args` (EAL options only: the program name is
    /// supplied), exactly once per process. Later calls with the same
    /// arguments return the same `Eal`; with other arguments they return
    /// [`DpdkError::AlreadyInitialised`]; after a failed initialisation they
    /// return that failure again (EAL cannot be initialised twice).
    ///
    /// The calling thread becomes EAL's main lcore (the first core of
    /// `-l`/`--lcores`, to which EAL pins it).
    pub fn init(args: Vec<String>) -> Result<&'static Eal, DpdkError> {
        match EAL.get_or_init(|| Eal::init_once(&args)) {
            Ok(eal) if eal.args == args => Ok(eal),
            Ok(eal) => Err(DpdkError::AlreadyInitialised {
                args: eal.args.clone(),
            }),
            Err(e) => Err(e.clone()),
        }
    }

    /// The EAL of this process, if [`Eal::init`] succeeded.
    pub fn get() -> Option<&'static Eal> {
        EAL.get().and_then(|r| r.as_ref().ok())
    }

    fn init_once(args: &[String]) -> Result<Eal, DpdkError> {
        let mut cargs = vec![CString::new("mwrouter").expect("no NUL")];
        for a in args {
            cargs.push(CString::new(a.as_str()).map_err(|_| DpdkError::BadArgument(a.clone()))?);
        }
        // EAL may keep pointers into argv and permutes the array: both live
        // for the rest of the process.
        let cargs: &'static [CString] = Box::leak(cargs.into_boxed_slice());
        let argv: &'static mut [*mut c_char] = Box::leak(
            cargs
                .iter()
                .map(|a| a.as_ptr().cast_mut())
                .collect::<Vec<_>>()
                .into_boxed_slice(),
        );
        let argc = argv.len() as c_int;
        // SAFETY: argv holds argc NUL-terminated strings that outlive the
        // process; this runs once per process (OnceLock).
        let rc = unsafe { sys::rte_eal_init(argc, argv.as_mut_ptr()) };
        if rc < 0 {
            let errno = sys::mw_errno();
            return Err(DpdkError::EalInit {
                errno,
                text: strerror(errno),
            });
        }
        // EAL parsed argv[1..=rc] and moved the program name to argv[rc];
        // argv[rc + 1..] are the words it did not take.
        let rest: Vec<String> = argv[(rc as usize + 1).min(argv.len())..]
            .iter()
            // SAFETY: each entry points into `cargs` (EAL only permutes).
            .map(|&p| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
            .collect();
        if !rest.is_empty() {
            return Err(DpdkError::UnparsedArguments(rest));
        }
        // What the drivers unmap on EAL's interrupt thread waits for the
        // workers (super::unmap).
        if let Some(tid) = super::unmap::thread_named(INTERRUPT_THREAD) {
            super::unmap::defer_on_thread(tid);
        }

        Ok(Eal {
            args: args.to_vec(),
            // SAFETY: EAL is initialised.
            main_lcore: unsafe { sys::rte_get_main_lcore() },
            // SAFETY: EAL is initialised.
            lcores: unsafe { sys::rte_lcore_count() },
        })
    }

    /// The arguments EAL was initialised with.
    pub fn args(&self) -> &[String] {
        &self.args
    }

    /// The main lcore (the thread that called [`Eal::init`]).
    pub fn main_lcore(&self) -> u32 {
        self.main_lcore
    }

    /// The lcores EAL set up (`-l`), not counting registered threads.
    pub fn lcore_count(&self) -> u32 {
        self.lcores
    }

    /// Creates the virtual device `name` with the driver arguments `args`
    /// (what `--vdev=name,args` does at start-up, e.g. `("net_null7",
    /// "no-rx=1")`), and returns its ethdev name for
    /// [`DeviceSpec::new`](super::DeviceSpec::new). For tests and benchmarks: a
    /// vdev name can be used once per process.
    pub fn create_vdev(&self, name: &str, args: &str) -> Result<String, DpdkError> {
        let cname = CString::new(name).map_err(|_| DpdkError::BadArgument(name.into()))?;
        let cargs = CString::new(args).map_err(|_| DpdkError::BadArgument(args.into()))?;
        // SAFETY: EAL is initialised (`self` exists); both are valid C
        // strings for the duration of the call.
        let rc = unsafe { sys::rte_vdev_init(cname.as_ptr(), cargs.as_ptr()) };
        if rc != 0 {
            return Err(super::eal::rc_error("rte_vdev_init", name, rc));
        }
        Ok(name.to_string())
    }
}

/// The calling thread's lcore id, `None` when it has none (neither an EAL
/// thread nor registered).
pub fn lcore_id() -> Option<u32> {
    let id = sys::mw_lcore_id();
    (id != sys::LCORE_ID_ANY).then_some(id)
}

/// Unregisters the thread's lcore id when the thread ends.
struct Registration;

impl Drop for Registration {
    fn drop(&mut self) {
        // SAFETY: this thread registered itself with rte_thread_register
        // (only then is a Registration stored); C thread-locals stay valid
        // while Rust's thread-local destructors run.
        unsafe { sys::rte_thread_unregister() }
    }
}

thread_local! {
    static REGISTRATION: Cell<Option<Registration>> = const { Cell::new(None) };
}

/// Gives the calling thread an lcore id (`rte_thread_register`) unless it
/// has one already (EAL threads, or registered before), so that it gets
/// mempool caches; the id is released when the thread ends. Returns the
/// lcore id.
pub fn try_register_thread() -> Result<u32, DpdkError> {
    if Eal::get().is_none() {
        return Err(DpdkError::NotInitialised);
    }
    if let Some(id) = lcore_id() {
        return Ok(id);
    }
    // SAFETY: EAL is initialised; the call only touches this thread's state
    // and EAL's lcore table (under its lock).
    if unsafe { sys::rte_thread_register() } != 0 {
        return Err(errno_error("rte_thread_register", "this thread"));
    }
    REGISTRATION.with(|r| r.set(Some(Registration)));
    lcore_id().ok_or(DpdkError::Config(
        "rte_thread_register succeeded but the thread has no lcore id".into(),
    ))
}

/// [`try_register_thread`] for `Worker::spawn`'s `on_start` hook: panics
/// (ending that thread) when the thread cannot be registered — EAL not
/// initialised, or all `RTE_MAX_LCORE` (128) lcore ids in use.
pub fn register_thread() {
    if let Err(e) = try_register_thread() {
        panic!("cannot register this thread with DPDK: {e}");
    }
}

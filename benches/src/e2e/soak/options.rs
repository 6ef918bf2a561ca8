//! The soak's options (`benches/e2e --part soak|soak-lab ...`), with their
//! defaults and how the command line spells them (docs/reliability.md
//! "Soak").

use std::path::PathBuf;
use std::time::Duration;

use crate::e2e::Result;

/// Which soak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `--part soak`: mwrouterd on DPDK memif ports, its buddy, mwgen.
    Default,
    /// `--part soak-lab`: mwlab's Appendix B lab with impaired hosts.
    Lab,
}

impl Mode {
    /// The name in the report (`default`, `lab`).
    pub fn name(self) -> &'static str {
        match self {
            Mode::Default => "default",
            Mode::Lab => "lab",
        }
    }
}

/// The impairment of every lab host's receive side (the host's `impair`
/// command, docs/mwlab.md "Hosts"): probabilities from 0 to 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Impairment {
    /// Each datagram lost.
    pub loss: f64,
    /// Each datagram that is not lost delivered twice.
    pub duplicate: f64,
    /// Each datagram held back behind the next one.
    pub reorder: f64,
}

impl Impairment {
    /// Reads `loss=P,dup=P,reorder=P` (each optional, 0 when left out;
    /// also `rx_loss=` and `duplicate=`).
    pub fn parse(spec: &str) -> Result<Impairment> {
        let bad = || format!("--impair {spec}: expected loss=P,dup=P,reorder=P (P from 0 to 1)");
        let mut out = Impairment {
            loss: 0.0,
            duplicate: 0.0,
            reorder: 0.0,
        };
        for part in spec.split(',').filter(|p| !p.trim().is_empty()) {
            let (k, v) = part.split_once('=').ok_or_else(bad)?;
            let p: f64 = v
                .trim()
                .parse()
                .ok()
                .filter(|p| (0.0..=1.0).contains(p))
                .ok_or_else(bad)?;
            match k.trim() {
                "loss" | "rx_loss" => out.loss = p,
                "dup" | "duplicate" => out.duplicate = p,
                "reorder" => out.reorder = p,
                _ => return Err(bad()),
            }
        }
        Ok(out)
    }
}

/// Everything the soak's command line sets.
#[derive(Debug, Clone, PartialEq)]
pub struct SoakOptions {
    /// Which soak (`None`: no soak part asked for).
    pub mode: Option<Mode>,
    /// How long the traffic and the churn last, minutes.
    pub minutes: f64,
    /// Flap every this many seconds (0: never).
    pub flap_every: f64,
    /// Reload every this many seconds (0: never).
    pub reload_every: f64,
    /// Start a capture every this many seconds (0: never).
    pub capture_every: f64,
    /// Sample RSS, threads, descriptors and log lines every this many
    /// seconds.
    pub sample_every: f64,
    /// The most log lines a router may write in a minute.
    pub max_log_per_min: u64,
    /// RSS growth allowed beyond 5 % of the start, kB.
    pub rss_slack_kb: u64,
    /// How long to wait for a quiet machine first.
    pub patience: Duration,
    /// Default mode: the rate (packets/s), which skips the NDR search.
    pub rate_pps: Option<f64>,
    /// Default mode: the fraction of the NDR to soak at.
    pub fraction: f64,
    /// Default mode: the NDR search's trial duration.
    pub search_trial: Duration,
    /// Default mode: mwgen's `--size`.
    pub size: String,
    /// Default mode: the router's worker core.
    pub worker_core: u32,
    /// Default mode: the core of the router's other threads, its buddy,
    /// mwctl and this harness: by default mwgen's, so that the worker has
    /// its core alone as a deployed box's has (docs/reliability.md).
    pub control_core: u32,
    /// Default mode: mwgen's core.
    pub gen_core: u32,
    /// Lab mode: the topology file (`None`: examples/appendix-b.toml, built
    /// into mwlab).
    pub topology: Option<PathBuf>,
    /// Lab mode: the router whose ports flap.
    pub flap_router: String,
    /// Lab mode: the streams of probes, (sender, receiver) by host name.
    pub streams: Vec<(String, String)>,
    /// Lab mode: probes per second of each stream.
    pub lab_rate: f64,
    /// Lab mode: the impairment of every host's receive side.
    pub impair: Impairment,
    /// Lab mode: the first host's impairment seed (the next host's is one
    /// more, in name order).
    pub seed: u64,
}

impl Default for SoakOptions {
    fn default() -> SoakOptions {
        SoakOptions {
            mode: None,
            minutes: 10.0,
            flap_every: 3.0,
            reload_every: 5.0,
            capture_every: 4.0,
            sample_every: 10.0,
            max_log_per_min: 300,
            rss_slack_kb: 4096,
            patience: Duration::from_secs(60),
            rate_pps: None,
            fraction: 0.9,
            search_trial: Duration::from_secs(2),
            size: "64".into(),
            worker_core: 0,
            control_core: 1,
            gen_core: 1,
            topology: None,
            flap_router: "ad".into(),
            streams: parse_streams(DEFAULT_STREAMS).expect("well-formed"),
            lab_rate: 250.0,
            impair: Impairment {
                loss: 0.01,
                duplicate: 0.01,
                reorder: 0.01,
            },
            seed: 1,
        }
    }
}

/// The lab's default streams: both ways between H0 and H9, H1 and H6, H2
/// and H8, H4 and H3.
pub const DEFAULT_STREAMS: &str = "H0>H9,H9>H0,H1>H6,H6>H1,H2>H8,H8>H2,H4>H3,H3>H4";

/// The soak's options in the usage text.
pub const USAGE: &str =
    "  soak and soak-lab (each runs alone; docs/reliability.md \"Soak\"; exit 0 every check passed,
  1 a check failed, 2 the run could not be made):
  --minutes M            traffic and churn for M minutes (10)
  --flap-every S         the buddy (soak) or the router's ports (soak-lab) flap every S s (3)
  --reload-every S       a router reloads a changed configuration every S s (5)
  --capture-every S      a capture starts every S s (4)
  --sample-every S       RSS, threads, descriptors and log lines sampled every S s (10)
  --max-log-per-min N    log lines a router may write in a minute (300)
  --rss-slack-kb K       RSS growth allowed: max(K kB, 5 %) (4096)
  --patience S           wait up to S s for a quiet machine first (60)
  soak: --rate-pps N (skips the NDR search), --fraction F (0.9 of the NDR), --search-trial D (2s),
        --size S (mwgen's, 64), --worker-core C (0), --control-core C (1), --gen-core C (1)
  soak-lab: --topology FILE (examples/appendix-b.toml), --flap-router NAME (ad),
        --streams A>B,... (H0>H9,H9>H0,H1>H6,H6>H1,H2>H8,H8>H2,H4>H3,H3>H4), --lab-rate PPS (250
        per stream), --impair loss=P,dup=P,reorder=P (0.01 each), --seed N (1)";

/// `A>B,C>D` as pairs of host names.
pub fn parse_streams(spec: &str) -> Result<Vec<(String, String)>> {
    spec.split(',')
        .map(|pair| {
            pair.split_once('>')
                .map(|(a, b)| (a.trim().to_string(), b.trim().to_string()))
                .filter(|(a, b)| !a.is_empty() && !b.is_empty() && a != b)
                .ok_or_else(|| {
                    format!("--streams {spec}: expected SENDER>RECEIVER,... (H0>H9,H9>H0)")
                })
        })
        .collect()
}

/// A duration: `2s`, `500ms` or seconds (`1.5`).
pub fn parse_duration(s: &str) -> Result<Duration> {
    let (num, scale) = if let Some(ms) = s.strip_suffix("ms") {
        (ms, 1e-3)
    } else if let Some(secs) = s.strip_suffix('s') {
        (secs, 1.0)
    } else {
        (s, 1.0)
    };
    num.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0)
        .map(|v| Duration::from_secs_f64(v * scale))
        .ok_or_else(|| format!("{s}: expected a duration such as 2s or 500ms"))
}

fn number<T: std::str::FromStr>(name: &str, v: &str, ok: impl Fn(&T) -> bool) -> Result<T> {
    v.parse::<T>()
        .ok()
        .filter(|x| ok(x))
        .ok_or_else(|| format!("{name} {v}: out of range or not a number"))
}

impl SoakOptions {
    /// Takes `arg` when it is one of the soak's options, its value from
    /// `value` (which is given the option's name); `Ok(false)` when it is
    /// not one.
    pub fn take(
        &mut self,
        arg: &str,
        value: &mut dyn FnMut(&str) -> Result<String>,
    ) -> Result<bool> {
        let secs = |v: &str| number::<f64>(arg, v, |x| x.is_finite() && *x >= 0.0);
        let positive = |v: &str| number::<f64>(arg, v, |x| x.is_finite() && *x > 0.0);
        match arg {
            "--minutes" => self.minutes = positive(&value(arg)?)?,
            "--flap-every" => self.flap_every = secs(&value(arg)?)?,
            "--reload-every" => self.reload_every = secs(&value(arg)?)?,
            "--capture-every" => self.capture_every = secs(&value(arg)?)?,
            "--sample-every" => self.sample_every = positive(&value(arg)?)?,
            "--max-log-per-min" => self.max_log_per_min = number(arg, &value(arg)?, |_| true)?,
            "--rss-slack-kb" => self.rss_slack_kb = number(arg, &value(arg)?, |_| true)?,
            "--patience" => self.patience = Duration::from_secs_f64(secs(&value(arg)?)?),
            "--rate-pps" => self.rate_pps = Some(positive(&value(arg)?)?),
            "--fraction" => {
                self.fraction = number(arg, &value(arg)?, |x: &f64| *x > 0.0 && *x <= 1.0)?;
            }
            "--search-trial" => self.search_trial = parse_duration(&value(arg)?)?,
            "--size" => self.size = value(arg)?,
            "--worker-core" => self.worker_core = number(arg, &value(arg)?, |_| true)?,
            "--control-core" => self.control_core = number(arg, &value(arg)?, |_| true)?,
            "--gen-core" => self.gen_core = number(arg, &value(arg)?, |_| true)?,
            "--topology" => self.topology = Some(PathBuf::from(value(arg)?)),
            "--flap-router" => self.flap_router = value(arg)?,
            "--streams" => self.streams = parse_streams(&value(arg)?)?,
            "--lab-rate" => self.lab_rate = positive(&value(arg)?)?,
            "--impair" => self.impair = Impairment::parse(&value(arg)?)?,
            "--seed" => self.seed = number(arg, &value(arg)?, |_| true)?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Options from a list of soak options only (an error for anything
    /// else).
    pub fn parse<S: AsRef<str>>(mode: Mode, args: &[S]) -> Result<SoakOptions> {
        let mut o = SoakOptions {
            mode: Some(mode),
            ..SoakOptions::default()
        };
        let mut it = args.iter().map(|a| a.as_ref().to_string());
        while let Some(a) = it.next() {
            let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
            if !o.take(&a, &mut value)? {
                return Err(format!("unknown argument {a}"));
            }
        }
        Ok(o)
    }

    /// Whether any option differs from its default (soak options given
    /// without a soak part are an error).
    pub fn any_given(&self) -> bool {
        *self
            != SoakOptions {
                mode: self.mode,
                ..SoakOptions::default()
            }
    }

    /// The soak's length.
    pub fn duration(&self) -> Duration {
        Duration::from_secs_f64(self.minutes * 60.0)
    }
}

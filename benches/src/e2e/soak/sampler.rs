//! What the soak watches besides the counters: each daemon's memory
//! (`/proc/PID/status`), threads and descriptors, and its log's lines
//! (WARN and ERROR among them) per minute.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{Value, json};

/// A process's memory (kB), threads and open descriptors.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcStatus {
    /// VmRSS.
    pub rss_kb: u64,
    /// RssAnon.
    pub anon_kb: u64,
    /// RssFile.
    pub file_kb: u64,
    /// RssShmem.
    pub shmem_kb: u64,
    /// HugetlbPages.
    pub hugetlb_kb: u64,
    /// VmHWM.
    pub hwm_kb: u64,
    /// Threads.
    pub threads: u64,
    /// Open descriptors.
    pub fds: u64,
}

/// Reads `/proc/PID/status` and counts `/proc/PID/fd`; `None` when the
/// process is gone.
pub fn proc_status(pid: u32) -> Option<ProcStatus> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let mut s = ProcStatus::default();
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let n = || v.split_whitespace().next()?.parse::<u64>().ok();
        let field = match k {
            "VmRSS" => &mut s.rss_kb,
            "RssAnon" => &mut s.anon_kb,
            "RssFile" => &mut s.file_kb,
            "RssShmem" => &mut s.shmem_kb,
            "HugetlbPages" => &mut s.hugetlb_kb,
            "VmHWM" => &mut s.hwm_kb,
            "Threads" => &mut s.threads,
            _ => continue,
        };
        *field = n()?;
    }
    s.fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count() as u64;
    Some(s)
}

/// `text` without ANSI colour sequences (`ESC [ ... m`).
pub fn strip_ansi(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if text[i] == 0x1b && text.get(i + 1) == Some(&b'[') {
            let mut j = i + 2;
            while j < text.len() && (text[j].is_ascii_digit() || text[j] == b';') {
                j += 1;
            }
            if text.get(j) == Some(&b'm') {
                i = j + 1;
                continue;
            }
        }
        out.push(text[i]);
        i += 1;
    }
    out
}

/// Counts a log file's whole lines as it grows, and its WARN and ERROR
/// lines (the first 50 of them kept).
#[derive(Debug, Clone)]
pub struct LogCounter {
    path: PathBuf,
    offset: u64,
    /// Lines so far.
    pub lines: u64,
    /// WARN lines.
    pub warn: u64,
    /// ERROR lines.
    pub error: u64,
    /// The first WARN and ERROR lines.
    pub notable: Vec<String>,
}

impl LogCounter {
    /// Counts `path` from its start.
    pub fn new(path: &Path) -> LogCounter {
        LogCounter {
            path: path.into(),
            offset: 0,
            lines: 0,
            warn: 0,
            error: 0,
            notable: Vec::new(),
        }
    }

    /// Reads what was appended; returns the lines so far.
    pub fn update(&mut self) -> u64 {
        use std::io::{Read, Seek, SeekFrom};
        let mut chunk = Vec::new();
        let read = std::fs::File::open(&self.path).and_then(|mut f| {
            f.seek(SeekFrom::Start(self.offset))?;
            f.read_to_end(&mut chunk)
        });
        if read.is_err() {
            return self.lines;
        }
        self.count(&chunk);
        self.lines
    }

    /// Counts the whole lines of `chunk`, what follows its offset in the
    /// file (a partial last line is read again next time).
    pub fn count(&mut self, chunk: &[u8]) {
        let end = chunk.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        self.offset += end as u64;
        let whole = strip_ansi(&chunk[..end]);
        for line in whole.split(|&b| b == b'\n') {
            let text = String::from_utf8_lossy(line);
            let (warn, error) = (text.contains(" WARN "), text.contains(" ERROR "));
            if warn || error {
                if warn {
                    self.warn += 1;
                } else {
                    self.error += 1;
                }
                if self.notable.len() < 50 {
                    self.notable.push(text.into_owned());
                }
            }
        }
        self.lines += whole.iter().filter(|&&b| b == b'\n').count() as u64;
    }
}

/// Lines per minute from `(seconds, lines so far)` samples: the increase
/// over each whole minute from the first sample, and the last part of a
/// minute (10 s at least) scaled to a minute.
pub fn per_minute(samples: &[(f64, u64)]) -> Vec<u64> {
    let Some((&(t0, v0), rest)) = samples.split_first() else {
        return Vec::new();
    };
    if rest.is_empty() {
        return Vec::new();
    }
    let (mut start_t, mut start_v) = (t0, v0);
    let mut out = Vec::new();
    for &(t, v) in rest {
        if t - start_t >= 60.0 - 1e-6 {
            out.push(v.saturating_sub(start_v));
            (start_t, start_v) = (t, v);
        }
    }
    let &(t, v) = samples.last().expect("not empty");
    if t - start_t >= 10.0 {
        out.push((v.saturating_sub(start_v) as f64 * 60.0 / (t - start_t)).round() as u64);
    }
    out
}

/// A daemon's memory over the soak.
#[derive(Debug, Clone, PartialEq)]
pub struct RssSummary {
    /// VmRSS at the first sample, kB.
    pub start_kb: u64,
    /// At the last.
    pub end_kb: u64,
    /// The most.
    pub max_kb: u64,
    /// RssAnon at the first sample.
    pub start_anon_kb: u64,
    /// At the last.
    pub end_anon_kb: u64,
    /// Hugepages mapped at the last sample.
    pub hugetlb_kb: u64,
    /// Threads at the first and last samples.
    pub threads: (u64, u64),
    /// Descriptors at the first and last samples.
    pub fds: (u64, u64),
    /// `(seconds, VmRSS kB)` of every sample.
    pub samples: Vec<(f64, u64)>,
}

impl RssSummary {
    /// Whether VmRSS grew by more than `max(slack_kb, 5 %)`.
    pub fn grew(&self, slack_kb: u64) -> bool {
        let bound = (slack_kb as f64).max(self.start_kb as f64 * 0.05);
        self.end_kb as f64 - self.start_kb as f64 > bound
    }

    /// The JSON record.
    pub fn to_json(&self) -> Value {
        json!({
            "start_kb": self.start_kb,
            "end_kb": self.end_kb,
            "max_kb": self.max_kb,
            "start_anon_kb": self.start_anon_kb,
            "end_anon_kb": self.end_anon_kb,
            "hugetlb_kb": self.hugetlb_kb,
            "threads": [self.threads.0, self.threads.1],
            "fds": [self.fds.0, self.fds.1],
            "samples": self.samples,
        })
    }
}

/// A daemon's log over the soak.
#[derive(Debug, Clone, PartialEq)]
pub struct LogSummary {
    /// Lines in all.
    pub lines: u64,
    /// WARN lines.
    pub warn: u64,
    /// ERROR lines.
    pub error: u64,
    /// Lines per minute ([`per_minute`]).
    pub per_minute: Vec<u64>,
    /// The most in a minute (all the lines when the soak was shorter).
    pub max_per_minute: u64,
    /// The first WARN and ERROR lines.
    pub notable: Vec<String>,
}

impl LogSummary {
    /// The JSON record.
    pub fn to_json(&self) -> Value {
        json!({
            "lines": self.lines,
            "warn": self.warn,
            "error": self.error,
            "per_minute": self.per_minute,
            "max_per_minute": self.max_per_minute,
            "warn_and_error_lines": self.notable,
        })
    }
}

/// The samples of the daemons the soak watches, by name.
#[derive(Debug)]
pub struct Sampler {
    t0: Instant,
    rss: BTreeMap<String, Vec<(f64, ProcStatus)>>,
    logs: BTreeMap<String, (LogCounter, Vec<(f64, u64)>)>,
}

impl Sampler {
    /// Samples timed from `t0`.
    pub fn new(t0: Instant) -> Sampler {
        Sampler {
            t0,
            rss: BTreeMap::new(),
            logs: BTreeMap::new(),
        }
    }

    /// Counts the lines of `name`'s log at `path`.
    pub fn watch_log(&mut self, name: &str, path: &Path) {
        self.logs
            .insert(name.into(), (LogCounter::new(path), Vec::new()));
    }

    /// Samples each process of `pids` (a name without a process is
    /// skipped) and every watched log.
    pub fn sample(&mut self, pids: &[(&str, Option<u32>)]) {
        let t = (self.t0.elapsed().as_secs_f64() * 10.0).round() / 10.0;
        for (name, pid) in pids {
            if let Some(st) = pid.and_then(proc_status) {
                self.rss.entry((*name).into()).or_default().push((t, st));
            }
        }
        for (lc, s) in self.logs.values_mut() {
            s.push((t, lc.update()));
        }
    }

    /// The last VmRSS of `name`, kB.
    pub fn last_rss_kb(&self, name: &str) -> u64 {
        self.rss
            .get(name)
            .and_then(|s| s.last())
            .map_or(0, |(_, st)| st.rss_kb)
    }

    /// Lines counted so far in every watched log.
    pub fn log_lines(&self) -> u64 {
        self.logs.values().map(|(lc, _)| lc.lines).sum()
    }

    /// `name`'s memory over the samples (`None`: never sampled).
    pub fn rss_summary(&self, name: &str) -> Option<RssSummary> {
        let s = self.rss.get(name)?;
        let (first, last) = (s.first()?.1, s.last()?.1);
        Some(RssSummary {
            start_kb: first.rss_kb,
            end_kb: last.rss_kb,
            max_kb: s.iter().map(|(_, x)| x.rss_kb).max().unwrap_or(0),
            start_anon_kb: first.anon_kb,
            end_anon_kb: last.anon_kb,
            hugetlb_kb: last.hugetlb_kb,
            threads: (first.threads, last.threads),
            fds: (first.fds, last.fds),
            samples: s.iter().map(|(t, x)| (*t, x.rss_kb)).collect(),
        })
    }

    /// `name`'s log over the samples (read to its end first).
    pub fn log_summary(&mut self, name: &str) -> Option<LogSummary> {
        let (lc, s) = self.logs.get_mut(name)?;
        lc.update();
        let pm = per_minute(s);
        Some(LogSummary {
            lines: lc.lines,
            warn: lc.warn,
            error: lc.error,
            max_per_minute: pm.iter().copied().max().unwrap_or(lc.lines),
            per_minute: pm,
            notable: lc.notable.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_per_minute() {
        assert!(per_minute(&[(0.0, 5)]).is_empty());
        let s = [(0.0, 0), (30.0, 10), (60.0, 50), (90.0, 60), (120.0, 90)];
        assert_eq!(per_minute(&s), vec![50, 40]);
        let s = [(0.0, 0), (60.0, 50), (80.0, 60)];
        assert_eq!(per_minute(&s), vec![50, 30]);
    }

    #[test]
    fn log_lines_warnings_and_colours() {
        let mut lc = LogCounter::new(Path::new("/nonexistent"));
        lc.count(b"a \x1b[33m WARN \x1b[0m x\nb  INFO y\nc ERROR z\npartial");
        assert_eq!((lc.lines, lc.warn, lc.error), (3, 1, 1));
        assert_eq!(lc.notable.len(), 2);
        assert!(!lc.notable[0].contains('\x1b'));
    }

    #[test]
    fn this_process_has_a_status() {
        let s = proc_status(std::process::id()).unwrap();
        assert!(s.rss_kb > 0 && s.threads >= 1 && s.fds >= 1);
    }
}

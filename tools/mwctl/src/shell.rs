//! `mwctl` with no command on a terminal: an interactive shell, as vtysh
//! and birdc give (docs/admin-protocol.md "mwctl"). Each line is an mwctl
//! command line without `mwctl` (`show routes`, `port 1 down`), run with
//! the shell's `--socket`, `--json` and `--timeout`; the history is kept
//! between sessions; Tab completes commands and options from mwctl's own
//! command tree, and ports, HR and node addresses from the daemon's
//! tables.

use std::borrow::Cow;
use std::cell::RefCell;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::CommandFactory;
use rustyline::completion::{Completer, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
use rustyline::validate::Validator;
use rustyline::{CompletionType, Config, Context, Editor, Helper};
use serde_json::Value;

use crate::Cli;

/// How long the daemon's ports and addresses are reused for completion.
const LIVE_FOR: Duration = Duration::from_secs(5);

/// Words the shell itself takes.
const SHELL_WORDS: [&str; 3] = ["exit", "quit", "help"];

/// The global options the shell passes on to every command.
#[derive(Debug, Clone)]
pub struct Globals {
    /// `--socket`.
    pub socket: PathBuf,
    /// `--json`.
    pub json: bool,
    /// `--timeout`, if given.
    pub timeout: Option<f64>,
}

impl Globals {
    /// The globals of a parsed command line.
    pub fn of(cli: &Cli) -> Globals {
        Globals {
            socket: cli.socket.clone(),
            json: cli.json,
            timeout: cli.timeout,
        }
    }

    /// `mwctl` and the global options, before a line's words.
    fn argv(&self, json: bool) -> Vec<String> {
        let mut a = vec![
            "mwctl".to_string(),
            "--socket".into(),
            self.socket.display().to_string(),
        ];
        if let Some(t) = self.timeout {
            a.extend(["--timeout".into(), t.to_string()]);
        }
        if json {
            a.push("--json".into());
        }
        a
    }
}

/// Values read from the daemon for completion.
#[derive(Debug, Default)]
struct Live {
    at: Option<Instant>,
    /// Port indices and HR addresses.
    ports: Vec<String>,
    /// HR and node addresses (LRTs, routes).
    addresses: Vec<String>,
}

/// The shell's completion.
pub struct ShellHelper {
    globals: Globals,
    live: RefCell<Live>,
}

impl ShellHelper {
    /// Completion for a shell talking to the daemon of `globals`.
    pub fn new(globals: Globals) -> ShellHelper {
        ShellHelper {
            globals,
            live: RefCell::new(Live::default()),
        }
    }

    /// A `show` answer as JSON, or nothing.
    fn ask(&self, what: &[&str]) -> Option<Value> {
        let mut args = self.globals.argv(true);
        args.extend(what.iter().map(|s| s.to_string()));
        let (mut out, mut err) = (Vec::new(), Vec::new());
        (crate::main_with(args, &mut out, &mut err) == 0)
            .then(|| serde_json::from_slice(&out).ok())
            .flatten()
    }

    /// Refreshes the daemon's ports and addresses when older than
    /// [`LIVE_FOR`].
    fn refresh(&self) {
        if self
            .live
            .borrow()
            .at
            .is_some_and(|t| t.elapsed() < LIVE_FOR)
        {
            return;
        }
        let strings = |v: &Value, key: &str| -> Vec<String> {
            v.as_array()
                .into_iter()
                .flatten()
                .filter_map(|r| match &r[key] {
                    Value::String(s) => Some(s.clone()),
                    Value::Number(n) => Some(n.to_string()),
                    _ => None,
                })
                .collect()
        };
        let mut live = Live {
            at: Some(Instant::now()),
            ..Live::default()
        };
        if let Some(h) = self.ask(&["show", "hrs"]) {
            live.ports.extend(strings(&h, "port"));
            live.ports.extend(strings(&h, "hr"));
            live.addresses.extend(strings(&h, "hr"));
        }
        if let Some(l) = self.ask(&["show", "lrt"]) {
            live.addresses.extend(strings(&l, "address"));
        }
        if let Some(r) = self.ask(&["show", "routes"]) {
            live.addresses.extend(strings(&r, "dst"));
        }
        for v in [&mut live.ports, &mut live.addresses] {
            v.sort();
            v.dedup();
        }
        *self.live.borrow_mut() = live;
    }

    /// The candidates for the word `word` after the words `before`.
    pub fn candidates(&self, before: &[&str], word: &str) -> Vec<String> {
        let root = Cli::command();
        let mut cmd = &root;
        let mut positional = 0usize;
        let mut prev: Option<&str> = None;
        for w in before {
            if let Some(sub) = cmd.find_subcommand(w) {
                cmd = sub;
                positional = 0;
            } else if !w.starts_with('-') && !prev.is_some_and(|p| takes_value(cmd, p)) {
                positional += 1;
            }
            prev = Some(w);
        }
        // The value of an option: ports or addresses.
        if let Some(p) = prev
            && takes_value(cmd, p)
        {
            return self.live_values(option_kind(cmd, p), word);
        }
        let mut out: Vec<String> = Vec::new();
        if word.starts_with('-') {
            out.extend(
                cmd.get_arguments()
                    .chain(root.get_arguments().filter(|a| a.is_global_set()))
                    .filter_map(|a| a.get_long().map(|l| format!("--{l}"))),
            );
        } else {
            out.extend(
                cmd.get_subcommands()
                    .filter(|s| s.get_name() != "help" || before.is_empty())
                    .map(|s| s.get_name().to_string()),
            );
            if before.is_empty() {
                out.extend(SHELL_WORDS.iter().map(|s| s.to_string()));
            }
            // The next positional argument of a leaf command.
            if cmd.get_subcommands().next().is_none()
                && let Some(arg) = cmd.get_positionals().nth(positional)
            {
                let kind = value_kind(arg.get_id().as_str());
                out.extend(self.live_values(kind, word));
                out.extend(
                    arg.get_possible_values()
                        .iter()
                        .map(|v| v.get_name().to_string()),
                );
            }
        }
        out.retain(|c| c.starts_with(word));
        out.sort();
        out.dedup();
        out
    }

    fn live_values(&self, kind: ValueKind, word: &str) -> Vec<String> {
        if kind == ValueKind::Other {
            return Vec::new();
        }
        self.refresh();
        let live = self.live.borrow();
        let from = match kind {
            ValueKind::Port => &live.ports,
            ValueKind::Address => &live.addresses,
            ValueKind::Other => return Vec::new(),
        };
        from.iter()
            .filter(|v| v.starts_with(word))
            .cloned()
            .collect()
    }
}

/// What a value stands for, as far as completion knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ValueKind {
    Port,
    Address,
    Other,
}

/// The kind of a value by its argument's name.
fn value_kind(id: &str) -> ValueKind {
    match id {
        "port" => ValueKind::Port,
        "dst" | "addr" | "address" | "node" | "from" | "to" | "src" | "target" => {
            ValueKind::Address
        }
        _ => ValueKind::Other,
    }
}

/// The argument of `cmd` (or a global one) an option word names.
fn option_arg<'c>(cmd: &'c clap::Command, word: &str) -> Option<&'c clap::Arg> {
    cmd.get_arguments().find(|a| {
        word.strip_prefix("--")
            .is_some_and(|l| a.get_long() == Some(l))
            || (word.len() == 2
                && word.starts_with('-')
                && a.get_short().is_some_and(|s| word.ends_with(s)))
    })
}

/// Whether the option word `word` of `cmd` takes a value.
fn takes_value(cmd: &clap::Command, word: &str) -> bool {
    word.starts_with('-')
        && option_arg(cmd, word).is_some_and(|a| a.get_num_args().is_none_or(|n| n.takes_values()))
        && !matches!(
            option_arg(cmd, word).map(clap::Arg::get_action),
            Some(clap::ArgAction::SetTrue | clap::ArgAction::SetFalse | clap::ArgAction::Count)
        )
}

/// The kind of the value of option `word`.
fn option_kind(cmd: &clap::Command, word: &str) -> ValueKind {
    option_arg(cmd, word).map_or(ValueKind::Other, |a| value_kind(a.get_id().as_str()))
}

impl Completer for ShellHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let head = &line[..pos];
        let start = head.rfind(char::is_whitespace).map_or(0, |i| i + 1);
        let before: Vec<&str> = head[..start].split_whitespace().collect();
        let word = &head[start..];
        let pairs = self
            .candidates(&before, word)
            .into_iter()
            .map(|c| Pair {
                display: c.clone(),
                replacement: c,
            })
            .collect();
        Ok((start, pairs))
    }
}

impl Hinter for ShellHelper {
    type Hint = String;
}

impl Highlighter for ShellHelper {
    fn highlight_prompt<'b, 's: 'b, 'p: 'b>(
        &'s self,
        prompt: &'p str,
        _default: bool,
    ) -> Cow<'b, str> {
        Cow::Borrowed(prompt)
    }
}

impl Validator for ShellHelper {}

impl Helper for ShellHelper {}

/// The history file: `MWCTL_HISTORY`, else `$XDG_STATE_HOME/mwctl/history`
/// or `~/.local/state/mwctl/history`; none without a home.
pub fn history_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("MWCTL_HISTORY") {
        return Some(PathBuf::from(p));
    }
    let base = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))?;
    Some(base.join("mwctl").join("history"))
}

/// Splits a line into words: blanks separate, single or double quotes
/// group (no escapes inside single quotes; `\` escapes the next character
/// elsewhere).
pub fn words(line: &str) -> Result<Vec<String>, &'static str> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut have = false;
    let mut quote: Option<char> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('\''), c) => cur.push(c),
            (_, '\\') => match chars.next() {
                Some(n) => {
                    cur.push(n);
                    have = true;
                }
                None => return Err("a backslash at the end of the line"),
            },
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                have = true;
            }
            (None, c) if c.is_whitespace() => {
                if have || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                    have = false;
                }
            }
            (None, c) => cur.push(c),
        }
    }
    if quote.is_some() {
        return Err("an unclosed quote");
    }
    if have || !cur.is_empty() {
        out.push(cur);
    }
    Ok(out)
}

/// Runs the shell until `exit`, `quit` or end of input; returns the exit
/// status of the last command.
pub fn run(globals: Globals, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    // Tab completes the common part, Tab again lists the candidates (as
    // bash and vtysh do).
    let config = Config::builder()
        .completion_type(CompletionType::List)
        .max_history_size(1000)
        .map(|b| b.build());
    let made = config.and_then(Editor::with_config);
    let mut rl: Editor<ShellHelper, DefaultHistory> = match made {
        Ok(r) => r,
        Err(e) => {
            let _ = writeln!(err, "mwctl: cannot start the shell: {e}");
            return crate::EXIT_USAGE;
        }
    };
    let helper = ShellHelper::new(globals.clone());
    let name = helper
        .ask(&["show", "router"])
        .and_then(|v| v["name"].as_str().map(str::to_string));
    rl.set_helper(Some(helper));
    let history = history_path();
    if let Some(h) = &history {
        let _ = rl.load_history(h);
    }
    let prompt = match &name {
        Some(n) => format!("mwctl {n}> "),
        None => "mwctl> ".to_string(),
    };
    let _ = writeln!(
        out,
        "mwctl shell on {}{}: commands as on the command line, Tab completes, `help`, `exit`",
        globals.socket.display(),
        if name.is_none() {
            " (no answer from the daemon yet)"
        } else {
            ""
        }
    );
    let _ = out.flush();
    let mut status = crate::EXIT_OK;
    loop {
        let line = match rl.readline(&prompt) {
            Ok(l) => l,
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => {
                let _ = writeln!(err, "mwctl: {e}");
                break;
            }
        };
        let w = match words(&line) {
            Ok(w) => w,
            Err(why) => {
                let _ = writeln!(err, "mwctl: {why}");
                continue;
            }
        };
        if w.is_empty() {
            continue;
        }
        let _ = rl.add_history_entry(line.trim());
        match w[0].as_str() {
            "exit" | "quit" => break,
            "help" if w.len() == 1 => {
                let help = Cli::command()
                    .override_usage("<command> [options]")
                    .render_help();
                let _ = writeln!(out, "{help}");
                let _ = out.flush();
                continue;
            }
            _ => {}
        }
        let mut args = globals.argv(globals.json);
        args.extend(w);
        status = crate::main_with(args, out, err);
        let _ = out.flush();
    }
    if let Some(h) = &history {
        if let Some(dir) = h.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Err(e) = rl.save_history(h) {
            let _ = writeln!(err, "mwctl: history not saved to {}: {e}", h.display());
        }
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_like_a_shell() {
        assert_eq!(words("show  routes ").unwrap(), ["show", "routes"]);
        assert_eq!(
            words(r#"route add 0x0230 "02:00 x" 'a"b' c\ d"#).unwrap(),
            ["route", "add", "0x0230", "02:00 x", "a\"b", "c d"]
        );
        assert_eq!(words("''").unwrap(), [""]);
        assert!(words("'open").is_err());
        assert!(words("end\\").is_err());
    }

    fn helper() -> ShellHelper {
        // No daemon: live values are empty.
        ShellHelper::new(Globals {
            socket: PathBuf::from("/nonexistent/mwctl-test.sock"),
            json: false,
            timeout: Some(0.2),
        })
    }

    #[test]
    fn commands_and_options_complete_from_the_command_tree() {
        let h = helper();
        assert_eq!(h.candidates(&[], "sh"), ["show"]);
        assert!(h.candidates(&[], "").contains(&"exit".to_string()));
        assert_eq!(h.candidates(&["show"], "ro"), ["route", "router", "routes"]);
        assert_eq!(h.candidates(&["show"], "neig"), ["neighbors"]);
        assert!(
            h.candidates(&["show", "routes"], "--")
                .contains(&"--port".to_string())
        );
        assert!(
            h.candidates(&["show", "routes"], "--")
                .contains(&"--json".to_string())
        );
        assert_eq!(h.candidates(&["port", "0"], "d"), ["down"]);
    }
}

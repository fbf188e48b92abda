//! Live progress of a run for `demo` and `run`: one line per step (and fan-out item)
//! with its agent, state, elapsed time and the chunks received, drawn with indicatif on
//! a terminal and printed as plain lines otherwise; and the questions of a run, asked
//! at the terminal or answered automatically.

use std::collections::HashMap;
use std::io::{BufRead, IsTerminal, Write};
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// One step's (or item's) line.
struct Line {
    bar: ProgressBar,
    agent: String,
    state: String,
    attempt: u32,
    chunks: u64,
    started: Instant,
    ended: Option<Duration>,
}

/// The progress display of one run.
pub struct Progress {
    multi: MultiProgress,
    lines: HashMap<String, Line>,
    /// Draw bars (a terminal) or print a line per finished step.
    live: bool,
    started: Instant,
}

fn finished(state: &str) -> bool {
    matches!(
        state,
        "completed" | "failed" | "canceled" | "rejected" | "skipped" | "upstream_failed"
    )
}

/// A state's mark: ✓ done, ✗ failed, - not run, ? waiting, · pending, … going.
pub fn mark(state: &str) -> &'static str {
    match state {
        "completed" => "✓",
        "failed" | "rejected" | "upstream_failed" => "✗",
        "canceled" | "skipped" => "-",
        "input-required" | "auth-required" => "?",
        "pending" => "·",
        _ => "…",
    }
}

/// `step` or `step[item]`.
pub fn label(step: &str, item: Option<usize>) -> String {
    match item {
        Some(i) => format!("{step}[{i}]"),
        None => step.to_owned(),
    }
}

impl Progress {
    /// Bars on a terminal (stderr), plain lines on stdout otherwise.
    pub fn new() -> Self {
        let live = std::io::stderr().is_terminal();
        let target = if live {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        Self {
            multi: MultiProgress::with_draw_target(target),
            lines: HashMap::new(),
            live,
            started: Instant::now(),
        }
    }

    fn render(label: &str, l: &Line) -> String {
        let elapsed = l.ended.unwrap_or_else(|| l.started.elapsed());
        let attempt = if l.attempt > 1 {
            format!(" (attempt {})", l.attempt)
        } else {
            String::new()
        };
        format!(
            "{} {label:<18} {:<12} {:<15} {:>6.1}s  {} chunk{}{attempt}",
            mark(&l.state),
            if l.agent.is_empty() { "-" } else { &l.agent },
            l.state,
            elapsed.as_secs_f64(),
            l.chunks,
            if l.chunks == 1 { "" } else { "s" },
        )
    }

    /// A step (or item) changed state.
    pub fn step(
        &mut self,
        step: &str,
        item: Option<usize>,
        state: &str,
        agent: Option<&str>,
        attempt: u32,
        message: Option<&str>,
    ) {
        let key = label(step, item);
        // A failed attempt that will be retried is worth a line of its own.
        if let Some(m) = message.filter(|m| m.starts_with("attempt ") && m.contains("failed")) {
            self.note(&format!("↻ {key}: {m}"));
        }
        let multi = &self.multi;
        let line = self.lines.entry(key.clone()).or_insert_with(|| {
            let bar = multi.add(ProgressBar::new_spinner());
            bar.set_style(
                ProgressStyle::with_template("{spinner} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.enable_steady_tick(Duration::from_millis(120));
            Line {
                bar,
                agent: String::new(),
                state: String::new(),
                attempt: 1,
                chunks: 0,
                started: Instant::now(),
                ended: None,
            }
        });
        if let Some(a) = agent.filter(|a| !a.is_empty()) {
            line.agent = a.to_owned();
        }
        if attempt > line.attempt {
            line.attempt = attempt;
        }
        line.state = state.to_owned();
        if finished(state) && line.ended.is_none() {
            line.ended = Some(line.started.elapsed());
            line.bar.finish_with_message(Self::render(&key, line));
            if !self.live {
                // Display only, as `note` says.
                let _ = say!("{}", Self::render(&key, line));
            }
        } else if !finished(state) {
            line.ended = None;
            line.bar.set_message(Self::render(&key, line));
        }
    }

    /// A chunk of a step's artifact arrived.
    pub fn chunk(&mut self, step: &str, item: Option<usize>) {
        let key = label(step, item);
        if let Some(line) = self.lines.get_mut(&key) {
            line.chunks += 1;
            if line.ended.is_none() {
                line.bar.set_message(Self::render(&key, line));
            }
        }
    }

    /// Prints text above the bars.
    ///
    /// Progress is display only: a reader gone mid-run does not stop the run (whose
    /// agents may be halfway through their work); the end's report, written with `?`,
    /// ends the command quietly.
    pub fn note(&self, text: &str) {
        let _ = if self.live {
            self.multi.println(text)
        } else {
            say!("{text}")
        };
    }

    /// Runs `f` with the bars hidden (to prompt).
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        self.multi.suspend(f)
    }

    /// Stops the spinners; returns the run's elapsed time.
    pub fn finish(&mut self) -> Duration {
        for (key, line) in &mut self.lines {
            if line.ended.is_none() {
                line.bar.finish_with_message(Self::render(key, line));
            }
        }
        self.started.elapsed()
    }
}

/// Prints a workflow's result under its name: the text, then the data as JSON.
pub fn print_result(
    title: &str,
    text: Option<&str>,
    data: Option<&serde_json::Value>,
) -> std::io::Result<()> {
    say!("\n══ {title} ══")?;
    if let Some(t) = text {
        say!("{}", t.trim_end())?;
    }
    if let Some(d) = data.filter(|d| !d.is_null()) {
        say!("{}", serde_json::to_string_pretty(d).unwrap_or_default())?;
    }
    Ok(())
}

/// How questions get their answers.
#[derive(Debug, Clone, Default)]
pub struct Asker {
    /// Ask at the terminal.
    pub interactive: bool,
    /// Answer what is not asked at the terminal automatically (the first numbered
    /// option, else yes). Without it, and without an answer given for the step, a
    /// question is only shown, with how to answer it: nothing is decided.
    pub automatic: bool,
    /// Answers given in advance, by step (`--answer STEP=VALUE`).
    pub given: Vec<(String, String)>,
}

impl Asker {
    /// The demo's: ask at a terminal unless `--yes`; otherwise answer automatically,
    /// saying so (the demo's agents are its own: nothing real is decided).
    pub fn new(yes: bool) -> Self {
        Self {
            interactive: !yes && std::io::stdin().is_terminal(),
            automatic: true,
            given: Vec::new(),
        }
    }

    /// `run`'s and a watcher's (`runs watch`, `send --watch`): answers given for a step
    /// are sent; the rest are asked at a terminal, answered automatically only with
    /// `--yes`, and otherwise not answered — piped or in CI, nothing is decided for the
    /// user.
    pub fn watching(yes: bool, given: Vec<(String, String)>) -> Self {
        Self {
            interactive: !yes && std::io::stdin().is_terminal(),
            automatic: yes,
            given,
        }
    }

    /// Whether an answer comes without anyone typing it (given or automatic): one the
    /// task does not take would be sent forever.
    pub fn unattended(&self, step: Option<&str>) -> bool {
        self.given_for(step).is_some() || (!self.interactive && self.automatic)
    }

    /// The answer given in advance for `step`, else the automatic one when this asker
    /// gives those; nothing asked or shown (`run --json`).
    pub fn unattended_answer(&self, step: Option<&str>, prompt: &str) -> Option<String> {
        self.given_for(step)
            .map(str::to_owned)
            .or_else(|| self.automatic.then(|| auto_answer(prompt)))
    }

    fn given_for(&self, step: Option<&str>) -> Option<&str> {
        let step = step?;
        self.given
            .iter()
            .find(|(s, _)| s == step)
            .map(|(_, v)| v.as_str())
    }

    /// The answer to `prompt` from `step`: given in advance, typed by the user, or
    /// chosen automatically; `None` when this asker does not decide it.
    pub fn answer(&self, progress: &Progress, step: Option<&str>, prompt: &str) -> Option<String> {
        let who = step.map(|s| format!(" ({s})")).unwrap_or_default();
        if let Some(a) = self.given_for(step) {
            progress.note(&format!("? {prompt}{who}\n  → answered as given: {a}"));
            return Some(a.to_owned());
        }
        if !self.interactive {
            if !self.automatic {
                return None;
            }
            let a = auto_answer(prompt);
            progress.note(&format!("? {prompt}{who}\n  → answered automatically: {a}"));
            return Some(a);
        }
        progress.suspend(|| {
            let mut stderr = std::io::stderr();
            let _ = write!(stderr, "\n? {prompt}{who}\n> ");
            let _ = stderr.flush();
            let mut line = String::new();
            let read = tokio::task::block_in_place(|| std::io::stdin().lock().read_line(&mut line));
            match read {
                Ok(n) if n > 0 && !line.trim().is_empty() => Some(line.trim().to_owned()),
                _ => Some(auto_answer(prompt)),
            }
        })
    }
}

/// `--answer STEP=VALUE`, as a pair.
pub fn parse_answer(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((step, value)) if !step.trim().is_empty() => {
            Ok((step.trim().to_owned(), value.to_owned()))
        }
        _ => Err(format!(
            "`{s}` is not STEP=VALUE (the step's id, then the answer; e.g. hotel=2 or approve_laptop=yes)"
        )),
    }
}

/// The automatic answer: the first option when the prompt lists numbered options,
/// otherwise yes.
pub fn auto_answer(prompt: &str) -> String {
    let numbered = prompt.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with("1)") || l.starts_with("1.") || l.starts_with("1 -")
    });
    if numbered { "1".into() } else { "yes".into() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_get_the_first_and_approvals_get_yes() {
        assert_eq!(
            auto_answer("Two hotels fit:\n1) A\n2) B\nWhich one? Answer 1 or 2."),
            "1"
        );
        assert_eq!(auto_answer("Approve a laptop for Ada?"), "yes");
    }
}

//! What starts runs with no caller behind them: `[webhook]` (a signed request) and
//! `[[schedule]]` (a cron pattern's times). Each gives the workflow's inputs as
//! templates over what it has (a request's body, a tick's time) and says who its runs
//! are started as; whether that principal exists is `serve`'s to check.

use std::ops::Range;

use super::{Refs, Scope, Uses, Validator};
use crate::config::diag::did_you_mean;
use crate::config::reader::Sp;
use crate::workflow::raw::{self, RawData};
use crate::workflow::schedule::{self, Missed, Schedule};
use crate::workflow::template::DataTemplate;
use crate::workflow::{InputSpec, Webhook};

/// What a start's `input` may use: one variable, and how to say so.
#[derive(Clone, Copy)]
pub(super) struct Only {
    pub var: &'static str,
    pub says: &'static str,
}

pub(super) const WEBHOOK: Only = Only {
    var: "body",
    says: "a webhook's `input` can use only `body`, the request's JSON",
};
pub(super) const SCHEDULE: Only = Only {
    var: "schedule",
    says: "a schedule's `input` can use only `schedule` (`schedule.time`, the time it fires at; `schedule.name`; `schedule.late`, whether it fires for a time missed while no server ran)",
};

impl Validator<'_, '_, '_> {
    /// `[webhook]`: where it is served, its secret's variable, who it starts runs as,
    /// and the workflow's inputs as templates over the request's JSON body.
    pub(super) fn webhook(
        &mut self,
        w: &raw::RawWebhook,
        inputs: &[InputSpec],
        refs: &Refs<'_>,
        uses: &mut Uses,
    ) -> Option<Box<Webhook>> {
        let path = match &w.path {
            None => {
                self.ctx.error(w.span.clone(), "[webhook] needs `path`: where it is posted, under /webhooks/ (`path = \"new-hire\"` is /webhooks/new-hire)");
                None
            }
            Some(p)
                if p.value.is_empty()
                    || p.value.len() > 128
                    || p.value.starts_with('/')
                    || p.value
                        .split('/')
                        .any(|s| s.is_empty() || s == "." || s == "..")
                    || !p.value.chars().all(|c| {
                        c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/')
                    }) =>
            {
                self.ctx.error(
                    p.span.clone(),
                    format!("`path` must be segments of letters, digits, `-`, `_` and `.` joined by `/` (at most 128 characters; no leading `/`: it is under /webhooks/), got {:?}", p.value),
                );
                None
            }
            Some(p) => Some(p.value.clone()),
        };
        let secret_env = match &w.secret_env {
            None => {
                self.ctx.error(w.span.clone(), "[webhook] needs `secret_env`: the environment variable holding its secret (`whsec_…`, as the Standard Webhooks specification gives them)");
                None
            }
            Some(e)
                if e.value.is_empty()
                    || !e
                        .value
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_') =>
            {
                self.ctx.error(e.span.clone(), format!("`secret_env` must name an environment variable (letters, digits, `_`), got {:?}", e.value));
                None
            }
            Some(e) => Some(e.value.clone()),
        };
        let scope = start_scope("[webhook]", WEBHOOK);
        let input = self.start_input(
            "webhook.input",
            "the webhook",
            "take them from the body in `input` (`name = \"{{ body.name }}\"`)",
            (w.input.as_ref(), w.span.clone()),
            inputs,
            (&scope, refs, uses),
        )?;
        Some(Box::new(Webhook {
            path: path?,
            secret_env: secret_env?,
            as_principal: w.as_.as_ref().map(|a| a.value.clone()),
            input,
        }))
    }

    /// `[[schedule]]`s: a pattern that parses and matches some date, a time zone of the
    /// IANA database, what is done with missed times, inputs over `schedule`, and each
    /// known by a key of its own (its `name`, or its pattern and time zone).
    pub(super) fn schedules(
        &mut self,
        workflow: Option<&str>,
        all: &[raw::RawSchedule],
        inputs: &[InputSpec],
        refs: &Refs<'_>,
        uses: &mut Uses,
    ) -> Vec<Schedule> {
        let mut out: Vec<(Schedule, Range<usize>)> = Vec::new();
        for (i, s) in all.iter().enumerate() {
            let cron = match &s.cron {
                None => {
                    self.ctx.error(s.span.clone(), "[[schedule]] needs `cron`: when it fires, as five fields (minute hour day-of-month month day-of-week: `0 9 * * MON` is Mondays at 09:00), or six with seconds first");
                    None
                }
                Some(c) => match schedule::parse_cron(&c.value) {
                    Ok(cron) => Some((c.value.trim().to_owned(), cron)),
                    Err(why) => {
                        self.ctx.error(
                            c.span.clone(),
                            format!("`cron` {:?} is not a cron pattern: {why}", c.value),
                        );
                        None
                    }
                },
            };
            let tz = match &s.tz {
                None => schedule::parse_tz("UTC"),
                Some(t) => match schedule::parse_tz(&t.value) {
                    Some(tz) => Some(tz),
                    None => {
                        let hint = did_you_mean(&t.value, schedule::tz_names())
                            .map(|m| format!(" (did you mean `{m}`?)"))
                            .unwrap_or_default();
                        self.ctx.error(t.span.clone(), format!("`tz` {:?} is not a time zone of the IANA database, such as `Europe/Berlin` or `UTC`{hint}", t.value));
                        None
                    }
                },
            };
            let missed = match s.missed.as_ref().map(|m| (m.value.as_str(), m)) {
                None | Some(("skip", _)) => Some(Missed::Skip),
                Some(("once", _)) => Some(Missed::Once),
                Some((other, m)) => {
                    self.ctx.error(m.span.clone(), format!("`missed` must be \"skip\" (times passed while no server ran are not made up) or \"once\" (the last of them fires once when one runs again), got {other:?}"));
                    None
                }
            };
            let name = match &s.name {
                Some(n)
                    if n.value.is_empty()
                        || n.value.len() > 64
                        || !n
                            .value
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_')) =>
                {
                    self.ctx.error(n.span.clone(), format!("a schedule's `name` is letters, digits, `-` and `_` (at most 64), got {:?}", n.value));
                    None
                }
                other => Some(other.as_ref().map(|n| n.value.clone())),
            };
            let scope = start_scope("[[schedule]]", SCHEDULE);
            let input = self.start_input(
                &format!("schedule.{i}.input"),
                "the schedule",
                "give them in `input` (`name = \"…\"`)",
                (s.input.as_ref(), s.span.clone()),
                inputs,
                (&scope, refs, uses),
            );
            let (Some((pattern, cron)), Some(tz), Some(missed), Some(name), Some(input)) =
                (cron, tz, missed, name, input)
            else {
                continue;
            };
            let key = format!(
                "{}/{}",
                workflow.unwrap_or_default(),
                match &name {
                    Some(n) => n.clone(),
                    None => format!("{pattern} {}", tz.name()),
                }
            );
            if let Some((_, at)) = out.iter().find(|(o, _)| o.key == key) {
                let line = self.ctx.source[..at.start].matches('\n').count() + 1;
                let what = if name.is_some() {
                    "has the same `name` as the schedule at line"
                } else {
                    "fires at the same times as the schedule at line"
                };
                self.ctx.error(
                    s.span.clone(),
                    format!("this schedule {what} {line}: give each a `name` of its own"),
                );
                continue;
            }
            out.push((
                Schedule {
                    key,
                    name,
                    pattern,
                    cron,
                    tz,
                    input,
                    as_principal: s.as_.as_ref().map(|a| a.value.clone()),
                    missed,
                },
                s.span.clone(),
            ));
        }
        out.into_iter().map(|(s, _)| s).collect()
    }

    /// A start's `input`: a table of the workflow's inputs, compiled as templates over
    /// what the start has, giving a value for every input that is required and has no
    /// default. `None` when it does not compile (said already).
    fn start_input(
        &mut self,
        site: &str,
        what: &str,
        how: &str,
        (input, at): (Option<&Sp<RawData>>, Range<usize>),
        inputs: &[InputSpec],
        (scope, refs, uses): (&Scope, &Refs<'_>, &mut Uses),
    ) -> Option<Option<DataTemplate>> {
        let compiled = match input {
            Some(d) => Some(self.data(site, d, scope, refs, uses)?),
            None => None,
        };
        let given: Vec<&str> = match input.map(|i| (&i.value, i)) {
            Some((RawData::Object(entries), _)) => {
                for (k, v) in entries {
                    if !inputs.iter().any(|s| s.name == *k) {
                        let hint = did_you_mean(k, inputs.iter().map(|s| s.name.as_str()))
                            .map(|m| format!(" (did you mean `{m}`?)"))
                            .unwrap_or_else(|| " (declare it in [input])".to_owned());
                        self.ctx.error(v.span.clone(), format!("{what}'s `input` gives `{k}`, which is not an input of the workflow{hint}"));
                    }
                }
                entries.iter().map(|(k, _)| k.as_str()).collect()
            }
            Some((_, i)) => {
                self.ctx.error(i.span.clone(), format!("`input` must be a table of the workflow's inputs, such as {{ name = \"{{{{ {}.name }}}}\" }}", scope.only.map_or("input", |o| o.var)));
                Vec::new()
            }
            None => Vec::new(),
        };
        let missing: Vec<String> = (inputs.iter())
            .filter(|s| s.required && s.default.is_none() && !given.contains(&s.name.as_str()))
            .map(|s| format!("`{}`", s.name))
            .collect();
        if !missing.is_empty() {
            self.ctx.error(
                at,
                format!(
                    "{what} gives no value for the required input(s) {}: {how}",
                    missing.join(", ")
                ),
            );
        }
        Some(compiled)
    }
}

fn start_scope(label: &str, only: Only) -> Scope {
    Scope {
        step: None,
        label: label.to_owned(),
        fan_out: false,
        repeats: false,
        only: Some(only),
    }
}

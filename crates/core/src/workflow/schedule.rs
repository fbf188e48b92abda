//! A workflow's `[[schedule]]`s: when each fires (a cron pattern in a time zone), what
//! its run is given, and what becomes of the ticks no process was there to fire. The
//! times are computed here; firing them — once across every replica — is the host's.

use std::str::FromStr;
use std::time::SystemTime;

use chrono::{DateTime, TimeZone, Utc};
use chrono_tz::Tz;
use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};

use super::template::DataTemplate;

/// What becomes of the ticks that passed while no process ran the schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Missed {
    /// They are skipped: the schedule goes on from its next tick.
    #[default]
    Skip,
    /// The last of them fires once, as soon as a process runs the schedule again.
    Once,
}

/// `[[schedule]]`: a run started at each of a cron pattern's times.
#[derive(Debug, Clone)]
pub struct Schedule {
    /// What it is known by across restarts and replicas: the workflow's id and the
    /// schedule's `name`, or its pattern and time zone when it has none.
    pub key: String,
    pub name: Option<String>,
    /// The pattern as written.
    pub pattern: String,
    pub cron: Cron,
    pub tz: Tz,
    /// The run's inputs, templates over `schedule` (`schedule.time`, `.name`, `.late`).
    pub input: Option<DataTemplate>,
    /// Who the run is started as: a named principal of `serve`'s `[auth]`.
    pub as_principal: Option<String>,
    pub missed: Missed,
}

/// A pattern that is not one, said for a workflow's author.
pub fn parse_cron(pattern: &str) -> Result<Cron, String> {
    let fields = pattern.split_whitespace().count();
    if !pattern.trim_start().starts_with('@') && !(5..=6).contains(&fields) {
        return Err(format!(
            "a cron pattern has five fields (minute hour day-of-month month day-of-week), or six with seconds first; this has {fields}"
        ));
    }
    let cron = CronParser::builder()
        .seconds(Seconds::Optional)
        .year(Year::Disallowed)
        .build()
        .parse(pattern)
        .map_err(|e| e.to_string())?;
    // A pattern no date matches (the 30th of February) is found here, not at serve.
    if cron
        .find_next_occurrence(&Utc.timestamp_opt(0, 0).unwrap(), false)
        .is_err()
        && cron
            .find_next_occurrence(&Utc.with_ymd_and_hms(2028, 1, 1, 0, 0, 0).unwrap(), false)
            .is_err()
    {
        return Err("no date matches it".to_owned());
    }
    Ok(cron)
}

/// A time zone of the IANA database (`Europe/Berlin`, `UTC`), if `name` is one.
pub fn parse_tz(name: &str) -> Option<Tz> {
    Tz::from_str(name).ok()
}

/// Every time zone's name, for a did-you-mean.
pub fn tz_names() -> impl Iterator<Item = &'static str> {
    chrono_tz::TZ_VARIANTS.iter().map(|t| t.name())
}

impl Schedule {
    /// The first of its times after `t`.
    pub fn next_after(&self, t: SystemTime) -> Option<SystemTime> {
        let at = DateTime::<Utc>::from(t).with_timezone(&self.tz);
        let next = self.cron.find_next_occurrence(&at, false).ok()?;
        Some(next.with_timezone(&Utc).into())
    }

    /// The last of its times at or before `t`.
    pub fn last_until(&self, t: SystemTime) -> Option<SystemTime> {
        let at = DateTime::<Utc>::from(t).with_timezone(&self.tz);
        let last = self.cron.find_previous_occurrence(&at, true).ok()?;
        Some(last.with_timezone(&Utc).into())
    }

    /// `t` in RFC 3339, at the schedule's time zone's offset then.
    pub fn local(&self, t: SystemTime) -> String {
        DateTime::<Utc>::from(t)
            .with_timezone(&self.tz)
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    }

    /// How it is named in messages: its name, or its pattern and time zone.
    pub fn label(&self) -> String {
        match &self.name {
            Some(n) => format!("schedule `{n}`"),
            None => format!("schedule `{}` ({})", self.pattern, self.tz.name()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn schedule(pattern: &str, tz: &str) -> Schedule {
        Schedule {
            key: "w/x".into(),
            name: None,
            pattern: pattern.into(),
            cron: parse_cron(pattern).unwrap(),
            tz: parse_tz(tz).unwrap(),
            input: None,
            as_principal: None,
            missed: Missed::Skip,
        }
    }

    fn at(s: &str) -> SystemTime {
        DateTime::parse_from_rfc3339(s)
            .unwrap()
            .with_timezone(&Utc)
            .into()
    }

    #[test]
    fn times_are_found_in_the_schedules_time_zone_across_a_dst_change() {
        // Mondays at 09:00 in Berlin: 08:00 UTC in winter, 07:00 in summer.
        let s = schedule("0 9 * * MON", "Europe/Berlin");
        assert_eq!(
            s.next_after(at("2026-03-25T12:00:00Z")),
            Some(at("2026-03-30T07:00:00Z"))
        );
        assert_eq!(
            s.last_until(at("2026-03-25T12:00:00Z")),
            Some(at("2026-03-23T08:00:00Z"))
        );
        assert_eq!(
            s.local(at("2026-03-30T07:00:00Z")),
            "2026-03-30T09:00:00+02:00"
        );
        // A time that is one counts as the last one at it.
        let t = at("2026-03-30T07:00:00Z");
        assert_eq!(s.last_until(t), Some(t));
        assert_eq!(s.next_after(t), Some(t + Duration::from_secs(7 * 86400)));
    }

    #[test]
    fn six_fields_take_seconds_and_a_wrong_pattern_says_why() {
        let s = schedule("*/2 * * * * *", "UTC");
        assert_eq!(
            s.next_after(at("2026-01-01T00:00:01Z")),
            Some(at("2026-01-01T00:00:02Z"))
        );
        assert!(parse_cron("0 9 * *").unwrap_err().contains("five fields"));
        assert!(parse_cron("0 0 9 * * MON 2027").is_err());
        assert!(parse_cron("61 * * * *").is_err());
        assert_eq!(parse_cron("0 0 30 2 *").unwrap_err(), "no date matches it");
        assert!(parse_cron("@daily").is_ok());
        assert!(parse_tz("Europe/Berlim").is_none());
    }
}

//! `agents`: discovers the agents of `agents.toml` and shows what the registry sees.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;

use crate::registry::card_trust;
use crate::registry::config as agents_config;
use crate::registry::env::ProcessEnv;
use crate::registry::{AgentStatus, Health, Registry, RegistryOptions};

/// `agents [--agents FILE] [--json] [--strict]`.
pub async fn agents(path: &Path, json: bool, strict: bool) -> anyhow::Result<ExitCode> {
    let text = orchestrator_core::config::read_text(path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let (file, diags) = agents_config::load_str(&path.display().to_string(), &text);
    for d in &diags {
        eprintln!("{d}\n");
    }
    let Some(file) = file else {
        return Ok(ExitCode::FAILURE);
    };
    let registry = Registry::discover(&file, &ProcessEnv, RegistryOptions::default()).await;
    let statuses = registry.statuses();
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&statuses)?)?;
    } else {
        table(&mut out, &statuses)?;
    }
    let down = statuses
        .iter()
        .filter(|s| s.health.is_unavailable())
        .count();
    Ok(if strict && down > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn table(out: &mut impl Write, statuses: &[AgentStatus]) -> std::io::Result<()> {
    let rows: Vec<[String; 7]> = statuses
        .iter()
        .map(|s| {
            let status = match &s.health {
                Health::Healthy => "healthy".to_owned(),
                Health::Degraded(_) => "degraded".to_owned(),
                Health::Unavailable(_) => "unavailable".to_owned(),
            };
            let yes = |b: bool| if b { "yes" } else { "no" }.to_owned();
            [
                s.name.clone(),
                status,
                yes(s.streaming),
                yes(s.push_notifications),
                match (&s.protocol, &s.binding) {
                    (Some(v), Some(b)) => format!("{v} {b}"),
                    _ => "-".to_owned(),
                },
                s.endpoint.clone().unwrap_or_else(|| s.url.clone()),
                s.skills.join(", "),
            ]
        })
        .collect();
    let header = [
        "NAME",
        "STATUS",
        "STREAMING",
        "PUSH",
        "A2A",
        "URL",
        "SKILLS",
    ]
    .map(str::to_owned);
    let mut widths = header.clone().map(|h| h.len());
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.len());
        }
    }
    let line = |out: &mut dyn Write, r: &[String; 7]| -> std::io::Result<()> {
        let cells: Vec<String> = r
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:w$}"))
            .collect();
        writeln!(out, "{}", cells.join("  ").trim_end())
    };
    line(out, &header)?;
    for (r, s) in rows.iter().zip(statuses) {
        line(out, r)?;
        let mut notes = Vec::new();
        if let Some(why) = &s.chosen_because {
            notes.push(format!("called at A2A {}: {why}", r[4]));
        }
        if s.auth != "none" {
            notes.push(format!("authenticated with {}", s.auth));
        }
        // An unavailable agent's reason says what is wrong with its card, if anything.
        if s.card != card_trust::UNSIGNED
            && !s.card.starts_with("not fetched")
            && !s.health.is_unavailable()
        {
            notes.push(format!("card: {}", s.card));
        }
        if let Health::Degraded(why) | Health::Unavailable(why) = &s.health {
            notes.push(why.clone());
        }
        for (i, note) in notes.iter().enumerate() {
            let branch = if i + 1 == notes.len() {
                "└─"
            } else {
                "├─"
            };
            writeln!(out, "  {branch} {note}")?;
        }
    }
    Ok(())
}

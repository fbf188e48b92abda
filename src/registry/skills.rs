//! Checking the skills workflows ask for against the cards discovered: a `skill = "…"`
//! no card offers is a typo or a missing agent, better said at `validate` and at
//! `serve`'s start than when a run reaches the step. Each problem is said at the
//! `skill = "…"` line, with the closest skill offered: an error when every agent's card
//! was read, a warning while some agent could not be reached (it may offer it).

use orchestrator_core::config::{Diagnostic, Severity, did_you_mean};
use orchestrator_core::workflow::{SkillAsked, Workflow, skills_asked};

use super::Registry;

impl Registry {
    /// A problem for each step whose skill no discovered card offers (naming the
    /// closest offered one, and the agents that could not be reached, whose skills are
    /// unknown): an error when every agent answered, else a warning.
    pub fn skill_problems<'a>(
        &self,
        workflows: impl IntoIterator<Item = &'a Workflow>,
    ) -> Vec<Diagnostic> {
        let mut problems = Vec::new();
        for w in workflows {
            let asked = skills_asked(&w.file, &w.source);
            problems.extend(self.skill_problems_in(&w.file, &w.source, &asked));
        }
        problems
    }

    /// [`Registry::skill_problems`] for the skills a file asks for, as [`skills_asked`]
    /// reads them (from a file that does not load, too).
    pub fn skill_problems_in(
        &self,
        file: &str,
        source: &str,
        asked: &[SkillAsked],
    ) -> Vec<Diagnostic> {
        let statuses = self.statuses();
        let offered: Vec<&str> = statuses
            .iter()
            .flat_map(|s| s.skills.iter().map(String::as_str))
            .collect();
        let unreachable: Vec<String> = statuses
            .iter()
            .filter(|s| s.health.is_unavailable())
            .map(|s| format!("`{}` ({})", s.name, s.health))
            .collect();
        // Every card read and none offers it: the step cannot run. While some agent
        // is unreachable, it may yet.
        let severity = if unreachable.is_empty() {
            Severity::Error
        } else {
            Severity::Warning
        };
        asked
            .iter()
            .filter(|a| !offered.contains(&a.skill.as_str()))
            .map(|a| {
                let mut message = format!(
                    "step `{}`: no agent's card offers skill `{}`",
                    a.step, a.skill
                );
                if let Some(close) = did_you_mean(&a.skill, offered.iter().copied()) {
                    message.push_str(&format!(" (did you mean `{close}`?)"));
                }
                if !unreachable.is_empty() {
                    message.push_str(&format!(
                        "; not reached, so their skills are unknown: {}",
                        unreachable.join(", ")
                    ));
                }
                Diagnostic::new(severity, file, source, a.span.clone(), message)
            })
            .collect()
    }
}

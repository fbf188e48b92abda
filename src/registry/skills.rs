//! Checking the skills workflows ask for against the cards discovered: a `skill = "…"`
//! no card offers is a typo or a missing agent, better said at `validate` and at
//! `serve`'s start than when a run reaches the step. Each problem is said at the
//! `skill = "…"` line, with the closest skill offered: an error when every agent's card
//! was read, a warning while some agent could not be reached (it may offer it).

use orchestrator_core::config::{Diagnostic, Severity, did_you_mean};
use orchestrator_core::workflow::{AgentTarget, SkillAsked, StepKind, Workflow};

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
            let asked: Vec<SkillAsked> = w
                .steps
                .iter()
                .filter_map(|step| match &step.kind {
                    StepKind::Agent {
                        target: AgentTarget::Skill(skill),
                        ..
                    } => Some(SkillAsked {
                        step: step.id.as_str().to_owned(),
                        skill: skill.clone(),
                        span: skill_span(&w.source, step.id.as_str(), skill),
                    }),
                    _ => None,
                })
                .collect();
            problems.extend(self.skill_problems_in(&w.file, &w.source, &asked));
        }
        problems
    }

    /// [`Registry::skill_problems`] for the skills a file asks for, as
    /// [`skills_asked`](orchestrator_core::workflow::skills_asked) reads them from a
    /// file that does not load.
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

/// Where `skill = "<skill>"` is written in step `step`'s table (the table's header when
/// it cannot be found; the start of the file at worst).
fn skill_span(source: &str, step: &str, skill: &str) -> std::ops::Range<usize> {
    let table = source.find(&format!("[steps.{step}]")).unwrap_or(0);
    let quoted = format!("\"{skill}\"");
    match source[table..].find(&quoted) {
        Some(i) => table + i + 1..table + i + 1 + skill.len(),
        None => table..table,
    }
}

#[cfg(test)]
mod tests {
    use super::skill_span;

    #[test]
    fn the_span_is_the_skill_in_its_steps_table() {
        let src = "[steps.a]\nskill = \"flights\"\n[steps.b]\nskill = \"flights\"\n";
        let at = skill_span(src, "b", "flights");
        assert_eq!(&src[at.clone()], "flights");
        assert!(at.start > src.find("[steps.b]").unwrap());
    }
}

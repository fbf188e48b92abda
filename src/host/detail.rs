//! A run's detail as clients read it, one typed schema: what `serve` puts in the
//! metadata of the upstream task's status updates for a step, and what `run --json`
//! prints for the same event. Before this type the two were hand-written maps that
//! disagreed (`downstreamTaskId` in one, `taskId` in the other).

use serde::{Deserialize, Serialize};

use crate::engine::{RunEvent, StepState};

/// A step (or fan-out item) moved: its state, which attempt, which agent and which
/// downstream task. JSON keys in camelCase, as A2A's own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepUpdate {
    pub step: String,
    /// The fan-out item, for a step over a list.
    pub item: Option<usize>,
    /// As the task states are written on the A2A 0.3 wire (`input-required`), plus
    /// `skipped` and `upstream_failed`.
    #[serde(with = "state_name")]
    pub state: StepState,
    /// 1 for the first attempt.
    pub attempt: u32,
    /// The agent that took the step, once one did.
    pub agent: Option<String>,
    /// The agent's task for the step, once it made one.
    pub downstream_task_id: Option<String>,
    /// Why the step ended as it did, or what it is waiting for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl StepUpdate {
    /// The update a step event makes; none for other events.
    pub fn of(event: &RunEvent) -> Option<StepUpdate> {
        match event {
            RunEvent::Step {
                step,
                item,
                state,
                attempt,
                agent,
                task_id,
                message,
            } => Some(StepUpdate {
                step: step.to_string(),
                item: *item,
                state: *state,
                attempt: *attempt,
                agent: agent.clone(),
                downstream_task_id: task_id.clone(),
                message: message.clone(),
            }),
            _ => None,
        }
    }

    /// As a JSON object (for task metadata).
    pub fn to_map(&self) -> serde_json::Map<String, serde_json::Value> {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(m)) => m,
            _ => serde_json::Map::new(),
        }
    }
}

/// A step state by the name [`StepState::as_str`] gives it.
mod state_name {
    use super::StepState;
    use serde::{Deserialize, Deserializer, Serializer};

    const ALL: [StepState; 10] = [
        StepState::Pending,
        StepState::Working,
        StepState::InputRequired,
        StepState::AuthRequired,
        StepState::Completed,
        StepState::Failed,
        StepState::Canceled,
        StepState::Rejected,
        StepState::Skipped,
        StepState::UpstreamFailed,
    ];

    pub fn serialize<S: Serializer>(state: &StepState, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(state.as_str())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<StepState, D::Error> {
        let name = String::deserialize(d)?;
        ALL.into_iter()
            .find(|s| s.as_str() == name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown step state `{name}`")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_update_reads_back_what_it_writes_with_the_wire_names() {
        let update = StepUpdate {
            step: "hotel".into(),
            item: Some(2),
            state: StepState::InputRequired,
            attempt: 1,
            agent: Some("hotels".into()),
            downstream_task_id: Some("t-9".into()),
            message: None,
        };
        let map = update.to_map();
        assert_eq!(map["state"], "input-required");
        assert_eq!(map["downstreamTaskId"], "t-9");
        assert!(!map.contains_key("message"));
        let back: StepUpdate = serde_json::from_value(map.into()).unwrap();
        assert_eq!(back, update);
        let bad = serde_json::json!({"step": "s", "item": null, "state": "input_required",
            "attempt": 1, "agent": null, "downstreamTaskId": null});
        let e = serde_json::from_value::<StepUpdate>(bad)
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown step state `input_required`"), "{e}");
    }
}

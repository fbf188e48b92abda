//! Tasks, their states and statuses, and their artifacts (spec §4.1): the proto's
//! messages, with what a program needs to make and read them.

use std::fmt;

use crate::proto::Timestamp;
use crate::proto::pb::{Artifact, Message, Part, Task, TaskState, TaskStatus};

impl TaskState {
    /// Every state a task can be in (not `Unspecified`).
    pub const ALL: [TaskState; 8] = [
        TaskState::Submitted,
        TaskState::Working,
        TaskState::InputRequired,
        TaskState::Completed,
        TaskState::Canceled,
        TaskState::Failed,
        TaskState::Rejected,
        TaskState::AuthRequired,
    ];

    /// Completed, canceled, failed or rejected: the task will never change again.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskState::Completed | TaskState::Canceled | TaskState::Failed | TaskState::Rejected
        )
    }

    /// Input-required or auth-required: the task waits for the client.
    pub fn is_interrupted(self) -> bool {
        matches!(self, TaskState::InputRequired | TaskState::AuthRequired)
    }

    /// The state's short name, as people read it and as v0.3 wrote it on the wire
    /// (`input-required`); `unknown` for `Unspecified`.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::Unspecified => "unknown",
            TaskState::Submitted => "submitted",
            TaskState::Working => "working",
            TaskState::InputRequired => "input-required",
            TaskState::Completed => "completed",
            TaskState::Canceled => "canceled",
            TaskState::Failed => "failed",
            TaskState::Rejected => "rejected",
            TaskState::AuthRequired => "auth-required",
        }
    }

    /// The state of a short name ([`TaskState::as_str`]) or of the proto's name
    /// (`TASK_STATE_WORKING`).
    pub fn from_name(name: &str) -> Option<TaskState> {
        TaskState::from_str_name(name).or_else(|| {
            (name == "unknown")
                .then_some(TaskState::Unspecified)
                .or_else(|| TaskState::ALL.into_iter().find(|s| s.as_str() == name))
        })
    }
}

impl fmt::Display for TaskState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Timestamp {
    /// The current time.
    pub fn now() -> Timestamp {
        Timestamp::from(std::time::SystemTime::now())
    }

    /// Milliseconds since the Unix epoch.
    pub fn unix_millis(self) -> i64 {
        self.seconds
            .saturating_mul(1_000)
            .saturating_add(i64::from(self.nanos / 1_000_000))
    }
}

impl From<std::time::SystemTime> for Timestamp {
    fn from(t: std::time::SystemTime) -> Timestamp {
        let (seconds, nanos) = match t.duration_since(std::time::UNIX_EPOCH) {
            Ok(d) => (d.as_secs() as i64, d.subsec_nanos() as i32),
            Err(e) => {
                let d = e.duration();
                let (s, n) = (-(d.as_secs() as i64), d.subsec_nanos() as i32);
                if n == 0 {
                    (s, 0)
                } else {
                    (s - 1, 1_000_000_000 - n)
                }
            }
        };
        Timestamp { seconds, nanos }
    }
}

/// The status of a task that has none (a malformed one): `Unspecified`, no message.
pub(super) fn no_status() -> &'static TaskStatus {
    &NO_STATUS
}

static NO_STATUS: TaskStatus = TaskStatus {
    state: TaskState::Unspecified as i32,
    message: None,
    timestamp: None,
};

impl TaskStatus {
    /// A status in `state`, stamped with the current time.
    pub fn new(state: TaskState) -> TaskStatus {
        TaskStatus {
            state: state as i32,
            message: None,
            timestamp: Some(Timestamp::now()),
        }
    }

    /// Attaches an agent message.
    pub fn with_message(mut self, message: Message) -> TaskStatus {
        self.message = Some(message);
        self
    }
}

impl Task {
    /// A new task in `status`, with no history or artifacts.
    pub fn new(id: impl Into<String>, context_id: impl Into<String>, status: TaskStatus) -> Task {
        Task {
            id: id.into(),
            context_id: context_id.into(),
            status: Some(status),
            artifacts: Vec::new(),
            history: Vec::new(),
            metadata: None,
        }
    }

    /// Its status (`Unspecified` with nothing else, for a task sent without one).
    pub fn status(&self) -> &TaskStatus {
        self.status.as_ref().unwrap_or(&NO_STATUS)
    }

    /// Its status, to change.
    pub fn status_mut(&mut self) -> &mut TaskStatus {
        self.status.get_or_insert_with(|| NO_STATUS.clone())
    }

    /// The state it is in.
    pub fn state(&self) -> TaskState {
        self.status().state()
    }

    /// Keeps only the last `n` history messages (`historyLength`): `None` keeps all,
    /// `Some(0)` keeps none.
    pub fn truncate_history(&mut self, n: Option<u32>) {
        if let Some(n) = n {
            let keep = n as usize;
            if self.history.len() > keep {
                self.history.drain(..self.history.len() - keep);
            }
        }
    }
}

impl Artifact {
    /// An artifact with the given id and parts.
    pub fn new(artifact_id: impl Into<String>, parts: Vec<Part>) -> Artifact {
        Artifact {
            artifact_id: artifact_id.into(),
            parts,
            ..Default::default()
        }
    }

    /// Sets the artifact's name.
    pub fn with_name(mut self, name: impl Into<String>) -> Artifact {
        self.name = name.into();
        self
    }

    /// The text of all its text parts, joined with no separator.
    pub fn text(&self) -> String {
        super::parts_text(&self.parts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_read_back_by_either_name() {
        for s in TaskState::ALL {
            assert_eq!(TaskState::from_name(s.as_str()), Some(s));
            assert_eq!(TaskState::from_name(s.as_str_name()), Some(s));
        }
        assert_eq!(
            TaskState::from_name("unknown"),
            Some(TaskState::Unspecified)
        );
        assert_eq!(TaskState::from_name("done"), None);
    }

    #[test]
    fn a_time_before_the_epoch_keeps_its_nanoseconds_positive() {
        let t = std::time::UNIX_EPOCH - std::time::Duration::from_millis(1_500);
        let stamp = Timestamp::from(t);
        assert_eq!((stamp.seconds, stamp.nanos), (-2, 500_000_000));
        assert_eq!(stamp.unix_millis(), -1_500);
        let now = Timestamp::now();
        assert!(now.seconds > 1_700_000_000 && (0..1_000_000_000).contains(&now.nanos));
    }

    #[test]
    fn a_task_without_a_status_reads_as_unspecified() {
        let mut task = Task::default();
        assert_eq!(task.state(), TaskState::Unspecified);
        task.status_mut().set_state(TaskState::Working);
        assert_eq!(task.state(), TaskState::Working);
    }
}

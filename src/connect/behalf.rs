//! On whose behalf each run calls its agents: the token its initiator presented (an
//! OpenID Connect token the server verified), kept in memory for as long as the run
//! goes on, for agents configured to get a token exchanged for it (RFC 8693); or the
//! orchestrator itself, for runs a static credential (or nobody) started.
//!
//! Nothing here is written down: a run resumed after a restart whose initiator signed
//! in has no token any more, and its on-behalf calls fail saying so (retry the run to
//! start it again with a fresh token), rather than fall back to the orchestrator's own
//! credentials — which would quietly act with other rights than the user's.

use std::collections::HashMap;
use std::sync::Mutex;

pub use crate::registry::oauth::Subject;

/// Each run's subject, by run id.
#[derive(Debug, Default)]
pub struct OnBehalf {
    // A std mutex: only map operations under it, never an await.
    runs: Mutex<HashMap<String, Subject>>,
}

impl OnBehalf {
    /// Run `run_id` calls on behalf of `subject`.
    pub fn start(&self, run_id: &str, subject: Subject) {
        self.lock().insert(run_id.to_owned(), subject);
    }

    /// Run `run_id` ended (or left this process): its token is dropped.
    pub fn end(&self, run_id: &str) {
        self.lock().remove(run_id);
    }

    /// On whose behalf run `run_id` calls; `None` when this process does not know
    /// (it resumed the run after a restart).
    pub fn of(&self, run_id: &str) -> Option<Subject> {
        self.lock().get(run_id).cloned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Subject>> {
        self.runs.lock().unwrap_or_else(|p| p.into_inner())
    }
}

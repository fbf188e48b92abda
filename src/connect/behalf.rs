//! On whose behalf each run calls: the token its initiator presented (an OpenID Connect
//! token the server verified), kept in memory for as long as the run goes on, for
//! agents configured to get a token exchanged for it (RFC 8693), or the orchestrator
//! itself, for runs a static credential (or nobody) started; and the caller it acts as
//! where it runs a workflow of this orchestrator as a child run, with how deep in a
//! chain of such runs it is.
//!
//! Nothing here is written down: a run resumed after a restart whose initiator signed
//! in has no token any more, and its on-behalf calls fail saying so (retry the run to
//! start it again with a fresh token), rather than fall back to the orchestrator's own
//! credentials — which would quietly act with other rights than the user's. Its child
//! runs are started as its initiator as the run's record names them.

use std::collections::HashMap;
use std::sync::Mutex;

use a2a::server::Caller;

pub use crate::registry::oauth::Subject;

/// What a run acts as.
#[derive(Debug, Clone)]
pub struct Acting {
    /// On whose behalf it calls agents; none when this process lost it (a run a
    /// signed-in user started, resumed after a restart).
    pub subject: Option<Subject>,
    /// Who its child runs are started as.
    pub caller: Caller,
    /// How many runs above it started it as a child (0: a client started it).
    pub depth: usize,
}

/// Each run's subject, by run id.
#[derive(Debug, Default)]
pub struct OnBehalf {
    // A std mutex: only map operations under it, never an await.
    runs: Mutex<HashMap<String, Acting>>,
}

impl OnBehalf {
    /// Run `run_id` calls on behalf of `subject`, as a client started it.
    pub fn start(&self, run_id: &str, subject: Subject) {
        self.start_as(
            run_id,
            Acting {
                subject: Some(subject),
                caller: Caller::anonymous(),
                depth: 0,
            },
        );
    }

    /// Run `run_id` acts as `acting`.
    pub fn start_as(&self, run_id: &str, acting: Acting) {
        self.lock().insert(run_id.to_owned(), acting);
    }

    /// Run `run_id` ended (or left this process): its token is dropped.
    pub fn end(&self, run_id: &str) {
        self.lock().remove(run_id);
    }

    /// On whose behalf run `run_id` calls; `None` when this process does not know
    /// (it resumed the run after a restart).
    pub fn of(&self, run_id: &str) -> Option<Subject> {
        self.lock().get(run_id).and_then(|a| a.subject.clone())
    }

    /// What run `run_id` acts as, if this process knows.
    pub fn acting(&self, run_id: &str) -> Option<Acting> {
        self.lock().get(run_id).cloned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Acting>> {
        self.runs.lock().unwrap_or_else(|p| p.into_inner())
    }
}

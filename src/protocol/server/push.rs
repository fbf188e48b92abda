//! Delivers push notifications: POSTs a task's snapshot to each of its webhooks when its
//! state changes (spec §9.5).
//!
//! Each live task gets one delivery worker fed through a bounded queue, so notifications
//! of one task arrive in order and a slow webhook never blocks the task: when the queue
//! is full, the task drops the notification and logs it rather than wait.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_util::task::TaskTracker;
use tracing::{Instrument, debug, info_span, warn};

use super::store::TaskStore;
use crate::protocol::types::{PushNotificationConfig, Task};

/// The header carrying a config's token back to the client.
pub const NOTIFICATION_TOKEN_HEADER: &str = "X-A2A-Notification-Token";

const QUEUE: usize = 32;
const ATTEMPTS: u32 = 3;
const FIRST_BACKOFF: Duration = Duration::from_millis(200);

/// Sends webhooks for a server.
#[derive(Clone)]
pub struct PushNotifier {
    http: reqwest::Client,
    store: Arc<dyn TaskStore>,
}

impl PushNotifier {
    pub fn new(store: Arc<dyn TaskStore>, timeout: Duration) -> Self {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .user_agent(concat!("a2a-orchestrator/", env!("CARGO_PKG_VERSION")))
            .build()
            .unwrap_or_default();
        Self { http, store }
    }

    /// Starts a delivery worker for one task; it ends when the sender is dropped.
    pub(crate) fn worker(&self, tracker: &TaskTracker) -> mpsc::Sender<Task> {
        let (tx, mut rx) = mpsc::channel::<Task>(QUEUE);
        let this = self.clone();
        tracker.spawn(
            async move {
                while let Some(task) = rx.recv().await {
                    let configs = match this.store.push_configs(&task.id).await {
                        Ok(c) => c,
                        Err(e) => {
                            warn!(error = %e, "cannot read push configs");
                            continue;
                        }
                    };
                    for config in &configs {
                        this.deliver(config, &task).await;
                    }
                }
            }
            .instrument(info_span!("push")),
        );
        tx
    }

    async fn deliver(&self, config: &PushNotificationConfig, task: &Task) {
        let mut backoff = FIRST_BACKOFF;
        for attempt in 1..=ATTEMPTS {
            let mut req = self.http.post(&config.url).json(task);
            if let Some(token) = &config.token {
                req = req.header(NOTIFICATION_TOKEN_HEADER, token);
            }
            if let Some(auth) = &config.authentication
                && let Some(credentials) = &auth.credentials
                && let Some(scheme) = auth.schemes.first()
            {
                req = req.header(
                    reqwest::header::AUTHORIZATION,
                    format!("{scheme} {credentials}"),
                );
            }
            match req.send().await {
                Ok(resp) if resp.status().is_success() => {
                    debug!(url = %config.url, state = %task.status.state, "push notification delivered");
                    return;
                }
                Ok(resp) => {
                    warn!(url = %config.url, status = %resp.status(), attempt, "webhook refused the notification")
                }
                Err(e) => warn!(url = %config.url, error = %e, attempt, "webhook unreachable"),
            }
            if attempt < ATTEMPTS {
                tokio::time::sleep(backoff).await;
                backoff *= 2;
            }
        }
    }
}

//! Push-notification configuration (spec §6.8–§6.10): where and how an agent POSTs task
//! updates for a client that is not connected.

use serde::{Deserialize, Serialize};

use super::TaskId;

/// A webhook for one task's updates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushNotificationConfig {
    /// Identifies this config among the task's configs (assigned by the server when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The webhook URL.
    pub url: String,
    /// Sent back as `X-A2A-Notification-Token` so the client can check the sender.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// How the agent authenticates to the webhook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<PushNotificationAuthenticationInfo>,
    /// The body its notifications take, by the generation of the request that set it:
    /// stored with the config, never sent to a client (the server clears it).
    #[serde(
        default,
        rename = "x-a2a-payload",
        skip_serializing_if = "Option::is_none"
    )]
    pub payload: Option<PushPayload>,
}

/// What a push notification's body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PushPayload {
    /// v0.3: the task (§9.5 of v0.3).
    #[serde(rename = "task")]
    Task,
    /// v1.0: a `StreamResponse` holding the task (§4.3.3 of v1.0).
    #[serde(rename = "streamResponse")]
    StreamResponse,
}

/// How the agent authenticates to the webhook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushNotificationAuthenticationInfo {
    /// Auth schemes, e.g. `["Bearer"]`.
    pub schemes: Vec<String>,
    /// Credentials for the scheme.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<String>,
}

/// A push config bound to a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskPushNotificationConfig {
    /// The task.
    pub task_id: TaskId,
    /// The config.
    pub push_notification_config: PushNotificationConfig,
}

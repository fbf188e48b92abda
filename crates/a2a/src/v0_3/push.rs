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

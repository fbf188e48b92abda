//! The A2A operations and their JSON-RPC method names: v0.3's (`message/send`, …) and
//! v1.0's (`SendMessage`, …). The two sets do not overlap, so a name alone says which
//! generation a request speaks.

/// An A2A operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// `message/send`, `SendMessage`.
    SendMessage,
    /// `message/stream`, `SendStreamingMessage`.
    SendStreamingMessage,
    /// `tasks/get`, `GetTask`.
    GetTask,
    /// `tasks/cancel`, `CancelTask`.
    CancelTask,
    /// `tasks/resubscribe`, `SubscribeToTask`.
    Resubscribe,
    /// `tasks/pushNotificationConfig/set`, `CreateTaskPushNotificationConfig`.
    SetPushConfig,
    /// `tasks/pushNotificationConfig/get`, `GetTaskPushNotificationConfig`.
    GetPushConfig,
    /// `tasks/pushNotificationConfig/list`, `ListTaskPushNotificationConfig`.
    ListPushConfig,
    /// `tasks/pushNotificationConfig/delete`, `DeleteTaskPushNotificationConfig`.
    DeletePushConfig,
    /// `agent/getAuthenticatedExtendedCard`, `GetExtendedAgentCard`.
    GetAuthenticatedExtendedCard,
    /// v1.0 only.
    ListTasks,
}

impl Method {
    /// Every operation.
    pub const ALL: [Method; 11] = [
        Method::SendMessage,
        Method::SendStreamingMessage,
        Method::GetTask,
        Method::CancelTask,
        Method::Resubscribe,
        Method::SetPushConfig,
        Method::GetPushConfig,
        Method::ListPushConfig,
        Method::DeletePushConfig,
        Method::GetAuthenticatedExtendedCard,
        Method::ListTasks,
    ];

    /// The method's v0.3 name on the wire (its v1.0 name for an operation v0.3 lacks).
    pub fn as_str(self) -> &'static str {
        match self {
            Method::ListTasks => "ListTasks",
            Method::SendMessage => "message/send",
            Method::SendStreamingMessage => "message/stream",
            Method::GetTask => "tasks/get",
            Method::CancelTask => "tasks/cancel",
            Method::Resubscribe => "tasks/resubscribe",
            Method::SetPushConfig => "tasks/pushNotificationConfig/set",
            Method::GetPushConfig => "tasks/pushNotificationConfig/get",
            Method::ListPushConfig => "tasks/pushNotificationConfig/list",
            Method::DeletePushConfig => "tasks/pushNotificationConfig/delete",
            Method::GetAuthenticatedExtendedCard => "agent/getAuthenticatedExtendedCard",
        }
    }

    /// The method's v1.0 JSON-RPC name.
    pub fn v1_name(self) -> &'static str {
        match self {
            Method::SendMessage => "SendMessage",
            Method::SendStreamingMessage => "SendStreamingMessage",
            Method::GetTask => "GetTask",
            Method::ListTasks => "ListTasks",
            Method::CancelTask => "CancelTask",
            Method::Resubscribe => "SubscribeToTask",
            Method::SetPushConfig => "CreateTaskPushNotificationConfig",
            Method::GetPushConfig => "GetTaskPushNotificationConfig",
            Method::ListPushConfig => "ListTaskPushNotificationConfigs",
            Method::DeletePushConfig => "DeleteTaskPushNotificationConfig",
            Method::GetAuthenticatedExtendedCard => "GetExtendedAgentCard",
        }
    }

    /// Looks a v0.3 wire name up.
    pub fn parse(name: &str) -> Option<Method> {
        Self::ALL
            .into_iter()
            .find(|m| *m != Method::ListTasks && m.as_str() == name)
    }

    /// Looks a v1.0 wire name up.
    pub fn parse_v1(name: &str) -> Option<Method> {
        Self::ALL.into_iter().find(|m| m.v1_name() == name)
    }

    /// Whether the method answers with a Server-Sent Events stream.
    pub fn is_streaming(self) -> bool {
        matches!(self, Method::SendStreamingMessage | Method::Resubscribe)
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

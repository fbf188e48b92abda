//! The JSON-RPC method names of the v0.3.0 binding (spec §7).

/// An A2A method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    SendMessage,
    SendStreamingMessage,
    GetTask,
    CancelTask,
    Resubscribe,
    SetPushConfig,
    GetPushConfig,
    ListPushConfig,
    DeletePushConfig,
    GetAuthenticatedExtendedCard,
}

impl Method {
    pub const ALL: [Method; 10] = [
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
    ];

    /// The method's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
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

    /// Looks a wire name up.
    pub fn parse(name: &str) -> Option<Method> {
        Self::ALL.into_iter().find(|m| m.as_str() == name)
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

//! The gRPC binding's methods: each [`Rpc`] with its request and response messages,
//! and tonic's codec for messages left as bytes.

use bytes::Bytes;
use prost::Message;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tonic::Status;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

use super::pb;

/// The gRPC service's full name.
pub const SERVICE: &str = "lf.a2a.v1.A2AService";

/// One method of the service: its name, whether it answers with a stream, and how its
/// request and response messages go between binary and ProtoJSON.
pub struct Rpc {
    /// The method's name (`SendMessage`).
    pub name: &'static str,
    /// Whether it answers with a stream of messages.
    pub streaming: bool,
    request: Form,
    response: Form,
}

/// One message type's two forms.
struct Form {
    name: &'static str,
    /// Bytes to ProtoJSON text.
    decode: fn(&[u8]) -> Result<String, String>,
    /// ProtoJSON to bytes.
    encode: fn(&Value) -> Result<Vec<u8>, String>,
}

impl Form {
    fn decode(&self, bytes: &[u8]) -> Result<String, String> {
        (self.decode)(bytes).map_err(|e| format!("not a {}: {e}", self.name))
    }

    fn encode(&self, value: &Value) -> Result<Vec<u8>, String> {
        (self.encode)(value).map_err(|e| format!("{} from JSON: {e}", self.name))
    }
}

impl Rpc {
    /// The request's bytes as its ProtoJSON text (lowerCamelCase names, enums by name,
    /// defaults left out), or why they are not such a message.
    pub fn request_to_json(&self, bytes: &[u8]) -> Result<String, String> {
        self.request.decode(bytes)
    }

    /// A ProtoJSON request as its bytes; a field the proto does not have is an error
    /// (it would be lost silently otherwise).
    pub fn request_from_json(&self, value: &Value) -> Result<Vec<u8>, String> {
        self.request.encode(value)
    }

    /// A response (or stream event) as its ProtoJSON text.
    pub fn response_to_json(&self, bytes: &[u8]) -> Result<String, String> {
        self.response.decode(bytes)
    }

    /// A ProtoJSON response (or stream event) as its bytes.
    pub fn response_from_json(&self, value: &Value) -> Result<Vec<u8>, String> {
        self.response.encode(value)
    }
}

fn to_json<T: Message + Default + Serialize>(bytes: &[u8]) -> Result<String, String> {
    let message = T::decode(bytes).map_err(|e| e.to_string())?;
    serde_json::to_string(&message).map_err(|e| e.to_string())
}

fn from_json<T: Message + DeserializeOwned>(value: &Value) -> Result<Vec<u8>, String> {
    T::deserialize(value)
        .map(|m| m.encode_to_vec())
        .map_err(|e| e.to_string())
}

macro_rules! form {
    ($t:ty, $name:expr) => {
        Form {
            name: $name,
            decode: to_json::<$t>,
            encode: from_json::<$t>,
        }
    };
}

macro_rules! rpc {
    ($name:literal, $streaming:literal, $req:ident => $resp:ident) => {
        Rpc {
            name: $name,
            streaming: $streaming,
            request: form!(pb::$req, concat!("lf.a2a.v1.", stringify!($req))),
            response: form!(pb::$resp, concat!("lf.a2a.v1.", stringify!($resp))),
        }
    };
}

/// Every method of `A2AService`, as the proto declares it.
static RPCS: [Rpc; 11] = [
    rpc!("SendMessage", false, SendMessageRequest => SendMessageResponse),
    rpc!("SendStreamingMessage", true, SendMessageRequest => StreamResponse),
    rpc!("GetTask", false, GetTaskRequest => Task),
    rpc!("ListTasks", false, ListTasksRequest => ListTasksResponse),
    rpc!("CancelTask", false, CancelTaskRequest => Task),
    rpc!("SubscribeToTask", true, SubscribeToTaskRequest => StreamResponse),
    rpc!("CreateTaskPushNotificationConfig", false, TaskPushNotificationConfig => TaskPushNotificationConfig),
    rpc!("GetTaskPushNotificationConfig", false, GetTaskPushNotificationConfigRequest => TaskPushNotificationConfig),
    rpc!("ListTaskPushNotificationConfigs", false, ListTaskPushNotificationConfigsRequest => ListTaskPushNotificationConfigsResponse),
    rpc!("GetExtendedAgentCard", false, GetExtendedAgentCardRequest => AgentCard),
    Rpc {
        name: "DeleteTaskPushNotificationConfig",
        streaming: false,
        request: form!(
            pb::DeleteTaskPushNotificationConfigRequest,
            "lf.a2a.v1.DeleteTaskPushNotificationConfigRequest"
        ),
        response: form!(super::json::Empty, "google.protobuf.Empty"),
    },
];

/// The method `name` of the service, if it has one.
pub fn rpc(name: &str) -> Option<&'static Rpc> {
    RPCS.iter().find(|r| r.name == name)
}

/// tonic's codec for messages left as bytes: each end converts them itself, through
/// the [`Rpc`] of the method (see the module's comment). Both ends of the binding use it.
pub struct Raw;

impl Codec for Raw {
    type Encode = Bytes;
    type Decode = Bytes;
    type Encoder = Raw;
    type Decoder = Raw;

    fn encoder(&mut self) -> Raw {
        Raw
    }

    fn decoder(&mut self) -> Raw {
        Raw
    }
}

impl Encoder for Raw {
    type Item = Bytes;
    type Error = Status;

    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        use bytes::BufMut;
        dst.put(item);
        Ok(())
    }
}

impl Decoder for Raw {
    type Item = Bytes;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, Status> {
        use bytes::Buf;
        Ok(Some(src.copy_to_bytes(src.remaining())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_of_the_proto_is_served() {
        // The service as the vendored proto declares it, method by method.
        let proto = include_str!("../../proto/a2a.proto");
        let declared: Vec<&str> = proto
            .lines()
            .filter_map(|l| l.trim().strip_prefix("rpc "))
            .map(|l| l.split('(').next().unwrap_or_default().trim())
            .collect();
        assert_eq!(declared.len(), RPCS.len(), "{declared:?}");
        for name in declared {
            let rpc = rpc(name).unwrap_or_else(|| panic!("{name} has no Rpc"));
            let streams = proto.contains(&format!("rpc {name}(")) && {
                let at = proto.find(&format!("rpc {name}(")).unwrap();
                let line = proto[at..].lines().next().unwrap();
                line.contains("returns (stream ")
            };
            assert_eq!(rpc.streaming, streams, "{name}");
        }
    }

    #[test]
    fn messages_go_to_json_and_back() {
        let send = rpc("SendMessage").unwrap();
        let json = serde_json::json!({
            "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hé"}]},
            "configuration": {"returnImmediately": true}
        });
        let bytes = send.request_from_json(&json).unwrap();
        let back: Value = serde_json::from_str(&send.request_to_json(&bytes).unwrap()).unwrap();
        assert_eq!(back, json);
        assert!(send.request_to_json(&[0xff, 0xff]).is_err());
    }

    #[test]
    fn well_known_types_take_their_json_forms() {
        let get = rpc("GetTask").unwrap();
        let task = serde_json::json!({
            "id": "t1",
            "contextId": "c1",
            "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-11-26T10:00:00.250Z"},
            "metadata": {"nested": {"list": [1.25, "two", null, true]}},
            "artifacts": [{"artifactId": "a", "parts": [{"data": {"k": 1.5}}, {"raw": "aGk="}]}]
        });
        let bytes = get.response_from_json(&task).unwrap();
        let back: Value = serde_json::from_str(&get.response_to_json(&bytes).unwrap()).unwrap();
        assert_eq!(back, task);
        let delete = rpc("DeleteTaskPushNotificationConfig").unwrap();
        let empty = delete.response_from_json(&serde_json::json!({})).unwrap();
        assert!(empty.is_empty());
        assert_eq!(delete.response_to_json(&empty).unwrap(), "{}");
    }
}

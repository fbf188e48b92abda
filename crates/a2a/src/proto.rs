//! The normative A2A v1.0 proto (`proto/a2a.proto`, package `lf.a2a.v1`) compiled at run
//! time, once, by a pure-Rust protobuf compiler (protox): no `protoc` on the machine, no
//! generated code to keep current. The gRPC binding carries the proto's messages in
//! binary; the rest of this crate speaks their ProtoJSON form (`crate::v1::types`). The
//! descriptors turn one into the other ([`to_json`], [`from_json`]), so every binding
//! shares one set of handlers and one set of wire types.

use std::sync::OnceLock;

use bytes::Bytes;
use prost::Message;
use prost_reflect::{
    DescriptorPool, DeserializeOptions, DynamicMessage, MessageDescriptor, SerializeOptions,
};
use protox::file::{ChainFileResolver, File, FileResolver, GoogleFileResolver};
use serde_json::Value;
use tonic::Status;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

/// The gRPC service's full name.
pub const SERVICE: &str = "lf.a2a.v1.A2AService";

/// The vendored files: the A2A proto and the `google.api` annotations it imports.
struct Vendored;

impl FileResolver for Vendored {
    fn open_file(&self, name: &str) -> Result<File, protox::Error> {
        let source = match name {
            "a2a.proto" => include_str!("../proto/a2a.proto"),
            "google/api/annotations.proto" => include_str!("../proto/google/api/annotations.proto"),
            "google/api/http.proto" => include_str!("../proto/google/api/http.proto"),
            "google/api/client.proto" => include_str!("../proto/google/api/client.proto"),
            "google/api/field_behavior.proto" => {
                include_str!("../proto/google/api/field_behavior.proto")
            }
            "google/api/launch_stage.proto" => {
                include_str!("../proto/google/api/launch_stage.proto")
            }
            _ => return Err(protox::Error::file_not_found(name)),
        };
        File::from_source(name, source)
    }
}

/// The compiled descriptors of `a2a.proto` and what it imports.
pub fn pool() -> &'static DescriptorPool {
    static POOL: OnceLock<DescriptorPool> = OnceLock::new();
    POOL.get_or_init(|| {
        let mut files = ChainFileResolver::new();
        files.add(Vendored);
        files.add(GoogleFileResolver::new());
        let mut compiler = protox::Compiler::with_file_resolver(files);
        // The vendored proto is fixed at build time and its tests compile it: a failure
        // here is a build defect, not a run-time condition.
        compiler
            .open_file("a2a.proto")
            .expect("the vendored a2a.proto compiles");
        compiler.descriptor_pool()
    })
}

/// The descriptor of message `name` (`lf.a2a.v1.Task`, `google.protobuf.Empty`).
pub fn message(name: &str) -> Option<MessageDescriptor> {
    pool().get_message_by_name(name)
}

/// A binary message of type `descriptor` as its ProtoJSON value (lowerCamelCase names,
/// enums by name, defaults left out), or why the bytes are not such a message.
pub fn to_json(descriptor: &MessageDescriptor, bytes: &[u8]) -> Result<Value, String> {
    let text = to_json_text(descriptor, bytes)?;
    serde_json::from_str(&text).map_err(|e| e.to_string())
}

/// Like [`to_json`], written straight to JSON text (no value tree in between).
pub fn to_json_text(descriptor: &MessageDescriptor, bytes: &[u8]) -> Result<String, String> {
    let message = DynamicMessage::decode(descriptor.clone(), bytes)
        .map_err(|e| format!("not a {}: {e}", descriptor.full_name()))?;
    let mut out = serde_json::Serializer::new(Vec::new());
    message
        .serialize_with_options(&mut out, &SerializeOptions::new())
        .map_err(|e| format!("{} as JSON: {e}", descriptor.full_name()))?;
    String::from_utf8(out.into_inner()).map_err(|e| e.to_string())
}

/// A ProtoJSON value as the binary message of type `descriptor`; fields the proto does
/// not have are an error (they would be lost silently otherwise).
pub fn from_json(descriptor: &MessageDescriptor, value: &Value) -> Result<Vec<u8>, String> {
    let message = DynamicMessage::deserialize_with_options(
        descriptor.clone(),
        value,
        &DeserializeOptions::new(),
    )
    .map_err(|e| format!("{} from JSON: {e}", descriptor.full_name()))?;
    Ok(message.encode_to_vec())
}

/// tonic's codec for messages left as bytes: they are read and written through the
/// descriptors (see the module's comment), not generated types. Both ends of the gRPC
/// binding use it.
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
    fn the_vendored_proto_compiles_and_names_every_method() {
        let service = pool().get_service_by_name(SERVICE).unwrap();
        let methods: Vec<String> = service.methods().map(|m| m.name().to_owned()).collect();
        for m in [
            "SendMessage",
            "SendStreamingMessage",
            "GetTask",
            "ListTasks",
            "CancelTask",
            "SubscribeToTask",
            "CreateTaskPushNotificationConfig",
            "GetTaskPushNotificationConfig",
            "ListTaskPushNotificationConfigs",
            "GetExtendedAgentCard",
            "DeleteTaskPushNotificationConfig",
        ] {
            assert!(methods.iter().any(|n| n == m), "{m} in {methods:?}");
        }
    }

    #[test]
    fn messages_go_to_json_and_back() {
        let request = message("lf.a2a.v1.SendMessageRequest").unwrap();
        let json = serde_json::json!({
            "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hé"}]},
            "configuration": {"returnImmediately": true}
        });
        let bytes = from_json(&request, &json).unwrap();
        assert_eq!(to_json(&request, &bytes).unwrap(), json);
        assert!(to_json(&request, &[0xff, 0xff]).is_err());
        let unknown = serde_json::json!({"message": {"nope": 1}});
        assert!(from_json(&request, &unknown).is_err());
    }
}

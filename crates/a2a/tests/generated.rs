//! The proto's message types are generated from the vendored `proto/a2a.proto` and
//! committed (`src/proto/generated/`), so that no build needs a protobuf compiler. This
//! test generates them again — protox, a pure-Rust compiler, then prost-build for the
//! types and pbjson-build for their ProtoJSON forms — and fails when the committed ones
//! differ. `A2A_REGENERATE=1 cargo test -p a2a-protocol --test generated` writes them.

use std::path::Path;

#[test]
fn the_committed_types_are_what_the_proto_generates() {
    use prost::Message as _;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = tempdir();
    let files = protox::compile(["a2a.proto"], [root.join("proto")]).unwrap();
    let descriptors = files.encode_to_vec();
    prost_build::Config::new()
        .compile_well_known_types()
        // The well-known types as this crate holds them (`proto::json`, `proto::Timestamp`):
        // JSON stays JSON, and a timestamp is written as ProtoJSON writers write it.
        .extern_path(".google.protobuf.Timestamp", "crate::proto::Timestamp")
        .extern_path(".google.protobuf.Struct", "crate::types::Metadata")
        .extern_path(".google.protobuf.Value", "crate::proto::json::JsonValue")
        .extern_path(".google.protobuf.Empty", "crate::proto::json::Empty")
        .enable_type_names()
        // Maps (a card's schemes, scopes) in key order: a card is written the same way twice.
        .btree_map(["."])
        .out_dir(&out)
        .compile_fds(files)
        .unwrap();
    pbjson_build::Builder::new()
        .register_descriptors(&descriptors)
        .unwrap()
        // Fields a newer peer sends are left, as the JSON bindings always did.
        .ignore_unknown_fields()
        .btree_map(["."])
        .out_dir(&out)
        .build(&[".lf.a2a.v1"])
        .unwrap();
    let committed = root.join("src/proto/generated");
    let regenerate = std::env::var_os("A2A_REGENERATE").is_some();
    for name in ["lf.a2a.v1.rs", "lf.a2a.v1.serde.rs"] {
        let fresh = std::fs::read_to_string(out.join(name)).unwrap();
        let path = committed.join(name);
        if regenerate {
            std::fs::write(&path, &fresh).unwrap();
            continue;
        }
        let kept = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            kept == fresh,
            "{} differs from what proto/a2a.proto generates: run `A2A_REGENERATE=1 cargo test -p a2a-protocol --test generated`",
            path.display()
        );
    }
    let _ = std::fs::remove_dir_all(&out);
}

fn tempdir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("a2a-generated-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

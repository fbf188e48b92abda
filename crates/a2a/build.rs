//! Generates the gRPC binding's message types from the vendored `proto/a2a.proto` (with
//! the gRPC feature): protox compiles it (pure Rust, no `protoc`), prost-build writes the
//! types, pbjson-build their ProtoJSON (serde) forms. The output lives in `OUT_DIR`;
//! nothing generated is committed.

fn main() {
    println!("cargo:rerun-if-changed=proto");
    #[cfg(feature = "grpc")]
    generate().expect("the vendored a2a.proto generates its types");
}

#[cfg(feature = "grpc")]
fn generate() -> Result<(), Box<dyn std::error::Error>> {
    use prost::Message as _;

    let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    let files = protox::compile(["a2a.proto"], ["proto"])?;
    let descriptors = files.encode_to_vec();
    prost_build::Config::new()
        .compile_well_known_types()
        // The well-known types in their ProtoJSON forms; Timestamp our own (its module
        // says why).
        .extern_path(".google.protobuf.Timestamp", "crate::proto::Timestamp")
        .extern_path(".google.protobuf", "::pbjson_types")
        .enable_type_names()
        .out_dir(&out)
        .compile_fds(files)?;
    pbjson_build::Builder::new()
        .register_descriptors(&descriptors)?
        .out_dir(&out)
        .build(&[".lf.a2a.v1"])?;
    Ok(())
}

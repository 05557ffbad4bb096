//! Compiles `msg/*.proto` with a pure-Rust protobuf compiler (protox), so building needs no
//! system `protoc`. The file descriptor set is kept for run-time checks (proto2 `required`).
use std::{env, path::PathBuf};

fn main() {
    let protos = [
        "msg/netsim_manager.proto",
        "msg/rosnetsim.proto",
        "msg/agent.proto",
    ];
    for p in &protos {
        println!("cargo:rerun-if-changed={p}");
    }
    let fds = protox::compile(protos, ["msg"]).expect("msg/*.proto must compile");
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    std::fs::write(
        out.join("descriptors.bin"),
        prost::Message::encode_to_vec(&fds),
    )
    .expect("write descriptor set");
    // The ChannelData carried in the window messages is the bulk of every exchange: as `Bytes`
    // it is shared, not copied, when a message is decoded from a buffer it owns.
    prost_build::Config::new()
        .bytes([
            ".rosnetsim.PhysicsUpdate.channel_data",
            ".rosnetsim.NetworkUpdate.channel_data",
        ])
        .compile_fds(fds)
        .expect("generate Rust for msg/*.proto");
}

//! Compiles `msg/*.proto` with a pure-Rust protobuf compiler (protox), so building needs no
//! system `protoc`. The file descriptor set is kept for run-time checks (proto2 `required`).
//! With the `ros` feature, gives the binaries the ROS 2 libraries they are built against
//! ([`ros_runpath`]).
use std::{
    env,
    path::{Path, PathBuf},
};

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
    // The ChannelData carried in the window messages, and the packets between a capture agent
    // and the coordinator, are the bulk of every exchange: as `Bytes` they are shared, not
    // copied, when a message is decoded from a buffer it owns, and a packet goes into a message
    // from the frame that holds it.
    prost_build::Config::new()
        .bytes([
            ".rosnetsim.PhysicsUpdate.channel_data",
            ".rosnetsim.NetworkUpdate.channel_data",
            ".agent.Capture.packet",
            ".agent.Release.packet",
        ])
        .compile_fds(fds)
        .expect("generate Rust for msg/*.proto");
    ros_runpath();
}

/// With the `ros` feature, the binaries start without a sourced ROS 2: every directory of the
/// build's `LD_LIBRARY_PATH` (the ROS 2 it builds against) goes into their search path, as
/// DT_RPATH so that the libraries those load find theirs too, and a libpython the build's
/// environment preloads (the ROS 2 of `.ros/`, from PyPI wheels, whose libraries refer to
/// Python's symbols) becomes one of their libraries.
fn ros_runpath() {
    println!("cargo:rerun-if-env-changed=LD_LIBRARY_PATH");
    println!("cargo:rerun-if-env-changed=LD_PRELOAD");
    if env::var_os("CARGO_FEATURE_ROS").is_none() {
        return;
    }
    // Cargo adds its own folders (the build's output, the toolchain's libraries) to a build
    // script's LD_LIBRARY_PATH: those are not the ROS 2 installation's.
    let out = PathBuf::from(env::var("OUT_DIR").unwrap_or_default());
    let profile_dir = out.ancestors().nth(3).map(Path::to_path_buf);
    let dirs: Vec<String> = env::var("LD_LIBRARY_PATH")
        .unwrap_or_default()
        .split(':')
        .filter(|d| !d.is_empty() && Path::new(d).is_dir())
        .filter(|d| {
            !profile_dir
                .as_ref()
                .is_some_and(|p| Path::new(d).starts_with(p))
        })
        .filter(|d| !d.contains("/lib/rustlib/") && !d.contains("/toolchains/"))
        .map(str::to_owned)
        .collect();
    if !dirs.is_empty() {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--disable-new-dtags,-rpath,{}",
            dirs.join(":")
        );
    }
    for lib in env::var("LD_PRELOAD").unwrap_or_default().split(':') {
        let name = Path::new(lib)
            .file_name()
            .unwrap_or_default()
            .to_string_lossy();
        if name.starts_with("libpython") && Path::new(lib).is_file() {
            println!("cargo:rustc-link-arg-bins=-Wl,--no-as-needed,{lib},--as-needed");
        }
    }
}

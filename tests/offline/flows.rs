//! Generated traffic end to end: `config/flows.yaml` run unpaced through `cosim run` (the
//! embedded simulators, the default scenario's 802.11g link), its flows in the summary and the
//! report, every packet in the ledger.

use serde_json::Value;
use std::process::Command;

const COSIM: &str = env!("CARGO_BIN_EXE_cosim");

fn flow<'a>(s: &'a Value, name: &str) -> &'a Value {
    s["traffic"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == name)
        .unwrap_or_else(|| panic!("no flow {name} in {}", s["traffic"]))
}

fn n(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn the_flows_scenario_carries_every_kind_of_flow_and_accounts_for_every_packet() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("flows");
    let scenario = concat!(env!("CARGO_MANIFEST_DIR"), "/config/flows.yaml");
    let o = Command::new(COSIM)
        .args(["run", scenario, "--duration-s", "8", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let text = crate::common::output_text(&o);
    assert!(o.status.success(), "{text}");
    let s: Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    println!(
        "{} s of sim time in {:.2} s wall\n{}",
        s["sim_seconds"],
        n(&s["wall_seconds"]),
        serde_json::to_string_pretty(&s["traffic"]).unwrap()
    );

    // Line of sight all along these 8 s: the TCP transfer moves megabytes, in order, never more
    // than was written; the datagrams arrive; every echo request of the first 7 s is answered.
    let bulk = flow(&s, "bulk");
    assert_eq!(bulk["kind"], "tcp");
    assert!(n(&bulk["received_bytes"]) > 1e6, "{bulk}");
    assert!(
        n(&bulk["received_bytes"]) <= n(&bulk["sent_bytes"]),
        "{bulk}"
    );
    assert!(bulk.get("lost_share").is_none());
    let telemetry = flow(&s, "telemetry");
    assert!(n(&telemetry["sent_packets"]) > 100.0, "{telemetry}");
    assert!(n(&telemetry["lost_share"]) < 0.05, "{telemetry}");
    assert!(
        n(&telemetry["delay"]["p50_ms"]) >= 1.0,
        "one window at least: {telemetry}"
    );
    let ping = flow(&s, "ping");
    assert_eq!(n(&ping["sent_packets"]), 40.0, "{ping}");
    assert!(n(&ping["received_packets"]) >= 35.0, "{ping}");
    assert!(
        n(&ping["delay"]["p50_ms"]) >= 2.0,
        "a round trip is two windows at least: {ping}"
    );
    let discovery = flow(&s, "discovery");
    assert_eq!(discovery["to"], Value::Null);
    assert_eq!(n(&discovery["sent_packets"]), 8.0, "{discovery}");
    // A request every second, each answered whole after a round trip at least; the last one
    // (at 7 s) may still be on its way at the end.
    let status = flow(&s, "status");
    assert_eq!(status["kind"], "request");
    assert_eq!(n(&status["sent_packets"]), 8.0, "{status}");
    assert!(n(&status["received_packets"]) >= 7.0, "{status}");
    assert_eq!(
        n(&status["received_bytes"]),
        2000.0 * n(&status["received_packets"]),
        "{status}"
    );
    assert!(
        n(&status["delay"]["p50_ms"]) >= 2.0,
        "a round trip is two windows at least: {status}"
    );

    // Every copy of every packet ended delivered or dropped; the link carried the segments.
    let net = &s["network"];
    assert_eq!(net["balanced"], true, "{net}");
    assert_eq!(net["in_flight"], 0, "{net}");
    assert_eq!(
        n(&net["captured"]),
        n(&net["delivered"]) + n(&net["dropped"]),
        "{net}"
    );
    assert!(
        n(&net["delivered_bytes"]) >= n(&bulk["received_bytes"]),
        "{net}"
    );

    // The report shows them, as the terminal did.
    let html = std::fs::read_to_string(out.join("report").join("report.html")).unwrap();
    assert!(
        html.contains("Generated flows") && html.contains("telemetry"),
        "no flows in the report"
    );
    assert!(text.contains("bulk usv2 → usv1"), "{text}");
}

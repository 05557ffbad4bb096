//! What the live benchmarks share to read their settings and print a run's figures.

/// The number in environment variable `var`, or `default`.
pub fn number(var: &str, default: f64) -> f64 {
    std::env::var(var)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// `summary.json`'s `stages` (µs per window), each of `stages` (its label, its key) in turn:
/// `physics 8 · network sim 20 · …`.
pub fn stages(summary: &serde_json::Value, stages: &[(&str, &str)]) -> String {
    let st = &summary["stages"];
    stages
        .iter()
        .map(|(label, key)| {
            let us = st[*key]["us_per_window"].as_f64().unwrap_or(0.0);
            format!("{label} {us:.0}")
        })
        .collect::<Vec<_>>()
        .join(" · ")
}

/// `summary.json`'s emulation error: `p50 / p99 / max (ms), over the bound %`, or `–` without it.
pub fn emulation(summary: &serde_json::Value) -> String {
    let e = &summary["emulation"]["error"];
    match (
        e["p50_ms"].as_f64(),
        e["p99_ms"].as_f64(),
        e["max_ms"].as_f64(),
    ) {
        (Some(p50), Some(p99), Some(max)) => format!(
            "{p50:.3} / {p99:.3} / {max:.1}, {:.2} %",
            100.0 * e["over_bound"].as_f64().unwrap_or(0.0)
        ),
        _ => "–".to_owned(),
    }
}

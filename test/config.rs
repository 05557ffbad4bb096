use std::path::Path;
use netsim_cosim::config::*;

#[test]
fn scratch() {
    let base = std::fs::read_to_string("config/default.yaml").unwrap();
    let f = Path::new("config/default.yaml");
    let cases = [
        ("top unknown", base.replace("seed: 42", "seed: 42\nbogus: 1")),
        ("motion unknown", base.replacen("      speed_mps: 1.5\n", "      speed_mps: 1.5\n      sped: 3\n", 2)),
        ("motion wrong type", base.replacen("      speed_mps: 1.5\n      max_turn", "      speed_mps: fast\n      max_turn", 2)),
        ("start wrong type", base.replace("{x: 0, y: 40", "{x: zero, y: 40")),
        ("start unknown", base.replace("{x: 0, y: 40", "{x: 0, q: 1, y: 40")),
        ("kind bad", base.replacen("kind: patrol", "kind: patroll", 2)),
        ("tab", base.replace("    cell_size_m: 2", "\tcell_size_m: 2")),
        ("indent", base.replace("    relief_m: 2", "      relief_m: 2")),
        ("wp len", base.replace("- [10, 40, -25]", "- [10, 40]")),
        ("terrain unknown", base.replace("    relief_m: 2", "    relief_m: 2\n    relif: 3")),
        ("modem unknown", base.replace("      id: 2", "      id: 2\n      idd: 2")),
        ("ridge type", base.replace("width_m: 30", "width_m: wide")),
        ("missing", base.replace("      max_depth_rate_mps: 0.5\n      waypoints:\n        - [10", "      waypoints:\n        - [10")),
    ];
    for (n, t) in cases {
        match parse_str(&t, f) { Ok(_) => println!("{n}: OK"), Err(e) => println!("{n}: {e}  [{:?}]", e.key_path) }
    }
}

//! The layer order, enforced: every `crate::…` path in `src/` (outside comments) may name only
//! its own layer or a layer below it, so no import cycle between layers can come back. The
//! README's layer table lists the same layers in the same order.

use std::path::{Path, PathBuf};

/// The layers, bottom first: a module may use its own layer and those before it.
const LAYERS: &[&str] = &[
    "clock", "wire", "config", "model", "net", "sync", "sim", "output", "io", "coord", "ros", "cli",
];

/// A `crate::<module>` reference that goes against the order.
#[derive(Debug, PartialEq)]
struct Violation {
    file: String,
    line: usize,
    from: String,
    to: String,
}

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| *l == module)
}

/// The code of a line without its `//` comment (a `//` inside a string literal ends the scan
/// early, which only ever hides code, never invents a reference).
fn code_of(line: &str) -> &str {
    let mut in_str = false;
    let b = line.as_bytes();
    for i in 0..b.len() {
        match b[i] {
            b'"' if i == 0 || b[i - 1] != b'\\' => in_str = !in_str,
            b'/' if !in_str && b.get(i + 1) == Some(&b'/') => return &line[..i],
            _ => {}
        }
    }
    line
}

/// The modules `crate::<module>` names on one line of code.
fn referenced(code: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().last();
        let after = &rest[at + "crate::".len()..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        // `netsim_cosim::` in a binary is its crate; `$crate::` and `my_crate::` are not this one.
        if !matches!(before, Some(c) if c.is_ascii_alphanumeric() || c == '_' || c == '$')
            && name_len > 0
        {
            out.push(&after[..name_len]);
        }
        rest = &after[name_len..];
    }
    out
}

/// Every violation in the file `rel` (a path under `src/`) with the text `text`.
fn check_file(rel: &str, text: &str) -> Vec<Violation> {
    let top = rel.split('/').next().unwrap_or("").trim_end_matches(".rs");
    // lib.rs declares the modules; the binaries sit above every layer.
    if top == "lib" || top == "bin" {
        return Vec::new();
    }
    let Some(own) = rank(top) else {
        return vec![Violation {
            file: rel.into(),
            line: 0,
            from: top.into(),
            to: "(a module missing from LAYERS)".into(),
        }];
    };
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        for module in referenced(code_of(line)) {
            match rank(module) {
                Some(r) if r <= own => {}
                _ => found.push(Violation {
                    file: rel.into(),
                    line: i + 1,
                    from: top.into(),
                    to: module.into(),
                }),
            }
        }
    }
    found
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_module_uses_a_layer_above_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    assert!(
        files.len() > 40,
        "found only {} files under {}",
        files.len(),
        src.display()
    );
    let mut violations = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        violations.extend(check_file(&rel, &std::fs::read_to_string(f).unwrap()));
    }
    let report: Vec<String> = violations
        .iter()
        .map(|v| {
            format!(
                "src/{}:{}: {} uses {}, which is not below it (layers, bottom first: {})",
                v.file,
                v.line,
                v.from,
                v.to,
                LAYERS.join(" < ")
            )
        })
        .collect();
    assert!(
        report.is_empty(),
        "imports against the layer order:\n{}",
        report.join("\n")
    );
}

#[test]
fn every_top_level_module_has_a_layer() {
    let lib =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    let modules: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .map(|m| m.trim_end_matches(';'))
        .collect();
    let mut sorted_layers: Vec<&str> = LAYERS.to_vec();
    sorted_layers.sort();
    let mut sorted_modules = modules.clone();
    sorted_modules.sort();
    assert_eq!(
        sorted_modules, sorted_layers,
        "src/lib.rs declares these modules; LAYERS must list each once"
    );
}

#[test]
fn the_readme_table_lists_the_layers_in_this_order() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let table = readme
        .split("| layer | where | what |")
        .nth(1)
        .expect("README has the layer table");
    // Each row's `where` names its modules as `src/<module>/` or `src/<module>.rs`.
    let mut order = Vec::new();
    for row in table.lines().skip(2).take_while(|l| l.starts_with('|')) {
        let cell = row.split('|').nth(2).unwrap_or("");
        for part in cell.split("`src/").skip(1) {
            let name: String = part
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if name != "bin" {
                order.push(name);
            }
        }
    }
    assert_eq!(order, LAYERS, "the README's layer table, top to bottom");
}

#[test]
fn the_check_finds_a_reverse_import_and_ignores_comments() {
    let text = "use crate::wire::proto::ChannelData;\n/// See [`crate::coord`].\nfn f() { crate::coord::run(); } // crate::io\nlet e = \"tcp://h:1\"; crate::sim::x();\n";
    let v = check_file("model/link.rs", text);
    let at = |line, to: &str| Violation {
        file: "model/link.rs".into(),
        line,
        from: "model".into(),
        to: to.into(),
    };
    assert_eq!(
        v,
        vec![at(3, "coord"), at(4, "sim")],
        "a `//` inside a string does not end the code"
    );
    assert!(check_file("coord.rs", "use crate::model::link;\n").is_empty());
    assert_eq!(
        check_file("newlayer/x.rs", "").len(),
        1,
        "a module missing from LAYERS is reported"
    );
    assert_eq!(
        referenced("$crate::wire::x; my_crate::io; crate::sim::a"),
        vec!["sim"]
    );
}

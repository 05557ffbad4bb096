//! The layer order and the import graph, enforced: every `crate::…` path in `src/` (outside
//! comments) may name only its own layer or a layer below it, so no import cycle between layers
//! can come back; and no files of one layer may import each other in a circle. The book's
//! layer table (docs/src/development/architecture.md) lists the same layers in the same order
//! and names every file and folder of each.

use std::path::{Path, PathBuf};

/// The layers, bottom first: a module may use its own layer and those before it.
const LAYERS: &[&str] = &[
    "clock", "wire", "config", "model", "net", "lockstep", "sim", "output", "io", "coord", "ros",
    "cli",
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

/// Every `.rs` file under `src/`: its path under `src/` and its text, sorted by path.
fn src_files() -> Vec<(String, String)> {
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
    files
        .iter()
        .map(|f| {
            let rel = f
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (rel, std::fs::read_to_string(f).unwrap())
        })
        .collect()
}

#[test]
fn no_module_uses_a_layer_above_its_own() {
    let mut violations = Vec::new();
    for (rel, text) in src_files() {
        violations.extend(check_file(&rel, &text));
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
fn the_book_table_lists_the_layers_in_this_order() {
    let page = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src/development/architecture.md"),
    )
    .unwrap();
    let table = page
        .split("| layer | where | what |")
        .nth(1)
        .expect("the book's architecture page has the layer table");
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
    assert_eq!(order, LAYERS, "the book's layer table, top to bottom");
}

/// The files and folders directly in `dir` a layer row must name: `name.rs` for a file
/// (`mod.rs` and `lib.rs` aside), `name/` for a folder.
fn layer_entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            if e.path().is_dir() {
                Some(format!("{name}/"))
            } else if name.ends_with(".rs") && name != "mod.rs" && name != "lib.rs" {
                Some(name)
            } else {
                None
            }
        })
        .collect();
    names.sort();
    names
}

/// The entries of `entries` that the row's text `what` does not name in backticks (alone, or
/// as the last part of a path: `` `cli/mod.rs` `` names `mod.rs`).
fn unlisted(what: &str, entries: &[String]) -> Vec<String> {
    entries
        .iter()
        .filter(|e| {
            !what.split('`').skip(1).step_by(2).any(|quoted| {
                quoted == e.as_str()
                    || quoted.ends_with(&format!("/{e}"))
                    || quoted.starts_with(&format!("{e} "))
            })
        })
        .cloned()
        .collect()
}

/// The rows of the book's layer table: each folder its `where` names (`src/<dir>/`) with the
/// row's `what`.
fn table_rows(page: &str) -> Vec<(Vec<String>, String)> {
    let table = page
        .split("| layer | where | what |")
        .nth(1)
        .expect("the book's architecture page has the layer table");
    table
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|row| {
            let cells: Vec<&str> = row.split('|').collect();
            let dirs = cells
                .get(2)
                .unwrap_or(&"")
                .split('`')
                .filter(|p| p.starts_with("src/") && p.ends_with('/'))
                .map(str::to_owned)
                .collect();
            (dirs, cells.get(3).unwrap_or(&"").to_string())
        })
        .collect()
}

#[test]
fn the_book_table_names_every_file_and_folder_of_each_layer() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("docs/src/development/architecture.md")).unwrap();
    let mut missing = Vec::new();
    for (dirs, what) in table_rows(&page) {
        for dir in dirs {
            for entry in unlisted(&what, &layer_entries(&root.join(&dir))) {
                missing.push(format!("{dir}{entry}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/src/development/architecture.md's layer table does not name: {missing:?}"
    );
}

#[test]
fn the_table_check_finds_a_file_or_folder_left_out() {
    let entries = vec!["a.rs".to_string(), "b/".to_string(), "c.rs".to_string()];
    let what = "the first (`a.rs`), a folder (`b/`: more), and `x/c.rs.bak` but not c";
    assert_eq!(unlisted(what, &entries), vec!["c.rs".to_string()]);
    assert_eq!(
        unlisted("`cli/a.rs`, `b/` and `c.rs`", &entries),
        Vec::<String>::new()
    );
    let page = "| layer | where | what |\n|---|---|---|\n| io | `src/io/` | has `a.rs` |\n\nafter";
    assert_eq!(
        table_rows(page),
        vec![(vec!["src/io/".to_string()], " has `a.rs` ".to_string())]
    );
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

// ---------------------------------------------------------------------------------------------
// Import circles between files. Every path in `src/` that starts with `crate::`, `super::`,
// `self::` or a child module's name (in a `use` or in code, outside comments and literals) is
// resolved to the file that defines what it names: `crate::a::b::Item` is `src/a/b.rs` (or
// `src/a/b/mod.rs`), or, when `a/b` only re-exports `Item` (`pub use x::Item;`, or a glob
// `pub use x::*;` of a module that defines it), the file that defines `Item`. A file using a
// path is an edge from that file to the one the path resolves to; declaring `mod child;` is
// not, and neither is a `pub use` itself (it is resolved through, to the defining file). A set
// of files that reach each other along these edges is a circle.

/// One token of Rust code: an identifier or keyword, `::`, or one other character.
#[derive(Debug)]
struct Token {
    text: String,
    line: usize,
}

/// The tokens of `text`, without comments, string, byte-string and character literals.
fn tokens(text: &str) -> Vec<Token> {
    let c: Vec<char> = text.chars().collect();
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    let is_ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    // Skips a literal from `i` (its opening quote) to after its closing quote.
    let skip_string = |mut i: usize, line: &mut usize| -> usize {
        i += 1;
        while i < c.len() && c[i] != '"' {
            if c[i] == '\\' {
                i += 1;
            }
            if at(i) == '\n' {
                *line += 1;
            }
            i += 1;
        }
        i + 1
    };
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            loop {
                if i >= c.len() {
                    break;
                } else if c[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if c[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if ch == '"' {
            i = skip_string(i, &mut line);
        } else if ch == '\'' {
            if at(i + 1) == '\\' {
                // '\n', '\'', '\u{..}'
                i += 3;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                // A lifetime or label: its name follows as an identifier.
                i += 1;
            }
        } else if is_ident(ch) {
            // r"..", r#".."#, br"..", b"..", b'.'
            let raw_from = match (ch, at(i + 1)) {
                ('r', '"' | '#') => Some(i + 1),
                ('b', 'r') if matches!(at(i + 2), '"' | '#') => Some(i + 2),
                _ => None,
            };
            if let Some(mut j) = raw_from {
                let hashes = c[j..].iter().take_while(|h| **h == '#').count();
                j += hashes;
                if at(j) == '"' {
                    j += 1;
                    while j < c.len() && !(c[j] == '"' && (1..=hashes).all(|k| at(j + k) == '#')) {
                        if c[j] == '\n' {
                            line += 1;
                        }
                        j += 1;
                    }
                    i = j + 1 + hashes;
                    continue;
                }
            }
            if ch == 'b' && at(i + 1) == '"' {
                i = skip_string(i + 1, &mut line);
                continue;
            }
            if ch == 'b' && at(i + 1) == '\'' {
                i += if at(i + 2) == '\\' { 5 } else { 4 };
                while at(i - 1) != '\'' && i < c.len() {
                    i += 1;
                }
                continue;
            }
            let start = i;
            while i < c.len() && is_ident(c[i]) {
                i += 1;
            }
            out.push(Token {
                text: c[start..i].iter().collect(),
                line,
            });
        } else if ch == ':' && at(i + 1) == ':' {
            out.push(Token {
                text: "::".into(),
                line,
            });
            i += 2;
        } else {
            out.push(Token {
                text: ch.to_string(),
                line,
            });
            i += 1;
        }
    }
    out
}

/// A path as written, in the module it is written in.
#[derive(Debug, Clone)]
struct WrittenPath {
    /// The module the path is written in (inline modules included), from the crate root.
    module: Vec<String>,
    segments: Vec<String>,
    /// `use …::*`: the path names a module whose items are all used.
    glob: bool,
    line: usize,
}

/// A `pub use`: `name` (or every name, for a glob) of `module` is the item `target` names.
#[derive(Debug)]
struct Reexport {
    module: Vec<String>,
    name: Option<String>,
    target: WrittenPath,
}

/// What one file declares and uses.
#[derive(Debug, Default)]
struct FileScan {
    /// Paths used in `use` declarations (other than `pub use`) and in code.
    uses: Vec<WrittenPath>,
    reexports: Vec<Reexport>,
    /// Inline modules (`mod name { … }`), from the crate root.
    inline_modules: Vec<Vec<String>>,
    /// Items defined (`struct`, `fn`, …), each with its module.
    items: Vec<(Vec<String>, String)>,
}

fn is_ident_token(t: &str) -> bool {
    t.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

/// Parses the use tree starting at token `i` under `prefix`; every leaf path (with its alias
/// and whether it is a glob) goes to `out`. Returns the index after the tree.
fn use_tree(
    t: &[Token],
    mut i: usize,
    prefix: Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>, bool, usize)>,
) -> usize {
    let text = |i: usize| t.get(i).map_or("", |t| t.text.as_str());
    let line = t.get(i).map_or(0, |t| t.line);
    let mut path = prefix;
    if text(i) == "::" {
        // `::name`: an extern crate, never this one.
        path.push("::".into());
        i += 1;
    }
    loop {
        match text(i) {
            "{" => {
                i += 1;
                while i < t.len() && text(i) != "}" {
                    let next = use_tree(t, i, path.clone(), out);
                    i = if next == i { i + 1 } else { next };
                    if text(i) == "," {
                        i += 1;
                    }
                }
                return i + 1;
            }
            "*" => {
                out.push((path, None, true, line));
                return i + 1;
            }
            s if is_ident_token(s) => {
                path.push(s.to_owned());
                i += 1;
                if text(i) == "::" {
                    i += 1;
                    continue;
                }
                let mut alias = None;
                if text(i) == "as" {
                    alias = Some(text(i + 1).to_owned());
                    i += 2;
                }
                if path.last().is_some_and(|s| s == "self") {
                    path.pop();
                }
                out.push((path, alias, false, line));
                return i;
            }
            _ => return i,
        }
    }
}

/// Scans the file whose module is `module` (from the crate root).
fn scan_file(module: &[String], text: &str) -> FileScan {
    let t = tokens(text);
    let text = |i: usize| t.get(i).map_or("", |t| t.text.as_str());
    let mut scan = FileScan::default();
    // Inline modules open: name and the brace depth outside them.
    let mut open: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let current = |open: &[(String, usize)]| -> Vec<String> {
        let mut m = module.to_vec();
        m.extend(open.iter().map(|(n, _)| n.clone()));
        m
    };
    let mut i = 0;
    while i < t.len() {
        match text(i) {
            "{" => depth += 1,
            "}" => {
                depth = depth.saturating_sub(1);
                if open.last().is_some_and(|(_, d)| *d == depth) {
                    open.pop();
                }
            }
            "mod" if is_ident_token(text(i + 1)) && text(i + 2) == "{" => {
                open.push((text(i + 1).to_owned(), depth));
                scan.inline_modules.push(current(&open));
                depth += 1;
                i += 3;
                continue;
            }
            "use" => {
                let public = text(i.wrapping_sub(1)) == "pub"
                    || (text(i.wrapping_sub(1)) == ")"
                        && (0..i)
                            .rev()
                            .find(|j| text(*j) == "(")
                            .is_some_and(|j| text(j.wrapping_sub(1)) == "pub"));
                let mut leaves = Vec::new();
                let end = use_tree(&t, i + 1, Vec::new(), &mut leaves);
                let here = current(&open);
                for (segments, alias, glob, line) in leaves {
                    let name = if glob {
                        None
                    } else {
                        alias.or_else(|| segments.last().cloned())
                    };
                    let path = WrittenPath {
                        module: here.clone(),
                        segments,
                        glob,
                        line,
                    };
                    if public {
                        scan.reexports.push(Reexport {
                            module: here.clone(),
                            name,
                            target: path,
                        });
                    } else {
                        scan.uses.push(path);
                    }
                }
                i = end.max(i + 1);
                continue;
            }
            "struct" | "enum" | "union" | "trait" | "type" | "fn" | "const" | "static"
                if is_ident_token(text(i + 1)) =>
            {
                scan.items.push((current(&open), text(i + 1).to_owned()));
            }
            "macro_rules" if text(i + 1) == "!" => {
                scan.items.push((current(&open), text(i + 2).to_owned()));
            }
            s if is_ident_token(s)
                && text(i + 1) == "::"
                && !matches!(text(i.wrapping_sub(1)), "::" | "$") =>
            {
                let line = t[i].line;
                let mut segments = vec![s.to_owned()];
                let mut j = i + 1;
                while text(j) == "::" && is_ident_token(text(j + 1)) {
                    segments.push(text(j + 1).to_owned());
                    j += 2;
                }
                scan.uses.push(WrittenPath {
                    module: current(&open),
                    segments,
                    glob: false,
                    line,
                });
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    scan
}

/// The module of a file under `src/` (`a/b.rs` and `a/b/mod.rs` are `a::b`, `lib.rs` the root);
/// None for the binaries, which are crates of their own.
fn module_of(rel: &str) -> Option<Vec<String>> {
    if rel.starts_with("bin/") || !rel.ends_with(".rs") {
        return None;
    }
    let mut parts: Vec<String> = rel
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_owned)
        .collect();
    if parts
        .last()
        .is_some_and(|p| p == "mod" || (parts.len() == 1 && p == "lib"))
    {
        parts.pop();
    }
    Some(parts)
}

/// The crate's modules, re-exports and items, to resolve paths against.
struct Crate {
    /// Every module and the file that holds it.
    modules: std::collections::BTreeMap<Vec<String>, String>,
    reexports: Vec<Reexport>,
    items: std::collections::BTreeSet<(Vec<String>, String)>,
}

impl Crate {
    /// `path` from the crate root, or None when it names something outside this crate.
    fn absolute(&self, path: &WrittenPath) -> Option<Vec<String>> {
        let s = &path.segments;
        let first = s.first()?;
        let mut m = path.module.clone();
        let rest = match first.as_str() {
            "crate" => {
                m.clear();
                &s[1..]
            }
            "self" => &s[1..],
            "super" => {
                let supers = s.iter().take_while(|x| *x == "super").count();
                for _ in 0..supers {
                    m.pop()?;
                }
                &s[supers..]
            }
            child => {
                let mut c = m.clone();
                c.push(child.to_owned());
                if !self.modules.contains_key(&c) {
                    return None;
                }
                s
            }
        };
        m.extend(rest.iter().cloned());
        Some(m)
    }

    /// The file that defines what the absolute path `path` names; `depth` bounds re-export
    /// chains.
    fn file_of(&self, path: &[String], depth: usize) -> Option<&str> {
        let mut module: Vec<String> = Vec::new();
        for (k, seg) in path.iter().enumerate() {
            let mut child = module.clone();
            child.push(seg.clone());
            if self.modules.contains_key(&child) {
                module = child;
                continue;
            }
            // `seg` is an item of `module`: defined there, or re-exported from elsewhere.
            if depth > 0 && !self.items.contains(&(module.clone(), seg.clone())) {
                for r in self.reexports.iter().filter(|r| r.module == module) {
                    let Some(target) = self.absolute(&r.target) else {
                        continue;
                    };
                    let via = match &r.name {
                        Some(name) if name == seg => target,
                        None if self.defines(&target, seg) => {
                            let mut t = target;
                            t.push(seg.clone());
                            t
                        }
                        _ => continue,
                    };
                    let mut full = via;
                    full.extend(path[k + 1..].iter().cloned());
                    if let Some(f) = self.file_of(&full, depth - 1) {
                        return Some(f);
                    }
                }
            }
            break;
        }
        self.modules.get(&module).map(String::as_str)
    }

    /// Whether module `module` defines or re-exports by name the item `name`.
    fn defines(&self, module: &[String], name: &str) -> bool {
        self.items.contains(&(module.to_vec(), name.to_owned()))
            || self
                .reexports
                .iter()
                .any(|r| r.module == module && r.name.as_deref() == Some(name))
    }
}

/// One file's use of another: the line and the path as written.
#[derive(Debug, Clone)]
struct Edge {
    to: String,
    line: usize,
    path: String,
}

/// An import circle: its files (sorted) and a chain through each of them.
#[derive(Debug, PartialEq)]
struct Circle {
    files: Vec<String>,
    /// Lines such as `model/a.rs:3 uses super::b::Item (model/b.rs)`, along one closed chain
    /// per file not on an earlier one.
    chain: Vec<String>,
}

/// The import circles between the files `files` (path under `src/`, text).
fn circles(files: &[(String, String)]) -> Vec<Circle> {
    use std::collections::{BTreeMap, BTreeSet, VecDeque};
    let mut krate = Crate {
        modules: BTreeMap::new(),
        reexports: Vec::new(),
        items: BTreeSet::new(),
    };
    let mut scans = Vec::new();
    for (rel, _) in files {
        if let Some(m) = module_of(rel) {
            krate.modules.insert(m, rel.clone());
        }
    }
    for (rel, text) in files {
        let Some(m) = module_of(rel) else { continue };
        let scan = scan_file(&m, text);
        for inline in &scan.inline_modules {
            krate.modules.entry(inline.clone()).or_insert(rel.clone());
        }
        scans.push((rel.clone(), scan));
    }
    for (_, scan) in &mut scans {
        krate.items.extend(scan.items.drain(..));
        krate.reexports.append(&mut scan.reexports);
    }
    // Edges, per file, in a stable order.
    let mut edges: BTreeMap<String, Vec<Edge>> = BTreeMap::new();
    for (rel, scan) in &scans {
        let out = edges.entry(rel.clone()).or_default();
        for u in &scan.uses {
            let Some(abs) = krate.absolute(u) else {
                continue;
            };
            let Some(to) = krate.file_of(&abs, 8) else {
                continue;
            };
            if to != rel {
                out.push(Edge {
                    to: to.to_owned(),
                    line: u.line,
                    path: u.segments.join("::") + if u.glob { "::*" } else { "" },
                });
            }
        }
    }
    // Strongly connected components (Tarjan).
    struct Tarjan<'a> {
        edges: &'a BTreeMap<String, Vec<Edge>>,
        index: BTreeMap<&'a str, (usize, usize)>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        components: Vec<Vec<String>>,
    }
    impl<'a> Tarjan<'a> {
        fn visit(&mut self, v: &'a str) {
            let n = self.index.len();
            self.index.insert(v, (n, n));
            self.stack.push(v);
            self.on_stack.insert(v);
            let edges: &'a BTreeMap<String, Vec<Edge>> = self.edges;
            for e in edges.get(v).into_iter().flatten() {
                let w = e.to.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low_w = self.index[w].1;
                    let entry = self.index.get_mut(v).unwrap();
                    entry.1 = entry.1.min(low_w);
                } else if self.on_stack.contains(w) {
                    let idx_w = self.index[w].0;
                    let entry = self.index.get_mut(v).unwrap();
                    entry.1 = entry.1.min(idx_w);
                }
            }
            if self.index[v].0 == self.index[v].1 {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    component.push(w.to_owned());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.components.push(component);
                }
            }
        }
    }
    let mut tarjan = Tarjan {
        edges: &edges,
        index: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        components: Vec::new(),
    };
    for v in edges.keys() {
        if !tarjan.index.contains_key(v.as_str()) {
            tarjan.visit(v);
        }
    }
    let mut components = tarjan.components;
    components.sort();
    // A shortest closed chain through each file not on an earlier chain.
    components
        .into_iter()
        .map(|files| {
            let inside: BTreeSet<&str> = files.iter().map(String::as_str).collect();
            let mut covered = BTreeSet::new();
            let mut chain = Vec::new();
            for start in &files {
                if covered.contains(start.as_str()) {
                    continue;
                }
                // Breadth-first from `start` back to it, inside the circle: each file reached
                // with the file and the edge it was reached by.
                let mut came: BTreeMap<&str, (&str, &Edge)> = BTreeMap::new();
                let mut queue = VecDeque::from([start.as_str()]);
                let mut closing = None;
                'search: while let Some(v) = queue.pop_front() {
                    for e in edges.get(v).into_iter().flatten() {
                        let w = e.to.as_str();
                        if !inside.contains(w) {
                            continue;
                        }
                        if w == start {
                            closing = Some((v, e));
                            break 'search;
                        }
                        if !came.contains_key(w) {
                            came.insert(w, (v, e));
                            queue.push_back(w);
                        }
                    }
                }
                let (mut v, mut e) = closing.expect("a file of a circle reaches itself");
                let mut steps = Vec::new();
                loop {
                    steps.push(format!("src/{v}:{} uses {} (src/{})", e.line, e.path, e.to));
                    covered.insert(v);
                    if v == start {
                        break;
                    }
                    (v, e) = came[v];
                }
                steps.reverse();
                if !chain.is_empty() {
                    chain.push("and".into());
                }
                chain.extend(steps);
            }
            Circle { files, chain }
        })
        .collect()
}

#[test]
fn no_import_circle_between_files() {
    let found = circles(&src_files());
    let report: Vec<String> = found
        .iter()
        .map(|c| format!("{}:\n  {}", c.files.join(", "), c.chain.join("\n  ")))
        .collect();
    assert!(
        report.is_empty(),
        "import circles between files (under src/; each file on a circle reaches the others \
         through the imports listed; a type both use belongs in a module both import):\n{}",
        report.join("\n")
    );
}

#[test]
fn the_circle_check_follows_re_exports_and_ignores_mod_declarations_and_comments() {
    let files = |a_uses_b: &str| -> Vec<(String, String)> {
        [
            ("lib.rs", "pub mod m;\n"),
            (
                "m/mod.rs",
                "//! Mentions crate::m::b::Thing.\npub mod a;\npub mod b;\nmod c;\npub use a::Shared;\nuse self::a::Shared as _;\npub fn top() {}\n",
            ),
            ("m/a.rs", a_uses_b),
            (
                "m/b.rs",
                "use crate::m::Shared; // re-exported from a.rs\npub struct Thing(Shared);\n",
            ),
            (
                "m/c.rs",
                "pub fn f() { super::top() }\n",
            ),
        ]
        .into_iter()
        .map(|(f, t)| (f.to_owned(), t.to_owned()))
        .collect()
    };
    let a = "use super::b::Thing;\npub struct Shared;\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n";
    assert_eq!(
        circles(&files(a)),
        vec![Circle {
            files: vec!["m/a.rs".into(), "m/b.rs".into()],
            chain: vec![
                "src/m/a.rs:1 uses super::b::Thing (src/m/b.rs)".into(),
                "src/m/b.rs:1 uses crate::m::Shared (src/m/a.rs)".into(),
            ],
        }],
        "b reaches a through mod.rs's re-export; a's inline `mod tests` uses a itself; \
         declaring `mod c;` is no import of c"
    );
    assert_eq!(
        circles(&files(
            "pub struct Shared;\nfn g() -> super::b::Thing { todo!() }\n"
        ))
        .len(),
        1,
        "a path in code counts as a `use` does"
    );
    let mentions = "//! See super::b.\n/// Unlike [`super::b::Thing`].\npub struct Shared;\n// use super::b::Thing;\n/* super::b::Thing /* nested */ crate::m::b */\nconst S: &str = \"super::b::Thing\";\nconst Q: char = '\"';\nconst R: &str = r#\"crate::m::b\"#;\nconst L: &[u8] = b\"super::b\";\nfn l<'b>(x: &'b str) -> &'b str { x }\n";
    assert_eq!(
        circles(&files(mentions)),
        vec![],
        "nothing in a comment or literal counts"
    );
    assert_eq!(
        circles(&files(&format!(
            "{mentions}fn h() {{ super::b::Thing::new(); }}\n"
        )))
        .len(),
        1,
        "the same text with one path in code makes the circle"
    );
}

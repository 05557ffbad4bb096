//! The documentation book (`docs/`, mdBook): it builds, every internal link of its HTML leads
//! to a file that exists and every `#anchor` to an `id` of the page it names, and every page in
//! `docs/src` is listed in `SUMMARY.md`. `mdbook` comes from `scripts/setup --test`.

use std::collections::{BTreeSet, HashMap};
use std::path::{Component, Path, PathBuf};
use std::process::Command;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The `mdbook` executable: `$MDBOOK`, else `mdbook` on `PATH`, else cargo's bin folder (where
/// `scripts/setup --test` installs it).
fn mdbook() -> PathBuf {
    if let Some(p) = std::env::var_os("MDBOOK") {
        return PathBuf::from(p);
    }
    let mut candidates: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("mdbook"))
                .collect()
        })
        .unwrap_or_default();
    if let Some(home) = std::env::var_os("CARGO_HOME") {
        candidates.push(PathBuf::from(home).join("bin/mdbook"));
    }
    if let Some(home) = std::env::var_os("HOME") {
        candidates.push(PathBuf::from(home).join(".cargo/bin/mdbook"));
    }
    candidates
        .into_iter()
        .find(|p| p.is_file())
        .expect("mdbook not found on PATH or in ~/.cargo/bin: scripts/setup --test installs it")
}

/// Builds the book whose `book.toml` is in `book` into `dest`.
fn build(book: &Path, dest: &Path) {
    let out = Command::new(mdbook())
        .arg("build")
        .arg(book)
        .arg("--dest-dir")
        .arg(dest)
        .output()
        .expect("run mdbook");
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "mdbook build {} failed:\n{log}",
        book.display()
    );
    // mdBook logs an `{{#include}}` it cannot read as an error and still succeeds.
    assert!(
        !log.contains("[ERROR]"),
        "mdbook build {} logged errors:\n{log}",
        book.display()
    );
}

/// Every file under `dir` with extension `ext`, sorted.
fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == ext) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The values of attribute `name` (`name="…"` or `name='…'`) in `html`, entities `&amp;`,
/// `&quot;`, `&#39;`, `&lt;` and `&gt;` decoded.
fn attributes(html: &str, name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = html.as_bytes();
    let pattern = format!("{name}=");
    let mut from = 0;
    while let Some(at) = html[from..].find(&pattern) {
        let start = from + at;
        from = start + pattern.len();
        // The attribute name must start a word (`data-href=` is another attribute).
        let before = start.checked_sub(1).map(|i| bytes[i]);
        if before.is_some_and(|b| !(b as char).is_ascii_whitespace()) {
            continue;
        }
        let Some(&quote) = bytes.get(from) else { break };
        if quote != b'"' && quote != b'\'' {
            continue;
        }
        let value_start = from + 1;
        let Some(len) = html[value_start..].find(quote as char) else {
            break;
        };
        out.push(
            html[value_start..value_start + len]
                .replace("&quot;", "\"")
                .replace("&#39;", "'")
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&amp;", "&"),
        );
        from = value_start + len;
    }
    out
}

/// `%XX` escapes decoded (invalid ones kept as they are).
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `base` joined with the relative `link`, `.` and `..` resolved; None if it climbs out of the
/// root (an empty path).
fn resolve(base: &Path, link: &str) -> Option<PathBuf> {
    let mut parts: Vec<String> = base
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    for piece in link.split('/') {
        match piece {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p.to_owned()),
        }
    }
    Some(parts.iter().collect())
}

/// What a check of the built HTML found.
#[derive(Debug, Default)]
struct LinkReport {
    pages: usize,
    /// Internal links followed to a file.
    links: usize,
    /// Of those, links whose `#anchor` was looked up in its page.
    anchors: usize,
    /// One line per broken link: the page, the link, and what is missing.
    broken: Vec<String>,
}

/// Checks every `href` and `src` of every HTML page under `root` that is not external
/// (a scheme such as `https:` or `mailto:`, or `//host`): the file it names must exist under
/// `root` and its `#fragment`, if any, must be an `id` of that page.
fn check_links(root: &Path) -> LinkReport {
    let pages = files(root, "html");
    let mut ids: HashMap<PathBuf, BTreeSet<String>> = HashMap::new();
    let mut texts = Vec::new();
    for page in &pages {
        let rel = page.strip_prefix(root).unwrap().to_path_buf();
        let text = std::fs::read_to_string(page).unwrap();
        ids.insert(rel.clone(), attributes(&text, "id").into_iter().collect());
        texts.push((rel, text));
    }
    let mut report = LinkReport {
        pages: pages.len(),
        ..LinkReport::default()
    };
    for (rel, text) in &texts {
        let dir = rel.parent().unwrap_or(Path::new("")).to_path_buf();
        // `<base href="/">` (mdBook's 404 page): relative links start at the root.
        let base = match attributes(text, "href").first() {
            Some(b) if text.contains("<base href=") && b.starts_with('/') => PathBuf::new(),
            _ => dir,
        };
        let mut links = attributes(text, "href");
        links.extend(attributes(text, "src"));
        for link in links {
            let external = link.starts_with("//")
                || link.split_once(':').is_some_and(|(scheme, _)| {
                    !scheme.is_empty()
                        && scheme
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
                });
            if external || link.is_empty() {
                continue;
            }
            let without_query = link.split('?').next().unwrap_or("");
            let (path, fragment) = match without_query.split_once('#') {
                Some((p, f)) => (p, Some(percent_decode(f))),
                None => (without_query, None),
            };
            let target = if path.is_empty() {
                Some(rel.clone())
            } else if let Some(abs) = path.strip_prefix('/') {
                resolve(Path::new(""), &percent_decode(abs))
            } else {
                resolve(&base, &percent_decode(path))
            };
            let Some(mut target) = target else {
                report.broken.push(format!(
                    "{}: link {link}: leads out of the book",
                    rel.display()
                ));
                continue;
            };
            if path.ends_with('/') || (!path.is_empty() && root.join(&target).is_dir()) {
                target.push("index.html");
            }
            report.links += 1;
            if !root.join(&target).is_file() {
                report.broken.push(format!(
                    "{}: link {link}: the file {} is missing",
                    rel.display(),
                    target.display()
                ));
                continue;
            }
            if let Some(fragment) = fragment.filter(|f| !f.is_empty()) {
                if let Some(page_ids) = ids.get(&target) {
                    report.anchors += 1;
                    if !page_ids.contains(&fragment) {
                        report.broken.push(format!(
                            "{}: link {link}: {} has no id \"{fragment}\"",
                            rel.display(),
                            target.display()
                        ));
                    }
                }
            }
        }
    }
    report
}

/// The pages (`.md` under `src`, relative paths) that `src/SUMMARY.md` does not link.
fn unlisted_pages(src: &Path) -> Vec<String> {
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).expect("SUMMARY.md");
    let listed: BTreeSet<String> = summary
        .split("](")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .map(|p| p.trim().trim_start_matches("./").to_owned())
        .collect();
    files(src, "md")
        .into_iter()
        .map(|p| {
            p.strip_prefix(src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/")
        })
        .filter(|p| p != "SUMMARY.md" && !listed.contains(p))
        .collect()
}

/// Copies the directory `from` into `to`, recursively.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), &dest).unwrap();
        }
    }
}

/// A copy of the book's sources (book.toml, src/) and of the generated schemas it includes,
/// laid out as in the repository: `<tmp>/docs`, `<tmp>/schema`.
fn copy_book(to: &Path) -> PathBuf {
    let docs = to.join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::copy(repo().join("docs/book.toml"), docs.join("book.toml")).unwrap();
    copy_dir(&repo().join("docs/src"), &docs.join("src"));
    copy_dir(&repo().join("schema"), &to.join("schema"));
    docs
}

#[test]
fn the_book_builds_and_every_internal_link_resolves() {
    let out = tempfile::tempdir().unwrap();
    build(&repo().join("docs"), out.path());
    let report = check_links(out.path());
    eprintln!(
        "{} pages: {} internal links, {} anchors checked",
        report.pages, report.links, report.anchors
    );
    assert!(
        report.broken.is_empty(),
        "{} broken links in the book:\n{}",
        report.broken.len(),
        report.broken.join("\n")
    );
    // Not vacuous: the book has its pages, their links and anchors were followed.
    assert!(report.pages >= 45, "only {} pages built", report.pages);
    assert!(
        report.links > 1500,
        "only {} internal links checked",
        report.links
    );
    assert!(
        report.anchors > 100,
        "only {} anchors checked",
        report.anchors
    );
}

#[test]
fn every_page_of_the_book_is_in_its_summary() {
    let unlisted = unlisted_pages(&repo().join("docs/src"));
    assert!(
        unlisted.is_empty(),
        "pages of docs/src missing from SUMMARY.md: {unlisted:?}"
    );
}

#[test]
fn a_broken_link_a_missing_anchor_and_an_unlisted_page_are_found() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = copy_book(tmp.path());
    let intro = docs.join("src/introduction.md");
    let mut text = std::fs::read_to_string(&intro).unwrap();
    text.push_str(
        "\n[gone](reference/no-such-page.md) and [nowhere](reference/scenario.md#no-such-key)\n",
    );
    std::fs::write(&intro, text).unwrap();
    std::fs::write(docs.join("src/orphan.md"), "# Orphan\n").unwrap();

    // The unchanged copy is clean, so what follows is the planted defects' doing.
    let clean = tempfile::tempdir().unwrap();
    let pristine = copy_book(clean.path());
    let out = tempfile::tempdir().unwrap();
    build(&pristine, out.path());
    assert_eq!(check_links(out.path()).broken, Vec::<String>::new());

    let out = tempfile::tempdir().unwrap();
    build(&docs, out.path());
    let report = check_links(out.path());
    let page = |needle: &str| {
        report
            .broken
            .iter()
            .any(|b| b.starts_with("introduction.html: ") && b.contains(needle))
    };
    assert!(
        page("link reference/no-such-page.html: the file reference/no-such-page.html is missing"),
        "{:?}",
        report.broken
    );
    assert!(
        page("reference/scenario.html has no id \"no-such-key\""),
        "{:?}",
        report.broken
    );
    assert_eq!(
        unlisted_pages(&docs.join("src")),
        vec!["orphan.md".to_owned()]
    );
}

#[test]
fn the_link_check_reads_attributes_and_paths_as_a_browser_does() {
    let html = r#"<a href="a.html#x">a</a><img src='img/b.png'><div data-href="no"></div><a href="c.html?q=1&amp;r=2">"#;
    assert_eq!(
        attributes(html, "href"),
        vec!["a.html#x".to_owned(), "c.html?q=1&r=2".to_owned()]
    );
    assert_eq!(attributes(html, "src"), vec!["img/b.png".to_owned()]);
    assert_eq!(
        resolve(Path::new("reference"), "../explanation/lockstep.html"),
        Some(PathBuf::from("explanation/lockstep.html"))
    );
    assert_eq!(resolve(Path::new("reference"), "../../README.md"), None);
    assert_eq!(percent_decode("a%20b%2"), "a b%2");
}

/// The relative link targets of Markdown `text`: `[..](target)` and `![..](target)`, without
/// a scheme, their `#fragment` dropped.
fn markdown_links(text: &str) -> Vec<String> {
    text.split("](")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .map(|t| t.split('#').next().unwrap_or("").trim().to_owned())
        .filter(|t| !t.is_empty() && !t.contains("://") && !t.starts_with("mailto:"))
        .collect()
}

#[test]
fn the_readme_is_a_front_page_whose_links_lead_into_the_repository() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines <= 200, "README.md has {lines} lines (at most 200)");
    let links = markdown_links(&readme);
    let missing: Vec<&String> = links.iter().filter(|l| !repo().join(l).exists()).collect();
    assert!(
        missing.is_empty(),
        "README.md links to missing files: {missing:?}"
    );
    // It leads into the book and shows a picture kept in the book.
    let into_book = links.iter().filter(|l| l.starts_with("docs/src/")).count();
    assert!(into_book >= 10, "only {into_book} links into the book");
    assert!(
        links
            .iter()
            .any(|l| l.starts_with("docs/src/images/") && l.ends_with(".png")),
        "README.md shows no picture from docs/src/images/"
    );
}

/// The rows of `reference/drop-reasons.md`'s table that do not say what the code says: for each
/// `DropReason`, in `DropReason::ALL`'s order, a row with its label, its snake_case name, its
/// protocol value (— for a reason no network simulator reports) and its `meaning()` word for
/// word; and no other row.
fn drop_reason_rows_that_differ(page: &str) -> Vec<String> {
    use netsim_cosim::model::fate::DropReason;
    use netsim_cosim::wire::proto::rosnetsim::network_update::DropReason as WireReason;
    let header = "| label | name | protocol value | meaning |";
    let Some(start) = page.find(header) else {
        return vec![format!("no table starting `{header}`")];
    };
    let rows: Vec<Vec<&str>> = page[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.trim_matches('|').split('|').map(str::trim).collect())
        .collect();
    let mut differ = Vec::new();
    if rows.len() != DropReason::ALL.len() {
        differ.push(format!(
            "{} rows for {} reasons",
            rows.len(),
            DropReason::ALL.len()
        ));
    }
    for (i, &r) in DropReason::ALL.iter().enumerate() {
        let name = serde_json::to_value(r).unwrap();
        let name = format!("`{}`", name.as_str().unwrap());
        let wire = match (r.to_wire(), r) {
            (0, DropReason::Unspecified) | (1.., _) => {
                let w = WireReason::try_from(r.to_wire()).unwrap();
                format!("`{}`", w.as_str_name())
            }
            _ => "—".to_owned(),
        };
        let want = [r.label(), name.as_str(), wire.as_str(), r.meaning()];
        match rows.get(i) {
            Some(row) if row.len() >= 4 && row[..4] == want => {}
            Some(row) => differ.push(format!("row {}: {row:?}, want {want:?}", i + 1)),
            None => differ.push(format!("no row for {want:?}")),
        }
    }
    differ
}

#[test]
fn the_drop_reasons_page_says_what_the_code_says() {
    let page = std::fs::read_to_string(repo().join("docs/src/reference/drop-reasons.md")).unwrap();
    let differ = drop_reason_rows_that_differ(&page);
    assert!(
        differ.is_empty(),
        "docs/src/reference/drop-reasons.md differs from model::fate::DropReason:\n{}",
        differ.join("\n")
    );
}

#[test]
fn a_drop_reason_missing_or_reworded_in_the_page_is_found() {
    let page = std::fs::read_to_string(repo().join("docs/src/reference/drop-reasons.md")).unwrap();
    let after_end = page
        .lines()
        .find(|l| l.starts_with("| after end |"))
        .expect("the page has a row for `after end`");
    let without = page.replace(&format!("{after_end}\n"), "");
    assert!(!drop_reason_rows_that_differ(&without).is_empty());
    let reworded = page.replace("at the end of the last window |", "at the end of the run |");
    assert_ne!(reworded, page);
    let differ = drop_reason_rows_that_differ(&reworded);
    assert_eq!(differ.len(), 1, "{differ:?}");
    assert!(differ[0].contains("shutdown"), "{differ:?}");
}

/// The glossary's entries, by the anchor of their heading in `reference/glossary.md`, and the
/// words that use each term in the book's prose (matched whole, case as written).
const GLOSSARY: &[(&str, &[&str])] = &[
    ("w", &["W"]),
    ("begin-and-end", &["BEGIN", "END"]),
    ("channeldata", &["ChannelData"]),
    ("los-and-nlos", &["LOS", "NLOS"]),
    ("ledger", &["ledger", "Ledger"]),
    ("tun", &["TUN"]),
    (
        "network-namespace",
        &["network namespace", "Network namespace"],
    ),
    ("dds", &["DDS"]),
    ("snr-and-sir", &["SNR", "SIR"]),
    ("ber-and-per", &["BER", "PER"]),
    ("fh-fsk-and-psk", &["FH-FSK", "PSK"]),
    ("wenz-curves", &["Wenz"]),
    ("netsim-manager", &["NETSIM manager"]),
    ("sim-time", &["sim time", "Sim time"]),
    ("capture-agent", &["capture agent", "Capture agent"]),
    ("pcap", &["pcap"]),
];

/// `text` with what is not prose blanked out (fenced code blocks, HTML comments, inline code),
/// its lines where they were.
fn prose(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut fenced, mut comment) = (false, false);
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced || line.trim_start().starts_with("```") {
            out.push('\n');
            continue;
        }
        let mut code = false;
        let mut chars = line.char_indices();
        while let Some((i, c)) = chars.next() {
            if comment {
                if line[i..].starts_with("-->") {
                    comment = false;
                    chars.nth(1);
                }
                out.push(if c == '\n' { c } else { ' ' });
                continue;
            }
            if !code && line[i..].starts_with("<!--") {
                comment = true;
                out.push(' ');
                continue;
            }
            if c == '`' {
                code = !code;
            }
            out.push(if code || c == '`' { ' ' } else { c });
        }
    }
    out
}

/// Where `word` first occurs in `text` as a word of its own (no letter, digit or `_` beside it).
fn first_word(text: &str, word: &str) -> Option<(usize, usize)> {
    let wordish = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    text.match_indices(word)
        .map(|(at, w)| (at, at + w.len()))
        .find(|&(a, b)| {
            !wordish(text[..a].chars().next_back()) && !wordish(text[b..].chars().next())
        })
}

/// The Markdown links of `text`: the byte span of each one's text, and its target.
fn link_spans(text: &str) -> Vec<(usize, usize, &str)> {
    let mut links = Vec::new();
    for (open, _) in text.match_indices('[') {
        let Some(close) = text[open..].find("](").map(|c| open + c) else {
            continue;
        };
        if text[open + 1..close].contains("\n\n") {
            continue;
        }
        let Some(end) = text[close + 2..].find(')').map(|e| close + 2 + e) else {
            continue;
        };
        links.push((open + 1, close, &text[close + 2..end]));
    }
    links
}

/// For each glossary term, its first use in the book's pages (in `SUMMARY.md`'s order, the
/// glossary left out) unless that use is the text of a link to its entry; and every heading of
/// the glossary without a row in [`GLOSSARY`], or a row without its heading.
fn unlinked_first_uses(src: &Path) -> Vec<String> {
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).unwrap();
    let pages: Vec<&str> = summary
        .split("](")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .filter(|p| *p != "reference/glossary.md")
        .collect();
    let glossary = std::fs::read_to_string(src.join("reference/glossary.md")).unwrap();
    let headings: BTreeSet<String> = glossary
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .map(|h| {
            h.to_lowercase()
                .chars()
                .filter_map(|c| match c {
                    ' ' => Some('-'),
                    c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                    _ => None,
                })
                .collect()
        })
        .collect();
    let rows: BTreeSet<String> = GLOSSARY.iter().map(|(a, _)| a.to_string()).collect();
    let mut problems: Vec<String> = headings
        .symmetric_difference(&rows)
        .map(|a| format!("glossary entry #{a}: a heading without a row in GLOSSARY, or a row without its heading"))
        .collect();
    let texts: Vec<(&str, String)> = pages
        .iter()
        .map(|p| {
            (
                *p,
                prose(&std::fs::read_to_string(src.join(p)).unwrap_or_default()),
            )
        })
        .collect();
    for (anchor, words) in GLOSSARY {
        let first = texts.iter().find_map(|(page, text)| {
            words
                .iter()
                .filter_map(|w| first_word(text, w))
                .min()
                .map(|at| (page, text, at))
        });
        let Some((page, text, (a, b))) = first else {
            problems.push(format!("#{anchor}: no page uses it"));
            continue;
        };
        let linked = link_spans(text).iter().any(|&(s, e, target)| {
            s <= a && b <= e && target.ends_with(&format!("glossary.md#{anchor}"))
        });
        if !linked {
            let line = text[..a].matches('\n').count() + 1;
            problems.push(format!(
                "{page}:{line}: first use of {:?}, not a link to glossary.md#{anchor}",
                &text[a..b]
            ));
        }
    }
    problems
}

#[test]
fn each_glossary_term_is_linked_to_its_entry_where_the_book_first_uses_it() {
    let problems = unlinked_first_uses(&repo().join("docs/src"));
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn a_first_use_without_its_glossary_link_is_found() {
    let tmp = tempfile::tempdir().unwrap();
    let src = copy_book(tmp.path()).join("src");
    let intro = src.join("introduction.md");
    let text = std::fs::read_to_string(&intro).unwrap();
    let planted = text.replacen("[W](reference/glossary.md#w)", "W", 1);
    assert_ne!(planted, text, "the introduction links W to the glossary");
    std::fs::write(&intro, planted).unwrap();
    let problems = unlinked_first_uses(&src);
    assert!(
        problems.len() == 1
            && problems[0].starts_with("introduction.md:")
            && problems[0].contains("\"W\""),
        "{problems:#?}"
    );
}

//! Runs the commands a page of the book shows, as a reader would type them, and checks the
//! output the page shows (`tests/live/tutorials.rs`, `tests/ros/tutorials_ros.rs`).
//!
//! A page's fenced code blocks, by their info string (language, then attributes after commas,
//! which mdBook renders as CSS classes):
//!
//! - ` ```sh `: commands, run in order. Each line is a command as typed at a prompt, without a
//!   `$ ` prompt; a line ending in `\` continues on the next; blank lines and lines starting
//!   with `#` are not commands. Commands run in one `bash` per page (`set -e`, as a terminal's
//!   shell but stopping at the first failure; a pipeline's status is its last command's), so a
//!   directory change, a variable or a job started with `&` carries over to the next block, as
//!   in a terminal. A command that exits non-zero fails the test with the page, the block's
//!   line, the command and its output.
//! - ` ```sh,norun `: commands shown but not run (they need something that cannot be installed
//!   here, e.g. gz-sim); counted, and the page says why in its text.
//! - ` ```LANG,file=PATH ` (e.g. ` ```yaml,file=fleet.yaml `): a file the page asks the reader to
//!   save; written to PATH in the working folder where the block stands in the page.
//! - ` ```text,output `: what the commands block before it prints. Each non-blank line must appear
//!   in that block's output, in order, where `…` stands for any text (a number that varies from
//!   run to run, a wall time); a run of spaces matches any other (a table's column widths
//!   follow its widest cell), and terminal colours are ignored.
//! - any other block (` ```yaml `, ` ```text `, …) is shown only.
//!
//! Every page runs in a fresh temporary working folder holding links to the repository's
//! `config/`, `examples/` and `schema/` (so paths read as in the repository) and `.venv`, a link
//! to the test venv `.venv-test` that `scripts/setup --test` fills (the record how-to's
//! `pip install mcap` finds it installed and downloads nothing), with the folder of the `cosim`
//! under test first on `PATH`. A page that runs for longer than its time limit is stopped and
//! fails, as does one that leaves processes running.

use std::{
    fmt::Write as _,
    io::Read,
    os::unix::process::CommandExt,
    path::Path,
    process::{Command, Stdio},
    time::{Duration, Instant},
};

/// The repository.
pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Checks for root, and runs the pages one at a time within their test crate, apart from its
/// other tests that take [`crate::common::require_root`]: their runs pace windows to the wall
/// clock, and pages share vehicle names (network namespaces) and modem ports with each other and
/// with those tests (the default scenario's runs among them). A page that failed poisons
/// nothing: the guard is taken again.
pub fn root_and_alone() -> std::sync::MutexGuard<'static, ()> {
    assert_eq!(
        unsafe { libc::geteuid() },
        0,
        "the pages' runs create network namespaces and TUN devices: run the tests as root"
    );
    crate::common::require_root()
}

/// Fails unless each of `tools` is on the PATH, naming `setup`, which installs it.
#[allow(dead_code)] // tests/live/tutorials.rs only
pub fn require_tools(tools: &[&str], setup: &str) {
    for tool in tools {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool} >/dev/null")])
            .status()
            .is_ok_and(|s| s.success());
        assert!(found, "{tool} is missing: {setup}");
    }
}

/// What a fenced block is for.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// ` ```sh `: commands to run.
    Commands(Vec<String>),
    /// ` ```sh,norun `: commands shown, not run.
    NotRun(Vec<String>),
    /// ` ```…,file=PATH `: a file to write.
    File(String),
    /// ` ```text,output `: lines the commands block before it prints.
    Output,
    /// Anything else: shown only.
    Shown,
}

/// One fenced block of a page.
#[derive(Debug, Clone)]
pub struct Block {
    /// Line of its opening fence (1-based).
    pub line: usize,
    pub kind: Kind,
    pub text: String,
}

/// The fenced blocks of a Markdown page, with what each is for. Errors name the line.
pub fn blocks(markdown: &str) -> Result<Vec<Block>, String> {
    let mut out = Vec::new();
    let mut lines = markdown.lines().enumerate();
    while let Some((i, line)) = lines.next() {
        let indent = line.len() - line.trim_start().len();
        let trimmed = line.trim_start();
        let ticks = trimmed.chars().take_while(|&c| c == '`').count();
        if ticks < 3 {
            continue;
        }
        let fence = &trimmed[..ticks];
        let info = trimmed[ticks..].trim();
        let mut text = String::new();
        let mut closed = false;
        for (_, body) in lines.by_ref() {
            if body.trim() == fence {
                closed = true;
                break;
            }
            // The block's own indentation (inside a list item) is not part of its text.
            let cut = body.len() - body.trim_start().len();
            text.push_str(&body[cut.min(indent)..]);
            text.push('\n');
        }
        if !closed {
            return Err(format!("line {}: the code block is not closed", i + 1));
        }
        let kind = kind_of(info, &text).map_err(|e| format!("line {}: {e}", i + 1))?;
        out.push(Block {
            line: i + 1,
            kind,
            text,
        });
    }
    Ok(out)
}

fn kind_of(info: &str, text: &str) -> Result<Kind, String> {
    let mut parts = info.split(',').map(str::trim);
    let lang = parts.next().unwrap_or("");
    if ["bash", "shell", "console", "zsh", "shell-session"].contains(&lang) {
        return Err(format!(
            "`{lang}` block: commands are ```sh blocks (run by the tests) or ```sh,norun"
        ));
    }
    let mut norun = false;
    let mut output = false;
    let mut file = None;
    for attr in parts {
        match attr {
            "norun" => norun = true,
            "output" => output = true,
            _ => match attr.strip_prefix("file=") {
                Some(path) => file = Some(checked_path(path)?),
                None => return Err(format!("unknown code block attribute `{attr}` in `{info}`")),
            },
        }
    }
    Ok(match (lang, norun, output, file) {
        (_, false, false, Some(path)) => Kind::File(path),
        ("sh", false, false, None) => Kind::Commands(commands(text)?),
        ("sh", true, false, None) => Kind::NotRun(commands(text)?),
        ("text", false, true, None) => Kind::Output,
        (_, false, false, None) => Kind::Shown,
        _ => {
            return Err(format!(
                "code block attributes that do not go together: `{info}`"
            ))
        }
    })
}

/// A file block's path: relative, inside the working folder, plain characters.
fn checked_path(path: &str) -> Result<String, String> {
    let plain = path
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "._-/".contains(c));
    if path.is_empty() || !plain || path.starts_with('/') || path.split('/').any(|p| p == "..") {
        return Err(format!(
            "file={path}: a relative path of letters, digits, `._-/` inside the working folder"
        ));
    }
    Ok(path.to_string())
}

/// The commands of a ` ```sh ` block: lines, continuations joined, comments and blanks left out.
fn commands(text: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        if current.is_empty() {
            let t = line.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            if t.starts_with("$ ") {
                return Err(format!(
                    "`{t}`: commands are written without a `$ ` prompt, so that they paste as they are"
                ));
            }
            if t.contains("<<") {
                return Err(format!(
                    "`{t}`: no here-documents; a file the reader saves is a ```LANG,file=PATH block"
                ));
            }
        }
        current.push_str(line.trim_end());
        if current.ends_with('\\') {
            // The shell joins the lines, as at a prompt.
            current.push('\n');
        } else {
            out.push(std::mem::take(&mut current).trim().to_string());
        }
    }
    if !current.is_empty() {
        return Err(format!(
            "`{}`: the last line ends in `\\` with nothing after it",
            current.trim()
        ));
    }
    Ok(out)
}

/// What running a page did.
#[derive(Debug, Default)]
pub struct PageRun {
    /// Commands run (all of the page's ` ```sh ` commands: a failure ends the test).
    pub commands_run: usize,
    /// Commands in ` ```sh,norun ` blocks.
    pub commands_not_run: usize,
    /// ` ```text,output ` blocks checked.
    pub outputs_checked: usize,
    /// Lines of them matched.
    pub output_lines_matched: usize,
}

/// Runs the page `rel` (under `docs/src/`) with the `cosim` at `cosim` first on `PATH`, for at
/// most `limit`; panics with the page, block, command and output on the first failure.
pub fn run_page(rel: &str, cosim: &str, limit: Duration) -> PageRun {
    let page = repo().join("docs/src").join(rel);
    let markdown =
        std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
    run_markdown(rel, &markdown, cosim, limit)
}

/// Runs the Markdown `markdown`, named `rel` in messages, as [`run_page`] runs a page.
pub fn run_markdown(rel: &str, markdown: &str, cosim: &str, limit: Duration) -> PageRun {
    let blocks = blocks(markdown).unwrap_or_else(|e| panic!("{rel}: {e}"));

    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let harness = dir.path().join("harness");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&harness).unwrap();
    for d in ["config", "examples", "schema"] {
        std::os::unix::fs::symlink(repo().join(d), work.join(d)).unwrap();
    }
    if repo().join(".venv-test").exists() {
        std::os::unix::fs::symlink(repo().join(".venv-test"), work.join(".venv")).unwrap();
    }

    // The script: each command preceded by a marker in the output and its number in the step
    // file, so that a failure names its command and the output splits by command.
    let step_file = harness.join("step");
    let mut script = String::from("set -e\n");
    let mut steps: Vec<(usize, String)> = Vec::new(); // (block index, command)
    let mut run = PageRun::default();
    for (b, block) in blocks.iter().enumerate() {
        match &block.kind {
            Kind::Commands(cmds) => {
                for c in cmds {
                    let n = steps.len();
                    writeln!(
                        script,
                        "echo {n} > '{}'; printf '\\n\\036{n} %s\\036\\n' \"$EPOCHREALTIME\"",
                        step_file.display()
                    )
                    .unwrap();
                    script.push_str(c);
                    script.push('\n');
                    steps.push((b, c.clone()));
                }
            }
            Kind::NotRun(cmds) => run.commands_not_run += cmds.len(),
            Kind::File(path) => {
                let src = harness.join(format!("file{b}"));
                std::fs::write(&src, &block.text).unwrap();
                let dst = Path::new(path);
                if let Some(parent) = dst.parent().filter(|p| !p.as_os_str().is_empty()) {
                    writeln!(script, "mkdir -p '{}'", parent.display()).unwrap();
                }
                writeln!(script, "cp '{}' '{path}'", src.display()).unwrap();
            }
            Kind::Output | Kind::Shown => {}
        }
    }
    writeln!(
        script,
        "printf '\\n\\036{} %s\\036\\n' \"$EPOCHREALTIME\"",
        steps.len()
    )
    .unwrap();
    assert!(
        !steps.is_empty(),
        "{rel}: no ```sh block to run (a page whose commands cannot run here is listed as exempt, with the reason)"
    );

    let log_path = harness.join("output");
    let log = std::fs::File::create(&log_path).unwrap();
    let cosim_dir = Path::new(cosim).parent().unwrap();
    let path = format!(
        "{}:{}",
        cosim_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(&script)
        .current_dir(&work)
        .env("PATH", path)
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .process_group(0);
    let started = Instant::now();
    let mut child = cmd.spawn().expect("start bash");
    let pgid = child.id() as i32;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > limit {
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // Whatever the page left running (a job it did not wait for) is stopped.
    let left_running = stop_group(pgid);
    if status.is_none() {
        let _ = child.wait();
    }
    let mut raw = Vec::new();
    std::fs::File::open(&log_path)
        .unwrap()
        .read_to_end(&mut raw)
        .unwrap();
    let output = strip_ansi(&String::from_utf8_lossy(&raw));
    let (per_step, started_at) = split_steps(&output, steps.len());
    let step: Option<usize> = std::fs::read_to_string(&step_file)
        .ok()
        .and_then(|s| s.trim().parse().ok());
    let describe = |n: usize| {
        let (b, c) = &steps[n];
        format!(
            "{rel}, the block at line {}, command `{c}`; its output:\n{}",
            blocks[*b].line,
            tail(&per_step[n], 120)
        )
    };
    match status {
        None => panic!(
            "{rel}: still running after {limit:?}, stopped; the last command started: {}",
            step.map(describe).unwrap_or_else(|| "none".into())
        ),
        Some(s) if !s.success() => panic!(
            "{rel}: a command failed ({s}): {}",
            step.map(describe)
                .unwrap_or_else(|| format!("before the first command; output:\n{output}"))
        ),
        Some(_) => {}
    }
    assert_eq!(
        step,
        Some(steps.len() - 1),
        "{rel}: the script ended before its last command; output:\n{}",
        tail(&output, 120)
    );
    assert!(
        !left_running,
        "{rel}: the page left processes running (a job started with `&` and never waited for)"
    );
    run.commands_run = steps.len();
    eprintln!(
        "{rel}: {} commands run in {:.1} s, {} not run",
        run.commands_run,
        started.elapsed().as_secs_f64(),
        run.commands_not_run
    );
    for (n, (_, c)) in steps.iter().enumerate() {
        let next = started_at.get(n + 1).copied().flatten();
        if let (Some(a), Some(b)) = (started_at[n], next) {
            eprintln!("  {:6.1} s  {}", b - a, c.lines().next().unwrap_or(""));
        }
    }

    // The output the page shows, against what the block before it printed.
    let mut last_commands: Option<usize> = None; // block index
    for (b, block) in blocks.iter().enumerate() {
        match block.kind {
            Kind::Commands(_) => last_commands = Some(b),
            Kind::Output => {
                let Some(cb) = last_commands else {
                    panic!(
                        "{rel}: the output block at line {} follows no ```sh block",
                        block.line
                    )
                };
                let printed: String = steps
                    .iter()
                    .enumerate()
                    .filter(|(_, (sb, _))| *sb == cb)
                    .map(|(n, _)| per_step[n].as_str())
                    .collect();
                let matched = expect_lines(&block.text, &printed).unwrap_or_else(|line| {
                    panic!(
                        "{rel}: the output block at line {} shows\n  {line}\nwhich the block at line {} did not print (in this order); it printed:\n{}",
                        block.line,
                        blocks[cb].line,
                        tail(&printed, 150)
                    )
                });
                assert!(
                    matched > 0,
                    "{rel}: the output block at line {} is empty",
                    block.line
                );
                run.outputs_checked += 1;
                run.output_lines_matched += matched;
            }
            _ => {}
        }
    }
    run
}

/// Sends SIGTERM, then SIGKILL, to what is left of process group `pgid`; whether anything was.
fn stop_group(pgid: i32) -> bool {
    if !group_alive(pgid) {
        return false;
    }
    unsafe { libc::kill(-pgid, libc::SIGTERM) };
    let t = Instant::now();
    while group_alive(pgid) && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    if group_alive(pgid) {
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
    }
    true
}

/// Whether a process of group `pgid` is running (zombies, waiting to be reaped, are not).
fn group_alive(pgid: i32) -> bool {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return unsafe { libc::kill(-pgid, 0) } == 0;
    };
    procs.filter_map(|e| e.ok()).any(|e| {
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        // pid (comm) state ppid pgrp ...: the fields after the command's closing parenthesis.
        let mut rest = stat
            .rsplit_once(") ")
            .map(|(_, r)| r)
            .unwrap_or("")
            .split(' ');
        let state = rest.next();
        let pgrp = rest.nth(1).and_then(|g| g.parse::<i32>().ok());
        pgrp == Some(pgid) && state.is_some_and(|s| s != "Z" && s != "X")
    })
}

/// The output split at the markers: what each command printed (and its background jobs until
/// the next command started), and when each started (s, the shell's clock; one more entry:
/// when the last one ended).
fn split_steps(output: &str, n: usize) -> (Vec<String>, Vec<Option<f64>>) {
    let mut per = vec![String::new(); n];
    let mut started = vec![None; n + 1];
    let mut current: Option<usize> = None;
    for line in output.split_inclusive('\n') {
        let marker = line
            .trim_end()
            .strip_prefix('\u{1e}')
            .and_then(|s| s.strip_suffix('\u{1e}'))
            .and_then(|s| s.split_once(' '))
            .and_then(|(k, t)| Some((k.parse::<usize>().ok()?, t.parse::<f64>().ok())));
        match marker {
            Some((k, t)) if k <= n => {
                current = (k < n).then_some(k);
                started[k] = t;
            }
            _ => {
                if let Some(k) = current {
                    per[k].push_str(line);
                }
            }
        }
    }
    (per, started)
}

/// Whether every non-blank line of `expected` appears in `printed`, in order, `…` matching any
/// text and any run of spaces matching any other: Ok(lines matched), or the first line that
/// does not.
pub fn expect_lines(expected: &str, printed: &str) -> Result<usize, String> {
    let printed: Vec<String> = printed.lines().map(spaces).collect();
    let mut at = 0;
    let mut matched = 0;
    for want in expected.lines().map(spaces).filter(|l| !l.is_empty()) {
        match printed[at..]
            .iter()
            .position(|got| line_matches(&want, got))
        {
            Some(p) => {
                at += p + 1;
                matched += 1;
            }
            None => return Err(want.to_string()),
        }
    }
    Ok(matched)
}

/// `line` with each run of spaces as one space, and none at either end (a table's column widths
/// follow its widest cell).
fn spaces(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `want`, in which `…` stands for any text, against the whole of `got` (both with their spaces
/// as [`spaces`] leaves them). The spaces around a `…` go with it: `a … b` matches `a b`.
fn line_matches(want: &str, got: &str) -> bool {
    let n = want.split('…').count();
    let pieces: Vec<&str> = want
        .split('…')
        .enumerate()
        .map(|(i, p)| {
            let p = if i > 0 { p.trim_start() } else { p };
            if i + 1 < n {
                p.trim_end()
            } else {
                p
            }
        })
        .collect();
    let (first, rest) = pieces.split_first().unwrap();
    let Some(mut tail) = got.strip_prefix(first) else {
        return false;
    };
    let Some((last, middle)) = rest.split_last() else {
        return tail.is_empty();
    };
    for piece in middle {
        match tail.find(piece) {
            Some(i) => tail = &tail[i + piece.len()..],
            None => return false,
        }
    }
    tail.ends_with(last)
}

/// `s` without terminal escape sequences (colours).
fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            for d in chars.by_ref() {
                if ('\u{40}'..='\u{7e}').contains(&d) {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The last `n` lines of `s`.
fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    let from = lines.len().saturating_sub(n);
    let mut out = String::new();
    if from > 0 {
        writeln!(out, "[… {from} lines before]").unwrap();
    }
    for l in &lines[from..] {
        writeln!(out, "{l}").unwrap();
    }
    out
}

/// The pages under `docs/src/<dir>/` (as `<dir>/<name>.md`), sorted.
#[allow(dead_code)] // tests/live/tutorials.rs only
pub fn pages_in(dir: &str) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(repo().join("docs/src").join(dir))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".md"))
                .map(|n| format!("{dir}/{n}"))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

//! Every command of the book's tutorials (`docs/src/tutorials/`) and of the record how-to
//! (`docs/src/howto/record-python.md`), run as a reader runs them, and the output the pages show
//! checked against what the commands print. How a page marks its commands, the files it has the
//! reader save and the output it shows: `tests/book_commands/mod.rs`.
//!
//! Each page runs as root (its runs have live vehicles in network namespaces), one page at a
//! time (the pages' runs pace windows to the wall clock and share vehicle names and ports), in
//! a fresh working folder. The ROS 2 tutorial and the pages that run the default scenario (its
//! vessels on sim time) need a build with the `ros` feature and run in `tests/ros/tutorials_ros.rs`. Each test knows how many commands its page runs and how many it
//! only shows, so that a page whose blocks stop being run fails here.

use crate::book_commands;

use book_commands::{blocks, expect_lines, pages_in, run_markdown, run_page, Kind, PageRun};
use std::time::Duration;

const COSIM: &str = env!("CARGO_BIN_EXE_cosim");

/// The pages `tests/ros/tutorials_ros.rs` runs (with a `ros` build): the ROS 2 tutorial, and those
/// that run the default scenario, whose vessels are on sim time.
const ROS_PAGES: &[&str] = &[
    "tutorials/ros2-node.md",
    "tutorials/your-stack.md",
    "tutorials/first-run.md",
    "tutorials/watching.md",
    "tutorials/ns3.md",
    "howto/record-python.md",
];

/// Pages with no command that can run here, and why. None: every page runs.
const EXEMPT: &[(&str, &str)] = &[];

/// The pages this file runs.
const PAGES: &[&str] = &[
    "tutorials/modems.md",
    "tutorials/gazebo.md",
    "tutorials/comparing-runs.md",
    "tutorials/ocean-acoustics.md",
    "tutorials/campaign.md",
    "tutorials/logged-mission.md",
    "tutorials/survey-from-gis.md",
];

/// Runs `page` as root, alone, with `tools` required on the PATH.
fn page(rel: &str, tools: &[&str]) -> PageRun {
    let _one = book_commands::root_and_alone();
    book_commands::require_tools(tools, "scripts/setup --test");
    run_page(rel, COSIM, Duration::from_secs(150))
}

/// The page ran `run` commands, showed `not_run` without running them, and had at least
/// `outputs` of its shown outputs checked.
fn assert_counts(rel: &str, r: &PageRun, run: usize, not_run: usize, outputs: usize) {
    assert_eq!(
        (r.commands_run, r.commands_not_run),
        (run, not_run),
        "{rel}: commands run and shown only"
    );
    assert!(
        r.outputs_checked >= outputs,
        "{rel}: {} outputs checked, expected {outputs}",
        r.outputs_checked
    );
}

#[test]
fn modems() {
    let rel = "tutorials/modems.md";
    let r = page(rel, &["socat", "python3"]);
    assert_counts(rel, &r, 9, 1, 5);
}

#[test]
fn gazebo() {
    let rel = "tutorials/gazebo.md";
    let r = page(rel, &["ign"]);
    assert_counts(rel, &r, 5, 6, 5);
}

#[test]
fn comparing_runs() {
    let rel = "tutorials/comparing-runs.md";
    let r = page(rel, &["iperf3", "ping"]);
    assert_counts(rel, &r, 5, 0, 3);
}

#[test]
fn ocean_acoustics() {
    let rel = "tutorials/ocean-acoustics.md";
    let r = page(rel, &[]);
    assert_counts(rel, &r, 4, 0, 4);
}

#[test]
fn campaign() {
    let rel = "tutorials/campaign.md";
    let _one = book_commands::root_and_alone();
    // 30 runs of a debug build, two at a time, and a stop on the way.
    let r = run_page(rel, COSIM, Duration::from_secs(600));
    assert_counts(rel, &r, 6, 0, 5);
}

#[test]
fn logged_mission() {
    let rel = "tutorials/logged-mission.md";
    let _one = book_commands::root_and_alone();
    // 66 s of sim time unpaced, a debug build.
    let r = run_page(rel, COSIM, Duration::from_secs(300));
    assert_counts(rel, &r, 2, 0, 2);
}

#[test]
fn survey_from_gis() {
    let rel = "tutorials/survey-from-gis.md";
    let _one = book_commands::root_and_alone();
    // 865 s of sim time unpaced with a pair beam-traced every 5 s, a debug build.
    let r = run_page(rel, COSIM, Duration::from_secs(600));
    assert_counts(rel, &r, 5, 0, 2);
}

/// Every tutorial page, and the record how-to, is run by a test here or in
/// `tests/ros/tutorials_ros.rs`, or is exempt with a reason; and each holds commands of its own.
#[test]
fn every_tutorial_page_is_run() {
    let mut pages = pages_in("tutorials");
    pages.push("howto/record-python.md".into());
    assert!(pages.len() >= PAGES.len() + ROS_PAGES.len(), "{pages:?}");
    for p in &pages {
        let known = PAGES.contains(&p.as_str())
            || ROS_PAGES.contains(&p.as_str())
            || EXEMPT.iter().any(|(e, _)| e == p);
        assert!(
            known,
            "docs/src/{p} is run by no test: add it to PAGES (or ROS_PAGES) in tests/live/tutorials.rs"
        );
        let text = std::fs::read_to_string(book_commands::repo().join("docs/src").join(p))
            .unwrap_or_else(|e| panic!("docs/src/{p}: {e}"));
        let blocks = blocks(&text).unwrap_or_else(|e| panic!("docs/src/{p}: {e}"));
        let runnable = blocks
            .iter()
            .filter(|b| matches!(&b.kind, Kind::Commands(c) if !c.is_empty()))
            .count();
        let exempt = EXEMPT.iter().find(|(e, _)| e == p);
        match exempt {
            Some((_, why)) => assert!(!why.is_empty(), "{p}: exempt without a reason"),
            None => assert!(runnable > 0, "docs/src/{p} has no ```sh block to run"),
        }
    }
}

/// The conventions the pages are read with.
#[test]
fn code_blocks_are_read_by_their_info_string() {
    let page = "intro\n\n```sh\ncosim check a.yaml   # comment\n# a comment line\n\ncosim run a.yaml \\\n  --duration-s 2\n```\n\n\
                ```text,output\nok … 2 windows\n```\n\n```sh,norun\ngz sim world.sdf\n```\n\n\
                ```yaml,file=dir/a.yaml\nname: a\n```\n\n```text\nshown\n```\n\n  - item\n\n    ```sh\n    ls\n    ```\n";
    let b = blocks(page).unwrap();
    let kinds: Vec<&Kind> = b.iter().map(|b| &b.kind).collect();
    assert_eq!(
        kinds,
        [
            &Kind::Commands(vec![
                "cosim check a.yaml   # comment".into(),
                "cosim run a.yaml \\\n  --duration-s 2".into()
            ]),
            &Kind::Output,
            &Kind::NotRun(vec!["gz sim world.sdf".into()]),
            &Kind::File("dir/a.yaml".into()),
            &Kind::Shown,
            &Kind::Commands(vec!["ls".into()]),
        ]
    );
    assert_eq!(b[0].line, 3);
    assert_eq!(b[3].text, "name: a\n");
    for bad in [
        "```sh,norn\nls\n```\n",
        "```bash\nls\n```\n",
        "```sh\n$ ls\n```\n",
        "```sh\ncat > a <<EOF\n```\n",
        "```yaml,file=../a.yaml\nx\n```\n",
        "```yaml,file=/tmp/a\nx\n```\n",
        "```sh,output\nls\n```\n",
        "```sh\nls\n",
        "```sh\nls \\\n```\n",
    ] {
        assert!(blocks(bad).is_err(), "{bad:?} was taken");
    }
}

/// Shown output against printed output: `…` is any text, spaces are spaces, order counts.
#[test]
fn shown_output_matches_printed_lines_in_order() {
    let printed = "\u{1b}[32mdefault: 10000 windows of 1 ms = 10.00 s simulated in 10.31 s wall\n\
                   │ usv1 – usv2 ┆  100.0 % ┆ 0.0 % │\nreport: out/default/report/report.html\n";
    let ok = "default: 10000 windows of 1 ms = … s simulated in … s wall\n│ usv1 – usv2 ┆ 100.0 % ┆   0.0 % │\n\nreport: …/report.html";
    // (the harness strips colours before matching; here they are part of the line)
    assert!(expect_lines(ok, printed).is_err());
    let printed = printed.replace("\u{1b}[32m", "");
    assert_eq!(expect_lines(ok, &printed), Ok(3));
    for (bad, why) in [
        ("default: 6000 windows of … ms", "another count"),
        (
            "report: out/default/report/report.html\ndefault: …",
            "out of order",
        ),
        ("report: out/default/report", "a prefix of a line"),
        ("… 10.00 s simulated", "a suffix of a line"),
    ] {
        assert!(expect_lines(bad, &printed).is_err(), "{why}: {bad:?}");
    }
}

/// The runner against small pages: what it runs and writes, and each way a page fails.
#[test]
fn pages_run_in_order_and_fail_with_their_command() {
    let fence = "```";
    let page = format!(
        "{fence}sh\necho one\nX=2\n{fence}\n\
         {fence}text,output\none\n{fence}\n\
         {fence}text,file=sub/a.txt\nsaved\n{fence}\n\
         {fence}sh,norun\ngz sim\n{fence}\n\
         {fence}sh\necho \"$X\" $(cat sub/a.txt) && ls config/default.yaml\ncommand -v cosim\n{fence}\n\
         {fence}text,output\n2 saved\nconfig/default.yaml\n…/cosim\n{fence}\n"
    );
    let r = run_markdown("ok.md", &page, COSIM, Duration::from_secs(20));
    assert_eq!(
        (
            r.commands_run,
            r.commands_not_run,
            r.outputs_checked,
            r.output_lines_matched
        ),
        (4, 1, 2, 4),
        "{r:?}"
    );

    let fails = |name: &str, md: String, limit: u64| -> String {
        let err =
            std::panic::catch_unwind(|| run_markdown(name, &md, COSIM, Duration::from_secs(limit)))
                .expect_err(name);
        err.downcast_ref::<String>().cloned().unwrap_or_default()
    };
    let msg = fails(
        "wrong-output.md",
        format!("{fence}sh\necho one\n{fence}\n{fence}text,output\ntwo\n{fence}\n"),
        20,
    );
    assert!(
        msg.contains("shows\n  two\nwhich the block at line 1 did not print"),
        "{msg}"
    );
    let msg = fails(
        "failing.md",
        format!("intro\n\n{fence}sh\necho before\nfalse\necho after\n{fence}\n"),
        20,
    );
    assert!(
        msg.contains("failing.md, the block at line 3, command `false`") && !msg.contains("after"),
        "{msg}"
    );
    let msg = fails(
        "left-running.md",
        format!("{fence}sh\nsleep 30 &\n{fence}\n"),
        20,
    );
    assert!(msg.contains("left processes running"), "{msg}");
    let msg = fails("slow.md", format!("{fence}sh\nsleep 30\n{fence}\n"), 1);
    assert!(
        msg.contains("still running after 1s") && msg.contains("`sleep 30`"),
        "{msg}"
    );
    let msg = fails("nothing.md", "no commands\n".into(), 1);
    assert!(msg.contains("nothing.md: no ```sh block to run"), "{msg}");
}

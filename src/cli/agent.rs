//! `cosim agent`: the capture agent of this machine's vehicles ([`crate::io::traffic::agents::agent`]).

use super::args::AgentArgs;
use crate::io::traffic::agents::agent;
use std::path::Path;

/// Runs the agent; exit code 0 when the run ended normally, 130 when a signal stopped it.
pub async fn run(a: AgentArgs) -> anyhow::Result<i32> {
    let stop = super::shutdown_signal();
    let loaded = super::load(&a.scenario)?;
    let secret = crate::lockstep::secure::read_secret(&a.key)?;
    let out = a.out.unwrap_or_else(|| {
        Path::new("out").join(format!("{}-agent-{}", loaded.scenario.name, a.name))
    });
    let signalled = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = signalled.clone();
    let stop = async move {
        stop.await;
        flag.store(true, std::sync::atomic::Ordering::SeqCst);
    };
    let result = agent::run(
        agent::AgentConfig {
            loaded: &loaded,
            name: &a.name,
            coordinator: &a.coordinator,
            secret,
            out,
            synchronized_clock: a.synchronized_clock,
        },
        stop,
    )
    .await;
    match result {
        Err(e) if signalled.load(std::sync::atomic::Ordering::SeqCst) => {
            eprintln!("error: {e:#}");
            Ok(super::EXIT_INTERRUPTED)
        }
        r => r.map(|()| 0),
    }
}

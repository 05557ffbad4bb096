//! Children that must not outlive this process.

use std::os::unix::process::CommandExt;

/// Makes the child `cmd` starts get `signal` when this process dies (`PR_SET_PDEATHSIG`); if
/// this process is already gone when the child starts, the spawn fails with `gone` (e.g. "the
/// coordinator is gone").
pub fn die_with_parent(cmd: &mut std::process::Command, signal: i32, gone: &'static str) {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, signal) != 0 || libc::getppid() != parent {
                return Err(std::io::Error::other(gone));
            }
            Ok(())
        });
    }
}

//! What the test binaries that need root share.

/// Checks for root, and runs the tests that use network namespaces one at a time within their
/// binary: each paces windows to the wall clock (two at once on a 2-core machine would measure
/// each other), and the same vehicle names cannot run twice at once. A failed test poisons
/// nothing: the guard is taken again.
#[must_use]
pub fn require_root() -> std::sync::MutexGuard<'static, ()> {
    assert_eq!(unsafe { libc::geteuid() }, 0, "this test creates network namespaces and TUN devices: run it as root");
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

//! `cosim viewer-cert`: a self-signed certificate and its key for the live viewer off loopback
//! (`viewer.tls`), written where the scenario can name them.

use crate::io::servers::tls;
use anyhow::Context;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Writes `dir/viewer.crt` (mode 0644) and `dir/viewer.key` (0600) for `hosts` (default: this
/// machine's host name) and loopback, refusing to overwrite either; prints both paths, the
/// fingerprint and the scenario lines that use them.
pub fn run(dir: &Path, mut hosts: Vec<String>) -> anyhow::Result<i32> {
    if hosts.is_empty() {
        hosts.push(host_name()?);
    }
    for local in ["localhost", "127.0.0.1", "::1"] {
        if !hosts.iter().any(|h| h == local) {
            hosts.push(local.to_owned());
        }
    }
    let (cert, key, fingerprint) = tls::self_signed(&hosts)?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let (cert_file, key_file) = (dir.join("viewer.crt"), dir.join("viewer.key"));
    for f in [&cert_file, &key_file] {
        anyhow::ensure!(
            !f.exists(),
            "{} exists: give another folder, or remove it first",
            f.display()
        );
    }
    write_new(&key_file, &key, 0o600)?;
    write_new(&cert_file, &cert, 0o644)?;
    println!("{}\n{}", cert_file.display(), key_file.display());
    println!("hosts: {}", hosts.join(", "));
    println!("SHA-256 fingerprint: {fingerprint}");
    println!(
        "scenario: viewer: {{live: true, address: 0.0.0.0:8765, tls: {{cert_file: {}, key_file: {}}}}}",
        cert_file.display(),
        key_file.display()
    );
    Ok(0)
}

fn write_new(path: &Path, text: &str, mode: u32) -> anyhow::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    f.write_all(text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))
}

/// This machine's host name.
fn host_name() -> anyhow::Result<String> {
    let mut buf = [0u8; 256];
    // SAFETY: a buffer of the length given; gethostname NUL-terminates within it on success.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    anyhow::ensure!(
        rc == 0,
        "cannot read the host name: {} (give --host)",
        std::io::Error::last_os_error()
    );
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Ok(String::from_utf8_lossy(&buf[..end]).into_owned())
}

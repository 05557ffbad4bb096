//! TLS 1.3 for the live viewer off loopback (`wss://`, what a browser speaks; the secure channel
//! between hosts is Noise, which no browser does): the server's side from the scenario's PEM
//! files, and the self-signed certificate `cosim viewer-cert` makes. rustls and rcgen on the
//! ring provider.

use anyhow::{anyhow, Context};
use rustls::pki_types::{pem::PemObject, CertificateDer, PrivateKeyDer};
use std::path::Path;
use std::sync::Arc;

/// The largest PEM file read (a chain of a few certificates, or a key).
const MAX_PEM_BYTES: u64 = 1 << 20;

/// How long a client has for its TLS handshake.
pub const HANDSHAKE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// A TLS 1.3 acceptor presenting `cert_file`'s chain with `key_file`'s key. An error names the
/// file and what is wrong with it; a key file others than its owner may read is refused.
pub fn acceptor(cert_file: &Path, key_file: &Path) -> anyhow::Result<tokio_rustls::TlsAcceptor> {
    let read = |p: &Path| {
        crate::config::files::read_bounded(p, MAX_PEM_BYTES)
            .map_err(|e| anyhow!("viewer.tls: {}: {e}", p.display()))
    };
    let cert_pem = read(cert_file)?;
    crate::config::files::owner_only(key_file)
        .map_err(|e| anyhow!("viewer.tls.key_file {}: {e}", key_file.display()))?;
    let key_pem = read(key_file)?;
    let config = server_config(&cert_pem, &key_pem).map_err(|e| match e {
        PemError::Certificates(why) => {
            anyhow!("viewer.tls.cert_file {}: {why}", cert_file.display())
        }
        PemError::Key(why) => anyhow!("viewer.tls.key_file {}: {why}", key_file.display()),
        PemError::Pair(why) => anyhow!(
            "viewer.tls: {} and {}: {why}",
            cert_file.display(),
            key_file.display()
        ),
    })?;
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}

/// What is wrong with a certificate chain and key given as PEM.
#[derive(Debug)]
pub enum PemError {
    Certificates(String),
    Key(String),
    /// Each is readable, but they do not go together (or the key's kind is not served).
    Pair(String),
}

/// The TLS 1.3 server configuration (ring, no client certificates) presenting `cert_pem`'s
/// chain (PEM `CERTIFICATE` blocks, leaf first) with `key_pem`'s key (PKCS#8, PKCS#1 or SEC1).
pub fn server_config(cert_pem: &[u8], key_pem: &[u8]) -> Result<rustls::ServerConfig, PemError> {
    let certs = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| PemError::Certificates(e.to_string()))?;
    if certs.is_empty() {
        return Err(PemError::Certificates(
            "no certificate in it (PEM `BEGIN CERTIFICATE` blocks, leaf first)".into(),
        ));
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| {
        PemError::Key(format!(
            "no private key in it (PEM PKCS#8, PKCS#1 or SEC1): {e}"
        ))
    })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| PemError::Pair(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| PemError::Pair(e.to_string()))
}

/// A self-signed certificate for `hosts` (names or IP addresses, each a subject alternative
/// name), valid from yesterday for 365 days, with its fresh ECDSA P-256 key: `(certificate
/// PEM, key PEM, SHA-256 fingerprint of the certificate as colon-separated hex)`.
pub fn self_signed(hosts: &[String]) -> anyhow::Result<(String, String, String)> {
    use sha2::Digest;
    let key = rcgen::KeyPair::generate().context("a key pair")?;
    let mut params = rcgen::CertificateParams::new(hosts.to_vec())
        .map_err(|e| anyhow!("--host {}: {e}", hosts.join(", ")))?;
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "netsim_cosim live viewer");
    let now = time::OffsetDateTime::now_utc();
    params.not_before = now - time::Duration::days(1);
    params.not_after = now + time::Duration::days(365);
    let cert = params.self_signed(&key).context("self-signing")?;
    let fingerprint = sha2::Sha256::digest(cert.der())
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":");
    Ok((cert.pem(), key.serialize_pem(), fingerprint))
}

//! What a run serves: the NETSIM manager ([`netsim_manager`]) and the modem bridges
//! ([`modem_bridge`]) of the acoustic front, and the live viewer over the Foxglove WebSocket
//! protocol ([`viewer`], over TLS off loopback: [`tls`]). Each binds loopback unless the
//! scenario says otherwise.
pub mod modem_bridge;
pub mod netsim_manager;
pub mod tls;
pub mod viewer;

/// The error of a server that cannot listen on `addr`, `what` first (file, key): for an address
/// in use, how to find who holds it.
pub(crate) fn cannot_listen(
    what: &str,
    addr: std::net::SocketAddr,
    e: std::io::Error,
) -> anyhow::Error {
    let hint = if e.kind() == std::io::ErrorKind::AddrInUse {
        format!(
            " (another process listens there, often another run: `ss -ltnp 'sport = :{}'` names it; \
             see the book's Troubleshooting page)",
            addr.port()
        )
    } else {
        String::new()
    };
    anyhow::anyhow!("{what}: cannot listen on {addr}: {e}{hint}")
}

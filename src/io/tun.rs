//! The TUN interface inside a vehicle's namespace: created there (on a thread that entered the
//! namespace), so every vehicle's interface can have the same name, and configured with `ip`:
//! the vehicle's IPv4/IPv6 addresses (IPv6 without duplicate address detection, so they are
//! usable at once), `multicast on`, up, default routes and the multicast ranges 224.0.0.0/4
//! and ff00::/8 through it. The coordinator holds the file descriptor; the interface goes
//! away with it.

use super::netns::{ip, run_in};
use anyhow::Context;
use ipnet::IpNet;
use tun_rs::{AsyncDevice, DeviceBuilder};

/// Name of the interface in every vehicle's namespace.
pub const IFNAME: &str = "cosim0";
/// Length of the virtio-net header in front of each packet with offloads.
pub const VNET_HDR_LEN: usize = tun_rs::VIRTIO_NET_HDR_LEN;

/// Creates and configures the TUN interface of namespace `ns`; needs a tokio runtime.
pub fn open(ns: &str, addresses: &[IpNet], offload: bool) -> anyhow::Result<AsyncDevice> {
    let dev = run_in(ns, move || {
        DeviceBuilder::new()
            .name(IFNAME)
            .offload(offload)
            .build_sync()
    })
    .with_context(|| format!("cannot create TUN {IFNAME} in namespace {ns}"))?;
    for net in addresses {
        let cidr = net.to_string();
        let mut args = vec!["-n", ns, "addr", "add", &cidr, "dev", IFNAME];
        if net.addr().is_ipv6() {
            args.push("nodad");
        }
        ip(&args)?;
    }
    ip(&["-n", ns, "link", "set", IFNAME, "multicast", "on", "up"])?;
    ip(&["-n", ns, "route", "add", "224.0.0.0/4", "dev", IFNAME])?;
    ip(&[
        "-n",
        ns,
        "route",
        "add",
        "255.255.255.255/32",
        "dev",
        IFNAME,
    ])?;
    let _ = ip(&["-n", ns, "route", "add", "default", "dev", IFNAME]);
    // ff00::/8 sits in the local table once the interface is up; a main-table route makes
    // sure it is chosen without a source-specific configuration.
    let _ = ip(&["-n", ns, "-6", "route", "add", "ff00::/8", "dev", IFNAME]);
    let _ = ip(&["-n", ns, "-6", "route", "add", "default", "dev", IFNAME]);
    Ok(AsyncDevice::new(dev)?)
}

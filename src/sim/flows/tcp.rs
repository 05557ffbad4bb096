//! A vehicle's TCP/IP stack in sim time: smoltcp's interface and sockets over a device that is
//! two queues (the packets the network delivered to the vehicle, the packets the stack sent),
//! polled at the sim times the flows' loop gives it. smoltcp is sans-IO with time passed in,
//! so a transfer is a function of the packets' fates and times alone.

use crate::clock::SimNanos;
use smoltcp::iface::{Config, Interface, SocketHandle, SocketSet};
use smoltcp::phy::{Checksum, Device, DeviceCapabilities, Medium};
use smoltcp::socket::tcp;
use smoltcp::time::Instant;
use smoltcp::wire::{HardwareAddress, IpAddress, IpCidr};
use std::collections::VecDeque;
use std::net::Ipv4Addr;

/// The IP MTU of every vehicle's stack (segments of 1460 bytes).
pub const MTU: usize = 1500;
/// Packets in and out of the stack.
#[derive(Default)]
struct Queues {
    rx: VecDeque<Vec<u8>>,
    tx: Vec<Vec<u8>>,
}

struct Rx(Vec<u8>);
struct Tx<'a>(&'a mut Vec<Vec<u8>>);

impl smoltcp::phy::RxToken for Rx {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        f(&self.0)
    }
}

impl smoltcp::phy::TxToken for Tx<'_> {
    fn consume<R, F: FnOnce(&mut [u8]) -> R>(self, len: usize, f: F) -> R {
        let mut buf = vec![0u8; len];
        let r = f(&mut buf);
        self.0.push(buf);
        r
    }
}

impl Device for Queues {
    type RxToken<'a> = Rx;
    type TxToken<'a> = Tx<'a>;

    fn receive(&mut self, _: Instant) -> Option<(Rx, Tx<'_>)> {
        let p = self.rx.pop_front()?;
        Some((Rx(p), Tx(&mut self.tx)))
    }

    fn transmit(&mut self, _: Instant) -> Option<Tx<'_>> {
        Some(Tx(&mut self.tx))
    }

    fn capabilities(&self) -> DeviceCapabilities {
        let mut caps = DeviceCapabilities::default();
        caps.medium = Medium::Ip;
        caps.max_transmission_unit = MTU;
        caps.checksum.ipv4 = Checksum::Both;
        caps
    }
}

fn instant(t_ns: SimNanos) -> Instant {
    Instant::from_micros(i64::try_from(t_ns / 1000).unwrap_or(i64::MAX))
}

/// One vehicle's stack: its address, its sockets (one per TCP flow it sends or receives).
pub struct Stack {
    iface: Interface,
    queues: Queues,
    sockets: SocketSet<'static>,
    /// When it next needs a poll (a timer), if ever.
    pub wake_ns: Option<SimNanos>,
}

impl Stack {
    /// A stack on `addr` whose sequence numbers and ports are drawn from `seed`.
    pub fn new(addr: Ipv4Addr, seed: u64) -> Stack {
        let mut queues = Queues::default();
        let mut config = Config::new(HardwareAddress::Ip);
        config.random_seed = seed;
        let mut iface = Interface::new(config, &mut queues, instant(0));
        let a = addr;
        iface.update_ip_addrs(|ips| {
            let _ = ips.push(IpCidr::new(IpAddress::Ipv4(a), 32));
        });
        // Every other vehicle is one hop away: a route to all through the vehicle itself (the
        // IP medium has no next hop to resolve).
        let _ = iface.routes_mut().add_default_ipv4_route(a);
        Stack {
            iface,
            queues,
            sockets: SocketSet::new(Vec::new()),
            wake_ns: None,
        }
    }

    /// A socket with buffers of `buffer` bytes each.
    fn socket(buffer: usize) -> tcp::Socket<'static> {
        let mut s = tcp::Socket::new(
            tcp::SocketBuffer::new(vec![0; buffer]),
            tcp::SocketBuffer::new(vec![0; buffer]),
        );
        s.set_congestion_control(tcp::CongestionControl::Cubic);
        s.set_nagle_enabled(false);
        s
    }

    /// A socket listening on `port`, with buffers of `buffer` bytes.
    pub fn listen(&mut self, port: u16, buffer: usize) -> SocketHandle {
        let mut s = Self::socket(buffer);
        let _ = s.listen(port);
        self.sockets.add(s)
    }

    /// A socket connecting from `local_port` to `to:port` (at the next poll), with buffers of
    /// `buffer` bytes.
    pub fn connect(
        &mut self,
        to: Ipv4Addr,
        port: u16,
        local_port: u16,
        buffer: usize,
    ) -> SocketHandle {
        let mut s = Self::socket(buffer);
        let _ = s.connect(
            self.iface.context(),
            (IpAddress::Ipv4(to), port),
            local_port,
        );
        self.sockets.add(s)
    }

    pub fn socket_mut(&mut self, h: SocketHandle) -> &mut tcp::Socket<'static> {
        self.sockets.get_mut::<tcp::Socket>(h)
    }

    /// A packet the network delivered, for the next poll.
    pub fn receive(&mut self, ip: Vec<u8>) {
        self.queues.rx.push_back(ip);
    }

    /// Runs the stack at `t_ns`: what it received, its timers, what its sockets have to send;
    /// the packets it sent go to the back of `out`. Sets [`Self::wake_ns`].
    pub fn poll(&mut self, t_ns: SimNanos, out: &mut Vec<Vec<u8>>) {
        let now = instant(t_ns);
        let _ = self.iface.poll(now, &mut self.queues, &mut self.sockets);
        out.append(&mut self.queues.tx);
        // Never at or before now: smoltcp's clock has microseconds, the loop's nanoseconds.
        self.wake_ns = (self.iface.poll_at(now, &self.sockets))
            .map(|at| (at.total_micros().max(0) as u64 * 1000).max(t_ns / 1000 * 1000 + 1000));
    }
}

//! Which vehicle an IP destination means: the address book built from `vehicles[].addresses`.

use crate::config::Vehicle;
use ipnet::IpNet;
use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, Ipv4Addr};

/// Where a captured packet goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// Another vehicle's address.
    Unicast(usize),
    /// Multicast (224.0.0.0/4, ff00::/8), 255.255.255.255 or a vehicle subnet's broadcast
    /// address: every vehicle but the sender.
    AllOthers,
}

#[derive(Debug, Clone, Default)]
pub struct AddressBook {
    unicast: HashMap<IpAddr, usize>,
    broadcasts: HashSet<Ipv4Addr>,
    first_v4: Vec<u32>,
    by_first_v4: HashMap<u32, usize>,
    pub names: Vec<String>,
    /// Per vehicle: its addresses as configured.
    pub addresses: Vec<Vec<IpNet>>,
}

impl AddressBook {
    pub fn new(vehicles: &[Vehicle]) -> AddressBook {
        let mut book = AddressBook::default();
        for (i, v) in vehicles.iter().enumerate() {
            let addrs = v.addresses.clone();
            let mut first = 0;
            for net in &addrs {
                book.unicast.insert(net.addr(), i);
                if let IpNet::V4(v4) = net {
                    if first == 0 {
                        first = u32::from(v4.addr());
                    }
                    if v4.prefix_len() < 31 {
                        book.broadcasts.insert(v4.broadcast());
                    }
                }
            }
            book.first_v4.push(first);
            if first != 0 {
                book.by_first_v4.insert(first, i);
            }
            book.names.push(v.name.clone());
            book.addresses.push(addrs);
        }
        book
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The vehicle's first IPv4 address as the protocol's `fixed32` (0 if it has none).
    pub fn first_v4(&self, node: usize) -> u32 {
        self.first_v4.get(node).copied().unwrap_or(0)
    }

    /// The vehicle whose first IPv4 address is `ip` (the protocol's `rx_ip`).
    pub fn node_of_first_v4(&self, ip: u32) -> Option<usize> {
        if ip == 0 {
            return None;
        }
        self.by_first_v4.get(&ip).copied()
    }

    /// Where a packet from `src` to `dst` goes; `None`: to no vehicle (incl. the sender itself).
    pub fn resolve(&self, src: usize, dst: IpAddr) -> Option<Destination> {
        let group = match dst {
            IpAddr::V4(v4) => {
                v4.is_multicast() || v4.is_broadcast() || self.broadcasts.contains(&v4)
            }
            IpAddr::V6(v6) => v6.is_multicast(),
        };
        if group {
            return (self.len() > 1).then_some(Destination::AllOthers);
        }
        match self.unicast.get(&dst) {
            Some(&n) if n != src => Some(Destination::Unicast(n)),
            _ => None,
        }
    }

    /// The receiving vehicles of a destination.
    pub fn receivers(&self, src: usize, d: &Destination) -> Vec<usize> {
        match d {
            Destination::Unicast(n) => vec![*n],
            Destination::AllOthers => (0..self.len()).filter(|&n| n != src).collect(),
        }
    }
}

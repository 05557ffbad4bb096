//! The in-process transport: the peer is a [`Service`] in this process, called directly (the
//! all-in-one run). It sees the same serialized messages a remote peer would, and its reply is
//! the service's own future (no extra layer per window).

use super::{Reply, Service, Transport};
use std::time::Duration;

/// A [`Service`] reached by a direct call.
pub struct Local {
    service: Box<dyn Service>,
}

impl Local {
    pub fn new(service: Box<dyn Service>) -> Local {
        Local { service }
    }
}

impl Transport for Local {
    /// Answers without a timeout: a peer in this process cannot be late.
    fn exchange<'a>(&'a mut self, request: Vec<u8>, _timeout: Duration) -> Reply<'a> {
        self.service.call(request)
    }
}

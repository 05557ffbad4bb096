//! The in-process transport: the peer is a [`Service`] in this process, called directly (the
//! all-in-one run). It sees the same serialized messages a remote peer would.

use super::{Exchange, Service, Transport, TransportError};
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
    /// Answers at once; no timeout applies to a peer in this process.
    fn exchange<'a>(&'a mut self, request: Vec<u8>, _timeout: Duration) -> Exchange<'a> {
        Box::pin(async move { self.service.call(&request).await.map_err(TransportError::Failed) })
    }
}

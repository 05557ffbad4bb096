//! The in-process transport on a thread of its own: the peer is a [`Service`] moved to a
//! dedicated OS thread (with its own single-threaded runtime) and reached through a channel.
//! The embedded physics simulator runs there, so physics window k+1 is computed on one core
//! while the network side works on window k on the other. A hand-off costs tens of
//! microseconds, which a physics window with many pairs repays many times.

use super::{Reply, Service, Transport, TransportError};
use std::sync::mpsc;
use std::time::Duration;
use tokio::sync::oneshot;

type Request = (Vec<u8>, oneshot::Sender<Result<Vec<u8>, TransportError>>);

/// A [`Service`] running on its own thread.
pub struct Thread {
    requests: mpsc::SyncSender<Request>,
}

impl Thread {
    /// Moves `service` to a new thread named `name`, which first runs `on_start` (e.g. taking
    /// the run's priority); it ends when this handle is dropped.
    pub fn spawn(
        name: &str,
        mut service: Box<dyn Service>,
        on_start: fn(),
    ) -> std::io::Result<Thread> {
        // A blocking channel wakes the thread faster than a parked runtime would.
        let (requests, incoming) = mpsc::sync_channel::<Request>(1);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                on_start();
                while let Ok((request, reply)) = incoming.recv() {
                    let _ = reply.send(rt.block_on(service.call(request)));
                }
            })?;
        Ok(Thread { requests })
    }
}

impl Transport for Thread {
    /// Answers without a timeout, as [`super::local::Local`]: a peer in this process cannot be
    /// late; a service that panicked reads as disconnected.
    fn exchange<'a>(&'a mut self, request: Vec<u8>, _timeout: Duration) -> Reply<'a> {
        Box::pin(async move {
            let (tx, rx) = oneshot::channel();
            // Never blocks: one request at a time, and the thread takes it at once.
            self.requests
                .try_send((request, tx))
                .map_err(|_| TransportError::Disconnected)?;
            rx.await.unwrap_or(Err(TransportError::Disconnected))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Echo;
    impl Service for Echo {
        fn call(&mut self, mut request: Vec<u8>) -> Reply<'_> {
            if request.is_empty() {
                panic!("empty request");
            }
            request.reverse();
            crate::lockstep::ready(Ok(request))
        }
    }

    #[tokio::test]
    async fn answers_in_order_and_a_panicked_service_reads_as_disconnected() {
        let mut t = Thread::spawn("echo", Box::new(Echo), || ()).unwrap();
        for i in 0..100u8 {
            let r = t.exchange(vec![i, 1, 2], Duration::MAX).await.unwrap();
            assert_eq!(r, vec![2, 1, i]);
        }
        assert!(matches!(
            t.exchange(vec![], Duration::MAX).await,
            Err(TransportError::Disconnected)
        ));
        assert!(matches!(
            t.exchange(vec![1], Duration::MAX).await,
            Err(TransportError::Disconnected)
        ));
    }
}

//! A physics simulator the run follows: one that moves the vehicles itself (Gazebo, a
//! simulator behind the ZeroMQ AUV interface) and only tells where they are. [`Followed`] is
//! what each such adapter provides — the vehicles' poses at a window's end — and [`Follow`]
//! makes any of them a physics [`Transport`] the same way: BEGIN(k) checked and in turn (it
//! can place no vehicle), the poses asked for, the channel sampled from them over the
//! scenario's terrain as the embedded simulator samples it ([`ChannelSampler`]), END(k). A new
//! external physics simulator is one file implementing [`Followed`].

use super::acoustic_paths::SharedPathStats;
use super::physics::{ChannelSampler, Placement};
use crate::config::LoadedScenario;
use crate::lockstep::{
    protocol::{expect_begin_unplaced, physics_end, WindowCounter},
    Reply, Transport, TransportError,
};
use std::future::Future;
use std::time::Duration;

/// An external physics simulator that moves the vehicles itself.
pub trait Followed: Send {
    /// What moves the vehicles, in an error ("Gazebo", "the AUV interface simulator").
    fn mover(&self) -> &str;

    /// How the coordinator names this peer in errors.
    fn peer(&self) -> String;

    /// Every vehicle's pose, in the scenario's order, at the end of window `k` (k = 0: the
    /// run's start), within `timeout`; an error says what was missing.
    fn poses(
        &mut self,
        k: u32,
        timeout: Duration,
    ) -> impl Future<Output = Result<Vec<Placement>, String>> + Send;
}

/// A [`Followed`] simulator as the physics simulator of a run; see the module docs.
pub struct Follow<F> {
    sim: F,
    windows: WindowCounter,
    channel: ChannelSampler,
}

impl<F: Followed> Follow<F> {
    /// `sim` followed over `loaded`'s windows and terrain.
    pub fn new(loaded: &LoadedScenario, sim: F) -> Follow<F> {
        Follow {
            sim,
            windows: WindowCounter::new(loaded.schedule().windows),
            channel: ChannelSampler::from_scenario(loaded),
        }
    }

    /// The stats of the acoustic paths traced for it (None: no pair is beam-traced).
    pub fn shared_path_stats(&self) -> Option<SharedPathStats> {
        self.channel.shared_path_stats()
    }

    /// The simulator followed.
    pub fn sim(&self) -> &F {
        &self.sim
    }

    async fn window(&mut self, request: &[u8], timeout: Duration) -> Result<Vec<u8>, String> {
        let k = expect_begin_unplaced(request, &mut self.windows, self.sim.mover())?;
        let poses = self.sim.poses(k, timeout).await?;
        Ok(physics_end(k, self.channel.sample(k, &poses)))
    }
}

impl<F: Followed> Transport for Follow<F> {
    fn exchange<'a>(&'a mut self, request: Vec<u8>, timeout: Duration) -> Reply<'a> {
        Box::pin(async move {
            self.window(&request, timeout)
                .await
                .map_err(TransportError::Failed)
        })
    }
}

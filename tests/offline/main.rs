//! The tests of the default build that pace no run to the wall clock with live traffic: link
//! models and geometry against hand computations and reference implementations (arlpy, BELLHOP),
//! parsers, the scenario loader, the wire messages, the run record and the report, the book, the
//! layering of `src/`, and whole runs whose checks hold however fast the machine is (unpaced, or
//! paced with nothing measured against the clock: the lockstep, ROS-NetSim's peers, the NETSIM
//! manager, the live viewer). One binary, its tests in parallel: `cargo test --test offline`;
//! one module with e.g. `cargo test --test offline config::`.

#[allow(dead_code)]
#[path = "../common/mod.rs"]
mod common;

mod acoustic;
mod architecture;
mod beam_reference;
mod book;
mod casts;
mod config;
mod flows;
mod gazebo;
mod geometry;
mod gis;
mod ip_parser;
mod lockstep;
mod medium;
mod netsim_manager;
mod record;
mod report;
mod reproducible;
mod rosnetsim;
mod sweep;
mod track;
mod viewer;
mod wire;

//! ns-3 as the network simulator: the command line of its adapter `netsim-ns3`, built from the
//! scenario alone (the process itself is [`crate::io::simulators::ns3`]'s).
//!
//! The adapter keeps one ns-3 node per vehicle (`--nodes`, in vehicle order) and runs the
//! scenario's windows (`--windowNs`, `--windows`) with ns-3's RngRun from `--seed`. Devices
//! follow the links ([`crate::config::LoadedScenario::check_ns3`] has checked they can): a
//! vehicle in an `rf` pair gets a Wi-Fi device (`--wifiNodes`), one in an `acoustic` pair a UAN
//! device (`--uanNodes`), and every device of a kind shares one channel whose parameters are
//! those of the pairs' model:
//!
//! | adapter option | from |
//! |---|---|
//! | `--txPowerDbm`, `--pathLossExponent`, `--referenceDistanceM` | rf `tx_power_dbm`, `path_loss_exponent`, `reference_distance_m` |
//! | `--referenceLossDb` | rf `reference_loss_db`, default free space at `frequency_ghz` (Friis) |
//! | `--noiseFigureDb` | rf `noise_floor_dbm` − (−174 dBm/Hz + 10·log10(20 MHz)): −94 dBm → 6.99 dB |
//! | `--wifiQueuePackets` | `wifi.queue_packets`, default `links.queue_packets` |
//! | `--uanRateBps` | acoustic `bit_rate_bps`, default the `micromodem_rate`'s nominal rate |
//! | `--uanFrequencyKhz`, `--uanBandwidthKhz`, `--uanSourceLevelDb`, `--uanSpreading` | acoustic `frequency_khz`, `bandwidth_khz`, `source_level_db`, `spreading_factor` |
//! | `--wifiStandard`, `--wifiRateManager`, `--wifiDataMode`, `--uanMac` | the [`Ns3Settings`] |
//!
//! Radio options, device settings and node lists are given only for a kind of device some
//! vehicle has: an absent list means no such device (ns-3's command line refuses an empty
//! value).
//!
//! A pair the physics side's beam tracer traced (ChannelData's `traced` and `arrivals`) is heard
//! in ns-3 by its arrivals: the adapter's UAN propagation model gives the summed arrival energy
//! (each arrival absorbed by Thorp at the carrier over its own path, ns-3's formula) as path
//! loss, the first arrival's delay, and the arrivals as the power-delay profile; a traced pair
//! with no arrival is a shadow zone. UanPhyGen keeps ns-3's default SINR calculator, which
//! ignores the profile (all arrival energy is signal); `UanPhyCalcSinrFhFsk` models FH-FSK
//! symbols and the adapter's mode is PSK, so it is not used (docs/src/reference/ns3.md).

use crate::config::{LinkModel, LoadedScenario, Ns3Settings};
use crate::model::link::LinkSpec;
use std::fmt::Display;

/// Thermal noise density (dBm/Hz at 290 K).
pub const THERMAL_NOISE_DBM_PER_HZ: f64 = -174.0;
/// The 802.11 channel width the `rf` model's noise floor is taken over (20 MHz).
pub const WIFI_NOISE_BANDWIDTH_HZ: f64 = 20e6;
/// The adapter's own idle timeout when nothing longer is needed (s).
pub const IDLE_TIMEOUT_S: u64 = 60;

/// The receiver noise figure (dB) that puts ns-3's noise (thermal over 20 MHz plus the figure)
/// at the `rf` model's `noise_floor_dbm`.
pub fn noise_figure_db(noise_floor_dbm: f64) -> f64 {
    noise_floor_dbm - (THERMAL_NOISE_DBM_PER_HZ + 10.0 * WIFI_NOISE_BANDWIDTH_HZ.log10())
}

/// The vehicles (node indices, ascending) with a Wi-Fi device and with a UAN device.
pub fn devices(loaded: &LoadedScenario) -> (Vec<usize>, Vec<usize>) {
    let n = loaded.scenario.vehicles.len();
    let (mut wifi, mut uan) = (vec![false; n], vec![false; n]);
    for (a, b, _, m) in loaded.scenario.pair_links() {
        let list = match m {
            LinkModel::Rf { .. } => &mut wifi,
            LinkModel::Acoustic { .. } => &mut uan,
            _ => continue,
        };
        list[a] = true;
        list[b] = true;
    }
    let nodes = |l: Vec<bool>| {
        l.into_iter()
            .enumerate()
            .filter(|&(_, d)| d)
            .map(|(i, _)| i)
            .collect()
    };
    (nodes(wifi), nodes(uan))
}

/// The adapter's arguments for `loaded` with `settings`, all but `--bind` (the caller's). The
/// scenario was checked for ns-3 as it was loaded ([`LoadedScenario::check_ns3`], for a file
/// that chooses ns-3 and for `--network-sim ns3` alike).
pub fn adapter_args(loaded: &LoadedScenario, settings: &Ns3Settings) -> Vec<String> {
    let s = &loaded.scenario;
    let schedule = loaded.schedule();
    let arg = |name: &str, value: &dyn Display| format!("--{name}={value}");
    let list = |nodes: &[usize]| {
        nodes
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(",")
    };

    // Requests come at least every window's wall time (paced) and within the peers' timeouts.
    let paced_s = if s.real_time_factor > 0.0 {
        schedule.window_s() / s.real_time_factor
    } else {
        0.0
    };
    let waits_s = [
        s.simulators.startup_timeout_ms as f64 / 1e3,
        s.simulators.timeout_ms as f64 / 1e3,
        paced_s,
    ];
    let idle_s = IDLE_TIMEOUT_S + waits_s.into_iter().fold(0.0, f64::max).ceil() as u64;

    let (wifi, uan) = devices(loaded);
    let mut args = vec![
        arg("nodes", &s.vehicles.len()),
        arg("windowNs", &schedule.window_ns),
        arg("windows", &schedule.windows),
        arg("seed", &s.seed),
        arg("idleTimeoutS", &idle_s),
    ];
    if !wifi.is_empty() {
        args.push(arg("wifiStandard", &settings.wifi.standard.name()));
        args.push(arg("wifiRateManager", &settings.wifi.rate_manager.name()));
        if let Some(mode) = &settings.wifi.data_mode {
            args.push(arg("wifiDataMode", mode));
        }
        args.push(arg(
            "wifiQueuePackets",
            &settings.wifi.queue_packets.unwrap_or(s.links.queue_packets),
        ));
    }
    if !uan.is_empty() {
        args.push(arg("uanMac", &settings.uan.mac.name()));
    }

    for (name, nodes) in [("wifiNodes", &wifi), ("uanNodes", &uan)] {
        if !nodes.is_empty() {
            args.push(arg(name, &list(nodes)));
        }
    }
    let pairs = s.pair_links();
    if let Some(rf) = pairs
        .iter()
        .map(|p| p.3)
        .find(|m| matches!(m, LinkModel::Rf { .. }))
    {
        if let LinkSpec::Rf {
            tx_power_dbm,
            exponent,
            d0_m,
            pl0_db,
            noise_floor_dbm,
            ..
        } = LinkSpec::from_config(rf, &s.world.water)
        {
            args.push(arg("txPowerDbm", &tx_power_dbm));
            args.push(arg("pathLossExponent", &exponent));
            args.push(arg("referenceDistanceM", &d0_m));
            args.push(arg("referenceLossDb", &pl0_db));
            args.push(arg("noiseFigureDb", &noise_figure_db(noise_floor_dbm)));
        }
    }
    if let Some(m) = pairs
        .iter()
        .map(|p| p.3)
        .find(|m| matches!(m, LinkModel::Acoustic { .. }))
    {
        if let (
            LinkModel::Acoustic {
                frequency_khz,
                bandwidth_khz,
                source_level_db,
                spreading_factor,
                ..
            },
            LinkSpec::Acoustic(spec),
        ) = (m, LinkSpec::from_config(m, &s.world.water))
        {
            args.push(arg("uanRateBps", &spec.bit_rate_bps));
            args.push(arg("uanFrequencyKhz", frequency_khz));
            args.push(arg("uanBandwidthKhz", bandwidth_khz));
            args.push(arg("uanSourceLevelDb", source_level_db));
            args.push(arg("uanSpreading", spreading_factor));
        }
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{self, WifiRateManager, WifiStandard};
    use std::path::Path;

    fn load(path: &str) -> LoadedScenario {
        config::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
    }

    /// The value of `--name=` in `args`.
    fn value<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
        let prefix = format!("--{name}=");
        args.iter().find_map(|a| a.strip_prefix(prefix.as_str()))
    }

    #[test]
    fn noise_figure_puts_ns3_noise_at_the_rf_noise_floor() {
        assert!((noise_figure_db(-94.0) - 6.9897).abs() < 1e-4);
        assert!((noise_figure_db(-91.0) - 9.9897).abs() < 1e-4);
    }

    #[test]
    fn the_default_scenario_switched_to_ns3_gives_its_vessels_wifi_with_the_rf_pair_s_radio() {
        let loaded = load("config/default.yaml");
        let args = adapter_args(&loaded, &Ns3Settings::default());
        let v =
            |name| value(&args, name).unwrap_or_else(|| panic!("--{name} missing from {args:?}"));
        assert_eq!(
            (v("nodes"), v("windowNs"), v("windows"), v("seed")),
            ("5", "1000000", "60000", "42")
        );
        assert_eq!(
            (v("wifiNodes"), value(&args, "uanNodes")),
            ("0,1", None),
            "the AUVs' links are `none`: no device"
        );
        assert_eq!(
            (
                v("wifiStandard"),
                v("wifiRateManager"),
                v("wifiQueuePackets"),
                value(&args, "uanMac")
            ),
            ("80211g", "minstrel", "64", None),
            "no UAN device: no UAN setting"
        );
        assert_eq!(
            (
                v("txPowerDbm"),
                v("pathLossExponent"),
                v("referenceDistanceM")
            ),
            ("23", "2.2", "1")
        );
        let pl0: f64 = v("referenceLossDb").parse().unwrap();
        assert!(
            (pl0 - 40.05).abs() < 0.01,
            "free space at 1 m, 2.4 GHz: {pl0}"
        );
        let nf: f64 = v("noiseFigureDb").parse().unwrap();
        assert!((nf - 6.99).abs() < 0.01, "{nf}");
        assert_eq!(value(&args, "wifiDataMode"), None);
        assert_eq!(value(&args, "uanRateBps"), None, "no acoustic pair");
        assert_eq!(value(&args, "bind"), None, "the caller binds");
        // 30 s to start, 1 ms windows at real time: a minute and a half without a request.
        assert_eq!(v("idleTimeoutS"), "90");
    }

    #[test]
    fn acoustic_pairs_give_uan_devices_at_the_micromodem_rate() {
        let loaded = load("config/acoustic.yaml");
        // auv1 - auv3 runs at rate 0: not one channel.
        let e = loaded.check_ns3(&Ns3Settings::default()).unwrap_err();
        assert!(
            e.to_string().contains(
                "links.pairs[0]: auv1 - auv3: under ns-3 every acoustic link is one UAN channel"
            ),
            "{e}"
        );

        let text = std::fs::read_to_string(&loaded.file).unwrap();
        let one_rate = text.replace("      micromodem_rate: 0\n", "      micromodem_rate: 1\n");
        assert_ne!(text, one_rate);
        let loaded = config::parse_str(&one_rate, &loaded.file).unwrap();
        let args = adapter_args(&loaded, &Ns3Settings::default());
        let v = |name| value(&args, name).unwrap();
        assert_eq!(
            (v("nodes"), value(&args, "wifiNodes"), v("uanNodes")),
            ("3", None, "0,1,2")
        );
        assert_eq!(
            (
                v("uanRateBps"),
                v("uanFrequencyKhz"),
                v("uanBandwidthKhz"),
                v("uanSourceLevelDb"),
                v("uanSpreading")
            ),
            ("250", "25", "5", "185", "1.5")
        );
        assert_eq!(value(&args, "txPowerDbm"), None, "no rf pair");
        assert_eq!(v("uanMac"), "aloha");
        for wifi in [
            "wifiStandard",
            "wifiRateManager",
            "wifiDataMode",
            "wifiQueuePackets",
        ] {
            assert_eq!(value(&args, wifi), None, "no Wi-Fi device: no --{wifi}");
        }

        let own_rate = one_rate
            .replace(
                "\n    micromodem_rate: 1\n",
                "\n    micromodem_rate: 1\n    bit_rate_bps: 400\n",
            )
            .replace(
                "\n      micromodem_rate: 1\n",
                "\n      micromodem_rate: 1\n      bit_rate_bps: 400\n",
            );
        let loaded = config::parse_str(&own_rate, &loaded.file).unwrap();
        let args = adapter_args(&loaded, &Ns3Settings::default());
        assert_eq!(
            value(&args, "uanRateBps"),
            Some("400"),
            "bit_rate_bps overrides the rate's"
        );
    }

    #[test]
    fn wifi_settings_reach_the_command_line() {
        let loaded = load("config/default.yaml");
        let mut settings = Ns3Settings::default();
        settings.wifi.standard = WifiStandard::A;
        settings.wifi.rate_manager = WifiRateManager::Constant;
        settings.wifi.data_mode = Some("OfdmRate24Mbps".into());
        settings.wifi.queue_packets = Some(100);
        settings.uan.mac = config::UanMac::Cw;
        let args = adapter_args(&loaded, &settings);
        let v = |name| value(&args, name).unwrap();
        assert_eq!(
            (
                v("wifiStandard"),
                v("wifiRateManager"),
                v("wifiDataMode"),
                v("wifiQueuePackets"),
            ),
            ("80211a", "constant", "OfdmRate24Mbps", "100")
        );
        assert_eq!(value(&args, "uanMac"), None, "no UAN device");
        let acoustic = load("config/ns3_acoustic.yaml");
        let args = adapter_args(&acoustic, &settings);
        assert_eq!(value(&args, "uanMac"), Some("cw"));
        settings.wifi.data_mode = None;
        let e = loaded.check_ns3(&settings).unwrap_err();
        assert_eq!(e.key_path, "simulators.network.wifi.rate_manager");
        assert!(e.message.contains("`constant` needs wifi.data_mode"), "{e}");
    }

    #[test]
    fn every_argument_is_one_name_value_pair() {
        let args = adapter_args(&load("config/default.yaml"), &Ns3Settings::default());
        for a in &args {
            let (name, value) = a
                .strip_prefix("--")
                .and_then(|a| a.split_once('='))
                .unwrap_or_else(|| panic!("{a}"));
            assert!(name.chars().all(|c| c.is_ascii_alphanumeric()), "{a}");
            assert!(
                !value.is_empty() && !value.contains(char::is_whitespace),
                "{a}"
            );
        }
        let names: std::collections::HashSet<&str> = args
            .iter()
            .filter_map(|a| a[2..].split_once('='))
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names.len(), args.len(), "each option once: {args:?}");
    }
}

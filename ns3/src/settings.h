// What the adapter is told on its command line: the run (nodes, W, windows, seed) and the two
// radios (Wi-Fi, UAN), each with the default docs/src/reference/ns3.md documents.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace netsim
{

struct WifiSettings
{
    std::vector<uint32_t> nodes;
    std::string standard = "80211g";
    std::string rate_manager = "minstrel";
    std::string data_mode;
    double tx_power_dbm = 20.0;
    double path_loss_exponent = 3.0;
    double reference_distance_m = 1.0;
    double reference_loss_db = 40.05;
    double noise_figure_db = 7.0;
    uint32_t queue_packets = 64;
};

struct UanSettings
{
    std::vector<uint32_t> nodes;
    double rate_bps = 250.0;
    double frequency_khz = 25.0;
    double bandwidth_khz = 5.0;
    double source_level_db = 185.0;
    double spreading = 1.5;
    std::string mac = "aloha";
};

struct Settings
{
    uint32_t nodes = 0;
    uint64_t window_ns = 0;
    uint32_t windows = 0;
    uint64_t seed = 1;
    WifiSettings wifi;
    UanSettings uan;
};

} // namespace netsim

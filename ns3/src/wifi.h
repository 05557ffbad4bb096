// Wi-Fi devices as the scenario sets them up, shared by the adapter and the reference program:
// one YANS channel with ns-3's log-distance path loss followed by the window's hop losses, an
// ad-hoc MAC, the chosen standard and rate manager, the transmit power and noise figure.
#pragma once

#include "channel.h"
#include "settings.h"

#include "ns3/command-line.h"
#include "ns3/net-device-container.h"
#include "ns3/node-container.h"
#include "ns3/propagation-loss-model.h"

namespace netsim
{

struct WifiRadio
{
    ns3::NetDeviceContainer devices; // one per member, in order
    ns3::Ptr<ns3::PropagationLossModel> loss; // the whole chain (path loss, then hop losses)
};

// Installs one Wi-Fi device on each of `members`; throws std::invalid_argument on a setting
// ns-3 cannot take. `losses` may be null (no obstructions) and must outlive the simulation.
WifiRadio InstallWifi(const WifiSettings& w, ns3::NodeContainer members, const HopLosses* losses);

// The Wi-Fi options (`--wifiStandard`, `--txPowerDbm`, ...) into `w`, as the adapter and the
// reference program both take them.
void AddWifiOptions(ns3::CommandLine& cmd, WifiSettings& w);

} // namespace netsim

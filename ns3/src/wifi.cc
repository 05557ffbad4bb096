#include "wifi.h"

#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/double.h"
#include "ns3/propagation-delay-model.h"
#include "ns3/queue-size.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"
#include "ns3/wifi-helper.h"
#include "ns3/wifi-mac-helper.h"
#include "ns3/yans-wifi-channel.h"
#include "ns3/yans-wifi-helper.h"

namespace netsim
{

using namespace ns3;

WifiRadio
InstallWifi(const WifiSettings& w, NodeContainer members, const HopLosses* losses)
{
    Config::SetDefault("ns3::WifiMacQueue::MaxSize", QueueSizeValue(QueueSize(std::to_string(w.queue_packets) + "p")));
    WifiHelper wifi;
    std::string channel_settings, control_mode;
    bool ht = false;
    if (w.standard == "80211a")
    {
        wifi.SetStandard(WIFI_STANDARD_80211a);
        control_mode = "OfdmRate6Mbps";
    }
    else if (w.standard == "80211g")
    {
        wifi.SetStandard(WIFI_STANDARD_80211g);
        control_mode = "ErpOfdmRate6Mbps";
    }
    else if (w.standard == "80211n-2.4" || w.standard == "80211n-5")
    {
        wifi.SetStandard(WIFI_STANDARD_80211n);
        bool low = w.standard == "80211n-2.4";
        channel_settings = low ? "{0, 20, BAND_2_4GHZ, 0}" : "{0, 20, BAND_5GHZ, 0}";
        control_mode = low ? "ErpOfdmRate6Mbps" : "OfdmRate6Mbps";
        ht = true;
    }
    else
    {
        throw std::invalid_argument("--wifiStandard=" + w.standard + ": expected 80211a, 80211g, 80211n-2.4 or 80211n-5");
    }
    if (w.rate_manager == "minstrel")
    {
        wifi.SetRemoteStationManager(ht ? "ns3::MinstrelHtWifiManager" : "ns3::MinstrelWifiManager");
    }
    else if (w.rate_manager == "ideal")
    {
        wifi.SetRemoteStationManager("ns3::IdealWifiManager");
    }
    else if (w.rate_manager == "constant")
    {
        if (w.data_mode.empty())
            throw std::invalid_argument("--wifiRateManager=constant needs --wifiDataMode (e.g. ErpOfdmRate54Mbps, OfdmRate54Mbps, HtMcs7)");
        wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager", "DataMode", StringValue(w.data_mode), "ControlMode",
                                     StringValue(control_mode));
    }
    else
    {
        throw std::invalid_argument("--wifiRateManager=" + w.rate_manager + ": expected minstrel, ideal or constant");
    }

    Ptr<YansWifiChannel> channel = CreateObject<YansWifiChannel>();
    Ptr<LogDistancePropagationLossModel> path = CreateObject<LogDistancePropagationLossModel>();
    path->SetAttribute("Exponent", DoubleValue(w.path_loss_exponent));
    path->SetAttribute("ReferenceDistance", DoubleValue(w.reference_distance_m));
    path->SetAttribute("ReferenceLoss", DoubleValue(w.reference_loss_db));
    Ptr<HopLossModel> hops = CreateObject<HopLossModel>();
    hops->SetLosses(losses);
    path->SetNext(hops);
    channel->SetPropagationLossModel(path);
    channel->SetPropagationDelayModel(CreateObject<ConstantSpeedPropagationDelayModel>());

    YansWifiPhyHelper phy;
    phy.SetChannel(channel);
    phy.Set("TxPowerStart", DoubleValue(w.tx_power_dbm));
    phy.Set("TxPowerEnd", DoubleValue(w.tx_power_dbm));
    phy.Set("TxPowerLevels", UintegerValue(1));
    phy.Set("RxNoiseFigure", DoubleValue(w.noise_figure_db));
    if (!channel_settings.empty())
    {
        phy.Set("ChannelSettings", StringValue(channel_settings));
    }
    WifiMacHelper mac;
    mac.SetType("ns3::AdhocWifiMac", "QosSupported", BooleanValue(ht));

    WifiRadio radio;
    radio.devices = wifi.Install(phy, mac, members);
    wifi.AssignStreams(radio.devices, 0);
    radio.loss = path;
    return radio;
}

void
AddWifiOptions(CommandLine& cmd, WifiSettings& w)
{
    cmd.AddValue("wifiStandard", "80211a, 80211g, 80211n-2.4 or 80211n-5", w.standard);
    cmd.AddValue("wifiRateManager", "minstrel, ideal or constant", w.rate_manager);
    cmd.AddValue("wifiDataMode", "the constant rate manager's mode (e.g. ErpOfdmRate54Mbps)", w.data_mode);
    cmd.AddValue("txPowerDbm", "Wi-Fi transmit power (dBm)", w.tx_power_dbm);
    cmd.AddValue("pathLossExponent", "log-distance path loss exponent", w.path_loss_exponent);
    cmd.AddValue("referenceDistanceM", "log-distance reference distance (m)", w.reference_distance_m);
    cmd.AddValue("referenceLossDb", "log-distance loss at the reference distance (dB)", w.reference_loss_db);
    cmd.AddValue("noiseFigureDb", "Wi-Fi receiver noise figure (dB)", w.noise_figure_db);
    cmd.AddValue("wifiQueuePackets", "Wi-Fi MAC queue size (packets)", w.queue_packets);
}

} // namespace netsim

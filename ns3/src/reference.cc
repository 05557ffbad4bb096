// netsim-ns3-reference: the throughput ns-3 itself gives for a scenario's Wi-Fi settings, measured
// the way ns-3's examples measure it (examples/wireless/wifi-tcp.cc: a BulkSendApplication
// sending TCP to a PacketSink through ns-3's own Internet stack; a saturating OnOff UDP source
// for --protocol=udp), between two nodes --distanceM apart with --hopLossDb of obstruction.
// The Wi-Fi devices are built by the same code as the adapter's. Prints one line:
// `throughput_mbps X` (goodput after --warmupS, over --seconds).
#include "wifi.h"

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/mobility-module.h"
#include "ns3/network-module.h"

#include <iostream>

using namespace ns3;

int
main(int argc, char* argv[])
{
    netsim::WifiSettings w;
    double distance_m = 100, hop_loss_db = 0, seconds = 10, warmup_s = 2;
    uint64_t seed = 1;
    std::string protocol = "tcp";
    CommandLine cmd(__FILE__);
    cmd.AddValue("distanceM", "distance between the two nodes (m)", distance_m);
    cmd.AddValue("hopLossDb", "obstruction loss between them (dB)", hop_loss_db);
    cmd.AddValue("seconds", "measured time (s)", seconds);
    cmd.AddValue("warmupS", "time before measuring (s)", warmup_s);
    cmd.AddValue("protocol", "tcp or udp", protocol);
    cmd.AddValue("seed", "RngRun", seed);
    netsim::AddWifiOptions(cmd, w);
    cmd.Parse(argc, argv);
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed == 0 ? 1 : seed);
    // Linux's defaults for the comparison with a kernel's TCP: MSS 1448, CUBIC, large buffers.
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4 << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(6 << 20));
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue("ns3::TcpCubic"));

    NodeContainer nodes;
    nodes.Create(2);
    MobilityHelper mobility;
    Ptr<ListPositionAllocator> positions = CreateObject<ListPositionAllocator>();
    positions->Add(Vector(0, 0, 2));
    positions->Add(Vector(distance_m, 0, 2));
    mobility.SetPositionAllocator(positions);
    mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel");
    mobility.Install(nodes);
    netsim::HopLosses losses;
    losses.Set(0, 1, hop_loss_db);
    netsim::WifiRadio radio;
    try
    {
        radio = netsim::InstallWifi(w, nodes, &losses);
    }
    catch (const std::exception& e)
    {
        std::cerr << "netsim-ns3-reference: " << e.what() << std::endl;
        return 2;
    }
    InternetStackHelper internet;
    internet.Install(nodes);
    Ipv4AddressHelper addresses;
    addresses.SetBase("10.1.1.0", "255.255.255.0");
    Ipv4InterfaceContainer ifs = addresses.Assign(radio.devices);

    const uint16_t port = 5201;
    std::string factory = protocol == "udp" ? "ns3::UdpSocketFactory" : "ns3::TcpSocketFactory";
    PacketSinkHelper sink_helper(factory, InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sink_app = sink_helper.Install(nodes.Get(1));
    ApplicationContainer source;
    if (protocol == "udp")
    {
        OnOffHelper onoff(factory, InetSocketAddress(ifs.GetAddress(1), port));
        onoff.SetConstantRate(DataRate("100Mbps"), 1472);
        source = onoff.Install(nodes.Get(0));
    }
    else if (protocol == "tcp")
    {
        BulkSendHelper bulk(factory, InetSocketAddress(ifs.GetAddress(1), port));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        source = bulk.Install(nodes.Get(0));
    }
    else
    {
        std::cerr << "netsim-ns3-reference: --protocol=" << protocol << ": expected tcp or udp" << std::endl;
        return 2;
    }
    sink_app.Start(Seconds(0));
    source.Start(Seconds(0.1));
    Ptr<PacketSink> sink = DynamicCast<PacketSink>(sink_app.Get(0));
    uint64_t at_warmup = 0;
    Simulator::Schedule(Seconds(warmup_s), [&]() { at_warmup = sink->GetTotalRx(); });
    Simulator::Stop(Seconds(warmup_s + seconds));
    Simulator::Run();
    double mbps = (sink->GetTotalRx() - at_warmup) * 8.0 / seconds / 1e6;
    std::cout << "throughput_mbps " << mbps << std::endl;
    Simulator::Destroy();
    return 0;
}

// netsim-ns3: ns-3 as the network simulator of a netsim_cosim run.
//
// Serves the window protocol (NetworkUpdate BEGIN(k) -> END(k), msg/rosnetsim.proto) on a
// ZeroMQ REP socket, one frame per message, so the coordinator reaches it like any external
// network simulator, on this host or another. Prints `listening on ENDPOINT` once bound; exits
// 0 after the last window, after --idleTimeoutS without a request or on SIGTERM/SIGINT (with
// its counts on stderr), 1 on a request it cannot answer (the reason on stderr) or an option
// ns-3's command line rejects, 2 on a value this program rejects.
#include "adapter.h"
#include "wifi.h"

#include "ns3/command-line.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/simulator.h"

#include <zmq.hpp>

#include <chrono>
#include <csignal>
#include <iostream>
#include <sstream>

namespace
{

volatile std::sig_atomic_t g_stop = 0;

void
OnSignal(int)
{
    g_stop = 1;
}

// "0,1,4" -> {0, 1, 4}; empty -> {}.
std::vector<uint32_t>
ParseNodes(const std::string& flag, const std::string& text)
{
    std::vector<uint32_t> out;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ','))
    {
        if (item.empty())
            continue;
        size_t used = 0;
        unsigned long v = 0;
        try
        {
            v = std::stoul(item, &used);
        }
        catch (const std::exception&)
        {
            used = 0;
        }
        if (used != item.size() || v > UINT32_MAX)
            throw std::invalid_argument(flag + "=" + text + ": \"" + item + "\" is not a node index");
        out.push_back(static_cast<uint32_t>(v));
    }
    return out;
}

} // namespace

int
main(int argc, char* argv[])
{
    netsim::Settings s;
    std::string bind, wifi_nodes, uan_nodes;
    uint32_t idle_s = 60;
    ns3::CommandLine cmd(__FILE__);
    cmd.Usage("ns-3 as the network simulator of a netsim_cosim run, served over ZeroMQ.");
    cmd.AddValue("bind", "ZeroMQ endpoint to bind (tcp://*:5602, ipc:///path)", bind);
    cmd.AddValue("nodes", "number of vehicles (ns-3 node i = vehicle i)", s.nodes);
    cmd.AddValue("windowNs", "window length W in ns", s.window_ns);
    cmd.AddValue("windows", "number of windows of the run", s.windows);
    cmd.AddValue("seed", "the scenario's seed (ns-3 RngRun)", s.seed);
    cmd.AddValue("idleTimeoutS", "exit after this many seconds without a request", idle_s);
    cmd.AddValue("wifiNodes", "nodes with a Wi-Fi radio, comma-separated", wifi_nodes);
    netsim::AddWifiOptions(cmd, s.wifi);
    cmd.AddValue("uanNodes", "nodes with an acoustic modem, comma-separated", uan_nodes);
    cmd.AddValue("uanRateBps", "acoustic data rate (bit/s)", s.uan.rate_bps);
    cmd.AddValue("uanFrequencyKhz", "acoustic carrier frequency (kHz)", s.uan.frequency_khz);
    cmd.AddValue("uanBandwidthKhz", "acoustic bandwidth (kHz)", s.uan.bandwidth_khz);
    cmd.AddValue("uanSourceLevelDb", "source level (dB re 1 uPa at 1 m)", s.uan.source_level_db);
    cmd.AddValue("uanSpreading", "spreading factor k of k*10*log10(d)", s.uan.spreading);
    cmd.AddValue("uanMac", "aloha or cw", s.uan.mac);
    cmd.Parse(argc, argv);

    std::unique_ptr<netsim::Adapter> adapter;
    try
    {
        if (bind.empty())
            throw std::invalid_argument("--bind is required (e.g. --bind=tcp://*:5602)");
        if (s.windows == 0)
            throw std::invalid_argument("--windows must be positive");
        s.wifi.nodes = ParseNodes("--wifiNodes", wifi_nodes);
        s.uan.nodes = ParseNodes("--uanNodes", uan_nodes);
        ns3::RngSeedManager::SetSeed(1);
        ns3::RngSeedManager::SetRun(s.seed == 0 ? 1 : s.seed);
        adapter = std::make_unique<netsim::Adapter>(s);
    }
    catch (const std::exception& e)
    {
        std::cerr << "netsim-ns3: " << e.what() << std::endl;
        return 2;
    }

    zmq::context_t context(1);
    zmq::socket_t socket(context, zmq::socket_type::rep);
    socket.set(zmq::sockopt::linger, 2000);
    try
    {
        socket.bind(bind);
    }
    catch (const zmq::error_t& e)
    {
        std::cerr << "netsim-ns3: cannot bind " << bind << ": " << e.what() << std::endl;
        return 2;
    }
    std::cout << "listening on " << bind << std::endl;

    std::signal(SIGTERM, OnSignal);
    std::signal(SIGINT, OnSignal);
    int status = 0;
    auto idle_since = std::chrono::steady_clock::now();
    while (!adapter->Finished() && !g_stop)
    {
        zmq::pollitem_t items[] = {{socket.handle(), 0, ZMQ_POLLIN, 0}};
        try
        {
            zmq::poll(items, 1, std::chrono::milliseconds(100));
        }
        catch (const zmq::error_t& e)
        {
            if (e.num() == EINTR)
                continue;
            throw;
        }
        if (!(items[0].revents & ZMQ_POLLIN))
        {
            if (std::chrono::steady_clock::now() - idle_since > std::chrono::seconds(idle_s))
            {
                std::cerr << "netsim-ns3: no request for " << idle_s << " s, exiting" << std::endl;
                break;
            }
            continue;
        }
        zmq::message_t request;
        if (!socket.recv(request))
            continue;
        idle_since = std::chrono::steady_clock::now();
        std::string reply;
        try
        {
            reply = adapter->Window(request.to_string());
        }
        catch (const std::exception& e)
        {
            std::cerr << "netsim-ns3: " << e.what() << std::endl;
            status = 1;
            break;
        }
        socket.send(zmq::buffer(reply), zmq::send_flags::none);
    }
    if (g_stop)
    {
        std::cerr << "netsim-ns3: stopped by a signal after answering " << adapter->windows_answered() << " windows" << std::endl;
    }
    const netsim::Counts& c = adapter->counts();
    std::cerr << "netsim-ns3: copies " << c.copies << ", delivered " << c.delivered << ", dropped " << c.dropped << ", too big "
              << c.too_big << ", untagged receptions " << c.untagged << std::endl;
    socket.close();
    ns3::Simulator::Destroy();
    return status;
}

// libFuzzer target: bytes from the network as a window request to the adapter. Each input is
// parsed as a NetworkUpdate and, when it parses, made this window's BEGIN (type and window
// index set), so the checks of its lists, nodes and ChannelData, the injection of its packets
// and ns-3's run over the window all see fuzzed values; inputs that do not parse go in as they
// are. The adapter must answer or refuse with a ProtocolError, never crash, whatever arrives.
// Node 1 has both radios, so the pair (1, 2) is acoustic and its path's traced arrivals reach
// the UAN model (power-delay profile, delay, loss) when a packet crosses it.
// Built by `scripts/fuzz ns3_window` (clang, -fsanitize=fuzzer,address).
#include "adapter.h"

#include "ns3/rng-seed-manager.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace
{

netsim::Adapter&
TheAdapter()
{
    // Three nodes: 0 and 1 with Wi-Fi, 1 and 2 with a UAN modem; windows enough for any run.
    static std::unique_ptr<netsim::Adapter> adapter = [] {
        netsim::Settings s;
        s.nodes = 3;
        s.window_ns = 1000000;
        s.windows = UINT32_MAX;
        s.wifi.nodes = {0, 1};
        s.uan.nodes = {1, 2};
        ns3::RngSeedManager::SetRun(1);
        return std::make_unique<netsim::Adapter>(s);
    }();
    return *adapter;
}

} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    netsim::Adapter& adapter = TheAdapter();
    std::string request(reinterpret_cast<const char*>(data), size);
    rosnetsim::NetworkUpdate begin;
    if (begin.ParseFromString(request))
    {
        begin.set_msg_type(rosnetsim::NetworkUpdate::BEGIN);
        begin.set_time_val(adapter.windows_answered());
        request = begin.SerializeAsString();
    }
    try
    {
        std::string reply = adapter.Window(request);
        rosnetsim::NetworkUpdate end;
        if (!end.ParseFromString(reply) || end.msg_type() != rosnetsim::NetworkUpdate::END)
        {
            __builtin_trap(); // the adapter answered with something that is not an END
        }
    }
    catch (const netsim::ProtocolError&)
    {
        // Refused, with the window and the field named: fine.
    }
    return 0;
}

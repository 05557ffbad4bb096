// The window state machine of the ns-3 adapter: NetworkUpdate BEGIN(k) in, END(k) out.
//
// One ns-3 node per vehicle (node i = the scenario's vehicle i). Vehicles with a Wi-Fi radio
// share one ad-hoc Wi-Fi channel, vehicles with an acoustic modem one UAN channel. Each captured
// packet is injected into its sender's ns-3 device as a packet of the same length (the bytes
// stay with the coordinator; ns-3 decides only when and whether each copy arrives), tagged with
// a sequence number, unicast to the receiver's device or broadcast for a group.
//
// Timing: BEGIN(k) carries the packets captured in window k-1, at their capture times. The
// adapter runs ns-3 one window behind the coordinators: on BEGIN(k) it injects each packet at
// its exact capture time, runs ns-3 over [(k-1)W, kW) with the channel of window k-1, and
// reports each delivery at its ns-3 receive time + W, which lies in window k. Every delay ns-3
// computes is kept to the nanosecond; the lockstep adds exactly W to each.
#pragma once

#include "channel.h"
#include "settings.h"
#include "rosnetsim.pb.h"

#include "ns3/net-device.h"
#include "ns3/node-container.h"
#include "ns3/packet.h"
#include "ns3/propagation-loss-model.h"
#include "ns3/uan-noise-model.h"
#include "ns3/uan-tx-mode.h"
#include "ns3/error-rate-model.h"
#include "ns3/wifi-mode.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace netsim
{

// A request the adapter cannot answer (the message names the window and the field).
struct ProtocolError : std::runtime_error
{
    using std::runtime_error::runtime_error;
};

// Counters for the log line at the end.
struct Counts
{
    uint64_t copies = 0, delivered = 0, dropped = 0, untagged = 0, too_big = 0;
};

class Adapter
{
  public:
    // Builds the ns-3 world; throws std::invalid_argument on settings ns-3 cannot take.
    explicit Adapter(const Settings& s);

    // Answers BEGIN(k) with END(k), serialized; throws ProtocolError.
    std::string Window(const std::string& request);

    bool Finished() const { return next_window_ >= settings_.windows; }
    uint32_t windows_answered() const { return next_window_; }
    const Counts& counts() const { return counts_; }

    // ns-3 callbacks (public so free trampolines can reach them).
    bool Received(ns3::Ptr<ns3::NetDevice> dev, ns3::Ptr<const ns3::Packet> p, uint16_t, const ns3::Address&);
    void WifiMacDropped(uint32_t node, int reason, ns3::Ptr<const ns3::Packet> p);
    void WifiEnqueued(ns3::Ptr<const ns3::Packet> p);
    void WifiPhyRxDrop(uint32_t node, ns3::Ptr<const ns3::Packet> p, int reason);
    void WifiPhyTxEnd(uint32_t node, ns3::Ptr<const ns3::Packet> p);
    void WifiAired(ns3::Ptr<const ns3::Packet> p);
    void WifiExpired(uint32_t node, ns3::Ptr<const ns3::Packet> p);
    void UanRxError(uint32_t node, ns3::Ptr<const ns3::Packet> p);

  private:
    enum class Medium
    {
        Wifi,
        Uan
    };
    struct Copy
    {
        uint32_t dst_node;
        uint32_t dst_ip;
        bool open = true;
        int phy_reason = -1; // a DropReason the receiver's PHY reported, if any
    };
    struct Transmission
    {
        uint32_t pkt_id;
        uint32_t src_node;
        uint32_t src_ip;
        uint32_t length;
        bool group;
        Medium medium;
        std::vector<Copy> copies;
        size_t open;
        // Put on the air at least once (a Wi-Fi frame past its lifetime then was given up,
        // else it waited in the queue).
        bool aired = false;
    };
    struct Entry
    {
        uint32_t pkt_id, src_ip, dst_ip, length, src, dst;
        uint64_t time_ns;
        bool multicast;
    };

    // A directed pair's link as ns-3's models see it (NetworkUpdate.link_state).
    struct LinkView
    {
        bool usable;
        double snr_db, rate_bps, per;
        uint64_t delay_ns;
    };
    ns3::NodeContainer Members(const std::vector<uint32_t>& indices) const; // those nodes, in order
    void BuildWifi();
    LinkView WifiLink(uint32_t a, uint32_t b) const;
    LinkView UanLink(uint32_t a, uint32_t b) const;
    void ReportLinks();
    void BuildUan();
    void ApplyChannel(const rosnetsim::ChannelData& c);
    // Refuses path i's arrivals (window k) unless they are a traced pair's, 8 values each,
    // within their bounds.
    void CheckArrivals(uint32_t k, int i, const rosnetsim::PathDetails& p) const;
    void Inject(const std::vector<Entry>& entries);
    void Transmit(uint64_t seq);
    // Ends every copy of `seq` still open: each lost for the reason its receiver shows
    // (ReasonForLostCopy, `fallback` when nothing more is known) ...
    void ResolveRest(uint64_t seq, int fallback);
    void Deliver(uint64_t seq, uint32_t node);
    void Drop(uint64_t seq, size_t copy, int reason);
    // ... or all for one `reason` (refused before any receiver could see it).
    void DropAll(uint64_t seq, int reason);
    void EndOpenCopies(uint64_t seq, const std::function<int(const Transmission&, const Copy&)>& reason_of);
    int ReasonForLostCopy(const Transmission& t, const Copy& c, int otherwise) const;
    bool InRange(Medium m, uint32_t a, uint32_t b) const;
    ns3::Ptr<ns3::MobilityModel> Mobility(uint32_t node) const;
    double WifiRxDbm(uint32_t a, uint32_t b) const; // received power, path and hop losses included
    double UanSnrDb(uint32_t a, uint32_t b) const;  // in-band SNR against ns-3's UAN noise
    ns3::Ptr<ns3::NetDevice> Device(Medium m, uint32_t node) const;
    std::optional<uint64_t> SeqOf(ns3::Ptr<const ns3::Packet> p) const;

    Settings settings_;
    ns3::NodeContainer nodes_;
    std::vector<ns3::Ptr<ns3::NetDevice>> wifi_dev_, uan_dev_; // per node, null without one
    ns3::Ptr<ns3::PropagationLossModel> wifi_loss_;
    ns3::Ptr<HopUanPropModel> uan_prop_;
    ns3::Ptr<ns3::UanNoiseModel> uan_noise_;
    ns3::UanTxMode uan_mode_;
    HopLosses losses_;
    AcousticTraces traces_; // the traced acoustic pairs' arrivals, for the UAN model
    ns3::Ptr<ns3::ErrorRateModel> wifi_errors_; // the PHY's error model, for the link state
    std::vector<ns3::WifiMode> wifi_modes_;     // the PHY's data modes, for the link state
    mutable std::map<long, std::pair<double, double>> wifi_rates_; // SNR step -> (rate, PER)
    std::map<std::pair<uint32_t, uint32_t>, LinkView> reported_; // last link state sent per pair
    bool have_channel_ = false; // a ChannelData has placed the nodes (ns-3 runs with the newest next)
    uint32_t next_window_ = 0;
    uint64_t next_seq_ = 1;
    bool enqueued_ = false; // set by the MAC queue while Transmit hands it a packet
    std::map<uint64_t, Transmission> pending_;
    rosnetsim::NetworkUpdate end_; // the END being filled while ns-3 runs
    Counts counts_;
};

} // namespace netsim

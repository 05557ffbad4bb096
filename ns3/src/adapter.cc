#include "adapter.h"
#include "wifi.h"

#include "ns3/double.h"
#include "ns3/mobility-helper.h"
#include "ns3/qos-utils.h"
#include "ns3/simulator.h"
#include "ns3/table-based-error-rate-model.h"
#include "ns3/tag.h"
#include "ns3/uan-channel.h"
#include "ns3/uan-helper.h"
#include "ns3/uan-net-device.h"
#include "ns3/uan-noise-model-default.h"
#include "ns3/uan-phy-gen.h"
#include "ns3/uan-tx-mode.h"
#include "ns3/wifi-mac-queue.h"
#include "ns3/wifi-mac.h"
#include "ns3/wifi-mpdu.h"
#include "ns3/wifi-net-device.h"
#include "ns3/wifi-phy.h"
#include "ns3/wifi-psdu.h"
#include "ns3/wifi-tx-vector.h"

#include <gsl/gsl_errno.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <iomanip>
#include <sstream>
#include <tuple>

namespace netsim
{

using namespace ns3;
using Update = rosnetsim::NetworkUpdate;

namespace
{

// The EtherType the injected packets carry (IEEE's local experimental one).
constexpr uint16_t kProtocol = 0x88B5;

// DropReason values (msg/rosnetsim.proto).
constexpr int kUnspecified = 0, kOutOfRange = 1, kPacketError = 2, kCollision = 3, kHalfDuplex = 4, kQueueFull = 5,
              kRetryLimit = 6;
// A receiver's PHY saw the frame but could not detect its preamble: too weak or drowned.
constexpr int kWeak = 100;

// Below this received power a Wi-Fi frame is not even detected: the minimum RSSI of ns-3's
// default preamble detection model (ThresholdPreambleDetectionModel::MinimumRssi).
constexpr double kWifiMinRssiDbm = -82.0;
// ... and below this SNR (its Threshold default).
constexpr double kWifiMinSnrDb = 4.0;
// Below this SINR UanPhyGen does not lock on a packet (its RxThreshold default).
constexpr double kUanRxThresholdDb = 10.0;

// ChannelData's arrivals: 8 values each (msg/rosnetsim.proto), at most 256 per path (the
// physics side's MAX_ARRIVALS_PER_PATH); delays within an hour (ns-3 keeps time in 64-bit ns),
// paths within 1e7 m (as node coordinates), amplitudes re 1 m within 1e6, bounce counts whole
// numbers to 1e6.
constexpr int kArrivalValues = 8;
constexpr int kMaxArrivalsPerPath = 256;
constexpr double kMaxArrivalDelayS = 3600.0, kMaxArrivalAmplitude = 1e6, kMaxArrivalPathM = 1e7, kMaxBounces = 1e6;

// The adapter's sequence number of a transmission, carried by every injected packet.
class SeqTag : public Tag
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("netsim::SeqTag").SetParent<Tag>().AddConstructor<SeqTag>();
        return tid;
    }
    TypeId GetInstanceTypeId() const override { return GetTypeId(); }
    uint32_t GetSerializedSize() const override { return 8; }
    void Serialize(TagBuffer b) const override { b.WriteU64(seq); }
    void Deserialize(TagBuffer b) override { seq = b.ReadU64(); }
    void Print(std::ostream& os) const override { os << "seq=" << seq; }
    uint64_t seq = 0;
};

int
FromMacDrop(WifiMacDropReason r)
{
    switch (r)
    {
    case WIFI_MAC_DROP_FAILED_ENQUEUE:
        return kQueueFull;
    case WIFI_MAC_DROP_REACHED_RETRY_LIMIT:
        return kRetryLimit;
    default:
        return kUnspecified;
    }
}

int
FromPhyDrop(WifiPhyRxfailureReason r)
{
    switch (r)
    {
    case FILTERED:
        return -1; // not for this receiver
    case TXING:
    case RECEPTION_ABORTED_BY_TX:
        return kHalfDuplex;
    case RXING:
    case BUSY_DECODING_PREAMBLE:
    case PREAMBLE_DETECTION_PACKET_SWITCH:
    case FRAME_CAPTURE_PACKET_SWITCH:
        return kCollision;
    case PREAMBLE_DETECT_FAILURE:
        return kWeak;
    default:
        return kPacketError;
    }
}

void
OnDroppedMpdu(Adapter* a, uint32_t node, WifiMacDropReason r, Ptr<const WifiMpdu> mpdu)
{
    if (r == WIFI_MAC_DROP_EXPIRED_LIFETIME)
        a->WifiExpired(node, mpdu->GetPacket());
    else
        a->WifiMacDropped(node, FromMacDrop(r), mpdu->GetPacket());
}

void
OnMacTxDrop(Adapter* a, uint32_t node, Ptr<const Packet> p)
{
    a->WifiMacDropped(node, kQueueFull, p);
}

void
OnEnqueue(Adapter* a, Ptr<const WifiMpdu> mpdu)
{
    a->WifiEnqueued(mpdu->GetPacket());
}

void
OnQueueDrop(Adapter* a, uint32_t node, Ptr<const WifiMpdu> mpdu)
{
    a->WifiMacDropped(node, kQueueFull, mpdu->GetPacket());
}

void
OnQueueExpired(Adapter* a, uint32_t node, Ptr<const WifiMpdu> mpdu)
{
    a->WifiExpired(node, mpdu->GetPacket());
}

void
OnPhyTxPsduBegin(Adapter* a, WifiConstPsduMap psdus, WifiTxVector, double)
{
    for (const auto& [sta, psdu] : psdus)
        for (const auto& mpdu : *psdu)
            a->WifiAired(mpdu->GetPacket());
}

void
OnPhyRxDrop(Adapter* a, uint32_t node, Ptr<const Packet> p, WifiPhyRxfailureReason r)
{
    int reason = FromPhyDrop(r);
    if (reason >= 0)
    {
        a->WifiPhyRxDrop(node, p, reason);
    }
}

void
OnPhyTxEnd(Adapter* a, uint32_t node, Ptr<const Packet> p)
{
    a->WifiPhyTxEnd(node, p);
}

void
OnUanRxError(Adapter* a, uint32_t node, Ptr<const Packet> p, double, UanTxMode)
{
    a->UanRxError(node, p);
}

template <typename T>
void
Connect(Ptr<T> object, const std::string& source, const CallbackBase& cb)
{
    if (!object->TraceConnectWithoutContext(source, cb))
    {
        throw std::invalid_argument("ns-3 has no trace source " + source + " on " + object->GetInstanceTypeId().GetName());
    }
}

std::string
InWindow(uint32_t k)
{
    return "window " + std::to_string(k) + ": ";
}

// A value as the message names it: shortest round-trip form, nan and inf as such.
std::string
Show(double v)
{
    std::ostringstream os;
    os << std::setprecision(17) << v;
    return os.str();
}

} // namespace

Adapter::Adapter(const Settings& s)
    : settings_(s)
{
    // ns-3's DSSS error model integrates with GSL, whose default error handler aborts the
    // process when an integral does not converge; an error code is enough.
    gsl_set_error_handler_off();
    if (s.nodes == 0 || s.window_ns == 0)
    {
        throw std::invalid_argument("--nodes and --windowNs must be positive");
    }
    for (uint32_t n : s.wifi.nodes)
    {
        if (n >= s.nodes)
            throw std::invalid_argument("--wifiNodes names node " + std::to_string(n) + " but there are " + std::to_string(s.nodes));
    }
    for (uint32_t n : s.uan.nodes)
    {
        if (n >= s.nodes)
            throw std::invalid_argument("--uanNodes names node " + std::to_string(n) + " but there are " + std::to_string(s.nodes));
    }
    nodes_.Create(s.nodes);
    MobilityHelper mobility;
    mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel");
    mobility.Install(nodes_);
    wifi_dev_.assign(s.nodes, nullptr);
    uan_dev_.assign(s.nodes, nullptr);
    BuildWifi();
    BuildUan();
}

NodeContainer
Adapter::Members(const std::vector<uint32_t>& indices) const
{
    NodeContainer members;
    for (uint32_t n : indices)
    {
        members.Add(nodes_.Get(n));
    }
    return members;
}

void
Adapter::BuildWifi()
{
    const WifiSettings& w = settings_.wifi;
    if (w.nodes.empty())
    {
        return;
    }
    WifiRadio radio = InstallWifi(w, Members(w.nodes), &losses_);
    wifi_loss_ = radio.loss;
    // The link state's rate and PER come from the PHY's own error model and modes.
    Ptr<WifiPhy> phy = DynamicCast<WifiNetDevice>(radio.devices.Get(0))->GetPhy();
    wifi_errors_ = CreateObject<TableBasedErrorRateModel>();
    for (const WifiMode& m : phy->GetModeList())
        wifi_modes_.push_back(m);
    for (const WifiMode& m : phy->GetMcsList(WIFI_MOD_CLASS_HT))
        wifi_modes_.push_back(m);
    if (!w.data_mode.empty())
        wifi_modes_ = {WifiMode(w.data_mode)};
    NetDeviceContainer& devices = radio.devices;
    for (uint32_t i = 0; i < devices.GetN(); ++i)
    {
        uint32_t node = w.nodes[i];
        Ptr<WifiNetDevice> dev = DynamicCast<WifiNetDevice>(devices.Get(i));
        wifi_dev_[node] = dev;
        dev->SetReceiveCallback(MakeCallback(&Adapter::Received, this));
        Connect(dev->GetMac(), "DroppedMpdu", MakeBoundCallback(&OnDroppedMpdu, this, node));
        Connect(dev->GetMac(), "MacTxDrop", MakeBoundCallback(&OnMacTxDrop, this, node));
        // A full transmit queue refuses the MPDU (not every refusal reaches a trace: Transmit
        // checks that each packet was queued); one that waited past its lifetime leaves it.
        for (AcIndex ac : {AC_BE, AC_BK, AC_VI, AC_VO, AC_BE_NQOS})
        {
            if (Ptr<WifiMacQueue> queue = dev->GetMac()->GetTxopQueue(ac))
            {
                Connect(queue, "DropBeforeEnqueue", MakeBoundCallback(&OnQueueDrop, this, node));
                Connect(queue, "Expired", MakeBoundCallback(&OnQueueExpired, this, node));
                Connect(queue, "Enqueue", MakeBoundCallback(&OnEnqueue, this));
            }
        }
        Connect(dev->GetPhy(), "PhyRxDrop", MakeBoundCallback(&OnPhyRxDrop, this, node));
        Connect(dev->GetPhy(), "PhyTxEnd", MakeBoundCallback(&OnPhyTxEnd, this, node));
        Connect(dev->GetPhy(), "PhyTxPsduBegin", MakeBoundCallback(&OnPhyTxPsduBegin, this));
    }
}

void
Adapter::BuildUan()
{
    const UanSettings& u = settings_.uan;
    if (u.nodes.empty())
    {
        return;
    }
    if (!(u.rate_bps > 0) || !(u.frequency_khz > 0) || !(u.bandwidth_khz > 0))
    {
        throw std::invalid_argument("--uanRateBps, --uanFrequencyKhz and --uanBandwidthKhz must be positive");
    }
    uan_mode_ = UanTxModeFactory::CreateMode(UanTxMode::PSK, static_cast<uint32_t>(u.rate_bps), static_cast<uint32_t>(u.rate_bps),
                                             static_cast<uint32_t>(u.frequency_khz * 1000.0),
                                             static_cast<uint32_t>(u.bandwidth_khz * 1000.0), 2, "netsim-psk");
    UanModesList modes;
    modes.AppendMode(uan_mode_);
    uan_prop_ = CreateObject<HopUanPropModel>();
    uan_prop_->SetLosses(&losses_);
    uan_prop_->SetTraces(&traces_);
    uan_prop_->SetSpreading(u.spreading);
    uan_noise_ = CreateObject<UanNoiseModelDefault>();
    Ptr<UanChannel> channel = CreateObject<UanChannel>();
    channel->SetPropagationModel(uan_prop_);
    channel->SetNoiseModel(uan_noise_);

    UanHelper uan;
    uan.SetPhy("ns3::UanPhyGen", "SupportedModes", UanModesListValue(modes), "TxPower", DoubleValue(u.source_level_db));
    if (u.mac == "aloha")
    {
        uan.SetMac("ns3::UanMacAloha");
    }
    else if (u.mac == "cw")
    {
        uan.SetMac("ns3::UanMacCw");
    }
    else
    {
        throw std::invalid_argument("--uanMac=" + u.mac + ": expected aloha or cw");
    }
    NetDeviceContainer devices = uan.Install(Members(u.nodes), channel);
    uan.AssignStreams(devices, 1000);
    for (uint32_t i = 0; i < devices.GetN(); ++i)
    {
        uint32_t node = u.nodes[i];
        Ptr<UanNetDevice> dev = DynamicCast<UanNetDevice>(devices.Get(i));
        uan_dev_[node] = dev;
        dev->SetReceiveCallback(MakeCallback(&Adapter::Received, this));
        Connect(dev->GetPhy(), "RxError", MakeBoundCallback(&OnUanRxError, this, node));
    }
}

std::string
Adapter::Window(const std::string& request)
{
    Update begin;
    if (!begin.ParseFromString(request))
    {
        throw ProtocolError(InWindow(next_window_) + "the request (" + std::to_string(request.size()) + " bytes) is not a NetworkUpdate");
    }
    if (begin.msg_type() != Update::BEGIN || begin.time_val() != next_window_)
    {
        throw ProtocolError(InWindow(next_window_) + "expected BEGIN for window " + std::to_string(next_window_) + ", got " +
                            (begin.msg_type() == Update::BEGIN ? "BEGIN" : "END") + " for window " + std::to_string(begin.time_val()));
    }
    const uint32_t k = begin.time_val();
    const int n = begin.pkt_id_size();
    auto check_len = [&](int len, const char* field) {
        if (len != n)
            throw ProtocolError(InWindow(k) + field + " has " + std::to_string(len) + " entries, pkt_id " + std::to_string(n) +
                                " (this adapter needs pkt_time_ns, src_node and dst_node)");
    };
    check_len(begin.src_ip_size(), "src_ip");
    check_len(begin.dst_ip_size(), "dst_ip");
    check_len(begin.pkt_lengths_size(), "pkt_lengths");
    check_len(begin.pkt_time_ns_size(), "pkt_time_ns");
    check_len(begin.src_node_size(), "src_node");
    check_len(begin.dst_node_size(), "dst_node");
    if (begin.multicast_size() != 0)
    {
        check_len(begin.multicast_size(), "multicast");
    }
    std::vector<Entry> entries;
    entries.reserve(n);
    for (int i = 0; i < n; ++i)
    {
        Entry e{begin.pkt_id(i), begin.src_ip(i), begin.dst_ip(i), begin.pkt_lengths(i), begin.src_node(i), begin.dst_node(i),
                begin.pkt_time_ns(i), begin.multicast_size() != 0 && begin.multicast(i)};
        if (e.src >= settings_.nodes || e.dst >= settings_.nodes || e.src == e.dst)
        {
            throw ProtocolError(InWindow(k) + "entry " + std::to_string(i) + ": src_node " + std::to_string(e.src) + ", dst_node " +
                                std::to_string(e.dst) + " (there are " + std::to_string(settings_.nodes) + " nodes)");
        }
        entries.push_back(e);
    }
    std::optional<rosnetsim::ChannelData> channel;
    if (!begin.channel_data().empty())
    {
        rosnetsim::ChannelData c;
        if (!c.ParseFromString(begin.channel_data()))
        {
            throw ProtocolError(InWindow(k) + "channel_data is not a ChannelData");
        }
        if (c.node_list_size() != static_cast<int>(7 * settings_.nodes))
        {
            throw ProtocolError(InWindow(k) + "channel_data.node_list has " + std::to_string(c.node_list_size()) + " values, expected 7 per node (" +
                                std::to_string(settings_.nodes) + " nodes)");
        }
        for (int i = 0; i < c.node_list_size(); ++i)
        {
            // Poses within 10,000 km of the origin (ns-3's models take any finite value, but
            // their integrals do not converge on absurd ones).
            if (!(std::fabs(c.node_list(i)) <= 1e7))
            {
                throw ProtocolError(InWindow(k) + "channel_data.node_list[" + std::to_string(i) + "] = " + std::to_string(c.node_list(i)) +
                                    " is not a finite coordinate within 1e7 m");
            }
        }
        for (int i = 0; i < c.path_details_size(); ++i)
        {
            const auto& p = c.path_details(i);
            if (p.ids_size() != 2 || p.ids(0) >= settings_.nodes || p.ids(1) >= settings_.nodes || p.hop_points_size() % 4 != 0)
            {
                throw ProtocolError(InWindow(k) + "channel_data.path_details[" + std::to_string(i) + "]: ids must name two nodes and hop_points come in fours");
            }
            for (int h = 3; h < p.hop_points_size(); h += 4)
            {
                if (!(p.hop_points(h) >= 0.0 && p.hop_points(h) <= 1e4))
                {
                    throw ProtocolError(InWindow(k) + "channel_data.path_details[" + std::to_string(i) + "].hop_points[" + std::to_string(h) +
                                        "]: a loss of " + std::to_string(p.hop_points(h)) + " dB (0 to 10000)");
                }
            }
            CheckArrivals(k, i, p);
        }
        channel = std::move(c);
    }

    end_.Clear();
    end_.set_msg_type(Update::END);
    end_.set_time_val(k);
    Inject(entries);
    if (k > 0)
    {
        // ns-3 runs [(k-1)W, kW), up to and including kW - 1 ns, with window k-1's channel.
        Time until = NanoSeconds(static_cast<int64_t>(k) * static_cast<int64_t>(settings_.window_ns) - 1);
        Simulator::Stop(until - Simulator::Now());
        Simulator::Run();
    }
    if (channel)
    {
        // Window k's channel, for ns-3's next interval [kW, (k+1)W) and the link state.
        ApplyChannel(*channel);
        have_channel_ = true;
    }
    ReportLinks();
    ++next_window_;
    return end_.SerializeAsString();
}

void
Adapter::CheckArrivals(uint32_t k, int i, const rosnetsim::PathDetails& p) const
{
    std::string where = InWindow(k) + "channel_data.path_details[" + std::to_string(i) + "]";
    if (!p.traced())
    {
        if (p.arrivals_size() > 0)
        {
            throw ProtocolError(where + ": " + std::to_string(p.arrivals_size()) + " arrivals values on a pair that is not traced");
        }
        return;
    }
    if (p.arrivals_size() % kArrivalValues != 0)
    {
        throw ProtocolError(where + ".arrivals has " + std::to_string(p.arrivals_size()) + " values, expected 8 per arrival");
    }
    if (p.arrivals_size() / kArrivalValues > kMaxArrivalsPerPath)
    {
        throw ProtocolError(where + ".arrivals lists " + std::to_string(p.arrivals_size() / kArrivalValues) + " arrivals, at most " +
                            std::to_string(kMaxArrivalsPerPath));
    }
    // Per value of an arrival: its name and the range it must lie in.
    struct Bound
    {
        const char* name;
        double lo, hi;
    };
    static const Bound bounds[kArrivalValues] = {
        {"delay_s", 0.0, kMaxArrivalDelayS},   {"amplitude", 0.0, kMaxArrivalAmplitude}, {"phase_rad", -1e6, 1e6},
        {"launch_deg", -180.0, 180.0},         {"arrival_deg", -180.0, 180.0},           {"path_m", 0.0, kMaxArrivalPathM},
        {"surface_bounces", 0.0, kMaxBounces}, {"bottom_bounces", 0.0, kMaxBounces},
    };
    for (int j = 0; j < p.arrivals_size(); ++j)
    {
        const Bound& b = bounds[j % kArrivalValues];
        double v = p.arrivals(j);
        bool whole = j % kArrivalValues < 6 || v == std::floor(v);
        if (!(v >= b.lo && v <= b.hi) || !whole)
        {
            std::ostringstream range;
            range << b.lo << " to " << b.hi;
            throw ProtocolError(where + ".arrivals[" + std::to_string(j) + "]: " + b.name + " of arrival " + std::to_string(j / kArrivalValues) +
                                " = " + Show(v) + " (" + (j % kArrivalValues < 6 ? "finite, " : "a whole number, ") + range.str() + ")");
        }
    }
}

Ptr<MobilityModel>
Adapter::Mobility(uint32_t node) const
{
    return nodes_.Get(node)->GetObject<MobilityModel>();
}

double
Adapter::WifiRxDbm(uint32_t a, uint32_t b) const
{
    return wifi_loss_->CalcRxPower(settings_.wifi.tx_power_dbm, Mobility(a), Mobility(b));
}

double
Adapter::UanSnrDb(uint32_t a, uint32_t b) const
{
    const UanSettings& u = settings_.uan;
    double noise_db = uan_noise_->GetNoiseDbHz(u.frequency_khz) + 10.0 * std::log10(u.bandwidth_khz * 1000.0);
    return u.source_level_db - uan_prop_->GetPathLossDb(Mobility(a), Mobility(b), uan_mode_) - noise_db;
}

Adapter::LinkView
Adapter::WifiLink(uint32_t a, uint32_t b) const
{
    Ptr<MobilityModel> ma = Mobility(a);
    Ptr<MobilityModel> mb = Mobility(b);
    double rx_dbm = WifiRxDbm(a, b);
    // Thermal noise over 20 MHz plus the receiver's noise figure (YansWifiPhy's noise).
    double snr_db = rx_dbm - (-174.0 + 10.0 * std::log10(20e6) + settings_.wifi.noise_figure_db);
    LinkView v{false, snr_db, 0.0, 1.0, static_cast<uint64_t>(ma->GetDistanceFrom(mb) / 299792458.0 * 1e9)};
    if (rx_dbm < kWifiMinRssiDbm || snr_db < kWifiMinSnrDb)
    {
        return v;
    }
    // The fastest mode that carries a 1000-byte frame with PER <= 10 % (IEEE 802.11's
    // sensitivity criterion), by the PHY's error model; a constant rate manager's one mode. It
    // depends on the SNR alone: computed once per 0.05 dB step (the report's tolerance is 0.1 dB).
    // The error models integrate numerically (GSL, for the DSSS rates); beyond 60 dB every mode
    // is error-free anyway, so the SNR they see is capped there.
    long step = std::lround(std::min(snr_db, 60.0) * 20.0);
    auto cached = wifi_rates_.find(step);
    if (cached == wifi_rates_.end())
    {
        double snr = std::pow(10.0, step / 200.0);
        std::pair<double, double> best{0.0, 1.0}; // rate, PER
        for (const WifiMode& m : wifi_modes_)
        {
            WifiTxVector tx;
            tx.SetMode(m);
            tx.SetChannelWidth(20);
            tx.SetNss(1);
            tx.SetGuardInterval(800);
            tx.SetPreambleType(m.GetModulationClass() == WIFI_MOD_CLASS_HT ? WIFI_PREAMBLE_HT_MF : WIFI_PREAMBLE_LONG);
            double per = 1.0 - wifi_errors_->GetChunkSuccessRate(m, tx, snr, 8000);
            double rate = static_cast<double>(m.GetDataRate(tx));
            if ((per <= 0.1 || wifi_modes_.size() == 1) && rate > best.first)
            {
                best = {rate, per};
            }
        }
        cached = wifi_rates_.emplace(step, best).first;
    }
    v.rate_bps = cached->second.first;
    v.per = cached->second.second;
    v.usable = v.rate_bps > 0.0 && v.per < 1.0;
    return v;
}

Adapter::LinkView
Adapter::UanLink(uint32_t a, uint32_t b) const
{
    double snr_db = UanSnrDb(a, b);
    bool usable = snr_db >= kUanRxThresholdDb;
    // UanPhyPerGenDefault: a packet above its 8 dB threshold is received, below it lost.
    double per = usable && snr_db >= 8.0 ? 0.0 : 1.0;
    Time delay = uan_prop_->GetDelay(Mobility(a), Mobility(b), uan_mode_);
    return LinkView{usable, snr_db, usable ? settings_.uan.rate_bps : 0.0, per, static_cast<uint64_t>(delay.GetNanoSeconds())};
}

void
Adapter::ReportLinks()
{
    if (!have_channel_)
    {
        return; // no pose known yet
    }
    auto changed = [](const LinkView& o, const LinkView& n) {
        double dd = std::fabs(double(n.delay_ns) - double(o.delay_ns));
        return o.usable != n.usable || o.rate_bps != n.rate_bps || std::fabs(n.snr_db - o.snr_db) >= 0.1 ||
               (std::fabs(n.per - o.per) >= 0.001 && std::fabs(n.per - o.per) >= 0.01 * std::max(n.per, o.per)) ||
               dd >= std::max(1000.0, 0.001 * double(o.delay_ns));
    };
    for (uint32_t a = 0; a < settings_.nodes; ++a)
    {
        for (uint32_t b = 0; b < settings_.nodes; ++b)
        {
            std::optional<LinkView> v;
            if (a == b)
                continue;
            if (wifi_dev_[a] && wifi_dev_[b])
                v = WifiLink(a, b);
            else if (uan_dev_[a] && uan_dev_[b])
                v = UanLink(a, b);
            if (!v)
                continue;
            auto key = std::make_pair(a, b);
            auto it = reported_.find(key);
            if (it != reported_.end() && !changed(it->second, *v))
                continue;
            reported_[key] = *v;
            rosnetsim::LinkState* s = end_.add_link_state();
            s->set_src_node(a);
            s->set_dst_node(b);
            s->set_usable(v->usable);
            if (std::isfinite(v->snr_db))
                s->set_snr_db(v->snr_db);
            s->set_rate_bps(v->rate_bps);
            s->set_per(v->per);
            s->set_delay_ns(v->delay_ns);
        }
    }
}

void
Adapter::ApplyChannel(const rosnetsim::ChannelData& c)
{
    for (uint32_t i = 0; i < settings_.nodes; ++i)
    {
        Ptr<MobilityModel> m = Mobility(i);
        m->SetPosition(Vector(c.node_list(7 * i), c.node_list(7 * i + 1), c.node_list(7 * i + 2)));
    }
    losses_.Clear();
    traces_.Clear();
    for (const auto& p : c.path_details())
    {
        if (p.traced())
        {
            std::vector<Arrival>& arrivals = traces_.Trace(p.ids(0), p.ids(1));
            for (int j = 0; j + kArrivalValues <= p.arrivals_size(); j += kArrivalValues)
            {
                arrivals.push_back(Arrival{p.arrivals(j), p.arrivals(j + 1), p.arrivals(j + 2), p.arrivals(j + 5)});
            }
        }
        if (p.los())
        {
            continue;
        }
        double loss = 0.0;
        for (int h = 3; h < p.hop_points_size(); h += 4)
        {
            loss += p.hop_points(h);
        }
        losses_.Set(p.ids(0), p.ids(1), loss);
    }
}

void
Adapter::Inject(const std::vector<Entry>& entries)
{
    // Entries with the same packet id, sender and capture time are one packet (a group
    // packet has one entry per receiver).
    std::vector<std::vector<const Entry*>> packets;
    std::map<std::tuple<uint32_t, uint32_t, uint64_t>, size_t> index;
    for (const Entry& e : entries)
    {
        auto key = std::make_tuple(e.pkt_id, e.src, e.time_ns);
        auto [it, fresh] = index.emplace(key, packets.size());
        if (fresh)
        {
            packets.emplace_back();
        }
        packets[it->second].push_back(&e);
    }
    for (const auto& copies : packets)
    {
        const Entry& first = *copies.front();
        bool group = copies.size() > 1 || first.multicast;
        std::map<Medium, Transmission> by_medium;
        for (const Entry* e : copies)
        {
            ++counts_.copies;
            std::optional<Medium> medium;
            if (wifi_dev_[e->src] && wifi_dev_[e->dst])
                medium = Medium::Wifi;
            else if (uan_dev_[e->src] && uan_dev_[e->dst])
                medium = Medium::Uan;
            if (!medium)
            {
                end_.add_drop_pkt_id(e->pkt_id);
                end_.add_drop_node(e->dst);
                end_.add_drop_reason(static_cast<Update::DropReason>(kOutOfRange));
                ++counts_.dropped;
                continue;
            }
            auto [it, fresh] = by_medium.try_emplace(*medium);
            Transmission& t = it->second;
            if (fresh)
            {
                t = Transmission{first.pkt_id, first.src, first.src_ip, first.length, group, *medium, {}, 0};
            }
            t.copies.push_back(Copy{e->dst, e->dst_ip});
            ++t.open;
        }
        Time at = std::max(NanoSeconds(static_cast<int64_t>(first.time_ns)), Simulator::Now());
        for (auto& [medium, t] : by_medium)
        {
            uint64_t seq = next_seq_++;
            pending_.emplace(seq, std::move(t));
            Simulator::Schedule(at - Simulator::Now(), &Adapter::Transmit, this, seq);
        }
    }
}

Ptr<NetDevice>
Adapter::Device(Medium m, uint32_t node) const
{
    return m == Medium::Wifi ? wifi_dev_[node] : uan_dev_[node];
}

void
Adapter::Transmit(uint64_t seq)
{
    auto it = pending_.find(seq);
    if (it == pending_.end())
    {
        return;
    }
    Transmission& t = it->second;
    Ptr<NetDevice> dev = Device(t.medium, t.src_node);
    if (t.length > dev->GetMtu())
    {
        // Larger than the device's MTU (an offloaded super-packet): ns-3 cannot send it.
        ++counts_.too_big;
        DropAll(seq, kUnspecified);
        return;
    }
    Ptr<Packet> p = Create<Packet>(t.length);
    SeqTag tag;
    tag.seq = seq;
    p->AddPacketTag(tag);
    Address dest = t.group ? dev->GetBroadcast() : Device(t.medium, t.copies.front().dst_node)->GetAddress();
    enqueued_ = false;
    bool sent = dev->Send(p, dest, kProtocol);
    if (!sent || (t.medium == Medium::Wifi && !enqueued_))
    {
        // Refused: the UAN MAC is busy, or the Wi-Fi MAC queue is full.
        DropAll(seq, kQueueFull);
        return;
    }
    if (t.medium == Medium::Uan)
    {
        // UAN has no acknowledgements: a copy not received once the signal has passed its
        // receiver is lost. Airtime (with a margin for the MAC header) + the longest delay + 0.5 s.
        Time wait = Seconds((t.length + 16) * 8.0 / settings_.uan.rate_bps) + Seconds(0.5);
        Ptr<MobilityModel> src = Mobility(t.src_node);
        Time longest = Seconds(0);
        for (const Copy& c : t.copies)
        {
            longest = std::max(longest, uan_prop_->GetDelay(src, Mobility(c.dst_node), uan_mode_));
        }
        Simulator::Schedule(wait + longest, &Adapter::ResolveRest, this, seq, kPacketError);
    }
}

std::optional<uint64_t>
Adapter::SeqOf(Ptr<const Packet> p) const
{
    SeqTag tag;
    if (p && p->PeekPacketTag(tag))
    {
        return tag.seq;
    }
    return std::nullopt;
}

bool
Adapter::Received(Ptr<NetDevice> dev, Ptr<const Packet> p, uint16_t, const Address&)
{
    auto seq = SeqOf(p);
    if (!seq)
    {
        ++counts_.untagged;
        return true;
    }
    Deliver(*seq, dev->GetNode()->GetId());
    return true;
}

void
Adapter::Deliver(uint64_t seq, uint32_t node)
{
    auto it = pending_.find(seq);
    if (it == pending_.end())
    {
        return; // a duplicate (already ended)
    }
    Transmission& t = it->second;
    for (Copy& c : t.copies)
    {
        if (c.dst_node == node && c.open)
        {
            c.open = false;
            --t.open;
            end_.add_clear_pkt_id(t.pkt_id);
            end_.add_clear_src_ip(t.src_ip);
            end_.add_clear_dst_ip(c.dst_ip);
            end_.add_rx_ip(c.dst_ip);
            end_.add_ber(0.0);
            end_.add_rx_time_ns(static_cast<uint64_t>(Simulator::Now().GetNanoSeconds()) + settings_.window_ns);
            end_.add_rx_node(node);
            ++counts_.delivered;
            break;
        }
    }
    if (t.open == 0)
    {
        pending_.erase(it);
    }
}

void
Adapter::Drop(uint64_t seq, size_t i, int reason)
{
    Transmission& t = pending_.at(seq);
    Copy& c = t.copies[i];
    if (!c.open)
    {
        return;
    }
    c.open = false;
    --t.open;
    end_.add_drop_pkt_id(t.pkt_id);
    end_.add_drop_node(c.dst_node);
    end_.add_drop_reason(static_cast<Update::DropReason>(reason));
    ++counts_.dropped;
}

void
Adapter::DropAll(uint64_t seq, int reason)
{
    EndOpenCopies(seq, [reason](const Transmission&, const Copy&) { return reason; });
}

void
Adapter::ResolveRest(uint64_t seq, int fallback)
{
    EndOpenCopies(seq, [this, fallback](const Transmission& t, const Copy& c) { return ReasonForLostCopy(t, c, fallback); });
}

void
Adapter::EndOpenCopies(uint64_t seq, const std::function<int(const Transmission&, const Copy&)>& reason_of)
{
    auto it = pending_.find(seq);
    if (it == pending_.end())
    {
        return;
    }
    Transmission& t = it->second;
    for (size_t i = 0; i < t.copies.size(); ++i)
    {
        if (t.copies[i].open)
        {
            Drop(seq, i, reason_of(t, t.copies[i]));
        }
    }
    pending_.erase(it);
}

bool
Adapter::InRange(Medium m, uint32_t a, uint32_t b) const
{
    return m == Medium::Wifi ? WifiRxDbm(a, b) >= kWifiMinRssiDbm : UanSnrDb(a, b) >= kUanRxThresholdDb;
}

int
Adapter::ReasonForLostCopy(const Transmission& t, const Copy& c, int otherwise) const
{
    if (c.phy_reason >= 0 && c.phy_reason != kWeak)
    {
        return c.phy_reason;
    }
    if (!InRange(t.medium, t.src_node, c.dst_node))
    {
        return kOutOfRange;
    }
    return c.phy_reason == kWeak ? kCollision : otherwise;
}

void
Adapter::WifiMacDropped(uint32_t node, int reason, Ptr<const Packet> p)
{
    auto seq = SeqOf(p);
    if (!seq)
    {
        return;
    }
    auto it = pending_.find(*seq);
    if (it == pending_.end() || it->second.src_node != node)
    {
        return;
    }
    // Retries exhausted: why the receiver missed it decides; a refusal is what it is.
    if (reason == kRetryLimit)
        ResolveRest(*seq, kRetryLimit);
    else
        DropAll(*seq, reason);
}

void
Adapter::WifiAired(Ptr<const Packet> p)
{
    if (auto seq = SeqOf(p))
    {
        if (auto it = pending_.find(*seq); it != pending_.end())
            it->second.aired = true;
    }
}

// A frame past its lifetime (500 ms): one put on the air was given up by its MAC, as at the
// retry limit — as the embedded 802.11 medium gives up a frame under a Block Ack agreement —
// while one that never went out waited in too long a queue.
void
Adapter::WifiExpired(uint32_t node, Ptr<const Packet> p)
{
    auto seq = SeqOf(p);
    auto it = seq ? pending_.find(*seq) : pending_.end();
    if (it != pending_.end())
        WifiMacDropped(node, it->second.aired ? kRetryLimit : kQueueFull, p);
}

void
Adapter::WifiEnqueued(Ptr<const Packet> p)
{
    enqueued_ = true;
}

void
Adapter::WifiPhyRxDrop(uint32_t node, Ptr<const Packet> p, int reason)
{
    auto seq = SeqOf(p);
    if (!seq)
    {
        return;
    }
    auto it = pending_.find(*seq);
    if (it == pending_.end())
    {
        return;
    }
    for (Copy& c : it->second.copies)
    {
        if (c.dst_node == node && c.open)
        {
            c.phy_reason = reason;
        }
    }
}

void
Adapter::WifiPhyTxEnd(uint32_t node, Ptr<const Packet> p)
{
    auto seq = SeqOf(p);
    if (!seq)
    {
        return;
    }
    auto it = pending_.find(*seq);
    if (it == pending_.end() || !it->second.group || it->second.src_node != node)
    {
        return;
    }
    // A group frame is sent once, unacknowledged: a receiver that has not taken it 1 ms after
    // its end (propagation over 300 km) has lost it.
    Simulator::Schedule(MilliSeconds(1), &Adapter::ResolveRest, this, *seq, kPacketError);
}

void
Adapter::UanRxError(uint32_t node, Ptr<const Packet> p)
{
    WifiPhyRxDrop(node, p, kPacketError);
}

} // namespace netsim

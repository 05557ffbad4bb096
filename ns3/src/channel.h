// The window's channel as the coordinators describe it (ChannelData), and the two ns-3
// propagation models that add its obstruction ("hop") losses on top of ns-3's own path loss:
// one for Wi-Fi (a PropagationLossModel, chained after log-distance) and one for UAN (a
// UanPropModel wrapping Thorp). This is the paper's LOS/NLOS abstraction: the physics side
// decides what lies between two vehicles, ns-3 decides what the radio or modem makes of it.
// For an acoustic pair the physics side's beam tracer traced, the UAN model answers from the
// pair's arrivals instead (power-delay profile, first-arrival delay, summed arrival energy).
#pragma once

#include "ns3/mobility-model.h"
#include "ns3/propagation-loss-model.h"
#include "ns3/uan-prop-model-thorp.h"
#include "ns3/uan-prop-model.h"
#include "ns3/uan-tx-mode.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace netsim
{

// Obstruction loss per pair of nodes (a < b); a pair in line of sight or not listed has none.
class HopLosses
{
  public:
    void Clear() { loss_db_.clear(); }
    void Set(uint32_t a, uint32_t b, double db) { loss_db_[Key(a, b)] = db; }
    double Get(uint32_t a, uint32_t b) const
    {
        auto it = loss_db_.find(Key(a, b));
        return it == loss_db_.end() ? 0.0 : it->second;
    }

  private:
    static std::pair<uint32_t, uint32_t> Key(uint32_t a, uint32_t b) { return a < b ? std::make_pair(a, b) : std::make_pair(b, a); }
    std::map<std::pair<uint32_t, uint32_t>, double> loss_db_;
};

// One path of a traced acoustic pair (ChannelData's PathDetails.arrivals): its delay (s), its
// pressure amplitude relative to the source's at 1 m without volume absorption, its phase (rad)
// and its length along the ray (m).
struct Arrival
{
    double delay_s, amplitude, phase_rad, path_m;
};

// The arrivals of each acoustic pair (a < b; reciprocity makes one list serve both directions)
// the physics side traced this window. A pair not listed was not traced: the straight model
// answers for it. A traced pair with no arrival is a shadow zone. Each pair's list keeps its
// storage from one window to the next.
class AcousticTraces
{
  public:
    void Clear()
    {
        for (auto& [key, trace] : traces_)
        {
            trace.traced = false;
            trace.arrivals.clear();
        }
    }
    // Marks the pair traced with no arrival yet; the caller appends its arrivals.
    std::vector<Arrival>& Trace(uint32_t a, uint32_t b)
    {
        Entry& e = traces_[Key(a, b)];
        e.traced = true;
        e.arrivals.clear();
        return e.arrivals;
    }
    // The pair's arrivals if it was traced, else null.
    const std::vector<Arrival>* Get(uint32_t a, uint32_t b) const
    {
        auto it = traces_.find(Key(a, b));
        return it != traces_.end() && it->second.traced ? &it->second.arrivals : nullptr;
    }

  private:
    struct Entry
    {
        bool traced = false;
        std::vector<Arrival> arrivals;
    };
    static std::pair<uint32_t, uint32_t> Key(uint32_t a, uint32_t b) { return a < b ? std::make_pair(a, b) : std::make_pair(b, a); }
    std::map<std::pair<uint32_t, uint32_t>, Entry> traces_;
};

// Thorp's volume absorption (dB/km) at `freq_khz`, the form of ns-3's UanPropModelThorp:
// 0.11 f²/(1 + f²) + 44 f²/(4100 + f²) + 2.75e-4 f² + 0.003 from 0.4 kHz up (the Rust side's
// model::acoustic::absorption_thorp_db_per_km), 0.002 + 0.11 f/(1 + f) + 0.011 f below.
double ThorpDbPerKm(double freq_khz);

// The node a mobility model belongs to (every node has one, aggregated).
uint32_t NodeOf(ns3::Ptr<ns3::MobilityModel> m);

// Wi-Fi: subtracts the pair's hop losses (chain it after ns-3's path-loss model).
class HopLossModel : public ns3::PropagationLossModel
{
  public:
    static ns3::TypeId GetTypeId();
    void SetLosses(const HopLosses* losses) { losses_ = losses; }

  private:
    double DoCalcRxPower(double txPowerDbm, ns3::Ptr<ns3::MobilityModel> a, ns3::Ptr<ns3::MobilityModel> b) const override;
    int64_t DoAssignStreams(int64_t) override { return 0; }
    const HopLosses* losses_ = nullptr;
};

// UAN: ns-3's Thorp model (spreading + Thorp absorption, delay at 1500 m/s) plus the pair's
// hop losses, for a pair not traced. For a traced pair, its arrivals, each absorbed by Thorp at
// the carrier over its own path length (amplitude Aᵢ·10^(−α·pathᵢ/20 000), α in dB/km):
// - GetPathLossDb: −10 log10 Σ|aᵢ|², the loss of the summed arrival energy (+inf with no
//   arrival: nothing is received);
// - GetDelay: the first arrival's delay;
// - GetPdp: one tap per arrival, aᵢ·e^{iφᵢ} (pressure re the source's at 1 m), at its delay
//   after the first arrival on a grid of 1/bandwidth (coarser when the arrivals span more than
//   kMaxTaps of it); arrivals in one cell add coherently. With no two arrivals in a cell,
//   Σ|tap|² is the received fraction of the source power, the same as GetPathLossDb's.
class HopUanPropModel : public ns3::UanPropModel
{
  public:
    static constexpr uint32_t kMaxTaps = 4096;
    static ns3::TypeId GetTypeId();
    HopUanPropModel();
    void SetLosses(const HopLosses* losses) { losses_ = losses; }
    void SetTraces(const AcousticTraces* traces) { traces_ = traces; }
    void SetSpreading(double k);
    double GetPathLossDb(ns3::Ptr<ns3::MobilityModel> a, ns3::Ptr<ns3::MobilityModel> b, ns3::UanTxMode mode) override;
    ns3::UanPdp GetPdp(ns3::Ptr<ns3::MobilityModel> a, ns3::Ptr<ns3::MobilityModel> b, ns3::UanTxMode mode) override;
    ns3::Time GetDelay(ns3::Ptr<ns3::MobilityModel> a, ns3::Ptr<ns3::MobilityModel> b, ns3::UanTxMode mode) override;

  private:
    const std::vector<Arrival>* Traced(ns3::Ptr<ns3::MobilityModel> a, ns3::Ptr<ns3::MobilityModel> b) const;
    ns3::Ptr<ns3::UanPropModelThorp> thorp_;
    const HopLosses* losses_ = nullptr;
    const AcousticTraces* traces_ = nullptr;
};

} // namespace netsim

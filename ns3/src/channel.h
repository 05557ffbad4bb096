// The window's channel as the coordinators describe it (ChannelData), and the two ns-3
// propagation models that add its obstruction ("hop") losses on top of ns-3's own path loss:
// one for Wi-Fi (a PropagationLossModel, chained after log-distance) and one for UAN (a
// UanPropModel wrapping Thorp). This is the paper's LOS/NLOS abstraction: the physics side
// decides what lies between two vehicles, ns-3 decides what the radio or modem makes of it.
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
// hop losses.
class HopUanPropModel : public ns3::UanPropModel
{
  public:
    static ns3::TypeId GetTypeId();
    HopUanPropModel();
    void SetLosses(const HopLosses* losses) { losses_ = losses; }
    void SetSpreading(double k);
    double GetPathLossDb(ns3::Ptr<ns3::MobilityModel> a, ns3::Ptr<ns3::MobilityModel> b, ns3::UanTxMode mode) override;
    ns3::UanPdp GetPdp(ns3::Ptr<ns3::MobilityModel> a, ns3::Ptr<ns3::MobilityModel> b, ns3::UanTxMode mode) override;
    ns3::Time GetDelay(ns3::Ptr<ns3::MobilityModel> a, ns3::Ptr<ns3::MobilityModel> b, ns3::UanTxMode mode) override;

  private:
    ns3::Ptr<ns3::UanPropModelThorp> thorp_;
    const HopLosses* losses_ = nullptr;
};

} // namespace netsim

#include "channel.h"

#include "ns3/double.h"
#include "ns3/node.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>

namespace netsim
{

using namespace ns3;

double
ThorpDbPerKm(double freq_khz)
{
    double f2 = freq_khz * freq_khz;
    if (freq_khz >= 0.4)
    {
        return 0.11 * f2 / (1.0 + f2) + 44.0 * f2 / (4100.0 + f2) + 2.75e-4 * f2 + 0.003;
    }
    return 0.002 + 0.11 * freq_khz / (1.0 + freq_khz) + 0.011 * freq_khz;
}

namespace
{

// An arrival's pressure amplitude once Thorp's absorption at the carrier has acted over its path.
double
Absorbed(const Arrival& r, double db_per_km)
{
    return r.amplitude * std::pow(10.0, -db_per_km * r.path_m / 20000.0);
}

double
CarrierKhz(const UanTxMode& mode)
{
    return mode.GetCenterFreqHz() / 1000.0;
}

} // namespace

uint32_t
NodeOf(Ptr<MobilityModel> m)
{
    Ptr<Node> node = m->GetObject<Node>();
    return node ? node->GetId() : UINT32_MAX;
}

NS_OBJECT_ENSURE_REGISTERED(HopLossModel);

TypeId
HopLossModel::GetTypeId()
{
    static TypeId tid = TypeId("netsim::HopLossModel")
                            .SetParent<PropagationLossModel>()
                            .SetGroupName("Propagation")
                            .AddConstructor<HopLossModel>();
    return tid;
}

double
HopLossModel::DoCalcRxPower(double txPowerDbm, Ptr<MobilityModel> a, Ptr<MobilityModel> b) const
{
    return losses_ ? txPowerDbm - losses_->Get(NodeOf(a), NodeOf(b)) : txPowerDbm;
}

NS_OBJECT_ENSURE_REGISTERED(HopUanPropModel);

TypeId
HopUanPropModel::GetTypeId()
{
    static TypeId tid = TypeId("netsim::HopUanPropModel")
                            .SetParent<UanPropModel>()
                            .SetGroupName("Uan")
                            .AddConstructor<HopUanPropModel>();
    return tid;
}

HopUanPropModel::HopUanPropModel()
    : thorp_(CreateObject<UanPropModelThorp>())
{
}

void
HopUanPropModel::SetSpreading(double k)
{
    thorp_->SetAttribute("SpreadCoef", DoubleValue(k));
}

const std::vector<Arrival>*
HopUanPropModel::Traced(Ptr<MobilityModel> a, Ptr<MobilityModel> b) const
{
    return traces_ ? traces_->Get(NodeOf(a), NodeOf(b)) : nullptr;
}

double
HopUanPropModel::GetPathLossDb(Ptr<MobilityModel> a, Ptr<MobilityModel> b, UanTxMode mode)
{
    if (const std::vector<Arrival>* arrivals = Traced(a, b))
    {
        double alpha = ThorpDbPerKm(CarrierKhz(mode));
        double energy = 0.0;
        for (const Arrival& r : *arrivals)
        {
            double p = Absorbed(r, alpha);
            energy += p * p;
        }
        return energy > 0.0 ? -10.0 * std::log10(energy) : std::numeric_limits<double>::infinity();
    }
    double hop = losses_ ? losses_->Get(NodeOf(a), NodeOf(b)) : 0.0;
    return thorp_->GetPathLossDb(a, b, mode) + hop;
}

UanPdp
HopUanPropModel::GetPdp(Ptr<MobilityModel> a, Ptr<MobilityModel> b, UanTxMode mode)
{
    const std::vector<Arrival>* arrivals = Traced(a, b);
    if (!arrivals || arrivals->empty())
    {
        return thorp_->GetPdp(a, b, mode);
    }
    double first = arrivals->front().delay_s, last = first;
    for (const Arrival& r : *arrivals)
    {
        first = std::min(first, r.delay_s);
        last = std::max(last, r.delay_s);
    }
    double cell = 1.0 / std::max<double>(mode.GetBandwidthHz(), 1.0);
    cell = std::max(cell, (last - first) / (kMaxTaps - 1));
    auto index = [&](const Arrival& r) {
        return std::min<uint32_t>(static_cast<uint32_t>(std::lround((r.delay_s - first) / cell)), kMaxTaps - 1);
    };
    uint32_t n = 0;
    for (const Arrival& r : *arrivals)
    {
        n = std::max(n, index(r) + 1);
    }
    std::vector<std::complex<double>> amps(n);
    double alpha = ThorpDbPerKm(CarrierKhz(mode));
    for (const Arrival& r : *arrivals)
    {
        amps[index(r)] += std::polar(Absorbed(r, alpha), r.phase_rad);
    }
    return UanPdp(amps, Seconds(cell));
}

Time
HopUanPropModel::GetDelay(Ptr<MobilityModel> a, Ptr<MobilityModel> b, UanTxMode mode)
{
    const std::vector<Arrival>* arrivals = Traced(a, b);
    if (!arrivals || arrivals->empty())
    {
        return thorp_->GetDelay(a, b, mode);
    }
    double first = arrivals->front().delay_s;
    for (const Arrival& r : *arrivals)
    {
        first = std::min(first, r.delay_s);
    }
    return Seconds(first);
}

} // namespace netsim

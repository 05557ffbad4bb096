#include "channel.h"

#include "ns3/double.h"
#include "ns3/node.h"

namespace netsim
{

using namespace ns3;

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

double
HopUanPropModel::GetPathLossDb(Ptr<MobilityModel> a, Ptr<MobilityModel> b, UanTxMode mode)
{
    double hop = losses_ ? losses_->Get(NodeOf(a), NodeOf(b)) : 0.0;
    return thorp_->GetPathLossDb(a, b, mode) + hop;
}

UanPdp
HopUanPropModel::GetPdp(Ptr<MobilityModel> a, Ptr<MobilityModel> b, UanTxMode mode)
{
    return thorp_->GetPdp(a, b, mode);
}

Time
HopUanPropModel::GetDelay(Ptr<MobilityModel> a, Ptr<MobilityModel> b, UanTxMode mode)
{
    return thorp_->GetDelay(a, b, mode);
}

} // namespace netsim

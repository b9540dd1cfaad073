// tcp_cc_link.cc -- ns-3 side of bench/ns3_tcp_compare.py: one bulk TCP flow over a lossy
// point-to-point link, with the congestion control and loss recovery chosen on the command
// line, so that airtrace's scenarios/ns3_lossy_link.toml can be compared with ns-3's TCP
// away from the one point the anchor program (../shared/anchors/ns3/tcp_lossy_link.cc)
// measures.
//
//   n0 (BulkSend) --- p2p, --rate, --delay, DropTail(--queue packets) ---> n1 (PacketSink)
//                                          RateErrorModel on n1's device (data only)
//
//   --tcp=newreno|cubic|bbr   ns3::TcpNewReno, ns3::TcpCubic, ns3::TcpBbr (BBR paced)
//   --sack=1|0                SACK option (ns-3's default on)
//   --per=0.01                packet error rate on the data direction
//   --simTime=1000            simulated seconds;  --RngRun=N picks the random run
//   --trace=FILE              the sender's state on every change, one line each:
//                             "time_s what value" (cwnd, ssthresh, inflight in bytes;
//                             state as ns-3's TcpCongState_t; tx = sequence sent)
//
// Other settings are the airtrace scenario's: 1460-byte segments, delayed ACK every 2,
// 128 KiB buffers, initial window 10, minimum RTO 1 s, timestamps off, no queue disc above
// the device queue. Prints one "RESULT k=v ..." line.
//
// Built against Debian's libns3-dev 3.37 (scripts/install-bench-packages.sh).

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <fstream>
#include <iomanip>
#include <iostream>

using namespace ns3;

namespace
{

uint64_t g_retransmitted = 0; // data segments sent below the highest sequence already sent
uint64_t g_timeouts = 0;      // entries into CA_LOSS (retransmission timeouts)
uint64_t g_recoveries = 0;    // entries into CA_RECOVERY (fast retransmits)
uint64_t g_lost = 0;          // data packets the error model discarded
SequenceNumber32 g_highest(0);
std::ofstream g_trace;        // --trace: the sender's state changes, when asked for

void
Note(const char* what, double value)
{
    if (g_trace.is_open())
    {
        g_trace << Simulator::Now().GetSeconds() << ' ' << what << ' ' << value << '\n';
    }
}

void
OnCwnd(uint32_t, uint32_t now)
{
    Note("cwnd", now);
}

void
OnSsthresh(uint32_t, uint32_t now)
{
    Note("ssthresh", now);
}

void
OnInflight(uint32_t, uint32_t now)
{
    Note("inflight", now);
}

void
OnTx(Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    if (p->GetSize() == 0)
    {
        return;
    }
    SequenceNumber32 end = h.GetSequenceNumber() + p->GetSize();
    Note("tx", h.GetSequenceNumber().GetValue());
    if (h.GetSequenceNumber() < g_highest)
    {
        ++g_retransmitted;
    }
    if (end > g_highest)
    {
        g_highest = end;
    }
}

void
OnCongState(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
{
    Note("state", now);
    g_timeouts += now == TcpSocketState::CA_LOSS;
    g_recoveries += now == TcpSocketState::CA_RECOVERY;
}

void
OnLost(Ptr<const Packet>)
{
    ++g_lost;
}

void
HookSender(Ptr<BulkSendApplication> app)
{
    Ptr<Socket> s = app->GetSocket();
    s->TraceConnectWithoutContext("Tx", MakeCallback(&OnTx));
    s->TraceConnectWithoutContext("CongState", MakeCallback(&OnCongState));
    s->TraceConnectWithoutContext("CongestionWindow", MakeCallback(&OnCwnd));
    s->TraceConnectWithoutContext("SlowStartThreshold", MakeCallback(&OnSsthresh));
    s->TraceConnectWithoutContext("BytesInFlight", MakeCallback(&OnInflight));
}

TypeId
CongestionControl(const std::string& name)
{
    if (name == "newreno")
    {
        return TcpNewReno::GetTypeId();
    }
    if (name == "cubic")
    {
        return TcpCubic::GetTypeId();
    }
    if (name == "bbr")
    {
        return TcpBbr::GetTypeId();
    }
    std::cerr << "unknown --tcp=" << name << " (newreno|cubic|bbr)\n";
    std::exit(2);
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string tcp = "newreno";
    std::string rate = "11Mbps";
    std::string delay = "20ms";
    uint32_t queue = 50;
    double per = 0.01;
    double simTime = 1000.0;
    bool sack = true;
    std::string trace;

    CommandLine cmd(__FILE__);
    cmd.AddValue("tcp", "newreno | cubic | bbr", tcp);
    cmd.AddValue("rate", "link rate", rate);
    cmd.AddValue("delay", "one-way delay", delay);
    cmd.AddValue("queue", "device queue, packets", queue);
    cmd.AddValue("per", "packet error rate on data", per);
    cmd.AddValue("simTime", "simulated seconds", simTime);
    cmd.AddValue("sack", "SACK option", sack);
    cmd.AddValue("trace", "file for the sender's state changes", trace);
    cmd.Parse(argc, argv);
    if (!trace.empty())
    {
        g_trace.open(trace);
        g_trace << std::setprecision(9);
    }

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(CongestionControl(tcp)));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1460));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(128 * 1024));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(128 * 1024));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(1)));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(sack));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(tcp == "bbr"));

    NodeContainer nodes;
    nodes.Create(2);
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue(rate));
    p2p.SetChannelAttribute("Delay", StringValue(delay));
    p2p.SetQueue("ns3::DropTailQueue<Packet>",
                 "MaxSize",
                 QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, queue)));
    NetDeviceContainer devices = p2p.Install(nodes);
    InternetStackHelper().Install(nodes);
    Ipv4AddressHelper addresses;
    addresses.SetBase("10.1.1.0", "255.255.255.0");
    Ipv4InterfaceContainer interfaces = addresses.Assign(devices);
    TrafficControlHelper().Uninstall(devices); // the device queue is the only buffer

    Ptr<RateErrorModel> loss = CreateObject<RateErrorModel>();
    loss->SetUnit(RateErrorModel::ERROR_UNIT_PACKET);
    loss->SetRate(per);
    devices.Get(1)->SetAttribute("ReceiveErrorModel", PointerValue(loss));
    devices.Get(1)->TraceConnectWithoutContext("PhyRxDrop", MakeCallback(&OnLost));

    uint16_t port = 50000;
    BulkSendHelper source("ns3::TcpSocketFactory", InetSocketAddress(interfaces.GetAddress(1), port));
    source.SetAttribute("MaxBytes", UintegerValue(0));
    source.SetAttribute("SendSize", UintegerValue(1460));
    ApplicationContainer sender = source.Install(nodes.Get(0));
    PacketSinkHelper sinkHelper("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sink = sinkHelper.Install(nodes.Get(1));
    sender.Start(Seconds(0));
    sink.Start(Seconds(0));
    Simulator::Schedule(MicroSeconds(1), &HookSender, DynamicCast<BulkSendApplication>(sender.Get(0)));
    Simulator::Stop(Seconds(simTime));
    Simulator::Run();
    uint64_t received = DynamicCast<PacketSink>(sink.Get(0))->GetTotalRx();
    Simulator::Destroy();

    std::cout << std::setprecision(6) << "RESULT tcp=" << tcp << " sack=" << sack << " per=" << per
              << " simTime=" << simTime << " rxBytes=" << received
              << " goodputMbps=" << received * 8.0 / simTime / 1e6 << " lost=" << g_lost
              << " retx=" << g_retransmitted
              << " fastRecov=" << g_recoveries << " rto=" << g_timeouts << "\n";
    return 0;
}

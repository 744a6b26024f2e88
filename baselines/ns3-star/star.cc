// ns-3 reference of the lwIP evaluation's Wi-Fi star (coapcc: docs/performance.md):
// N stations around one IEEE 802.11b access point at 2 Mbit/s (DSSS, constant
// rate, one collision domain, no RTS/CTS), the access point linked to a server
// over 10 Mbit/s; each station opens a TCP connection (ns-3's NewReno, MSS 536)
// to a sink on the server and writes 1024 bytes every 0.4 s, 1000 times.
// Wi-Fi MAC queues hold 8 packets; the traffic-control layer is removed so that
// those queues are the only ones. Used as the speed reference for coapcc's
// star model and as a rough check of its goodput; not the specification.
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/mobility-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"
#include "ns3/wifi-module.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>

using namespace ns3;

static uint64_t g_data_segments = 0;
static uint64_t g_retransmissions = 0;
static std::map<const TcpSocketBase*, uint32_t> g_high;

static void
TxTrace(Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase> s)
{
    if (p->GetSize() == 0)
    {
        return;
    }
    g_data_segments++;
    uint32_t seq = h.GetSequenceNumber().GetValue();
    auto it = g_high.find(PeekPointer(s));
    if (it != g_high.end() && seq < it->second)
    {
        g_retransmissions++;
    }
    uint32_t end = seq + p->GetSize();
    if (it == g_high.end() || end > it->second)
    {
        g_high[PeekPointer(s)] = end;
    }
}

// Writes `size` bytes every `interval`, `writes` times, on one TCP connection.
class Writer : public Application
{
  public:
    Address peer;
    uint32_t size = 1024;
    uint32_t writes = 1000;
    double interval = 0.4;
    uint32_t done = 0;
    Ptr<Socket> sock;

    void StartApplication() override
    {
        sock = Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
        sock->Bind();
        sock->TraceConnectWithoutContext("Tx", MakeCallback(&TxTrace));
        sock->Connect(peer);
        Write();
    }

    void Write()
    {
        if (done == writes)
        {
            return;
        }
        sock->Send(Create<Packet>(size));
        done++;
        Simulator::Schedule(Seconds(interval), &Writer::Write, this);
    }
};

int
main(int argc, char* argv[])
{
    uint32_t stations = 12;
    uint32_t writes = 1000;
    uint32_t size = 1024;
    double interval = 0.4;
    uint32_t mss = 536;
    uint32_t queue = 8;
    uint32_t seed = 1;
    CommandLine cmd;
    cmd.AddValue("stations", "stations", stations);
    cmd.AddValue("writes", "writes per station", writes);
    cmd.AddValue("size", "bytes per write", size);
    cmd.AddValue("interval", "seconds between writes", interval);
    cmd.AddValue("mss", "TCP segment size", mss);
    cmd.AddValue("queue", "Wi-Fi MAC queue (packets)", queue);
    cmd.AddValue("seed", "run number", seed);
    cmd.Parse(argc, argv);
    RngSeedManager::SetRun(seed);

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Config::SetDefault("ns3::WifiMacQueue::MaxSize",
                       QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, queue)));

    NodeContainer stas;
    stas.Create(stations);
    NodeContainer ap;
    ap.Create(1);
    NodeContainer server;
    server.Create(1);

    YansWifiChannelHelper channel = YansWifiChannelHelper::Default();
    YansWifiPhyHelper phy;
    phy.SetChannel(channel.Create());
    WifiHelper wifi;
    wifi.SetStandard(WIFI_STANDARD_80211b);
    wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager",
                                 "DataMode",
                                 StringValue("DsssRate2Mbps"),
                                 "ControlMode",
                                 StringValue("DsssRate2Mbps"));
    WifiMacHelper mac;
    Ssid ssid("star");
    mac.SetType("ns3::StaWifiMac", "Ssid", SsidValue(ssid), "ActiveProbing", BooleanValue(false));
    NetDeviceContainer staDevs = wifi.Install(phy, mac, stas);
    mac.SetType("ns3::ApWifiMac", "Ssid", SsidValue(ssid));
    NetDeviceContainer apDev = wifi.Install(phy, mac, ap);

    MobilityHelper mobility;
    Ptr<ListPositionAllocator> pos = CreateObject<ListPositionAllocator>();
    pos->Add(Vector(0, 0, 0));
    for (uint32_t i = 0; i < stations; i++)
    {
        double a = 2 * M_PI * i / stations;
        pos->Add(Vector(10 * std::cos(a), 10 * std::sin(a), 0));
    }
    mobility.SetPositionAllocator(pos);
    mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel");
    mobility.Install(ap);
    mobility.Install(stas);

    PointToPointHelper wire;
    wire.SetDeviceAttribute("DataRate", StringValue("10Mbps"));
    wire.SetChannelAttribute("Delay", StringValue("0ms"));
    NetDeviceContainer wireDevs = wire.Install(ap.Get(0), server.Get(0));

    InternetStackHelper stack;
    stack.Install(stas);
    stack.Install(ap);
    stack.Install(server);
    Ipv4AddressHelper addr;
    addr.SetBase("10.1.0.0", "255.255.255.0");
    Ipv4InterfaceContainer staIf = addr.Assign(staDevs);
    addr.Assign(apDev);
    addr.SetBase("10.2.0.0", "255.255.255.0");
    Ipv4InterfaceContainer wireIf = addr.Assign(wireDevs);
    // address assignment installs the default queue discs; remove them from
    // the Wi-Fi devices so that the 8-packet MAC queues are the only ones
    TrafficControlHelper tch;
    tch.Uninstall(staDevs);
    tch.Uninstall(apDev);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    uint16_t port = 9;
    PacketSinkHelper sinkHelper("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sinkApp = sinkHelper.Install(server.Get(0));
    sinkApp.Start(Seconds(0));
    Ptr<UniformRandomVariable> start = CreateObject<UniformRandomVariable>();
    for (uint32_t i = 0; i < stations; i++)
    {
        Ptr<Writer> w = CreateObject<Writer>();
        w->peer = InetSocketAddress(wireIf.GetAddress(1), port);
        w->size = size;
        w->writes = writes;
        w->interval = interval;
        stas.Get(i)->AddApplication(w);
        w->SetStartTime(Seconds(1.0 + start->GetValue(0, interval)));
    }
    double end = 1.0 + interval * writes + 60.0;
    Simulator::Stop(Seconds(end));
    auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    uint64_t received = DynamicCast<PacketSink>(sinkApp.Get(0))->GetTotalRx();
    double traffic = interval * writes;
    std::printf("stations=%u writes=%u goodput_bps=%.1f received=%llu offered_bps=%.1f "
                "data_segments=%llu retransmissions=%llu events=%llu wall_s=%.3f seed=%u\n",
                stations,
                writes,
                received * 8.0 / traffic,
                (unsigned long long)received,
                stations * size * 8.0 / interval,
                (unsigned long long)g_data_segments,
                (unsigned long long)g_retransmissions,
                (unsigned long long)Simulator::GetEventCount(),
                wall,
                seed);
    Simulator::Destroy();
    return 0;
}

#!/usr/bin/env python3
"""The protobuf side of ROS-NetSim's network coordinator, written here without its TUN
interfaces: it connects to the physics simulator and the network simulator where ROS-NetSim's
config says (retrying), and for each window k sends PhysicsUpdate BEGIN(k) and NetworkUpdate
BEGIN(k), both gzip-framed; the network BEGIN carries the packets "captured" for it and, unchanged,
the `channel_data` of the last physics END (as ROS-NetSim's coordinator forwards it: the
physics simulator's gzip). Every END must be an END for its window. A network END delivers
the entries of its `pkt_id`/`src_ip`/`dst_ip` with `ber` and `rx_ip`, and frees those of
`clear_*`, as ROS-NetSim's coordinator reads it.

Beyond ROS-NetSim's coordinator: it runs `windows` windows (argument 2), "captures" one packet
from `ip_list[0]` to `ip_list[1]` in each of the first `packets` windows (config, default 0),
gunzips every channel_data strictly (as ROS-NetSim's network simulators do) to check its ids
count nodes from 1, and prints what it saw as JSON."""

import gzip
import ipaddress
import json
import socket
import sys
import time

import yaml

from rosnetsim_msgs import (ChannelData, NetworkUpdate, PhysicsUpdate, recv_one_message,
                            send_one_message)


def connect(config, role):
    use_uds = config["phy_use_uds" if role == "phy" else "net_use_uds"]
    if use_uds:
        address = config[f"{role}_uds_server_address"]
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    else:
        address = (config[f"{role}_ip_server_address"], config[f"{role}_ip_server_port"])
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    for _ in range(300):
        try:
            sock.connect(address)
            return sock
        except OSError:
            time.sleep(0.05)
    sys.exit(f"could not connect to {address}")


def check_channel(field, seen):
    channel = ChannelData()
    channel.ParseFromString(gzip.decompress(field))
    num_nodes = len(channel.node_list) // 7
    for path in channel.path_details:
        if len(path.ids) != 2 or not all(1 <= i <= num_nodes for i in path.ids):
            sys.exit(f"window {seen['windows']}: ids {list(path.ids)} are not node numbers from 1")
        seen["paths"] += 1
    seen["channels"] += 1
    seen["nodes"] = num_nodes


def main(config_file, windows):
    with open(config_file) as f:
        config = yaml.safe_load(f)
    ips = [int(ipaddress.IPv4Address(ip)) for ip in config["ip_list"]]
    phy, net = connect(config, "phy"), connect(config, "netsim")
    seen = {"windows": 0, "channels": 0, "paths": 0, "nodes": 0, "sent": 0, "delivered": 0,
            "freed": 0, "deliveries": []}
    outgoing = {}
    channel_data = b""
    for k in range(windows):
        begin = PhysicsUpdate(msg_type=PhysicsUpdate.BEGIN, time_val=k)
        send_one_message(phy, gzip.compress(begin.SerializeToString()))
        begin = NetworkUpdate(msg_type=NetworkUpdate.BEGIN, time_val=k)
        if k < config.get("packets", 0):
            key = (k, ips[0], ips[1])
            outgoing[key] = 84
            begin.pkt_id.append(k)
            begin.src_ip.append(ips[0])
            begin.dst_ip.append(ips[1])
            begin.pkt_lengths.append(84)
            seen["sent"] += 1
        if channel_data:
            begin.channel_data = channel_data
        send_one_message(net, gzip.compress(begin.SerializeToString()))

        end = PhysicsUpdate()
        end.ParseFromString(gzip.decompress(recv_one_message(phy)))
        if (end.msg_type, end.time_val) != (PhysicsUpdate.END, k):
            sys.exit(f"physics simulator: expected END for window {k}, got {end}")
        channel_data = end.channel_data
        if channel_data:
            check_channel(channel_data, seen)

        end = NetworkUpdate()
        end.ParseFromString(gzip.decompress(recv_one_message(net)))
        if (end.msg_type, end.time_val) != (NetworkUpdate.END, k):
            sys.exit(f"network simulator: expected END for window {k}, got {end}")
        for pkt_id, src, dst, ber, rx in zip(end.pkt_id, end.src_ip, end.dst_ip, end.ber,
                                             end.rx_ip):
            if (pkt_id, src, dst) in outgoing and 0 <= ber < 1:
                seen["delivered"] += 1
                seen["deliveries"].append([k, pkt_id, str(ipaddress.IPv4Address(rx))])
        for key in zip(end.clear_pkt_id, end.clear_src_ip, end.clear_dst_ip):
            if outgoing.pop(key, None) is not None:
                seen["freed"] += 1
        seen["windows"] += 1
    print(json.dumps(seen))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2])))

#!/usr/bin/env python3
"""A network simulator that answers as ROS-NetSim's example network simulator
(example/scripts/net_sim_dummy.py) does, written here: it listens where ROS-NetSim's config
says (`net_use_uds`, `netsim_uds_server_address` or `netsim_ip_server_address`/`_port`); for
every gzip-framed NetworkUpdate BEGIN it *gunzips* the `channel_data` (as ROS-NetSim's network
simulators do: bare bytes fail) and reads its paths keyed by their ids, then answers with the
BEGIN turned into an END: `channel_data` and `pkt_lengths` removed, every packet entry kept in
`pkt_id`/`src_ip`/`dst_ip` and delivered to its destination (`rx_ip`) with a bit error rate of
1e-9, after 50 ms for a destination in `ip_list`.

Beyond ROS-NetSim's simulator: it checks what a ROS-NetSim network simulator relies on (7
values per node, ids two node numbers from 1 to the number of nodes, 4 hop_points values per
hop) and on a violation, or on disconnect, writes what it saw (`report`, JSON) and exits (1 on
a violation)."""

import gzip
import json
import socket
import struct
import sys
import time

import numpy as np
import yaml

from rosnetsim_msgs import ChannelData, NetworkUpdate, recv_one_message, send_one_message, listen


def read_channel(data, seen):
    channel = ChannelData()
    channel.ParseFromString(data)
    if len(channel.node_list) % 7:
        raise ValueError(f"node_list has {len(channel.node_list)} values")
    num_nodes = len(channel.node_list) // 7
    np.array(channel.node_list).reshape((num_nodes, 7))
    paths = {}
    for path in channel.path_details:
        ids = tuple(path.ids)
        if len(ids) != 2 or not all(1 <= i <= num_nodes for i in ids):
            raise ValueError(f"ids {list(ids)} are not two node numbers from 1 to {num_nodes}")
        if 4 * sum(path.num_hops) != len(path.hop_points):
            raise ValueError(f"{len(path.hop_points)} hop_points for num_hops {list(path.num_hops)}")
        paths[ids] = {"los": path.los}
        at = 0
        for hops in path.num_hops:
            paths[ids].setdefault(hops, []).extend(path.hop_points[at:at + 4 * hops])
            at += 4 * hops
        seen["paths"] += 1
        seen["los_paths"] += path.los
    seen["channels"] += 1
    seen["nodes"] = num_nodes


def main(config_file):
    with open(config_file) as f:
        config = yaml.safe_load(f)
    seen = {"windows": 0, "channels": 0, "paths": 0, "los_paths": 0, "nodes": 0,
            "delivered": 0, "error": None}
    server, _ = listen(config, "netsim")
    connection, _ = server.accept()
    try:
        while True:
            frame = recv_one_message(connection)
            if frame is None:
                break
            update = NetworkUpdate()
            update.ParseFromString(gzip.decompress(frame))
            if update.channel_data:
                read_channel(gzip.decompress(update.channel_data), seen)
            update.channel_data = b""
            update.msg_type = NetworkUpdate.END
            for i in range(len(update.pkt_id)):
                dst = socket.inet_ntoa(struct.pack("!L", update.dst_ip[i]))
                if dst in config["ip_list"]:
                    time.sleep(0.05)
                update.ber.append(1e-9)
                update.rx_ip.append(update.dst_ip[i])
                seen["delivered"] += 1
            del update.pkt_lengths[:]
            send_one_message(connection, gzip.compress(update.SerializeToString()))
            seen["windows"] += 1
    except Exception as e:
        seen["error"] = f"{type(e).__name__}: {e}"
    if "report" in config:
        with open(config["report"], "w") as f:
            json.dump(seen, f)
    return 1 if seen["error"] else 0


if __name__ == "__main__":
    sys.exit(main(next(a for a in sys.argv[1:] if ".yaml" in a)))

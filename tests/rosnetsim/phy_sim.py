#!/usr/bin/env python3
"""A physics simulator that answers as ROS-NetSim's example physics simulator
(example/scripts/phy_sim_dummy.py) does, written here: it listens where ROS-NetSim's config
says (`phy_use_uds`, `phy_uds_server_address` or `phy_ip_server_address`/`_port`) and answers
every gzip-framed PhysicsUpdate BEGIN with an END for the same window whose `channel_data` is
the *gzip* of a ChannelData: per node (`len(mac_list)` of them) a random position in
[0, 20)^3 and a random unit quaternion; one or two random pairs of node numbers *from 1*, in
random order (so a pair may come twice), each in LOS with zero to three paths of one to three
random hop points.

Beyond ROS-NetSim's simulator: an optional `seed` in the config seeds the draws, and on
disconnect it writes what it sent (`report`, JSON) and exits 0."""

import gzip
import json
import random
import sys

import numpy as np
import yaml

from rosnetsim_msgs import ChannelData, PhysicsUpdate, recv_one_message, send_one_message, listen


def random_quaternion():
    q = np.random.normal(size=4)
    return (q / np.linalg.norm(q)).tolist()


def generate_channel(num_nodes, seen):
    channel = ChannelData()
    for _ in range(num_nodes):
        channel.node_list.extend(float(v) for v in 20 * np.random.random_sample(3))
        channel.node_list.extend(random_quaternion())
    pairs = []
    for _ in range(random.randint(1, 2)):
        path = channel.path_details.add()
        a, b = random.sample(range(1, num_nodes + 1), k=2)
        path.ids.extend([a, b])
        path.los = True
        for _ in range(random.randint(0, 3)):
            hops = random.randint(1, 3)
            path.num_hops.append(hops)
            path.hop_points.extend(np.random.rand(4 * hops).tolist())
        pairs.append((min(a, b), max(a, b)))
        seen["reversed_pairs"] += a > b
        seen["multipath_entries"] += len(path.num_hops) > 1
        seen["pathless_entries"] += len(path.num_hops) == 0
    seen["repeated_pairs"] += len(pairs) != len(set(pairs))
    return channel.SerializeToString()


def main(config_file):
    with open(config_file) as f:
        config = yaml.safe_load(f)
    if "seed" in config:
        random.seed(config["seed"])
        np.random.seed(config["seed"])
    num_nodes = len(config["mac_list"])
    seen = {"windows": 0, "reversed_pairs": 0, "multipath_entries": 0, "pathless_entries": 0,
            "repeated_pairs": 0}
    server, _ = listen(config, "phy")
    connection, _ = server.accept()
    while True:
        frame = recv_one_message(connection)
        if frame is None:
            break
        update = PhysicsUpdate()
        update.ParseFromString(gzip.decompress(frame))
        update.msg_type = PhysicsUpdate.END
        update.channel_data = gzip.compress(generate_channel(num_nodes, seen))
        send_one_message(connection, gzip.compress(update.SerializeToString()))
        seen["windows"] += 1
    if "report" in config:
        with open(config["report"], "w") as f:
            json.dump(seen, f)


if __name__ == "__main__":
    sys.exit(main(next(a for a in sys.argv[1:] if ".yaml" in a)))

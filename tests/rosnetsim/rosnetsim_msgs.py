"""ROS-NetSim's three messages (packages channel_data_proto, physics_update_proto,
network_update_proto; proto3), declared here from their field numbers and types and built with
the protobuf runtime, so that they serialize exactly as the classes protoc generates for
ROS-NetSim's Python components do. Also ROS-NetSim's framing: a 4-byte big-endian length, then
the message (which its components gzip)."""

import socket
import struct

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

F = descriptor_pb2.FieldDescriptorProto
REPEATED, OPTIONAL = F.LABEL_REPEATED, F.LABEL_OPTIONAL


def _file(name, package, messages, enums=()):
    f = descriptor_pb2.FileDescriptorProto(name=name, package=package, syntax="proto3")
    for msg_name, fields, msg_enums in messages:
        m = f.message_type.add(name=msg_name)
        for enum_name, values in msg_enums:
            e = m.enum_type.add(name=enum_name)
            for value_name, number in values:
                e.value.add(name=value_name, number=number)
        for field_name, number, label, ftype, type_name in fields:
            fd = m.field.add(name=field_name, number=number, label=label, type=ftype)
            if type_name:
                fd.type_name = type_name
    return f


_POOL = descriptor_pool.DescriptorPool()
_MSG_TYPE = [("MsgType", [("BEGIN", 0), ("END", 1)])]
_POOL.Add(_file("channel_data.proto", "channel_data_proto", [
    ("ChannelData", [
        ("node_list", 1, REPEATED, F.TYPE_DOUBLE, None),
        ("path_details", 2, REPEATED, F.TYPE_MESSAGE, ".channel_data_proto.PathDetails"),
    ], []),
    ("PathDetails", [
        ("ids", 1, REPEATED, F.TYPE_UINT32, None),
        ("los", 2, OPTIONAL, F.TYPE_BOOL, None),
        ("num_hops", 3, REPEATED, F.TYPE_UINT32, None),
        ("hop_points", 4, REPEATED, F.TYPE_DOUBLE, None),
    ], []),
]))
_POOL.Add(_file("physics_update.proto", "physics_update_proto", [
    ("PhysicsUpdate", [
        ("msg_type", 1, OPTIONAL, F.TYPE_ENUM, ".physics_update_proto.PhysicsUpdate.MsgType"),
        ("time_val", 2, OPTIONAL, F.TYPE_UINT32, None),
        ("channel_data", 3, OPTIONAL, F.TYPE_BYTES, None),
    ], _MSG_TYPE),
]))
_POOL.Add(_file("network_update.proto", "network_update_proto", [
    ("NetworkUpdate", [
        ("msg_type", 1, OPTIONAL, F.TYPE_ENUM, ".network_update_proto.NetworkUpdate.MsgType"),
        ("time_val", 2, OPTIONAL, F.TYPE_UINT32, None),
        ("pkt_id", 3, REPEATED, F.TYPE_UINT32, None),
        ("src_ip", 4, REPEATED, F.TYPE_FIXED32, None),
        ("dst_ip", 5, REPEATED, F.TYPE_FIXED32, None),
        ("pkt_lengths", 6, REPEATED, F.TYPE_UINT32, None),
        ("rx_ip", 7, REPEATED, F.TYPE_FIXED32, None),
        ("ber", 8, REPEATED, F.TYPE_DOUBLE, None),
        ("channel_data", 9, OPTIONAL, F.TYPE_BYTES, None),
        ("clear_pkt_id", 10, REPEATED, F.TYPE_UINT32, None),
        ("clear_src_ip", 11, REPEATED, F.TYPE_FIXED32, None),
        ("clear_dst_ip", 12, REPEATED, F.TYPE_FIXED32, None),
    ], _MSG_TYPE),
]))


def _cls(name):
    return message_factory.GetMessageClass(_POOL.FindMessageTypeByName(name))


ChannelData = _cls("channel_data_proto.ChannelData")
PhysicsUpdate = _cls("physics_update_proto.PhysicsUpdate")
NetworkUpdate = _cls("network_update_proto.NetworkUpdate")


def recvall(sock, count):
    """`count` bytes, however they arrive; None if the peer closes first."""
    buf = bytearray()
    while count:
        chunk = sock.recv(count)
        if not chunk:
            return None
        buf += chunk
        count -= len(chunk)
    return bytes(buf)


def recv_one_message(sock):
    """One frame's body; None if the peer closed."""
    header = recvall(sock, 4)
    if not header:
        return None
    (length,) = struct.unpack("!I", header)
    return recvall(sock, length)


def send_one_message(sock, data):
    sock.sendall(struct.pack("!I", len(data)) + data)


def listen(config, role):
    """The server socket of ROS-NetSim's `role` ('phy' or 'netsim') simulator, as its config
    says: a Unix socket at `<role>_uds_server_address` (a stale one removed) if
    `<phy|net>_use_uds`, else TCP at `<role>_ip_server_address`:`<role>_ip_server_port`."""
    import os
    use_uds = config["phy_use_uds" if role == "phy" else "net_use_uds"]
    if use_uds:
        address = config[f"{role}_uds_server_address"]
        try:
            os.unlink(address)
        except OSError:
            if os.path.exists(address):
                raise
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    else:
        address = (config[f"{role}_ip_server_address"], config[f"{role}_ip_server_port"])
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(address)
    sock.listen(1)
    return sock, address if use_uds else None

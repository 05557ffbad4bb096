"""Writes a ROS 2 bag as MCAP (Foxglove's mcap-ros2-support, the message definitions as
rosbag2 stores them) with a vehicle's track on three topics: /b/pose (PoseStamped),
/c/odom (Odometry) and /d/fix (NavSatFix, its third message without a fix). Prints each
topic's samples as JSON: {topic: [[t, a, b, c], ...]} (x, y, z or lat, lon, alt)."""
import json
import math
import sys

from mcap.writer import CompressionType
from mcap_ros2.writer import Writer

SEP = "=" * 80 + "\n"
HEADER = (
    "MSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n"
    + SEP
    + "MSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n"
)
POSE = (
    "MSG: geometry_msgs/Pose\nPoint position\nQuaternion orientation\n"
    + SEP
    + "MSG: geometry_msgs/Point\nfloat64 x\nfloat64 y\nfloat64 z\n"
    + SEP
    + "MSG: geometry_msgs/Quaternion\nfloat64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1\n"
)
POSE_STAMPED = "std_msgs/Header header\ngeometry_msgs/Pose pose\n" + SEP + HEADER + SEP + POSE
ODOMETRY = (
    "std_msgs/Header header\nstring child_frame_id\ngeometry_msgs/PoseWithCovariance pose\n"
    "geometry_msgs/TwistWithCovariance twist\n"
    + SEP + HEADER + SEP
    + "MSG: geometry_msgs/PoseWithCovariance\nPose pose\nfloat64[36] covariance\n"
    + SEP
    + "MSG: geometry_msgs/TwistWithCovariance\nTwist twist\nfloat64[36] covariance\n"
    + SEP
    + "MSG: geometry_msgs/Twist\nVector3 linear\nVector3 angular\n"
    + SEP
    + "MSG: geometry_msgs/Vector3\nfloat64 x\nfloat64 y\nfloat64 z\n"
    + SEP + POSE
)
NAV_SAT_FIX = (
    "std_msgs/Header header\nsensor_msgs/NavSatStatus status\nfloat64 latitude\n"
    "float64 longitude\nfloat64 altitude\nfloat64[9] position_covariance\n"
    "uint8 position_covariance_type\n"
    + SEP + HEADER + SEP
    + "MSG: sensor_msgs/NavSatStatus\nint8 status\nuint16 service\n"
)


def stamp(t):
    return {"sec": int(t), "nanosec": int(round((t - int(t)) * 1e9))}


def header(t):
    return {"stamp": stamp(t), "frame_id": "map"}


def pose(x, y, z, yaw):
    return {
        "position": {"x": x, "y": y, "z": z},
        "orientation": {"x": 0.0, "y": 0.0, "z": math.sin(yaw / 2), "w": math.cos(yaw / 2)},
    }


def main(path):
    t0 = 1_700_000_000.0
    out = {"/b/pose": [], "/c/odom": [], "/d/fix": []}
    with open(path, "wb") as f:
        w = Writer(f, compression=CompressionType.ZSTD)
        ps = w.register_msgdef("geometry_msgs/msg/PoseStamped", POSE_STAMPED)
        od = w.register_msgdef("nav_msgs/msg/Odometry", ODOMETRY)
        fx = w.register_msgdef("sensor_msgs/msg/NavSatFix", NAV_SAT_FIX)
        for i in range(12):
            t = t0 + i * 0.75
            ns = int(t * 1e9)
            x, y, z = -50.0 + 4.0 * i, 10.0 * math.sin(i / 3), -10.0 - 0.5 * i
            w.write_message("/b/pose", ps, {"header": header(t), "pose": pose(x, y, z, 0.3 * i)}, ns, ns)
            out["/b/pose"].append([t, x, y, z])
            x, y, z = 30.0 - 3.0 * i, -20.0 + 2.0 * i, -4.0
            odom = {
                "header": header(t),
                "child_frame_id": "base_link",
                "pose": {"pose": pose(x, y, z, 1.0), "covariance": [0.0] * 36},
                "twist": {"twist": {"linear": {"x": 1.0, "y": 0.0, "z": 0.0}, "angular": {"x": 0.0, "y": 0.0, "z": 0.0}}, "covariance": [0.0] * 36},
            }
            w.write_message("/c/odom", od, odom, ns, ns)
            out["/c/odom"].append([t, x, y, z])
            lat, lon, alt = 41.5 + 0.0001 * i, -70.6 - 0.0002 * i, 0.0
            fix = {
                "header": header(t),
                "status": {"status": -1 if i == 2 else 0, "service": 1},
                "latitude": lat,
                "longitude": lon,
                "altitude": alt,
                "position_covariance": [0.0] * 9,
                "position_covariance_type": 0,
            }
            w.write_message("/d/fix", fx, fix, ns, ns)
            if i != 2:
                out["/d/fix"].append([t, lat, lon, alt])
        w.finish()
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])

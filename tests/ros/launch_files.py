"""Prints, as JSON, what every launch file in launch/ names: per file the nodes (package,
executable, name, parameter names) and the package files it refers to. Python launch files
are read with ast (not run: launch_ros is not on PyPI), XML ones with ElementTree."""
import ast
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

root = sys.argv[1]
result = {}
for f in sorted(os.listdir(os.path.join(root, "launch"))):
    path = os.path.join(root, "launch", f)
    nodes, files = [], []
    if f.endswith(".py"):
        tree = ast.parse(open(path).read(), path)
        # name = {...} assignments, for parameters=[params, scenario]
        dicts = {t.id: a.value for a in ast.walk(tree) if isinstance(a, ast.Assign) and isinstance(a.value, ast.Dict)
                 for t in a.targets if isinstance(t, ast.Name)}
        for call in ast.walk(tree):
            if not isinstance(call, ast.Call):
                continue
            name = getattr(call.func, "id", None) or getattr(call.func, "attr", None)
            if name == "Node":
                kw = {k.arg: k.value for k in call.keywords}
                const = lambda v: v.value if isinstance(v, ast.Constant) else None
                params = []
                for d in ast.walk(kw.get("parameters", ast.List(elts=[]))):
                    d = dicts.get(d.id, d) if isinstance(d, ast.Name) else d
                    if isinstance(d, ast.Dict):
                        params += [const(k) for k in d.keys]
                nodes.append({"package": const(kw.get("package")), "executable": const(kw.get("executable")),
                              "name": const(kw.get("name")), "parameters": params})
            # os.path.join(share, "config", ...): a file of the package (share is its share folder)
            elif (name == "join" and len(call.args) > 1 and getattr(call.args[0], "id", None) == "share"
                  and all(isinstance(a, ast.Constant) for a in call.args[1:])):
                files.append("/".join(a.value for a in call.args[1:]))
    elif f.endswith(".xml"):
        doc = ET.parse(path).getroot()
        for n in doc.iter("node"):
            nodes.append({"package": n.get("pkg"), "executable": n.get("exec"), "name": n.get("name"),
                          "parameters": [p.get("name") for p in n.iter("param") if p.get("name")]})
        for el in doc.iter():
            for v in el.attrib.values():
                files += re.findall(r"\$\(find-pkg-share netsim_cosim\)/([\w./-]+)", v)
    else:
        continue
    result[f] = {"nodes": nodes, "files": files}
print(json.dumps(result))

#!/usr/bin/env python3
"""Checks the Kubernetes manifests in deploy/kubernetes (docs/DEPLOY.md).

1. Schema: every document (examples/ too) against the Kubernetes JSON schemas that
   kubernetes-validate bundles (strict: unknown fields are errors), for the
   oldest and the newest release the manifests target. Nothing is fetched.
2. Values the schemas leave as strings: resource quantities.
3. The pieces fit together: the Service and the PodDisruptionBudget select
   the Deployment's pods, the Service's targetPort is a container port, the
   HPA scales the Deployment on the metric the Prometheus Adapter rule
   exposes, the PVC the Deployment mounts exists, the endpoint picker's
   configuration (epp-config.yaml) names vlm's metrics in an engineConfigs
   entry that the pods' engine label selects.
4. With --vlm: the container's arguments are ones `vlm` parses, and a
   `vlm serve` started with them (on a given model, on loopback) answers
   the probes' paths with 200 once ready and exports the HPA's metric as a
   gauge, with the Deployment's container port rewritten to a free one,
   and exports every metric the EPP config names as the EPP reads it
   (gauges; the cache info's block_size and num_gpu_blocks labels).

Usage: check_manifests.py [--vlm VLM --model DIR]
Runs in .venv-deploy (deploy/requirements.txt). Exit status 0 when every
check passes; prints one line per check and "N passed, N failed".
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request

import kubernetes_validate
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
MANIFESTS = os.path.join(HERE, "kubernetes")
VERSIONS = ("1.30.0", "1.37.0")  # sleep preStop hooks are GA from 1.30
QUANTITY = re.compile(r"^[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$")

passed = failed = 0


def check(name, condition, detail=""):
    global passed, failed
    if condition:
        passed += 1
        print(f"ok   {name}")
    else:
        failed += 1
        print(f"FAIL {name}{': ' + detail if detail else ''}")


def load_documents():
    documents = []
    for path in sorted(glob.glob(os.path.join(MANIFESTS, "*.yaml"))):
        with open(path) as file:
            for document in yaml.safe_load_all(file):
                if document:
                    documents.append((os.path.basename(path), document))
    return documents


def load_examples():
    documents = []
    for path in sorted(glob.glob(os.path.join(MANIFESTS, "examples", "*.yaml"))):
        with open(path) as file:
            for document in yaml.safe_load_all(file):
                if document:
                    documents.append((os.path.join("examples", os.path.basename(path)), document))
    return documents


def check_pull_example(documents):
    """The init-container example: `vlm pull ORG/NAME` into the models
    volume, HF_HOME on that volume in both containers, the server offline."""
    for name, document in documents:
        pod = document.get("spec", {}).get("template", {}).get("spec", {})
        for init in pod.get("initContainers", []):
            if init.get("args", [None])[0] != "pull":
                continue
            model = init["args"][1]
            env = lambda container: {e["name"]: e.get("value") for e in container.get("env", [])}
            mounts = lambda container: {m["name"]: m["mountPath"] for m in container.get("volumeMounts", [])}
            server = pod["containers"][0]
            home = env(init).get("HF_HOME", "")
            check(f"{name}: the init container pulls ORG/NAME", re.match(r"^[\w.-]+/[\w.-]+$", model) is not None, model)
            check(f"{name}: HF_HOME is on the models volume in both containers",
                  home and home == env(server).get("HF_HOME")
                  and home.startswith(mounts(init).get("models", "//") + "/")
                  and mounts(init).get("models") == mounts(server).get("models"), home)
            arguments = server["args"]
            check(f"{name}: the server opens the pulled id, offline",
                  model in arguments and arguments[arguments.index(model) - 1] == "--model"
                  and env(server).get("HF_HUB_OFFLINE") == "1")


def check_schemas(documents):
    for name, document in documents:
        for version in VERSIONS:
            try:
                kubernetes_validate.validate(document, version, strict=True)
                check(f"schema {name} {document['kind']}/{document['metadata']['name']} k8s {version}", True)
            except kubernetes_validate.ValidationError as error:
                check(f"schema {name} k8s {version}", False, f"{error.path}: {error.message}")
            except Exception as error:  # an unknown kind or apiVersion
                check(f"schema {name} k8s {version}", False, str(error))


def quantities(value, path=""):
    """(path, quantity) for every resource quantity below `value`."""
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{path}.{key}" if path else key
            if key in ("requests", "limits") and isinstance(item, dict):
                for resource, quantity in item.items():
                    yield f"{here}.{resource}", quantity
            elif key in ("averageValue", "sizeLimit"):
                yield here, item
            else:
                yield from quantities(item, here)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from quantities(item, f"{path}[{index}]")


def by_kind(documents, kind, name=None):
    found = [document for _, document in documents
             if document["kind"] == kind and (name is None or document["metadata"]["name"] == name)]
    return found[0] if found else None


def epp_engine(epp):
    """The EndpointPickerConfig in epp-config.yaml and its engineConfigs entry for vlm."""
    config = yaml.safe_load(epp["data"]["config.yaml"])
    extractors = [plugin for plugin in config.get("plugins", []) if plugin.get("type") == "core-metrics-extractor"]
    engines = extractors[0].get("parameters", {}).get("engineConfigs", []) if extractors else []
    engine = next((entry for entry in engines if entry.get("name") == "vlm"), None)
    return config, extractors[0] if extractors else None, engine


def check_together(documents):
    for name, document in documents:
        for path, quantity in quantities(document.get("spec", {})):
            check(f"quantity {name} {path}={quantity}", isinstance(quantity, str) and QUANTITY.match(quantity))
    deployment = by_kind(documents, "Deployment")
    service = by_kind(documents, "Service")
    hpa = by_kind(documents, "HorizontalPodAutoscaler")
    pdb = by_kind(documents, "PodDisruptionBudget")
    pvc = by_kind(documents, "PersistentVolumeClaim")
    adapter = by_kind(documents, "ConfigMap", "vlm-prometheus-adapter-rules")
    epp = by_kind(documents, "ConfigMap", "vlm-epp-config")
    check("a Deployment, Service, HPA, PDB, PVC, adapter rule and EPP config are there",
          all((deployment, service, hpa, pdb, pvc, adapter, epp)))
    if not all((deployment, service, hpa, pdb, pvc, adapter, epp)):
        return None
    pod = deployment["spec"]["template"]
    labels = pod["metadata"]["labels"]
    selects = lambda selector: all(labels.get(key) == value for key, value in selector.items())
    check("the Deployment's selector matches its pods", selects(deployment["spec"]["selector"]["matchLabels"]))
    check("the Service selects the pods", selects(service["spec"]["selector"]))
    check("the PDB selects the pods", selects(pdb["spec"]["selector"]["matchLabels"]))
    container = pod["spec"]["containers"][0]
    port_names = {port["name"] for port in container["ports"]}
    check("the Service's targetPort is a container port",
          all(port["targetPort"] in port_names for port in service["spec"]["ports"]))
    target = hpa["spec"]["scaleTargetRef"]
    check("the HPA scales the Deployment",
          (target["kind"], target["name"]) == ("Deployment", deployment["metadata"]["name"]))
    hpa_metric = hpa["spec"]["metrics"][0]["pods"]["metric"]["name"]
    rules = yaml.safe_load(adapter["data"]["config.yaml"])["rules"]
    check("the adapter rule exposes the HPA's metric",
          any(rule["name"]["as"] == hpa_metric and hpa_metric in rule["seriesQuery"] for rule in rules))
    claims = [volume["persistentVolumeClaim"]["claimName"] for volume in pod["spec"]["volumes"]
              if "persistentVolumeClaim" in volume]
    check("the mounted PVC is defined", claims == [pvc["metadata"]["name"]])
    # The endpoint picker: current versions take the metric names from the
    # core-metrics-extractor's engineConfigs (the old flags are refused),
    # picked per pod by the engine label.
    config, extractor, engine = epp_engine(epp)
    check("the EPP config is an EndpointPickerConfig", config.get("kind") == "EndpointPickerConfig")
    check("the EPP config has an engineConfigs entry named vlm", engine is not None)
    if engine is None:
        return None
    label_key = extractor["parameters"].get("engineLabelKey", "llm-d.ai/engine-type")
    check(f"the pods carry {label_key}: vlm", labels.get(label_key) == "vlm")
    plugin_types = {plugin.get("type") for plugin in config["plugins"]}
    referenced = [reference["pluginRef"] for profile in config.get("schedulingProfiles", [])
                  for reference in profile.get("plugins", [])]
    referenced += [source["pluginRef"] for source in config.get("dataLayer", {}).get("sources", [])]
    check("every plugin the EPP config refers to is declared", all(name in plugin_types for name in referenced),
          str(referenced))
    return deployment, hpa_metric, engine


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def metric_families(text):
    """{name: (type, [labels dict of each sample])} of a Prometheus text exposition."""
    families = {}
    for line in text.splitlines():
        match = re.match(r"^# TYPE (\S+) (\S+)$", line)
        if match:
            families.setdefault(match.group(1), [match.group(2), []])[0] = match.group(2)
            continue
        match = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? \S+$", line)
        if match:
            labels = dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"', match.group(3) or ""))
            families.setdefault(match.group(1), [None, []])[1].append(labels)
    return families


def check_engine_metrics(engine, text):
    """What the EPP's extractor reads of vlm's /metrics, as it reads vLLM's."""
    families = metric_families(text)
    for key in ("queuedRequestsSpec", "runningRequestsSpec", "kvUsageSpec"):
        name = engine.get(key, "")
        check(f"EPP {key} {name} is a gauge vlm exports", families.get(name, [None])[0] == "gauge"
              and len(families[name][1]) == 1)
    name = engine.get("cacheInfoSpec", "")
    samples = families.get(name, [None, []])[1]
    block_label = engine.get("cacheBlockSizeLabelName") or "block_size"
    blocks_label = engine.get("cacheNumBlocksLabelName") or "num_gpu_blocks"
    check(f"EPP cacheInfoSpec {name} carries integer labels {block_label} and {blocks_label}",
          len(samples) == 1 and all(samples[0].get(label, "").isdigit() for label in (block_label, blocks_label)),
          str(samples))


def check_with_vlm(vlm, model, deployment, hpa_metric, engine):
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    arguments = list(container["args"])
    # Parsed: `vlm ARGS --help` exits 0 only when every option before --help
    # is known and its value valid.
    result = subprocess.run([vlm, *arguments, "--help"], capture_output=True, text=True, timeout=60)
    check("vlm parses the container's arguments", result.returncode == 0, result.stderr.strip())
    # Served: the same arguments on the given model, on loopback, a free port.
    replace = {"--model": model, "--host": "127.0.0.1", "--port": "0"}
    served = [replace.get(arguments[i - 1], value) if i else value for i, value in enumerate(arguments)]
    process = subprocess.Popen([vlm, *served], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    try:
        base = None
        deadline = time.monotonic() + 120
        while base is None and time.monotonic() < deadline:
            line = process.stderr.readline()
            if not line:
                break
            match = re.search(r"listening on (http://\S+)", line)
            if match:
                base = match.group(1)
        check("vlm serve starts with the container's arguments", base is not None)
        if base is None:
            return
        for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
            path = container[probe]["httpGet"]["path"]
            status, _ = get(base + path)
            check(f"{probe} {path} answers 200 once ready", status == 200, f"got {status}")
        status, text = get(base + "/metrics")
        check("/metrics answers without the key (--public-metrics)", status == 200, f"got {status}")
        check(f"/metrics exports {hpa_metric} as a gauge", f"# TYPE {hpa_metric} gauge\n" in text)
        check(f"{hpa_metric} has a value", re.search(rf"^{hpa_metric} [0-9.e+-]+$", text, re.M) is not None)
        check_engine_metrics(engine, text)
    finally:
        process.terminate()
        try:
            status = process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()
            status = process.wait()
        check("vlm serve exits 0 on SIGTERM", status == 0, f"exit {status}")


def check_pull_with_vlm(vlm, model, documents):
    """The init container's own arguments, run: `vlm pull ORG/NAME` from a
    stand-in hub (tests/hub/fake_hub.py serving `model` under the example's
    id) into a scratch HF_HOME, then the server's --model ID opened from that
    cache offline (vlm inspect)."""
    import tempfile
    source = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for name, document in documents:
        pod = document.get("spec", {}).get("template", {}).get("spec", {})
        for init in pod.get("initContainers", []):
            if init.get("args", [None])[0] != "pull":
                continue
            repo = init["args"][1]
            with tempfile.TemporaryDirectory() as scratch:
                port_file = os.path.join(scratch, "port")
                hub = subprocess.Popen([sys.executable, os.path.join(source, "tests/hub/fake_hub.py"), "--port-file",
                                        port_file, "--repo", f"{repo}={model}"], stderr=subprocess.DEVNULL)
                try:
                    for _ in range(100):
                        if os.path.exists(port_file):
                            break
                        time.sleep(0.1)
                    env = dict(os.environ, HF_HOME=os.path.join(scratch, "hf"),
                               HF_ENDPOINT=f"http://127.0.0.1:{open(port_file).read().strip()}")
                    env.pop("HF_HUB_OFFLINE", None)
                    env.pop("HF_HUB_CACHE", None)
                    pulled = subprocess.run([vlm, *init["args"]], env=env, capture_output=True, text=True, timeout=120)
                    check(f"{name}: the init container's `vlm {' '.join(init['args'])}` runs", pulled.returncode == 0,
                          pulled.stderr.strip()[-500:])
                    env["HF_HUB_OFFLINE"] = "1"
                    opened = subprocess.run([vlm, "inspect", "--model", repo], env=env, capture_output=True,
                                            text=True, timeout=120)
                    check(f"{name}: the server's --model {repo} opens from the pulled cache, offline",
                          opened.returncode == 0 and "status: ok" in opened.stdout, opened.stderr.strip()[-500:])
                finally:
                    hub.terminate()
                    hub.wait(30)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vlm")
    parser.add_argument("--model")
    arguments = parser.parse_args()
    documents = load_documents()
    check("manifests found", len(documents) > 0)
    check_schemas(documents)
    examples = load_examples()
    check("examples found", len(examples) > 0)
    check_schemas(examples)
    check_pull_example(examples)
    together = check_together(documents)
    if arguments.vlm and together:
        check_with_vlm(arguments.vlm, arguments.model, *together)
    if arguments.vlm and arguments.model:
        check_pull_with_vlm(arguments.vlm, arguments.model, examples)
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

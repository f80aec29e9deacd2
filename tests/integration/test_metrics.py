"""The Prometheus endpoint (metricsbind=, daemon/ctl/metrics.c).

What an operator relies on: the text passes Prometheus' own checker
(promtool check metrics, Debian's prometheus package), a real Prometheus
scrapes it and answers queries for peerd's series, the figures move with
what happens (peers, messages, a mined block, the mempool), serving it never
stalls the P2P side, and the shipped Grafana dashboard only asks for series
peerd exports. Loopback only, random ports, bounded waits.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from bitcoind import ROOT, free_port
from conftest import PEERD_BIN, wait_for

from bitcoin.messages import msg_ping

PROMTOOL = shutil.which("promtool")
PROMETHEUS = shutil.which("prometheus")
DASHBOARD = os.path.join(ROOT, "contrib", "grafana", "peerd.json")
# A regtest address (as test_chain_rpc uses).
ADDR = "bcrt1qamhwamhwamhwamhwamhwamhwamhwamhwamhwamhwamhwamhwamhqgdn98t"

need_promtool = pytest.mark.skipif(
    PROMTOOL is None, reason="promtool not installed (Debian package prometheus; scripts/deps.sh installs it)")
need_prometheus = pytest.mark.skipif(
    PROMETHEUS is None, reason="prometheus not installed (Debian package prometheus; scripts/deps.sh installs it)")


def scrape(port, path="/metrics", timeout=5):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=timeout) as r:
        return r.status, r.headers.get("Content-Type"), r.read().decode()


def samples(text):
    """{'name{labels}': value} for every sample line."""
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, _, v = line.rpartition(" ")
            out[key] = float(v)
    return out


def families(text):
    return {m.group(1) for m in re.finditer(r"^# TYPE (\S+) ", text, re.M)}


@pytest.fixture
def metered(make_peerd):
    port = free_port()
    d = make_peerd("-peertimeout=3", "-metricsbind=127.0.0.1:%d" % port)
    d.metrics_port = port
    return d


def test_metricsbind_bad_values_are_startup_errors(tmp_path):
    for value, why in [
        ("localhost:9332", "not an IPv4 or IPv6 address"),
        ("127.0.0.1:0", "port out of range 1-65535"),
        ("127.0.0.1:http", "port is not a number"),
        ("", "empty value"),
    ]:
        r = subprocess.run([PEERD_BIN, "-regtest", "-datadir=%s" % tmp_path, "-metricsbind=" + value],
                           capture_output=True, text=True, timeout=10)
        assert r.returncode == 1, (value, r)
        assert "-metricsbind=%s: %s" % (value, why) in r.stderr, (value, r.stderr)
    h = subprocess.run([PEERD_BIN, "-help"], capture_output=True, text=True, timeout=10).stdout
    assert "-metricsbind=<addr>[:<port>]" in h and "9332" in h


def test_metrics_off_by_default_and_a_taken_port_fails_startup(make_peerd, tmp_path):
    d = make_peerd("-peertimeout=3")
    stats = d.rpc("getstats")
    assert "metrics on http" not in d.log()
    # Somebody else holds the port: peerd says so and does not start.
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    port = s.getsockname()[1]
    try:
        r = subprocess.run([PEERD_BIN, "-regtest", "-datadir=%s" % tmp_path, "-listen=0",
                            "-metricsbind=127.0.0.1:%d" % port], capture_output=True, text=True, timeout=20)
    finally:
        s.close()
    assert r.returncode == 1, r
    assert "metricsbind=127.0.0.1:%d: cannot listen" % port in r.stdout + r.stderr
    assert stats["peers"]["inbound"] == 0


@need_promtool
def test_promtool_accepts_the_text_and_figures_follow_events(metered):
    d = metered
    p = d.connected_peer()
    p.send(msg_ping(nonce=42))
    p.recv_until("pong")
    d.rpc("generatetoaddress", 2, ADDR)

    def ready():
        s = samples(scrape(d.metrics_port)[2])
        if s.get("peerd_chain_height") == 2 and s.get('peerd_peers{direction="inbound"}') == 1:
            return s
        return None

    s = wait_for(ready, timeout=15, what="height 2 and one inbound peer in the metrics")
    assert s['peerd_messages_received_total{command="version"}'] == 1
    # Two pings each way: the handshake's (conftest's sync_with_ping) and this one.
    assert s['peerd_messages_received_total{command="ping"}'] == 2
    assert s['peerd_message_received_bytes_total{command="ping"}'] == 2 * 32
    assert s['peerd_messages_sent_total{command="pong"}'] == 2
    assert s["peerd_chain_blocks_connected_total"] == 2
    assert s["peerd_mempool_transactions"] == 0
    # The same figure getmempoolinfo shows (BTC/kvB there, sat/kvB here).
    info = d.rpc("getmempoolinfo")
    assert s["peerd_mempool_min_relay_fee_sat_per_kvb"] == round(float(info["minrelaytxfee"]) * 1e8)
    assert 'peerd_checkqueue_thread_busy_seconds_total{thread="0",role="validation"}' in s
    assert s['peerd_freelist_capacity{list="script"}'] > 0
    assert s["peerd_process_uptime_seconds"] >= 0

    status, ctype, text = scrape(d.metrics_port)
    assert status == 200 and ctype.startswith("text/plain; version=0.0.4"), ctype
    for fam in families(text):
        assert fam.startswith("peerd_"), fam
        assert "# HELP %s " % fam in text, fam
    for line in text.splitlines():
        if line.startswith("# TYPE ") and line.endswith(" counter"):
            assert line.split()[2].endswith("_total"), line
    # Base units: seconds, not getstats' milliseconds (HELP names the getstats key).
    assert not [f for f in families(text) if re.search(r"_ms(_|$)|millis", f)], "base units: seconds"
    r = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and not (r.stdout + r.stderr).strip(), r.stdout + r.stderr

    # Not a general web server.
    with pytest.raises(urllib.error.HTTPError) as e:
        scrape(d.metrics_port, "/nothing")
    assert e.value.code == 404


@need_prometheus
def test_real_prometheus_scrapes_peerd(metered, tmp_path):
    d = metered
    prom_port = free_port()
    cfg = tmp_path / "prometheus.yml"
    # JSON is YAML: no YAML library needed.
    cfg.write_text(json.dumps({
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "scrape_configs": [{
            "job_name": "peerd",
            "scrape_interval": "1s",
            "static_configs": [{"targets": ["127.0.0.1:%d" % d.metrics_port]}],
        }],
    }))
    log = open(tmp_path / "prometheus.log", "w")
    proc = subprocess.Popen([PROMETHEUS, "--config.file=%s" % cfg, "--storage.tsdb.path=%s" % (tmp_path / "tsdb"),
                             "--web.listen-address=127.0.0.1:%d" % prom_port],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        def query():
            if proc.poll() is not None:
                raise AssertionError("prometheus exited: " + (tmp_path / "prometheus.log").read_text())
            url = "http://127.0.0.1:%d/api/v1/query?%s" % (prom_port, urllib.parse.urlencode({"query": "peerd_peers"}))
            try:
                with urllib.request.urlopen(url, timeout=5) as r:
                    body = json.load(r)
            except (OSError, ValueError):
                return None
            res = body.get("data", {}).get("result", [])
            return res or None

        res = wait_for(query, timeout=60, what="prometheus to scrape peerd")
        dirs = sorted(r["metric"]["direction"] for r in res)
        assert dirs == ["inbound", "outbound"], res
        assert all(r["metric"]["job"] == "peerd" for r in res), res
        assert all(r["value"][1] == "0" for r in res), res
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        log.close()


def test_scraping_never_blocks_the_loop(metered):
    d = metered
    p = d.connected_peer()
    stop = threading.Event()
    counts = {"scrapes": 0, "errors": 0}

    def hammer():
        while not stop.is_set():
            try:
                scrape(d.metrics_port, timeout=5)
                counts["scrapes"] += 1
            except OSError:
                counts["errors"] += 1

    threads = [threading.Thread(target=hammer) for _ in range(3)]
    for t in threads:
        t.start()
    worst = 0.0
    try:
        for nonce in range(1, 41):
            t0 = time.monotonic()
            p.send(msg_ping(nonce=nonce))
            while True:
                m = p.recv(timeout=2.0)
                if m.command == "pong":
                    break
            worst = max(worst, time.monotonic() - t0)
            time.sleep(0.05)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=10)
    assert counts["scrapes"] >= 40 and counts["errors"] == 0, counts
    assert worst < 1.0, "a pong took %.3fs while metrics were scraped" % worst
    # The control socket answers too.
    assert d.rpc("getstats")["peers"]["inbound"] == 1


IDLE_CONNS = 16      # held open, never a byte sent (issue 18: this many stopped /metrics)
HALF_REQUESTS = 200  # then a burst that each send half a request and wait
SCRAPE_MAX_S = 2.0


def _timed_scrape(port):
    t0 = time.monotonic()
    status, _, body = scrape(port, timeout=SCRAPE_MAX_S + 3)
    return status, body, time.monotonic() - t0


def test_idle_and_half_open_connections_do_not_block_metrics(metered):
    """Slow clients cannot hold the endpoint: /metrics answers within
    SCRAPE_MAX_S while IDLE_CONNS idle connections and HALF_REQUESTS half
    requests are open, and the control socket and P2P side with it."""
    d, port = metered, metered.metrics_port
    assert _timed_scrape(port)[0] == 200
    held = []
    try:
        for _ in range(IDLE_CONNS):
            held.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        status, body, took = _timed_scrape(port)
        assert status == 200 and "peerd_" in body and took < SCRAPE_MAX_S, (status, took)
        for _ in range(HALF_REQUESTS):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slow")
            held.append(s)
        for _ in range(3):
            status, body, took = _timed_scrape(port)
            assert status == 200 and "peerd_" in body and took < SCRAPE_MAX_S, (status, took)
            time.sleep(0.5)
        assert d.rpc("uptime") >= 0
        d.connected_peer().close()
    finally:
        for s in held:
            s.close()
    # They are gone, or time out: the endpoint serves as before.
    assert _timed_scrape(port)[0] == 200


def test_grafana_dashboard_asks_only_for_exported_series(metered):
    with open(DASHBOARD) as f:
        dash = json.load(f)
    panels = dash["panels"]
    titles = " | ".join(p["title"].lower() for p in panels)
    for want in ["peers", "messages", "bytes", "free list", "check queue", "tip height", "mempool"]:
        assert want in titles, (want, titles)
    text = wait_for(lambda: (lambda t: t if "peerd_chain_height" in t else None)(scrape(metered.metrics_port)[2]),
                    timeout=15, what="the chain's figures")
    exported = families(text)
    used = set()
    for p in panels:
        assert p.get("targets"), p["title"]
        for t in p["targets"]:
            names = set(re.findall(r"\bpeerd_[a-z0-9_]+", t["expr"]))
            assert names, t
            used |= names
    missing = used - exported
    assert not missing, "dashboard asks for series peerd does not export: %s" % sorted(missing)
